/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/spawn.h - a command started and held before execve(2): the runner
 * (dcpirun, dcpiwatch) forks it, attaches its events to the child's pid,
 * then lets it run, so that nothing of the command is missed and nothing
 * of the runner is measured.
 */
#ifndef DCPI_CORE_SPAWN_H
#define DCPI_CORE_SPAWN_H

#include <signal.h>
#include <sys/types.h>

struct spawn {
	pid_t pid;              /* the child */
	int go_fd, status_fd;   /* release it; learn whether its exec worked */
};

/*
 * Forks a child that restores the signal mask old, waits for
 * spawn_release() and execs argv (a $PATH lookup as execvp(3) does).  Dies
 * if it cannot fork.
 */
void spawn_start(struct spawn *s, char *const *argv, const sigset_t *old);

/*
 * The same, the child having mapped the files maps[0..n) (read-only and
 * executable, the whole file; one that cannot be is left out) before
 * spawn_start_mapped() returns: uprobes attached to the child then are
 * placed in those mappings at once, their instructions read from the
 * files where a failure is the caller's error, not at the child's exec,
 * where the kernel ignores one (dcpiwatch).  The mappings go with the exec.
 */
void spawn_start_mapped(struct spawn *s, char *const *argv, const sigset_t *old,
			const char *const *maps, size_t n);

/*
 * Lets the child exec; returns 0 if it did, else the errno of its execvp
 * (the child has then exited 127 for ENOENT, else 126).
 */
int spawn_release(struct spawn *s, const char *what);

/* Gives up before releasing: the child exits without running anything. */
void spawn_abort(struct spawn *s);

#endif
