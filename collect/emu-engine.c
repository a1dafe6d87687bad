/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/emu-engine.c - the emulator side of bursts and windows
 * (collect/emu-engine.h): unicorn's two engines, a run from a state until
 * a hook or an error ends it, its results, a burst kept for a window, and
 * the engine's life.  Its guest memory is collect/emu-memory.c; its hooks,
 * and what they count, collect/emu-hooks.c.
 */
#include "config.h"
#include "collect/emu-engine-int.h"
#include "core/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* ---- time, and the engine that a fault belongs to ------------------------------------- */

struct emu_engine *emu_active;

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int64_t cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/*
 * Whether the run is past its time: the worker's CPU time, not the
 * clock's, so that a loaded host, where the worker waits for a CPU most of
 * the time, does not end bursts early (measured: 15 of 41 bursts of xz
 * ended by a 50 ms clock on a host with 14 runnable threads a CPU, their
 * 9 ms of work spread over it); the clock's own cap, four times as long,
 * keeps the collector's wait bounded.  The CPU clock is a system call, so
 * it is read only once the wall clock says the cap may have been reached.
 */
bool emu_over_time(struct emu_engine *e)
{
	int64_t now = now_ns(), used;

	if (now <= e->deadline)
		return false;
	if (now >= e->wall_end)
		return true;
	used = cpu_ns() - e->cpu_start;
	if (used >= e->cpu_cap)
		return true;
	e->deadline = now + (e->cpu_cap - used);
	if (e->deadline > e->wall_end)
		e->deadline = e->wall_end;
	return false;
}

/* ---- running -------------------------------------------------------------------------- */

static void begin_run(struct emu_engine *e, uint64_t limit, uint32_t time_us)
{
	e->gen++;
	if (!e->gen)
		e->gen = 1;
	e->n_tb = e->n_te = e->n_ti = e->n_tv = e->n_tc = 0;
	e->total = e->blk_start = e->nblocks = 0;
	e->cur = e->prev = e->hooked = NULL;
	e->limit = limit;
	e->cpu_cap = (int64_t)time_us * 1000;
	e->cpu_start = cpu_ns();
	e->deadline = now_ns() + e->cpu_cap;
	e->wall_end = e->deadline + EMU_WALL_FACTOR * e->cpu_cap - e->cpu_cap;
	e->passed = 0;
	e->end = e->pending = -1;
	e->end_pc = 0;
	e->mnemonic[0] = '\0';
	e->full = false;
	e->windowing = e->matched = false;
	e->trail = NULL;
}

static bool inside(const struct blk *b, uint64_t pc)
{
	return b && pc >= b->pc && pc < b->pc + b->size;
}

/*
 * The instructions that ran, from where the run ended: the instruction
 * not followed (a system call, an instruction the emulator lacks, a trap),
 * else where the emulator stopped.  Blocks are counted whole when they
 * begin; one the run ended inside counts only up to there, and one whose
 * hook asked to stop counts what ran of it anyway.
 */
static void settle(struct emu_engine *e)
{
	uint64_t at = e->stop_rip;


	if (e->end == PATHS_END_LIMIT || e->end == PATHS_END_TIME)
		e->end_pc = at;
	else if (inside(e->hooked, e->end_pc))
		at = e->end_pc;
	/*
	 * The block whose hook stopped the run ran all the same (without code
	 * hooks unicorn looks for a stop only between blocks; measured: bursts
	 * 2 to 16 instructions past their limit): it counts, as it does in the
	 * state the run ends with.
	 */
	if (e->hooked && !e->hooked_counted && at != e->hooked->pc)
		emu_count_block(e, e->hooked);
	if (e->hooked && at >= e->hooked->pc && at <= e->hooked->pc + e->hooked->size)
		e->total = e->hooked_start + emu_index_in(e, e->hooked, at);
	/*
	 * A run resumed from here begins a block that no branch led to (the
	 * edge into a block whose hook stopped the run is counted already).
	 */
	e->prev = e->hooked = e->cur = NULL;
}

/*
 * The instructions found that unicorn would do wrong become exits of both
 * engines, and the block that held them is translated again (with them).
 */
