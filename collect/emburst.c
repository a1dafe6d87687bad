/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/emburst.c - emulated bursts and windows in the collector
 * (collect/emburst.h): stopping the thread, its state, the worker's
 * answers resolved and aggregated per image, the windows' samples.
 */
#include "config.h"
#include "collect/emburst.h"
#include "collect/emu-worker.h"
#include "collect/procs.h"
#include "core/die.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "core/testpoint.h"
#include "core/timeutil.h"
#include "core/xalloc.h"
#include "db/db.h"

#include <errno.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <unistd.h>

/* Bytes a record costs in memory, roughly (the cap's accounting). */
#define REC_BYTES 48
#define VALUE_REC_BYTES 160
/* Instructions an x86 core retires per ns at most (8 a cycle at 6 GHz): a window's sanity bound. */
#define MAX_INSNS_PER_NS 48
/*
 * A window's search for its samples stops after this many instructions a
 * ns of the thread's CPU time between the burst and B2, bounded by its
 * samples since (each one period of its CPU time at most on its CPU, one
 * period more for what the burst's CPU had counted before): 3 a cycle at
 * 4 GHz, three times what the fastest loops here retire (calc-calib: 3.8 a
 * ns).  A bound from the clock instead cost seconds of the worker for
 * windows that could not match (measured: 64 million instructions, 4.5 s,
 * for a window of gzip that passed a read), and one such window spent the
 * windows' budget of a whole run.
 */
#define WINDOW_INSNS_PER_NS 12
/* B1 is the thread's first or second sample after the burst: later, too far to follow. */
#define WINDOW_MAX_SAMPLES 3

enum { W_NONE, W_WAIT, W_RUN };

struct emburst_window {
	int state;
	pid_t pid;
	uint32_t tid;
	const void *as;                 /* the address space it was taken in (compared only) */
	int pidfd;
	uint64_t after;                 /* the thread went on at this time (the samples' clock) */
	int64_t give_up;                /* waiting for samples until then (monotonic) */
	bool have_b1;
	unsigned n_after;               /* the thread's samples since the burst */
	unsigned b1_cpu;
	uint64_t b1_time, b1_seen, b2_time;
	struct emu_point b1, b2;
	int64_t started;                /* the worker began */
	int64_t cpu_started;            /* the worker's CPU time then */
	uint64_t *seen;                 /* samples of the time event per CPU */
	size_t n_seen;
};

/* ---- set-up --------------------------------------------------------------------------- */

struct emburst *emburst_new(double budget, uint32_t limit, pid_t watch, uint64_t seed)
{
	struct emburst *e = XNEW(struct emburst);

	e->budget = budget;
	e->limit = limit ? limit : EMBURST_DEFAULT_LIMIT;
	e->deadline_ns = EMBURST_DEADLINE_NS;
	if (e->limit > EMU_MAX_LIMIT)
		e->limit = EMU_MAX_LIMIT;
	e->tracer.watch = watch;
	e->rng = (struct hotlist_rng)HOTLIST_RNG_INIT(seed);
	e->win = XNEW(struct emburst_window);
	e->win->pidfd = -1;
	burst_set_init(&e->raw);
	/* dcpirun (a command it watches) lends its processes' memory; dcpid never. */
	if (!(e->worker = emu_worker_start(watch > 0))) {
		emburst_free(e);
		return NULL;
	}
	return e;
}

static void image_release(struct emburst_image *im)
{
	paths_profile_release(&im->prof);
	u64map_release(&im->at);
}

static void window_end(struct emburst *e)
{
	struct emburst_window *w = e->win;

	if (w->pidfd >= 0)
		close(w->pidfd);
	w->pidfd = -1;
	w->state = W_NONE;
	w->have_b1 = false;
}

void emburst_free(struct emburst *e)
{
	if (!e)
		return;
	emu_worker_stop(e->worker);
	window_end(e);
	free(e->win->seen);
	free(e->win);
	for (size_t i = 0; i < e->n_img; i++)
		image_release(&e->img[i]);
	free(e->img);
	u64map_release(&e->img_at);
	burst_set_release(&e->raw);
	tracer_clear(&e->tracer);
	free(e);
}

