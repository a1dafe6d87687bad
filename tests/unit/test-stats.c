/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of analysis/stats: distributions, tests, BH, summaries. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include "analysis/stats.h"

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

static void summary_figure3_row(void **state)
{
	/* smooth_ in the DCPI paper's Figure 3 is summarised from 8 sets; check the
	 * definitions on a small known set instead. */
	double x[] = { 38155, 88075, 50000, 40000 };
	struct stats_summary s;

	stats_summarize(x, 4, &s);
	assert_int_equal(s.n, 4);
	assert_near(s.sum, 216230, 1e-9);
	assert_near(s.mean, 54057.5, 1e-9);
	assert_near(s.min, 38155, 0);
	assert_near(s.max, 88075, 0);
	assert_near(s.range_pct, (88075.0 - 38155.0) / 216230.0 * 100, 1e-9);
	assert_near(s.stddev, 23267.7, 0.5);
	stats_summarize(x, 1, &s);
	assert_near(s.stddev, 0, 0);
	stats_summarize(x, 0, &s);
	assert_int_equal(s.n, 0);
}

static void distributions(void **state)
{
	assert_near(stats_normal_cdf(0), 0.5, 1e-12);
	assert_near(stats_normal_cdf(1.959963985), 0.975, 1e-9);
	assert_near(stats_normal_quantile(0.975), 1.959963985, 1e-8);
	assert_near(stats_normal_quantile(0.001), -3.090232306, 1e-8);
	assert_near(stats_t_cdf(2.0, 10), 0.963305983, 1e-8);
	assert_near(stats_t_cdf(-2.228138852, 10), 0.025, 1e-8);
	assert_near(stats_t_cdf(0, 3), 0.5, 1e-12);
	assert_near(stats_incbeta(2, 3, 0.4), 0.5248, 1e-12);
	assert_near(stats_incbeta(0.5, 0.5, 0.5), 0.5, 1e-12);
}

static void binomial_and_poisson(void **state)
{
	/* P(X <= 2) + P(X >= 8) for Bin(10, 1/2) = 112/1024. */
	assert_near(stats_binomial_test(2, 10, 0.5), 112.0 / 1024, 1e-12);
	assert_near(stats_binomial_test(5, 10, 0.5), 1.0, 1e-12);
	assert_near(stats_binomial_test(0, 0, 0.3), 1.0, 0);
	/* Large n: the normal approximation agrees with the symmetric case. */
	assert_near(stats_binomial_test(500000, 1000000, 0.5), 1.0, 1e-12);
	assert_true(stats_binomial_test(504000, 1000000, 0.5) < 1e-12);
	/* Equal rates are not significant; doubled rates are. */
	assert_true(stats_poisson_rates_test(1000, 100000, 1010, 100000) > 0.5);
	assert_true(stats_poisson_rates_test(1000, 100000, 2000, 100000) < 1e-20);
	/* Rates, not counts: twice the samples overall, same share. */
	assert_true(stats_poisson_rates_test(1000, 100000, 2000, 200000) > 0.9);
}

static void rate_ratio_interval(void **state)
{
	double lo, hi;

	stats_rate_ratio_ci(1000, 100000, 2000, 100000, 0.95, &lo, &hi);
	assert_true(lo > 1.8 && lo < 2.0 && hi > 2.0 && hi < 2.2);
	stats_rate_ratio_ci(0, 100, 5, 100, 0.95, &lo, &hi);
	assert_true(lo > 0 && isfinite(hi));
}

static void welch(void **state)
{
	double x[] = { 1, 2, 3, 4, 5 }, y[] = { 2, 4, 6, 8, 10 }, z[] = { 3, 3, 3 };
	double p = stats_welch_test(x, 5, y, 5);

	/* t = -1.897, df = 5.88: two-sided p ~ 0.107. */
	assert_true(p > 0.10 && p < 0.115);
	assert_near(stats_welch_test(x, 5, x, 5), 1.0, 1e-12);
	assert_near(stats_welch_test(z, 3, z, 3), 1.0, 0);
	assert_near(stats_welch_test(x, 1, y, 5), 1.0, 0);
}

static void benjamini_hochberg(void **state)
{
	double p[] = { 0.01, 0.04, 0.03, 0.5 }, q[4];

	stats_bh_adjust(p, 4, q);
	assert_near(q[0], 0.04, 1e-12);
	assert_near(q[1], 0.04 * 4 / 3, 1e-12);
	assert_near(q[2], 0.04 * 4 / 3, 1e-12);
	assert_near(q[3], 0.5, 1e-12);
	stats_bh_adjust(p, 4, p); /* in place */
	assert_near(p[2], q[2], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(summary_figure3_row),
		cmocka_unit_test(distributions),
		cmocka_unit_test(binomial_and_poisson),
		cmocka_unit_test(rate_ratio_interval),
		cmocka_unit_test(welch),
		cmocka_unit_test(benjamini_hochberg),
	};

	return cmocka_run_group_tests_name("stats", tests, NULL, NULL);
}
