/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/emu-hooks.c - the emulator engine's hooks and what they record
 * (collect/emu-engine.h): registers in and out of unicorn, blocks decoded
 * with capstone and counted, edges, values and load/store conflicts in
 * per-run tables, a window's samples matched, where a run stops; and the
 * instructions unicorn 2.0.1 refuses, done by collect/emu-avx.c.
 */
#include "config.h"
#include "collect/emu-engine-int.h"
#include "collect/emu-avx.h"
#include "core/hash.h"
#include "core/xalloc.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>


/* ---- registers ---------------------------------------------------------------------- */

static const int uc_gpr[VALUES_NREGS] = {
	UC_X86_REG_RAX, UC_X86_REG_RBX, UC_X86_REG_RCX, UC_X86_REG_RDX, UC_X86_REG_RSI,
	UC_X86_REG_RDI, UC_X86_REG_RBP, UC_X86_REG_RSP, UC_X86_REG_R8, UC_X86_REG_R9,
	UC_X86_REG_R10, UC_X86_REG_R11, UC_X86_REG_R12, UC_X86_REG_R13, UC_X86_REG_R14,
	UC_X86_REG_R15, UC_X86_REG_EFLAGS,
};

static void read_regs(uc_engine *uc, uint64_t *r)
{
	void *p[VALUES_NREGS];

	for (unsigned k = 0; k < VALUES_NREGS; k++)
		p[k] = &r[k];
	uc_reg_read_batch(uc, (int *)uc_gpr, p, VALUES_NREGS);
}

uint64_t emu_read_rip(uc_engine *uc)
{
	uint64_t rip = 0;

	uc_reg_read(uc, UC_X86_REG_RIP, &rip);
	return rip;
}

void emu_write_state(uc_engine *uc, const struct emu_state *s)
{
	void *p[VALUES_NREGS];
	uint16_t tag = 0;

	for (unsigned k = 0; k < VALUES_NREGS; k++)
		p[k] = (void *)&s->regs[k];
	uc_reg_write_batch(uc, (int *)uc_gpr, p, VALUES_NREGS);
	uc_reg_write(uc, UC_X86_REG_RIP, &s->rip);
	uc_reg_write(uc, UC_X86_REG_FS_BASE, &s->fs_base);
	uc_reg_write(uc, UC_X86_REG_GS_BASE, &s->gs_base);
	/* Compiled code keeps pointers in the SSE registers. */
	for (int k = 0; k < 16; k++)
		uc_reg_write(uc, UC_X86_REG_XMM0 + k, s->xmm[k]);
	uc_reg_write(uc, UC_X86_REG_MXCSR, &s->mxcsr);
	uc_reg_write(uc, UC_X86_REG_FPCW, &s->fcw);
	uc_reg_write(uc, UC_X86_REG_FPSW, &s->fsw);
	/* The abridged tag (a bit per register in use) as the full one (11: empty). */
	for (int k = 0; k < 8; k++)
		if (!(s->ftw >> k & 1))
			tag |= (uint16_t)(3u << (2 * k));
	uc_reg_write(uc, UC_X86_REG_FPTAG, &tag);
	/* st(i) from the top, 80 bits: the mantissa, then sign and exponent. */
	for (int k = 0; k < 8; k++) {
		uint8_t f[16] = { 0 };

		memcpy(f, s->st[k], 10);
		uc_reg_write(uc, UC_X86_REG_ST0 + k, f);
	}
}

/* The part of a general register an instruction writes. */
enum width { W64, W16, W8, W8HIGH };

static uint64_t part(uint64_t v, unsigned w)
{
	return w == W16 ? v & 0xffff : w == W8 ? v & 0xff : w == W8HIGH ? (v >> 8) & 0xff : v;
}

/* Capstone's registers as the general register they are part of, and which part. */
static int8_t reg_index[X86_REG_ENDING];
static uint8_t reg_width[X86_REG_ENDING];

