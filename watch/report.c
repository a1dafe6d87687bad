/*
 * watch/report.c - stopwatch results as text and JSON (watch/report.h).
 */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "core/json.h"
#include "core/strbuf.h"
#include "watch/report.h"

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

void watch_hist_line(struct strbuf *sb, unsigned k, uint64_t count, uint64_t max, unsigned width)
{
	size_t start = sb->len, bar = max ? (size_t)((count * width + max - 1) / max) : 0;

	strbuf_addch(sb, '[');
	strbuf_add_ns(sb, (double)bucket_lo(k));
	strbuf_addstr(sb, ", ");
	strbuf_add_ns(sb, (double)bucket_hi(k));
	strbuf_addch(sb, ')');
	while (sb->len - start < 22)
		strbuf_addch(sb, ' ');
	strbuf_addf(sb, "%10" PRIu64 "  ", count);
	for (size_t i = 0; i < bar; i++)
		strbuf_addch(sb, '#');
}

/* ---- text ----------------------------------------------------------------------- */

static void add_stat_cols(struct strbuf *sb, const struct watch_stat *st)
{
	const double v[4] = { st->mean, (double)st->min, (double)st->max, watch_stat_stddev(st) };

	for (int i = 0; i < 4; i++) {
		size_t start = sb->len;

		if (st->n)
			strbuf_add_ns(sb, v[i]);
		else
			strbuf_addch(sb, '-');
		while (sb->len - start < 10)
			strbuf_addch(sb, ' ');
		strbuf_addch(sb, ' ');
	}
}

static void text_row(struct strbuf *sb, const struct watch_rec *r, const char *label)
{
	strbuf_addf(sb, "%-24s %10" PRIu64 " %6" PRIu64 " %7" PRIu64 "  ", label, r->calls, r->open,
		    r->unwound);
	add_stat_cols(sb, &r->wall);
	if (r->cpu.n)
		strbuf_add_ns(sb, r->cpu.mean);
	else
		strbuf_addch(sb, '-');
	strbuf_rtrim(sb);
	strbuf_addch(sb, '\n');
}

static void text_events(struct strbuf *sb, const struct watch_rec *r)
{
	for (unsigned i = 0; i < r->nevents; i++) {
		const struct watch_stat *st = &r->ev[i].st;

		if (!st->n)
			continue;
		strbuf_addf(sb, "    %-20s mean %.2f  min %" PRIu64 "  max %" PRIu64 "  stddev %.2f"
			    "  total %.0f\n", r->ev[i].name, st->mean, st->min, st->max,
			    watch_stat_stddev(st), st->mean * (double)st->n);
	}
}

static void text_hist(struct strbuf *sb, const struct watch_rec *r)
{
	uint64_t max = 0;
	int lo = -1, hi = -1;

	for (int k = 0; k < WATCH_HIST; k++)
		if (r->hist[k]) {
			if (lo < 0)
				lo = k;
			hi = k;
			if (r->hist[k] > max)
				max = r->hist[k];
		}
	if (lo < 0)
		return;
	strbuf_addstr(sb, "    wall time             calls\n");
	for (int k = lo; k <= hi; k++) {
		strbuf_addstr(sb, "    ");
		watch_hist_line(sb, (unsigned)k, r->hist[k], max, 40);
		strbuf_addch(sb, '\n');
	}
}

static bool same_target(const struct watch_rec *a, const struct watch_rec *b)
{
	return a->kind == b->kind && !strcmp(a->key, b->key) && a->offset == b->offset &&
	       !strcmp(a->key_b, b->key_b) && a->offset_b == b->offset_b;
}

