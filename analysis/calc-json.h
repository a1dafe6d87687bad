/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-json.h - the analysis of one procedure (calc.h) as JSON:
 * dcpicalc --json.
 */
#ifndef DCPI_CORE_ANALYSIS_CALC_JSON_H
#define DCPI_CORE_ANALYSIS_CALC_JSON_H

#include "analysis/calc.h"

struct json_writer;
/*
 * Writes one procedure as a JSON object: name, image, start, end, model,
 * event, period, summary, blocks (start, end, freq, execs, confidence,
 * best_cpi, cpi, how), edges, instructions (addr, text, samples per event,
 * attributed, m, freq, execs, cpi, confidence, culprits with addresses).
 */
void calc_json(const struct calc *c, struct json_writer *w);

#endif
