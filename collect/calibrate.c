/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/calibrate.c - the collector's calibration (collector_calibrate,
 * collector.h): the cycles one clock sample stands for, measured with
 * collect/calib.h on each CPU or on the calling thread, and recorded in the
 * epoch's meta, merged with a continued epoch's.
 */
#include "config.h"
#include "collect/calib.h"
#include "collect/collector-int.h"
#include "core/die.h"

#include <math.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>

/* The time event to calibrate: the first counted by the clock, or -1. */
int collector_time_event(const struct collector *c)
{
	for (size_t i = 0; i < c->n_ev; i++)
		if (c->ev[i].spec.time && !c->ev[i].freq)
			return (int)i;
	return -1;
}

/* Pauses or resumes CPU k's events (system-wide calibration). */
static void pause_cpu(struct collector *c, size_t k, bool pause)
{
	for (size_t i = 0; i < c->n_ev; i++)
		if (c->cpu[k].fd[i] >= 0)
			ioctl(c->cpu[k].fd[i], pause ? PERF_EVENT_IOC_DISABLE : PERF_EVENT_IOC_ENABLE, 0);
}

/* One measurement on the calling thread, added to c->calib. */
static void calibrate_here(struct collector *c, int cpu)
{
	struct calib_result r;
	char why[160];

	/* the core's signatures once: the model is chosen by them */
	if (calib_measure(&c->ev[c->time_ev].spec, c->ev[c->time_ev].mean, !c->core_sig.have, &r,
			  why, sizeof(why))) {
		if (cpu >= 0)
			warning("cannot calibrate the sampling period on CPU %d: %s", cpu, why);
		else
			warning("cannot calibrate the sampling period: %s", why);
	}
	c->calib_ns += r.cost_ns;
	if (r.sig.have && !c->core_sig.have)
		c->core_sig = r.sig;
	calib_accumulate(&c->calib, &r);
}

int64_t collector_calibrate(struct collector *c)
{
	cpu_set_t old;

	memset(&c->calib, 0, sizeof(c->calib));
	c->calib_ns = 0;
	c->time_ev = collector_time_event(c);
	/* --values: the load latencies the analysis compares loads with. */
	if (c->values && !c->offline && !ladder_measure(&c->ladder))
		c->calib_ns += c->ladder.cost_ns;
	if (c->opt.no_calibrate || c->offline || c->time_ev < 0 || !calib_supported())
		return 0;
	c->calib.event = c->ev[c->time_ev].spec.event;
	c->calib.period = c->ev[c->time_ev].mean;
	if (c->opt.pid >= 0 || sched_getaffinity(0, sizeof(old), &old)) {
		calibrate_here(c, -1);
		return c->calib_ns;
	}
	for (size_t k = 0; k < c->ncpu; k++) {
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(c->cpu[k].cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			continue;
		if (c->enabled)
			pause_cpu(c, k, true);
		calibrate_here(c, c->cpu[k].cpu);
		if (c->enabled)
			pause_cpu(c, k, false);
	}
	sched_setaffinity(0, sizeof(old), &old);
	return c->calib_ns;
}

/*
 * The epoch's calibration: this run's, merged with the one the continued
 * epoch had when both were measured at the same period.
 */
void collector_fill_calib(struct collector *c, struct epoch_meta *m)
{
	const struct epoch_calib *have;
	struct epoch_calib out;

	if (c->time_ev < 0)
		return;
	have = epoch_meta_calib(m, c->ev[c->time_ev].spec.event);
	if (!c->calib_base_taken) {
		/* The first meta write of the epoch: what is there came before this run. */
		memset(&c->calib_base, 0, sizeof(c->calib_base));
		if (have)
			c->calib_base = *have;
		c->calib_base_taken = true;
	}
	if (!c->calib.intervals)
		return;
	out = c->calib;
	if (c->calib_base.intervals && c->calib_base.period &&
	    fabs((double)c->calib_base.period / (double)out.period - 1) <= 0.02) {
		struct calib_result r = { .cycles = out.cycles, .intervals = out.intervals,
					  .mhz = out.mhz, .imul_mhz = out.imul_mhz,
					  .tsc_mhz = out.tsc_mhz, .error = out.error };

		snprintf(r.how, sizeof(r.how), "%s", out.how);
		out = c->calib_base;
		calib_accumulate(&out, &r);
	}
	epoch_meta_set_calib(m, &out);
	if (c->core_sig.have)
		m->core_sig = c->core_sig;
}
