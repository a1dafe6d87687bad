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
 * followed, while its pidfd says it lives, inside that process's readable
 * mappings and within a page budget a request: collect/pagecheck.h) and
 * sends them.  Under dcpirun, whose followed processes are the ones its
 * invoker started, a request may lend the worker that process's
 * /proc/PID/mem, read-only, closed with the answer (a round trip a page
 * waited for a CPU on a loaded host); a worker taken over by hostile code
 * could keep it, and so read, for as long as the process lives, what its
 * own invoker could read anyway.
 *
 * One worker process per user whose threads are followed (EMU_WORKER_PROCS
 * at once, the least recently used replaced): a worker taken over by one
 * user's code never sees another user's memory.  What a worker sends is
 * untrusted input: it is read without blocking, every request has a
 * deadline (a worker that never answers or never reads what it is sent
 * costs that request), every count of an answer is bounded by the request
 * (emu_result_check), and a worker that dies, hangs or breaks the protocol
 * is killed.  Its user's next worker starts after a back-off (1 s,
 * doubling to 5 minutes, back to nothing after an answer), so that
 * nobody can switch bursts off for good, nor make the daemon fork in a
 * loop.
 *
 * The worker says first whether it can emulate (its hello): under a unit
 * with MemoryDenyWriteExecute= (dcpid.service) the filter the forked
 * worker inherits refuses unicorn's writable and executable code buffer.
 * Then bursts are off, said so, unless the workers come from the
 * dcpi-emulate socket service (emu_worker_configure: --emulate-socket),
 * whose own unit allows it: the daemon connects to the service once per
 * user instead of forking (it never execs), and takes the worker's pid
 * from the kernel (SO_PASSCRED).
 *
 * Why a request was lost, or a burst not tried, is counted by cause
 * (emu_worker_causes: dcpictl status, dcpirun's summary).
 */
#ifndef DCPI_COLLECT_EMU_WORKER_H
#define DCPI_COLLECT_EMU_WORKER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/emu-proto.h"

struct strbuf;

/* Worker processes at once (one per user followed). */
#define EMU_WORKER_PROCS 4
/*
 * Pages one request (a burst, a trail) may have the collector read: twice
 * what the worker's engine fetches at most (EMU_MAX_PAGES, 64 MiB).
 */
#define EMU_PAGE_BUDGET 32768
/* A worker that failed is started again after this, doubling up to the most. */
#define EMU_BACKOFF_NS (1000 * 1000000LL)
#define EMU_BACKOFF_MAX_NS (300 * 1000 * 1000000LL)

/* Why a request was lost, or a burst not tried. */
enum emu_cause {
	EMU_CAUSE_NO_EXEC,          /* no writable and executable memory (MemoryDenyWriteExecute) */
	EMU_CAUSE_NO_ENGINE,        /* the emulator would not start */
	EMU_CAUSE_START,            /* the worker could not be started (fork, the service) */
	EMU_CAUSE_BACKOFF,          /* its user's worker failed lately: waiting to start another */
	EMU_CAUSE_DIED,             /* the worker died (crashed, killed) */
	EMU_CAUSE_SIGSYS,           /* ...making a system call its sandbox forbids */
	EMU_CAUSE_TIMEOUT,          /* no answer by the deadline, or it would not read */
	EMU_CAUSE_PROTOCOL,         /* garbage, a count over the request's, too much */
	EMU_CAUSE_PAGES,            /* more pages asked for than a request's budget */
	EMU_CAUSE_GONE,             /* the followed process was gone */
	EMU_CAUSE__COUNT,
};
/* "no executable memory (MemoryDenyWriteExecute)", ... */
const char *emu_cause_name(enum emu_cause c);
/* "no_exec", ...: its JSON key. */
const char *emu_cause_key(enum emu_cause c);

struct emu_worker_stats {
	uint64_t starts;            /* workers started */
	uint64_t failures;          /* requests lost: the worker died, hung or broke the protocol */
	uint64_t pages;             /* pages served */
	uint64_t unreadable;        /* ...of them unreadable */
	uint64_t outside;           /* ...of them outside the process's readable mappings: not read */
	uint64_t page_requests;     /* round trips */
	uint64_t lost[EMU_CAUSE__COUNT];        /* requests lost, by cause */
	uint64_t not_started[EMU_CAUSE__COUNT]; /* bursts not tried (emu_worker_can_take), by cause */
	uint64_t reads;             /* reads of the thread's files served */
};

/* A file of a burst, as the collector serves it: the thread's fd, the next offset, its own fd. */
struct emu_worker_file {
	uint32_t fd;
	uint64_t pos;
	int local;
};

struct emu_worker;

/*
 * Where workers come from, for those started after the call (one
 * collector a process): forked (service NULL), or a connection to the
 * dcpi-emulate socket service at `service` (--emulate-socket).  main, if
 * set, replaces the worker's own (a test that plays the worker: hostile
 * answers, floods, silence).  attach: the one worker is the other end of
 * attach_fd, no process (a fuzz target plays it; no other is started).
 */
struct emu_worker_opts {
	const char *service;
	void (*main)(int sock, void *ctx);
	void *ctx;
	bool attach;
	int attach_fd;
};
void emu_worker_configure(const struct emu_worker_opts *o);

/*
 * Starts the workers: a first one, unassigned, whose hello is awaited (2 s
 * at most) so that bursts that cannot be emulated at all are known (and
 * warned of) at once.  lend_memory: the followed processes' memory goes
 * with each request (dcpirun only; never a system-wide daemon's, whose
 * processes are anyone's).  Never NULL.
 */
struct emu_worker *emu_worker_start(bool lend_memory);
void emu_worker_stop(struct emu_worker *w);

/* False once bursts cannot be emulated at all (no executable memory): emu_worker_off says why. */
bool emu_worker_usable(const struct emu_worker *w);
/* Why bursts are off (EMU_CAUSE__COUNT: they are not). */
enum emu_cause emu_worker_off(const struct emu_worker *w);
/*
 * True if a burst of process pid may be sent now: bursts are on and its
 * user's worker is not backing off after failures (else counted in
 * not_started).  Call it before stopping the thread.
 */
bool emu_worker_can_take(struct emu_worker *w, pid_t pid);

/*
 * A burst, sent: its thread has gone on (the copy of memory made at the
 * stop comes with req).  emu_worker_poll() serves the pages the worker
 * asks for from process pid (alive while pidfd, if >= 0, says so), and the
 * reads of req->files (local[i]: the collector's own descriptor of
 * req->files[i], open until the burst's end), and takes the answer, until
 * deadline (monotonic ns).  Returns 0, or -1 if no worker can take it.
 */
int emu_worker_burst(struct emu_worker *w, const struct emu_burst_req *req, pid_t pid, int pidfd,
		     const int *local, int64_t deadline);

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
/* The CPU time of every worker so far, those gone included (ns). */
int64_t emu_worker_total_cpu_ns(const struct emu_worker *w);
/* Of it, the forked workers' that are gone (reaped: in the collector's RUSAGE_CHILDREN). */
int64_t emu_worker_reaped_cpu_ns(const struct emu_worker *w);
/* Worker processes running now. */
size_t emu_worker_procs(const struct emu_worker *w);

/*
 * The requests lost (not_started: the bursts not tried), by cause: "2 a
 * forbidden system call (SIGSYS), 1 timed out"; nothing if none.
 */
void emu_worker_causes(const struct emu_worker *w, bool not_started, struct strbuf *out);
struct json_writer;
/* The same as JSON members "lost_causes", "not_started" (objects by cause) and "off". */
void emu_worker_causes_json(const struct emu_worker *w, struct json_writer *j);

/*
 * The worker's resource limits: its address space holds unicorn's code
 * buffers, reserved, not used (measured under dcpid: 10.7 GB at the most
 * of its engines and their pages: 32 GiB); CPU for a long life (past it,
 * it is replaced).
 */
struct sandbox_limits;
extern const struct sandbox_limits emu_worker_limits;

/* The worker's side, for the dcpi-emulate service's main: serves on sock, never returns. */
void emu_worker_serve(int sock);
/* The worker's seccomp filter (a test's worker takes it to show what it forbids). */
void emu_worker_seal(void);

#endif
