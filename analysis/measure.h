/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/measure.h - execution counts measured from value profiles:
 * counting instead of estimating (docs/analysis.md, "Measured
 * frequencies"; /work notes "Registers at samples").
 *
 * In a loop, an instruction that adds a constant c to a register that
 * nothing else in the loop writes (add, sub, inc, dec, lea r, [r + c], or
 * add of a register the value profile shows invariant) runs exactly
 * (change of the register) / c times between two moments.  The collector
 * pairs each sample with the same thread's previous one when both are
 * close in code and at most 1.5 periods apart (db/values.h "pairs"), and
 * sums each register's increases and decreases at the later sample.  Over
 * the pairs that end in the loop, the mean change per pair is the
 * executions per sampling period of the loop's time; times the time
 * samples recorded in the loop, the executions.  No processor model, no
 * cycles per sample: a count.
 *
 * The loop is the strongly connected region of the CFG around the
 * instruction's block (so a counter of an outer loop counts through its
 * inner loops).  A loop with a call is skipped (its callees' time is not
 * in its samples but is in its pairs), as are registers written elsewhere
 * in the loop.  The measurement holds only where consecutive samples of a
 * thread fall in the same run of the loop: pairs where the register went
 * the wrong way (a new run started between them) or did not move must be
 * few; loops that run less than a sampling period at a time give no
 * measurement (their trip counts need bursts, or a bound and a start).
 */
#ifndef DCPI_ANALYSIS_MEASURE_H
#define DCPI_ANALYSIS_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/listing.h"
#include "db/values.h"

/* Fewest pairs moving the right way for a measurement. */
#define MEASURE_MIN_PAIRS 12

/*
 * The spread assumed of one pair's change (its coefficient of
 * variation): the useful work of a sampling period varies by a quarter
 * or more on a virtual machine (as matched windows' do, pathscale.h).
 */
#define MEASURE_PAIR_CV 0.3

struct measure {
	long block;             /* the block of the counting instruction (cfg index) */
	size_t insn;            /* the counting instruction (listing index) */
	unsigned reg;           /* enum values_reg */
	int64_t step;           /* its change per execution */
	double per_period;      /* executions per sampling period of the loop's time: the
				   changes the right way over all pairs ending in the loop */
	double loop_samples;    /* time samples recorded in the loop */
	double execs;           /* per_period x loop_samples */
	uint64_t pairs;         /* pairs ending in the loop */
	uint64_t good;          /* ... of them where the register moved the right way */
	uint64_t bad;           /* ... did not (the wrong way, or not at all) */
	uint64_t against;       /* ... the wrong way: a new run of the loop in between */
	size_t loop_blocks;     /* blocks in the loop */
	uint64_t trip;          /* runs a few periods long: the iterations of a run (bound -
				   start) / step, 0 if not used */
	uint64_t wraps;         /* ... pairs that crossed into a new run */
	unsigned outliers;      /* pairs left out: their change was another quantity */
	uint64_t lost;          /* samples the collector lost in the epoch (set by the caller):
				   execs counts only the loop's recorded samples, so it is low */
};

/*
 * Finds the counting instructions of listing l's loops and measures their
 * executions from prof (the image's value profile) and the time samples
 * of event ev.  Returns the number of measurements in *out (caller frees),
 * at most one per block (the one with the most good pairs).
 */
/*
 * A count is plausible only if the loop did not retire more than width
 * instructions a cycle: with cycles_per_sample (0: unknown, no check) a
 * count implying more is refused (a register that held other quantities
 * than a count: pointers into different arrays on each call).
 */
size_t measure_loops(const struct listing *l, const struct values_profile *prof,
		     enum dcpi_event ev, double cycles_per_sample, unsigned width,
		     struct measure **out);

/*
 * The relative error of m's count (analysis/calc-conf.h): the mean
 * change of its pairs (MEASURE_PAIR_CV over the root of the pairs that
 * moved), a sample more or less in the loop, what the pairs that went
 * the wrong way may have lost (each up to a pair's iterations: none when
 * the trip accounts for them), and the samples the collector lost, as if
 * all had been in the loop.  The count does not rest on the cycles per
 * sample.
 */
double measure_rel_error(const struct measure *m);

struct strbuf;
struct json_writer;

/*
 * Appends "measured: block 2 ran 3.00e+06 times (rcx +1 at 0x12f0; 2213
 * pairs of samples in the loop, 3 against)".
 */
void measure_describe(const struct measure *m, const struct listing *l, struct strbuf *sb);

/* Writes m as a JSON object (block, addr, reg, step, execs, per_period, pairs, good, bad). */
void measure_json(const struct measure *m, struct json_writer *w, const struct listing *l);

#endif
