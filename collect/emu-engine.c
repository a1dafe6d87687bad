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
	e->windowing = e->matched_b1 = e->matched = false;
	e->win = NULL;
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

void emu_engine_drop_kept(struct emu_engine *e);

/* The state and pages of a burst that stopped at its limit, for a window. */
static void keep(struct emu_engine *e)
{
	size_t n = 0;

	uc_context_save(e->fast, e->kept_ctx);
	free(e->kept_addr);
	free(e->kept_data);
	e->kept_addr = xcalloc(e->pages ? e->pages : 1, sizeof(*e->kept_addr));
	e->kept_data = xmalloc((e->pages ? e->pages : 1) * EMU_PAGE_SIZE);
	for (size_t i = 0; i < e->n_chunks; i++) {
		const struct chunk *c = &e->chunks[i];

		for (size_t k = 0; k < CHUNK_PAGES && n < e->pages; k++) {
			if (!bit(c->filled, k) || bit(c->unreadable, k))
				continue;
			e->kept_addr[n] = c->guest + k * EMU_PAGE_SIZE;
			memcpy(e->kept_data + n * EMU_PAGE_SIZE, c->host + k * EMU_PAGE_SIZE, EMU_PAGE_SIZE);
			n++;
		}
	}
	e->n_kept = n;
}

/* The kept burst back in place: its pages, then its state. */
static void unkeep(struct emu_engine *e)
{
	emu_forget_pages(e, e->kept_addr, e->n_kept);
	for (size_t i = 0; i < e->n_kept; i++)
		emu_engine_fill(e, e->kept_addr[i], e->kept_data + i * EMU_PAGE_SIZE);
	uc_context_restore(e->fast, e->kept_ctx);
	e->uc = e->fast;
	e->stop_rip = emu_read_rip(e->fast);
	emu_engine_drop_kept(e);
}

bool emu_engine_kept(const struct emu_engine *e)
{
	return e->kept;
}

void emu_engine_drop_kept(struct emu_engine *e)
{
	free(e->kept_addr);
	free(e->kept_data);
	e->kept_addr = NULL;
	e->kept_data = NULL;
	e->n_kept = 0;
	e->kept = false;
}

void emu_engine_burst(struct emu_engine *e, const struct emu_burst_req *req,
		      struct emu_result *out)
{
	memset(out, 0, sizeof(*out));
	begin_run(e, req->limit, req->time_us);
	e->uc = req->detail ? e->slow : e->fast;
	emu_write_state(e->uc, &req->st);
	memset(&e->vregs, 0, sizeof(e->vregs));
	emu_prefetch(e, &req->st);
	emu_drop_changed_code(e);
	e->detail = req->detail;
	e->detailed = e->index = 0;
	e->prev_insn = NULL;
	e->ring_n = e->ring_at = 0;
	e->max_steps = req->trace;
	e->n_steps = 0;
	e->steps = xcalloc(req->trace ? req->trace : 1, sizeof(*e->steps));
	if (req->detail) {
		e->detail_on = true;
		run(e, req->st.rip);
		/* The detail ended at a block's start: the rest by blocks only. */
		if (e->end == PATHS_END_LIMIT && e->detailed >= e->detail && e->total < e->limit) {
			e->end = e->pending = -1;
			set_detail(e, false);
			run(e, e->stop_rip);
		}
		/* A window goes on in the fast engine. */
		set_detail(e, false);
	} else {
		e->detail_on = false;
		run(e, req->st.rip);
	}
	out->end = (uint8_t)e->end;
	out->end_pc = e->end_pc < EMU_USER_END ? e->end_pc : 0;
	memcpy(out->mnemonic, e->mnemonic, sizeof(out->mnemonic));
	if (e->end != PATHS_END_UNSUPPORTED)
		out->mnemonic[0] = '\0';
	out->insns = e->total;
	out->detailed = e->detailed;
	out->pages = e->pages;
	fill_result(e, out);
	/* A burst that ended in detail ran fewer instructions than their hooks saw. */
	if (out->detailed > out->insns)
		out->detailed = out->insns;
	if (out->n_steps > out->detailed)
		out->n_steps = (size_t)out->detailed;
	/* A burst kept replaces the one kept before; others leave it be. */
	out->kept = req->keep && (e->end == PATHS_END_LIMIT || e->end == PATHS_END_TIME) && !e->taint &&
		    !e->late;
	if (out->kept) {
		keep(e);
		e->kept = true;
	}
}