void emburst_set_period(struct emburst *e, uint64_t period_ns)
{
	e->period_ns = period_ns;
}

const struct emu_worker *emburst_worker(const struct emburst *e)
{
	return e->worker;
}

bool emburst_due(struct emburst *e, int64_t now)
{
	if (!(e->budget > 0) || !emu_worker_usable(e->worker) || emu_worker_busy(e->worker))
		return false;
	if (!e->started)
		e->started = now;
	return now >= e->next_at && (double)e->st.ns <= e->budget * (double)(now - e->started);
}

/* ---- aggregating ------------------------------------------------------------------------ */

static struct emburst_image *image_of(struct emburst *e, uint32_t image)
{
	uint64_t *slot = u64map_slot(&e->img_at, image);

	if (!*slot) {
		struct emburst_image *im;

		ALLOC_GROW(e->img, e->n_img + 1, e->alloc_img);
		im = &e->img[e->n_img++];
		memset(im, 0, sizeof(*im));
		im->image = image;
		paths_profile_init(&im->prof);
		u64map_init(&im->at);
		*slot = e->n_img;
	}
	return &e->img[*slot - 1];
}

/* The image a pc of as is in, and its offset; NULL if in none known. */
static struct emburst_image *where(struct emburst *e, struct procs *procs, struct addr_space *as,
				   uint64_t pc, uint64_t *off)
{
	uint32_t image;

	if (!as || !procs_resolve(procs, as, pc, &image, off))
		return NULL;
	return image_of(e, image);
}

static size_t records(const struct paths_profile *p)
{
	return p->n_blocks + p->n_edges + p->n_conflicts + p->n_stops;
}

/* Adds up repeated records now and then (their number stays the code's, not the bursts'). */
static void fold(struct emburst *e, struct emburst_image *im)
{
	size_t before = records(&im->prof);

	if (before < 2 * im->normalized + 4096)
		return;
	paths_profile_normalize(&im->prof);
	u64map_clear(&im->at);
	for (size_t k = 0; k < im->prof.values.n; k++)
		*u64map_slot(&im->at, im->prof.values.v[k].offset) = k + 1;
	im->normalized = records(&im->prof);
	e->bytes -= (before - im->normalized) * REC_BYTES;
}

/* The value record of an instruction followed in detail (room for what it writes). */
static struct values_rec *value_rec(struct emburst *e, struct emburst_image *im, uint64_t off,
				    uint32_t mask)
{
	uint64_t *slot = u64map_slot(&im->at, off);

	if (!*slot) {
		values_profile_add_regs(&im->prof.values, off, mask);
		*slot = im->prof.values.n;
		e->bytes += VALUE_REC_BYTES;
	}
	return &im->prof.values.v[*slot - 1];
}

static void name_end(struct emburst *e, const char *mnemonic)
{
	size_t i;

	if (!*mnemonic)
		return;
	for (i = 0; i < e->n_ends; i++)
		if (!strcmp(e->ends[i].mnemonic, mnemonic))
			break;
	if (i == e->n_ends) {
		if (e->n_ends == EMBURST_END_NAMES)
			return;
		snprintf(e->ends[e->n_ends++].mnemonic, sizeof(e->ends[0].mnemonic), "%s", mnemonic);
	}
	e->ends[i].count++;
}

/* The registers each value record of pc writes (from the worker's values of it). */
static uint32_t written_mask(const struct emu_result *r, uint64_t pc)
{
	uint32_t m = 0;

	for (size_t i = 0; i < r->n_values; i++)
		if (r->values[i].pc == pc)
			m |= 1u << r->values[i].reg;
	return m;
}

