/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/tracestop.h - stopping a sampled thread for a burst and letting
 * it go, without ever waiting longer than a deadline: PTRACE_SEIZE,
 * PTRACE_INTERRUPT, PTRACE_DETACH with whatever signal of the program's
 * own arrived meanwhile.  Shared by the single-step bursts
 * (collect/burst.h) and the emulated ones (collect/emburst.h).
 *
 * The collector's loop (dcpid's sampling, its control socket) must never
 * wait on another user's thread.  A thread sampled in user mode may have
 * entered the kernel since, and sleep there until something else happens:
 * a vfork parent until its child execs or exits, a reader of a FUSE file
 * until the server answers (an interrupted FUSE request waits killably:
 * state D).  So:
 *
 *  - a thread in state D (an uninterruptible or killable sleep, a vfork
 *    parent's wait) is not stopped at all (counted as `blocked`);
 *  - a stop is awaited for at most wait_ns (a few ms: the thread only needs
 *    a CPU to take the interrupt).  If it does not come in time it is
 *    abandoned (`late`): the thread stays seized, and tracer_poll() lets
 *    it go the moment it stops (PTRACE_DETACH needs a stopped tracee),
 *    with the signal it stopped for, if any;
 *  - a thread that exits while traced is reaped (waitpid __WALL): an
 *    exited tracee stays a zombie for its tracer, and a process whose
 *    thread is such a zombie is never reported to its own parent;
 *  - a stop is told apart from a signal (status >> 16, PTRACE_GETSIGINFO):
 *    the interrupt is PTRACE_EVENT_STOP with SIGTRAP, a single step a
 *    SIGTRAP with si_code TRAP_TRACE; any other signal, a SIGTRAP of the
 *    program's own included (int3, raise), is delivered when the thread
 *    is let go.
 *
 * Typical use (collect/emburst.c):
 *
 *   if (tracer_stop(&t, tid, &sig))           // not stopped: refused, blocked, late, gone
 *           return;                            // (counted in t)
 *   ... read the registers; sig: a signal that arrived, to deliver ...
 *   tracer_release(&t, tid, sig);
 *
 *   and at every turn of the loop (and when SIGCHLD arrives):
 *   tracer_poll(&t);                           // lets late stops go, reaps exits
 *
 * A thread that exits while traced is counted; if it was the process the
 * caller watches (dcpirun's command), its wait status is kept, since the
 * tracer reaped it and dcpirun must not wait for it again
 * (tracer_wait_child() does both for the caller).
 */
#ifndef DCPI_COLLECT_TRACESTOP_H
#define DCPI_COLLECT_TRACESTOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

/* How long tracer_stop() waits for the stop by default (t->wait_ns 0). */
#define TRACER_WAIT_NS (5 * 1000000LL)
/* How long a single step is awaited (tracer_wait()'s usual deadline). */
#define TRACER_STEP_NS (5 * 1000000LL)

/* A thread seized whose stop came late, or that exited unreaped: tracer_poll() finishes it. */
struct tracer_late {
	pid_t tid;
	bool stepped;               /* a single step's trap may come: not a signal to deliver */
	int64_t since;              /* monotonic ns it was abandoned */
};

struct tracer_stats {
	uint64_t stops;             /* threads stopped */
	uint64_t refused;           /* could not be seized (another tracer, ptrace refused) */
	uint64_t blocked;           /* not stopped: in state D (a vfork parent, FUSE, I/O) */
	uint64_t late;              /* the stop did not come in time: let go when it came */
	uint64_t late_released;     /* ...of them let go since */
	uint64_t signals;           /* signals of the program's own delivered at release */
	int64_t held_ns;            /* time threads were held stopped, from the stop to the release */
	int64_t longest_ns;         /* ...the longest hold */
};

struct tracer {
	pid_t watch;                /* the process whose exit status is kept */
	bool reaped;                /* it exited while traced */
	int reaped_status;
	int64_t wait_ns;            /* tracer_stop()'s wait (0: TRACER_WAIT_NS) */
	uint64_t gone;              /* threads that exited while traced (reaped) */
	struct tracer_stats st;
	/* Threads still seized: late stops, exits not reaped yet. */
	struct tracer_late *late;
	size_t n_late, alloc_late;
	/* The thread held now, and since when (its hold is added at release). */
	pid_t held;
	int64_t held_since;
};

/*
 * Seizes tid and stops it, waiting t->wait_ns at most.  Returns 0 when it
 * is stopped (*sig: a signal to deliver when it is let go, 0 for none), -1
 * if it is not (another tracer or ptrace refused, in state D, the stop
 * late, gone already: each counted in t->st; a late one is let go by
 * tracer_poll()).
 */
int tracer_stop(struct tracer *t, pid_t tid, int *sig);
/* The same, waiting wait_ns at most. */
int tracer_stop_within(struct tracer *t, pid_t tid, int64_t wait_ns, int *sig);

/*
 * Waits for tid's next stop after a PTRACE_SINGLESTEP, until deadline
 * (monotonic ns; 0: TRACER_STEP_NS from now): 0 for the step's trap, a
 * signal number for another signal's delivery-stop (to be delivered at
 * the end), TRACER_STOPPED_ELSE for a stop of another kind (a group
 * stop: let it go with no signal), -1 if the thread is gone or its stop
 * is late (then it is tracer_poll()'s: release it with -1).
 */
#define TRACER_STOPPED_ELSE (-2)
int tracer_wait(struct tracer *t, pid_t tid, int64_t deadline);

/*
 * True if stopped thread tid may be single-stepped: it neither blocks nor
 * ignores SIGTRAP.  A step's trap is forced on the thread, and the kernel
 * forces a blocked or ignored signal by resetting its action to the
 * default: the program's own SIGTRAP handler (a debugger, a JIT's guard)
 * would be lost, and its next int3 would kill it.
 */
bool tracer_may_step(pid_t tid);

/*
 * Lets tid go, delivering sig (0: none).  sig < 0: tid is gone or late
 * (tracer_wait() said -1): nothing to let go; an exit is reaped now or by
 * tracer_poll().
 */
void tracer_release(struct tracer *t, pid_t tid, int sig);

/*
 * Without waiting: lets go the late threads that have stopped since, and
 * reaps those that exited.  Call it at every turn of the collector's loop.
 */
void tracer_poll(struct tracer *t);

/*
 * Forgets the threads still seized (the kernel lets them go when the
 * tracer exits) and frees what t holds.
 */
void tracer_clear(struct tracer *t);

/* Threads still seized (late, or exited and not reaped yet). */
size_t tracer_pending(const struct tracer *t);

/*
 * The tracer's caller's own child pid (dcpirun's command), without
 * waiting: true with its wait status once it has exited, whether the
 * tracer or this call reaped it.  A ptrace stop of it that the wait sees
 * is handled as tracer_poll() would.
 */
bool tracer_wait_child(struct tracer *t, pid_t pid, int *status);

/* ptrace's registers in the order of db/values.h. */
void tracer_regs(const struct user_regs_struct *u, uint64_t *regs);

#endif
