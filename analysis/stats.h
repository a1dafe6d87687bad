/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/stats.h - the statistics behind dcpistats and dcpidiff:
 * descriptive statistics across sample sets, and significance tests that
 * tell a real change from noise.
 *
 * Sampling model.  A profile's count for a procedure is (close to) a Poisson
 * variable; given the two totals, the count on side A out of the pair's
 * combined count is binomial with success probability TA/(TA+TB) when the
 * procedure's share did not change (the conditional test for two Poisson
 * rates).  That captures sampling noise only.  Runs also differ from each
 * other (page placement, frequency, other load), so with several sets per
 * side the run-to-run variance is measured instead (Welch's t-test on the
 * sets' shares).  Many rows are tested at once; p-values are adjusted with
 * Benjamini-Hochberg so that the share of false discoveries stays bounded.
 */
#ifndef DCPI_CORE_ANALYSIS_STATS_H
#define DCPI_CORE_ANALYSIS_STATS_H

#include <stddef.h>
#include <stdint.h>

/* One row across N sets (the DCPI paper, Figure 3). */
struct stats_summary {
	size_t n;
	double sum;
	double mean;
	double stddev;    /* sample standard deviation (n - 1); 0 if n < 2 */
	double min, max;
	double range_pct; /* (max - min) / sum * 100, the paper's range%; 0 if sum is 0 */
};

void stats_summarize(const double *x, size_t n, struct stats_summary *out);

/* Standard normal cumulative distribution. */
double stats_normal_cdf(double z);
/* The z with stats_normal_cdf(z) == p, for 0 < p < 1. */
double stats_normal_quantile(double p);
/* Student's t cumulative distribution with df degrees of freedom (df > 0). */
double stats_t_cdf(double t, double df);
/* Regularised incomplete beta function I_x(a, b). */
double stats_incbeta(double a, double b, double x);

/*
 * Two-sided p-value of observing `a` successes out of `n` trials when the
 * success probability is p0 (exact binomial: the probability of outcomes no
 * more likely than `a`; for large n a normal approximation with continuity
 * correction).
 */
double stats_binomial_test(uint64_t a, uint64_t n, double p0);

/*
 * Two Poisson counts a (of total ta) and b (of total tb): p-value that the
 * rates a/ta and b/tb are equal (conditional binomial test).
 */
double stats_poisson_rates_test(uint64_t a, uint64_t ta, uint64_t b, uint64_t tb);

/*
 * Confidence interval (level, e.g. 0.95) of the rate ratio (b/tb)/(a/ta) by
 * the log-normal approximation, with 0.5 added to zero counts.
 */
void stats_rate_ratio_ci(uint64_t a, uint64_t ta, uint64_t b, uint64_t tb, double level,
			 double *lo, double *hi);

/*
 * Welch's unequal-variance t-test of two samples (each n >= 2): two-sided
 * p-value that their means are equal.  Returns 1 when both variances are 0
 * and the means are equal, 0 when the variances are 0 and the means differ.
 */
double stats_welch_test(const double *x, size_t nx, const double *y, size_t ny);

/*
 * Welch's test from summary statistics: means mx, my and sample variances
 * vx, vy (n - 1 denominators) of samples of sizes nx, ny (each >= 2).
 * stats_welch_test() is this on the samples' moments.  Same returns.
 */
double stats_welch_test_moments(double mx, double vx, size_t nx, double my, double vy,
				size_t ny);

/*
 * Whether a single new observation x belongs with a sample of mean my,
 * sample variance vy and size ny >= 2 (the prediction-interval t-test:
 * t = (x - my) / sqrt(vy * (1 + 1/ny)), ny - 1 degrees of freedom).
 * Two-sided p-value; 1 when ny < 2; with vy == 0, 1 if x == my else 0.
 */
double stats_prediction_test(double x, double my, double vy, size_t ny);

/*
 * Benjamini-Hochberg: q[i] = the adjusted p-value of p[i] (the smallest false
 * discovery rate at which row i would be called significant).  p and q may
 * be the same array.
 */
void stats_bh_adjust(const double *p, size_t n, double *q);

#endif