void emu_setup_reg_map(csh cs)
{
	for (unsigned r = 0; r < X86_REG_ENDING; r++) {
		const char *name = cs_reg_name(cs, r);
		int k = name ? values_reg_lookup(name) : -1;
		size_t n = name ? strlen(name) : 0;

		reg_index[r] = (int8_t)(k >= 0 && k < VREG_RFLAGS ? k : -1);
		if (reg_index[r] < 0)
			continue;
		reg_width[r] = W64;             /* 64 bits, or 32 (zero-extended) */
		if (n == 2 && name[1] == 'h')
			reg_width[r] = W8HIGH;
		else if ((n == 2 && name[1] == 'l') || name[n - 1] == 'b' || (n == 3 && name[2] == 'l'))
			reg_width[r] = W8;
		else if (n == 2 || (name[0] == 'r' && name[n - 1] == 'w'))
			reg_width[r] = W16;
	}
}

/* ---- decoding ---------------------------------------------------------------------- */

/*
 * An instruction unicorn would do wrong (collect/emu-avx.h): an exit of
 * both engines, where the emulation stops before it, and the block holding
 * it translated again (run() does both, outside the emulation).
 */
static void add_trap(struct emu_engine *e, uint64_t addr)
{
	for (size_t i = 0; i < e->n_traps; i++)
		if (e->traps[i] == addr)
			return;
	if (e->n_traps == MAX_TRAPS) {
		e->full = true;
		return;
	}
	e->traps[e->n_traps++] = addr;
	e->new_traps = true;
}

bool emu_is_trap(const struct emu_engine *e, uint64_t addr)
{
	for (size_t i = 0; i < e->n_traps; i++)
		if (e->traps[i] == addr)
			return true;
	return false;
}

/* Instructions in [pc, pc + size) and the last one's pc (the bytes are the engine's). */
static uint32_t count_insns(struct emu_engine *e, uint64_t pc, uint32_t size, uint64_t upto,
			    uint64_t *last)
{
	uint8_t buf[PATHS_MAX_BLOCK_BYTES];
	const uint8_t *p = buf;
	size_t n = size > sizeof(buf) ? sizeof(buf) : size;
	uint64_t addr = pc;
	cs_insn *in = cs_malloc(e->cs);
	uint32_t k = 0;

	*last = pc;
	if (uc_mem_read(e->uc, pc, buf, n))
		n = 0;
	while (n && addr < upto) {
		unsigned len;
		bool trap;

		*last = addr;
		if (cs_disasm_iter(e->cs, &p, &n, &addr, in)) {
			k++;
			continue;
		}
		/* AVX-512 that capstone 4 does not know, decoded by emu-avx. */
		if (emu_avx_length(p, n, &len, &trap) || len > n) {
			k++;    /* bytes nobody knows (the emulator stopped inside them): one more */
			break;
		}
		if (trap)
			add_trap(e, addr);
		p += len, n -= len, addr += len;
		k++;
	}
	cs_free(in, 1);
	return k ? k : 1;
}

static struct blk *block_get(struct emu_engine *e, uint64_t pc, uint32_t size)
{
	struct blk **recent;
	uint32_t h;

	if (size > PATHS_MAX_BLOCK_BYTES)
		size = PATHS_MAX_BLOCK_BYTES;
	/*
	 * The blocks run last, by their pc: a hot loop's few blocks stay in the
	 * cache, where the table (8 MiB) costs a miss a block (measured: the
	 * lookup was the worker's largest cost in a trail of a compute loop).
	 */
	recent = &e->recent[(pc ^ (pc >> 9)) & (RECENT_BLOCKS - 1)];
	if (*recent && (*recent)->pc == pc && (*recent)->size == size)
		return *recent;
	h = (uint32_t)hash_u64(pc ^ ((uint64_t)size << 48)) & (BLOCKS_CAP - 1);

	for (;; h = (h + 1) & (BLOCKS_CAP - 1)) {
		struct blk *b = &e->blocks[h];

		if (b->used && b->pc == pc && b->size == size)
			return *recent = b;
		if (b->used)
			continue;
		if (e->n_blocks >= BLOCKS_CAP / 2) {
			e->full = true;
			return NULL;
		}
		b->used = true;
		b->pc = pc;
		b->size = size;
		b->insns = count_insns(e, pc, b->size, UINT64_MAX, &b->last);
		e->n_blocks++;
		emu_mark_code(e, pc, size);
		return *recent = b;
	}
}