static void add_detail(struct emburst *e, struct procs *procs, struct addr_space *as,
		       const struct emu_result *r)
{
	for (size_t i = 0; i < r->n_insn; i++) {
		uint64_t off;
		struct emburst_image *im = where(e, procs, as, r->insn[i].pc, &off);

		if (im) {
			value_rec(e, im, off, written_mask(r, r->insn[i].pc))->samples += r->insn[i].execs;
			im->prof.detailed += r->insn[i].execs;
		}
	}
	for (size_t i = 0; i < r->n_values; i++) {
		const struct emu_value_rec *v = &r->values[i];
		uint64_t off;
		struct emburst_image *im = where(e, procs, as, v->pc, &off);
		struct values_rec *rec;

		if (!im)
			continue;
		rec = value_rec(e, im, off, 1u << v->reg);
		if (!rec->h[v->reg].cap)
			continue;       /* a register the record has no room for */
		rec->mask |= 1u << v->reg;
		for (uint64_t k = 0; k < v->count && k < rec->samples; k++)
			hotlist_add(&rec->h[v->reg], v->value, &e->rng);
	}
	for (size_t i = 0; i < r->n_conflicts; i++) {
		const struct emu_conflict_rec *c = &r->conflicts[i];
		uint64_t lo, so;
		struct emburst_image *li = where(e, procs, as, c->load, &lo);
		struct emburst_image *si = where(e, procs, as, c->store, &so);

		if (li && li == si) {
			paths_add_conflict(&li->prof, lo, so, (enum paths_conflict_kind)c->kind, c->count);
			e->bytes += REC_BYTES;
		}
	}
}

/* A raw trace of the burst's first steps, now and then (a uniform sample of an epoch's). */
static void add_trace(struct emburst *e, struct procs *procs, struct addr_space *as,
		      const struct emu_result *r, uint32_t tid)
{
	struct burst_trace *t;

	if (!r->n_steps)
		return;
	t = burst_set_add(&e->raw, tid);
	t->steps = xcalloc(r->n_steps, sizeof(*t->steps));
	for (size_t i = 0; i < r->n_steps; i++) {
		struct burst_step *st = &t->steps[i];
		uint32_t image;
		uint64_t off;

		if (procs_resolve(procs, as, r->steps[i].pc, &image, &off)) {
			st->image = burst_set_key(&e->raw, procs_cimage(procs, image)->img.key);
			st->offset = off;
		} else {
			st->image = BURSTS_NO_IMAGE;
			st->offset = r->steps[i].pc;
		}
		memcpy(st->regs, r->steps[i].regs, sizeof(st->regs));
	}
	t->n = r->n_steps;
	e->bytes += r->n_steps * sizeof(*t->steps);
}

static void add_result(struct emburst *e, struct procs *procs, struct addr_space *as,
		       const struct emu_result *r, uint32_t tid)
{
	uint64_t off;
	struct emburst_image *im;

	for (size_t i = 0; i < e->n_img; i++)
		e->img[i].touched = false;
	for (size_t i = 0; i < r->n_blocks; i++) {
		const struct emu_block_rec *b = &r->blocks[i];

		if (!(im = where(e, procs, as, b->pc, &off)))
			continue;
		paths_add_block(&im->prof, off, b->bytes, b->insns, b->count, 0);
		im->prof.insns += b->count * b->insns;
		im->touched = true;
		e->bytes += REC_BYTES;
	}
	for (size_t i = 0; i < r->n_edges; i++) {
		const struct emu_edge_rec *x = &r->edges[i];
		uint64_t to;
		struct emburst_image *ti;

		if (!(im = where(e, procs, as, x->from, &off)))
			continue;
		ti = where(e, procs, as, x->to, &to);
		paths_add_edge(&im->prof, off, ti == im ? to : PATHS_ELSEWHERE, x->count);
		e->bytes += REC_BYTES;
	}
	add_detail(e, procs, as, r);
	if ((im = where(e, procs, as, r->end_pc, &off))) {
		paths_add_stop(&im->prof, off, (enum paths_end)r->end, 1);
		e->bytes += REC_BYTES;
	}
	for (size_t i = 0; i < e->n_img; i++) {
		if (e->img[i].touched)
			e->img[i].prof.bursts++;
		fold(e, &e->img[i]);
	}
	add_trace(e, procs, as, r, tid);
	e->st.bursts++;
	e->st.insns += r->insns;
	e->st.detailed += r->detailed;
	e->st.ends[r->end]++;
	e->pending.bursts++;
	e->pending.insns += r->insns;
	e->pending.ends[r->end]++;
	e->epoch_bursts++;
	if (r->end == PATHS_END_UNSUPPORTED)
		name_end(e, r->mnemonic);
}

