/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/procprof.c - samples per procedure or image, and the
 * dcpiprof report (text and JSON).
 */
#include "config.h"

#include "analysis/procprof.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/incomplete.h"
#include "analysis/stackview.h"
#include "core/die.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "core/timeutil.h"
#include "core/hash.h"
#include "core/idmap.h"
#include "core/radix.h"
#include "core/strrank.h"
#include "core/u64map.h"
#include "core/utf8.h"
#include "core/xalloc.h"

struct builder {
	struct procprof *pp;
	size_t alloc;
	struct profile scratch;   /* the profile of the image at hand (epoch_view_profile_pass) */
};

static size_t new_row(struct builder *b, size_t image, const struct proc *p, uint32_t group)
{
	struct procprof *pp = b->pp;
	size_t r = pp->n_rows++;

	if (pp->n_rows > b->alloc) {
		b->alloc = b->alloc ? 2 * b->alloc : 64;
		pp->rows = xreallocarray(pp->rows, b->alloc, sizeof(*pp->rows));
		pp->counts = xreallocarray(pp->counts, b->alloc, pp->n_events * sizeof(*pp->counts));
	}
	pp->rows[r] = (struct procprof_row){ p, (uint32_t)image, group };
	memset(&pp->counts[r * pp->n_events], 0, pp->n_events * sizeof(*pp->counts));
	return r;
}

/* Room for n rows more at once (an upper bound: no copy of a million rows as they grow). */
static void reserve_rows(struct builder *b, size_t n)
{
	struct procprof *pp = b->pp;

	if (pp->n_rows + n <= b->alloc)
		return;
	b->alloc = pp->n_rows + n;
	pp->rows = xreallocarray(pp->rows, b->alloc, sizeof(*pp->rows));
	pp->counts = xreallocarray(pp->counts, b->alloc, pp->n_events * sizeof(*pp->counts));
}

static bool wanted(const struct procprof *pp, const struct procprof_opts *o, size_t i)
{
	const struct ev_image *e = &pp->view->images[i];
	bool any = false;

	for (size_t c = 0; c < pp->n_events; c++)
		any |= e->samples[pp->events[c]] != 0;
	if (!any)
		return false;
	if (!o->n_images)
		return true;
	for (size_t k = 0; k < o->n_images; k++)
		if (epoch_view_image_matches(pp->view, i, o->images[k]))
			return true;
	return false;
}

/* Rows of one image by procedure. */
static void image_rows(struct builder *b, size_t i, bool quiet)
{
	struct procprof *pp = b->pp;
	struct epoch_view *v = pp->view;
	struct image *img = epoch_view_image(v, i);
	struct u64map rows;   /* proc pointer (0: unnamed) -> row index + 1 */

	if (!quiet && (img->syms_why || !image_procs(img)->n || img->forced))
		epoch_view_warn_image(v, i);
	pp->unnamed[i] = image_unnamed(img);
	u64map_init(&rows);
	for (size_t c = 0; c < pp->n_events; c++) {
		enum dcpi_event ev = pp->events[c];
		const struct profile *prof = epoch_view_profile_pass(v, i, ev, &b->scratch);
		const struct proc *last = NULL;
		size_t last_row = 0;

		reserve_rows(b, prof->n + 1);
		for (size_t k = 0; k < prof->n; k++) {
			const struct proc *p = NULL;
			uint64_t addr, *slot;

			if (image_offset_to_addr(img, prof->v[k].offset, &addr)) {
				if (last && addr >= last->start && addr < last->end) {
					/* the same procedure as the sample before: its row */
					pp->counts[last_row * pp->n_events + c] += prof->v[k].count;
					continue;
				}
				p = last = image_proc_at(img, addr);
			}
			slot = u64map_slot(&rows, (uint64_t)(uintptr_t)p);
			if (!*slot)
				*slot = new_row(b, i, p, 0) + 1;
			if (p)
				last_row = *slot - 1;
			pp->counts[(*slot - 1) * pp->n_events + c] += prof->v[k].count;
		}
		/* samples the header counts but the profile lacks (unreadable profile) */
		uint64_t got = profile_total(prof), want = v->images[i].samples[ev];

		if (want > got) {
			uint64_t *slot = u64map_slot(&rows, 0);

			if (!*slot)
				*slot = new_row(b, i, NULL, 0) + 1;
			pp->counts[(*slot - 1) * pp->n_events + c] += want - got;
		}
	}
	u64map_release(&rows);
}

