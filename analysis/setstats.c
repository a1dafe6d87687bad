/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/setstats.c - statistics of rows across sets (dcpistats).
 */
#include "config.h"

#include "analysis/setstats.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "present/draw.h"

static int cmp_rows(const void *a, const void *b)
{
	const struct setstats_row *x = a, *y = b;
	int r;

	if (x->s.range_pct != y->s.range_pct)
		return x->s.range_pct > y->s.range_pct ? -1 : 1;
	if (x->s.sum != y->s.sum)
		return x->s.sum > y->s.sum ? -1 : 1;
	if ((r = strcmp(x->row->name, y->row->name)))
		return r;
	if ((r = strcmp(x->row->image, y->row->image)))
		return r;
	return x->row->addr < y->row->addr ? -1 : x->row->addr > y->row->addr;
}

static void summarise(struct setstats *st)
{
	size_t ns = st->n_sets;

	st->values = xcalloc(st->rows.n_rows * ns + 1, sizeof(*st->values));
	st->v = xcalloc(st->rows.n_rows + 1, sizeof(*st->v));
	st->n = st->rows.n_rows;
	for (size_t i = 0; i < ns; i++)
		st->total += (double)st->rows.totals[i] * st->factors[i];
	for (size_t r = 0; r < st->n; r++) {
		struct setstats_row *out = &st->v[r];
		double *x = &st->values[r * ns];

		out->row = &st->rows.rows[r];
		out->values = x;
		for (size_t i = 0; i < ns; i++) {
			x[i] = (double)out->row->counts[i] * st->factors[i];
			out->n += out->row->counts[i] != 0;
		}
		stats_summarize(x, ns, &out->s);
		out->sum_pct = st->total > 0 ? 100.0 * out->s.sum / st->total : 0;
	}
	if (st->n > 1)
		qsort(st->v, st->n, sizeof(*st->v), cmp_rows);
}

/* Leaves out the rows below min_pct of all samples (keeps the order). */
static void drop_small_rows(struct setstats *st, double min_pct)
{
	size_t k = 0;

	st->min_sum_pct = min_pct;
	for (size_t i = 0; i < st->n; i++) {
		if (min_pct > 0 && st->v[i].sum_pct < min_pct)
			st->n_hidden++;
		else
			st->v[k++] = st->v[i];
	}
	st->n = k;
}

int setstats_build(struct setstats *st, struct pset *const *sets, size_t n,
		   const struct setstats_opts *o)
{
	static const struct setstats_opts defaults = SETSTATS_OPTS_INIT;
	enum dcpi_event ev;
	int r;

	if (!o)
		o = &defaults;
	memset(st, 0, sizeof(*st));
	st->sets = sets;
	st->n_sets = n;
	st->norm = o->norm;
	ev = (unsigned)o->event < EVENT__COUNT ? o->event : pset_default_event(sets, n);
	r = o->procedure ? pset_rows_build_proc(&st->rows, sets, n, ev, o->procedure)
			 : pset_rows_build(&st->rows, sets, n, ev, o->level);
	if (r)
		return -1;
	st->factors = xcalloc(n ? n : 1, sizeof(*st->factors));
	if (pset_norm_factors(sets, n, ev, o->norm, st->rows.totals, st->factors)) {
		setstats_release(st);
		return -1;
	}
	summarise(st);
	drop_small_rows(st, o->min_sum_pct);
	return 0;
}

void setstats_release(struct setstats *st)
{
	pset_rows_release(&st->rows);
	free(st->factors);
	free(st->values);
	free(st->v);
	memset(st, 0, sizeof(*st));
}

/* ---- text ------------------------------------------------------------------ */

static const char *level_word(const struct setstats *st)
{
	switch (st->rows.level) {
	case PSET_IMAGES: return "image";
	case PSET_INSTRUCTIONS: return "instruction";
	default: return "procedure";
	}
}

