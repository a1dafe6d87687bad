/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/export.c - pprof's profile.proto and folded stacks.
 */
#include "config.h"

#include "analysis/export.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/die.h"
#include "core/hash.h"
#include "core/idmap.h"
#include "core/pbwrite.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

static bool wanted(const struct stack_view *sv, const struct export_opts *o,
		   const struct stack_sample *s)
{
	const struct stack_thread *th = &sv->t.threads[s->thread];

	return s->event == o->event && (!o->tgid || th->tgid == o->tgid) &&
	       (!o->tid || th->tid == o->tid) &&
	       (!o->comm || !strcmp(sv->t.comms[th->comm], o->comm));
}

/*
 * The frames of a sample as charged: a delayed tick's leading interrupt-
 * enabling frames dropped (the nodes are the last n frames).
 */
static size_t charged(const struct stack_view *sv, const struct stack_sample *s, uint32_t *nodes,
		      const uint32_t **frames)
{
	bool delayed;
	size_t n = stack_view_nodes(sv, s->stack, sv->time_events[s->event], nodes, &delayed);

	*frames = stack_table_frames(&sv->t, s->stack) + (sv->t.stacks[s->stack].depth - n);
	return n;
}

/* ---- interned strings ------------------------------------------------------------ */

struct strtab {
	char **v;
	size_t n, alloc;
	struct idmap ix;
};

static uint64_t strtab_id(struct strtab *t, const char *s)
{
	size_t len = strlen(s);
	uint64_t h = hash_bytes(HASH_FNV_INIT, s, len);

	for (uint32_t id = idmap_first(&t->ix, h); id != IDMAP_NONE; id = idmap_next(&t->ix, id))
		if (!strcmp(t->v[id], s))
			return id;
	ALLOC_GROW(t->v, t->n + 1, t->alloc);
	t->v[t->n] = xstrdup(s);
	idmap_add(&t->ix, h, (uint32_t)t->n);
	return t->n++;
}

static void strtab_release(struct strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	idmap_release(&t->ix);
}

/* ---- folded ----------------------------------------------------------------------------- */

static void folded_name(struct strbuf *sb, const char *name, bool kernel)
{
	for (const char *p = name; *p; p++)
		strbuf_addch(sb, *p == ';' ? ':' : (unsigned char)*p < 0x20 ? '?' : *p);
	if (kernel)
		strbuf_addstr(sb, "_[k]");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int export_folded(const struct stack_view *sv, FILE *out, const struct export_opts *o)
{
	struct strtab lines = { NULL, 0, 0, IDMAP_INIT };
	uint64_t *counts = NULL;
	size_t alloc = 0;
	uint32_t nodes[STACK_MAX_DEPTH];
	struct strbuf sb = STRBUF_INIT;
	char **order;

	for (size_t i = 0; i < sv->t.n_samples; i++) {
		const struct stack_sample *s = &sv->t.samples[i];
		const uint32_t *frames;
		size_t n;
		uint64_t id;

		if (!wanted(sv, o, s))
			continue;
		n = charged(sv, s, nodes, &frames);
		strbuf_setlen(&sb, 0);
		folded_name(&sb, sv->t.comms[sv->t.threads[s->thread].comm], false);
		while (n--) {
			strbuf_addch(&sb, ';');
			folded_name(&sb, sv->nodes[nodes[n]].name, sv->nodes[nodes[n]].kernel);
		}
		id = strtab_id(&lines, sb.buf);
		if (id >= alloc) {
			size_t old = alloc;

			ALLOC_GROW(counts, id + 1, alloc);
			memset(counts + old, 0, (alloc - old) * sizeof(*counts));
		}
		counts[id] += s->count;
	}
	order = xcalloc(lines.n + 1, sizeof(*order));
	for (size_t i = 0; i < lines.n; i++) {
		strbuf_setlen(&sb, 0);
		strbuf_addf(&sb, "%s %" PRIu64, lines.v[i], counts[i]);
		order[i] = strbuf_detach(&sb, NULL);
	}
	if (lines.n)
		qsort(order, lines.n, sizeof(*order), cmp_str);
	for (size_t i = 0; i < lines.n; i++) {
		fprintf(out, "%s\n", order[i]);
		free(order[i]);
	}
	free(order);
	free(counts);
	strtab_release(&lines);
	strbuf_release(&sb);
	return fflush(out) || ferror(out) ? -1 : 0;
}

/* ---- pprof ---------------------------------------------------------------------------- */

/* Field numbers of profile.proto. */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
	LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3,
	MAPPING_ID = 1, MAPPING_START = 2, MAPPING_LIMIT = 3, MAPPING_OFFSET = 4,
	MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6, MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8, MAPPING_HAS_LINE_NUMBERS = 9,
	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1, LINE_LINE = 2,
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
	FUNCTION_START_LINE = 5,
};