static void set_exits(struct emu_engine *e)
{
	struct blk *b = e->retranslate;

	uc_ctl_set_exits(e->fast, e->traps, e->n_traps);
	uc_ctl_set_exits(e->slow, e->traps, e->n_traps);
	if (b) {
		uc_ctl_remove_cache(e->fast, b->pc, b->pc + b->size);
		uc_ctl_remove_cache(e->slow, b->pc, b->pc + b->size);
	}
	e->retranslate = NULL;
	e->new_traps = false;
}

/*
 * Runs from rip until a hook or an error ends it; instructions the
 * emulator lacks but collect/emu-avx.c does are done and the run goes on.
 */
static void run(struct emu_engine *e, uint64_t rip)
{
	emu_active = e;
	while (e->end < 0) {
		uc_err err = uc_emu_start(e->uc, rip, 0, 0, 0);

		rip = emu_read_rip(e->uc);
		if (e->end >= 0)
			break;
		if (e->retranslate) {
			set_exits(e);
			continue;
		}
		if (err == UC_ERR_OK && emu_is_trap(e, rip)) {
			/* An exit: unicorn would do it wrong; done here, a block of its own. */
			uint64_t at = rip;

			if (emu_emulate_missing(e, rip)) {
				rip = emu_read_rip(e->uc);
				emu_count_soft(e, at, (unsigned)(rip - at));
				continue;
			}
			e->end = PATHS_END_UNSUPPORTED;
			e->end_pc = rip;
			break;
		}
		if (err == UC_ERR_INSN_INVALID && emu_emulate_missing(e, rip)) {
			/* The block went to the instruction: the next starts after it. */
			rip = emu_read_rip(e->uc);
			continue;
		}
		if (err == UC_ERR_INSN_INVALID) {
			e->end = strcmp(e->mnemonic, "ud2") ? PATHS_END_UNSUPPORTED : PATHS_END_FAULT;
			e->end_pc = rip;
		} else if (err == UC_ERR_READ_UNMAPPED || err == UC_ERR_WRITE_UNMAPPED ||
			   err == UC_ERR_FETCH_UNMAPPED) {
			e->end = PATHS_END_UNREADABLE;
			e->end_pc = e->cur ? e->cur->pc : rip;
		} else {
			/* Stopped by nothing the hooks asked for: a fault, or an emulator error. */
			e->end = PATHS_END_FAULT;
			e->end_pc = rip;
		}
	}
	emu_active = NULL;
	e->stop_rip = emu_read_rip(e->uc);
	settle(e);
}

/*
 * Detail runs in the slow engine, the rest in the fast one: hooks on every
 * instruction cost about 30 times a block hook (measured: 18 ns against
 * 0.6 ns an instruction on a loop), and unicorn puts them in a block's
 * translation, so switching them on and off in one engine would mean
 * translating the code again at every switch.  Two engines over the same
 * memory keep their translations; the state moves with a context.
 */
static void set_detail(struct emu_engine *e, bool on)
{
	uc_engine *to = on ? e->slow : e->fast;

	if (e->uc != to) {
		uc_context_save(e->uc, e->ctx);
		uc_context_restore(to, e->ctx);
		e->uc = to;
	}
	e->detail_on = on;
}

static void fill_blocks(struct emu_engine *e, struct emu_block_rec **out, size_t *n, bool window)
{
	*out = xcalloc(e->n_tb ? e->n_tb : 1, sizeof(**out));
	*n = 0;
	for (size_t i = 0; i < e->n_tb; i++) {
		const struct blk *b = &e->blocks[e->t_blocks[i]];
		uint64_t c = window ? (b->wgen == e->wgen ? b->wcount : 0) :
				      (b->gen == e->gen ? b->count : 0);

		if (c)
			(*out)[(*n)++] = (struct emu_block_rec){ b->pc, b->size, b->insns, c };
	}
}

