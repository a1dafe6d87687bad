/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/pagecheck.h - the collector's check of the pages its emulating
 * worker asks for (collect/emu-worker.h) before it reads them as root: of
 * the process the request is about only (the caller's pid), inside one of
 * its readable mappings, and no more of them than a budget per request.
 *
 * The worker runs another program's code: taken over, it would ask for
 * whatever it likes.  A page outside the process's readable mappings is
 * never read (it is answered as unreadable, and counted: the emulator's
 * read-ahead asks for neighbours that may not exist); a request past the
 * budget fails it (the worker is then replaced).  The mappings come from
 * the kernel's PROCMAP_QUERY (one ioctl a page, a cached mapping
 * answering its neighbours), else from the text of /proc/PID/maps, read
 * once a request.
 */
#ifndef DCPI_COLLECT_PAGECHECK_H
#define DCPI_COLLECT_PAGECHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct pagecheck {
	pid_t pid;
	int fd;                 /* /proc/PID/maps, opened at the first look; -1 */
	bool opened, text;      /* looked; the kernel has no PROCMAP_QUERY: ranges read */
	uint64_t *lo, *hi;      /* text: the readable mappings, in order */
	size_t n, alloc;
	uint64_t last_lo, last_hi;      /* the readable mapping found last */
	uint64_t budget, used;  /* pages allowed, asked for */
	uint64_t outside;       /* pages asked for outside the readable mappings */
};

/* A request about process pid begins: at most budget pages. */
void pagecheck_begin(struct pagecheck *c, pid_t pid, uint64_t budget);
/*
 * Which of the pages addr[0..n) may be read (ok[i]).  Returns 0, or -1 if
 * they take the request past its budget.
 */
int pagecheck_pages(struct pagecheck *c, const uint64_t *addr, size_t n, bool *ok);
/* The request ended: what was opened is closed. */
void pagecheck_end(struct pagecheck *c);

#endif
