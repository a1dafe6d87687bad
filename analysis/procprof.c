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
#include "core/u64map.h"
#include "core/utf8.h"
#include "core/xalloc.h"

struct builder {
	struct procprof *pp;
	size_t alloc;
};

static struct procprof_row *new_row(struct builder *b, size_t image, const struct proc *p,
				    const char *name)
{
	struct procprof_row *r;

	ALLOC_GROW(b->pp->rows, b->pp->n_rows + 1, b->alloc);
	r = &b->pp->rows[b->pp->n_rows++];
	memset(r, 0, sizeof(*r));
	r->image = image;
	r->proc = p;
	r->name = name;
	r->start = p ? p->start : 0;
	return r;
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
	const char *unnamed = image_unnamed(img);

	if (!quiet && (img->syms_why || !image_procs(img)->n || img->forced))
		epoch_view_warn_image(v, i);
	u64map_init(&rows);
	for (size_t c = 0; c < pp->n_events; c++) {
		enum dcpi_event ev = pp->events[c];
		const struct profile *prof = epoch_view_profile(v, i, ev);
		const struct proc *last = NULL;

		for (size_t k = 0; k < prof->n; k++) {
			const struct proc *p = NULL;
			uint64_t addr, *slot;

			if (image_offset_to_addr(img, prof->v[k].offset, &addr)) {
				if (last && addr >= last->start && addr < last->end)
					p = last;
				else
					p = last = image_proc_at(img, addr);
			}
			slot = u64map_slot(&rows, (uint64_t)(uintptr_t)p);
			if (!*slot) {
				new_row(b, i, p, p ? p->name : unnamed);
				*slot = pp->n_rows;
			}
			pp->rows[*slot - 1].samples[ev] += prof->v[k].count;
		}
		/* samples the header counts but the profile lacks (unreadable profile) */
		uint64_t got = profile_total(prof), want = v->images[i].samples[ev];

		if (want > got) {
			uint64_t *slot = u64map_slot(&rows, 0);

			if (!*slot) {
				new_row(b, i, NULL, unnamed);
				*slot = pp->n_rows;
			}
			pp->rows[*slot - 1].samples[ev] += want - got;
		}
	}
	u64map_release(&rows);
}

static const struct procprof *sort_pp;

static int row_cmp(const void *a, const void *b)
{
	const struct procprof_row *x = a, *y = b;
	int r;

	for (size_t c = 0; c < sort_pp->n_events; c++) {
		enum dcpi_event ev = sort_pp->events[c];

		if (x->samples[ev] != y->samples[ev])
			return x->samples[ev] > y->samples[ev] ? -1 : 1;
	}
	if (x->comm && y->comm && (r = strcmp(x->comm, y->comm)))
		return r;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if ((r = strcmp(x->name, y->name)))
		return r;
	if ((r = strcmp(sort_pp->view->images[x->image].rec->path,
			sort_pp->view->images[y->image].rec->path)))
		return r;
	return x->start < y->start ? -1 : x->start > y->start;
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

/* The row of (group, node or image) for a sample's thread. */
static struct procprof_row *process_row(struct builder *b, struct idmap *ix,
					const struct stack_view *sv, const struct stack_thread *th,
					uint32_t node, uint32_t comm_id)
{
	struct procprof *pp = b->pp;
	const struct sv_node *n = &sv->nodes[node];
	uint32_t id = pp->by == PROCPROF_BY_PID ? th->tid : pp->by == PROCPROF_BY_TGID ? th->tgid : 0;
	uint64_t what = pp->by_image ? (uint64_t)n->image : node;
	uint64_t h = hash_u64(what ^ hash_u64((uint64_t)comm_id << 32 | id));
	struct procprof_row *r;

	for (uint32_t k = idmap_first(ix, h); k != IDMAP_NONE; k = idmap_next(ix, k)) {
		r = &pp->rows[k];
		if (r->id == id && r->comm == pp->comms[comm_id] &&
		    (pp->by_image ? r->image == n->image : r->proc == n->proc && r->image == n->image))
			return r;
	}
	if (pp->by_image)
		r = new_row(b, n->image, NULL, pp->view->images[n->image].rec->path);
	else
		r = new_row(b, n->image, n->proc, n->name);
	r->comm = pp->comms[comm_id];
	r->id = id;
	idmap_add(ix, h, (uint32_t)(pp->n_rows - 1));
	return r;
}

static bool event_shown(const struct procprof *pp, unsigned ev)
{
	for (size_t c = 0; c < pp->n_events; c++)
		if (pp->events[c] == ev)
			return true;
	return false;
}

static int process_rows(struct builder *b, const struct procprof_opts *o)
{
	struct procprof *pp = b->pp;
	struct idmap ix = IDMAP_INIT;
	struct stack_view sv;
	uint32_t nodes[STACK_MAX_DEPTH];
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
		bool delayed;

		if (!event_shown(pp, s->event))
			continue;
		stack_view_nodes(&sv, s->stack, false, nodes, &delayed);
		if (sv.nodes[nodes[0]].image == SIZE_MAX || !wanted(pp, o, sv.nodes[nodes[0]].image))
			continue;
		process_row(b, &ix, &sv, th, nodes[0], th->comm)->samples[s->event] += s->count;
	}
	idmap_release(&ix);
	stack_view_release(&sv);
	return 0;
}