static int set_columns(struct procprof *pp, const struct procprof_opts *o)
{
	const struct epoch_view *v = pp->view;

	if (!o->events) {
		memcpy(pp->events, v->events, v->n_events * sizeof(v->events[0]));
		pp->n_events = v->n_events;
		return 0;
	}
	for (size_t c = 0; c < o->n_events && c < EVENT__COUNT; c++) {
		if ((unsigned)o->events[c] >= EVENT__COUNT)
			return errorf("unknown event");
		pp->events[pp->n_events++] = o->events[c];
	}
	return 0;
}

static int check_filters(struct procprof *pp, const struct procprof_opts *o)
{
	int r = 0;

	for (size_t k = 0; k < o->n_images; k++) {
		bool found = false;

		for (size_t i = 0; i < pp->view->n_images && !found; i++)
			found = epoch_view_image_matches(pp->view, i, o->images[k]);
		if (!found) {
			char *safe = display_safe(o->images[k]);

			r = errorf("no image '%s' in epoch %" PRIu32, safe, pp->view->seq);
			free(safe);
			pp->unmatched++;
		}
	}
	return r;
}

static const char *const by_names[] = { "image", "comm", "pid", "tgid" };

const char *procprof_by_name(enum procprof_by by)
{
	return (unsigned)by < ARRAY_SIZE(by_names) ? by_names[by] : "?";
}

int procprof_by_lookup(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(by_names); i++)
		if (!strcmp(by_names[i], name))
			return (int)i;
	return -1;
}

/* ---- by process: from the stack table ------------------------------------------ */

/* The group of (comm, id), found or added. */
static uint32_t group_of(struct procprof *pp, struct idmap *groups, uint32_t comm_id, uint32_t id,
			 size_t *alloc)
{
	uint64_t h = hash_u64((uint64_t)comm_id << 32 | id);

	for (uint32_t k = idmap_first(groups, h); k != IDMAP_NONE; k = idmap_next(groups, k))
		if (pp->groups[k].id == id && pp->groups[k].comm == pp->comms[comm_id])
			return k;
	ALLOC_GROW(pp->groups, pp->n_groups + 1, *alloc);
	pp->groups[pp->n_groups] = (struct procprof_group){ pp->comms[comm_id], id };
	idmap_add(groups, h, (uint32_t)pp->n_groups);
	return (uint32_t)pp->n_groups++;
}

/* The row of (group, node or image) for a sample's thread. */
static size_t process_row(struct builder *b, struct idmap *ix, const struct stack_view *sv,
			  uint32_t group, uint32_t node)
{
	struct procprof *pp = b->pp;
	const struct sv_node *n = &sv->nodes[node];
	uint64_t what = pp->by_image ? (uint64_t)n->image : node;
	uint64_t h = hash_u64(what ^ hash_u64(group));
	size_t r;

	for (uint32_t k = idmap_first(ix, h); k != IDMAP_NONE; k = idmap_next(ix, k)) {
		const struct procprof_row *row = &pp->rows[k];

		if (row->group == group && row->image == n->image &&
		    (pp->by_image || row->proc == n->proc))
			return k;
	}
	r = new_row(b, n->image, pp->by_image ? NULL : n->proc, group);
	if (!pp->by_image && !n->proc)
		pp->unnamed[n->image] = n->name;
	idmap_add(ix, h, (uint32_t)r);
	return r;
}

/* The column of event ev, or -1. */
static int column_of(const struct procprof *pp, unsigned ev)
{
	for (size_t c = 0; c < pp->n_events; c++)
		if (pp->events[c] == ev)
			return (int)c;
	return -1;
}

