/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * watch/calib.h - what the probes themselves add to a measured call.
 *
 * Between the entry's sample and the return's sample the kernel does work
 * that the measured interval includes: after the entry sample it
 * single-steps the displaced instruction out of line (or emulates it) and
 * returns to the program; before the return's sample it takes the
 * uretprobe trampoline's trap (or, at an exit instruction or a --between B
 * point, the breakpoint's).  On bare metal that is a few hundred
 * nanoseconds; in a virtual machine where traps exit to the hypervisor it
 * can be tens of microseconds, a large part of a short call.
 *
 * watch_calibrate() measures it on this machine, now: it runs empty
 * functions of dcpiwatch's own (one whose first instruction the kernel
 * emulates, one it single-steps) a few hundred times in a child process
 * under the same kind of probes and takes the median wall and on-CPU time
 * of a call.  watch/agg.h subtracts it from every call (never below 0).
 */
#ifndef DCPI_WATCH_CALIB_H
#define DCPI_WATCH_CALIB_H

#include <stdbool.h>

#include "watch/agg.h"
#include "watch/session.h"

/*
 * Measures the bias for the entry and return kinds that plan uses.
 * Returns 0, or -1 (reported as a warning) if it could not: then bias is
 * zero.  The events are those the real session reads.
 */
int watch_calibrate(const struct watch_plan *plan, const struct watch_evspec *events,
		    unsigned nevents, struct watch_bias *bias);

#endif
