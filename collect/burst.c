/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "collect/burst.h"
#include "collect/procs.h"
#include "core/die.h"
#include "core/hash.h"
#include "core/timeutil.h"
#include "core/xalloc.h"
#include "db/db.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>

void bursts_init(struct bursts *b, double budget, unsigned max_steps, pid_t watch)
{
	memset(b, 0, sizeof(*b));
	b->budget = budget;
	b->max_steps = max_steps ? max_steps : BURST_DEFAULT_STEPS;
	if (b->max_steps > BURSTS_MAX_STEPS)
		b->max_steps = BURSTS_MAX_STEPS;
	b->tracer.watch = watch;
	burst_set_init(&b->set);
}

void bursts_release(struct bursts *b)
{
	burst_set_release(&b->set);
	tracer_clear(&b->tracer);
}

bool bursts_due(struct bursts *b, int64_t now)
{
	if (!(b->budget > 0))
		return false;
	if (!b->started)
		b->started = now;
	return now >= b->next_at && (double)b->st.ns <= b->budget * (double)(now - b->started);
}

#if defined(__x86_64__)

/* True if the instruction at pc enters the kernel (syscall, sysenter, int 0x80). */
static bool enters_kernel(pid_t tid, uint64_t pc, bool *unreadable)
{
	long w;

	errno = 0;
	w = ptrace(PTRACE_PEEKTEXT, tid, (void *)pc, NULL);
	*unreadable = errno != 0;
	w &= 0xffff;
	return w == 0x050f || w == 0x340f || w == 0x80cd;
}

static void resolve(struct bursts *b, struct procs *procs, struct addr_space *as, uint64_t pc,
		    struct burst_step *st)
{
	uint32_t image;
	uint64_t off;

	if (!as || !procs_resolve(procs, as, pc, &image, &off)) {
		st->image = BURSTS_NO_IMAGE;
		st->offset = pc;
		return;
	}
	st->image = burst_set_key(&b->set, procs_cimage(procs, image)->img.key);
	st->offset = off;
}

/*
 * Steps tid (stopped) into trace t; returns the signal to deliver at
 * detach, or -1 if it is gone or its step did not come back in time.
 */
static int follow(struct bursts *b, pid_t tid, struct procs *procs, struct addr_space *as,
		  struct burst_trace *t, int64_t start)
{
	if (!tracer_may_step(tid)) {
		b->st.trap_masked++;
		return 0;
	}
	for (unsigned k = 0; k < b->max_steps; k++) {
		struct user_regs_struct u;
		struct burst_step st;
		bool syscall, unreadable;
		int sig;

		if (time_monotonic_ns() - start > BURST_MAX_NS ||
		    ptrace(PTRACE_GETREGS, tid, NULL, &u))
			return 0;
		syscall = enters_kernel(tid, u.rip, &unreadable);
		if (unreadable)
			return 0;
		tracer_regs(&u, st.regs);
		resolve(b, procs, as, u.rip, &st);
		burst_trace_push(t, &st);
		if (syscall) {
			b->st.syscalls++;
			return 0;
		}
		if (ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL))
			return 0;
		/* A step that does not come back in time (a fault on a FUSE file) ends it too. */
		if ((sig = tracer_wait(&b->tracer, tid, 0)) != 0) {
			if (sig > 0)
				b->st.signals++;
			return sig == TRACER_STOPPED_ELSE ? 0 : sig;
		}
		b->st.steps++;
	}
	return 0;
}

size_t bursts_run(struct bursts *b, pid_t pid, pid_t tid, struct procs *procs, int64_t now)
{
	struct addr_space *as = procs_lookup(procs, (uint32_t)pid);
	struct burst_trace *t;
	int64_t start = time_monotonic_ns(), took;
	size_t n;
	int sig;

	(void)now;
	if (!as || tid <= 0)
		return 0;
	if (tracer_stop(&b->tracer, tid, &sig)) {
		b->st.refused++;
		return 0;
	}
	t = burst_set_add(&b->set, (uint32_t)tid);
	if (!sig)
		sig = follow(b, tid, procs, as, t, start);
	tracer_release(&b->tracer, tid, sig);
	took = time_monotonic_ns() - start;
	b->st.ns += took;
	/* At the budget's pace: the next one after budget's share of time has passed. */
	b->next_at = start + took + (int64_t)((double)took / b->budget);
	n = b->set.v[b->set.n - 1].n;
	if (!n) {
		free(b->set.v[--b->set.n].steps);
		return 0;
	}
	b->set.seen++;
	b->st.bursts++;
	return n;
}

#else

size_t bursts_run(struct bursts *b, pid_t pid, pid_t tid, struct procs *procs, int64_t now)
{
	(void)b, (void)pid, (void)tid, (void)procs, (void)now;
	return 0;
}

#endif

int bursts_write(struct bursts *b, struct db *db, uint32_t seq)
{
	if (!b->set.n)
		return 0;
	if (db_bursts_merge(db, seq, &b->set))
		return -1;
	b->st.written += b->set.n;
	bursts_clear(b);
	return 0;
}

void bursts_clear(struct bursts *b)
{
	burst_set_release(&b->set);
}