static int process_rows(struct builder *b, const struct procprof_opts *o)
{
	struct procprof *pp = b->pp;
	struct idmap ix = IDMAP_INIT, groups = IDMAP_INIT;
	struct stack_view sv;
	uint32_t nodes[STACK_MAX_DEPTH];
	size_t alloc_groups = 0;
	int r = stack_view_open(&sv, pp->view);

	if (r == 1)
		return errorf("epoch %" PRIu32 " does not know the process of its samples (record "
			      "with dcpirun -g or --threads to group by %s)", pp->view->seq,
			      procprof_by_name(o->by));
	if (r)
		return -1;
	pp->comms = xcalloc(sv.t.n_comms + 1, sizeof(*pp->comms));
	for (size_t i = 0; i < sv.t.n_comms; i++)
		pp->comms[i] = xstrdup(sv.t.comms[i]);
	pp->n_comms = sv.t.n_comms;
	for (size_t i = 0; i < sv.t.n_samples; i++) {
		const struct stack_sample *s = &sv.t.samples[i];
		const struct stack_thread *th = &sv.t.threads[s->thread];
		int c = column_of(pp, s->event);
		uint32_t id = pp->by == PROCPROF_BY_PID ? th->tid
			    : pp->by == PROCPROF_BY_TGID ? th->tgid : 0;
		bool delayed;
		size_t row;

		if (c < 0)
			continue;
		stack_view_nodes(&sv, s->stack, false, nodes, &delayed);
		if (sv.nodes[nodes[0]].image == SIZE_MAX || !wanted(pp, o, sv.nodes[nodes[0]].image))
			continue;
		row = process_row(b, &ix, &sv, group_of(pp, &groups, th->comm, id, &alloc_groups),
				  nodes[0]);
		pp->counts[row * pp->n_events + (size_t)c] += s->count;
	}
	idmap_release(&ix);
	idmap_release(&groups);
	stack_view_release(&sv);
	return 0;
}

/* ---- order ---------------------------------------------------------------------- */

/* Sorts v by key (desc: descending), stably, the keys filled by key(pp, row). */
static void sort_by(const struct procprof *pp, struct radix_item *v, struct radix_item *tmp,
		    uint64_t (*key)(const struct procprof *pp, size_t r, const void *arg),
		    const void *arg, bool desc)
{
	for (size_t k = 0; k < pp->n_rows; k++)
		v[k].key = key(pp, v[k].i, arg);
	radix_sort_scratch(v, pp->n_rows, desc, tmp);
}

/* Name, then image path: ranks (arg: the images' path ranks). */
static uint64_t key_identity(const struct procprof *pp, size_t r, const void *arg)
{
	const uint32_t *path_rank = arg;

	return (uint64_t)pp->name_rank[r] << 32 | path_rank[pp->rows[r].image];
}

/* By process: the process name, then the id (arg: the comms' ranks, by group). */
static uint64_t key_group(const struct procprof *pp, size_t r, const void *arg)
{
	const uint32_t *comm_rank = arg;
	uint32_t g = pp->rows[r].group;

	return (uint64_t)comm_rank[g] << 32 | pp->groups[g].id;
}

static uint64_t key_samples(const struct procprof *pp, size_t r, const void *arg)
{
	return procprof_samples(pp, r, *(const size_t *)arg);
}

/* Rows of the same name and path (two builds of a file, a name twice in one binary) by address. */
static void by_start(const struct procprof *pp, struct radix_item *v)
{
	for (size_t i = 0; i < pp->n_rows;) {
		size_t j = i + 1;

		while (j < pp->n_rows && v[j].key == v[i].key)
			j++;
		for (size_t k = i + 1; k < j; k++) {
			struct radix_item x = v[k];
			size_t m = k;

			while (m > i && procprof_start(pp, v[m - 1].i) > procprof_start(pp, x.i)) {
				v[m] = v[m - 1];
				m--;
			}
			v[m] = x;
		}
		i = j;
	}
}

