/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/tracestop.h - stopping a sampled thread for a burst and letting
 * it go: PTRACE_SEIZE, PTRACE_INTERRUPT, its registers, PTRACE_DETACH with
 * whatever signal arrived meanwhile.  Shared by the single-step bursts
 * (collect/burst.h) and the emulated ones (collect/emburst.h).
 *
 * A thread that exits while traced is counted; if it was the process the
 * caller watches (dcpirun's command), its wait status is kept, since the
 * tracer reaped it and dcpirun must not wait for it again.
 */
#ifndef DCPI_COLLECT_TRACESTOP_H
#define DCPI_COLLECT_TRACESTOP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct tracer {
	pid_t watch;                /* the process whose exit status is kept */
	bool reaped;                /* it exited while traced */
	int reaped_status;
	uint64_t gone;              /* threads that exited while traced */
};

/*
 * Seizes tid and stops it.  Returns 0 when it is stopped (*sig: a signal
 * to deliver when it is let go, 0 for none), -1 if it cannot be traced
 * (another tracer, ptrace refused, gone already: not stopped).
 */
int tracer_stop(struct tracer *t, pid_t tid, int *sig);

/*
 * Waits for tid's next stop: 0 for a SIGTRAP stop (a single step, the
 * interrupt), a signal number for another signal's delivery-stop (to be
 * delivered at the end), -1 if the thread is gone.
 */
int tracer_wait(struct tracer *t, pid_t tid);

/* Lets tid go, delivering sig (0: none); nothing if it is gone (sig < 0). */
void tracer_release(struct tracer *t, pid_t tid, int sig);

/* ptrace's registers in the order of db/values.h. */
void tracer_regs(const struct user_regs_struct *u, uint64_t *regs);

#endif
