/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/perf.h - the kernel side of collection: the perf_event_open(2)
 * events that stand for DCPI's performance counters, their mmap ring
 * buffers, and the sampling period.
 *
 * One event is opened per CPU per DCPI event: system-wide (pid -1) for the
 * daemon, or for a process tree (pid, inherit) for dcpirun.  On each CPU the
 * first event carries the side-band records (MMAP2 with build-ids, COMM,
 * FORK, EXIT) and owns the ring buffer; the other events of that CPU write
 * into it (PERF_EVENT_IOC_SET_OUTPUT), so one ring per CPU holds everything
 * that happened there, in that CPU's time order.
 *
 * Every record carries the same fields (PERF_COLLECT_SAMPLE_TYPE, with
 * sample_id_all): identifier, ip, pid/tid, time (CLOCK_MONOTONIC), period.
 * collect/perfrec.h parses them.
 */
#ifndef DCPI_COLLECT_PERF_H
#define DCPI_COLLECT_PERF_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/event.h"

/* The sample fields every dcpi event records (see collect/perfrec.h). */
#define PERF_COLLECT_SAMPLE_TYPE                                                     \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	 PERF_SAMPLE_PERIOD)

/* How a DCPI event is counted by this kernel on this machine. */
struct perf_evspec {
	enum dcpi_event event;  /* the DCPI event asked for */
	enum dcpi_event used;   /* the event really counted (clock for cycles without a PMU) */
	uint32_t type;          /* perf_event_attr.type */
	uint64_t config;        /* perf_event_attr.config */
	bool time;              /* period counted in ns (the cpu-clock timer) */
};

/*
 * Finds how to count ev here, trying the hardware event first and falling
 * back from cycles to clock when there is no PMU.  Probes by opening the
 * event on the calling thread.  Returns 0, or -1 with a reason in why (not
 * reported: the caller decides whether a missing event is an error).
 */
int perf_evspec_probe(enum dcpi_event ev, struct perf_evspec *spec, char *why, size_t whysize);

/* Where the events of a session look. */
struct perf_target {
	pid_t pid;              /* -1: every process (system-wide); else a process tree */
	bool inherit;           /* follow the children of pid */
	bool enable_on_exec;    /* start counting when pid calls execve */
	bool exclude_kernel;    /* user-space samples only */
};

/*
 * Fills attr for spec on target with a sampling period (or a frequency if
 * freq is true).  side_band adds the MMAP2/COMM/task records and build-ids.
 */
void perf_attr_init(struct perf_event_attr *attr, const struct perf_evspec *spec,
		    const struct perf_target *target, uint64_t period, bool freq, bool side_band,
		    size_t wakeup_bytes);

/* perf_event_open(2); -1 with errno on failure. */
int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd);

/*
 * Explains a perf_event_open failure (errno err) in one phrase, with the
 * hint a user needs ("needs root or CAP_PERFMON (perf_event_paranoid is 2)").
 */
const char *perf_strerror(int err, bool system_wide);

/* The CPUs to sample: the online ones (from sysfs), sorted.  Caller frees. */
int perf_online_cpus(int **cpus, size_t *n);

/* The kernel's perf_event_paranoid setting (2 if unreadable). */
int perf_paranoid(void);

/* A ring buffer: the metadata page and 2^k data pages mapped from an event fd. */
struct perf_ring {
	int fd;
	int cpu;
	void *base;             /* metadata page, then the data */
	unsigned char *data;    /* the data pages */
	size_t data_size;       /* bytes of data, a power of two */
	unsigned char *bounce;  /* a copy of a record that wraps around the end */
	size_t bounce_size;
	uint64_t bytes_read;
};

/* Maps pages data pages (a power of two) of fd's ring buffer. */
int perf_ring_map(struct perf_ring *r, int fd, int cpu, unsigned pages);
void perf_ring_unmap(struct perf_ring *r);

/* Called for each record; rec stays valid only during the call. */
typedef void (*perf_record_fn)(void *ctx, int cpu, const struct perf_event_header *rec);

/*
 * Hands every complete record now in the ring to fn, in ring order, then
 * releases the space to the kernel.  Returns the number of records.  A
 * record with a size the ring cannot hold (a corrupt header) stops the read
 * and drops the rest of the ring (counted as *garbled bytes).
 */
size_t perf_ring_read(struct perf_ring *r, perf_record_fn fn, void *ctx, uint64_t *garbled);

/* Sets a new sampling period (PERF_EVENT_IOC_PERIOD). */
int perf_set_period(int fd, uint64_t period);

/* What read(2) says about an event. */
struct perf_counts {
	uint64_t enabled, running;  /* time_enabled, time_running (ns) */
	uint64_t lost;              /* samples the kernel could not write (PERF_FORMAT_LOST) */
	bool has_lost;              /* the kernel knows PERF_FORMAT_LOST (Linux 6.0) */
};

/* Reads an event's times and lost samples. */
int perf_read_counts(int fd, struct perf_counts *c);

/*
 * The kernel's event id of fd (PERF_EVENT_IOC_ID); samples and records
 * carry it as their identifier.
 */
int perf_event_id(int fd, uint64_t *id);

#endif