/* Ranks of the rows' names (pp->name_rank), of the images' paths and of the groups' names. */
static void rank_names(struct procprof *pp, uint32_t **path_rank, uint32_t **comm_rank)
{
	size_t n_img = pp->view->n_images, n = pp->n_rows > n_img ? pp->n_rows : n_img;
	const char **s = xcalloc(n + pp->n_groups + 1, sizeof(*s));

	pp->name_rank = xcalloc(pp->n_rows + 1, sizeof(*pp->name_rank));
	for (size_t r = 0; r < pp->n_rows; r++)
		s[r] = procprof_name(pp, r);
	str_ranks(s, pp->n_rows, pp->name_rank);
	*path_rank = xcalloc(n_img + 1, sizeof(**path_rank));
	for (size_t i = 0; i < n_img; i++)
		s[i] = pp->view->images[i].rec->path;
	str_ranks(s, n_img, *path_rank);
	*comm_rank = xcalloc(pp->n_groups + 1, sizeof(**comm_rank));
	for (size_t g = 0; g < pp->n_groups; g++)
		s[g] = pp->groups[g].comm;
	str_ranks(s, pp->n_groups, *comm_rank);
	free(s);
}

/*
 * Sorts the rows: by the first column's samples, descending, then the
 * next column's ..., then (by process) by process name and id, then by
 * name, image path and address; rows alike in all of these stay in the
 * order they were made.  Radix sorts on keys, the least significant first:
 * names compare once, as ranks (a million rows of every image tie on
 * samples, and sorting them by comparing names took most of a second).
 */
static void sort_rows(struct procprof *pp)
{
	size_t n = pp->n_rows, ne = pp->n_events;
	struct radix_item *v, *tmp;
	struct procprof_row *rows;
	uint64_t *counts;
	uint32_t *ranks, *path_rank, *comm_rank;

	rank_names(pp, &path_rank, &comm_rank);
	if (n < 2)
		goto done;
	v = xreallocarray(NULL, n, sizeof(*v));
	tmp = xreallocarray(NULL, n, sizeof(*tmp));
	for (size_t k = 0; k < n; k++)
		v[k].i = (uint32_t)k;
	sort_by(pp, v, tmp, key_identity, path_rank, false);
	by_start(pp, v);
	if (pp->by != PROCPROF_BY_IMAGE)
		sort_by(pp, v, tmp, key_group, comm_rank, false);
	for (size_t c = ne; c-- > 0;)
		sort_by(pp, v, tmp, key_samples, &c, true);
	free(tmp);
	rows = xreallocarray(NULL, n, sizeof(*rows));
	counts = xreallocarray(NULL, n, ne ? ne * sizeof(*counts) : 1);
	ranks = xreallocarray(NULL, n, sizeof(*ranks));
	for (size_t k = 0; k < n; k++) {
		rows[k] = pp->rows[v[k].i];
		memcpy(&counts[k * ne], &pp->counts[v[k].i * ne], ne * sizeof(*counts));
		ranks[k] = pp->name_rank[v[k].i];
	}
	free(v);
	free(pp->rows);
	free(pp->counts);
	free(pp->name_rank);
	pp->rows = rows;
	pp->counts = counts;
	pp->name_rank = ranks;
done:
	free(path_rank);
	free(comm_rank);
}

int procprof_build(struct procprof *pp, struct epoch_view *v, const struct procprof_opts *o)
{
	static const struct procprof_opts defaults = PROCPROF_OPTS_INIT;
	struct builder b = { pp, 0, PROFILE_INIT };

	if (!o)
		o = &defaults;
	memset(pp, 0, sizeof(*pp));
	pp->view = v;
	pp->by_image = o->by_image;
	pp->by = o->by;
	if (set_columns(pp, o) || check_filters(pp, o))
		return -1;
	pp->unnamed = xcalloc(v->n_images + 1, sizeof(*pp->unnamed));
	/* the whole the epoch recorded: damaged files' samples are not in the rows, but shares
	 * stay shares of all the time sampled */
	for (size_t c = 0; c < pp->n_events; c++)
		pp->totals[pp->events[c]] = v->totals[pp->events[c]] + v->unread[pp->events[c]];
	if (o->by != PROCPROF_BY_IMAGE && process_rows(&b, o)) {
		procprof_release(pp);
		return -1;
	}
	for (size_t i = 0; i < v->n_images && o->by == PROCPROF_BY_IMAGE; i++) {
		if (!wanted(pp, o, i))
			continue;
		if (o->by_image) {
			size_t r = new_row(&b, i, NULL, 0);

			for (size_t c = 0; c < pp->n_events; c++)
				pp->counts[r * pp->n_events + c] = v->images[i].samples[pp->events[c]];
		} else {
			image_rows(&b, i, o->quiet);
		}
	}
	profile_release(&b.scratch);
	/* as many as were made: the room reserved for the worst case goes back */
	if (pp->n_rows) {
		pp->rows = xreallocarray(pp->rows, pp->n_rows, sizeof(*pp->rows));
		pp->counts = xreallocarray(pp->counts, pp->n_rows,
					   pp->n_events ? pp->n_events * sizeof(*pp->counts) : 1);
	}
	sort_rows(pp);
	for (size_t r = 0; r < pp->n_rows; r++)
		for (size_t c = 0; c < pp->n_events; c++)
			pp->shown[pp->events[c]] += procprof_samples(pp, r, c);
	return 0;
}

