/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/unwind-worker.h - the unprivileged process that reads binaries
 * for the collector: it turns a binary's .eh_frame into an unwind table
 * (unwind/utable.h), so that the collector, which may run as root, never
 * parses ELF or DWARF itself.
 *
 *   collector (root)                          worker (nobody, seccomp)
 *     opens the mapped file (O_PATH, a
 *     regular file, then O_RDONLY) --fd--->   maps it, utable_build()
 *     utable_decode() validates  <--table--   encodes the table
 *
 * Requests are pipelined: the collector asks for a binary's table when it
 * is mapped and goes on; answers come back in order and are read when the
 * socket is readable, or waited for (with a deadline) when a sample needs
 * a table that is still being made.
 *
 * The worker is forked (never exec'd) when the collector starts: it closes
 * every descriptor but its socket, drops to the user `nobody` when it runs
 * as root (setgroups, setresgid, setresuid), sets no_new_privs and
 * non-dumpable (no other process of that user can ptrace it), dies with
 * its parent, and installs a seccomp filter that allows only what reading
 * a descriptor it is sent and answering needs.  It can read the files the
 * collector hands it and nothing else; what it sends back is validated as
 * untrusted input.  A worker that dies, hangs or answers garbage is killed
 * and restarted (a few times); tables it could not make leave those
 * binaries to the frame-pointer fallback.
 */
#ifndef DCPI_COLLECT_UNWIND_WORKER_H
#define DCPI_COLLECT_UNWIND_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "unwind/utable.h"

/* How long the collector waits for one table. */
#define UNWIND_WORKER_TIMEOUT_MS 5000
/* Binaries larger than this are not read. */
#define UNWIND_WORKER_MAX_FILE ((size_t)2 << 30)
/* Encoded tables larger than this are refused. */
#define UNWIND_WORKER_MAX_REPLY ((size_t)256 << 20)

struct unwind_worker;

/* Starts the worker; NULL (with a warning) if it cannot. */
struct unwind_worker *unwind_worker_start(void);
void unwind_worker_stop(struct unwind_worker *w);

/*
 * Asks for the unwind table of the binary open at fd (fd < 0: of the
 * running kernel's vdso); fd stays the caller's (it may close it at once).
 * Requests are answered in order, while the collector goes on.  Sets
 * *seq to the request's number.  Returns 0, or -1 if there is no worker
 * (it could not be restarted).
 */
int unwind_worker_request(struct unwind_worker *w, int fd, uint32_t *seq);

/*
 * Called for each answer: the table (t, the callee's to keep or release)
 * or why there is none (t NULL).
 */
typedef void (*unwind_reply_fn)(void *ctx, uint32_t seq, struct utable *t, const char *why);

/*
 * Hands every answer that has arrived to fn.  With seq non-zero, waits
 * until that request is answered, at most until deadline (monotonic ns).
 * Returns 0; 1 if the deadline passed first; -1 if the worker failed (every
 * open request is then answered with a failure, and the next request starts
 * a new worker, a few times at most).
 */
int unwind_worker_poll(struct unwind_worker *w, uint32_t seq, int64_t deadline,
		       unwind_reply_fn fn, void *ctx);

/* The descriptor to poll for answers, -1 when none is awaited. */
int unwind_worker_fd(const struct unwind_worker *w);

/* Requests not answered yet. */
size_t unwind_worker_pending(const struct unwind_worker *w);

/* The worker's pid (0 if none is running): dcpictl status counts its CPU apart. */
pid_t unwind_worker_pid(const struct unwind_worker *w);

#endif
