/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "collect/tracestop.h"
#include "collect/procinfo.h"
#include "core/timeutil.h"
#include "core/xalloc.h"
#include "db/values.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif
#ifndef TRAP_TRACE
#define TRAP_TRACE 2
#endif

/* Threads left seized at most: past it no thread is stopped until some are let go. */
#define TRACER_MAX_LATE 256

/* ---- the threads left seized ---------------------------------------------------------- */

static size_t late_index(const struct tracer *t, pid_t tid)
{
	for (size_t i = 0; i < t->n_late; i++)
		if (t->late[i].tid == tid)
			return i;
	return SIZE_MAX;
}

static void late_add(struct tracer *t, pid_t tid, bool stepped)
{
	if (late_index(t, tid) != SIZE_MAX)
		return;
	ALLOC_GROW(t->late, t->n_late + 1, t->alloc_late);
	t->late[t->n_late++] = (struct tracer_late){ tid, stepped, time_monotonic_ns() };
}

static void late_remove(struct tracer *t, pid_t tid)
{
	size_t i = late_index(t, tid);

	if (i != SIZE_MAX)
		t->late[i] = t->late[--t->n_late];
}

void tracer_clear(struct tracer *t)
{
	free(t->late);
	t->late = NULL;
	t->n_late = t->alloc_late = 0;
}

size_t tracer_pending(const struct tracer *t)
{
	return t->n_late;
}

/* ---- wait statuses ---------------------------------------------------------------------- */

/* A wait status that says the thread is gone (and, for the watched process, what it said). */
static bool gone(struct tracer *t, pid_t tid, int status)
{
	if (!WIFEXITED(status) && !WIFSIGNALED(status))
		return false;
	t->gone++;
	if (tid == t->watch) {
		t->reaped = true;
		t->reaped_status = status;
	}
	late_remove(t, tid);
	return true;
}

/*
 * Waits for a status of tid until deadline without blocking past it (the
 * stop normally comes within tens of us; the sleeps between looks grow
 * from 2 us to 200 us).  1 with *status, 0 if none came in time, -1 if tid
 * is not ours to wait for (reaped by someone else, never traced).
 */
static int wait_until(pid_t tid, int64_t deadline, int *status)
{
	long sleep_ns = 2000;

	for (;;) {
		pid_t r = waitpid(tid, status, WNOHANG | __WALL);
		int64_t left;

		if (r == tid)
			return 1;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if ((left = deadline - time_monotonic_ns()) <= 0)
			return 0;
		{
			struct timespec ts = { 0, sleep_ns < left ? sleep_ns : (long)left };

			nanosleep(&ts, NULL);
		}
		if (sleep_ns < 200000)
			sleep_ns *= 2;
	}
}

/* The signal a signal-delivery-stop of tid is for; 0 if it is our single step's trap. */
static int delivered_signal(pid_t tid, int sig, bool stepping)
{
	siginfo_t si;

	if (sig != SIGTRAP || !stepping)
		return sig;
	/* A step traps with TRAP_TRACE; the program's own int3 or raise() has another code. */
	if (!ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) && si.si_code == TRAP_TRACE)
		return 0;
	return sig;
}

/* The hold of the thread stopped now begins, or ends. */
static void hold_begin(struct tracer *t, pid_t tid)
{
	t->st.stops++;
	t->held = tid;
	t->held_since = time_monotonic_ns();
}

static void hold_end(struct tracer *t, pid_t tid)
{
	int64_t took;

	if (t->held != tid || !t->held)
		return;
	took = time_monotonic_ns() - t->held_since;
	t->st.held_ns += took;
	if (took > t->st.longest_ns)
		t->st.longest_ns = took;
	t->held = 0;
}

/* ---- stopping ---------------------------------------------------------------------------- */

/* Thread tid's state letter in /proc (R, S, D, T, t, Z...), 0 if it cannot be read. */
static char thread_state(pid_t tid)
{
	char buf[512];
	const char *p = procinfo_stat(tid, buf, sizeof(buf));

	return p ? *p : 0;
}

bool tracer_may_step(pid_t tid)
{
	char blk[32], ign[32];
	unsigned long long b, i;

	if (!procinfo_status(tid, "SigBlk", blk, sizeof(blk)) ||
	    !procinfo_status(tid, "SigIgn", ign, sizeof(ign)) || sscanf(blk, "%llx", &b) != 1 ||
	    sscanf(ign, "%llx", &i) != 1)
		return false;
	return !((b | i) >> (SIGTRAP - 1) & 1);
}

int tracer_stop(struct tracer *t, pid_t tid, int *sig)
{
	return tracer_stop_within(t, tid, t->wait_ns > 0 ? t->wait_ns : TRACER_WAIT_NS, sig);
}

