/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/tracepaths.c - path profiles from single-step burst traces
 * (tracepaths.h).
 */
#include "config.h"

#include "analysis/tracepaths.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/valinsn.h"
#include "core/u64map.h"
#include "core/xalloc.h"
#include "disasm/decode.h"

/* An instruction of the image as the steps need it, decoded once. */
struct decoded {
	bool ok;
	struct insn in;
	bool mem;                   /* has a memory operand the registers give */
	struct insn_operand m;
	uint32_t writes;            /* general registers it writes (bits of enum values_reg) */
};

struct conv {
	const struct burst_set *set;
	uint32_t key;
	struct image *img;
	struct decoder *dec;
	struct u64map at;           /* offset -> index + 1 in dec_v */
	struct decoded *dec_v;
	size_t n_dec, alloc_dec;
	struct u64map vrec;         /* offset -> index + 1 in the values profile */
	struct hotlist_rng rng;
	struct paths_profile *out;
};

static void decode_at(struct conv *cv, uint64_t off, struct decoded *d)
{
	struct insn_ops ops;
	uint8_t code[16];
	uint64_t addr;

	memset(d, 0, sizeof(*d));
	memset(&ops, 0, sizeof(ops));
	if (!cv->dec || !image_offset_to_addr(cv->img, off, &addr) ||
	    image_read(cv->img, addr, code, sizeof(code)) ||
	    decode_one(cv->dec, code, sizeof(code), addr, &d->in) < 1 ||
	    d->in.kind == INSN_INVALID || !insn_operands(&d->in, &ops))
		return;
	d->ok = true;
	for (unsigned r = 0; r < 16; r++) {
		int v = valprof_vreg(r);

		/* the stack pointer only where it is the named destination (not push, call...) */
		if (v < 0 || !regset_has(&d->in.writes, r) ||
		    (r == DREG_RSP && !(ops.n && ops.op[0].kind == OPK_REG && ops.op[0].reg == r)))
			continue;
		d->writes |= 1u << v;
	}
	if (!(d->in.flags & (INSN_F_LOAD | INSN_F_STORE)) || (d->in.flags & (INSN_F_REP | INSN_F_PREFETCH)))
		return;
	for (unsigned k = 0; k < ops.n; k++) {
		if (ops.op[k].kind != OPK_MEM)
			continue;
		d->m = ops.op[k];
		/* a segment base (fs:) or a vector index cannot be computed from the registers */
		d->mem = d->m.base == DREG_PC ||
			 ((d->m.base == DREG_NONE || valprof_vreg(d->m.base) >= 0) &&
			  (d->m.index == DREG_NONE || valprof_vreg(d->m.index) >= 0));
		break;
	}
}

static const struct decoded *decoded(struct conv *cv, uint64_t off)
{
	uint64_t *slot = u64map_slot(&cv->at, off);

	if (!*slot) {
		ALLOC_GROW(cv->dec_v, cv->n_dec + 1, cv->alloc_dec);
		decode_at(cv, off, &cv->dec_v[cv->n_dec]);
		*slot = ++cv->n_dec;
	}
	return &cv->dec_v[*slot - 1];
}

/* The address and size a decoded instruction accesses with registers regs. */
static bool access_of(const struct decoded *d, const uint64_t *regs, uint64_t *ea, unsigned *size)
{
	int rb, rx;

	if (!d->ok || !d->mem)
		return false;
	if (d->m.base == DREG_PC) {
		*ea = d->in.mem_addr;
	} else {
		rb = d->m.base == DREG_NONE ? -1 : valprof_vreg(d->m.base);
		rx = d->m.index == DREG_NONE ? -1 : valprof_vreg(d->m.index);
		*ea = (rb >= 0 ? regs[rb] : 0) + (rx >= 0 ? regs[rx] * d->m.scale : 0) + (uint64_t)d->m.disp;
	}
	*size = d->m.size ? d->m.size : 8;
	return true;
}

