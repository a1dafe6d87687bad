/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/stopfiles.h - the files a burst's thread reads, and where it was
 * in them at the stop, so that a trail can pass its reads
 * (docs/collect.md, "The trail").
 *
 * A trail is emulated long after the thread read on: the buffers it reads
 * into hold later data by then.  But a regular file read at its position
 * gives again what the thread got.  The position is read while the thread
 * is stopped (its fdinfo: 5-10 us a file; a program that reads 32 KiB every
 * 40 us moves it in any gap around the stop).  Which descriptors:
 * those the last trail of the same address space could not pass (a read
 * of a file it did not know), at most EMU_MAX_FILES.  Each is opened again
 * through /proc/PID/fd, read-only, if it is a regular file, and served to
 * the worker only at the position the thread reads next (collect/emu-worker.h).
 */
#ifndef DCPI_COLLECT_STOPFILES_H
#define DCPI_COLLECT_STOPFILES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/emu-proto.h"

struct stopfiles {
	size_t n;
	struct emu_file f[EMU_MAX_FILES];       /* fd, position at the stop */
	int local[EMU_MAX_FILES];               /* the collector's descriptor of each */
	uint64_t before[EMU_MAX_FILES];         /* positions at the stop */
	uint32_t want[EMU_MAX_FILES];           /* the fds asked for */
	size_t n_want;
	uint64_t known;                         /* files known at stops */
};

void stopfiles_init(struct stopfiles *s);

/* During the stop: the positions of fds[0..n) of process pid. */
void stopfiles_take(struct stopfiles *s, pid_t pid, const uint32_t *fds, size_t n);
/* After the release: those that are regular files, opened. */
void stopfiles_open(struct stopfiles *s, pid_t pid);
/* The burst is over: the descriptors closed. */
void stopfiles_close(struct stopfiles *s);

#endif
