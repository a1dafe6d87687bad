/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/event.h - the events dcpi samples, by their DCPI names.
 *
 * The names are a whitelist: an event name from a user or a file is valid
 * only if event_lookup() knows it, so event names are safe in file names.
 * How each maps to a kernel perf event is collect/'s business; the epoch
 * metadata records the kernel event really used (e.g. clock for cycles on
 * machines without a PMU).
 */
#ifndef DCPI_CORE_EVENT_H
#define DCPI_CORE_EVENT_H

#include <stdbool.h>

enum dcpi_event {
	EVENT_CYCLES,           /* processor cycles (falls back to clock without a PMU) */
	EVENT_IMISS,            /* instruction cache misses */
	EVENT_DMISS,            /* data cache misses */
	EVENT_BRANCHMP,         /* branch mispredictions */
	EVENT_DTLBMISS,         /* data TLB misses */
	EVENT_ITLBMISS,         /* instruction TLB misses */
	EVENT_INSTRUCTIONS,     /* instructions retired */
	EVENT_CLOCK,            /* the kernel's cpu-clock timer */
	EVENT__COUNT
};

/* The longest event name plus NUL. */
#define EVENT_NAME_MAX 16

/* "cycles", "imiss", ...; BUG() on an out-of-range value. */
const char *event_name(enum dcpi_event ev);
/* The event with this name, or -1. */
int event_lookup(const char *name);
/* True for events whose samples measure time (cycles, clock). */
bool event_is_time(enum dcpi_event ev);

#endif
