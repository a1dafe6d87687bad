/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/emu-worker.h - the unprivileged process that emulates sampled
 * threads for the collector (collect/emu-engine.h), and the collector's
 * side of it: requests, the pages it asks for, answers, deadlines.
 *
 *   collector (root, the tracer)                  worker "dcpi-emulate" (nobody, seccomp)
 *     stops the thread, reads its state  --BURST-->  unicorn, capstone
 *     process_vm_readv of the process    <-PAGE_REQ-  a page it touches
 *                                        --PAGES--->
 *     aggregates (collect/emburst.h)     <-RESULT---  path, values, conflicts, end
 *
 * A second worker, not the unwinding one (collect/unwind-worker.h): the
 * emulator JITs (its seccomp filter allows executable memory, which the
 * table builder's must not), it runs synchronously while a thread waits
 * stopped (the unwinding requests are pipelined and must not queue behind
 * it), and a crash in the emulator (hostile code meeting a QEMU bug) must
 * cost bursts, not call stacks.
 *
 * Under dcpid the worker never gets access to the traced process: the
 * collector reads the pages it asks for (only of the process being
 * followed, while its pidfd says it lives) and sends them.  Under dcpirun,
 * whose followed processes are the ones its invoker started, a request may
 * lend the worker that process's /proc/PID/mem, read-only, closed with the
 * answer (a round trip a page waited for a CPU on a loaded host); a worker
 * taken over by hostile code could keep it, and so read, for as long as
 * the process lives, what its own invoker could read anyway.  What the worker sends is decoded
 * as untrusted input.  A worker that dies, hangs past a deadline or sends
 * garbage is killed; the request is lost (counted) and the next one starts
 * a new worker, EMU_WORKER_MAX_STARTS times at most.
 */
#ifndef DCPI_COLLECT_EMU_WORKER_H
#define DCPI_COLLECT_EMU_WORKER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/emu-proto.h"

#define EMU_WORKER_MAX_STARTS 5

struct emu_worker_stats {
	uint64_t starts;            /* workers started */
	uint64_t failures;          /* requests lost: the worker died, hung or broke the protocol */
	uint64_t pages;             /* pages served */
	uint64_t unreadable;        /* ...of them unreadable */
	uint64_t page_requests;     /* round trips */
};

struct emu_worker;

/*
 * Starts the worker; NULL (with a warning) if it cannot.  lend_memory: the
 * followed processes' memory goes with each request (dcpirun only; never
 * a system-wide daemon's, whose processes are anyone's).
 */
struct emu_worker *emu_worker_start(bool lend_memory);
void emu_worker_stop(struct emu_worker *w);

/* False once the worker failed too often to be started again. */
bool emu_worker_usable(const struct emu_worker *w);

/*
 * A burst, synchronously: sends req, serves the pages the worker asks for
 * from process pid (alive while pidfd, if >= 0, says so) until the result
 * comes or deadline (monotonic ns) passes.  Returns 0 with out filled
 * (emu_result_release), or -1 with *why (the worker is then restarted at
 * the next request).
 */
int emu_worker_burst(struct emu_worker *w, const struct emu_burst_req *req, pid_t pid, int pidfd,
		     int64_t deadline, struct emu_result *out, const char **why);

/*
 * A window, asynchronously: sends req; emu_worker_poll() serves the pages
 * and takes the answer.  Returns 0, or -1 if the worker is gone.
 */
int emu_worker_window(struct emu_worker *w, const struct emu_window_req *req, pid_t pid,
		      int pidfd, int64_t deadline);
/*
 * While a window runs: serves what has arrived, without blocking.  Returns
 * 1 with out filled (emu_window_result_release), 0 while it runs, -1 if
 * it failed (its deadline passed, the worker died: restarted next time).
 */
int emu_worker_poll(struct emu_worker *w, struct emu_window_result *out);
/* True while a window runs. */
bool emu_worker_busy(const struct emu_worker *w);
/* The descriptor to poll while a window runs, else -1. */
int emu_worker_fd(const struct emu_worker *w);
/* The worker forgets the burst it kept for a window. */
void emu_worker_drop(struct emu_worker *w);

const struct emu_worker_stats *emu_worker_stats(const struct emu_worker *w);

/* True if pid is one of the workers (the daemon never bursts them). */
bool emu_worker_owns(const struct emu_worker *w, pid_t pid);

/* The CPU time the worker running now has used (ns); 0 if none runs. */
int64_t emu_worker_cpu_ns(const struct emu_worker *w);

#endif