static void fill_result(struct emu_engine *e, struct emu_result *out)
{
	fill_blocks(e, &out->blocks, &out->n_blocks, false);
	out->edges = xcalloc(e->n_te ? e->n_te : 1, sizeof(*out->edges));
	for (size_t i = 0; i < e->n_te; i++) {
		const struct edge_ent *x = &e->edges[e->t_edges[i]];

		out->edges[out->n_edges++] = (struct emu_edge_rec){ x->from, x->to, x->count };
	}
	out->insn = xcalloc(e->n_ti ? e->n_ti : 1, sizeof(*out->insn));
	for (size_t i = 0; i < e->n_ti; i++) {
		const struct insn_info *x = &e->insns[e->t_insns[i]];

		out->insn[out->n_insn++] = (struct emu_insn_rec){ x->pc, x->execs };
	}
	out->values = xcalloc(e->n_tv * VALUE_SLOTS + 1, sizeof(*out->values));
	for (size_t i = 0; i < e->n_tv; i++) {
		const struct val_ent *x = &e->vals[e->t_vals[i]];

		for (unsigned k = 0; k < x->n; k++)
			out->values[out->n_values++] = (struct emu_value_rec){ x->pc, x->reg, x->v[k], x->c[k] };
	}
	out->conflicts = xcalloc(e->n_tc ? e->n_tc : 1, sizeof(*out->conflicts));
	for (size_t i = 0; i < e->n_tc; i++) {
		const struct conf_ent *x = &e->confs[e->t_confs[i]];

		out->conflicts[out->n_conflicts++] =
			(struct emu_conflict_rec){ x->load, x->store, x->kind, x->count };
	}
	out->steps = e->steps;
	out->n_steps = e->n_steps;
	e->steps = NULL;
}

bool emu_engine_prepared(const struct emu_engine *e)
{
	return e->prepared;
}

void emu_engine_drop_prepared(struct emu_engine *e)
{
	e->prepared = false;
}

void emu_engine_prepare(struct emu_engine *e, const struct emu_burst_req *req)
{
	e->uc = e->fast;
	e->detail_on = false;
	emu_write_state(e->fast, &req->st);
	memset(&e->vregs, 0, sizeof(e->vregs));
	emu_prefetch(e, &req->st, req->snap, req->n_snap);
	emu_drop_changed_code(e);
	/* The pages not fetched yet are found by their faults (the fast engine has no memory hook). */
	emu_protect_unfilled(e);
	e->start_rip = req->st.rip;
	e->n_files = req->n_files;
	memcpy(e->files, req->files, req->n_files * sizeof(e->files[0]));
	e->b_limit = req->limit;
	e->b_time_us = req->time_us;
	e->detail = req->detail;
	e->max_steps = req->trace;
	e->prepared = true;
}

/*
 * The register that tells the point apart from where the emulation stands
 * (a loop's counter, most likely): compared first at each pass; -1 if none
 * differs but rip, -2 if the state is the point's already (no telling
 * which pass is meant).
 */
static int key_register(struct emu_engine *e, const struct emu_point *t, bool kernel)
{
	uint64_t regs[VALUES_NREGS];
	void *p[VALUES_NREGS];
	static const int ids[VALUES_NREGS] = {
		UC_X86_REG_RAX, UC_X86_REG_RBX, UC_X86_REG_RCX, UC_X86_REG_RDX, UC_X86_REG_RSI,
		UC_X86_REG_RDI, UC_X86_REG_RBP, UC_X86_REG_RSP, UC_X86_REG_R8, UC_X86_REG_R9,
		UC_X86_REG_R10, UC_X86_REG_R11, UC_X86_REG_R12, UC_X86_REG_R13, UC_X86_REG_R14,
		UC_X86_REG_R15, UC_X86_REG_EFLAGS,
	};

	for (unsigned k = 0; k < VALUES_NREGS; k++)
		p[k] = &regs[k];
	uc_reg_read_batch(e->uc, (int *)ids, p, VALUES_NREGS);
	for (int r = 0; r < VREG_RFLAGS; r++)
		if (regs[r] != t->regs[r] && !(kernel && r == VREG_RAX))
			return r;
	return emu_read_rip(e->uc) == t->rip ? -2 : -1;
}

static enum paths_miss miss_of(int end)
{
	switch (end) {
	case PATHS_END_SYSCALL: return PATHS_MISS_SYSCALL;
	case PATHS_END_UNSUPPORTED: return PATHS_MISS_UNSUPPORTED;
	case PATHS_END_UNREADABLE: return PATHS_MISS_UNREADABLE;
	case PATHS_END_LIMIT: return PATHS_MISS_NO_MATCH;
	default: return PATHS_MISS_FAULT;
	}
}

