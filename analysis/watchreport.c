/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/watchreport.c - stopwatch results as text and JSON
 * (analysis/watchreport.h).
 */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "analysis/watchreport.h"
#include "core/json.h"
#include "db/damage.h"
#include "core/strbuf.h"
#include "present/draw.h"

void strbuf_add_ns(struct strbuf *sb, double ns)
{
	static const char *const units[] = { "ns", "us", "ms", "s" };
	unsigned u = 0;

	while (u < 3 && ns >= 999.5) {
		ns /= 1000;
		u++;
	}
	if (u == 0)
		strbuf_addf(sb, "%.0f %s", ns, units[u]);
	else
		strbuf_addf(sb, "%.*f %s", ns >= 99.95 ? 0 : ns >= 9.995 ? 1 : 2, ns, units[u]);
}

static uint64_t bucket_lo(unsigned k)
{
	return k ? 1ull << k : 0;
}

static uint64_t bucket_hi(unsigned k)
{
	return k >= 63 ? UINT64_MAX : 1ull << (k + 1);
}

/* ---- text ----------------------------------------------------------------------- */

static void ns_field(struct draw *d, enum style st, double ns, bool have, int width)
{
	struct strbuf sb = STRBUF_INIT;

	if (have)
		strbuf_add_ns(&sb, ns);
	else
		strbuf_addch(&sb, '-');
	draw_field(d, st, sb.buf, width, ALIGN_RIGHT);
	strbuf_release(&sb);
}

void watch_header_draw(struct draw *d)
{
	draw_printf(d, STYLE_HEADER, "%-24s %10s %6s %7s %10s %10s %10s %10s %10s", "function",
		    "calls", "open", "unwound", "mean", "min", "max", "stddev", "on-cpu");
}

void watch_row_draw(const struct watch_rec *r, struct draw *d, const char *label)
{
	const struct watch_stat *w = &r->wall;

	draw_field(d, STYLE_NORMAL, label, 24, ALIGN_LEFT);
	draw_printf(d, STYLE_NORMAL, " %10" PRIu64, r->calls);
	draw_printf(d, r->open ? STYLE_WARNING : STYLE_NORMAL, " %6" PRIu64, r->open);
	draw_printf(d, r->unwound ? STYLE_WARNING : STYLE_NORMAL, " %7" PRIu64 " ", r->unwound);
	ns_field(d, STYLE_HOT, w->mean, w->n, 10);
	draw_space(d, STYLE_NORMAL, 1);
	ns_field(d, STYLE_NORMAL, (double)w->min, w->n, 10);
	draw_space(d, STYLE_NORMAL, 1);
	ns_field(d, STYLE_NORMAL, (double)w->max, w->n, 10);
	draw_space(d, STYLE_NORMAL, 1);
	ns_field(d, STYLE_NORMAL, watch_stat_stddev(w), w->n, 10);
	draw_space(d, STYLE_NORMAL, 1);
	ns_field(d, STYLE_NORMAL, r->cpu.mean, r->cpu.n, 10);
}

void watch_event_draw(const struct watch_rec *r, struct draw *d, unsigned i)
{
	const struct watch_stat *st = &r->ev[i].st;

	draw_space(d, STYLE_NORMAL, 4);
	draw_field(d, STYLE_LABEL, r->ev[i].name, 20, ALIGN_LEFT);
	draw_printf(d, STYLE_NORMAL, " mean %.2f  min %" PRIu64 "  max %" PRIu64
		    "  stddev %.2f  total %.0f", st->mean, st->min, st->max,
		    watch_stat_stddev(st), st->mean * (double)st->n);
}

void watch_events_draw(const struct watch_rec *r, struct draw *d)
{
	for (unsigned i = 0; i < r->nevents; i++)
		if (r->ev[i].st.n) {
			watch_event_draw(r, d, i);
			draw_eol(d);
		}
}

bool watch_hist_range(const struct watch_rec *r, unsigned *lo, unsigned *hi, uint64_t *max)
{
	bool any = false;

	*max = 0;
	for (unsigned k = 0; k < WATCH_HIST; k++)
		if (r->hist[k]) {
			if (!any)
				*lo = k;
			*hi = k;
			any = true;
			if (r->hist[k] > *max)
				*max = r->hist[k];
		}
	return any;
}

void watch_hist_header_draw(struct draw *d)
{
	draw_space(d, STYLE_NORMAL, 4);
	draw_printf(d, STYLE_HEADER, "%-22s %10s", "wall time", "calls");
}

void watch_hist_line_draw(const struct watch_rec *r, struct draw *d, unsigned k, uint64_t max,
			  int width)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addch(&sb, '[');
	strbuf_add_ns(&sb, (double)bucket_lo(k));
	strbuf_addstr(&sb, ", ");
	strbuf_add_ns(&sb, (double)bucket_hi(k));
	strbuf_addch(&sb, ')');
	draw_space(d, STYLE_NORMAL, 4);
	draw_field(d, STYLE_NORMAL, sb.buf, 22, ALIGN_LEFT);
	draw_printf(d, STYLE_NORMAL, " %10" PRIu64 "  ", r->hist[k]);
	if (r->hist[k])
		draw_bar(d, STYLE_HOT, (double)r->hist[k] / (double)max, width);
	strbuf_release(&sb);
}

