/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * watch/session.h - the kernel side of dcpiwatch: uprobes (kprobes for
 * kernel functions) through perf_event_open(2), with the counters each
 * probe hit reads, their ring buffers, and the records handed to
 * watch/agg.h in time order.
 *
 * On each CPU, for the process tree (pid, inherit: every thread it has and
 * will have) or the whole system (pid -1), one group:
 *
 *   leader      task-clock, counting (the thread's on-CPU time)
 *   events      each -e event, counting
 *   switches    context-switches, sampling every switch (the thread's
 *               counts at the moment it leaves the CPU), with the COMM and
 *               EXIT records; its ring buffer takes every record of the CPU
 *   probes      one uprobe (uretprobe) per probe point, sampling every hit
 *
 * Every sample reads the whole group (PERF_SAMPLE_READ, PERF_FORMAT_GROUP;
 * with inherit the values are the thread's own, Linux 6.12), its time
 * (CLOCK_MONOTONIC), CPU and the user stack pointer.  The probes' own
 * counts (read at the end) are the exact number of hits whatever samples
 * were lost.
 *
 * uprobes need CAP_PERFMON or CAP_SYS_ADMIN (the kernel refuses them to
 * everyone else, whatever perf_event_paranoid says), and perf's usual rule
 * for a process: the caller may ptrace it.  -a needs the same capability.
 */
#ifndef DCPI_WATCH_SESSION_H
#define DCPI_WATCH_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "watch/agg.h"
#include "watch/plan.h"

struct pollfd;

/* A counter to read at each probe: a perf event by its perf name. */
struct watch_evspec {
	char name[WATCH_EVENT_NAME_MAX];
	uint32_t type;
	uint64_t config;
};

/*
 * Finds the perf event called name (task-clock, page-faults, minor-faults,
 * major-faults, context-switches, cpu-migrations, cycles, instructions,
 * cache-misses, branch-misses, ... and the short forms perf takes: faults,
 * cs, migrations) and checks that this machine counts it.  Returns 0, or
 * -1 after reporting why not.
 */
int watch_evspec_lookup(const char *name, struct watch_evspec *ev);

struct watch_session_opts {
	const struct watch_plan *plan;
	pid_t pid;                  /* the process; -1: system-wide */
	bool attach;                /* pid runs already: its threads are enumerated */
	unsigned nevents;
	const struct watch_evspec *events;
	unsigned ring_pages;        /* data pages per CPU (a power of two) */
};

struct watch_session;

/* Opens every event.  NULL after reporting (permissions, unknown probes). */
struct watch_session *watch_session_open(const struct watch_session_opts *opts,
					 struct watch_agg *agg);
void watch_session_free(struct watch_session *s);

/* The ring fds to poll for input (at most max); returns how many. */
size_t watch_session_pollfds(struct watch_session *s, struct pollfd *fds, size_t max);

/*
 * Reads what the rings hold and hands on the records older than the
 * watermark (all of them with drain) to the aggregation.
 */
void watch_session_read(struct watch_session *s, bool drain);

struct watch_session_counts {
	uint64_t lost;              /* samples the kernel could not write */
	uint64_t garbled;           /* ring bytes that did not parse */
	uint64_t late;              /* records that arrived out of time order */
};

void watch_session_counts(const struct watch_session *s, struct watch_session_counts *c);

/*
 * The kernel's count of hits of each probe point (summed over CPUs and
 * threads, exited ones included): hits[plan->np].  Returns 0, or -1 if a
 * count could not be read.
 */
int watch_session_hits(struct watch_session *s, uint64_t *hits);

#endif