enum step { STEP_MATCH, STEP_LIMIT, STEP_END, STEP_AMBIGUOUS };

/*
 * Runs from *from until point pt (if any) matches, the run's limit, or
 * anything else ends it.  The point is watched by a code hook at its rip
 * (its block translated again with it, and without it afterwards), from
 * instruction `from_insn` on: a hook called at every pass of a loop's
 * instruction costs as much as the emulation (measured: 2.2 ns an
 * instruction with it on a loop of five, 1.2 without).
 */
static enum step step(struct emu_engine *e, const struct emu_trail_point *pt, uint64_t *from,
		      uint64_t from_insn)
{
	uc_hook h = 0;

	e->matched = false;
	e->end = e->pending = -1;
	e->closest = EMU_NOT_PASSED;
	if (pt && from_insn > e->total && from_insn < e->limit) {
		uint64_t limit = e->limit;

		e->limit = from_insn;
		run(e, *from);
		e->limit = limit;
		*from = e->stop_rip;
		if (e->end != PATHS_END_LIMIT)
			return STEP_END;
		e->end = e->pending = -1;
	}
	if (pt) {
		e->key_reg = key_register(e, &pt->p, pt->flags & EMU_POINT_KERNEL);
		/*
		 * The state is the point's already.  The first sample after the
		 * stop may come before the thread runs an instruction (a timer
		 * due while it was stopped): it is here.  Any later point is
		 * a period on, and which pass is meant cannot be told.
		 */
		if (e->key_reg == -2 && e->next == 0) {
			e->at_match = e->total;
			e->matched = true;
			return STEP_MATCH;
		}
		if (e->key_reg == -2)
			return STEP_AMBIGUOUS;
		uc_hook_add(e->uc, &h, UC_HOOK_CODE, emu_on_target, e, pt->p.rip, pt->p.rip);
		uc_ctl_remove_cache(e->uc, pt->p.rip, pt->p.rip + 1);
	}
	run(e, *from);
	if (pt) {
		uc_hook_del(e->uc, h);
		uc_ctl_remove_cache(e->uc, pt->p.rip, pt->p.rip + 1);
	}
	*from = e->stop_rip;
	if (e->matched) {
		/* settle() put total at the matched instruction, which has not run */
		e->total = e->at_match;
		return STEP_MATCH;
	}
	return e->end == PATHS_END_LIMIT ? STEP_LIMIT : STEP_END;
}

void emu_burst_passes(struct emu_engine *e, uint64_t pc)
{
	e->burst_on = false;
	e->burst_passed = true;
	e->b_end = PATHS_END_LIMIT;
	e->b_end_pc = pc;
	e->b_insns = e->total;
	e->b_live = emu_live_pages(e);
	e->b_n_working = emu_working_pages(e, e->b_working, EMU_MAX_WORKING);
}

/*
 * The burst's answer: as it was when it passed its limit (its tables have
 * not changed since), or as the run ended.
 */
static void end_burst(struct emu_engine *e, struct emu_result *out)
{
	if (!e->burst_passed) {
		emu_burst_passes(e, e->end_pc);
		/* a trail that ended before anything ran (a point it cannot tell): as far as it went */
		e->b_end = e->end >= 0 ? e->end : PATHS_END_LIMIT;
	}
	out->end = (uint8_t)e->b_end;
	out->end_pc = e->b_end_pc < EMU_USER_END ? e->b_end_pc : 0;
	memcpy(out->mnemonic, e->mnemonic, sizeof(out->mnemonic));
	if (out->end != PATHS_END_UNSUPPORTED)
		out->mnemonic[0] = '\0';
	out->insns = e->b_insns;
	out->detailed = e->detailed;
	out->pages = e->pages;
	out->live = e->b_live < out->pages ? e->b_live : out->pages;
	memcpy(out->working, e->b_working, e->b_n_working * sizeof(out->working[0]));
	out->n_working = e->b_n_working;
	fill_result(e, out);
	/* A burst that ended in detail ran fewer instructions than their hooks saw. */
	if (out->detailed > out->insns)
		out->detailed = out->insns;
	if (out->n_steps > out->detailed)
		out->n_steps = (size_t)out->detailed;
}

