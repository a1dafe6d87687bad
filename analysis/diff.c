/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/diff.c - two sides of profile sets compared row by row,
 * with a significance verdict per row (dcpidiff, dcpi-tui's diff views).
 */
#include "config.h"

#include "analysis/diff.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats.h"
#include "core/die.h"
#include "core/radix.h"
#include "core/strrank.h"
#include "core/xalloc.h"

/* What a row is, kept per source row (the rest is computed from its counts). */
enum {
	ROW_TESTED = 1 << 0,       /* in the Benjamini-Hochberg family */
	ROW_SIGNIFICANT = 1 << 1,
	ROW_SHOWN = 1 << 2,        /* diff_row_shown() */
};

/* The p- and q-value of a tested row. */
struct diff_tested {
	uint32_t src;
	double p, q;
};

static const char *const method_names[] = { "none", "poisson", "welch", "prediction" };

const char *diff_method_name(enum diff_method m)
{
	return (unsigned)m < ARRAY_SIZE(method_names) ? method_names[m] : "?";
}

/* ---- one row ------------------------------------------------------------- */

/* One side of one row: moments over the side's sets that have samples at all. */
struct side_stats {
	uint64_t count;        /* summed over every set of the side */
	size_t n;              /* sets with a nonzero total */
	double share, share_sd;
	double value, value_var, mean_factor;
	double single_value;   /* the value of the side's only set (n == 1) */
	double single_factor;
};

/* Set i's share (percent) and normalised value of row; false if the set is empty. */
static bool set_point(const struct diff *d, const struct pset_row *row, size_t i, double *share,
		      double *value)
{
	uint64_t total = d->rows_src.totals[i];

	if (!total)
		return false;
	*share = 100.0 * (double)row->counts[i] / (double)total;
	*value = (double)row->counts[i] * d->factors[i];
	return true;
}

/* Sample variances (two passes, for precision with large counts). */
static void side_spread(const struct diff *d, const struct pset_row *row, const size_t *idx,
			size_t n_idx, struct side_stats *out)
{
	double s2 = 0, v2 = 0, share, value, n = (double)out->n;

	for (size_t k = 0; k < n_idx; k++) {
		if (!set_point(d, row, idx[k], &share, &value))
			continue;
		s2 += (share - out->share) * (share - out->share);
		v2 += (value - out->value) * (value - out->value);
	}
	out->share_sd = sqrt(s2 / (n - 1));
	out->value_var = v2 / (n - 1);
}

static void side_stats(const struct diff *d, const struct pset_row *row, const size_t *idx,
		       size_t n_idx, struct side_stats *out)
{
	double s_sum = 0, v_sum = 0, f_sum = 0, share, value;

	memset(out, 0, sizeof(*out));
	for (size_t k = 0; k < n_idx; k++) {
		size_t i = idx[k];

		out->count += row->counts[i];
		if (!set_point(d, row, i, &share, &value))
			continue;
		s_sum += share;
		v_sum += value;
		f_sum += d->factors[i];
		out->single_value = value;
		out->single_factor = d->factors[i];
		out->n++;
	}
	if (!out->n)
		return;
	out->share = s_sum / (double)out->n;
	out->value = v_sum / (double)out->n;
	out->mean_factor = f_sum / (double)out->n;
	if (out->n > 1)
		side_spread(d, row, idx, n_idx, out);
}

/*
 * The variance of a side's values, at least what counting alone gives:
 * Poisson (value * factor), binomial under TOTAL (shares of a fixed total).
 */
static double floored_var(const struct diff *d, const struct side_stats *s)
{
	double counting = s->value * s->mean_factor;

	if (d->opts.norm == PSET_NORM_TOTAL)
		counting *= fmax(0, 1 - s->share / 100);
	return fmax(s->value_var, counting);
}

/*
 * Whether a row can be significant at all, whatever its p-value: its
 * change cannot reach min_delta when the two sides' values add up to less;
 * with one set per side (a discrete test), a row of few samples cannot
 * reach alpha even with every sample on one side.  Rows that cannot are
 * left out of the Benjamini-Hochberg family (Tarone's idea, as Gilbert
 * used it for the FDR), which keeps the tail of one-sample rows from
 * diluting the real changes.
 */
static bool testable(const struct diff *d, const struct side_stats *a, const struct side_stats *b,
		     double unit)
{
	if (d->method == DIFF_UNTESTED || unit <= 0)
		return false;
	if (100.0 * (a->value + b->value) / unit < d->opts.min_delta)
		return false;
	if (d->method == DIFF_POISSON) {
		uint64_t n = a->count + b->count;
		double p0 = b->single_factor / (a->single_factor + b->single_factor);

		/* beyond 200 samples an all-on-one-side split is always extreme enough */
		return n > 200 || fmin(stats_binomial_test(0, n, p0),
				       stats_binomial_test(n, n, p0)) < d->opts.alpha;
	}
	return true;
}

static double row_p(const struct diff *d, const struct side_stats *a, const struct side_stats *b)
{
	switch (d->method) {
	case DIFF_POISSON:
		return stats_binomial_test(a->count, a->count + b->count,
					   b->single_factor / (a->single_factor + b->single_factor));
	case DIFF_WELCH:
		return stats_welch_test_moments(a->value, floored_var(d, a), a->n, b->value,
						floored_var(d, b), b->n);
	case DIFF_PREDICTION: {
		const struct side_stats *one = a->n == 1 ? a : b, *many = a->n == 1 ? b : a;
		double var = fmax(floored_var(d, many), one->single_value * one->single_factor);

		return stats_prediction_test(one->single_value, many->value, var, many->n);
	}
	default:
		return 1;
	}
}

/* The mean total over all sets: the unit of effect. */
static double mean_total(const struct diff *d)
{
	double sum = 0;

	for (size_t i = 0; i < d->n_sets; i++)
		sum += (double)d->rows_src.totals[i];
	return d->n_sets ? sum / (double)d->n_sets : 0;
}

/*
 * The numbers of source row src (NULL: rows_src.proc); its p-value if it
 * is tested: computed (test), or as kept (compute() found them).
 */
static void fill_row(const struct diff *d, struct diff_row *r, const struct pset_row *src,
		     bool test, double unit)
{
	struct side_stats a, b;

	memset(r, 0, sizeof(*r));
	r->src = src;
	r->name = src->name;
	r->image = src->image;
	r->addr = src->addr;
	r->has_addr = src->has_addr;
	r->text = src->text;
	r->builds_differ = src->builds_differ;
	side_stats(d, src, d->side_a, d->n_a, &a);
	side_stats(d, src, d->side_b, d->n_b, &b);
	r->a = a.count;
	r->b = b.count;
	r->share_a = a.share;
	r->share_b = b.share;
	r->sd_a = a.share_sd;
	r->sd_b = b.share_sd;
	r->delta = b.share - a.share;
	r->ratio = a.value > 0 ? b.value / a.value : b.value > 0 ? INFINITY : NAN;
	if (d->opts.norm == PSET_NORM_PERIOD && unit > 0) {
		r->norm_a = 100.0 * a.value / unit;
		r->norm_b = 100.0 * b.value / unit;
		r->sd_a = 100.0 * sqrt(a.value_var) / unit;
		r->sd_b = 100.0 * sqrt(b.value_var) / unit;
		r->effect = r->norm_b - r->norm_a;
	} else {
		r->norm_a = r->share_a;
		r->norm_b = r->share_b;
		r->effect = r->delta;
	}
	r->status = !r->a && r->b ? DIFF_APPEARED : r->a && !r->b ? DIFF_DISAPPEARED : DIFF_BOTH;
	r->p = r->q = 1;
	if (test) {
		r->tested = testable(d, &a, &b, unit);
		/* a p-value is shown for the rows tested only (a million rows are mostly not) */
		if (r->tested || src == d->rows_src.proc)
			r->p = r->q = row_p(d, &a, &b);
	}
}

static bool big_enough(const struct diff *d, const struct diff_row *r)
{
	double m = d->opts.min_ratio;

	return fabs(r->effect) >= d->opts.min_delta && (r->ratio >= m || r->ratio <= 1 / m);
}

static void judge(const struct diff *d, struct diff_row *r)
{
	r->significant = r->tested && r->q < d->opts.alpha && big_enough(d, r);
}

/* ---- all rows --------------------------------------------------------------- */

static size_t nonempty(const struct diff *d, const size_t *idx, size_t n, uint64_t *total)
{
	size_t k = 0;

	*total = 0;
	for (size_t i = 0; i < n; i++) {
		*total += d->rows_src.totals[idx[i]];
		k += d->rows_src.totals[idx[i]] != 0;
	}
	return k;
}

static void choose_method(struct diff *d)
{
	size_t ka = nonempty(d, d->side_a, d->n_a, &d->total_a);
	size_t kb = nonempty(d, d->side_b, d->n_b, &d->total_b);

	if (!ka || !kb)
		d->method = DIFF_UNTESTED;
	else if (ka == 1 && kb == 1)
		d->method = DIFF_POISSON;
	else if (ka >= 2 && kb >= 2)
		d->method = DIFF_WELCH;
	else
		d->method = DIFF_PREDICTION;
}

static int cmp_tested(const void *a, const void *b)
{
	const struct diff_tested *x = a, *y = b;

	return (x->src > y->src) - (x->src < y->src);
}

/* The p- and q-values kept for tested source row src. */
static const struct diff_tested *tested_of(const struct diff *d, size_t src)
{
	struct diff_tested key = { (uint32_t)src, 0, 0 };

	return bsearch(&key, d->tested, d->n_tested, sizeof(key), cmp_tested);
}

void diff_row_of(const struct diff *d, size_t src, struct diff_row *out)
{
	fill_row(d, out, &d->rows_src.rows[src], false, mean_total(d));
	out->tested = d->flags[src] & ROW_TESTED;
	out->significant = d->flags[src] & ROW_SIGNIFICANT;
	if (out->tested) {
		const struct diff_tested *t = tested_of(d, src);

		out->p = t->p;
		out->q = t->q;
	}
}

void diff_row_get(const struct diff *d, size_t i, struct diff_row *out)
{
	diff_row_of(d, d->order[i], out);
}

/*
 * Every row's verdict: each row's numbers computed once (the tested ones'
 * p-values), q-values over the family, and what is kept of each row: 4
 * bytes of order and a byte of flags (the numbers are computed again from
 * the counts when a row is read), the p- and q-values of the tested rows.
 */
static void compute(struct diff *d)
{
	size_t n = d->rows_src.n_rows, alloc = 0;
	double unit = mean_total(d), *q;

	choose_method(d);
	free(d->tested);
	d->tested = NULL;
	d->n_tested = 0;
	d->n_significant = 0;
	if (!d->flags)
		d->flags = xcalloc(n + 1, sizeof(*d->flags));
	for (size_t i = 0; i < n; i++) {
		struct diff_row r;

		fill_row(d, &r, &d->rows_src.rows[i], true, unit);
		d->flags[i] = r.tested ? ROW_TESTED : 0;
		if (r.tested) {
			ALLOC_GROW(d->tested, d->n_tested + 1, alloc);
			d->tested[d->n_tested++] = (struct diff_tested){ (uint32_t)i, r.p, 1 };
		}
	}
	q = xcalloc(d->n_tested + 1, sizeof(*q));
	for (size_t k = 0; k < d->n_tested; k++)
		q[k] = d->tested[k].p;
	stats_bh_adjust(q, d->n_tested, q);
	for (size_t k = 0; k < d->n_tested; k++)
		d->tested[k].q = q[k];
	free(q);
	for (size_t i = 0; i < n; i++) {
		struct diff_row r;

		diff_row_of(d, i, &r);
		judge(d, &r);
		d->flags[i] |= (r.significant ? ROW_SIGNIFICANT : 0) |
			       (diff_row_shown(d, &r) ? ROW_SHOWN : 0);
		d->n_significant += r.significant;
	}
	if (d->has_proc) {
		fill_row(d, &d->proc, d->rows_src.proc, true, unit);
		judge(d, &d->proc);
	}
	diff_sort(d, d->sort);
}

static int check_opts(const struct diff_opts *o)
{
	if (!(o->alpha > 0 && o->alpha <= 1))
		return errorf("the significance level must be in (0, 1]");
	if (!(o->min_ratio >= 1))
		return errorf("the minimum ratio must be at least 1");
	if (!(o->min_delta >= 0))
		return errorf("the minimum delta must not be negative");
	if (o->norm != PSET_NORM_TOTAL && o->norm != PSET_NORM_PERIOD)
		return errorf("dcpidiff normalises by total or by period");
	return 0;
}

static void init_sides(struct diff *d, struct pset *const *a, size_t na, struct pset *const *b,
		       size_t nb)
{
	d->n_sets = na + nb;
	d->sets = xcalloc(d->n_sets, sizeof(*d->sets));
	d->side_a = xcalloc(na, sizeof(*d->side_a));
	d->side_b = xcalloc(nb, sizeof(*d->side_b));
	d->n_a = na;
	d->n_b = nb;
	for (size_t i = 0; i < na; i++) {
		d->sets[i] = a[i];
		d->side_a[i] = i;
	}
	for (size_t i = 0; i < nb; i++) {
		d->sets[na + i] = b[i];
		d->side_b[i] = na + i;
	}
}

int diff_build(struct diff *d, struct pset *const *a, size_t na, struct pset *const *b,
	       size_t nb, const struct diff_opts *o)
{
	static const struct diff_opts defaults = DIFF_OPTS_INIT;
	uint64_t *totals;
	int r;

	memset(d, 0, sizeof(*d));
	if (!o)
		o = &defaults;
	if (!na || !nb)
		return errorf("a diff needs at least one set on each side");
	if (check_opts(o))
		return -1;
	d->opts = *o;
	init_sides(d, a, na, b, nb);
	d->event = (unsigned)o->event < EVENT__COUNT ? o->event
						      : pset_default_event(d->sets, d->n_sets);
	/* the normalisation first: a period unknown fails before a million rows are made */
	totals = xcalloc(d->n_sets, sizeof(*totals));
	for (size_t i = 0; i < d->n_sets; i++)
		totals[i] = pset_total(d->sets[i], d->event);
	d->factors = xcalloc(d->n_sets, sizeof(*d->factors));
	r = pset_norm_factors(d->sets, d->n_sets, d->event, o->norm, totals, d->factors);
	free(totals);
	if (!r)
		r = o->procedure ? pset_rows_build_proc(&d->rows_src, d->sets, d->n_sets, d->event,
							o->procedure)
				 : pset_rows_build(&d->rows_src, d->sets, d->n_sets, d->event, o->level);
	if (r) {
		diff_release(d);
		return -1;
	}
	d->has_proc = d->rows_src.proc != NULL;
	d->unaligned = d->rows_src.unaligned;
	d->n_rows = d->rows_src.n_rows;
	d->order = xcalloc(d->n_rows + 1, sizeof(*d->order));
	for (size_t i = 0; i < d->n_rows; i++)
		d->order[i] = (uint32_t)i;
	d->sort = o->procedure && !d->unaligned ? DIFF_SORT_ADDRESS : DIFF_SORT_VERDICT;
	compute(d);
	return 0;
}

void diff_release(struct diff *d)
{
	pset_rows_release(&d->rows_src);
	free(d->sets);
	free(d->side_a);
	free(d->side_b);
	free(d->factors);
	free(d->order);
	free(d->flags);
	free(d->tested);
	free(d->name_rank);
	memset(d, 0, sizeof(*d));
}

int diff_epochs_open(struct diff_epochs *de, struct db *db, uint32_t a, uint32_t b,
		     const struct diff_opts *o, const struct epoch_view_opts *vo)
{
	struct pset *pa, *pb;

	memset(de, 0, sizeof(*de));
	if (pset_open_epoch(&de->a, db, a, vo))
		return -1;
	if (pset_open_epoch(&de->b, db, b, vo)) {
		pset_release(&de->a);
		return -1;
	}
	pa = &de->a;
	pb = &de->b;
	if (diff_build(&de->diff, &pa, 1, &pb, 1, o)) {
		pset_release(&de->a);
		pset_release(&de->b);
		return -1;
	}
	return 0;
}

void diff_epochs_release(struct diff_epochs *de)
{
	diff_release(&de->diff);
	pset_release(&de->a);
	pset_release(&de->b);
}

int diff_renorm(struct diff *d, enum pset_norm norm)
{
	double *f = xcalloc(d->n_sets ? d->n_sets : 1, sizeof(*f));

	if (norm != PSET_NORM_TOTAL && norm != PSET_NORM_PERIOD) {
		free(f);
		return errorf("dcpidiff normalises by total or by period");
	}
	if (pset_norm_factors(d->sets, d->n_sets, d->event, norm, d->rows_src.totals, f)) {
		free(f);
		return -1;
	}
	free(d->factors);
	d->factors = f;
	d->opts.norm = norm;
	compute(d);
	return 0;
}

void diff_swap(struct diff *d)
{
	size_t *t = d->side_a, n = d->n_a;

	d->side_a = d->side_b;
	d->n_a = d->n_b;
	d->side_b = t;
	d->n_b = n;
	compute(d);
}

/* ---- order ---------------------------------------------------------------- */

/* Sorts v (source rows) by key(d, row), stably; keys in items (room for n), tmp for the sort. */
static void sort_src(const struct diff *d, uint32_t *v, size_t n, struct radix_item *items,
		     struct radix_item *tmp, uint64_t (*key)(const struct diff *d, size_t src,
							    const void *arg),
		     const void *arg, bool desc)
{
	for (size_t k = 0; k < n; k++)
		items[k] = (struct radix_item){ key(d, v[k], arg), v[k] };
	radix_sort_scratch(items, n, desc, tmp);
	for (size_t k = 0; k < n; k++)
		v[k] = items[k].i;
}

static uint64_t key_addr(const struct diff *d, size_t src, const void *arg)
{
	return d->rows_src.rows[src].addr;
}

static uint64_t key_rank(const struct diff *d, size_t src, const void *arg)
{
	return ((const uint32_t *)arg)[src];
}

static uint64_t key_path(const struct diff *d, size_t src, const void *arg)
{
	return ((const uint32_t *)arg)[d->rows_src.rows[src].path];
}

/*
 * Each source row's place by name, image and address, found once (the
 * verdict's last key): ranks of the names and of the paths (core/
 * strrank.h), then radix sorts, the least significant key first; rows
 * alike in all three keep their order.
 */
static void rank_names(struct diff *d)
{
	size_t n = d->rows_src.n_rows, n_paths = pset_rows_n_paths(&d->rows_src);
	uint32_t *v, *names, *paths;
	const char **s;
	struct radix_item *items, *tmp;

	if (d->name_rank)
		return;
	s = xcalloc((n > n_paths ? n : n_paths) + 1, sizeof(*s));
	names = xcalloc(n + 1, sizeof(*names));
	paths = xcalloc(n_paths + 1, sizeof(*paths));
	for (size_t i = 0; i < n; i++)
		s[i] = d->rows_src.rows[i].name;
	str_ranks(s, n, names);
	for (size_t i = 0; i < n_paths; i++)
		s[i] = pset_rows_path(&d->rows_src, (uint32_t)i);
	str_ranks(s, n_paths, paths);
	free(s);
	v = xcalloc(n + 1, sizeof(*v));
	items = xcalloc(n + 1, sizeof(*items));
	tmp = xcalloc(n + 1, sizeof(*tmp));
	for (size_t i = 0; i < n; i++)
		v[i] = (uint32_t)i;
	sort_src(d, v, n, items, tmp, key_addr, NULL, false);
	sort_src(d, v, n, items, tmp, key_path, paths, false);
	sort_src(d, v, n, items, tmp, key_rank, names, false);
	free(items);
	free(tmp);
	free(names);
	free(paths);
	/* the place of each row in that order */
	d->name_rank = xcalloc(n + 1, sizeof(*d->name_rank));
	for (size_t k = 0; k < n; k++)
		d->name_rank[v[k]] = (uint32_t)k;
	free(v);
}

/* What orders a row by verdict: significant first, by |effect|, else by the larger share. */
static uint64_t key_magnitude(const struct diff *d, size_t src, const void *arg)
{
	struct diff_row r;

	diff_row_of(d, src, &r);
	return radix_key_double(r.significant ? fabs(r.effect) : fmax(r.share_a, r.share_b));
}

static uint64_t key_significant(const struct diff *d, size_t src, const void *arg)
{
	return (d->flags[src] & ROW_SIGNIFICANT) != 0;
}

/*
 * Sorts the rows by verdict: by name rank, then by magnitude, descending,
 * then significant first, each a stable radix sort of keys read once.
 */
static void sort_verdict(struct diff *d)
{
	size_t n = d->n_rows;
	struct radix_item *items = xcalloc(n + 1, sizeof(*items)), *tmp = xcalloc(n + 1, sizeof(*tmp));

	rank_names(d);
	for (size_t i = 0; i < n; i++)
		d->order[d->name_rank[i]] = (uint32_t)i;
	sort_src(d, d->order, n, items, tmp, key_magnitude, NULL, true);
	sort_src(d, d->order, n, items, tmp, key_significant, NULL, true);
	free(items);
	free(tmp);
}

static int cmp_address(const void *a, const void *b, void *ctx)
{
	const struct pset_row *rows = ctx;
	const struct pset_row *x = &rows[*(const uint32_t *)a], *y = &rows[*(const uint32_t *)b];
	int r;

	if ((r = strcmp(x->image, y->image)))
		return r;
	if (x->has_addr != y->has_addr)
		return x->has_addr ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if ((r = strcmp(x->name, y->name)))
		return r;
	return (*(const uint32_t *)a > *(const uint32_t *)b) - (*(const uint32_t *)a < *(const uint32_t *)b);
}

void diff_sort(struct diff *d, enum diff_sort how)
{
	d->sort = how;
	if (d->n_rows < 2)
		return;
	if (how == DIFF_SORT_ADDRESS)
		qsort_r(d->order, d->n_rows, sizeof(*d->order), cmp_address, d->rows_src.rows);
	else
		sort_verdict(d);
}

const char *diff_verdict(const struct diff *d, const struct diff_row *r)
{
	static const char *const sig[] = { "changed", "appeared", "disappeared" };
	static const char *const noise[] = { "~", "~appeared", "~disappeared" };

	if (d->method == DIFF_UNTESTED)
		return "-";
	return r->significant ? sig[r->status] : noise[r->status];
}

bool diff_src_shown(const struct diff *d, size_t src)
{
	return d->flags[src] & ROW_SHOWN;
}

bool diff_row_shown(const struct diff *d, const struct diff_row *r)
{
	if (d->rows_src.level == PSET_INSTRUCTIONS)
		return r->significant || r->a || r->b;
	return r->significant || fmax(r->share_a, r->share_b) >= DIFF_SHOW_MIN;
}
