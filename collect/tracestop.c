/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "collect/tracestop.h"
#include "db/values.h"

#include <errno.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif

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
	return true;
}

int tracer_wait(struct tracer *t, pid_t tid)
{
	int status;

	for (;;) {
		pid_t r = waitpid(tid, &status, __WALL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (gone(t, tid, status))
			return -1;
		if (!WIFSTOPPED(status))
			continue;
		if (WSTOPSIG(status) == SIGTRAP || (status >> 16) == PTRACE_EVENT_STOP)
			return 0;
		return WSTOPSIG(status);
	}
}

int tracer_stop(struct tracer *t, pid_t tid, int *sig)
{
	if (tid <= 0 || ptrace(PTRACE_SEIZE, tid, NULL, NULL))
		return -1;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) || (*sig = tracer_wait(t, tid)) < 0) {
		if (!t->reaped)
			ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return -1;
	}
	return 0;
}

void tracer_release(struct tracer *t, pid_t tid, int sig)
{
	(void)t;
	if (sig >= 0)
		ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig);
}

void tracer_regs(const struct user_regs_struct *u, uint64_t *r)
{
	r[VREG_RAX] = u->rax, r[VREG_RBX] = u->rbx, r[VREG_RCX] = u->rcx, r[VREG_RDX] = u->rdx;
	r[VREG_RSI] = u->rsi, r[VREG_RDI] = u->rdi, r[VREG_RBP] = u->rbp, r[VREG_RSP] = u->rsp;
	r[VREG_R8] = u->r8, r[VREG_R9] = u->r9, r[VREG_R10] = u->r10, r[VREG_R11] = u->r11;
	r[VREG_R12] = u->r12, r[VREG_R13] = u->r13, r[VREG_R14] = u->r14, r[VREG_R15] = u->r15;
	r[VREG_RFLAGS] = u->eflags;
}
