/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * watch/calib.c - measuring what the probes add to a call (watch/calib.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/die.h"
#include "core/xalloc.h"
#include "watch/calib.h"

#define CALIB_CALLS 300

#if defined(__x86_64__)
/* Empty functions: the first's entry (push) is emulated, the second's (mov) stepped. */
__asm__(".pushsection .text\n"
	".p2align 4\n.globl dcpiwatch_calib_push_u\n.type dcpiwatch_calib_push_u,@function\n"
	"dcpiwatch_calib_push_u:\n\tpush %rbp\n\tpop %rbp\n\tret\n"
	".size dcpiwatch_calib_push_u, .-dcpiwatch_calib_push_u\n"
	".p2align 4\n.globl dcpiwatch_calib_push_x\n.type dcpiwatch_calib_push_x,@function\n"
	"dcpiwatch_calib_push_x:\n\tpush %rbp\n\tpop %rbp\n"
	".globl dcpiwatch_calib_push_x_ret\ndcpiwatch_calib_push_x_ret:\n\tret\n"
	".size dcpiwatch_calib_push_x, .-dcpiwatch_calib_push_x\n"
	".p2align 4\n.globl dcpiwatch_calib_step_u\n.type dcpiwatch_calib_step_u,@function\n"
	"dcpiwatch_calib_step_u:\n\tmov %rdi, %rax\n\tret\n"
	".size dcpiwatch_calib_step_u, .-dcpiwatch_calib_step_u\n"
	".p2align 4\n.globl dcpiwatch_calib_step_x\n.type dcpiwatch_calib_step_x,@function\n"
	"dcpiwatch_calib_step_x:\n\tmov %rdi, %rax\n"
	".globl dcpiwatch_calib_step_x_ret\ndcpiwatch_calib_step_x_ret:\n\tret\n"
	".size dcpiwatch_calib_step_x, .-dcpiwatch_calib_step_x\n"
	".popsection\n");

long dcpiwatch_calib_push_u(long), dcpiwatch_calib_push_x(long), dcpiwatch_calib_step_u(long),
	dcpiwatch_calib_step_x(long);
extern char dcpiwatch_calib_push_x_ret[], dcpiwatch_calib_step_x_ret[];

typedef long (*stub_fn)(long);

static const struct stub {
	const char *name;
	stub_fn fn;
	const char *ret;        /* the exit instruction; NULL: a uretprobe */
	bool stepped;
} stubs[2][2] = {
	{ { "push_u", dcpiwatch_calib_push_u, NULL, false },
	  { "push_x", dcpiwatch_calib_push_x, dcpiwatch_calib_push_x_ret, false } },
	{ { "step_u", dcpiwatch_calib_step_u, NULL, true },
	  { "step_x", dcpiwatch_calib_step_x, dcpiwatch_calib_step_x_ret, true } },
};

/* The file and offset of an address of this program's code. */
static int code_offset(const void *addr, char *path, size_t size, uint64_t *off)
{
	char line[PATH_MAX + 256];
	uintptr_t a = (uintptr_t)addr;
	FILE *f = fopen("/proc/self/maps", "re");
	int r = -1;

	if (!f)
		return -1;
	while (r && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, pgoff;
		char *p;

		if (sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &pgoff) != 3 || a < lo || a >= hi ||
		    !(p = strchr(line, '/')))
			continue;
		p[strcspn(p, "\n")] = 0;
		snprintf(path, size, "%s", p);
		*off = a - lo + pgoff;
		r = 0;
	}
	fclose(f);
	return r;
}

static void add(struct watch_plan *plan, const struct stub *st, const char *path)
{
	struct watch_target *t;
	struct watch_point *p;
	uint64_t off, roff;
	char file[PATH_MAX];

	if (code_offset((const void *)st->fn, file, sizeof(file), &off) ||
	    (st->ret && code_offset(st->ret, file, sizeof(file), &roff)))
		return;
	(void)path;
	plan->t = xreallocarray(plan->t, plan->nt + 1, sizeof(*plan->t));
	t = &plan->t[plan->nt];
	memset(t, 0, sizeof(*t));
	t->kind = WATCH_FUNC;
	t->spec = xstrdup(st->name);
	t->name = xstrdup(st->name);
	t->path = xstrdup(file);
	strcpy(t->key, "calib");
	t->offset = off;
	t->entry_stepped = st->stepped;
	t->ret = st->ret ? WATCH_RET_EXITS : WATCH_RET_URETPROBE;
	plan->p = xreallocarray(plan->p, plan->np + 2, sizeof(*plan->p));
	p = &plan->p[plan->np++];
	memset(p, 0, sizeof(*p));
	p->target = (unsigned)plan->nt;
	p->role = WP_ENTRY;
	p->offset = off;
	p->stepped = st->stepped;
	p = &plan->p[plan->np++];
	memset(p, 0, sizeof(*p));
	p->target = (unsigned)plan->nt;
	p->role = st->ret ? WP_EXIT : WP_RETURN;
	p->offset = st->ret ? roff : off;
	p->stepped = true;
	plan->nt++;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return n ? v[n / 2] : 0;
}