/* A point matched: the instructions since the one before, and the segment's blocks. */
static void point_matched(struct emu_engine *e, const struct emu_trail_req *req,
			  struct emu_trail_result *out)
{
	const struct emu_trail_point *pt = &req->pt[e->next];
	uint32_t k = e->next;

	emu_segment_end(e, e->windowing);
	if (k == 0) {
		e->trail_start = e->total;
		out->to_first = e->total;
	} else {
		uint64_t d;

		out->at[k] = e->total - e->trail_start;
		d = out->at[k] - out->at[k - 1];
		out->here[k] = e->seg_here < d ? e->seg_here : d;
	}
	e->seg_here = 0;
	e->here_lo = pt->lo;
	e->here_hi = pt->hi;
	e->next++;
}

void emu_engine_follow(struct emu_engine *e, const struct emu_trail_req *req, struct emu_result *burst,
		       struct emu_trail_result *out)
{
	uint32_t n = req ? req->n : 0;
	uint64_t from, live_burst;
	enum step r = STEP_END;
	uint64_t shortest = 0;          /* the fewest instructions of a period in this trail */

	memset(burst, 0, sizeof(*burst));
	memset(out, 0, sizeof(*out));
	out->read_fd = -1;
	e->read_fd = -1;
	out->at = xcalloc(n + 1, sizeof(*out->at));
	out->here = xcalloc(n + 1, sizeof(*out->here));
	if (!e->prepared) {
		burst->end = PATHS_END_FAULT;
		out->miss = PATHS_MISS_LOST;
		return;
	}
	e->prepared = false;
	/* With a trail the run goes past the burst's limit: the trail's is the run's. */
	begin_run(e, n ? req->limit : e->b_limit, n ? req->time_us : e->b_time_us);
	e->burst_on = true;
	e->burst_passes = n > 0;
	e->burst_passed = false;
	e->b_end = -1;
	e->trail = n ? req : NULL;
	e->next = 0;
	e->n_seg = 0;
	e->seg_here = 0;
	e->here_lo = e->here_hi = 0;
	e->wgen++;
	e->detailed = e->index = 0;
	e->prev_insn = NULL;
	e->ring_n = e->ring_at = 0;
	e->n_steps = 0;
	free(e->steps);
	e->steps = xcalloc(e->max_steps ? e->max_steps : 1, sizeof(*e->steps));
	set_detail(e, e->detail > 0);
	from = e->start_rip;
	for (;;) {
		bool watch = e->trail && e->next < n;
		uint64_t near = 0;

		e->windowing = watch && e->next > req->count_from;
		/*
		 * A point one sampling period after the one before comes no
		 * sooner than 3/4 of the fewest instructions such a period ran
		 * in this trail (its first ones in the dip, when the thread runs
		 * slower: fewer): the hook waits until then.  A period shorter
		 * than that misses its point, and the trail ends there.
		 */
		if (watch && e->next > 0 && (req->pt[e->next].flags & EMU_POINT_PERIOD) && shortest)
			near = e->trail_start + out->at[e->next - 1] + shortest / 4 * 3;
		/*
		 * A point not reached within a segment's instructions (four
		 * times the shortest period yet, once known) will not be: the
		 * emulation left the thread's path (memory it rewrote since).
		 */
		if (watch) {
			uint64_t seg = shortest && 4 * shortest < req->segment ? 4 * shortest : req->segment;
			uint64_t base = e->next ? e->trail_start + out->at[e->next - 1] : 0;

			e->limit = base + seg < req->limit ? base + seg : req->limit;
			if (e->limit < e->total)
				e->limit = e->total;
		}
		r = step(e, watch ? &req->pt[e->next] : NULL, &from, near);
		if (r == STEP_MATCH) {
			point_matched(e, req, out);
			if (e->next >= 2 && (req->pt[e->next - 1].flags & EMU_POINT_PERIOD)) {
				uint64_t d = out->at[e->next - 1] - out->at[e->next - 2];

				if (!shortest || d < shortest)
					shortest = d;
			}
			continue;
		}
		if (r == STEP_LIMIT && e->detail_on && e->detailed >= e->detail && e->total < e->limit) {
			/* the detail ended at an instruction (its hook stopped there): blocks only now */
			set_detail(e, false);
			continue;
		}
		break;
	}
	end_burst(e, burst);
	live_burst = burst->live;
	emu_segment_end(e, false);
	out->matched = e->next;
	out->closest = EMU_NOT_PASSED;
	if (e->next < n) {
		out->miss = (uint8_t)(r == STEP_AMBIGUOUS ? PATHS_MISS_AMBIGUOUS : miss_of(e->end));
		out->end_pc = e->end_pc < EMU_USER_END ? e->end_pc : 0;
		out->closest = (uint8_t)e->closest;
		out->read_fd = e->read_fd;
		if (e->end == PATHS_END_UNSUPPORTED || e->end == PATHS_END_SYSCALL)
			memcpy(out->mnemonic, e->mnemonic, sizeof(out->mnemonic));
	}
	{
		uint64_t live = emu_live_pages(e);

		out->live = live > live_burst ? live - live_burst : 0;
	}
	fill_blocks(e, &out->blocks, &out->n_blocks, true);
	set_detail(e, false);
	e->trail = NULL;
	e->windowing = false;
	e->burst_on = false;
	e->burst_passes = false;
}