void procprof_release(struct procprof *pp)
{
	for (size_t i = 0; i < pp->n_comms; i++)
		free(pp->comms[i]);
	free(pp->comms);
	free(pp->groups);
	free(pp->rows);
	free(pp->counts);
	free(pp->name_rank);
	free(pp->unnamed);
	memset(pp, 0, sizeof(*pp));
}

uint64_t procprof_event_samples(const struct procprof *pp, size_t r, enum dcpi_event ev)
{
	int c = column_of(pp, ev);

	return c < 0 ? 0 : procprof_samples(pp, r, (size_t)c);
}

double procprof_percent(const struct procprof *pp, size_t r, size_t col)
{
	enum dcpi_event ev = pp->events[col];

	return pp->totals[ev] ? 100.0 * (double)procprof_samples(pp, r, col) / (double)pp->totals[ev]
			      : 0;
}

const char *procprof_name(const struct procprof *pp, size_t r)
{
	const struct procprof_row *row = &pp->rows[r];

	if (pp->by_image)
		return pp->view->images[row->image].rec->path;
	return row->proc ? row->proc->name : pp->unnamed[row->image];
}

const char *procprof_image_path(const struct procprof *pp, size_t r)
{
	return pp->view->images[pp->rows[r].image].rec->path;
}

/* ---- text ------------------------------------------------------------------ */

static void epoch_line(const struct epoch_view *v, struct strbuf *sb)
{
	strbuf_addf(sb, "Epoch %" PRIu32, v->seq);
	if (v->meta_ok && v->meta.label) {
		char *safe = display_safe(v->meta.label);

		strbuf_addf(sb, " (%s)", safe);
		free(safe);
	}
	if (v->meta_ok && v->meta.start_ns) {
		strbuf_addstr(sb, ", ");
		strbuf_add_time_short(sb, v->meta.start_ns);
		if (v->meta.end_ns > v->meta.start_ns) {
			strbuf_addstr(sb, ", ");
			strbuf_add_duration(sb, v->meta.end_ns - v->meta.start_ns);
		}
	}
	if (v->meta_ok && v->meta.host) {
		char *safe = display_safe(v->meta.host);

		strbuf_addf(sb, ", host %s", safe);
		free(safe);
	}
}

static void header(const struct procprof *pp, struct draw *d)
{
	struct strbuf sb = STRBUF_INIT;
	char label[40];

	epoch_line(pp->view, &sb);
	draw_text(d, STYLE_SECTION, sb.buf);
	draw_eol(d);
	draw_text(d, STYLE_NORMAL, "Total samples for event type ");
	for (size_t c = 0; c < pp->n_events; c++) {
		char note[96];

		draw_printf(d, STYLE_NORMAL, "%s%s = %" PRIu64, c ? ", " : "",
			    epoch_view_event_label(pp->view, pp->events[c], label, sizeof(label)),
			    pp->totals[pp->events[c]]);
		draw_text(d, STYLE_ERROR, incomplete_total_note(pp->view, pp->events[c], note,
								 sizeof(note)));
	}
	if (!pp->n_events)
		draw_text(d, STYLE_NORMAL, "(none: the epoch has no samples)");
	draw_eol(d);
	draw_eol(d);
	draw_text(d, STYLE_DIM, "The counts given below are the number of samples for each listed "
				"event type.");
	draw_eol(d);
	strbuf_release(&sb);
}

