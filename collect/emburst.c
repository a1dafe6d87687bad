/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/emburst.c - emulated bursts and their trails in the collector
 * (collect/emburst.h): stopping the thread, its state and the memory the
 * burst reads first, letting it go; the worker's answers resolved and
 * aggregated per image; the trail's samples, its windows past the dip.
 */
#include "config.h"
#include "collect/emburst.h"
#include "collect/emu-worker.h"
#include "collect/procs.h"
#include "collect/stopmem.h"
#include "core/die.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "core/testpoint.h"
#include "core/timeutil.h"
#include "core/xalloc.h"
#include "db/db.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <inttypes.h>
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
 * A trail's search for its points stops after this many instructions a
 * ns of the thread's CPU time from the stop to its last point (each
 * point one period of its CPU time after the one before at most, one
 * period more for the first): 3 a cycle at 4 GHz, three times what the
 * fastest loops here retire (calc-calib: 3.8 a ns).  A bound from the
 * clock instead cost seconds of the worker for windows that could not
 * match (measured: 64 million instructions, 4.5 s, for a window of gzip
 * that passed a read).
 */
#define WINDOW_INSNS_PER_NS 12
/* Windows counted a trail past the dip at least and at most (about the dip's length). */
#define TRAIL_MIN_WINDOWS 4
#define TRAIL_MAX_WINDOWS 32
/*
 * A stop's dip is to stay under 1% of the samples: the next stop comes
 * after this many times the dip's length of sampled CPU time.
 */
#define DIP_SPACING 100

enum { B_IDLE, B_BURST, B_TRAIL };

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
	e->pidfd = -1;
	stopfiles_init(&e->files);
	emtrail_init(&e->trail);
	emdip_init(&e->dip, 0);
	stopmem_init(&e->mem);
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

/* The burst in flight and its trail are over: the engine's kept state forgotten. */
static void burst_end(struct emburst *e)
{
	if (e->pidfd >= 0)
		close(e->pidfd);
	e->pidfd = -1;
	if (e->have_res)
		emu_result_release(&e->res);
	e->have_res = false;
	emtrail_stop(&e->trail);
	stopfiles_close(&e->files);
	e->state = B_IDLE;
}

void emburst_free(struct emburst *e)
{
	if (!e)
		return;
	burst_end(e);
	emu_worker_stop(e->worker);
	emtrail_release(&e->trail);
	stopmem_release(&e->mem);
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
	emdip_init(&e->dip, period_ns);
}

const struct emu_worker *emburst_worker(const struct emburst *e)
{
	return e->worker;
}

/*
 * What bursts cost: the worker's CPU for them and their trails, and the
 * threads' time stopped; the budget is a share of the CPU time sampled.
 */
static double cost(const struct emburst *e)
{
	return (double)(e->st.worker_ns + e->st.ns);
}