int tracer_stop_within(struct tracer *t, pid_t tid, int64_t wait_ns, int *sig)
{
	int64_t deadline;
	char state;

	*sig = 0;
	tracer_poll(t);
	if (tid <= 0 || late_index(t, tid) != SIZE_MAX || t->n_late >= TRACER_MAX_LATE) {
		t->st.refused++;
		return -1;
	}
	/*
	 * A thread in D sleeps until something else happens (a vfork's child
	 * execs or exits, a FUSE server answers): the interrupt would not
	 * stop it before then.  One that enters such a sleep after this look
	 * is what the deadline is for.
	 */
	state = thread_state(tid);
	if (state == 'D') {
		t->st.blocked++;
		return -1;
	}
	if (!state || state == 'Z' || state == 'X' || ptrace(PTRACE_SEIZE, tid, NULL, NULL)) {
		t->st.refused++;
		return -1;
	}
	deadline = time_monotonic_ns() + wait_ns;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL)) {
		/* Gone between the two calls: reaped now or later. */
		late_add(t, tid, false);
		tracer_poll(t);
		t->st.refused++;
		return -1;
	}
	for (;;) {
		int status, r = wait_until(tid, deadline, &status);

		if (r == 0) {
			/* Not stopped in time: it is let go when it stops (tracer_poll). */
			late_add(t, tid, false);
			t->st.late++;
			return -1;
		}
		if (r < 0 || gone(t, tid, status)) {
			t->st.refused += r < 0;
			return -1;
		}
		if (!WIFSTOPPED(status))
			continue;
		/*
		 * PTRACE_EVENT_STOP: the interrupt (SIGTRAP), or a group stop
		 * (SIGSTOP and its kin: let go, it stays stopped).  A plain
		 * signal-delivery-stop is a signal of the program's own, SIGTRAP
		 * included: delivered when the thread is let go.
		 */
		if ((status >> 16) == 0)
			*sig = WSTOPSIG(status);
		hold_begin(t, tid);
		return 0;
	}
}

int tracer_wait(struct tracer *t, pid_t tid, int64_t deadline)
{
	if (!deadline)
		deadline = time_monotonic_ns() + TRACER_STEP_NS;
	for (;;) {
		int status, r = wait_until(tid, deadline, &status);

		if (r == 0) {
			hold_end(t, tid);
			late_add(t, tid, true);
			t->st.late++;
			return -1;
		}
		if (r < 0 || gone(t, tid, status)) {
			hold_end(t, tid);
			return -1;
		}
		if (!WIFSTOPPED(status))
			continue;
		if ((status >> 16) != 0)
			return TRACER_STOPPED_ELSE;
		return delivered_signal(tid, WSTOPSIG(status), true);
	}
}

/* Reaps tid if it has exited, or leaves it to tracer_poll(). */
static void reap_later(struct tracer *t, pid_t tid)
{
	late_add(t, tid, false);
	tracer_poll(t);
}

void tracer_release(struct tracer *t, pid_t tid, int sig)
{
	hold_end(t, tid);
	if (sig < 0) {
		if (late_index(t, tid) == SIZE_MAX)
			reap_later(t, tid);
		return;
	}
	if (sig)
		t->st.signals++;
	/* It fails when the thread is no longer stopped: killed meanwhile, and exiting. */
	if (ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig))
		reap_later(t, tid);
}

/* A status of a thread left seized: let it go if it stopped, forget it if it exited. */
static void finish(struct tracer *t, pid_t tid, int status)
{
	size_t i = late_index(t, tid);
	int sig = 0;

	if (gone(t, tid, status) || !WIFSTOPPED(status))
		return;
	/* The late interrupt's stop or a group stop: no signal; else the signal (not our step's). */
	if ((status >> 16) == 0)
		sig = delivered_signal(tid, WSTOPSIG(status), i != SIZE_MAX && t->late[i].stepped);
	if (ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig))
		return;         /* killed meanwhile: its exit comes next */
	if (sig)
		t->st.signals++;
	t->st.late_released++;
	late_remove(t, tid);
}

void tracer_poll(struct tracer *t)
{
	for (size_t i = t->n_late; i-- > 0;) {
		pid_t tid = t->late[i].tid;
		int status;
		pid_t r;

		do
			r = waitpid(tid, &status, WNOHANG | __WALL);
		while (r < 0 && errno == EINTR);
		if (r < 0)
			late_remove(t, tid);    /* not ours any more: reaped elsewhere */
		else if (r == tid)
			finish(t, tid, status);
	}
}

bool tracer_wait_child(struct tracer *t, pid_t pid, int *status)
{
	tracer_poll(t);
	for (;;) {
		int st;
		pid_t r;

		if (t->reaped && t->watch == pid) {
			*status = t->reaped_status;
			return true;
		}
		r = waitpid(pid, &st, WNOHANG | __WALL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			late_remove(t, pid);
			*status = st;
			return true;
		}
		/* A stop of the child as a tracee (a late one): let it go. */
		if (WIFSTOPPED(st))
			finish(t, pid, st);
	}
}

void tracer_regs(const struct user_regs_struct *u, uint64_t *r)
{
	r[VREG_RAX] = u->rax, r[VREG_RBX] = u->rbx, r[VREG_RCX] = u->rcx, r[VREG_RDX] = u->rdx;
	r[VREG_RSI] = u->rsi, r[VREG_RDI] = u->rdi, r[VREG_RBP] = u->rbp, r[VREG_RSP] = u->rsp;
	r[VREG_R8] = u->r8, r[VREG_R9] = u->r9, r[VREG_R10] = u->r10, r[VREG_R11] = u->r11;
	r[VREG_R12] = u->r12, r[VREG_R13] = u->r13, r[VREG_R14] = u->r14, r[VREG_R15] = u->r15;
	r[VREG_RFLAGS] = u->eflags;
}