/* Instructions of block b before addr. */
uint64_t emu_index_in(struct emu_engine *e, const struct blk *b, uint64_t addr)
{
	uint64_t last;

	if (!b || addr <= b->pc || addr >= b->pc + b->size)
		return b && addr >= b->pc + b->size ? b->insns : 0;
	return count_insns(e, b->pc, b->size, addr, &last);
}

static struct insn_info *insn_get(struct emu_engine *e, uint64_t pc)
{
	uint32_t h = (uint32_t)hash_u64(pc) & (INSNS_CAP - 1);

	for (;; h = (h + 1) & (INSNS_CAP - 1)) {
		struct insn_info *x = &e->insns[h];
		uint8_t buf[16];
		cs_insn *in;
		cs_regs rd, wr;
		uint8_t nrd, nwr;

		if (x->used && x->pc == pc)
			return x;
		if (x->used)
			continue;
		if (e->n_insns >= INSNS_CAP / 2) {
			e->full = true;
			return NULL;
		}
		memset(x, 0, sizeof(*x));
		x->used = true;
		x->pc = pc;
		e->n_insns++;
		if (uc_mem_read(e->uc, pc, buf, sizeof(buf)) ||
		    cs_disasm(e->cs, buf, sizeof(buf), pc, 1, &in) != 1)
			return x;
		if (!cs_regs_access(e->cs, in, rd, &nrd, wr, &nwr))
			for (unsigned k = 0; k < nwr; k++) {
				int r = wr[k] < X86_REG_ENDING ? reg_index[wr[k]] : -1;

				if (r < 0)
					continue;
				x->writes |= 1u << r;
				x->width[r] = reg_width[wr[k]];
			}
		cs_free(in, 1);
		return x;
	}
}

/* ---- per-run tables ------------------------------------------------------------------- */

static void touch(uint32_t **list, size_t *n, size_t *alloc, uint32_t idx)
{
	ALLOC_GROW(*list, *n + 1, *alloc);
	(*list)[(*n)++] = idx;
}

static void edge_add(struct emu_engine *e, uint64_t from, uint64_t to)
{
	uint32_t h = (uint32_t)hash_u64(from * 31 + to) & (EDGES_CAP - 1);

	for (unsigned probe = 0; probe < EDGES_CAP; probe++, h = (h + 1) & (EDGES_CAP - 1)) {
		struct edge_ent *x = &e->edges[h];

		if (x->gen == e->gen && x->from == from && x->to == to) {
			x->count++;
			return;
		}
		if (x->gen == e->gen)
			continue;
		if (e->n_te >= EDGES_CAP / 2) {
			e->full = true;
			return;
		}
		*x = (struct edge_ent){ from, to, 1, e->gen };
		touch(&e->t_edges, &e->n_te, &e->a_te, h);
		return;
	}
}

static void value_add(struct emu_engine *e, uint64_t pc, unsigned reg, uint64_t v)
{
	uint32_t h = (uint32_t)hash_u64(pc * 17 + reg) & (VALUES_TAB_CAP - 1);

	for (unsigned probe = 0; probe < VALUES_TAB_CAP; probe++, h = (h + 1) & (VALUES_TAB_CAP - 1)) {
		struct val_ent *x = &e->vals[h];

		if (x->gen == e->gen && x->pc == pc && x->reg == reg) {
			for (unsigned k = 0; k < x->n; k++)
				if (x->v[k] == v) {
					x->c[k]++;
					return;
				}
			/* More distinct values than slots: not one worth a hot list. */
			if (x->n < VALUE_SLOTS) {
				x->v[x->n] = v;
				x->c[x->n++] = 1;
			}
			return;
		}
		if (x->gen == e->gen)
			continue;
		if (e->n_tv >= VALUES_TAB_CAP / 2) {
			e->full = true;
			return;
		}
		memset(x, 0, sizeof(*x));
		x->pc = pc, x->reg = (uint8_t)reg, x->gen = e->gen, x->n = 1;
		x->v[0] = v, x->c[0] = 1;
		touch(&e->t_vals, &e->n_tv, &e->a_tv, h);
		return;
	}
}

static void conflict_add(struct emu_engine *e, uint64_t load, uint64_t store,
			 enum paths_conflict_kind kind)
{
	uint32_t h = (uint32_t)hash_u64(load * 7 + store * 3 + kind) & (CONFLICTS_CAP - 1);

