/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/sandbox.h - the collector's unprivileged workers: a process
 * forked (never exec'd) from the collector, talking to it over a socket
 * pair, that does what the root collector must not (parse binaries,
 * emulate another program's code).
 *
 * A worker closes every descriptor but its socket, drops to the user
 * `nobody` when it runs as root (setgroups, setresgid, setresuid, checked),
 * sets no_new_privs and non-dumpable (other processes of that user cannot
 * ptrace it), dies with its parent, and installs a seccomp filter allowing
 * only the system calls it lists; anything else kills it.  What it sends
 * back is untrusted input to the collector.
 *
 *   collector: sandbox_spawn(&w, "dcpi-unwind", worker_main, ctx)
 *   worker:    worker_main(sock, ctx) { ...set-up...; sandbox_seal(allowed, n); loop }
 *   collector: sandbox_stop(&w, "the unwinding worker")   // kill, reap, say why it died
 */
#ifndef DCPI_COLLECT_SANDBOX_H
#define DCPI_COLLECT_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct sandbox {
	pid_t pid;      /* the worker, 0 if none */
	int fd;         /* the collector's end of the socket pair, -1 if none */
};

/*
 * Forks a worker named name (ps, top): in the child, the other descriptors
 * are closed, privileges dropped, and main(sock, ctx) runs (it must not
 * return).  Returns 0, or -1 (errno set) if it could not fork.
 */
int sandbox_spawn(struct sandbox *s, const char *name, void (*main)(int sock, void *ctx),
		  void *ctx);

/*
 * In the worker, once its set-up is done: no_new_privs, non-dumpable, and
 * a seccomp filter allowing the n system calls in allowed (and those that
 * exiting needs).  Exits the worker if any of it fails.
 */
void sandbox_seal(const int *allowed, size_t n);

/* Writes all of buf to a socket (no SIGPIPE): 0, or -1. */
int sandbox_send_all(int fd, const void *buf, size_t len);
/* Reads exactly len bytes from a socket, waiting: 0, or -1 (the end, an error). */
int sandbox_recv_all(int fd, void *buf, size_t len);
/* sandbox_send_all(), passing descriptor pass (SCM_RIGHTS) with the first bytes; none if < 0. */
int sandbox_send_fd(int fd, const void *buf, size_t len, int pass);
/*
 * sandbox_recv_all(), taking the descriptor passed with these bytes in
 * *passed (close-on-exec; -1 if none; any more are closed).
 */
int sandbox_recv_fd(int fd, void *buf, size_t len, int *passed);

/*
 * Kills the worker (unless it died by itself: then warns how, naming it
 * what), reaps it and closes the socket.
 */
void sandbox_stop(struct sandbox *s, const char *what);

#endif