void watch_report_text(FILE *out, const struct watch_set *s, const struct watch_report_opts *o)
{
	struct watch_set fn = WATCH_SET_INIT, th = WATCH_SET_INIT;
	struct strbuf sb = STRBUF_INIT;

	watch_set_group(s, WATCH_BY_FUNCTION, &fn);
	watch_set_group(s, WATCH_BY_THREAD, &th);
	strbuf_addf(&sb, "%-24s %10s %6s %7s  %-10s %-10s %-10s %-10s %s\n", "function", "calls",
		    "open", "unwound", "mean", "min", "max", "stddev", "on-cpu");
	for (size_t i = 0; i < fn.n; i++) {
		const struct watch_rec *r = &fn.v[i];

		text_row(&sb, r, r->name);
		if (o->threads)
			for (size_t k = 0; k < th.n; k++) {
				char label[64];

				if (!same_target(&th.v[k], r) || !th.v[k].tid)
					continue;
				snprintf(label, sizeof(label), "  %" PRIu32 "/%" PRIu32 " %.12s", th.v[k].pid,
					 th.v[k].tid, th.v[k].comm);
				text_row(&sb, &th.v[k], label);
			}
		text_events(&sb, r);
		if (o->histograms)
			text_hist(&sb, r);
	}
	fwrite(sb.buf, 1, sb.len, out);
	strbuf_release(&sb);
	watch_set_release(&fn);
	watch_set_release(&th);
}

/* ---- JSON ------------------------------------------------------------------------- */

static void json_stat(struct json_writer *w, const char *key, const struct watch_stat *st,
		      bool total)
{
	json_key(w, key);
	json_object_begin(w);
	json_key(w, "min");
	json_u64(w, st->min);
	json_key(w, "max");
	json_u64(w, st->max);
	json_key(w, "mean");
	json_double(w, st->mean, 12);
	json_key(w, "stddev");
	json_double(w, watch_stat_stddev(st), 12);
	if (total) {
		json_key(w, "total");
		json_double(w, st->mean * (double)st->n, 15);
	}
	json_object_end(w);
}

static void json_counts(struct json_writer *w, const struct watch_rec *r)
{
	json_key(w, "calls");
	json_u64(w, r->calls);
	json_key(w, "open");
	json_u64(w, r->open);
	json_key(w, "unwound");
	json_u64(w, r->unwound);
	json_key(w, "timed");
	json_u64(w, r->wall.n);
	json_stat(w, "wall_ns", &r->wall, false);
	json_stat(w, "cpu_ns", &r->cpu, false);
	json_key(w, "histogram");
	json_array_begin(w);
	for (unsigned k = 0; k < WATCH_HIST; k++)
		if (r->hist[k]) {
			json_object_begin(w);
			json_key(w, "from_ns");
			json_u64(w, bucket_lo(k));
			json_key(w, "to_ns");
			json_u64(w, bucket_hi(k));
			json_key(w, "count");
			json_u64(w, r->hist[k]);
			json_object_end(w);
		}
	json_array_end(w);
	json_key(w, "events");
	json_object_begin(w);
	for (unsigned i = 0; i < r->nevents; i++)
		json_stat(w, r->ev[i].name, &r->ev[i].st, true);
	json_object_end(w);
}

int watch_report_json(FILE *out, const struct watch_set *s)
{
	struct watch_set fn = WATCH_SET_INIT, th = WATCH_SET_INIT;
	struct json_writer w;

	watch_set_group(s, WATCH_BY_FUNCTION, &fn);
	watch_set_group(s, WATCH_BY_THREAD, &th);
	json_init(&w, out, true);
	json_object_begin(&w);
	json_key(&w, "functions");
	json_array_begin(&w);
	for (size_t i = 0; i < fn.n; i++) {
		const struct watch_rec *r = &fn.v[i];

		json_object_begin(&w);
		json_key(&w, "function");
		json_string(&w, r->name);
		json_key(&w, "kind");
		json_string(&w, r->kind == WATCH_BETWEEN ? "between" : "function");
		json_key(&w, "image");
		json_string(&w, r->path);
		json_key(&w, "offset");
		json_hex(&w, r->offset);
		json_counts(&w, r);
		json_key(&w, "threads");
		json_array_begin(&w);
		for (size_t k = 0; k < th.n; k++) {
			if (!same_target(&th.v[k], r) || !th.v[k].tid)
				continue;
			json_object_begin(&w);
			json_key(&w, "pid");
			json_u64(&w, th.v[k].pid);
			json_key(&w, "tid");
			json_u64(&w, th.v[k].tid);
			json_key(&w, "comm");
			json_string(&w, th.v[k].comm);
			json_counts(&w, &th.v[k]);
			json_object_end(&w);
		}
		json_array_end(&w);
		json_object_end(&w);
	}
	json_array_end(&w);
	json_object_end(&w);
	watch_set_release(&fn);
	watch_set_release(&th);
	return json_finish(&w);
}
