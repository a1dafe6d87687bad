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
 * Lets the child exec; returns 0 if it did, else the errno of its execvp
 * (the child has then exited 127 for ENOENT, else 126).
 */
int spawn_release(struct spawn *s, const char *what);

/* Gives up before releasing: the child exits without running anything. */
void spawn_abort(struct spawn *s);

#endif