/* Mappings are laid out 64 GiB apart, one per image: address = base + offset. */
#define MAPPING_SPAN ((uint64_t)1 << 36)

struct node_lines {
	bool loaded;
	struct src_line *v;
	size_t n;
};

struct pprof {
	const struct stack_view *sv;
	const struct export_opts *o;
	struct strbuf msg;
	struct strtab strings;
	uint64_t *image_base, *image_limit;     /* per view image; limit 0: not used */
	bool *image_lines;
	uint32_t *location;                     /* table frame -> location id (0: none yet) */
	uint32_t *function;                     /* node -> function id */
	struct node_lines *lines;               /* per node */
	uint32_t n_locations, n_functions;
};

static uint64_t str(struct pprof *p, const char *s)
{
	return strtab_id(&p->strings, s ? s : "");
}

static void value_type(struct pprof *p, unsigned field, const char *type, const char *unit)
{
	struct strbuf sb = STRBUF_INIT;

	pb_uint(&sb, VALUE_TYPE_TYPE, str(p, type));
	pb_uint(&sb, VALUE_TYPE_UNIT, str(p, unit));
	pb_bytes(&p->msg, field, sb.buf, sb.len);
	strbuf_release(&sb);
}

static bool is_kernel_image(const struct stack_view *sv, size_t i)
{
	enum image_kind k = sv->view->images[i].rec->kind;

	return k == IMAGE_KERNEL || k == IMAGE_MODULE;
}

/* A frame's address: the kernel's own, else the image's base + the offset. */
static uint64_t frame_address(struct pprof *p, uint32_t f, size_t image)
{
	uint64_t off = p->sv->t.frames[f].offset;

	if (image == SIZE_MAX || is_kernel_image(p->sv, image))
		return off;
	return p->image_base[image] + (off < MAPPING_SPAN ? off : MAPPING_SPAN - 1);
}

/* The source lines of a node's procedure (DWARF), read once. */
static const struct node_lines *lines_of(struct pprof *p, uint32_t node)
{
	const struct sv_node *n = &p->sv->nodes[node];
	struct node_lines *nl = &p->lines[node];
	struct dwarf_info *dw;

	if (nl->loaded)
		return nl;
	nl->loaded = true;
	if (!n->proc || n->image == SIZE_MAX || n->kernel)
		return nl;
	dw = image_dwarf(epoch_view_image(p->sv->view, n->image), NULL);
	if (dw && dwarf_info_lines(dw, n->proc->start, n->proc->end, &nl->v, &nl->n)) {
		free(nl->v);
		nl->v = NULL;
		nl->n = 0;
	}
	return nl;
}

/* The source line holding addr (0 if none). */
static const struct src_line *line_at(const struct node_lines *nl, uint64_t addr)
{
	const struct src_line *best = NULL;

	for (size_t i = 0; i < nl->n; i++)
		if (!nl->v[i].end_seq && nl->v[i].addr <= addr && (!best || nl->v[i].addr >= best->addr))
			best = &nl->v[i];
	return best && best->line ? best : NULL;
}

