/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/calib.h - measuring how many cycles one sample of a time event
 * stands for (docs/collect.md, "Calibration").
 *
 * Without a PMU the time event is the kernel's cpu-clock timer: its period
 * is in nanoseconds, and the analysis needs cycles.  period x cpu_mhz is
 * wrong on a virtual machine: /proc/cpuinfo's MHz is not the clock the core
 * runs at, and each timer sample costs guest time (a VM exit, ~15 us) that
 * the sampled task is charged for, so fewer of the task's cycles fit in a
 * period than the clock says, by an amount that depends on the rate.
 *
 * The measurement: a loop of dependent register adds (one cycle each on
 * every x86-64 core: the adds form a single dependence chain; the loop's
 * decrement and branch run beside it) is sampled by the event at the
 * epoch's period on the calling thread.  Not add-immediates: Golden
 * Cove-class cores fold chains of them in the renamer, several a cycle.
 * The adds' unsampled clock is checked against an imul chain's (3 cycles
 * each on every x86-64 core of the last 15 years, which no renamer
 * shortens) and against the TSC's rate where the kernel trusts it: the
 * result says which clock the cycles are counted in and how far the
 * methods disagree.  Each sample records the loop's
 * running count of adds (PERF_SAMPLE_REGS_USER), so the cycles between the
 * first and the last sample in the loop over the samples in between is the
 * mean cycles per sample, exactly, from any number of intervals: no Poisson
 * or quantisation error, only the variation of the sample cost itself.
 * The loop first runs unsampled, timed by the thread's CPU clock, for the
 * core's clock (informative, and to size the sampled run).
 *
 * Cost, measured here: 23 ms of the caller's CPU at 1 kHz, 28 ms at 5 kHz
 * (20 ms of sampled loop, at least 16 intervals: up to 120 ms at rates
 * below ~150 Hz; at 20 kHz the samples cost ten times the loop's own
 * time, ~230 ms), per measurement.  It was 30 ms of loop and three 2 ms
 * unsampled runs (38-55 ms): the 19-20 intervals at 1 kHz agree within 1%
 * run to run.
 */
#ifndef DCPI_COLLECT_CALIB_H
#define DCPI_COLLECT_CALIB_H

#include <stdbool.h>
#include <stdint.h>

#include "collect/perf.h"
#include "db/meta.h"

struct calib_result {
	double cycles;          /* mean loop cycles per sample (in the checked clock's cycles) */
	uint64_t intervals;     /* sample intervals measured */
	double mhz;             /* the checked clock without sampling */
	int64_t cost_ns;        /* the caller's CPU time the measurement took */
	double imul_mhz;        /* the imul chain's clock */
	double tsc_mhz;         /* the TSC's rate (0: the kernel does not trust it) */
	double error;           /* relative: how far the methods disagree (at least 1%) */
	double scale;           /* the imul clock over the adds' (1 when they agree) */
	char how[24];           /* "regadd", or "imul" when the adds disagreed */
	struct epoch_core_sig sig;      /* what the core does, if asked for */
};

/* True if this build can calibrate (x86-64: the loop is assembly). */
bool calib_supported(void);

/*
 * Measures the cycles per sample of the time event spec (spec->time) at
 * period (ns), on the calling thread, user space only; with signatures,
 * the core's too (r->sig: add-immediate folding, integer width, load-to-use
 * and divide latency, a few ms more).  Returns 0, or -1 with a reason in
 * why (not reported: calibration is best effort).
 */
int calib_measure(const struct perf_evspec *spec, uint64_t period, bool signatures,
		  struct calib_result *r, char *why, size_t whysize);


/*
 * Adds a measurement to acc (acc->event and acc->period set by the caller;
 * acc->intervals 0 for an empty one): the interval-weighted mean.
 */
void calib_accumulate(struct epoch_calib *acc, const struct calib_result *r);

/*
 * The calibration loop itself, for tests: n iterations of 8 dependent register adds
 * on a counter that starts at start; returns the counter.  calib_loop_body
 * and calib_loop_end bound the loop's instructions (add x8, dec, jnz).
 */
uint64_t calib_loop(uint64_t n, uint64_t start);
extern const unsigned char calib_loop_body[], calib_loop_end[];

#endif
