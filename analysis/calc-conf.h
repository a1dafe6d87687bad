/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-conf.h - the confidence of an execution count: its
 * relative error, and the one function that turns an error into a level
 * (docs/analysis.md, "Confidence").
 *
 * Every estimator says how far off its count may be: a relative error,
 * meant as one standard deviation of the count over the truth (a count
 * N with error e is within N (1 +- 2e) of the truth about 19 times in
 * 20).  Where the error is statistical (Poisson counts, the pairs of a
 * measured loop, the bursts' shares) it follows from the counts; where
 * it is the processor model's (estimates from samples over the
 * schedule's M) it is what the accuracy harness measured for estimates
 * of that kind (tests/bench/calc-accuracy.sh, against callgrind).
 *
 * An error has two parts, carried apart because the second is shared by
 * every count of a procedure: err, independent of the others, and the
 * share of the count that rests on the cycles a sample stands for (the
 * period: estimates from samples rest on it wholly, counts measured from
 * registers or from matched windows not at all).  The period's own error
 * (struct calc period_error) enters once, in calc_err_total().
 * Propagation (freq.h freq_propagate) and the flow correction carry both
 * parts; only calc_conf_of() makes a level of them.
 *
 *   double e = calc_err_total(err, period_share, c->period_error);
 *   enum calc_conf level = calc_conf_of(e);
 */
#ifndef DCPI_ANALYSIS_CALC_CONF_H
#define DCPI_ANALYSIS_CALC_CONF_H

#include "analysis/calc.h"
#include "analysis/freq.h"

/*
 * The largest errors of each level, the levels' promise (measured over
 * the accuracy harness' suite and held-out programs, docs/analysis.md):
 * at least 95% of the samples marked high are within 15% of the truth,
 * at least 95% of those more than 15% off are marked low.
 */
#define CALC_ERR_HIGH 0.05
#define CALC_ERR_MEDIUM 0.10

/*
 * The error of a count nothing bounds (a value propagated below zero, a
 * guess): above every level's (propagation's, freq.h).
 */
#define CALC_ERR_UNBOUNDED FREQ_ERR_UNBOUNDED

/*
 * The level of a count with relative error e: high up to CALC_ERR_HIGH,
 * medium up to CALC_ERR_MEDIUM, low above; CALC_CONF_NONE for no error
 * (e < 0 or not a number: no count).  The only place a level is set.
 */
enum calc_conf calc_conf_of(double e);

/*
 * A count's whole relative error: its own, err, and period_share of the
 * period's error, added as independent deviations; at most
 * CALC_ERR_UNBOUNDED.
 */
double calc_err_total(double err, double period_share, double period_error);

/* sqrt(a^2 + b^2): two independent relative errors of one count. */
double calc_err_add(double a, double b);

#endif
