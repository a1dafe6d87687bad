/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "core/testpoint.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define MAX_POINTS 8

bool test_points_armed;

static struct {
	char name[64];
	unsigned long at;   /* stop at this pass */
	unsigned long seen; /* passes so far */
} points[MAX_POINTS];
static unsigned n_points;

/* Parses DCPI_TEST_STOP_AT once, before main. */
__attribute__((constructor)) static void test_points_init(void)
{
	const char *spec = getenv("DCPI_TEST_STOP_AT");

	while (spec && *spec && n_points < MAX_POINTS) {
		size_t len = strcspn(spec, ",");
		const char *at = memchr(spec, '@', len);
		size_t name_len = at ? (size_t)(at - spec) : len;

		if (name_len && name_len < sizeof(points[0].name)) {
			memcpy(points[n_points].name, spec, name_len);
			points[n_points].at = at ? strtoul(at + 1, NULL, 10) : 1;
			if (points[n_points].at)
				n_points++;
		}
		spec += len + (spec[len] == ',');
	}
	test_points_armed = n_points > 0;
}

void test_point_reached(const char *name)
{
	for (unsigned i = 0; i < n_points; i++)
		if (!strcmp(points[i].name, name) && ++points[i].seen == points[i].at)
			raise(SIGSTOP);
}
