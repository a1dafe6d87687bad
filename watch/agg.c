/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * watch/agg.c - pairing entries with returns and adding up calls
 * (watch/agg.h).
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "core/u64map.h"
#include "core/xalloc.h"
#include "watch/agg.h"

struct frame {
	unsigned target;
	uint64_t sp, time;
	uint64_t v[WATCH_MAX_VALS];
};

struct cpuvals {
	uint32_t cpu;
	uint64_t v[WATCH_MAX_VALS];
};

struct from {
	bool on;
	uint64_t time;
	uint64_t v[WATCH_MAX_VALS];
};

struct thread {
	uint32_t pid, tid;
	char comm[32];
	bool exited;
	struct frame *stack;
	size_t depth, alloc;
	struct from *from;          /* per target (--between), allocated on first use */
	struct cpuvals *cv;         /* process tree: the thread's counts per CPU */
	size_t ncv;
	uint64_t acc[WATCH_MAX_VALS]; /* system-wide: the thread's share */
	uint64_t virt[WATCH_MAX_VALS];
};

struct cpulast {
	bool seen;
	uint64_t v[WATCH_MAX_VALS];
};

struct watch_agg {
	struct watch_agg_opts o;
	struct u64map threads;      /* tid -> index + 1 */
	struct thread *th;
	size_t nth;
	struct u64map recs;         /* target << 32 | tid -> index + 1 */
	struct watch_rec *rec;
	size_t nrec;
	struct cpulast *cpus;       /* system-wide */
	size_t ncpus;
	struct watch_agg_totals tot;
};

struct watch_agg *watch_agg_new(const struct watch_agg_opts *opts)
{
	struct watch_agg *a = xcalloc(1, sizeof(*a));

	if (opts->nvals < 1 || opts->nvals > WATCH_MAX_VALS)
		BUG("bad number of counters %u", opts->nvals);
	a->o = *opts;
	u64map_init(&a->threads);
	u64map_init(&a->recs);
	return a;
}

void watch_agg_free(struct watch_agg *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nth; i++) {
		free(a->th[i].stack);
		free(a->th[i].from);
		free(a->th[i].cv);
	}
	free(a->th);
	free(a->rec);
	free(a->cpus);
	u64map_release(&a->threads);
	u64map_release(&a->recs);
	free(a);
}

static struct thread *thread_get(struct watch_agg *a, uint32_t pid, uint32_t tid)
{
	uint64_t *slot = u64map_slot(&a->threads, tid), parent;
	struct thread *t;

	if (*slot) {
		t = &a->th[*slot - 1];
		/* A tid reused by a new thread after the old one exited. */
		if (!t->exited)
			return t;
	}
	a->th = xreallocarray(a->th, a->nth + 1, sizeof(*a->th));
	t = &a->th[a->nth++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	*slot = a->nth;
	/* A new thread is called what its process is, until it says otherwise. */
	if (tid != pid && u64map_get(&a->threads, pid, &parent) && parent)
		memcpy(t->comm, a->th[parent - 1].comm, sizeof(t->comm));
	a->tot.threads++;
	return t;
}

static struct watch_rec *rec_get(struct watch_agg *a, unsigned target, const struct thread *t)
{
	uint64_t *slot = u64map_slot(&a->recs, (uint64_t)target << 32 | t->tid);
	struct watch_rec *r;