static uint32_t function_of(struct pprof *p, uint32_t node)
{
	const struct sv_node *n = &p->sv->nodes[node];
	const struct node_lines *nl;
	struct strbuf sb = STRBUF_INIT;
	const char *file = NULL;

	if (p->function[node])
		return p->function[node];
	p->function[node] = ++p->n_functions;
	nl = lines_of(p, node);
	for (size_t i = 0; i < nl->n && !file; i++)
		if (nl->v[i].line && nl->v[i].file)
			file = nl->v[i].file;
	pb_uint(&sb, FUNCTION_ID, p->function[node]);
	pb_uint(&sb, FUNCTION_NAME, str(p, n->name));
	pb_uint(&sb, FUNCTION_SYSTEM_NAME, str(p, n->proc && n->proc->sym ? n->proc->sym : n->name));
	pb_uint(&sb, FUNCTION_FILENAME, str(p, file));
	pb_bytes(&p->msg, PROFILE_FUNCTION, sb.buf, sb.len);
	strbuf_release(&sb);
	return p->function[node];
}

static uint32_t location_of(struct pprof *p, uint32_t frame, uint32_t node)
{
	const struct sv_node *n = &p->sv->nodes[node];
	struct strbuf sb = STRBUF_INIT, line = STRBUF_INIT;
	const struct src_line *sl = NULL;
	uint64_t addr;

	if (p->location[frame])
		return p->location[frame];
	p->location[frame] = ++p->n_locations;
	pb_uint(&sb, LOCATION_ID, p->location[frame]);
	if (n->image != SIZE_MAX)
		pb_uint(&sb, LOCATION_MAPPING_ID, n->image + 1);
	pb_uint(&sb, LOCATION_ADDRESS, frame_address(p, frame, n->image));
	if (n->image != SIZE_MAX && !n->kernel &&
	    image_offset_to_addr(epoch_view_image(p->sv->view, n->image),
				 p->sv->t.frames[frame].offset, &addr) &&
	    (sl = line_at(lines_of(p, node), addr)))
		p->image_lines[n->image] = true;
	pb_uint(&line, LINE_FUNCTION_ID, function_of(p, node));
	if (sl)
		pb_uint(&line, LINE_LINE, sl->line);
	pb_bytes(&sb, LOCATION_LINE, line.buf, line.len);
	pb_bytes(&p->msg, PROFILE_LOCATION, sb.buf, sb.len);
	strbuf_release(&sb);
	strbuf_release(&line);
	return p->location[frame];
}

static void label(struct strbuf *sample, struct pprof *p, const char *key, const char *s,
		  uint64_t num)
{
	struct strbuf sb = STRBUF_INIT;

	pb_uint(&sb, LABEL_KEY, str(p, key));
	if (s)
		pb_uint(&sb, LABEL_STR, str(p, s));
	else
		pb_uint(&sb, LABEL_NUM, num);
	pb_bytes(sample, SAMPLE_LABEL, sb.buf, sb.len);
	strbuf_release(&sb);
}

static void samples(struct pprof *p, uint64_t period)
{
	const struct stack_view *sv = p->sv;
	uint32_t nodes[STACK_MAX_DEPTH];
	uint64_t ids[STACK_MAX_DEPTH];
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < sv->t.n_samples; i++) {
		const struct stack_sample *s = &sv->t.samples[i];
		const struct stack_thread *th = &sv->t.threads[s->thread];
		const uint32_t *frames;
		uint64_t values[2];
		size_t n;

		if (!wanted(sv, p->o, s))
			continue;
		n = charged(sv, s, nodes, &frames);
		for (size_t k = 0; k < n; k++) {
			size_t img = sv->nodes[nodes[k]].image;
			uint64_t a = frame_address(p, frames[k], img);

			if (img != SIZE_MAX && a + 1 > p->image_limit[img])
				p->image_limit[img] = a + 1;
			ids[k] = location_of(p, frames[k], nodes[k]);
		}
		strbuf_setlen(&sb, 0);
		pb_packed(&sb, SAMPLE_LOCATION_ID, ids, n);
		values[0] = s->count;
		values[1] = s->count * period;
		pb_packed(&sb, SAMPLE_VALUE, values, 2);
		label(&sb, p, "pid", NULL, th->tgid);
		label(&sb, p, "tid", NULL, th->tid);
		label(&sb, p, "comm", sv->t.comms[th->comm], 0);
		pb_bytes(&p->msg, PROFILE_SAMPLE, sb.buf, sb.len);
	}
	strbuf_release(&sb);
}

/*
 * pprof takes the first mapping for the program: the image of the
 * profiled command (dcpirun's), else the file image with the most samples.
 */