/* The stores before step k of t (same burst and image) that the load at ea collides with. */
static void conflicts_of(struct conv *cv, const struct burst_trace *t, size_t k, uint64_t ea,
			 unsigned size)
{
	for (size_t j = k; j-- > 0 && k - j <= PATHS_CONFLICT_WINDOW;) {
		const struct burst_step *st = &t->steps[j];
		const struct decoded *d;
		uint64_t sea;
		unsigned ssize;
		bool overlap, inside;

		if (st->image != cv->key)
			continue;
		d = decoded(cv, st->offset);
		if (!(d->in.flags & INSN_F_STORE) || !access_of(d, st->regs, &sea, &ssize))
			continue;
		overlap = sea < ea + size && ea < sea + ssize;
		inside = sea <= ea && ea + size <= sea + ssize;
		if (overlap) {
			if (!inside)
				paths_add_conflict(cv->out, t->steps[k].offset, st->offset,
						   PATHS_STORE_FORWARD, 1);
			return;  /* the latest store to these bytes decides */
		}
		if ((sea & ~0xfffull) != (ea & ~0xfffull) &&
		    (sea & 0xfff) < (ea & 0xfff) + size && (ea & 0xfff) < (sea & 0xfff) + ssize)
			paths_add_conflict(cv->out, t->steps[k].offset, st->offset, PATHS_ALIAS_4K, 1);
	}
}

/* What step k's instruction wrote: the next step's registers. */
static void written(struct conv *cv, const struct decoded *d, uint64_t off, const uint64_t *next)
{
	uint64_t *slot;

	if (!d->writes)
		return;
	slot = u64map_slot(&cv->vrec, off);
	if (!*slot) {
		values_profile_add(&cv->out->values, off);
		*slot = cv->out->values.n;
	}
	values_rec_sample(&cv->out->values.v[*slot - 1], next, d->writes, &cv->rng);
}

static void trace(struct conv *cv, const struct burst_trace *t)
{
	bool in = false;

	for (size_t k = 0; k < t->n; k++) {
		const struct burst_step *st = &t->steps[k];
		const struct burst_step *nx = k + 1 < t->n ? &t->steps[k + 1] : NULL;
		const struct decoded *d;
		uint64_t ea;
		unsigned size;

		if (st->image != cv->key)
			continue;
		in = true;
		d = decoded(cv, st->offset);
		paths_add_block(cv->out, st->offset, d->ok ? d->in.len : 1, 1, 1, 0);
		cv->out->insns++;
		cv->out->detailed++;
		if (nx)
			paths_add_edge(cv->out, st->offset, nx->image == cv->key ? nx->offset : PATHS_ELSEWHERE, 1);
		if (nx && d->ok)
			written(cv, d, st->offset, nx->regs);
		if ((d->in.flags & INSN_F_LOAD) && access_of(d, st->regs, &ea, &size))
			conflicts_of(cv, t, k, ea, size);
	}
	cv->out->bursts += in;
}

void tracepaths_build(const struct burst_set *set, const char *key, struct image *img,
		      struct paths_profile *out)
{
	struct conv cv = { set, BURSTS_NO_IMAGE, img, NULL, { 0 }, NULL, 0, 0, { 0 },
			   HOTLIST_RNG_INIT(1), out };

	paths_profile_release(out);
	paths_profile_init(out);
	if (!set || !set->n || !img)
		return;
	for (size_t k = 0; k < set->n_keys; k++)
		if (!strcmp(set->keys[k], key))
			cv.key = (uint32_t)k;
	if (cv.key == BURSTS_NO_IMAGE)
		return;
	cv.dec = image_decoder(img);
	u64map_init(&cv.at);
	u64map_init(&cv.vrec);
	for (size_t b = 0; b < set->n; b++)
		trace(&cv, &set->v[b]);
	paths_profile_normalize(out);
	u64map_release(&cv.at);
	u64map_release(&cv.vrec);
	free(cv.dec_v);
}
