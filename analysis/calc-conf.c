/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-conf.c - from a count's relative error to its confidence
 * level (calc-conf.h): the one place a level is set.
 */
#include "config.h"

#include "analysis/calc-conf.h"

#include <math.h>

enum calc_conf calc_conf_of(double e)
{
	if (!(e >= 0))
		return CALC_CONF_NONE;
	if (e <= CALC_ERR_HIGH)
		return CALC_CONF_HIGH;
	if (e <= CALC_ERR_MEDIUM)
		return CALC_CONF_MEDIUM;
	return CALC_CONF_LOW;
}

double calc_err_add(double a, double b)
{
	double e = hypot(a, b);

	return e < CALC_ERR_UNBOUNDED ? e : CALC_ERR_UNBOUNDED;
}

double calc_err_total(double err, double period_share, double period_error)
{
	double p = period_share * period_error;

	if (!(err >= 0))
		return -1;
	return calc_err_add(err, p > 0 ? p : -p);
}