	for (unsigned probe = 0; probe < CONFLICTS_CAP; probe++, h = (h + 1) & (CONFLICTS_CAP - 1)) {
		struct conf_ent *x = &e->confs[h];

		if (x->gen == e->gen && x->load == load && x->store == store && x->kind == kind) {
			x->count++;
			return;
		}
		if (x->gen == e->gen)
			continue;
		if (e->n_tc >= CONFLICTS_CAP / 2)
			return;
		*x = (struct conf_ent){ load, store, 1, (uint8_t)kind, e->gen };
		touch(&e->t_confs, &e->n_tc, &e->a_tc, h);
		return;
	}
}

/* ---- hooks --------------------------------------------------------------------------- */

/* A stop that ends nothing: the run goes on once the block is translated again. */
#define STOP_RETRANSLATE PATHS_END__COUNT

static void stop(struct emu_engine *e, enum paths_end why, uint64_t pc)
{
	if ((int)why == STOP_RETRANSLATE) {
		uc_emu_stop(e->uc);
		return;
	}
	if (e->end < 0) {
		e->end = why;
		e->end_pc = pc;
	}
	uc_emu_stop(e->uc);
}

/*
 * A stop asked for in the block hook.  Without instruction hooks unicorn
 * stops before the block runs.  With them (in detail) it does not: it goes
 * on through the block's instruction hooks, skipping the instructions but
 * moving rip (measured: a loop ran one iteration too many after resuming
 * there).  So in detail the stop is left to the instruction hook of the
 * block's first instruction, which stops before it, rip and all.
 */
static void stop_at_block(struct emu_engine *e, enum paths_end why, uint64_t pc)
{
	if (!e->detail_on) {
		stop(e, why, pc);
		return;
	}
	if (e->pending < 0) {
		e->pending = why;
		e->pending_pc = pc;
	}
}

/*
 * A trail's segment ended: at a point matched, the executions of its
 * blocks go to the windows' counts; at the trail's end, beyond the last
 * point matched, they are no window's.
 */
void emu_segment_end(struct emu_engine *e, bool keep)
{
	for (size_t i = 0; i < e->n_seg; i++) {
		struct blk *b = &e->blocks[e->seg_blocks[i]];

		if (keep && b->sgen == e->sgen) {
			if (b->wgen != e->wgen) {
				b->wgen = e->wgen;
				b->wcount = 0;
				if (b->gen != e->gen)
					touch(&e->t_blocks, &e->n_tb, &e->a_tb, e->seg_blocks[i]);
			}
			b->wcount += b->seg;
		}
		b->seg = 0;
	}
	e->n_seg = 0;
	if (!++e->sgen)
		e->sgen = 1;
}

/* A block that runs: its count (a trail's: in its segment), and the next edge's source. */
void emu_count_block(struct emu_engine *e, struct blk *b)
{
	/* A burst counts its blocks; a trail, those between its points, for its windows. */
	if (e->burst_on) {
		if (b->gen != e->gen) {
			b->gen = e->gen;
			b->count = 0;
			touch(&e->t_blocks, &e->n_tb, &e->a_tb, (uint32_t)(b - e->blocks));
		}
		b->count++;
	}
	if (e->trail) {
		if (b->pc >= e->here_lo && b->pc < e->here_hi)
			e->seg_here += b->insns;
		if (e->windowing) {
			if (b->sgen != e->sgen) {
				b->sgen = e->sgen;
				b->seg = 0;
				touch(&e->seg_blocks, &e->n_seg, &e->a_seg, (uint32_t)(b - e->blocks));
			}
			b->seg++;
		}
	}
	e->prev = b;
	e->cur = b;
	e->blk_start = e->total;
	e->total += b->insns;
	e->hooked_counted = b == e->hooked;
}

/*
 * An instruction done in software where unicorn stopped before it (an exit):
 * a block of its own.
 */
void emu_count_soft(struct emu_engine *e, uint64_t pc, unsigned len)
{
	struct blk *b = block_get(e, pc, len);

	if (!b)
		return;
	if (e->prev && e->burst_on)
		edge_add(e, e->prev->last, pc);
	e->hooked = b;
	e->hooked_start = e->total;
	emu_count_block(e, b);
}