void emu_engine_burst(struct emu_engine *e, const struct emu_burst_req *req,
		      struct emu_result *out)
{
	struct emu_trail_result none;

	emu_engine_prepare(e, req);
	emu_engine_follow(e, NULL, out, &none);
	emu_trail_result_release(&none);
}

/* ---- life ------------------------------------------------------------------------------ */

struct emu_engine *emu_engine_new(uint64_t space, const struct emu_pager *pager)
{
	struct emu_engine *e = XNEW(struct emu_engine);

	e->space = space;
	e->pager = *pager;
	if (uc_open(UC_ARCH_X86, UC_MODE_64, &e->fast) || uc_open(UC_ARCH_X86, UC_MODE_64, &e->slow) ||
	    uc_context_alloc(e->fast, &e->ctx) ||
	    cs_open(CS_ARCH_X86, CS_MODE_64, &e->cs)) {
		emu_engine_free(e);
		return NULL;
	}
	e->uc = e->fast;
	cs_option(e->cs, CS_OPT_DETAIL, CS_OPT_ON);
	emu_setup_reg_map(e->cs);
	e->blocks = xcalloc(BLOCKS_CAP, sizeof(*e->blocks));
	e->insns = xcalloc(INSNS_CAP, sizeof(*e->insns));
	e->edges = xcalloc(EDGES_CAP, sizeof(*e->edges));
	e->vals = xcalloc(VALUES_TAB_CAP, sizeof(*e->vals));
	e->confs = xcalloc(CONFLICTS_CAP, sizeof(*e->confs));
	e->sgen = 1;
	emu_add_hooks(e, e->fast, EMU_HOOKS_FAST);
	emu_add_hooks(e, e->slow, EMU_HOOKS_DETAIL);
	/* The instructions unicorn would do wrong stop it (none yet). */
	uc_ctl_exits_enable(e->fast);
	uc_ctl_exits_enable(e->slow);
	return e;
}

void emu_engine_free(struct emu_engine *e)
{
	if (!e)
		return;
	if (e->ctx)
		uc_context_free(e->ctx);
	if (e->fast)
		uc_close(e->fast);
	if (e->slow)
		uc_close(e->slow);
	free(e->seg_blocks);
	if (e->cs)
		cs_close(&e->cs);
	free(e->read_buf);
	free(e->stash);
	for (size_t i = 0; i < e->n_chunks; i++) {
		munmap(e->chunks[i].host, CHUNK_SIZE);
		free(e->chunks[i].crc);
	}
	free(e->blocks);
	free(e->insns);
	free(e->edges);
	free(e->vals);
	free(e->confs);
	free(e->t_blocks);
	free(e->t_edges);
	free(e->t_insns);
	free(e->t_vals);
	free(e->t_confs);
	free(e->steps);
	free(e);
}

uint64_t emu_engine_space(const struct emu_engine *e)
{
	return e->space;
}

void emu_engine_bind(struct emu_engine *e, uint64_t space)
{
	e->space = space;
}
