/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "analysis/burstview.h"
#include "analysis/valprof.h"
#include "core/xalloc.h"
#include "disasm/decode.h"

#include <stdlib.h>
#include <string.h>

/* A step's instruction as this image has it: its listing index (or -1) and vaddr. */
struct where {
	long insn;
	uint64_t addr;
	bool ok;
};

static struct where where_of(const struct listing *l, uint32_t key, const struct burst_step *st)
{
	struct where w = { -1, 0, false };

	if (st->image != key || !image_offset_to_addr(l->img, st->offset, &w.addr))
		return w;
	w.ok = true;
	w.insn = cfg_insn_at(&l->cfg, w.addr);
	return w;
}

/* The memory access of the instruction at addr with registers regs: address and size. */
static bool access_of(const struct listing *l, uint64_t addr, const uint64_t *regs,
		      uint64_t *ea, unsigned *size, unsigned *flags)
{
	struct decoder *dec = image_decoder(l->img);
	struct insn_ops ops;
	struct insn in;
	uint8_t code[16];
	unsigned len;

	memset(&ops, 0, sizeof(ops));
	if (!dec || image_read(l->img, addr, code, sizeof(code)))
		return false;
	if ((len = decode_ops(dec, code, sizeof(code), addr, &in, &ops)) < 1 ||
	    in.kind == INSN_INVALID || !(in.flags & (INSN_F_LOAD | INSN_F_STORE)) ||
	    (in.flags & (INSN_F_REP | INSN_F_PREFETCH)))
		return false;
	for (unsigned k = 0; k < ops.n; k++) {
		const struct insn_operand *m = &ops.op[k];
		int rb, rx;

		if (m->kind != OPK_MEM)
			continue;
		if (m->base == DREG_PC) {
			*ea = in.mem_addr;
		} else {
			rb = m->base == DREG_NONE ? -2 : valprof_vreg(m->base);
			rx = m->index == DREG_NONE ? -2 : valprof_vreg(m->index);
			if (rb == -1 || rx == -1)
				return false;  /* a segment base (fs:), or a vector index */
			*ea = (rb >= 0 ? regs[rb] : 0) + (rx >= 0 ? regs[rx] * m->scale : 0) +
			      (uint64_t)m->disp;
		}
		*size = m->size ? m->size : 8;
		*flags = in.flags;
		return true;
	}
	return false;
}

static void add_conflict(struct burstview *bv, size_t load, uint64_t store,
			 enum burst_conflict_kind kind)
{
	for (size_t k = 0; k < bv->n_conflicts; k++) {
		struct burst_conflict *c = &bv->conflicts[k];

		if (c->load == load && c->store == store && c->kind == kind) {
			c->count++;
			return;
		}
	}
	ALLOC_GROW(bv->conflicts, bv->n_conflicts + 1, bv->alloc_conflicts);
	bv->conflicts[bv->n_conflicts++] = (struct burst_conflict){ load, store, kind, 1 };
}

/* The stores before step k (in the window, same image) that a load at ea collides with. */
static void conflicts_of(struct burstview *bv, const struct listing *l, uint32_t key,
			 const struct burst_trace *t, size_t k, size_t load, uint64_t ea,
			 unsigned size)
{
	for (size_t j = k; j-- > 0 && k - j <= BURSTVIEW_WINDOW;) {
		struct where w = where_of(l, key, &t->steps[j]);
		uint64_t sea;
		unsigned ssize, flags;
		bool overlap, inside;

		if (!w.ok || !access_of(l, w.addr, t->steps[j].regs, &sea, &ssize, &flags) ||
		    !(flags & INSN_F_STORE))
			continue;
		overlap = sea < ea + size && ea < sea + ssize;
		inside = sea <= ea && ea + size <= sea + ssize;
		if (overlap) {
			if (!inside)
				add_conflict(bv, load, w.addr, BURST_STORE_FORWARD);
			return;  /* the latest store to these bytes decides */
		}
		if ((sea & ~0xfffull) != (ea & ~0xfffull) &&
		    (sea & 0xfff) < (ea & 0xfff) + size && (ea & 0xfff) < (sea & 0xfff) + ssize)
			add_conflict(bv, load, w.addr, BURST_ALIAS_4K);
	}
}

void burstview_build(struct burstview *bv, const struct listing *l, const struct burst_set *set)
{
	const char *key_name;
	uint32_t key = BURSTS_NO_IMAGE;
	size_t n = l->n_insns ? l->n_insns : 1;

	memset(bv, 0, sizeof(*bv));
	bv->stepped = xcalloc(n, sizeof(uint64_t));
	bv->taken = xcalloc(n, sizeof(uint64_t));
	bv->fallthrough = xcalloc(n, sizeof(uint64_t));
	bv->loads = xcalloc(n, sizeof(uint64_t));
	if (!set || !set->n || !l->view || !l->img)
		return;
	bv->seen = set->seen;
	key_name = l->view->images[l->ref.image].rec->key;
	for (size_t k = 0; k < set->n_keys; k++)
		if (!strcmp(set->keys[k], key_name))
			key = (uint32_t)k;
	if (key == BURSTS_NO_IMAGE)
		return;
	for (size_t b = 0; b < set->n; b++) {
		const struct burst_trace *t = &set->v[b];
		bool in = false;

		for (size_t k = 0; k < t->n; k++) {
			struct where w = where_of(l, key, &t->steps[k]);
			const struct insn *ins;
			uint64_t ea;
			unsigned size, flags;

			if (!w.ok || w.insn < 0)
				continue;
			in = true;
			ins = l->insns[w.insn].insn;
			bv->stepped[w.insn]++;
			bv->steps++;
			if (ins->kind == INSN_CJUMP && k + 1 < t->n) {
				struct where nx = where_of(l, key, &t->steps[k + 1]);

				if (nx.ok && nx.addr == ins->target)
					bv->taken[w.insn]++;
				else if (nx.ok && nx.addr == ins->addr + ins->len)
					bv->fallthrough[w.insn]++;
			}
			if ((ins->flags & INSN_F_LOAD) &&
			    access_of(l, ins->addr, t->steps[k].regs, &ea, &size, &flags)) {
				bv->loads[w.insn]++;
				conflicts_of(bv, l, key, t, k, (size_t)w.insn, ea, size);
			}
		}
		bv->bursts += in;
	}
}

void burstview_release(struct burstview *bv)
{
	free(bv->stepped);
	free(bv->taken);
	free(bv->fallthrough);
	free(bv->loads);
	free(bv->conflicts);
	memset(bv, 0, sizeof(*bv));
}