/*
 * Each block, before it runs: its count, the edge that led to it.  Where a
 * run stops is settled afterwards (settle()) from rip.
 */
static void on_block(uc_engine *uc, uint64_t pc, uint32_t size, void *ud)
{
	struct emu_engine *e = ud;
	struct blk *b;

	(void)uc;
	if (e->late) {
		stop_at_block(e, PATHS_END_TIME, pc);
		return;
	}
	if (e->taint) {
		stop_at_block(e, PATHS_END_UNREADABLE, pc);
		return;
	}
	if (e->code_changed || !(b = block_get(e, pc, size)) || e->full) {
		stop_at_block(e, PATHS_END_FAULT, pc);
		return;
	}
	/* It holds an instruction unicorn would do wrong: translated again, with an exit. */
	if (e->new_traps) {
		e->retranslate = b;
		stop_at_block(e, STOP_RETRANSLATE, pc);
		return;
	}
	if (e->prev && e->burst_on)
		edge_add(e, e->prev->last, pc);
	e->prev = NULL;
	e->hooked = b;
	e->hooked_counted = false;
	e->hooked_start = e->total;     /* so far: the instructions before this block */
	/* A burst a trail follows ends at its limit, and the run goes on. */
	if (e->burst_on && e->burst_passes && e->total + b->insns > e->b_limit)
		emu_burst_passes(e, pc);
	/* The limit is never passed: a block that would pass it is not counted. */
	if (e->total + b->insns > e->limit || (e->detail_on && e->detailed >= e->detail)) {
		stop_at_block(e, PATHS_END_LIMIT, pc);
		return;
	}
	if (!(++e->nblocks & 63) && emu_over_time(e)) {
		stop_at_block(e, PATHS_END_TIME, pc);
		return;
	}
	emu_count_block(e, b);
}

/* Detail: before each instruction, what the one before it wrote, and a raw step. */
static void on_insn(uc_engine *uc, uint64_t pc, uint32_t size, void *ud)
{
	struct emu_engine *e = ud;
	uint64_t regs[VALUES_NREGS];
	struct insn_info *x;

	(void)size;
	if (e->pending >= 0) {
		int why = e->pending;

		e->pending = -1;
		stop(e, (enum paths_end)why, e->pending_pc);
		return;
	}
	if (!e->detail_on || e->detailed >= e->detail)
		return;
	read_regs(uc, regs);
	if (e->prev_insn)
		for (unsigned r = 0; r < VREG_RFLAGS; r++)
			if (e->prev_insn->writes >> r & 1)
				value_add(e, e->prev_insn->pc, r, part(regs[r], e->prev_insn->width[r]));
	if (e->n_steps < e->max_steps) {
		e->steps[e->n_steps].pc = pc;
		memcpy(e->steps[e->n_steps].regs, regs, sizeof(regs));
		e->n_steps++;
	}
	if (!(x = insn_get(e, pc)))
		return;
	if (x->gen != e->gen) {
		x->gen = e->gen;
		x->execs = 0;
		touch(&e->t_insns, &e->n_ti, &e->a_ti, (uint32_t)(x - e->insns));
	}
	x->execs++;
	e->prev_insn = x;
	e->cur_pc = pc;
	e->index++;
	e->detailed++;
}

/*
 * Detail: loads against the stores before them (seed 004's vreplay): the
 * latest store to any of the load's bytes decides; a load it does not
 * cover waits for it (store forwarding fails); a store at the load's
 * offset in another 4 KiB page looks like one (4K aliasing).
 */