static size_t main_image(const struct pprof *p)
{
	const struct epoch_view *v = p->sv->view;
	const char *cmd = v->meta_ok && v->meta.command ? v->meta.command[0] : NULL;
	const char *base = cmd ? strrchr(cmd, '/') : NULL;
	size_t best = SIZE_MAX;

	base = base ? base + 1 : cmd;
	for (size_t i = 0; i < v->n_images; i++) {
		const char *path = v->images[i].rec->path, *b = strrchr(path, '/');

		if (!p->image_limit[i] || v->images[i].rec->kind != IMAGE_FILE)
			continue;
		if (base && !strcmp(b ? b + 1 : path, base))
			return i;
		if (best == SIZE_MAX ||
		    v->images[i].samples[p->o->event] > v->images[best].samples[p->o->event])
			best = i;
	}
	return best;
}

static void mappings(struct pprof *p)
{
	const struct epoch_view *v = p->sv->view;
	struct strbuf sb = STRBUF_INIT, id = STRBUF_INIT;
	size_t first = main_image(p);

	for (size_t k = 0; k <= v->n_images; k++) {
		/* the main image first, then the others in index order */
		size_t i = !k ? first : k - 1;
		uint64_t start;

		if (i == SIZE_MAX || i >= v->n_images || (k && i == first) || !p->image_limit[i])
			continue;
		start = p->image_base[i];
		if (is_kernel_image(p->sv, i)) {
			start = UINT64_MAX;
			for (size_t f = 0; f < p->sv->t.n_frames; f++)
				if (p->location[f] && p->sv->nodes[p->sv->frame_node[f]].image == i &&
				    p->sv->t.frames[f].offset < start)
					start = p->sv->t.frames[f].offset;
		}
		strbuf_setlen(&sb, 0);
		strbuf_setlen(&id, 0);
		strbuf_add_build_id(&id, v->images[i].rec);
		pb_uint(&sb, MAPPING_ID, i + 1);
		pb_uint(&sb, MAPPING_START, start);
		pb_uint(&sb, MAPPING_LIMIT, p->image_limit[i]);
		pb_uint(&sb, MAPPING_OFFSET, 0);
		pb_uint(&sb, MAPPING_FILENAME, str(p, v->images[i].rec->path));
		pb_uint(&sb, MAPPING_BUILD_ID, str(p, id.len ? id.buf : ""));
		pb_uint(&sb, MAPPING_HAS_FUNCTIONS, 1);
		pb_uint(&sb, MAPPING_HAS_FILENAMES, p->image_lines[i]);
		pb_uint(&sb, MAPPING_HAS_LINE_NUMBERS, p->image_lines[i]);
		pb_bytes(&p->msg, PROFILE_MAPPING, sb.buf, sb.len);
	}
	strbuf_release(&sb);
	strbuf_release(&id);
}

/* The event's period: ns for a clock, events for a counter. */
static uint64_t event_period(const struct stack_view *sv, enum dcpi_event ev, bool *time)
{
	const struct epoch_event *e = sv->view->meta_ok ? epoch_meta_event(&sv->view->meta, ev) : NULL;

	*time = e && e->period_in_ns;
	return e && e->period ? e->period : 1;
}

static void header(struct pprof *p, uint64_t period, bool time)
{
	const struct epoch_meta *m = &p->sv->view->meta;
	struct strbuf sb = STRBUF_INIT;

	value_type(p, PROFILE_SAMPLE_TYPE, "samples", "count");
	value_type(p, PROFILE_SAMPLE_TYPE, time ? "cpu" : event_name(p->o->event),
		   time ? "nanoseconds" : "count");
	value_type(p, PROFILE_PERIOD_TYPE, time ? "cpu" : event_name(p->o->event),
		   time ? "nanoseconds" : "count");
	pb_uint(&p->msg, PROFILE_PERIOD, period);
	pb_uint(&p->msg, PROFILE_DEFAULT_SAMPLE_TYPE, str(p, time ? "cpu" : event_name(p->o->event)));
	if (p->sv->view->meta_ok) {
		pb_uint(&p->msg, PROFILE_TIME_NANOS, (uint64_t)m->start_ns);
		if (m->end_ns > m->start_ns)
			pb_uint(&p->msg, PROFILE_DURATION_NANOS, (uint64_t)(m->end_ns - m->start_ns));
	}
	strbuf_addf(&sb, "dcpi epoch %" PRIu32 ", event %s", p->sv->view->seq,
		    event_name(p->o->event));
	pb_uint(&p->msg, PROFILE_COMMENT, str(p, sb.buf));
	if (p->sv->view->meta_ok && m->command) {
		strbuf_setlen(&sb, 0);
		for (size_t i = 0; m->command[i]; i++)
			strbuf_addf(&sb, "%s%s", i ? " " : "", m->command[i]);
		pb_uint(&p->msg, PROFILE_COMMENT, str(p, sb.buf));
	}
	strbuf_release(&sb);
}

