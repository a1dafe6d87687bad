/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "core/event.h"
#include "core/die.h"

#include <string.h>

static const char *const names[EVENT__COUNT] = {
	[EVENT_CYCLES] = "cycles",
	[EVENT_IMISS] = "imiss",
	[EVENT_DMISS] = "dmiss",
	[EVENT_BRANCHMP] = "branchmp",
	[EVENT_DTLBMISS] = "dtlbmiss",
	[EVENT_ITLBMISS] = "itlbmiss",
	[EVENT_INSTRUCTIONS] = "instructions",
	[EVENT_CLOCK] = "clock",
};

const char *event_name(enum dcpi_event ev)
{
	if ((unsigned)ev >= EVENT__COUNT)
		BUG("bad event %d", (int)ev);
	return names[ev];
}

int event_lookup(const char *name)
{
	for (int i = 0; i < EVENT__COUNT; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}

bool event_is_time(enum dcpi_event ev)
{
	return ev == EVENT_CYCLES || ev == EVENT_CLOCK;
}