static void on_mem(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value,
		   void *ud)
{
	struct emu_engine *e = ud;

	(void)uc, (void)value;
	emu_refresh(e, addr, size > 0 ? (size_t)size : 1);
	if (!e->detail_on || e->detailed > e->detail || size <= 0)
		return;
	if (type == UC_MEM_WRITE) {
		e->ring[e->ring_at] = (struct store_rec){ e->cur_pc, addr, e->index, size };
		e->ring_at = (e->ring_at + 1) % STORE_RING;
		if (e->ring_n < STORE_RING)
			e->ring_n++;
		return;
	}
	if (type != UC_MEM_READ)
		return;
	for (size_t k = 0; k < e->ring_n; k++) {
		const struct store_rec *s = &e->ring[(e->ring_at + STORE_RING - 1 - k) % STORE_RING];
		bool overlap, inside;

		if (s->index >= e->index || e->index - s->index > PATHS_CONFLICT_WINDOW)
			break;
		overlap = s->addr < addr + (uint64_t)size && addr < s->addr + (uint64_t)s->size;
		inside = s->addr <= addr && addr + (uint64_t)size <= s->addr + (uint64_t)s->size;
		if (overlap) {
			if (!inside)
				conflict_add(e, e->cur_pc, s->pc, PATHS_STORE_FORWARD);
			return;
		}
		if ((s->addr & ~0xfffull) != (addr & ~0xfffull) &&
		    (s->addr & 0xfff) < (addr & 0xfff) + (uint64_t)size &&
		    (addr & 0xfff) < (s->addr & 0xfff) + (uint64_t)s->size)
			conflict_add(e, e->cur_pc, s->pc, PATHS_ALIAS_4K);
	}
}

/*
 * A trail goes past the writes to files the thread made: each taken as
 * done in full, its count returned; a write changes nothing the thread
 * reads.  A period with a write in it has the write's time in the kernel:
 * such periods are windows too (leaving them out would leave out the
 * periods that run fewer instructions), whose samples in the kernel are
 * points (EMU_POINT_KERNEL).  Not a read: by the time the trail runs, the
 * thread has read later data into the same buffer (measured on gzip:
 * windows past a read never matched).  A guess that was wrong (a short
 * write) leads to a state that is not the next point's: no match, never a
 * wrong count.
 */
#define EMU_MAX_PASSED 256

static bool pass_syscall(struct emu_engine *e, uc_engine *uc)
{
	uint64_t nr = 0, rip = 0, flags = 0, count = 0;

	if (!e->trail || e->passed >= EMU_MAX_PASSED)
		return false;
	uc_reg_read(uc, UC_X86_REG_RAX, &nr);
	if (nr != 1 && nr != 18)        /* write, pwrite64 */
		return false;
	uc_reg_read(uc, UC_X86_REG_RIP, &rip);
	uc_reg_read(uc, UC_X86_REG_RFLAGS, &flags);
	uc_reg_read(uc, UC_X86_REG_RDX, &count);
	if (count > SSIZE_MAX)
		return false;
	rip += 2;                       /* what syscall leaves in rcx and r11 */
	uc_reg_write(uc, UC_X86_REG_RCX, &rip);
	uc_reg_write(uc, UC_X86_REG_R11, &flags);
	uc_reg_write(uc, UC_X86_REG_RAX, &count);
	e->passed++;
	return true;
}

/*
 * A trail goes past the reads of a file whose position at the stop the
 * collector knew: it gives the bytes the thread read (the same file, at
 * the position tracked from there), put where the thread put them.  A read
 * of another file ends the trail and says which (the next burst of the
 * address space learns its position).
 */
static struct emu_file *file_of(struct emu_engine *e, uint64_t fd)
{
	for (size_t i = 0; i < e->n_files; i++)
		if (e->files[i].fd == fd)
			return &e->files[i];
	return NULL;
}

