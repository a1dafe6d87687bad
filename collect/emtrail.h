/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/emtrail.h - a burst's trail: the samples its thread took after
 * it went on, which the emulation from the stop must pass in turn
 * (collect/emu-engine.h, emu_engine_trail), and the windows between them
 * (docs/collect.md, "Windows").
 *
 * The points are the thread's samples of the time event with their user
 * registers, in time order, until `want` of them or the trail ends (a
 * sample without them).  A sample in the kernel is a point too, flagged
 * (EMU_POINT_KERNEL): its registers are the user state at the kernel's
 * entry (a system call's result not in rax yet), and the emulation passes
 * it after the instruction before (a write it passes, a fault, an
 * interrupt).  Window k is from
 * point k to point k + 1; it measures one sampling period of the thread
 * when both were taken on one CPU with no other sample of that CPU's
 * event between them, at most a period and a half apart (else the thread
 * ran elsewhere or shared the period: a point to pass, not a window).
 */
#ifndef DCPI_COLLECT_EMTRAIL_H
#define DCPI_COLLECT_EMTRAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collect/emu-proto.h"

struct emtrail {
	bool active;            /* collecting points */
	bool ended;             /* no more will come: a kernel sample of the thread */
	uint32_t tid;
	uint64_t after;         /* the thread went on at this time (the samples' clock) */
	unsigned want, n;
	struct emu_trail_point pt[EMU_MAX_TRAIL];       /* lo, hi: the caller's */
	unsigned cpu[EMU_MAX_TRAIL];
	uint64_t seen[EMU_MAX_TRAIL];   /* the CPU's samples counted at the point's */
	uint64_t time[EMU_MAX_TRAIL];
	uint64_t *cpu_seen;     /* time samples per CPU */
	size_t n_cpu;
};

void emtrail_init(struct emtrail *t);
void emtrail_release(struct emtrail *t);

/* Collects the next want (1..EMU_MAX_TRAIL) samples of thread tid after time `after`. */
void emtrail_start(struct emtrail *t, uint32_t tid, uint64_t after, unsigned want);
void emtrail_stop(struct emtrail *t);

/*
 * A sample of the time event on CPU cpu (every one: they tell windows
 * apart).  Returns true if it became the trail's point t->n - 1 (its user
 * rip ip and registers regs, db/values.h order; user: taken in user mode).
 */
bool emtrail_sample(struct emtrail *t, unsigned cpu, uint32_t tid, uint64_t time, bool user,
		    uint64_t ip, const uint64_t *regs);

/* True when the points are all in (or no more will come). */
bool emtrail_complete(const struct emtrail *t);

/* True if window k (point k to k + 1) is one sampling period of the thread. */
bool emtrail_window_ok(const struct emtrail *t, unsigned k, uint64_t period_ns);

#endif