/*
 * What the profile was made without (db/damage.h), as comments ("dcpi:
 * incomplete: damaged FILE: WHY"), after the samples have read what they
 * needed.
 */
static void incomplete_comments(struct pprof *p)
{
	const struct db_damage **v;
	size_t n = db_damage_list(p->sv->view->db, 0, 0, &v);

	for (size_t i = 0; i < n; i++) {
		char *c = xasprintf("dcpi: %s: %s %s: %s",
				    v[i]->kind == DB_UNVERIFIED ? "unverified" : "incomplete",
				    db_damage_kind_name(v[i]->kind), v[i]->path, v[i]->why);

		pb_uint(&p->msg, PROFILE_COMMENT, str(p, c));
		free(c);
	}
	free(v);
}

static int gzip(const struct strbuf *in, struct strbuf *out)
{
	z_stream z;
	int r;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return errorf("cannot compress the profile: zlib failed to start");
	strbuf_grow(out, deflateBound(&z, in->len) + 1);
	z.next_in = (Bytef *)in->buf;
	z.avail_in = (uInt)in->len;
	z.next_out = (Bytef *)out->buf + out->len;
	z.avail_out = (uInt)(out->alloc - out->len - 1);
	r = deflate(&z, Z_FINISH);
	if (r == Z_STREAM_END)
		strbuf_setlen(out, out->len + z.total_out);
	deflateEnd(&z);
	return r == Z_STREAM_END ? 0 : errorf("cannot compress the profile (zlib error %d)", r);
}

int export_pprof(const struct stack_view *sv, struct strbuf *out, const struct export_opts *o)
{
	struct pprof p;
	size_t ni = sv->view->n_images;
	struct strbuf tail = STRBUF_INIT;
	uint64_t period;
	bool time;
	int r;

	memset(&p, 0, sizeof(p));
	p.sv = sv;
	p.o = o;
	p.image_base = xcalloc(ni + 1, sizeof(uint64_t));
	p.image_limit = xcalloc(ni + 1, sizeof(uint64_t));
	p.image_lines = xcalloc(ni + 1, sizeof(bool));
	p.location = xcalloc(sv->t.n_frames + 1, sizeof(uint32_t));
	p.function = xcalloc(sv->n_nodes + 1, sizeof(uint32_t));
	p.lines = xcalloc(sv->n_nodes + 1, sizeof(*p.lines));
	for (size_t i = 0; i < ni; i++)
		p.image_base[i] = (uint64_t)(i + 1) * MAPPING_SPAN;
	str(&p, "");    /* string_table[0] must be "" */
	period = event_period(sv, o->event, &time);
	header(&p, period, time);
	samples(&p, period);
	mappings(&p);
	incomplete_comments(&p);
	for (size_t i = 0; i < p.strings.n; i++)
		pb_string(&tail, PROFILE_STRING_TABLE, p.strings.v[i]);
	strbuf_add(&p.msg, tail.buf, tail.len);
	r = gzip(&p.msg, out);
	for (size_t i = 0; i < sv->n_nodes; i++)
		free(p.lines[i].v);
	free(p.lines);
	free(p.function);
	free(p.location);
	free(p.image_base);
	free(p.image_limit);
	free(p.image_lines);
	strtab_release(&p.strings);
	strbuf_release(&p.msg);
	strbuf_release(&tail);
	return r;
}