static bool pass_read(struct emu_engine *e, uc_engine *uc)
{
	uint64_t nr = 0, fd = 0, buf = 0, count = 0, rip = 0, flags = 0;
	struct emu_file *f;
	int64_t n;

	uc_reg_read(uc, UC_X86_REG_RAX, &nr);
	if (nr != 0 || !e->trail)
		return false;
	uc_reg_read(uc, UC_X86_REG_RDI, &fd);
	uc_reg_read(uc, UC_X86_REG_RSI, &buf);
	uc_reg_read(uc, UC_X86_REG_RDX, &count);
	if (!(f = file_of(e, fd)) || !e->pager.read || e->passed >= EMU_MAX_PASSED) {
		e->read_fd = fd <= INT32_MAX ? (int32_t)fd : -1;
		return false;
	}
	if (count > EMU_MAX_READ)
		count = EMU_MAX_READ;
	if (buf >= EMU_USER_END || buf + count > EMU_USER_END)
		return false;
	if (!e->read_buf)
		e->read_buf = xmalloc(EMU_MAX_READ);
	/* outside the emulation's fault path: chunks may be mapped, pages fetched */
	emu_active = NULL;
	n = count ? e->pager.read(e->pager.ctx, (uint32_t)fd, f->pos, count, e->read_buf) : 0;
	if (n > 0) {
		for (uint64_t p = buf & ~(uint64_t)(EMU_PAGE_SIZE - 1); p < buf + (uint64_t)n; p += EMU_PAGE_SIZE)
			if (!emu_chunk_of(e, p))
				emu_map_chunk(e, p);
		emu_refresh(e, buf, (size_t)n);
		if (e->taint || uc_mem_write(uc, buf, e->read_buf, (size_t)n))
			n = -1;
	}
	emu_active = e;
	if (n < 0)
		return false;
	f->pos += (uint64_t)n;
	uc_reg_read(uc, UC_X86_REG_RIP, &rip);
	uc_reg_read(uc, UC_X86_REG_RFLAGS, &flags);
	rip += 2;                       /* what syscall leaves in rcx and r11 */
	uc_reg_write(uc, UC_X86_REG_RCX, &rip);
	uc_reg_write(uc, UC_X86_REG_R11, &flags);
	uc_reg_write(uc, UC_X86_REG_RAX, &n);
	e->passed++;
	return true;
}

static void on_syscall(uc_engine *uc, void *ud)
{
	struct emu_engine *e = ud;
	uint64_t nr = 0;

	if (pass_syscall(e, uc) || pass_read(e, uc))
		return;
	uc_reg_read(uc, UC_X86_REG_RAX, &nr);
	snprintf(e->mnemonic, sizeof(e->mnemonic), "syscall-%llu", (unsigned long long)(nr & 0xffff));
	stop(e, PATHS_END_SYSCALL, emu_read_rip(uc));
}

static void on_intr(uc_engine *uc, uint32_t intno, void *ud)
{
	struct emu_engine *e = ud;
	uint64_t rip = emu_read_rip(uc);

	/*
	 * int 0x80 is a system call; anything else a fault the program would
	 * take (traps, int3 and int N, leave rip after the instruction).
	 */
	if (intno == 0x80)
		stop(e, PATHS_END_SYSCALL, rip - 2);
	else
		stop(e, PATHS_END_FAULT, intno == 3 ? rip - 1 : rip);
}

/* A trail's sample: the state compared where the emulation passes its rip. */
void emu_on_target(uc_engine *uc, uint64_t pc, uint32_t size, void *ud)
{
	struct emu_engine *e = ud;
	const struct emu_point *t;
	uint64_t regs[VALUES_NREGS];
	bool kernel;

	(void)size;
	if (!e->trail || e->matched || e->next >= e->trail->n)
		return;
	t = &e->trail->pt[e->next].p;
	if (pc != t->rip)
		return;
	/* in the kernel: rax held the system call's number, not its result yet */
	kernel = e->trail->pt[e->next].flags & EMU_POINT_KERNEL;
	/*
	 * One register first, one that differs between the state the segment
	 * began with and the point (a loop's counter, most likely): most passes
	 * are other iterations, refused for the price of reading it.
	 */
	if (e->key_reg >= 0 && (uc_reg_read(uc, uc_gpr[e->key_reg], &regs[0]) ||
				regs[0] != t->regs[e->key_reg]))
		return;
	/* The general registers (the flags are not compared: reading them costs their computation). */
	{
		void *p[VREG_RFLAGS];

		for (unsigned k = 0; k < VREG_RFLAGS; k++)
			p[k] = &regs[k];
		uc_reg_read_batch(uc, (int *)uc_gpr, p, VREG_RFLAGS);
	}
	{
		unsigned differ = 0;
		int first = -1;

		for (unsigned r = 0; r < VREG_RFLAGS; r++)
			if (regs[r] != t->regs[r] && !(kernel && r == VREG_RAX)) {
				differ++;
				if (first < 0)
					first = (int)r;
			}
		if (differ) {
			if (differ < e->closest)
				e->closest = differ;
			/* the register that told this pass apart tells the next ones, likely (a counter) */
			e->key_reg = first;
			return;
		}
	}
	e->at_match = e->blk_start + emu_index_in(e, e->cur, pc);
	e->matched = true;
	stop(e, PATHS_END_LIMIT, pc);
}

