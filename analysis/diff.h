/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/diff.h - two profiles compared, with noise told apart from
 * change: dcpidiff, and the engine of dcpi-tui's diff views (so that both
 * show the same rows, numbers and verdicts).  docs/diff.md explains the
 * statistics.
 *
 * Side A and side B are each one or more profile sets (pset.h: epochs, or
 * whole databases).  Rows are images, procedures, or the instructions of
 * one named procedure, matched across sides as pset.h says.
 *
 *   struct diff d;
 *   struct diff_opts o = DIFF_OPTS_INIT;            // o.procedure = "foo" ...
 *   struct pset *a[] = { &before }, *b[] = { &after };
 *   if (diff_build(&d, a, 1, b, 1, &o))
 *           ...;                                    // reported
 *   for (size_t i = 0; i < d.n_rows; i++) {
 *           struct diff_row r;
 *           diff_row_get(&d, i, &r);                // the ith row in the diff's order
 *           r.name, r.image, r.a, r.b, r.share_a, r.share_b, r.delta,
 *           r.ratio, r.significant, diff_verdict(&d, &r) ...
 *   }
 *   diff_swap(&d);          // B becomes A: same rows, recomputed, re-sorted
 *   diff_sort(&d, DIFF_SORT_ADDRESS);               // a listing order
 *   diff_release(&d);
 *
 * A row is kept as its source row's place in the order (4 bytes), a byte
 * of verdict and, when it was tested, its p- and q-values: its numbers are
 * computed again from its counts when it is read (a million rows of 176
 * bytes were most of a diff's memory).
 *
 * dcpi-tui, for two epochs of its database, in a job:
 *   struct diff_epochs *de = XNEW(struct diff_epochs);
 *   if (diff_epochs_open(de, db, seq_a, seq_b, &o, NULL)) ...;   // reported
 *   de->diff.rows ...                      // the result a view shows
 *   diff_epochs_release(de); free(de);
 * (or pset_open_epoch() each side and diff_build(): the psets must outlive
 * the diff).  Alignment: rows of
 * instructions carry has_addr/addr (the same build on both sides: aligned by
 * address); when the builds differ, d.unaligned says why and the only row is
 * the procedure.  Procedure rows of images whose builds differ between sets
 * have builds_differ set (matched by name), and d.rows_src.notes says which.
 *
 * Numbers.  Each side's count of a row is the sum over its sets; its share
 * is the mean over its sets of 100 * count / set total.  delta is
 * share_b - share_a, in percentage points.  ratio compares the normalised
 * values (opts.norm, pset.h): with TOTAL (the default) the shares, with
 * PERIOD the counts times the sampling periods (time or events: for runs
 * of the same work, where one function's growth should not make the
 * others look smaller).  ratio is +inf when the row has no samples in A,
 * 0 when it has none in B, NaN when neither side has samples.
 *
 * Verdicts.  One set per side: counts are Poisson; given the pair's sum, A's
 * count is binomial (DIFF_POISSON).  Several sets on both sides: Welch's
 * t-test on the sets' normalised values (DIFF_WELCH), the run-to-run
 * variance; one set against several: the prediction-interval t-test
 * (DIFF_PREDICTION).  A variance is never taken below what counting alone
 * gives (binomial under TOTAL, Poisson under PERIOD).  p-values are adjusted
 * over the rows that could be significant at all (tested: their values add
 * up to min_delta, and with one set per side they have enough samples for
 * the binomial test to reach alpha) with Benjamini-Hochberg (q).  A row is significant when q < alpha AND the change is big enough to
 * matter: |effect| >= min_delta points and the ratio beyond min_ratio
 * either way (effect = delta under TOTAL; under PERIOD, the change of the
 * normalised value in points of the mean set total).  Huge counts make tiny
 * differences "significant"; the minimum effect keeps them out.
 */
#ifndef DCPI_CORE_ANALYSIS_DIFF_H
#define DCPI_CORE_ANALYSIS_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/pset.h"
#include "present/draw.h"

#define DIFF_ALPHA 0.05      /* false discovery rate */
#define DIFF_MIN_RATIO 1.10  /* a change of at least 10% ... */
#define DIFF_MIN_DELTA 0.10  /* ... and of at least 0.1 percentage points */
#define DIFF_SHOW_MIN 0.10   /* text: noise rows below this share on both sides are hidden */

struct diff_opts {
	enum dcpi_event event;   /* EVENT__COUNT: pset_default_event() of all sets */
	enum pset_level level;   /* PSET_IMAGES or PSET_PROCEDURES (ignored with procedure) */
	const char *procedure;   /* non-NULL: the instructions of this procedure */
	enum pset_norm norm;     /* PSET_NORM_TOTAL or PSET_NORM_PERIOD */
	double alpha;            /* significance: BH-adjusted q below this */
	double min_ratio;        /* >= 1 */
	double min_delta;        /* points, >= 0 */
};

#define DIFF_OPTS_INIT \
	{ EVENT__COUNT, PSET_PROCEDURES, NULL, PSET_NORM_TOTAL, DIFF_ALPHA, DIFF_MIN_RATIO, DIFF_MIN_DELTA }

enum diff_method {
	DIFF_UNTESTED,    /* a side has no samples at all: nothing to compare with */
	DIFF_POISSON,     /* one set per side: conditional binomial test of Poisson counts */
	DIFF_WELCH,       /* several sets per side: Welch's t-test on the sets' values */
	DIFF_PREDICTION,  /* one set against several: prediction-interval t-test */
};

/* "none", "poisson", "welch", "prediction". */
const char *diff_method_name(enum diff_method m);

enum diff_status {
	DIFF_BOTH,        /* samples on both sides */
	DIFF_APPEARED,    /* samples in B only */
	DIFF_DISAPPEARED, /* samples in A only */
};

enum diff_sort {
	DIFF_SORT_VERDICT,  /* significant first by |effect|, then the rest by larger share */
	DIFF_SORT_ADDRESS,  /* image, then address (instruction listings) */
};

struct diff_row {
	const struct pset_row *src; /* names and per-set counts (d->rows_src), NULL for proc */
	const char *name;           /* procedure, image path (images), PROC+0xOFF (instructions) */
	const char *image;          /* image path */
	uint64_t addr;              /* procedure start, instruction address (has_addr) */
	bool has_addr;
	const char *text;           /* instruction text, or NULL */
	bool builds_differ;         /* the image is not the same binary in every set */
	uint64_t a, b;              /* samples, summed over each side's sets */
	double share_a, share_b;    /* percent of the side's total (mean over its sets) */
	double sd_a, sd_b;          /* std-dev of the sets' norm_a, norm_b (0 with one set) */
	double delta;               /* share_b - share_a, points */
	/*
	 * The values compared, in percent: the shares under TOTAL; under
	 * PERIOD samples times period in percent of the mean set total (a row
	 * whose time did not change has the same on both sides), so that
	 * effect = norm_b - norm_a and ratio = norm_b / norm_a in either mode.
	 */
	double norm_a, norm_b;
	double ratio;               /* B / A of the normalised values (see above) */
	double effect;              /* the change the threshold applies to, points */
	double p, q;                /* p-value; BH-adjusted (1 when not tested) */
	bool tested;                /* in the BH family: could be significant at all */
	enum diff_status status;
	bool significant;
};

struct diff {
	struct pset **sets;         /* every set (borrowed), as given: A's, then B's */
	size_t n_sets;
	size_t *side_a, *side_b;    /* indices into sets of each side (diff_swap exchanges them) */
	size_t n_a, n_b;
	struct diff_opts opts;
	enum dcpi_event event;
	enum diff_method method;
	uint64_t total_a, total_b;  /* samples of each side (all sets) */
	struct pset_rows rows_src;  /* the rows across sets (counts per set) */
	double *factors;            /* per set (pset_norm_factors), A's then B's */
	size_t n_rows;              /* read with diff_row_get() */
	size_t n_significant;
	size_t n_tested;            /* rows in the Benjamini-Hochberg family */
	/* with opts.procedure */
	struct diff_row proc;       /* the procedure as a whole (tested on its own) */
	bool has_proc;
	const char *unaligned;      /* why instructions are not compared, or NULL */
	enum diff_sort sort;        /* the rows' order */
	/* private */
	uint32_t *order;            /* the rows in order: their source rows (rows_src.rows) */
	unsigned char *flags;       /* per source row: tested, significant, shown */
	struct diff_tested *tested; /* p and q of the tested rows, by source row */
	uint32_t *name_rank;        /* per source row: its place by name, image and address */
};

/*
 * Compares sets a[0..na) with b[0..nb) (na, nb >= 1).  Returns 0, or -1
 * (reported): no such procedure, periods unknown for PERIOD, bad options.
 * Everything in d (rows, names) stays valid until diff_release.
 */
int diff_build(struct diff *d, struct pset *const *a, size_t na, struct pset *const *b,
	       size_t nb, const struct diff_opts *o);
void diff_release(struct diff *d);

/*
 * Epochs a and b of db (borrowed) compared, owning their sets: what a view
 * caches.  It must not move once open (the diff points at its sets).
 */
struct diff_epochs {
	struct pset a, b;
	struct diff diff;
};

int diff_epochs_open(struct diff_epochs *de, struct db *db, uint32_t a, uint32_t b,
		     const struct diff_opts *o, const struct epoch_view_opts *vo);
void diff_epochs_release(struct diff_epochs *de);

/* Exchanges the sides: every number and verdict is recomputed. */
void diff_swap(struct diff *d);
/*
 * Compares the same rows normalised otherwise (opts.norm): every number
 * and verdict is recomputed.  Returns 0, or -1 (reported, d unchanged)
 * when a period is unknown for PERIOD.
 */
int diff_renorm(struct diff *d, enum pset_norm norm);

void diff_sort(struct diff *d, enum diff_sort how);

/* Row i of the diff's order, every number of it (computed from its counts). */
void diff_row_get(const struct diff *d, size_t i, struct diff_row *out);
/* The source row (rows_src.rows[]) of row i. */
static inline size_t diff_row_src(const struct diff *d, size_t i)
{
	return d->order[i];
}
/* The row of source row src. */
void diff_row_of(const struct diff *d, size_t src, struct diff_row *out);
/* diff_row_shown() of source row src, as kept (no row computed). */
bool diff_src_shown(const struct diff *d, size_t src);

/*
 * The verdict word of a row: "changed", "appeared", "disappeared" when
 * significant; "~" (within noise), "~appeared", "~disappeared" when not;
 * "-" when untested.
 */
const char *diff_verdict(const struct diff *d, const struct diff_row *r);

/*
 * True if the text report shows r without --all: significant rows, and
 * those with a share of at least DIFF_SHOW_MIN on a side; instructions
 * (a listing) when they have samples on a side.
 */
bool diff_row_shown(const struct diff *d, const struct diff_row *r);

enum diff_print_flags {
	DIFF_PRINT_ALL = (1 << 0),  /* every row (--all) */
};

/*
 * Draws the report as dcpidiff prints it (present/draw.h, a line after
 * another): what is compared and how, then the rows (max_rows 0: all).
 */
void diff_draw(const struct diff *d, struct draw *dr, unsigned flags, size_t max_rows);

/* The ratio as dcpidiff writes it: "1.78x", "1234x", "new", "gone", "-". */
void diff_format_ratio(double ratio, char *buf, size_t size);

/* How a row's change looks: dim within noise, worse (a larger share) or better. */
enum style diff_row_style(const struct diff_row *r);

/* The same as JSON (dcpidiff --json), one object: every row (max_rows 0: all). */
struct json_writer;
void diff_json(const struct diff *d, struct json_writer *w, size_t max_rows);

#endif
