/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/emdip.h - how long a stop slows the thread it stopped, measured
 * from the trails (docs/collect.md, "Windows").
 *
 * Any interruption leaves memory-bound code slow for a while: a ptrace
 * stop of 90-300 us, or a preemption, costs the next 0.5-5 ms (measured:
 * 0.45-0.69 of the normal rate at first; counted loops are not slowed).
 * A window that begins in that stretch counts too few instructions for a
 * sampling period.  So the windows of a trail are used only from the
 * index where the stop no longer shows, and that index is measured, not
 * assumed:
 *
 *   - each trail that reached far enough gives its windows' instructions
 *     relative to its own windows from `reach` on (the reference: past
 *     EMDIP_PRIOR_NS after the stop, where the dip of a stop of a
 *     hundred microseconds has passed on the workloads measured here);
 *   - over trails, R_j = (sum of window j's instructions) / (sum of the
 *     references), and its standard error from the spread of the ratios;
 *   - window j is past the dip when R_j, less two standard errors, is at
 *     least 1 - EMDIP_TOLERANCE, with EMDIP_MIN_TRAILS trails or more;
 *     the skip is the first index from which every window up to `reach`
 *     is past it.  Until the measurement says so, it is `reach`: a skip
 *     too long costs emulation, one too short counts slow windows;
 *   - if the window just before `reach` is still measurably slow, the dip
 *     lasts longer than assumed: `reach` doubles (up to EMDIP_MAX_REACH).
 *
 * Indices are in windows (sampling periods of the thread after it went
 * on): window j is from the trail's point j to point j + 1.
 */
#ifndef DCPI_COLLECT_EMDIP_H
#define DCPI_COLLECT_EMDIP_H

#include <stdbool.h>
#include <stdint.h>

#include "collect/emu-proto.h"
#include "db/paths.h"

#define EMDIP_PRIOR_NS (2 * 1000000LL)
#define EMDIP_TOLERANCE PATHS_WINDOW_BIAS
#define EMDIP_MIN_TRAILS 8
#define EMDIP_MAX_REACH (EMU_MAX_TRAIL / 2)

struct strbuf;
struct json_writer;

struct emdip_acc {
	double insns, ref;      /* sums over trails: window j's instructions, their references */
	double r, r2;           /* sums of the ratios and their squares (the spread) */
	uint64_t n;
};

struct emdip {
	uint64_t period_ns;
	unsigned reach;         /* the reference windows begin here */
	uint64_t trails;        /* trails that gave a reference */
	struct emdip_acc acc[EMU_MAX_TRAIL];
};

/* Starts over for sampling period period_ns (0: unknown, reach 1). */
void emdip_init(struct emdip *d, uint64_t period_ns);

/*
 * A trail's windows: insns[j] instructions in window j, ok[j] if it is one
 * sampling period of the thread (collect/emtrail.h), for j < n.
 */
void emdip_add(struct emdip *d, const uint64_t *insns, const bool *ok, unsigned n);

/* The first window past the dip (<= reach). */
unsigned emdip_skip(const struct emdip *d);

/* R_j and its standard error (-1 if no trail measured it). */
double emdip_ratio(const struct emdip *d, unsigned j, double *se);

/* dcpictl status: "dip: windows from the 6th sample after a stop (...)". */
void emdip_status_text(const struct emdip *d, struct strbuf *o);
void emdip_status_json(const struct emdip *d, struct json_writer *w);

#endif