	if (*slot && a->rec[*slot - 1].pid == t->pid)
		return &a->rec[*slot - 1];
	a->rec = xreallocarray(a->rec, a->nrec + 1, sizeof(*a->rec));
	r = &a->rec[a->nrec++];
	memset(r, 0, sizeof(*r));
	r->kind = a->o.plan->t[target].kind;
	r->pid = t->pid;
	r->tid = t->tid;
	r->offset = target;         /* the target's index until finish */
	*slot = a->nrec;
	return r;
}

/* ---- counters ---------------------------------------------------------------- */

static void update_counters(struct watch_agg *a, struct thread *t, const struct watch_sample *s)
{
	unsigned nv = a->o.nvals;

	if (a->o.system_wide) {
		struct cpulast *c;

		if (s->cpu >= a->ncpus) {
			size_t n = s->cpu + 1;

			a->cpus = xreallocarray(a->cpus, n, sizeof(*a->cpus));
			memset(a->cpus + a->ncpus, 0, (n - a->ncpus) * sizeof(*a->cpus));
			a->ncpus = n;
		}
		c = &a->cpus[s->cpu];
		for (unsigned k = 0; k < nv; k++) {
			if (c->seen && s->vals[k] >= c->v[k])
				t->acc[k] += s->vals[k] - c->v[k];
			c->v[k] = s->vals[k];
		}
		c->seen = true;
		memcpy(t->virt, t->acc, sizeof(t->virt));
		return;
	}
	size_t i;

	for (i = 0; i < t->ncv && t->cv[i].cpu != s->cpu; i++)
		;
	if (i == t->ncv) {
		t->cv = xreallocarray(t->cv, ++t->ncv, sizeof(*t->cv));
		memset(&t->cv[i], 0, sizeof(t->cv[i]));
		t->cv[i].cpu = s->cpu;
	}
	memcpy(t->cv[i].v, s->vals, nv * sizeof(s->vals[0]));
	memset(t->virt, 0, sizeof(t->virt));
	for (i = 0; i < t->ncv; i++)
		for (unsigned k = 0; k < nv; k++)
			t->virt[k] += t->cv[i].v[k];
}

/* ---- the trace ---------------------------------------------------------------- */

static void trace_head(struct watch_agg *a, uint64_t time, const struct thread *t, int cpu,
		       const char *what, unsigned target)
{
	fprintf(a->o.trace, "%" PRIu64 " %" PRIu32 " %" PRIu32 " %d %s %s", time, t->pid, t->tid,
		cpu, what, a->o.plan->t[target].name);
}

static void trace_event(struct watch_agg *a, uint64_t time, const struct thread *t, int cpu,
			const char *what, unsigned target)
{
	if (!a->o.trace)
		return;
	trace_head(a, time, t, cpu, what, target);
	fputc('\n', a->o.trace);
}

/* ---- calls ----------------------------------------------------------------------- */

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

static void complete(struct watch_agg *a, struct thread *t, unsigned target, uint64_t t0,
		     const uint64_t *v0, const struct watch_sample *s, bool int3_end, const char *what)
{
	const struct watch_target *tg = &a->o.plan->t[target];
	struct watch_rec *r = rec_get(a, target, t);
	uint64_t wall = sub0(s->time, t0), cpu = sub0(t->virt[0], v0[0]);
	unsigned st = tg->entry_stepped, i3 = int3_end;

	if (a->o.bias) {
		wall = sub0(wall, a->o.bias->wall[st][i3]);
		cpu = sub0(cpu, a->o.bias->cpu[st][i3]);
	}
	if (cpu > wall)
		cpu = wall;
	watch_stat_add(&r->wall, wall);
	watch_stat_add(&r->cpu, cpu);
	r->hist[watch_hist_bucket(wall)]++;
	r->nevents = a->o.nvals - 1;
	for (unsigned k = 1; k < a->o.nvals; k++)
		watch_stat_add(&r->ev[k - 1].st, sub0(t->virt[k], v0[k]));
	if (!a->o.trace)
		return;
	trace_head(a, s->time, t, (int)s->cpu, what, target);
	fprintf(a->o.trace, " %" PRIu64 " %" PRIu64, wall, cpu);
	for (unsigned k = 1; k < a->o.nvals; k++)
		fprintf(a->o.trace, " %" PRIu64, sub0(t->virt[k], v0[k]));
	fputc('\n', a->o.trace);
}

/*
 * Pops the frames below sp (deeper than it): calls a longjmp or an
 * exception left.  With same (an entry of that target), also its frame at
 * sp itself: a call made again from where a longjmp went back to.
 */
static void unwind_below(struct watch_agg *a, struct thread *t, uint64_t sp, uint64_t time,
			 int cpu, int same)
{
	while (t->depth && (t->stack[t->depth - 1].sp < sp ||
			    (t->stack[t->depth - 1].sp == sp && (int)t->stack[t->depth - 1].target == same))) {
		struct frame *f = &t->stack[--t->depth];

		rec_get(a, f->target, t)->unwound++;
		trace_event(a, time, t, cpu, "unwound", f->target);
	}
}

static void on_entry(struct watch_agg *a, struct thread *t, unsigned target,
		     const struct watch_sample *s)
{
	struct frame *f;

	/* Kernel functions: the user stack pointer says nothing; kretprobes pair in the kernel. */
	if (!a->o.plan->t[target].kernel)
		unwind_below(a, t, s->sp, s->time, (int)s->cpu, (int)target);
	if (t->depth == t->alloc) {
		t->alloc = t->alloc ? 2 * t->alloc : 16;
		t->stack = xreallocarray(t->stack, t->alloc, sizeof(*t->stack));
	}
	f = &t->stack[t->depth++];
	f->target = target;
	f->sp = s->sp;
	f->time = s->time;
	memcpy(f->v, t->virt, sizeof(f->v));
	rec_get(a, target, t)->calls++;
	trace_event(a, s->time, t, (int)s->cpu, "call", target);
}

static void on_return(struct watch_agg *a, struct thread *t, unsigned target,
		      const struct watch_sample *s, bool exit_insn)
{
	uint64_t sp = exit_insn ? s->sp : s->sp - 8;
	bool done = false;

	if (a->o.plan->t[target].kernel) {
		for (size_t i = t->depth; i-- > 0;)
			if (t->stack[i].target == target) {
				struct frame f = t->stack[i];

				memmove(&t->stack[i], &t->stack[i + 1], (t->depth - i - 1) * sizeof(f));
				t->depth--;
				complete(a, t, target, f.time, f.v, s, false, "return");
				return;
			}
		a->tot.unmatched++;
		return;
	}
	unwind_below(a, t, sp, s->time, (int)s->cpu, -1);
	while (t->depth) {
		struct frame *f = &t->stack[t->depth - 1];

		if (f->sp != sp || f->target != target)
			break;
		t->depth--;
		complete(a, t, target, f->time, f->v, s, exit_insn, "return");
		done = true;
		/* A uretprobe reports each call of a chain; an exit ends them all. */
		if (!exit_insn)
			break;
	}
	if (!done)
		a->tot.unmatched++;
}

static void on_between(struct watch_agg *a, struct thread *t, unsigned target,
		       const struct watch_sample *s, bool to)
{
	struct from *fr;

	if (!t->from)
		t->from = xcalloc(a->o.plan->nt, sizeof(*t->from));
	fr = &t->from[target];
	if (to) {
		if (fr->on)
			complete(a, t, target, fr->time, fr->v, s, true, "to");
		fr->on = false;
		return;
	}
	/* A again before B: the interval it began never ended. */
	if (fr->on) {
		rec_get(a, target, t)->unwound++;
		trace_event(a, s->time, t, (int)s->cpu, "restart", target);
	}
	fr->on = true;
	fr->time = s->time;
	memcpy(fr->v, t->virt, sizeof(fr->v));
	rec_get(a, target, t)->calls++;
	trace_event(a, s->time, t, (int)s->cpu, "from", target);
}

void watch_agg_sample(struct watch_agg *a, const struct watch_sample *s)
{
	struct thread *t = thread_get(a, s->pid, s->tid);
	const struct watch_point *p;

	update_counters(a, t, s);
	if (s->point < 0)
		return;
	if ((size_t)s->point >= a->o.plan->np)
		BUG("sample of an unknown probe %d", s->point);
	a->tot.samples++;
	p = &a->o.plan->p[s->point];
	switch (p->role) {
	case WP_ENTRY:
		on_entry(a, t, p->target, s);
		break;
	case WP_RETURN:
		on_return(a, t, p->target, s, false);
		break;
	case WP_EXIT:
		on_return(a, t, p->target, s, true);
		break;
	case WP_FROM:
	case WP_TO:
		on_between(a, t, p->target, s, p->role == WP_TO);
		break;
	}
}

void watch_agg_comm(struct watch_agg *a, uint32_t pid, uint32_t tid, const char *comm)
{
	struct thread *t = thread_get(a, pid, tid);

	snprintf(t->comm, sizeof(t->comm), "%s", comm);
}

static void close_thread(struct watch_agg *a, struct thread *t, uint64_t time)
{
	while (t->depth) {
		struct frame *f = &t->stack[--t->depth];

		rec_get(a, f->target, t)->open++;
		trace_event(a, time, t, -1, "open", f->target);
	}
	for (size_t i = 0; t->from && i < a->o.plan->nt; i++)
		if (t->from[i].on) {
			t->from[i].on = false;
			rec_get(a, (unsigned)i, t)->open++;
			trace_event(a, time, t, -1, "open", (unsigned)i);
		}
	t->exited = true;
}

void watch_agg_exit(struct watch_agg *a, uint32_t pid, uint32_t tid, uint64_t time)
{
	uint64_t idx;

	(void)pid;
	if (u64map_get(&a->threads, tid, &idx) && idx && !a->th[idx - 1].exited)
		close_thread(a, &a->th[idx - 1], time);
}

static void fill_rec(struct watch_agg *a, struct watch_rec *r, unsigned target, const char *comm)
{
	const struct watch_target *tg = &a->o.plan->t[target];

	memcpy(r->key, tg->key, sizeof(r->key));
	r->offset = tg->offset;
	if (tg->kind == WATCH_BETWEEN) {
		memcpy(r->key_b, tg->key_b, sizeof(r->key_b));
		r->offset_b = tg->offset_b;
	}
	r->name = (char *)tg->name;
	r->path = (char *)tg->path;
	r->comm = (char *)comm;
	r->nevents = a->o.nvals - 1;
	for (unsigned k = 1; k < a->o.nvals; k++)
		snprintf(r->ev[k - 1].name, sizeof(r->ev[k - 1].name), "%s", a->o.names[k - 1]);
}

void watch_agg_finish(struct watch_agg *a, uint64_t time, struct watch_set *out)
{
	bool *seen = xcalloc(a->o.plan->nt + 1, sizeof(*seen));

	for (size_t i = 0; i < a->nth; i++)
		if (!a->th[i].exited)
			close_thread(a, &a->th[i], time);
	for (size_t i = 0; i < a->nrec; i++) {
		struct watch_rec r = a->rec[i];
		unsigned target = (unsigned)r.offset;
		uint64_t idx;
		const char *comm = "";

		if (u64map_get(&a->threads, r.tid, &idx) && idx)
			comm = a->th[idx - 1].comm;
		fill_rec(a, &r, target, comm);
		watch_set_add(out, &r);
		seen[target] = true;
	}
	/* Never called: a record that says so. */
	for (unsigned i = 0; i < a->o.plan->nt; i++)
		if (!seen[i]) {
			struct watch_rec r;

			memset(&r, 0, sizeof(r));
			r.kind = a->o.plan->t[i].kind;
			fill_rec(a, &r, i, "");
			watch_set_add(out, &r);
		}
	free(seen);
}

void watch_agg_totals(const struct watch_agg *a, struct watch_agg_totals *t)
{
	*t = a->tot;
}
