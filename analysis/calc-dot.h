/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-dot.h - the analysis of one procedure (calc.h) as a graph
 * for Graphviz: dcpicalc --dot.
 */
#ifndef DCPI_CORE_ANALYSIS_CALC_DOT_H
#define DCPI_CORE_ANALYSIS_CALC_DOT_H

#include <stdio.h>

#include "analysis/calc.h"

/* Writes the Graphviz graph of the CFG (blocks with frequency, CPI, confidence). */
int calc_dot(const struct calc *c, FILE *out);

#endif