static void header(const struct setstats *st, struct strbuf *sb)
{
	char label[40];
	uint64_t total = 0;

	for (size_t i = 0; i < st->n_sets; i++)
		total += st->rows.totals[i];
	strbuf_addf(sb, "Number of samples of type %s\n",
		    pset_event_label(st->sets, st->n_sets, st->rows.event, label, sizeof(label)));
	for (size_t i = 0; i < st->n_sets; i++) {
		strbuf_addf(sb, "%sset %zu = %" PRIu64, i % 4 ? "  " : "", i + 1, st->rows.totals[i]);
		if (i == 3 || (i == st->n_sets - 1 && st->n_sets <= 4))
			strbuf_addf(sb, "  TOTAL %" PRIu64, total);
		if (i % 4 == 3 || i == st->n_sets - 1)
			strbuf_addch(sb, '\n');
	}
	for (size_t i = 0; i < st->n_sets; i++)
		strbuf_addf(sb, "  set %zu: %s\n", i + 1, st->sets[i]->desc);
	for (size_t i = 0; i < st->rows.n_notes; i++)
		strbuf_addf(sb, "note: %s\n", st->rows.notes[i]);
}

static void subject(const struct setstats *st, struct strbuf *sb)
{
	const struct pset_row *p = st->rows.proc;
	char *name, *image;

	strbuf_addf(sb, "\nStatistics calculated using the sample counts for each %s",
		    level_word(st));
	if (p) {
		name = display_safe(p->name);
		image = display_safe(p->image);
		strbuf_addf(sb, " of %s in %s", name, image);
		free(name);
		free(image);
	}
	strbuf_addf(sb, " from %zu different sample set(s)\n", st->n_sets);
	if (st->rows.unaligned)
		strbuf_addf(sb, "note: %s: instructions cannot be aligned, procedure-level only\n",
			    st->rows.unaligned);
	if (st->norm == PSET_NORM_TOTAL)
		strbuf_addf(sb, "Counts are scaled by each set's total to the mean total (%.2f)\n",
			    st->n_sets ? st->total / (double)st->n_sets : 0);
	else if (st->norm == PSET_NORM_PERIOD)
		strbuf_addstr(sb, "Counts are scaled by each set's sampling period to the mean period\n");
}

struct widths {
	int num, pct;
};

static int fmt_width(double v)
{
	char buf[64];

	return snprintf(buf, sizeof(buf), "%.2f", v);
}

static struct widths stats_widths(const struct setstats *st, size_t n)
{
	struct widths w = { 7, 6 };

	for (size_t r = 0; r < n; r++) {
		const struct stats_summary *s = &st->v[r].s;
		double vals[] = { s->sum, s->mean, s->stddev, s->min, s->max };

		for (size_t k = 0; k < ARRAY_SIZE(vals); k++)
			if (fmt_width(vals[k]) > w.num)
				w.num = fmt_width(vals[k]);
	}
	return w;
}

static void row_line(const struct setstats *st, const struct setstats_row *r, struct widths w,
		     struct strbuf *sb)
{
	char *name = display_safe(r->row->name), *image = display_safe(r->row->image);

	strbuf_addf(sb, "%6.2f%% %*.2f %*.2f%% %3zu %*.2f %*.2f %*.2f %*.2f  ", r->s.range_pct,
		    w.num, r->s.sum, w.pct, r->sum_pct, r->n, w.num, r->s.mean, w.num, r->s.stddev,
		    w.num, r->s.min, w.num, r->s.max);
	if (st->rows.level == PSET_IMAGES)
		strbuf_addf(sb, "%s\n", image);
	else
		strbuf_addf(sb, "%s  %s\n", name, image);
	free(name);
	free(image);
}