/* ---- a burst ---------------------------------------------------------------------------- */

/* The thread's whole user state: registers, fs/gs base, SSE and x87. */
static int read_state(pid_t tid, struct emu_state *s, bool *in_syscall)
{
	struct user_regs_struct u;
	struct user_fpregs_struct fp;

	if (ptrace(PTRACE_GETREGS, tid, NULL, &u) || ptrace(PTRACE_GETFPREGS, tid, NULL, &fp))
		return -1;
	memset(s, 0, sizeof(*s));
	/* Stopped inside a system call: its registers are the kernel's business. */
	*in_syscall = (int64_t)u.orig_rax >= 0;
	s->rip = u.rip;
	tracer_regs(&u, s->regs);
	s->fs_base = u.fs_base;
	s->gs_base = u.gs_base;
	memcpy(s->xmm, fp.xmm_space, sizeof(s->xmm));
	s->mxcsr = fp.mxcsr;
	s->fcw = fp.cwd;
	s->fsw = fp.swd;
	s->ftw = (uint8_t)fp.ftw;
	for (int k = 0; k < 8; k++)
		memcpy(s->st[k], (const uint8_t *)fp.st_space + 16 * k, 10);
	return s->rip < EMU_USER_END ? 0 : -1;
}

/* The address space's identity: the worker keeps translations while it stays the same. */
static uint64_t space_of(struct emburst *e, pid_t pid, const struct addr_space *as)
{
	if (pid != e->space_pid || (const void *)as != e->space_as) {
		e->space++;
		e->space_pid = pid;
		e->space_as = as;
	}
	return e->space;
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

/* A window may begin after this burst: none pending, the worker's budget not spent. */
static bool window_possible(struct emburst *e, int64_t now)
{
	return e->win->state == W_NONE && e->period_ns &&
	       (double)e->st.window_ns <= e->budget * (double)(now - e->started);
}

/*
 * At the budget's pace: the next one after the budget's share of time has
 * passed, 50 ms at most after a costly one (the first, which warms the
 * emulator up): the budget's check on the whole run holds the rest back.
 */
static void pace(struct emburst *e, int64_t start)
{
	int64_t took = time_monotonic_ns() - start, gap = (int64_t)((double)took / e->budget);

	e->st.ns += took;
	if (took > e->st.longest_ns)
		e->st.longest_ns = took;
	e->next_at = start + took + (gap < 50000000 ? gap : 50000000);
}

void emburst_run(struct emburst *e, pid_t pid, pid_t tid, struct procs *procs)
{
	struct addr_space *as = procs_lookup(procs, (uint32_t)pid);
	int64_t start = time_monotonic_ns();
	struct emu_burst_req req;
	struct emu_result res;
	bool in_syscall;
	const char *why;
	uint64_t released;
	int sig, pidfd, r;

	if (!as || tid <= 0)
		return;
	if (tracer_stop(&e->tracer, tid, &sig)) {
		e->st.refused++;
		pace(e, start);
		return;
	}
	memset(&req, 0, sizeof(req));
	if (sig || read_state(tid, &req.st, &in_syscall) || in_syscall) {
		if (sig)
			e->st.signals++;
		else
			e->st.in_syscall++;
		tracer_release(&e->tracer, tid, sig);
		pace(e, start);
		return;
	}
	/* The thread is stopped, its state read: a test may kill it here. */
	TEST_POINT("emulate-stopped");
	req.space = space_of(e, pid, as);
	req.limit = e->limit;
	req.detail = EMBURST_DETAIL < e->limit ? EMBURST_DETAIL : e->limit;
	/* Raw traces: a uniform sample of the epoch's bursts, BURSTS_KEEP of them. */
	if (hotlist_rand(&e->rng) % (e->epoch_bursts + 1) < BURSTS_KEEP)
		req.trace = req.detail;
	req.time_us = EMBURST_TIME_US;
	req.keep = window_possible(e, start);
	pidfd = open_pidfd(pid);
	r = emu_worker_burst(e->worker, &req, pid, pidfd, start + e->deadline_ns, &res, &why);
	tracer_release(&e->tracer, tid, 0);
	released = (uint64_t)time_monotonic_ns();
	pace(e, start);
	if (r) {
		e->st.lost++;
		e->pending.lost++;
		if (pidfd >= 0)
			close(pidfd);
		return;
	}
	e->st.pages += res.pages;
	add_result(e, procs, as, &res, (uint32_t)tid);
	if (res.kept) {
		struct emburst_window *w = e->win;

		w->state = W_WAIT;
		w->pid = pid;
		w->tid = (uint32_t)tid;
		w->as = as;
		w->pidfd = pidfd;
		w->after = released;
		w->give_up = (int64_t)w->after + 200 * 1000000LL + 50 * (int64_t)e->period_ns;
		w->have_b1 = false;
		w->n_after = 0;
	} else if (pidfd >= 0) {
		close(pidfd);
	}
	emu_result_release(&res);
}

/* ---- windows ---------------------------------------------------------------------------- */

static void miss(struct emburst *e, enum paths_miss why)
{
	e->st.misses[why]++;
	e->pending.misses[why]++;
}

static uint64_t *seen_of(struct emburst_window *w, unsigned k)
{
	if (k >= w->n_seen) {
		size_t n = k + 8;

		w->seen = xreallocarray(w->seen, n, sizeof(*w->seen));
		memset(w->seen + w->n_seen, 0, (n - w->n_seen) * sizeof(*w->seen));
		w->n_seen = n;
	}
	return &w->seen[k];
}

static void start_window(struct emburst *e)
{
	struct emburst_window *w = e->win;
	struct emu_window_req req;

	if (w->b1.rip == w->b2.rip && !memcmp(w->b1.regs, w->b2.regs, sizeof(w->b1.regs))) {
		/* A loop whose registers repeat: no telling which iteration. */
		miss(e, PATHS_MISS_AMBIGUOUS);
		emu_worker_drop(e->worker);
		window_end(e);
		return;
	}
	memset(&req, 0, sizeof(req));
	req.b1 = w->b1;
	req.b2 = w->b2;
	req.limit = (uint64_t)(w->n_after + 1) * e->period_ns * WINDOW_INSNS_PER_NS;
	req.time_us = EMBURST_WINDOW_TIME_US;
	w->started = time_monotonic_ns();
	w->cpu_started = emu_worker_cpu_ns(e->worker);
	if (emu_worker_window(e->worker, &req, w->pid, w->pidfd,
			      w->started + (int64_t)EMBURST_WINDOW_TIME_US * 1000 * EMU_WALL_FACTOR +
				      1000000000LL)) {
		miss(e, PATHS_MISS_LOST);
		window_end(e);
		return;
	}
	w->state = W_RUN;
	e->st.windows_tried++;
}

void emburst_sample(struct emburst *e, unsigned k, uint32_t tid, uint64_t time, bool user,
		    uint64_t ip, const uint64_t *regs, struct procs *procs)
{
	struct emburst_window *w = e->win;
	uint64_t *seen = seen_of(w, k);

	(*seen)++;
	(void)procs;
	if (w->state != W_WAIT || tid != w->tid || time <= w->after)
		return;
	w->n_after++;
	if (user && regs && ip < EMU_USER_END && w->have_b1 && k == w->b1_cpu &&
	    *seen == w->b1_seen + 1 && time - w->b1_time <= e->period_ns + e->period_ns / 2) {
		w->b2.rip = ip;
		memcpy(w->b2.regs, regs, sizeof(w->b2.regs));
		w->b2_time = time;
		start_window(e);
		return;
	}
	/*
	 * Not a pair (another CPU, another thread's sample between, more than
	 * a period and a half apart, a kernel sample): this one may be B1 of
	 * the next pair, unless the thread has run too long since the burst.
	 */
	if (w->n_after >= WINDOW_MAX_SAMPLES) {
		miss(e, PATHS_MISS_SAMPLES);
		emu_worker_drop(e->worker);
		window_end(e);
		return;
	}
	w->have_b1 = user && regs && ip < EMU_USER_END;
	w->b1_cpu = k;
	w->b1_seen = *seen;
	w->b1_time = time;
	w->b1.rip = ip;
	if (regs)
		memcpy(w->b1.regs, regs, sizeof(w->b1.regs));
}

static void add_window(struct emburst *e, struct procs *procs, const struct emu_window_result *r)
{
	struct emburst_window *w = e->win;
	struct addr_space *as = procs_lookup(procs, (uint32_t)w->pid);
	struct emburst_image *bi, *b2i;
	struct paths_window pw;
	uint64_t off, ns = w->b2_time - w->b1_time;

	if (!as || (const void *)as != w->as) {
		miss(e, PATHS_MISS_LOST);       /* the process exec'd or exited meanwhile */
		return;
	}
	if (r->insns > MAX_INSNS_PER_NS * ns) {
		miss(e, PATHS_MISS_IMPLAUSIBLE);
		return;
	}
	if (!(bi = where(e, procs, as, w->b1.rip, &pw.b1))) {
		miss(e, PATHS_MISS_LOST);
		return;
	}
	b2i = where(e, procs, as, w->b2.rip, &pw.b2);
	if (b2i != bi)
		pw.b2 = PATHS_ELSEWHERE;
	pw.insns = r->insns;
	pw.here = 0;
	pw.ns = ns;
	for (size_t i = 0; i < r->n_blocks; i++) {
		const struct emu_block_rec *b = &r->blocks[i];
		struct emburst_image *im = where(e, procs, as, b->pc, &off);

		if (!im)
			continue;
		paths_add_block(&im->prof, off, b->bytes, b->insns, 0, b->count);
		e->bytes += REC_BYTES;
		if (im == bi)
			pw.here += b->count * b->insns;
	}
	if (pw.here > pw.insns)
		pw.here = pw.insns;
	paths_add_window(&bi->prof, &pw, &e->rng);
	fold(e, bi);
	e->st.windows++;
	e->st.window_insns += r->insns;
	e->pending.windows++;
	e->pending.window_insns += r->insns;
}

void emburst_poll(struct emburst *e, struct procs *procs, int64_t now)
{
	struct emburst_window *w = e->win;
	struct emu_window_result r;
	int got;

	if (w->state == W_WAIT && now > w->give_up) {
		miss(e, PATHS_MISS_SAMPLES);
		emu_worker_drop(e->worker);
		window_end(e);
		return;
	}
	if (w->state != W_RUN)
		return;
	got = emu_worker_poll(e->worker, &r);
	if (!got)
		return;
	/*
	 * The windows' budget is the worker's CPU time, what they take from
	 * the program (the clock's would count the worker's waits for a CPU
	 * on a loaded host, several times its work).
	 */
	{
		int64_t cpu = emu_worker_cpu_ns(e->worker);

		e->st.window_ns += cpu > w->cpu_started && w->cpu_started ? cpu - w->cpu_started :
									     time_monotonic_ns() - w->started;
	}
	if (got < 0)
		miss(e, PATHS_MISS_LOST);
	else if (!r.matched)
		miss(e, (enum paths_miss)r.miss);
	else
		add_window(e, procs, &r);
	if (got > 0)
		emu_window_result_release(&r);
	window_end(e);
}

int emburst_fd(const struct emburst *e)
{
	return emu_worker_fd(e->worker);
}

/* ---- writing ---------------------------------------------------------------------------- */

static void image_clear(struct emburst_image *im)
{
	paths_profile_release(&im->prof);
	u64map_clear(&im->at);
	im->normalized = 0;
}

int emburst_write(struct emburst *e, struct db *db, uint32_t seq, struct procs *procs)
{
	int ret = 0;

	for (size_t i = 0; i < e->n_img; i++) {
		struct emburst_image *im = &e->img[i];

		if (paths_profile_empty(&im->prof))
			continue;
		paths_profile_normalize(&im->prof);
		u64map_clear(&im->at);
		for (size_t k = 0; k < im->prof.values.n; k++)
			*u64map_slot(&im->at, im->prof.values.v[k].offset) = k + 1;
		im->normalized = records(&im->prof);
		if (db_paths_merge(db, seq, procs_cimage(procs, im->image)->img.key, &im->prof)) {
			e->st.write_failures++;
			ret = -1;
			continue;
		}
		image_clear(im);
	}
	if (e->raw.n) {
		e->raw.seen = e->raw.n;
		if (db_bursts_merge(db, seq, &e->raw)) {
			e->st.write_failures++;
			ret = -1;
		} else {
			burst_set_release(&e->raw);
		}
	}
	if (!ret) {
		/* Everything in memory is on disk: the epoch's totals may say so. */
		e->st.written += e->pending.bursts;
		paths_summary_add(&e->written, &e->pending);
		memset(&e->pending, 0, sizeof(e->pending));
		e->bytes = 0;
	}
	return ret;
}

void emburst_clear(struct emburst *e)
{
	for (size_t i = 0; i < e->n_img; i++)
		image_clear(&e->img[i]);
	burst_set_release(&e->raw);
	memset(&e->pending, 0, sizeof(e->pending));
	e->bytes = 0;
}

void emburst_new_epoch(struct emburst *e)
{
	memset(&e->written, 0, sizeof(e->written));
	e->epoch_bursts = 0;
}

bool emburst_pressed(const struct emburst *e)
{
	return e->bytes > EMBURST_MAX_BYTES / 2;
}

/* ---- reports -------------------------------------------------------------------------- */

static size_t ends_by_count(const struct emburst *e, size_t *order, size_t max);

void emburst_report(const struct emburst *e, int64_t started, struct emburst_report *r)
{
	int64_t el = time_monotonic_ns() - (e->started ? e->started : started);
	struct strbuf sb = STRBUF_INIT;
	size_t order[EMBURST_END_NAMES], n;

	memset(r, 0, sizeof(*r));
	r->bursts = e->st.bursts;
	r->insns = e->st.insns;
	r->share = el > 0 ? (double)e->st.ns / (double)el : 0;
	memcpy(r->ends, e->st.ends, sizeof(r->ends));
	r->lost = e->st.lost;
	r->windows = e->st.windows;
	r->windows_tried = e->st.windows_tried;
	n = ends_by_count(e, order, 4);
	for (size_t i = 0; i < n; i++)
		strbuf_addf(&sb, "%s%s %" PRIu64, i ? ", " : "", e->ends[order[i]].mnemonic,
			    e->ends[order[i]].count);
	snprintf(r->end_names, sizeof(r->end_names), "%s", sb.len ? sb.buf : "");
	strbuf_release(&sb);
}

/* The instructions that ended bursts, most first, at most max. */
static size_t ends_by_count(const struct emburst *e, size_t *order, size_t max)
{
	size_t n = e->n_ends < max ? e->n_ends : max;

	for (size_t i = 0; i < e->n_ends; i++)
		order[i] = i;
	for (size_t i = 1; i < e->n_ends; i++)
		for (size_t j = i; j > 0 && e->ends[order[j]].count > e->ends[order[j - 1]].count; j--) {
			size_t t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	return n;
}

void emburst_status_text(const struct emburst *e, int64_t started, struct strbuf *o)
{
	const struct emburst_stats *s = &e->st;
	const struct emu_worker_stats *ws = emu_worker_stats(e->worker);
	double el = (double)(time_monotonic_ns() - (e->started ? e->started : started));
	size_t order[EMBURST_END_NAMES], n = ends_by_count(e, order, 8);

	strbuf_addf(o, "bursts: emulated, %" PRIu64 " of %" PRIu64 " instructions, %.2f%% of the "
		    "time (budget %.0f%%); ended:", s->bursts, s->insns,
		    el > 0 ? 100 * (double)s->ns / el : 0, 100 * e->budget);
	for (int i = 0; i < PATHS_END__COUNT; i++)
		strbuf_addf(o, "%s %s %" PRIu64, i ? "," : "", paths_end_name((unsigned)i), s->ends[i]);
	for (size_t i = 0; i < n; i++)
		strbuf_addf(o, "%s%s %" PRIu64, i ? ", " : " (", e->ends[order[i]].mnemonic,
			    e->ends[order[i]].count);
	strbuf_addf(o, "%s; not followed: %" PRIu64 " refused, %" PRIu64 " in a system call, %"
		    PRIu64 " with a signal pending, %" PRIu64 " lost (worker started %" PRIu64
		    " times); %" PRIu64 " written\n", n ? ")" : "", s->refused, s->in_syscall,
		    s->signals, s->lost, ws->starts, s->written);
	strbuf_addf(o, "windows: %" PRIu64 " of %" PRIu64 " matched, %" PRIu64 " instructions "
		    "between samples, %.2f%% of the time in the worker; missed:", s->windows,
		    s->windows_tried + s->misses[PATHS_MISS_SAMPLES] + s->misses[PATHS_MISS_AMBIGUOUS],
		    s->window_insns, el > 0 ? 100 * (double)s->window_ns / el : 0);
	for (int i = 0; i < PATHS_MISS__COUNT; i++)
		strbuf_addf(o, "%s %s %" PRIu64, i ? "," : "", paths_miss_name((unsigned)i), s->misses[i]);
	strbuf_addch(o, '\n');
}

void emburst_status_json(const struct emburst *e, int64_t started, struct json_writer *w)
{
	const struct emburst_stats *s = &e->st;
	const struct emu_worker_stats *ws = emu_worker_stats(e->worker);
	double el = (double)(time_monotonic_ns() - (e->started ? e->started : started));
	size_t order[EMBURST_END_NAMES], n = ends_by_count(e, order, EMBURST_END_NAMES);

	json_key(w, "mode"), json_string(w, "emulate");
	JSON_U64_MEMBERS(w, { "bursts", s->bursts }, { "instructions", s->insns },
			 { "detailed", s->detailed }, { "limit", e->limit });
	json_key(w, "time_share"), json_double(w, el > 0 ? (double)s->ns / el : 0, 6);
	json_key(w, "stopped_s"), json_double(w, (double)s->ns / 1e9, 6);
	json_key(w, "longest_s"), json_double(w, (double)s->longest_ns / 1e9, 6);
	json_key(w, "elapsed_s"), json_double(w, el / 1e9, 6);
	json_key(w, "budget"), json_double(w, e->budget, 4);
	json_key(w, "ends"), json_object_begin(w);
	for (int i = 0; i < PATHS_END__COUNT; i++)
		json_key(w, paths_end_name((unsigned)i)), json_u64(w, s->ends[i]);
	json_object_end(w);
	json_key(w, "end_instructions"), json_object_begin(w);
	for (size_t i = 0; i < n; i++)
		json_key(w, e->ends[order[i]].mnemonic), json_u64(w, e->ends[order[i]].count);
	json_object_end(w);
	JSON_U64_MEMBERS(w, { "refused", s->refused }, { "in_syscall", s->in_syscall },
			 { "signals", s->signals }, { "lost", s->lost }, { "gone", e->tracer.gone },
			 { "worker_starts", ws->starts }, { "worker_failures", ws->failures },
			 { "pages", ws->pages }, { "page_requests", ws->page_requests },
			 { "written", s->written }, { "write_failures", s->write_failures });
	json_key(w, "windows"), json_object_begin(w);
	JSON_U64_MEMBERS(w, { "tried", s->windows_tried }, { "matched", s->windows },
			 { "instructions", s->window_insns });
	json_key(w, "worker_s"), json_double(w, (double)s->window_ns / 1e9, 6);
	json_key(w, "misses"), json_object_begin(w);
	for (int i = 0; i < PATHS_MISS__COUNT; i++)
		json_key(w, paths_miss_name((unsigned)i)), json_u64(w, s->misses[i]);
	json_object_end(w);
	json_object_end(w);
}
