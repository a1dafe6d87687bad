/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/whose.h - whose values the collector records: the registers of
 * --values samples, and the bursts (registers, written values, raw traces)
 * of --bursts.  Everything else (where samples fall, call stacks) is
 * recorded for every process as before.
 *
 * A process's registers may hold anything it holds: a key, a password.
 * PTRACE_SEIZE as root works on setuid and non-dumpable processes (sshd,
 * sudo, gpg-agent), and the profiles are readable by the database's group.
 * So values are recorded only of a process that is
 *
 *  - dumpable: its own user could ptrace it, read it, dump its core (a
 *    program that made itself non-dumpable, a setuid program, is left
 *    alone), and
 *  - one of the chosen users': dcpid's --values-users list (none unless
 *    configured: "all" takes every user, still dumpable processes only),
 *    dcpirun's invoker by default.
 *
 * How it is told, from /proc: a process's directory belongs to its
 * effective uid when it is dumpable, to root when it is not (the kernel's
 * task_dump_owner).  For a process of root's own that cannot tell them
 * apart: then the kernel is asked to compare its address space with the
 * collector's (kcmp, a ptrace read check) with CAP_SYS_PTRACE dropped from
 * the calling thread's effective set for the call, which it allows only
 * for a dumpable process whose user and group are the caller's (under the
 * unit's Group=dcpi, root's processes are therefore never recorded).
 *
 * Values are aggregated late (the samples of a read round, in time order):
 * a verdict checked at time T is good for the samples taken before T, and
 * a newer sample has it checked again (one look at /proc per process per
 * round).  A burst checks afresh before its thread is stopped.
 */
#ifndef DCPI_COLLECT_WHOSE_H
#define DCPI_COLLECT_WHOSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/u64map.h"

struct whose_entry {
	int64_t checked;            /* monotonic ns of the look; 0: none */
	bool ok;
};

struct whose_stats {
	uint64_t checks;            /* looks at /proc */
	uint64_t not_dumpable;      /* refusals: not dumpable (or root's, not told apart) */
	uint64_t not_chosen;        /* refusals: a user not in the list */
	uint64_t samples_refused;   /* value samples not recorded (the collector's count) */
	uint64_t bursts_refused;    /* bursts not taken: not allowed, or the daemon's own */
};

struct whose {
	bool all;                   /* every user (dumpable processes only) */
	uid_t *uids;
	size_t n_uids;
	struct u64map at;           /* pid -> index into v + 1 */
	struct whose_entry *v;
	size_t n, alloc;
	struct whose_stats st;
};

void whose_init(struct whose *w);
void whose_release(struct whose *w);

/*
 * Parses a list of users: names or uids, comma-separated; "all" for every
 * user, "" for none.  0, or -1 after reporting an unknown user.
 */
int whose_parse(struct whose *w, const char *list);
/* Adds one user. */
void whose_add(struct whose *w, uid_t uid);
/* True if no process can be recorded (no user chosen). */
bool whose_none(const struct whose *w);

/* "alice, 1001" or "all users" or "nobody": the list as a phrase, into buf. */
void whose_describe(const struct whose *w, char *buf, size_t size);

/*
 * May the values of process pid, sampled at time (monotonic ns), be
 * recorded?  A verdict checked after time is reused.
 */
bool whose_allowed(struct whose *w, pid_t pid, int64_t time);
/* The same, looked at now whatever was cached (a burst, before the stop). */
bool whose_check(struct whose *w, pid_t pid);
/* Process pid exec'd or exited: what was known of it is forgotten. */
void whose_forget(struct whose *w, pid_t pid);

#endif