void setstats_draw(const struct setstats *st, struct draw *d, size_t max_rows)
{
	size_t n = max_rows && max_rows < st->n ? max_rows : st->n;
	struct strbuf sb = STRBUF_INIT;
	struct widths w = stats_widths(st, n);

	header(st, &sb);
	subject(st, &sb);
	strbuf_addchars(&sb, '=', 93);
	strbuf_addf(&sb, "\n%7s %*s %*s %3s %*s %*s %*s %*s  %s\n", "range%", w.num, "sum",
		    w.pct + 1, "sum%", "N", w.num, "mean", w.num, "std-dev", w.num, "min", w.num,
		    "max", st->rows.level == PSET_IMAGES ? "image" : "procedure  image");
	for (size_t i = 0; i < n; i++)
		row_line(st, &st->v[i], w, &sb);
	if (!st->n && !st->n_hidden)
		strbuf_addstr(&sb, "(no samples)\n");
	else if (n < st->n)
		strbuf_addf(&sb, "(%zu more rows)\n", st->n - n);
	if (st->n_hidden)
		strbuf_addf(&sb, "(%zu rows below %.2f%% of the samples left out: --all shows them)\n",
			    st->n_hidden, st->min_sum_pct);
	draw_lines(d, STYLE_NORMAL, sb.buf);
	strbuf_release(&sb);
}

/* ---- JSON ------------------------------------------------------------------ */

static void json_sets(const struct setstats *st, struct json_writer *w)
{
	json_key(w, "sets");
	json_array_begin(w);
	for (size_t i = 0; i < st->n_sets; i++) {
		json_object_begin(w);
		json_key(w, "name");
		json_string(w, st->sets[i]->spec);
		json_key(w, "description");
		json_string(w, st->sets[i]->desc);
		json_key(w, "samples");
		json_u64(w, st->rows.totals[i]);
		json_key(w, "factor");
		json_double(w, st->factors[i], 10);
		json_object_end(w);
	}
	json_array_end(w);
}

static void json_row(const struct setstats *st, const struct setstats_row *r,
		     struct json_writer *w)
{
	const struct stats_summary *s = &r->s;

	json_object_begin(w);
	if (st->rows.level != PSET_IMAGES) {
		json_key(w, "procedure");
		json_string(w, r->row->name);
	}
	json_key(w, "image");
	json_string(w, r->row->image);
	json_key(w, "address");
	if (r->row->has_addr)
		json_hex(w, r->row->addr);
	else
		json_null(w);
	if (r->row->text) {
		json_key(w, "instruction");
		json_string(w, r->row->text);
	}
	json_key(w, "range_pct");
	json_double(w, s->range_pct, 8);
	json_key(w, "sum");
	json_double(w, s->sum, 12);
	json_key(w, "sum_pct");
	json_double(w, r->sum_pct, 8);
	json_key(w, "n");
	json_u64(w, r->n);
	json_key(w, "mean");
	json_double(w, s->mean, 12);
	json_key(w, "stddev");
	json_double(w, s->stddev, 12);
	json_key(w, "min");
	json_double(w, s->min, 12);
	json_key(w, "max");
	json_double(w, s->max, 12);
	json_key(w, "samples");
	json_array_begin(w);
	for (size_t i = 0; i < st->n_sets; i++)
		json_u64(w, r->row->counts[i]);
	json_array_end(w);
	json_key(w, "builds_differ");
	json_bool(w, r->row->builds_differ);
	json_object_end(w);
}

void setstats_json(const struct setstats *st, struct json_writer *w, size_t max_rows)
{
	size_t n = max_rows && max_rows < st->n ? max_rows : st->n;

	json_object_begin(w);
	json_key(w, "event");
	json_string(w, event_name(st->rows.event));
	json_key(w, "used");
	json_string(w, event_name(pset_event_used(st->sets, st->n_sets, st->rows.event)));
	json_key(w, "level");
	json_string(w, pset_level_name(st->rows.level));
	json_key(w, "normalize");
	json_string(w, pset_norm_name(st->norm));
	json_key(w, "procedure");
	json_string(w, st->rows.proc ? st->rows.proc->name : NULL);
	json_key(w, "unaligned");
	json_string(w, st->rows.unaligned);
	json_sets(st, w);
	json_key(w, "total");
	json_double(w, st->total, 12);
	json_key(w, "notes");
	json_array_begin(w);
	for (size_t i = 0; i < st->rows.n_notes; i++)
		json_string(w, st->rows.notes[i]);
	json_array_end(w);
	json_key(w, "rows");
	json_array_begin(w);
	for (size_t i = 0; i < n; i++)
		json_row(st, &st->v[i], w);
	json_array_end(w);
	pset_damage_json(st->sets, st->n_sets, w);
	json_object_end(w);
}
