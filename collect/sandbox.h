/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/sandbox.h - the collector's unprivileged workers: a process
 * forked (never exec'd) from the collector, talking to it over a socket
 * pair, that does what the root collector must not (parse binaries,
 * emulate another program's code).
 *
 * A worker
 *  - has descriptors 0-2 on /dev/null (not the journal's stream, not the
 *    invoker's terminal), its socket as 3, nothing else;
 *  - runs under resource limits (address space, CPU seconds, no files
 *    written, no core, a few descriptors: sandbox_limits);
 *  - drops to the system user SANDBOX_USER (sysusers.d/dcpi.conf: a user
 *    of its own, which nothing else runs as), or `nobody` where there is
 *    none, when it runs as root (setgroups, setresgid, setresuid,
 *    checked);
 *  - dies with its parent (PR_SET_PDEATHSIG, set after the uid drop, which
 *    clears it);
 *  - once its set-up is done, sets no_new_privs and non-dumpable (other
 *    processes of that user cannot ptrace it), and installs a seccomp
 *    filter allowing only the system calls it lists (tgkill only at
 *    itself: glibc's raise and abort); anything else kills it with
 *    SIGSYS, which sandbox_stop() reports.
 * What it sends back is untrusted input to the collector.
 *
 *   collector: sandbox_spawn(&w, "dcpi-unwind", worker_main, ctx, &limits)
 *   worker:    worker_main(sock, ctx) { ...set-up...; sandbox_seal(allowed, n); loop }
 *   collector: sandbox_stop(&w, "the unwinding worker")   // kill, reap, say why it died
 */
#ifndef DCPI_COLLECT_SANDBOX_H
#define DCPI_COLLECT_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The system user workers run as (sysusers.d/dcpi.conf); `nobody` if it does not exist. */
#define SANDBOX_USER "dcpi-worker"

struct sandbox {
	pid_t pid;      /* the worker, 0 if none */
	int fd;         /* the collector's end of the socket pair, -1 if none */
};

/* A worker's resource limits (0: the default of each). */
struct sandbox_limits {
	uint64_t as_bytes;      /* RLIMIT_AS (default 1 GiB) */
	uint64_t cpu_secs;      /* RLIMIT_CPU: SIGXCPU past it, SIGKILL 5 s later (default 600) */
};

/*
 * Forks a worker named name (ps, top): in the child, descriptors 0-2 go to
 * /dev/null and the others are closed, limits (NULL: the defaults) set,
 * privileges dropped, and main(sock, ctx) runs (it must not return).
 * Returns 0, or -1 (errno set) if it could not fork.
 */
int sandbox_spawn(struct sandbox *s, const char *name, void (*main)(int sock, void *ctx),
		  void *ctx, const struct sandbox_limits *limits);

/*
 * The same set-up in a process not forked from the collector (the
 * dcpi-emulate service's, exec'd by systemd): its socket becomes 3, 0-2
 * /dev/null, the rest closed, limits set, privileges dropped when root.
 * Exits the process if any of it fails.
 */
void sandbox_enter(int sock, const struct sandbox_limits *limits);

/*
 * In the worker, once its set-up is done: no_new_privs, non-dumpable, and
 * a seccomp filter allowing the n system calls in allowed (and those that
 * exiting needs; SYS_tgkill only at the calling process).  Exits the
 * worker if any of it fails.
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
 * The pieces of those, for a caller that sends and receives without
 * blocking (collect/emu-worker.c): m set to one buffer (iov) and, if
 * control, room for control data (zeroed); a descriptor put in it
 * (SCM_RIGHTS, room for CMSG_SPACE(sizeof(int))); the descriptors m
 * received: the first into *first if it is < 0 (first NULL: none kept),
 * every other closed.
 */
struct msghdr;
struct iovec;
void sandbox_msg(struct msghdr *m, struct iovec *iov, void *control, size_t controllen);
void sandbox_msg_pass(struct msghdr *m, int fd);
void sandbox_msg_fds(struct msghdr *m, int *first);

/*
 * Kills the worker (unless it died by itself: then warns how, naming it
 * what), reaps it (waiting 100 ms at most: one that is not gone by then
 * is reaped later, by the next sandbox_stop or sandbox_spawn) and closes
 * the socket.  Returns the signal it died of by itself (SIGSYS: a system
 * call its filter forbids), or 0.
 */
int sandbox_stop(struct sandbox *s, const char *what);

#endif