bool emburst_due(struct emburst *e, int64_t now)
{
	if (!(e->budget > 0) || !emu_worker_usable(e->worker) || e->state != B_IDLE ||
	    emu_worker_busy(e->worker))
		return false;
	if (!e->started)
		e->started = now;
	return now >= e->next_at && e->profiled_ns >= e->next_profiled &&
	       cost(e) <= e->budget * (double)e->profiled_ns;
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

/*
 * The registers each pc's value records write (from the worker's values of
 * it), in a map pc -> mask made in one pass: a look a record, not a pass
 * over the values (quadratic in what the worker sends).
 */
static void written_masks(const struct emu_result *r, struct u64map *masks)
{
	for (size_t i = 0; i < r->n_values; i++)
		*u64map_slot(masks, r->values[i].pc) |= 1u << r->values[i].reg;
}

static void add_detail(struct emburst *e, struct procs *procs, struct addr_space *as,
		       const struct emu_result *r)
{
	struct u64map masks = U64MAP_INIT;

	written_masks(r, &masks);
	for (size_t i = 0; i < r->n_insn; i++) {
		uint64_t off, mask = 0;
		struct emburst_image *im = where(e, procs, as, r->insn[i].pc, &off);

		u64map_get(&masks, r->insn[i].pc, &mask);
		if (im) {
			value_rec(e, im, off, (uint32_t)mask)->samples += r->insn[i].execs;
			im->prof.detailed += r->insn[i].execs;
		}
	}
	u64map_release(&masks);
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

/* Log2 buckets of microseconds a thread was stopped (1, 2, 4, ... us). */
static void count_stop(struct emburst *e, int64_t ns)
{
	unsigned k = 0;

	for (int64_t us = ns / 1000; us > 1 && k + 1 < EMBURST_STOP_BUCKETS; us >>= 1)
		k++;
	e->st.stop_hist[k]++;
	e->st.stops++;
	e->st.ns += ns;
	if (ns > e->st.longest_ns)
		e->st.longest_ns = ns;
}

int64_t emburst_stop_quantile(const struct emburst_stats *s, double q)
{
	uint64_t want = (uint64_t)((double)s->stops * q + 0.999999), sum = 0;

	if (!s->stops)
		return 0;
	for (unsigned k = 0; k < EMBURST_STOP_BUCKETS; k++)
		if ((sum += s->stop_hist[k]) >= want)
			/* the bucket's upper end, never past the longest seen */
			return (int64_t)2000 << k < s->longest_ns ? (int64_t)2000 << k : s->longest_ns;
	return s->longest_ns;
}

/*
 * At the budget's pace: the next burst after the one in flight, once the
 * cost so far is within the budget (emburst_due), and after the dip it
 * caused has become a small share of the sampled time.
 */
static void pace(struct emburst *e, int64_t now)
{
	uint64_t dip = (uint64_t)emdip_skip(&e->dip) * e->period_ns;

	e->next_at = now;
	e->next_profiled = e->profiled_ns + DIP_SPACING * (dip ? dip : e->period_ns);
}

/* The points a trail asks for: past the dip and its reference, then windows. */
static unsigned trail_points(const struct emburst *e)
{
	unsigned reach = e->dip.reach, skip = emdip_skip(&e->dip);
	unsigned w = reach < TRAIL_MIN_WINDOWS ? TRAIL_MIN_WINDOWS :
		     reach > TRAIL_MAX_WINDOWS ? TRAIL_MAX_WINDOWS : reach;
	unsigned n = (skip > reach ? skip : reach) + w + 1;

	return n > EMU_MAX_TRAIL ? EMU_MAX_TRAIL : n;
}

void emburst_run(struct emburst *e, pid_t pid, pid_t tid, struct procs *procs)
{
	struct addr_space *as = procs_lookup(procs, (uint32_t)pid);
	int64_t start = time_monotonic_ns(), stopped;
	struct emu_burst_req req;
	bool in_syscall;
	int sig;

	if (!as || tid <= 0 || e->state != B_IDLE)
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
		count_stop(e, time_monotonic_ns() - start);
		pace(e, start);
		return;
	}
	/* The thread is stopped, its state read: a test may kill it here. */
	TEST_POINT("emulate-stopped");
	/* What the burst reads first, as the thread has it; the last burst's pages of this space. */
	stopmem_take(&e->mem, pid, &req.st, e->hint_as == (const void *)as ? e->hint : NULL,
		     e->hint_as == (const void *)as ? e->n_hint : 0);
	/* where the thread is in the files the last trail of its space read */
	stopfiles_take(&e->files, pid, e->hint_fd, e->hint_as == (const void *)as ? e->n_hint_fd : 0);
	tracer_release(&e->tracer, tid, 0);
	stopped = time_monotonic_ns();
	count_stop(e, stopped - start);
	stopfiles_open(&e->files, pid);
	req.n_files = e->files.n;
	memcpy(req.files, e->files.f, e->files.n * sizeof(req.files[0]));
	e->st.snap_pages += e->mem.n;
	req.space = space_of(e, pid, as);
	req.limit = e->limit;
	req.detail = EMBURST_DETAIL < e->limit ? EMBURST_DETAIL : e->limit;
	/* Raw traces: a uniform sample of the epoch's bursts, BURSTS_KEEP of them. */
	if (hotlist_rand(&e->rng) % (e->epoch_bursts + 1) < BURSTS_KEEP)
		req.trace = req.detail;
	req.time_us = EMBURST_TIME_US;
	req.keep = e->period_ns > 0;
	req.n_snap = e->mem.n;
	req.snap = e->mem.page;
	e->pidfd = open_pidfd(pid);
	e->cpu_mark = emu_worker_cpu_ns(e->worker);
	if (emu_worker_burst(e->worker, &req, pid, e->pidfd, e->files.local, stopped + e->deadline_ns)) {
		e->st.lost++;
		e->pending.lost++;
		burst_end(e);
		pace(e, stopped);
		return;
	}
	e->state = B_BURST;
	e->pid = pid;
	e->tid = (uint32_t)tid;
	e->as = as;
	e->deadline = stopped + e->deadline_ns;
	if (req.keep) {
		unsigned want = trail_points(e);

		emtrail_start(&e->trail, (uint32_t)tid, (uint64_t)stopped, want);
		e->trail_give_up = stopped + EMBURST_TRAIL_WAIT_NS + 4 * (int64_t)want * (int64_t)e->period_ns;
	}
	pace(e, stopped);
}

/* ---- the trail -------------------------------------------------------------------------- */

static void miss(struct emburst *e, enum paths_miss why)
{
	e->st.misses[why]++;
	e->pending.misses[why]++;
}

void emburst_sample(struct emburst *e, unsigned k, uint32_t tid, uint64_t time, bool user,
		    uint64_t ip, const uint64_t *regs, struct procs *procs)
{
	struct emtrail *t = &e->trail;

	e->profiled_ns += e->period_ns;
	if (!emtrail_sample(t, k, tid, time, user, ip, regs))
		return;
	/* the point's code: instructions of a window there are "here" */
	{
		struct addr_space *as = procs_lookup(procs, (uint32_t)e->pid);
		const struct mapping *m = as ? procs_mapping(as, ip) : NULL;

		t->pt[t->n - 1].lo = m ? m->start : ip;
		t->pt[t->n - 1].hi = m ? m->end : ip + 1;
	}
}

/* The burst's paths, once something says the emulation followed the thread. */
static void commit_burst(struct emburst *e, struct procs *procs, struct addr_space *as, bool verified)
{
	if (!e->have_res)
		return;
	if (verified) {
		add_result(e, procs, as, &e->res, e->tid);
		e->st.insns_verified += e->res.insns;
	} else {
		/*
		 * It read memory the thread may have rewritten since the stop,
		 * and no later sample says it followed it right: not counted.
		 */
		e->st.unverified++;
		e->pending.lost++;
	}
	emu_result_release(&e->res);
	e->have_res = false;
}

/* The trail's request: its points (maybe none), counted from the first past the dip. */
static void send_trail(struct emburst *e)
{
	struct emtrail *t = &e->trail;
	struct emu_trail_req req;
	int64_t now = time_monotonic_ns();

	memset(&req, 0, sizeof(req));
	for (unsigned k = 1; k < t->n; k++)
		if (emtrail_window_ok(t, k - 1, e->period_ns))
			t->pt[k].flags |= EMU_POINT_PERIOD;
	req.n = t->n;
	req.pt = t->pt;
	e->skip = emdip_skip(&e->dip);
	req.count_from = !t->n ? 0 : e->skip < t->n ? e->skip : t->n - 1;
	req.segment = e->period_ns * WINDOW_INSNS_PER_NS + 2 * e->limit;
	req.limit = (uint64_t)(t->n + 1) * req.segment;
	req.time_us = EMBURST_TRAIL_TIME_US;
	emtrail_stop(t);
	if (emu_worker_trail(e->worker, &req, e->pid, e->pidfd,
			     now + (int64_t)EMBURST_TRAIL_TIME_US * 1000 * EMU_WALL_FACTOR + 1000000000LL)) {
		e->st.lost++;
		e->pending.lost++;
		burst_end(e);
		return;
	}
	if (t->n)
		e->st.trails++;
	e->state = B_TRAIL;
}

/* A window past the dip: recorded with the image its first point is in. */
static void add_window(struct emburst *e, struct procs *procs, struct addr_space *as, unsigned k,
		       uint64_t insns, uint64_t here)
{
	const struct emtrail *t = &e->trail;
	struct emburst_image *bi, *b2i;
	struct paths_window pw;
	uint64_t ns = t->time[k + 1] - t->time[k];

	if (insns > MAX_INSNS_PER_NS * ns) {
		miss(e, PATHS_MISS_IMPLAUSIBLE);
		return;
	}
	if (!(bi = where(e, procs, as, t->pt[k].p.rip, &pw.b1))) {
		miss(e, PATHS_MISS_LOST);
		return;
	}
	b2i = where(e, procs, as, t->pt[k + 1].p.rip, &pw.b2);
	if (b2i != bi)
		pw.b2 = PATHS_ELSEWHERE;
	pw.insns = insns;
	pw.here = here < insns ? here : insns;
	pw.ns = ns;
	paths_add_window(&bi->prof, &pw, &e->rng);
	fold(e, bi);
	e->st.windows++;
	e->st.window_insns += insns;
	e->pending.windows++;
	e->pending.window_insns += insns;
}

/* The blocks the counted windows ran (from the first past the dip to the last matched). */
static void add_window_blocks(struct emburst *e, struct procs *procs, struct addr_space *as,
			      const struct emu_trail_result *r)
{
	for (size_t i = 0; i < r->n_blocks; i++) {
		const struct emu_block_rec *b = &r->blocks[i];
		uint64_t off;
		struct emburst_image *im = where(e, procs, as, b->pc, &off);

		if (!im)
			continue;
		paths_add_block(&im->prof, off, b->bytes, b->insns, 0, b->count);
		e->bytes += REC_BYTES;
	}
}

/*
 * The burst followed the thread right if it read only memory copied at the
 * stop, or if a point of the trail at its end or past it matched (a
 * path counts as far as a later sample whose registers it matched).
 */
static bool verified(const struct emburst *e, const struct emu_trail_result *r)
{
	return !e->res.live ||
	       (r && r->matched && r->to_first + r->at[r->matched - 1] >= e->res.insns);
}

static void trail_done(struct emburst *e, struct procs *procs, const struct emu_trail_result *r)
{
	struct emtrail *t = &e->trail;
	struct addr_space *as = procs_lookup(procs, (uint32_t)e->pid);
	uint64_t insns[EMU_MAX_TRAIL];
	bool ok[EMU_MAX_TRAIL];
	unsigned windows = r->matched > 0 ? r->matched - 1 : 0;

	if (!as || (const void *)as != e->as) {
		/* the process exec'd or exited meanwhile */
		if (t->n)
			miss(e, PATHS_MISS_LOST);
		commit_burst(e, procs, NULL, false);
		return;
	}
	e->st.points += r->matched;
	e->st.live_pages += r->live;
	/* a read it could not pass: the next stop of this space learns where that file is */
	if (r->read_fd >= 0 && e->hint_as == e->as) {
		size_t k;

		for (k = 0; k < e->n_hint_fd && e->hint_fd[k] != (uint32_t)r->read_fd; k++)
			;
		if (k == e->n_hint_fd && k < EMU_MAX_FILES)
			e->hint_fd[e->n_hint_fd++] = (uint32_t)r->read_fd;
	}
	commit_burst(e, procs, as, verified(e, r));
	if (!t->n)
		return;
	if (r->matched < t->n)
		miss(e, (enum paths_miss)r->miss);
	for (unsigned k = 0; k < windows; k++) {
		insns[k] = r->at[k + 1] - r->at[k];
		ok[k] = emtrail_window_ok(t, k, e->period_ns);
	}
	emdip_add(&e->dip, insns, ok, windows);
	for (unsigned k = e->skip; k < windows; k++) {
		if (ok[k])
			add_window(e, procs, as, k, insns[k], r->here[k + 1]);
		else
			e->st.not_periods++;
	}
	for (unsigned k = 0; k < windows && k < e->skip; k++)
		e->st.dip_windows += ok[k];
	if (windows > e->skip)
		add_window_blocks(e, procs, as, r);
}

/* An answer of the worker: the burst's (kept until its trail's, if it has one) or the trail's. */
static void answered(struct emburst *e, struct procs *procs, struct emu_answer *a)
{
	int64_t cpu = emu_worker_cpu_ns(e->worker);

	if (cpu > e->cpu_mark && e->cpu_mark)
		e->st.worker_ns += cpu - e->cpu_mark;
	e->cpu_mark = cpu;
	if (a->kind == EMU_ANSWER_BURST) {
		e->res = a->burst;
		memset(&a->burst, 0, sizeof(a->burst));
		e->have_res = true;
		e->st.live_pages += e->res.live;
		/* the pages it read from the live process: the next stop of this space copies them */
		if (e->hint_as != e->as)
			e->n_hint_fd = 0;
		e->hint_as = e->as;
		e->n_hint = e->res.n_working;
		memcpy(e->hint, e->res.working, e->res.n_working * sizeof(e->hint[0]));
		if (e->state != B_TRAIL) {
			/* no trail: it stands if it read only the copy */
			commit_burst(e, procs, procs_lookup(procs, (uint32_t)e->pid), verified(e, NULL));
			burst_end(e);
		}
	} else if (a->kind == EMU_ANSWER_TRAIL) {
		trail_done(e, procs, &a->trail);
		burst_end(e);
	}
}

void emburst_poll(struct emburst *e, struct procs *procs, int64_t now)
{
	struct emu_answer a;
	const char *why;
	int got;

	if (e->state == B_IDLE)
		return;
	/* A trail's two answers may come in one read: both taken. */
	while ((got = emu_worker_poll(e->worker, &a, &why)) > 0) {
		answered(e, procs, &a);
		emu_answer_release(&a);
		if (e->state == B_IDLE)
			return;
	}
	if (got < 0) {
		/* the worker died, hung or broke the protocol: this burst is lost */
		e->st.lost++;
		e->pending.lost++;
		if (e->state == B_TRAIL && e->trail.n)
			miss(e, PATHS_MISS_LOST);
		burst_end(e);
		return;
	}
	/* Prepared: its trail once its samples are in, or the thread stopped giving them. */
	if (e->state == B_BURST && e->trail.active && emu_worker_ready(e->worker) &&
	    (emtrail_complete(&e->trail) || now > e->trail_give_up))
		send_trail(e);
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
	struct strbuf sb = STRBUF_INIT;
	size_t order[EMBURST_END_NAMES], n;

	(void)started;
	memset(r, 0, sizeof(*r));
	r->bursts = e->st.bursts;
	r->insns = e->st.insns;
	r->share = e->profiled_ns ? cost(e) / (double)e->profiled_ns : 0;
	memcpy(r->ends, e->st.ends, sizeof(r->ends));
	r->lost = e->st.lost;
	r->unverified = e->st.unverified;
	r->stops = e->st.stops;
	r->stop_p50_ns = emburst_stop_quantile(&e->st, 0.5);
	r->stop_p99_ns = emburst_stop_quantile(&e->st, 0.99);
	r->stop_max_ns = e->st.longest_ns;
	r->trails = e->st.trails;
	r->windows = e->st.windows;
	r->dip_windows = e->st.dip_windows;
	r->skip = emdip_skip(&e->dip);
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
	size_t order[EMBURST_END_NAMES], n = ends_by_count(e, order, 8);

	(void)started;
	strbuf_addf(o, "bursts: emulated, %" PRIu64 " of %" PRIu64 " instructions, %.2f%% of the "
		    "CPU sampled (budget %.0f%%: the worker %.3f s, threads stopped %.3f s); ended:",
		    s->bursts, s->insns, e->profiled_ns ? 100 * cost(e) / (double)e->profiled_ns : 0,
		    100 * e->budget, (double)s->worker_ns / 1e9, (double)s->ns / 1e9);
	for (int i = 0; i < PATHS_END__COUNT; i++)
		strbuf_addf(o, "%s %s %" PRIu64, i ? "," : "", paths_end_name((unsigned)i), s->ends[i]);
	for (size_t i = 0; i < n; i++)
		strbuf_addf(o, "%s%s %" PRIu64, i ? ", " : " (", e->ends[order[i]].mnemonic,
			    e->ends[order[i]].count);
	strbuf_addf(o, "%s; not followed: %" PRIu64 " refused, %" PRIu64 " in a system call, %"
		    PRIu64 " with a signal pending, %" PRIu64 " lost (worker started %" PRIu64
		    " times), %" PRIu64 " unverified; %" PRIu64 " written\n", n ? ")" : "", s->refused,
		    s->in_syscall, s->signals, s->lost, ws->starts, s->unverified, s->written);
	strbuf_addf(o, "stops: %" PRIu64 ", p50 %.0f us, p99 %.0f us, longest %.0f us; %" PRIu64
		    " pages copied at them, %" PRIu64 " read after\n", s->stops,
		    (double)emburst_stop_quantile(s, 0.5) / 1e3, (double)emburst_stop_quantile(s, 0.99) / 1e3,
		    (double)s->longest_ns / 1e3, s->snap_pages, s->live_pages);
	strbuf_addf(o, "windows: %" PRIu64 " recorded past the dip, %" PRIu64 " instructions between "
		    "samples; %" PRIu64 " in the dip, %" PRIu64 " not one period; %" PRIu64 " trails, %"
		    PRIu64 " samples matched; trails ended early:", s->windows, s->window_insns,
		    s->dip_windows, s->not_periods, s->trails, s->points);
	for (int i = 0; i < PATHS_MISS__COUNT; i++)
		strbuf_addf(o, "%s %s %" PRIu64, i ? "," : "", paths_miss_name((unsigned)i), s->misses[i]);
	strbuf_addch(o, '\n');
	emdip_status_text(&e->dip, o);
}

void emburst_status_json(const struct emburst *e, int64_t started, struct json_writer *w)
{
	const struct emburst_stats *s = &e->st;
	const struct emu_worker_stats *ws = emu_worker_stats(e->worker);
	size_t order[EMBURST_END_NAMES], n = ends_by_count(e, order, EMBURST_END_NAMES);

	(void)started;
	json_key(w, "mode"), json_string(w, "emulate");
	JSON_U64_MEMBERS(w, { "bursts", s->bursts }, { "instructions", s->insns },
			 { "detailed", s->detailed }, { "limit", e->limit });
	json_key(w, "cpu_share"), json_double(w, e->profiled_ns ? cost(e) / (double)e->profiled_ns : 0, 6);
	json_key(w, "worker_s"), json_double(w, (double)s->worker_ns / 1e9, 6);
	json_key(w, "stopped_s"), json_double(w, (double)s->ns / 1e9, 6);
	json_key(w, "sampled_s"), json_double(w, (double)e->profiled_ns / 1e9, 6);
	json_key(w, "budget"), json_double(w, e->budget, 4);
	json_key(w, "stops"), json_object_begin(w);
	JSON_U64_MEMBERS(w, { "count", s->stops }, { "pages_copied", s->snap_pages },
			 { "pages_read_after", s->live_pages });
	json_key(w, "p50_us"), json_double(w, (double)emburst_stop_quantile(s, 0.5) / 1e3, 1);
	json_key(w, "p99_us"), json_double(w, (double)emburst_stop_quantile(s, 0.99) / 1e3, 1);
	json_key(w, "longest_us"), json_double(w, (double)s->longest_ns / 1e3, 1);
	json_object_end(w);
	json_key(w, "ends"), json_object_begin(w);
	for (int i = 0; i < PATHS_END__COUNT; i++)
		json_key(w, paths_end_name((unsigned)i)), json_u64(w, s->ends[i]);
	json_object_end(w);
	json_key(w, "end_instructions"), json_object_begin(w);
	for (size_t i = 0; i < n; i++)
		json_key(w, e->ends[order[i]].mnemonic), json_u64(w, e->ends[order[i]].count);
	json_object_end(w);
	JSON_U64_MEMBERS(w, { "refused", s->refused }, { "in_syscall", s->in_syscall },
			 { "signals", s->signals }, { "lost", s->lost }, { "unverified", s->unverified },
			 { "gone", e->tracer.gone },
			 { "worker_starts", ws->starts }, { "worker_failures", ws->failures },
			 { "pages", ws->pages }, { "page_requests", ws->page_requests },
			 { "written", s->written }, { "write_failures", s->write_failures });
	json_key(w, "windows"), json_object_begin(w);
	JSON_U64_MEMBERS(w, { "trails", s->trails }, { "points", s->points },
			 { "recorded", s->windows }, { "in_dip", s->dip_windows },
			 { "not_periods", s->not_periods }, { "instructions", s->window_insns });
	json_key(w, "misses"), json_object_begin(w);
	for (int i = 0; i < PATHS_MISS__COUNT; i++)
		json_key(w, paths_miss_name((unsigned)i)), json_u64(w, s->misses[i]);
	json_object_end(w);
	json_key(w, "dip"), json_object_begin(w);
	emdip_status_json(&e->dip, w);
	json_object_end(w);
	json_object_end(w);
}