/* A row's process column (by process): "gzip", or "4321 gzip" by pid or tgid. */
static void group_label(const struct procprof *pp, size_t r, char *buf, size_t size)
{
	const struct procprof_group *g = &pp->groups[pp->rows[r].group];

	if (pp->by == PROCPROF_BY_COMM)
		snprintf(buf, size, "%s", g->comm ? g->comm : "?");
	else
		snprintf(buf, size, "%" PRIu32 " %s", g->id, g->comm ? g->comm : "?");
}

/* The column titles (their width decides the rule above them). */
static void titles(const struct procprof *pp, const size_t *w, size_t namew, size_t groupw,
		   struct strbuf *sb)
{
	char label[40];

	for (size_t c = 0; c < pp->n_events; c++) {
		strbuf_addf(sb, "%*s %7s ", (int)w[c],
			    epoch_view_event_label(pp->view, pp->events[c], label, sizeof(label)), "%");
		if (!c)
			strbuf_addf(sb, "%7s ", "cum%");
	}
	if (pp->by != PROCPROF_BY_IMAGE)
		strbuf_addf(sb, " %-*s ", (int)groupw, procprof_by_name(pp->by));
	if (pp->by_image)
		strbuf_addstr(sb, " image");
	else
		strbuf_addf(sb, " %-*s  image", (int)namew, "procedure");
}

/* The share of the rows up to one, of all samples of the first column's event (cum%). */
static double cum_percent(const struct procprof *pp, uint64_t sum)
{
	uint64_t total = pp->n_events ? pp->totals[pp->events[0]] : 0;

	return total ? 100.0 * (double)sum / (double)total : 0;
}

static void row_line(const struct procprof *pp, size_t r, double cum, const size_t *w,
		     size_t namew, size_t groupw, struct draw *d)
{
	char *name = display_safe(procprof_name(pp, r));
	char *path = display_safe(procprof_image_path(pp, r));

	for (size_t c = 0; c < pp->n_events; c++) {
		uint64_t n = procprof_samples(pp, r, c);
		double pct = procprof_percent(pp, r, c);
		enum style st = c ? STYLE_NORMAL : draw_share_style(pct / 100, n);

		draw_printf(d, st, "%*" PRIu64 " %6.2f%% ", (int)w[c], n, pct);
		if (!c)
			draw_printf(d, STYLE_NORMAL, "%6.2f%% ", cum);
	}
	if (pp->by != PROCPROF_BY_IMAGE) {
		char gbuf[64], *safe;

		group_label(pp, r, gbuf, sizeof(gbuf));
		safe = display_safe(gbuf);
		draw_printf(d, STYLE_NORMAL, " %-*s ", (int)groupw, safe);
		free(safe);
	}
	if (pp->by_image) {
		draw_printf(d, STYLE_NORMAL, " %s", path);
	} else {
		/* a name too long for its column is cut in the middle: the images stay in line */
		draw_space(d, STYLE_NORMAL, 1);
		draw_field(d, STYLE_NORMAL, name, (int)namew, ALIGN_LEFT_MIDDLE);
		draw_printf(d, STYLE_NORMAL, "  %s", path);
	}
	draw_eol(d);
	free(name);
	free(path);
}