/* Reads the trace of the calibration run: the median wall and cpu time per stub. */
static void read_trace(const char *buf, const struct watch_plan *plan, struct watch_bias *bias)
{
	for (size_t ti = 0; ti < plan->nt; ti++) {
		const struct watch_target *t = &plan->t[ti];
		uint64_t *wall = xcalloc(CALIB_CALLS + 1, sizeof(*wall));
		uint64_t *cpu = xcalloc(CALIB_CALLS + 1, sizeof(*cpu));
		size_t n = 0;
		const char *line = buf;
		char what[16], name[32];

		while (line && *line) {
			uint64_t w, c;

			if (n < CALIB_CALLS &&
			    sscanf(line, "%*u %*u %*u %*d %15s %31s %" SCNu64 " %" SCNu64, what, name,
				   &w, &c) == 4 &&
			    !strcmp(what, "return") && !strcmp(name, t->name)) {
				wall[n] = w;
				cpu[n++] = c;
			}
			line = strchr(line, '\n');
			line = line ? line + 1 : NULL;
		}
		if (n >= CALIB_CALLS / 2) {
			unsigned st = t->entry_stepped, i3 = t->ret == WATCH_RET_EXITS;

			bias->wall[st][i3] = median(wall, n);
			bias->cpu[st][i3] = median(cpu, n);
		}
		free(wall);
		free(cpu);
	}
}

static void run_stubs(int gate)
{
	char c;

	if (read(gate, &c, 1) != 1)
		_exit(1);
	for (int i = 0; i < CALIB_CALLS; i++)
		for (int s = 0; s < 2; s++)
			for (int x = 0; x < 2; x++)
				stubs[s][x].fn(i);
	_exit(0);
}

static void wait_child(struct watch_session *s, pid_t child)
{
	struct pollfd fds[256];

	for (int tries = 0; tries < 3000; tries++) {
		size_t n = watch_session_pollfds(s, fds, 256);

		poll(fds, n, 10);
		watch_session_read(s, false);
		if (waitpid(child, NULL, WNOHANG) == child)
			return;
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

static int time_stubs(struct watch_plan *plan, const struct watch_evspec *events,
		      unsigned nevents, struct watch_bias *bias)
{
	struct watch_session_opts so = { plan, 0, false, nevents, events, 64 };
	const char *names[WATCH_MAX_EVENTS];
	struct watch_agg_opts ao = { plan, nevents + 1, names, false, NULL, NULL };
	struct watch_agg *agg;
	struct watch_session *s;
	struct watch_set out = WATCH_SET_INIT;
	char *buf = NULL;
	size_t len = 0;
	int gate[2], r = -1;
	pid_t child;

	for (unsigned k = 0; k < nevents; k++)
		names[k] = events[k].name;
	if (pipe(gate))
		return -1;
	if ((child = fork()) < 0)
		return -1;
	if (!child) {
		close(gate[1]);
		run_stubs(gate[0]);
	}
	close(gate[0]);
	so.pid = child;
	ao.trace = open_memstream(&buf, &len);
	agg = watch_agg_new(&ao);
	if ((s = watch_session_open(&so, agg))) {
		if (write(gate[1], "x", 1) == 1)
			r = 0;
		close(gate[1]);
		wait_child(s, child);
		watch_session_read(s, true);
		watch_agg_finish(agg, UINT64_MAX, &out);
		fflush(ao.trace);
		read_trace(buf, plan, bias);
		watch_session_free(s);
	} else {
		close(gate[1]);
		waitpid(child, NULL, 0);
	}
	fclose(ao.trace);
	free(buf);
	watch_set_release(&out);
	watch_agg_free(agg);
	return r;
}

int watch_calibrate(const struct watch_plan *plan, const struct watch_evspec *events,
		    unsigned nevents, struct watch_bias *bias)
{
	struct watch_plan cp;
	bool need[2][2] = { { false } };
	int r;

	memset(bias, 0, sizeof(*bias));
	for (size_t i = 0; i < plan->nt; i++) {
		const struct watch_target *t = &plan->t[i];

		if (!t->kernel)
			need[t->entry_stepped][t->kind == WATCH_BETWEEN || t->ret == WATCH_RET_EXITS] = true;
	}
	watch_plan_init(&cp);
	for (int s = 0; s < 2; s++)
		for (int x = 0; x < 2; x++)
			if (need[s][x])
				add(&cp, &stubs[s][x], NULL);
	if (!cp.nt) {
		watch_plan_release(&cp);
		return 0;
	}
	r = time_stubs(&cp, events, nevents, bias);
	watch_plan_release(&cp);
	if (r)
		warning("cannot measure the probes' own cost: times include it");
	return r;
}
#else
int watch_calibrate(const struct watch_plan *plan, const struct watch_evspec *events,
		    unsigned nevents, struct watch_bias *bias)
{
	(void)plan;
	(void)events;
	(void)nevents;
	memset(bias, 0, sizeof(*bias));
	return 0;
}
#endif
