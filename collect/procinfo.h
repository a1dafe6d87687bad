/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/procinfo.h - small facts about another process from /proc, for
 * the collector's decisions about it (a burst's thread, whose values, a
 * worker's CPU): read once, nothing kept, nothing parsed but the fields
 * asked for.
 */
#ifndef DCPI_COLLECT_PROCINFO_H
#define DCPI_COLLECT_PROCINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * /proc/PID/stat (of a process or a thread) into buf: the text after the
 * command's closing parenthesis and its space (the state letter first,
 * then the fields from the fourth on), or NULL if it cannot be read.  The
 * command may hold any byte: it is skipped whole.
 */
const char *procinfo_stat(pid_t pid, char *buf, size_t size);

/*
 * The value of the line "KEY:" of /proc/PID/status (a thread's too) into
 * value, its leading blanks skipped: true, or false if there is none.
 */
bool procinfo_status(pid_t pid, const char *key, char *value, size_t size);

/*
 * The owner of /proc/PID: the process's effective uid when it is dumpable,
 * root when it is not (the kernel's task_dump_owner).  0, or -1 if it is
 * gone.
 */
int procinfo_owner(pid_t pid, uid_t *uid);

#endif
