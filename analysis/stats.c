/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "analysis/stats.h"
#include "core/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void stats_summarize(const double *x, size_t n, struct stats_summary *out)
{
	double m2 = 0;

	memset(out, 0, sizeof(*out));
	out->n = n;
	if (!n)
		return;
	out->min = out->max = x[0];
	for (size_t i = 0; i < n; i++) {
		out->sum += x[i];
		if (x[i] < out->min)
			out->min = x[i];
		if (x[i] > out->max)
			out->max = x[i];
	}
	out->mean = out->sum / (double)n;
	for (size_t i = 0; i < n; i++)
		m2 += (x[i] - out->mean) * (x[i] - out->mean);
	out->stddev = n > 1 ? sqrt(m2 / (double)(n - 1)) : 0;
	out->range_pct = out->sum > 0 ? (out->max - out->min) / out->sum * 100.0 : 0;
}

double stats_normal_cdf(double z)
{
	return 0.5 * erfc(-z / M_SQRT2);
}

/* Acklam's rational approximation, refined by one Newton step. */
double stats_normal_quantile(double p)
{
	static const double a[] = { -3.969683028665376e+01, 2.209460984245205e+02,
				    -2.759285104469687e+02, 1.383577518672690e+02,
				    -3.066479806614716e+01, 2.506628277459239e+00 };
	static const double b[] = { -5.447609879822406e+01, 1.615858368580409e+02,
				    -1.556989798598866e+02, 6.680131188771972e+01,
				    -1.328068155288572e+01 };
	static const double c[] = { -7.784894002430293e-03, -3.223964580411365e-01,
				    -2.400758277161838e+00, -2.549732539343734e+00,
				    4.374664141464968e+00, 2.938163982698783e+00 };
	static const double d[] = { 7.784695709041462e-03, 3.224671290700398e-01,
				    2.445134137142996e+00, 3.754408661907416e+00 };
	double q, r, x;

	if (p <= 0)
		return -INFINITY;
	if (p >= 1)
		return INFINITY;
	if (p < 0.02425) {
		q = sqrt(-2 * log(p));
		x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	} else if (p > 1 - 0.02425) {
		q = sqrt(-2 * log(1 - p));
		x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	} else {
		q = p - 0.5;
		r = q * q;
		x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
		    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
	}
	/* Newton step on the exact CDF. */
	x -= (stats_normal_cdf(x) - p) * sqrt(2 * M_PI) * exp(x * x / 2);
	return x;
}

#define LENTZ_TINY 1e-300

/* A value kept away from zero (the modified Lentz method divides by it). */
static double not_zero(double v)
{
	return fabs(v) < LENTZ_TINY ? LENTZ_TINY : v;
}

/* One term aa of the continued fraction: updates c and d, returns the factor h changes by. */
static double lentz_step(double aa, double *c, double *d)
{
	*d = 1 / not_zero(1 + aa * *d);
	*c = not_zero(1 + aa / *c);
	return *d * *c;
}

/* Continued fraction for the incomplete beta (Numerical Recipes' betacf idea). */
static double betacf(double a, double b, double x)
{
	double c = 1, d = 1 / not_zero(1 - (a + b) * x / (a + 1)), h = d;

	for (int m = 1; m <= 300; m++) {
		double m2 = 2.0 * m, del;

		h *= lentz_step(m * (b - m) * x / ((a + m2 - 1) * (a + m2)), &c, &d);
		del = lentz_step(-(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1)), &c, &d);
		h *= del;
		if (fabs(del - 1) < 1e-14)
			break;
	}
	return h;
}

double stats_incbeta(double a, double b, double x)
{
	double lbt;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
	if (x < (a + 1) / (a + b + 2))
		return exp(lbt) * betacf(a, b, x) / a;
	return 1 - exp(lbt) * betacf(b, a, 1 - x) / b;
}

double stats_t_cdf(double t, double df)
{
	double p;

	if (!isfinite(t))
		return t > 0 ? 1 : 0;
	p = 0.5 * stats_incbeta(df / 2, 0.5, df / (df + t * t));
	return t > 0 ? 1 - p : p;
}

static double log_binom_pmf(uint64_t k, uint64_t n, double p)
{
	double lc = lgamma((double)n + 1) - lgamma((double)k + 1) - lgamma((double)(n - k) + 1);

	if (p <= 0)
		return k ? -INFINITY : 0;
	if (p >= 1)
		return k == n ? 0 : -INFINITY;
	return lc + (double)k * log(p) + (double)(n - k) * log1p(-p);
}