void emu_engine_window(struct emu_engine *e, const struct emu_window_req *req,
		       struct emu_window_result *out)
{
	uc_hook h1 = 0, h2 = 0;

	memset(out, 0, sizeof(*out));
	if (!e->kept) {
		out->miss = PATHS_MISS_LOST;
		return;
	}
	unkeep(e);
	begin_run(e, req->limit, req->time_us);
	e->wgen++;
	e->win = req;
	e->uc = e->fast;
	e->detail_on = false;
	e->key_reg = -1;
	for (int r = 0; r < VREG_RFLAGS && e->key_reg < 0; r++)
		if (req->b1.regs[r] != req->b2.regs[r])
			e->key_reg = r;
	uc_hook_add(e->uc, &h1, UC_HOOK_CODE, emu_on_target, e, req->b1.rip, req->b1.rip);
	uc_ctl_remove_cache(e->uc, req->b1.rip, req->b1.rip + 1);
	if (req->b2.rip != req->b1.rip) {
		uc_hook_add(e->uc, &h2, UC_HOOK_CODE, emu_on_target, e, req->b2.rip, req->b2.rip);
		uc_ctl_remove_cache(e->uc, req->b2.rip, req->b2.rip + 1);
	}
	run(e, e->stop_rip);
	uc_hook_del(e->uc, h1);
	if (h2)
		uc_hook_del(e->uc, h2);
	uc_ctl_remove_cache(e->uc, req->b1.rip, req->b1.rip + 1);
	uc_ctl_remove_cache(e->uc, req->b2.rip, req->b2.rip + 1);
	out->end_pc = e->end_pc < EMU_USER_END ? e->end_pc : 0;
	if (e->matched) {
		out->matched = true;
		out->to_b1 = e->at_b1;
		out->insns = e->at_b2 - e->at_b1;
		fill_blocks(e, &out->blocks, &out->n_blocks, true);
		if (!out->insns) {
			out->matched = false;
			out->miss = PATHS_MISS_AMBIGUOUS;
		}
		return;
	}
	switch (e->end) {
	case PATHS_END_SYSCALL: out->miss = PATHS_MISS_SYSCALL; break;
	case PATHS_END_UNSUPPORTED:
		out->miss = PATHS_MISS_UNSUPPORTED;
		memcpy(out->mnemonic, e->mnemonic, sizeof(out->mnemonic));
		break;
	case PATHS_END_UNREADABLE: out->miss = PATHS_MISS_UNREADABLE; break;
	case PATHS_END_LIMIT: out->miss = PATHS_MISS_NO_MATCH; break;
	default: out->miss = PATHS_MISS_FAULT; break;
	}
}

/* ---- life ------------------------------------------------------------------------------ */

struct emu_engine *emu_engine_new(uint64_t space, const struct emu_pager *pager)
{
	struct emu_engine *e = XNEW(struct emu_engine);

	e->space = space;
	e->pager = *pager;
	if (uc_open(UC_ARCH_X86, UC_MODE_64, &e->fast) || uc_open(UC_ARCH_X86, UC_MODE_64, &e->slow) ||
	    uc_context_alloc(e->fast, &e->ctx) || uc_context_alloc(e->fast, &e->kept_ctx) ||
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
	emu_add_hooks(e, e->fast, false);
	emu_add_hooks(e, e->slow, true);
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
	if (e->kept_ctx)
		uc_context_free(e->kept_ctx);
	free(e->kept_addr);
	free(e->kept_data);
	if (e->fast)
		uc_close(e->fast);
	if (e->slow)
		uc_close(e->slow);
	if (e->cs)
		cs_close(&e->cs);
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