void procprof_draw(const struct procprof *pp, struct draw *d, size_t max_rows)
{
	struct strbuf line = STRBUF_INIT;
	size_t n = max_rows && max_rows < pp->n_rows ? max_rows : pp->n_rows;
	size_t w[EVENT__COUNT], namew = 9, groupw = 4, total_w;
	char label[40], gbuf[64];
	uint64_t sum = 0;

	header(pp, d);
	for (size_t c = 0; c < pp->n_events; c++) {
		enum dcpi_event ev = pp->events[c];

		w[c] = strlen(epoch_view_event_label(pp->view, ev, label, sizeof(label)));
		if ((size_t)draw_digits(pp->totals[ev]) > w[c])
			w[c] = (size_t)draw_digits(pp->totals[ev]);
	}
	for (size_t i = 0; i < n && !pp->by_image; i++) {
		char *safe = display_safe(procprof_name(pp, i));
		size_t len = (size_t)text_width(safe, d->flags);

		if (len > namew)
			namew = len > DRAW_NAME_MAX ? DRAW_NAME_MAX : len;
		free(safe);
	}
	for (size_t i = 0; i < n && pp->by != PROCPROF_BY_IMAGE; i++) {
		group_label(pp, i, gbuf, sizeof(gbuf));
		if (strlen(gbuf) > groupw)
			groupw = strlen(gbuf);
	}
	titles(pp, w, namew, groupw, &line);
	total_w = line.len + 20;
	for (size_t k = 0; k < (total_w > 100 ? 100 : total_w); k++)
		draw_text(d, STYLE_DIM, "=");
	draw_eol(d);
	draw_text(d, STYLE_HEADER, line.buf);
	draw_eol(d);
	for (size_t i = 0; i < n; i++) {
		sum += pp->n_events ? procprof_samples(pp, i, 0) : 0;
		row_line(pp, i, cum_percent(pp, sum), w, namew, groupw, d);
	}
	strbuf_release(&line);
}

/* ---- JSON ------------------------------------------------------------------- */

void procprof_json(const struct procprof *pp, struct json_writer *w, size_t max_rows)
{
	const struct epoch_view *v = pp->view;
	size_t n = max_rows && max_rows < pp->n_rows ? max_rows : pp->n_rows;
	uint64_t sum = 0;

	json_object_begin(w);
	json_key(w, "epoch");
	json_u64(w, v->seq);
	json_key(w, "label");
	json_string(w, v->meta_ok ? v->meta.label : NULL);
	json_key(w, "by_image");
	json_bool(w, pp->by_image);
	json_key(w, "by");
	json_string(w, procprof_by_name(pp->by));
	json_key(w, "events");
	json_array_begin(w);
	for (size_t c = 0; c < pp->n_events; c++) {
		enum dcpi_event ev = pp->events[c];
		const struct epoch_event *e = v->meta_ok ? epoch_meta_event(&v->meta, ev) : NULL;

		json_object_begin(w);
		json_key(w, "name");
		json_string(w, event_name(ev));
		json_key(w, "used");
		json_string(w, event_name(e ? e->used : ev));
		json_key(w, "total");
		json_u64(w, pp->totals[ev]);
		json_key(w, "unread");
		json_u64(w, v->unread[ev]);
		json_object_end(w);
	}
	json_array_end(w);
	json_key(w, "rows");
	json_array_begin(w);
	for (size_t i = 0; i < n; i++) {
		const struct procprof_row *row = &pp->rows[i];

		json_object_begin(w);
		if (pp->by != PROCPROF_BY_IMAGE) {
			const struct procprof_group *g = &pp->groups[row->group];

			if (pp->by != PROCPROF_BY_COMM) {
				json_key(w, procprof_by_name(pp->by));
				json_u64(w, g->id);
			}
			json_key(w, "comm");
			json_string(w, g->comm);
		}
		if (!pp->by_image) {
			json_key(w, "procedure");
			json_string(w, procprof_name(pp, i));
			json_key(w, "start");
			if (row->proc)
				json_hex(w, row->proc->start);
			else
				json_null(w);
		}
		json_key(w, "image");
		json_string(w, procprof_image_path(pp, i));
		json_key(w, "image_key");
		json_string(w, v->images[row->image].rec->key);
		json_key(w, "samples");
		json_object_begin(w);
		for (size_t c = 0; c < pp->n_events; c++) {
			json_key(w, event_name(pp->events[c]));
			json_u64(w, procprof_samples(pp, i, c));
		}
		json_object_end(w);
		json_key(w, "percent");
		json_object_begin(w);
		for (size_t c = 0; c < pp->n_events; c++) {
			json_key(w, event_name(pp->events[c]));
			json_double(w, procprof_percent(pp, i, c), 6);
		}
		json_object_end(w);
		sum += pp->n_events ? procprof_samples(pp, i, 0) : 0;
		json_key(w, "cum_percent");
		json_double(w, cum_percent(pp, sum), 6);
		json_object_end(w);
	}
	json_array_end(w);
	db_damage_json(&v->db, 1, w);
	json_object_end(w);
}
