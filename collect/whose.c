/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "collect/whose.h"
#include "collect/procinfo.h"
#include "core/cli.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/timeutil.h"
#include "core/xalloc.h"

#include <linux/capability.h>
#include <linux/kcmp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Processes remembered at most; past it the cache starts again. */
#define WHOSE_MAX 65536

void whose_init(struct whose *w)
{
	memset(w, 0, sizeof(*w));
	u64map_init(&w->at);
}

void whose_release(struct whose *w)
{
	free(w->uids);
	free(w->v);
	u64map_release(&w->at);
	memset(w, 0, sizeof(*w));
}

void whose_add(struct whose *w, uid_t uid)
{
	for (size_t i = 0; i < w->n_uids; i++)
		if (w->uids[i] == uid)
			return;
	w->uids = xreallocarray(w->uids, w->n_uids + 1, sizeof(*w->uids));
	w->uids[w->n_uids++] = uid;
}

int whose_parse(struct whose *w, const char *list)
{
	char *copy = xstrdup(list), *tok, *save = NULL;
	int r = 0;

	for (tok = strtok_r(copy, ", ", &save); tok && !r; tok = strtok_r(NULL, ", ", &save)) {
		struct passwd *pw;
		uint64_t v;

		if (!strcmp(tok, "all"))
			w->all = true;
		else if ((pw = getpwnam(tok)))
			whose_add(w, pw->pw_uid);
		else if (!cli_parse_range(tok, 0, UINT32_MAX - 1, &v))
			whose_add(w, (uid_t)v);
		else
			r = errorf("unknown user '%s' (--values-users takes user names or uids, or all)",
				   tok);
	}
	free(copy);
	return r;
}

bool whose_none(const struct whose *w)
{
	return !w->all && !w->n_uids;
}

void whose_describe(const struct whose *w, char *buf, size_t size)
{
	struct strbuf sb = STRBUF_INIT;

	if (w->all)
		strbuf_addstr(&sb, "all users");
	for (size_t i = 0; !w->all && i < w->n_uids; i++) {
		struct passwd *pw = getpwuid(w->uids[i]);

		if (pw)
			strbuf_addf(&sb, "%s%s", i ? ", " : "", pw->pw_name);
		else
			strbuf_addf(&sb, "%s%lu", i ? ", " : "", (unsigned long)w->uids[i]);
	}
	snprintf(buf, size, "%s", sb.len ? sb.buf : "nobody's");
	strbuf_release(&sb);
}

static bool chosen(const struct whose *w, uid_t uid)
{
	if (w->all)
		return true;
	for (size_t i = 0; i < w->n_uids; i++)
		if (w->uids[i] == uid)
			return true;
	return false;
}

/* The real, effective and saved uids of pid (the Uid line of its status): 0, or -1. */
static int proc_uids(pid_t pid, uid_t *uid)
{
	char line[128];
	unsigned long r, e, s;

	if (!procinfo_status(pid, "Uid", line, sizeof(line)) || sscanf(line, "%lu %lu %lu", &r, &e, &s) != 3)
		return -1;
	uid[0] = (uid_t)r, uid[1] = (uid_t)e, uid[2] = (uid_t)s;
	return 0;
}

/*
 * True if root's process pid is dumpable: the kernel lets this thread
 * compare its address space with pid's (kcmp, a PTRACE_MODE_READ check on
 * the real credentials) without CAP_SYS_PTRACE in its effective set.
 * The file-system credentials' check (a /proc file) cannot tell: it also
 * wants the effective set to hold the target's permitted capabilities.
 */
static bool root_dumpable(pid_t pid)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2], drop[2];
	bool ok;

	if (syscall(SYS_capget, &h, d))
		return false;
	memcpy(drop, d, sizeof(drop));
	drop[CAP_SYS_PTRACE / 32].effective &= ~(1u << (CAP_SYS_PTRACE % 32));
	if (syscall(SYS_capset, &h, drop))
		return false;
	ok = syscall(SYS_kcmp, getpid(), pid, KCMP_VM, 0, 0) >= 0;
	if (syscall(SYS_capset, &h, d))
		die_errno("cannot take CAP_SYS_PTRACE back");
	return ok;
}

/* The verdict on pid now, counted. */
static bool look(struct whose *w, pid_t pid)
{
	uid_t owner, uid[3];

	w->st.checks++;
	if (procinfo_owner(pid, &owner))
		return false;
	/* Its effective uid if dumpable, root if not. */
	if (owner != 0) {
		if (chosen(w, owner))
			return true;
		w->st.not_chosen++;
		return false;
	}
	if (!chosen(w, 0)) {
		w->st.not_chosen++;
		return false;
	}
	/* Root's own, or anyone's made non-dumpable: the uids and a read tell. */
	if (proc_uids(pid, uid) || uid[0] || uid[1] || uid[2] || !root_dumpable(pid)) {
		w->st.not_dumpable++;
		return false;
	}
	return true;
}

static struct whose_entry *entry(struct whose *w, pid_t pid)
{
	uint64_t *slot;

	if (w->n >= WHOSE_MAX) {
		u64map_clear(&w->at);
		w->n = 0;
	}
	slot = u64map_slot(&w->at, (uint64_t)pid);
	if (!*slot) {
		ALLOC_GROW(w->v, w->n + 1, w->alloc);
		w->v[w->n] = (struct whose_entry){ 0, false };
		*slot = ++w->n;
	}
	return &w->v[*slot - 1];
}

bool whose_allowed(struct whose *w, pid_t pid, int64_t time)
{
	struct whose_entry *e;

	if (whose_none(w))
		return false;
	e = entry(w, pid);
	if (!e->checked || e->checked < time) {
		e->ok = look(w, pid);
		e->checked = time_monotonic_ns();
	}
	return e->ok;
}

bool whose_check(struct whose *w, pid_t pid)
{
	struct whose_entry *e;

	if (whose_none(w))
		return false;
	e = entry(w, pid);
	e->ok = look(w, pid);
	e->checked = time_monotonic_ns();
	return e->ok;
}

void whose_forget(struct whose *w, pid_t pid)
{
	uint64_t i;

	if (u64map_get(&w->at, (uint64_t)pid, &i) && i)
		w->v[i - 1].checked = 0;
}