int procprof_build(struct procprof *pp, struct epoch_view *v, const struct procprof_opts *o)
{
	static const struct procprof_opts defaults = PROCPROF_OPTS_INIT;
	struct builder b = { pp, 0 };

	if (!o)
		o = &defaults;
	memset(pp, 0, sizeof(*pp));
	pp->view = v;
	pp->by_image = o->by_image;
	pp->by = o->by;
	if (set_columns(pp, o) || check_filters(pp, o))
		return -1;
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
			struct procprof_row *r = new_row(&b, i, NULL, v->images[i].rec->path);

			memcpy(r->samples, v->images[i].samples, sizeof(r->samples));
		} else {
			image_rows(&b, i, o->quiet);
		}
	}
	sort_pp = pp;
	if (pp->n_rows > 1)
		qsort(pp->rows, pp->n_rows, sizeof(*pp->rows), row_cmp);
	sort_pp = NULL;
	for (size_t r = 0; r < pp->n_rows; r++) {
		uint64_t first = pp->n_events ? pp->events[0] : 0;

		for (size_t c = 0; c < pp->n_events; c++)
			pp->shown[pp->events[c]] += pp->rows[r].samples[pp->events[c]];
		pp->rows[r].cum_percent = pp->n_events && pp->totals[first]
			? 100.0 * (double)pp->shown[first] / (double)pp->totals[first] : 0;
	}
	return 0;
}

void procprof_release(struct procprof *pp)
{
	for (size_t i = 0; i < pp->n_comms; i++)
		free(pp->comms[i]);
	free(pp->comms);
	free(pp->rows);
	memset(pp, 0, sizeof(*pp));
}

double procprof_percent(const struct procprof *pp, const struct procprof_row *row, size_t col)
{
	enum dcpi_event ev = pp->events[col];

	return pp->totals[ev] ? 100.0 * (double)row->samples[ev] / (double)pp->totals[ev] : 0;
}

const char *procprof_image_path(const struct procprof *pp, const struct procprof_row *row)
{
	return pp->view->images[row->image].rec->path;
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
static void group_label(const struct procprof *pp, const struct procprof_row *row, char *buf,
			size_t size)
{
	if (pp->by == PROCPROF_BY_COMM)
		snprintf(buf, size, "%s", row->comm ? row->comm : "?");
	else
		snprintf(buf, size, "%" PRIu32 " %s", row->id, row->comm ? row->comm : "?");
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

static void row_line(const struct procprof *pp, const struct procprof_row *row, const size_t *w,
		     size_t namew, size_t groupw, struct draw *d)
{
	char *name = display_safe(row->name), *path = display_safe(procprof_image_path(pp, row));

	for (size_t c = 0; c < pp->n_events; c++) {
		enum dcpi_event ev = pp->events[c];
		double pct = procprof_percent(pp, row, c);
		enum style st = c ? STYLE_NORMAL : draw_share_style(pct / 100, row->samples[ev]);

		draw_printf(d, st, "%*" PRIu64 " %6.2f%% ", (int)w[c], row->samples[ev], pct);
		if (!c)
			draw_printf(d, STYLE_NORMAL, "%6.2f%% ", row->cum_percent);
	}
	if (pp->by != PROCPROF_BY_IMAGE) {
		char gbuf[64], *safe;

		group_label(pp, row, gbuf, sizeof(gbuf));
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

	header(pp, d);
	for (size_t c = 0; c < pp->n_events; c++) {
		enum dcpi_event ev = pp->events[c];

		w[c] = strlen(epoch_view_event_label(pp->view, ev, label, sizeof(label)));
		if ((size_t)draw_digits(pp->totals[ev]) > w[c])
			w[c] = (size_t)draw_digits(pp->totals[ev]);
	}
	for (size_t i = 0; i < n && !pp->by_image; i++) {
		char *safe = display_safe(pp->rows[i].name);
		size_t len = (size_t)text_width(safe, d->flags);

		if (len > namew)
			namew = len > DRAW_NAME_MAX ? DRAW_NAME_MAX : len;
		free(safe);
	}
	for (size_t i = 0; i < n && pp->by != PROCPROF_BY_IMAGE; i++) {
		group_label(pp, &pp->rows[i], gbuf, sizeof(gbuf));
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
	for (size_t i = 0; i < n; i++)
		row_line(pp, &pp->rows[i], w, namew, groupw, d);
	strbuf_release(&line);
}

/* ---- JSON ------------------------------------------------------------------- */

void procprof_json(const struct procprof *pp, struct json_writer *w, size_t max_rows)
{
	const struct epoch_view *v = pp->view;
	size_t n = max_rows && max_rows < pp->n_rows ? max_rows : pp->n_rows;

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
			if (pp->by != PROCPROF_BY_COMM) {
				json_key(w, procprof_by_name(pp->by));
				json_u64(w, row->id);
			}
			json_key(w, "comm");
			json_string(w, row->comm);
		}
		if (!pp->by_image) {
			json_key(w, "procedure");
			json_string(w, row->name);
			json_key(w, "start");
			if (row->proc)
				json_hex(w, row->start);
			else
				json_null(w);
		}
		json_key(w, "image");
		json_string(w, procprof_image_path(pp, row));
		json_key(w, "image_key");
		json_string(w, v->images[row->image].rec->key);
		json_key(w, "samples");
		json_object_begin(w);
		for (size_t c = 0; c < pp->n_events; c++) {
			json_key(w, event_name(pp->events[c]));
			json_u64(w, row->samples[pp->events[c]]);
		}
		json_object_end(w);
		json_key(w, "percent");
		json_object_begin(w);
		for (size_t c = 0; c < pp->n_events; c++) {
			json_key(w, event_name(pp->events[c]));
			json_double(w, procprof_percent(pp, row, c), 6);
		}
		json_object_end(w);
		json_key(w, "cum_percent");
		json_double(w, row->cum_percent, 6);
		json_object_end(w);
	}
	json_array_end(w);
	db_damage_json(&v->db, 1, w);
	json_object_end(w);
}
