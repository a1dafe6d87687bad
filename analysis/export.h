/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/export.h - an epoch's stacks in the formats the tools people
 * already have read (dcpiexport):
 *
 *   pprof    profile.proto (github.com/google/pprof, proto/profile.proto),
 *            gzipped: `go tool pprof`, and the continuous-profiling servers
 *            that ingest it (Pyroscope, Parca).  Samples per (stack,
 *            thread) with two values (samples, and their time in ns for a
 *            clock event, or their events for a hardware one), labels pid,
 *            tid and comm; locations with their address (a mapping per
 *            image, file offsets laid out one image after another), the
 *            procedure and source line; functions; mappings with path and
 *            build-id; the epoch's start, duration and mean period; a
 *            comment per file the profile was made without ("dcpi:
 *            incomplete: damaged FILE: WHY", db/damage.h).
 *   folded   Brendan Gregg's collapsed stacks ("comm;outer;...;leaf N" a
 *            line): flamegraph.pl, speedscope, inferno.  Kernel frames end
 *            in "_[k]" (flamegraph.pl colours them).
 *
 * Delayed clock ticks are charged to the caller, as dcpicg does.
 */
#ifndef DCPI_ANALYSIS_EXPORT_H
#define DCPI_ANALYSIS_EXPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/stackview.h"

struct strbuf;

struct export_opts {
	enum dcpi_event event;
	/* Only samples of these threads (0 / NULL: any). */
	uint32_t tgid, tid;
	const char *comm;
};

/* Writes the folded stacks to out.  Returns -1 on a write error. */
int export_folded(const struct stack_view *sv, FILE *out, const struct export_opts *o);

/*
 * Appends the gzipped profile.proto to out.  Returns 0, or -1 (reported)
 * if compression failed.
 */
int export_pprof(const struct stack_view *sv, struct strbuf *out, const struct export_opts *o);

#endif