/* ---- instructions unicorn 2.0.1 refuses, done in software (collect/emu-avx.h) ---------- */

/* An instruction's memory: its chunks mapped and pages fetched as the emulation's would be. */
static int avx_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct emu_engine *e = ctx;

	for (uint64_t p = addr & ~(uint64_t)(EMU_PAGE_SIZE - 1); p < addr + len; p += EMU_PAGE_SIZE) {
		if (p >= EMU_USER_END)
			return -1;
		if (!emu_chunk_of(e, p)) {
			if (!emu_map_chunk(e, p))
				return -1;
			emu_fetch_pages(e, &p, 1);
		}
	}
	emu_refresh(e, addr, len);
	if (uc_mem_read(e->uc, addr, buf, len) || e->taint)
		return -1;
	return 0;
}

static int avx_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	struct emu_engine *e = ctx;
	uint8_t probe[1];

	/* Fetched first: a store changes the emulator's copy of the page. */
	if (avx_read(ctx, addr, probe, 1) || avx_read(ctx, addr + len - 1, probe, 1))
		return -1;
	return uc_mem_write(e->uc, addr, buf, len) ? -1 : 0;
}

/* An instruction unicorn refused: true if done here (rip moved past it). */
bool emu_emulate_missing(struct emu_engine *e, uint64_t rip)
{
	struct emu_avx_mem mem = { avx_read, avx_write, e };
	uint8_t buf[16];
	cs_insn *in = NULL;
	unsigned len = 0;
	int r;

	if (avx_read(e, rip, buf, sizeof(buf)))
		return false;
	if (cs_disasm(e->cs, buf, sizeof(buf), rip, 1, &in) != 1)
		in = NULL;
	r = emu_avx_do(e->uc, e->cs, in, buf, sizeof(buf), rip, &e->vregs, &mem, &len);
	if (r > 0) {
		uint64_t next = rip + len;

		uc_reg_write(e->uc, UC_X86_REG_RIP, &next);
		e->missing_done++;
	} else if (in) {
		snprintf(e->mnemonic, sizeof(e->mnemonic), "%s", in->mnemonic);
	} else {
		/* Not even capstone knows it: its first bytes say what it was. */
		snprintf(e->mnemonic, sizeof(e->mnemonic), "%02x.%02x.%02x.%02x.%02x", buf[0], buf[1],
			 buf[2], buf[3], buf[4]);
	}
	if (in)
		cs_free(in, 1);
	return r > 0;
}

/* ---- the hooks on an engine ---------------------------------------------------------- */

/* The hooks both engines have; the slow one has those of detail too. */
void emu_add_hooks(struct emu_engine *e, uc_engine *uc, enum emu_hooks kind)
{
	uc_hook h;

	uc_hook_add(uc, &h, UC_HOOK_BLOCK, on_block, e, 1, 0);
	uc_hook_add(uc, &h, UC_HOOK_MEM_UNMAPPED, emu_on_unmapped, e, 1, 0);
	uc_hook_add(uc, &h, UC_HOOK_INSN, on_syscall, e, 1, 0, UC_X86_INS_SYSCALL);
	uc_hook_add(uc, &h, UC_HOOK_INSN, on_syscall, e, 1, 0, UC_X86_INS_SYSENTER);
	uc_hook_add(uc, &h, UC_HOOK_INTR, on_intr, e, 1, 0);
	if (kind == EMU_HOOKS_DETAIL) {
		uc_hook_add(uc, &h, UC_HOOK_CODE, on_insn, e, 1, 0);
		uc_hook_add(uc, &h, UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE, on_mem, e, 1, 0);
	}
	/*
	 * The fast engine has no hook on memory: a page not filled is
	 * inaccessible (emu_protect_unfilled()) and its fault fetches it.  A
	 * hook on every access cost 20-30 ns each, more than the emulation of
	 * a memory-bound loop itself; and an engine with memory hooks stopped
	 * from a block hook does not stop where its rip says (measured: rip at
	 * an `add` it had already done), so that it could not go on.
	 */
}
