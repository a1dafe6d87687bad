/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "core/event.h"
#include "core/die.h"

#include <string.h>

static const struct {
	const char *name;
	const char *description;
} events[EVENT__COUNT] = {
	[EVENT_CYCLES] = { "cycles", "processor cycles (falls back to clock without a PMU)" },
	[EVENT_IMISS] = { "imiss", "instruction cache misses" },
	[EVENT_DMISS] = { "dmiss", "data cache misses" },
	[EVENT_BRANCHMP] = { "branchmp", "branch mispredictions" },
	[EVENT_DTLBMISS] = { "dtlbmiss", "data TLB misses" },
	[EVENT_ITLBMISS] = { "itlbmiss", "instruction TLB misses" },
	[EVENT_INSTRUCTIONS] = { "instructions", "instructions retired" },
	[EVENT_CLOCK] = { "clock", "the kernel's cpu-clock timer" },
};

const char *event_name(enum dcpi_event ev)
{
	if ((unsigned)ev >= EVENT__COUNT)
		BUG("bad event %d", (int)ev);
	return events[ev].name;
}

const char *event_description(enum dcpi_event ev)
{
	if ((unsigned)ev >= EVENT__COUNT)
		BUG("bad event %d", (int)ev);
	return events[ev].description;
}

int event_lookup(const char *name)
{
	for (int i = 0; i < EVENT__COUNT; i++)
		if (!strcmp(events[i].name, name))
			return i;
	return -1;
}

bool event_is_time(enum dcpi_event ev)
{
	return ev == EVENT_CYCLES || ev == EVENT_CLOCK;
}
