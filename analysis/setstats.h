/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/setstats.h - how much each procedure (image, instruction)
 * varies across sets of samples: dcpistats, as Figure 3 of the DCPI paper
 * (Anderson et al., "Continuous Profiling: Where Have All the Cycles
 * Gone?", SOSP 1997).
 *
 *   struct setstats st;
 *   struct setstats_opts o = SETSTATS_OPTS_INIT;
 *   if (setstats_build(&st, sets, n, &o))          // sets: pset.h
 *           ...;                                   // reported
 *   for (size_t r = 0; r < st.n; r++)
 *           st.v[r].row->name, st.v[r].s.range_pct, st.v[r].s.mean, ...
 *   setstats_release(&st);
 *
 * For every row, the values are its samples in each set, scaled as
 * o.norm says (pset.h: none, by the sets' totals, by their sampling
 * periods).  A set without samples in the row counts as 0 in the mean,
 * std-dev, min and max (N says in how many sets the row has samples).
 * range% is (max - min) / sum, the paper's "normalized range"; sum% is sum
 * over the (scaled) total of all sets.  Rows are sorted by range%, then by
 * sum, both descending, then by name.
 */
#ifndef DCPI_CORE_ANALYSIS_SETSTATS_H
#define DCPI_CORE_ANALYSIS_SETSTATS_H

#include <stddef.h>

#include "analysis/pset.h"
#include "analysis/stats.h"

struct setstats_opts {
	enum dcpi_event event;      /* EVENT__COUNT: pset_default_event() */
	enum pset_level level;      /* images, procedures (default) or instructions */
	const char *procedure;      /* non-NULL: the instructions of this procedure */
	enum pset_norm norm;        /* PSET_NORM_NONE (default): counts as recorded */
	double min_sum_pct;         /* rows below this sum% are left out (counted in
				       n_hidden); 0 keeps all.  Default 0.1: a row of
				       one or two samples always has range% 100 and
				       would otherwise head the report */
};

#define SETSTATS_OPTS_INIT { EVENT__COUNT, PSET_PROCEDURES, NULL, PSET_NORM_NONE, 0.1 }

struct setstats_row {
	const struct pset_row *row; /* names and raw counts (in rows) */
	const double *values;       /* the scaled value per set */
	struct stats_summary s;     /* over values, one per set */
	size_t n;                   /* sets with samples in the row */
	double sum_pct;             /* s.sum over total, in percent */
};

struct setstats {
	struct pset *const *sets;   /* borrowed */
	size_t n_sets;
	enum pset_norm norm;
	struct pset_rows rows;
	double *factors;            /* per set: value = count * factor */
	double total;               /* the scaled totals of all sets, summed */
	struct setstats_row *v;     /* sorted (see above) */
	size_t n;
	size_t n_hidden;            /* rows left out by min_sum_pct */
	double min_sum_pct;
	/* private */
	double *values;
};

/* Returns 0, or -1 (reported): unknown procedure, period unknown for PERIOD. */
int setstats_build(struct setstats *st, struct pset *const *sets, size_t n,
		   const struct setstats_opts *o);
void setstats_release(struct setstats *st);

/*
 * Draws the report as dcpistats prints it (present/draw.h, a line after
 * another; Figure 3: the sets' totals, then range%, sum, sum%, N, mean,
 * std-dev, min, max, name, image per row).  max_rows 0 means all.
 */
struct draw;
void setstats_draw(const struct setstats *st, struct draw *d, size_t max_rows);

/* The same as JSON (dcpistats --json, with every set's value per row): one object. */
struct json_writer;
void setstats_json(const struct setstats *st, struct json_writer *w, size_t max_rows);

#endif