double stats_binomial_test(uint64_t a, uint64_t n, double p0)
{
	double mean = (double)n * p0, var = mean * (1 - p0), la, sum = 0;

	if (!n || a > n)
		return 1;
	if (p0 <= 0 || p0 >= 1)
		return (p0 <= 0 && a == 0) || (p0 >= 1 && a == n) ? 1 : 0;
	if (n > 100000 || var > 2500) {
		double z = (fabs((double)a - mean) - 0.5) / sqrt(var);

		return z <= 0 ? 1 : fmin(1, 2 * (1 - stats_normal_cdf(z)));
	}
	/* Exact: sum the probabilities of outcomes no more likely than a. */
	la = log_binom_pmf(a, n, p0) + 1e-9;
	for (uint64_t k = 0; k <= n; k++) {
		double lk = log_binom_pmf(k, n, p0);

		if (lk <= la)
			sum += exp(lk);
	}
	return fmin(1, sum);
}

double stats_poisson_rates_test(uint64_t a, uint64_t ta, uint64_t b, uint64_t tb)
{
	if (!ta || !tb)
		return 1;
	return stats_binomial_test(a, a + b, (double)ta / ((double)ta + (double)tb));
}

void stats_rate_ratio_ci(uint64_t a, uint64_t ta, uint64_t b, uint64_t tb, double level,
			 double *lo, double *hi)
{
	double ca = a ? (double)a : 0.5, cb = b ? (double)b : 0.5;
	double r = (cb / (double)tb) / (ca / (double)ta);
	double z = stats_normal_quantile(0.5 + level / 2);
	double se = sqrt(1 / ca + 1 / cb);

	*lo = r * exp(-z * se);
	*hi = r * exp(z * se);
}

static void mean_var(const double *x, size_t n, double *mean, double *var)
{
	double s = 0, m2 = 0;

	for (size_t i = 0; i < n; i++)
		s += x[i];
	*mean = s / (double)n;
	for (size_t i = 0; i < n; i++)
		m2 += (x[i] - *mean) * (x[i] - *mean);
	*var = n > 1 ? m2 / (double)(n - 1) : 0;
}

double stats_welch_test_moments(double mx, double vx, size_t nx, double my, double vy,
				size_t ny)
{
	double sx, sy, se2, t, df;

	if (nx < 2 || ny < 2)
		return 1;
	sx = vx / (double)nx;
	sy = vy / (double)ny;
	se2 = sx + sy;
	if (se2 <= 0)
		return mx == my ? 1 : 0;
	t = (mx - my) / sqrt(se2);
	df = se2 * se2 / (sx * sx / (double)(nx - 1) + sy * sy / (double)(ny - 1));
	return fmin(1, 2 * stats_t_cdf(-fabs(t), df));
}

double stats_welch_test(const double *x, size_t nx, const double *y, size_t ny)
{
	double mx, vx, my, vy;

	if (nx < 2 || ny < 2)
		return 1;
	mean_var(x, nx, &mx, &vx);
	mean_var(y, ny, &my, &vy);
	return stats_welch_test_moments(mx, vx, nx, my, vy, ny);
}

double stats_prediction_test(double x, double my, double vy, size_t ny)
{
	double t;

	if (ny < 2)
		return 1;
	if (vy <= 0)
		return x == my ? 1 : 0;
	t = (x - my) / sqrt(vy * (1 + 1 / (double)ny));
	return fmin(1, 2 * stats_t_cdf(-fabs(t), (double)(ny - 1)));
}

struct pidx {
	double p;
	size_t i;
};

static int cmp_pidx(const void *a, const void *b)
{
	const struct pidx *x = a, *y = b;

	return x->p < y->p ? -1 : x->p > y->p ? 1 : (x->i > y->i) - (x->i < y->i);
}

void stats_bh_adjust(const double *p, size_t n, double *q)
{
	struct pidx *v;
	double min = 1;

	if (!n)
		return;
	v = xreallocarray(NULL, n, sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		v[i].p = p[i];
		v[i].i = i;
	}
	qsort(v, n, sizeof(*v), cmp_pidx);
	for (size_t k = n; k-- > 0;) {
		double adj = v[k].p * (double)n / (double)(k + 1);

		if (adj < min)
			min = adj;
		q[v[k].i] = min;
	}
	free(v);
}