void watch_hist_draw(const struct watch_rec *r, struct draw *d, int width)
{
	unsigned lo, hi;
	uint64_t max;

	if (!watch_hist_range(r, &lo, &hi, &max))
		return;
	watch_hist_header_draw(d);
	draw_eol(d);
	for (unsigned k = lo; k <= hi; k++) {
		watch_hist_line_draw(r, d, k, max, width);
		draw_eol(d);
	}
}

bool watch_same_target(const struct watch_rec *a, const struct watch_rec *b)
{
	return a->kind == b->kind && !strcmp(a->key, b->key) && a->offset == b->offset &&
	       !strcmp(a->key_b, b->key_b) && a->offset_b == b->offset_b;
}

void watch_report_draw(const struct watch_set *s, struct draw *d, const struct watch_report_opts *o)
{
	struct watch_set fn = WATCH_SET_INIT, th = WATCH_SET_INIT;

	watch_set_group(s, WATCH_BY_FUNCTION, &fn);
	watch_set_group(s, o->processes && !o->threads ? WATCH_BY_PROCESS : WATCH_BY_THREAD, &th);
	watch_header_draw(d);
	draw_eol(d);
	for (size_t i = 0; i < fn.n; i++) {
		const struct watch_rec *r = &fn.v[i];

		watch_row_draw(r, d, r->name);
		draw_eol(d);
		if (o->threads || o->processes)
			for (size_t k = 0; k < th.n; k++) {
				char label[64];

				if (!watch_same_target(&th.v[k], r) || !th.v[k].pid)
					continue;
				if (th.v[k].tid)
					snprintf(label, sizeof(label), "  %" PRIu32 "/%" PRIu32 " %s",
						 th.v[k].pid, th.v[k].tid, th.v[k].comm);
				else
					snprintf(label, sizeof(label), "  %" PRIu32 " %s", th.v[k].pid,
						 th.v[k].comm);
				watch_row_draw(&th.v[k], d, label);
				draw_eol(d);
			}
		watch_events_draw(r, d);
		if (o->histograms)
			watch_hist_draw(r, d, 40);
	}
	watch_set_release(&fn);
	watch_set_release(&th);
}

/* ---- JSON ------------------------------------------------------------------------- */

static void json_stat(struct json_writer *w, const char *key, const struct watch_stat *st,
		      bool total)
{
	json_key(w, key);
	json_object_begin(w);
	json_key(w, "min"), json_u64(w, st->min);
	json_key(w, "max"), json_u64(w, st->max);
	json_key(w, "mean"), json_double(w, st->mean, 12);
	json_key(w, "stddev"), json_double(w, watch_stat_stddev(st), 12);
	if (total)
		json_key(w, "total"), json_double(w, st->mean * (double)st->n, 15);
	json_object_end(w);
}

static void json_counts(struct json_writer *w, const struct watch_rec *r)
{
	json_key(w, "calls"), json_u64(w, r->calls);
	json_key(w, "open"), json_u64(w, r->open);
	json_key(w, "unwound"), json_u64(w, r->unwound);
	json_key(w, "timed"), json_u64(w, r->wall.n);
	json_stat(w, "wall_ns", &r->wall, false);
	json_stat(w, "cpu_ns", &r->cpu, false);
	json_key(w, "histogram");
	json_array_begin(w);
	for (unsigned k = 0; k < WATCH_HIST; k++)
		if (r->hist[k]) {
			json_object_begin(w);
			json_key(w, "from_ns"), json_u64(w, bucket_lo(k));
			json_key(w, "to_ns"), json_u64(w, bucket_hi(k));
			json_key(w, "count"), json_u64(w, r->hist[k]);
			json_object_end(w);
		}
	json_array_end(w);
	json_key(w, "events");
	json_object_begin(w);
	for (unsigned i = 0; i < r->nevents; i++)
		json_stat(w, r->ev[i].name, &r->ev[i].st, true);
	json_object_end(w);
}

void watch_report_json(const struct watch_set *s, struct db *db, struct json_writer *w)
{
	struct watch_set fn = WATCH_SET_INIT, th = WATCH_SET_INIT;

	watch_set_group(s, WATCH_BY_FUNCTION, &fn);
	watch_set_group(s, WATCH_BY_THREAD, &th);
	json_object_begin(w);
	json_key(w, "functions");
	json_array_begin(w);
	for (size_t i = 0; i < fn.n; i++) {
		const struct watch_rec *r = &fn.v[i];

		json_object_begin(w);
		json_key(w, "function"), json_string(w, r->name);
		json_key(w, "kind"), json_string(w, r->kind == WATCH_BETWEEN ? "between" : "function");
		json_key(w, "image"), json_string(w, r->path);
		json_key(w, "offset"), json_hex(w, r->offset);
		json_counts(w, r);
		json_key(w, "threads");
		json_array_begin(w);
		for (size_t k = 0; k < th.n; k++) {
			if (!watch_same_target(&th.v[k], r) || !th.v[k].tid)
				continue;
			json_object_begin(w);
			json_key(w, "pid"), json_u64(w, th.v[k].pid);
			json_key(w, "tid"), json_u64(w, th.v[k].tid);
			json_key(w, "comm"), json_string(w, th.v[k].comm);
			json_counts(w, &th.v[k]);
			json_object_end(w);
		}
		json_array_end(w);
		json_object_end(w);
	}
	json_array_end(w);
	if (db)
		db_damage_json(&db, 1, w);
	json_object_end(w);
	watch_set_release(&fn);
	watch_set_release(&th);
}
