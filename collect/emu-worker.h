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
 * A burst, sent: its thread has gone on (the copy of memory made at the
 * stop comes with req).  emu_worker_poll() serves the pages the worker
 * asks for from process pid (alive while pidfd, if >= 0, says so) and
 * takes the answer, until deadline (monotonic ns).  Returns 0, or -1 if no
 * worker can take it.
 */
int emu_worker_burst(struct emu_worker *w, const struct emu_burst_req *req, pid_t pid, int pidfd,
		     int64_t deadline);

/*
 * A trail, sent, once the burst's answer came and kept the engine: the
 * thread's later samples.  Returns 0, or -1 if the worker is gone or busy.
 */
int emu_worker_trail(struct emu_worker *w, const struct emu_trail_req *req, pid_t pid,
		     int pidfd, int64_t deadline);

enum emu_answer_kind { EMU_ANSWER_NONE, EMU_ANSWER_BURST, EMU_ANSWER_TRAIL };

struct emu_answer {
	enum emu_answer_kind kind;
	struct emu_result burst;
	struct emu_trail_result trail;
};

/*
 * While a request runs: serves what has arrived, without blocking.
 * Returns 1 with out filled (emu_answer_release), 0 while it runs or none
 * does, -1 if it failed (*why: its deadline passed, the worker died or
 * broke the protocol: restarted at the next request).
 */
int emu_worker_poll(struct emu_worker *w, struct emu_answer *out, const char **why);
void emu_answer_release(struct emu_answer *a);
/* True while a request runs (or a burst waits prepared). */
bool emu_worker_busy(const struct emu_worker *w);
/* True when a burst is prepared: its trail may be sent. */
bool emu_worker_ready(const struct emu_worker *w);
/* The descriptor to poll while a request runs, else -1. */
int emu_worker_fd(const struct emu_worker *w);
/* The worker forgets the burst it kept for a trail. */
void emu_worker_drop(struct emu_worker *w);

const struct emu_worker_stats *emu_worker_stats(const struct emu_worker *w);

/* True if pid is one of the workers (the daemon never bursts them). */
bool emu_worker_owns(const struct emu_worker *w, pid_t pid);

/* The CPU time the worker running now has used (ns); 0 if none runs. */
int64_t emu_worker_cpu_ns(const struct emu_worker *w);

#endif
