/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "analysis/valprof.h"
#include "core/xalloc.h"
#include "disasm/decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct values_rec *valprof_rec_at(const struct listing *l, const struct values_profile *prof,
					uint64_t addr)
{
	uint64_t off;

	if (!prof || !prof->n || !image_addr_to_offset(l->img, addr, &off))
		return NULL;
	return values_profile_find(prof, off);
}

/* A hot list's reportable values, most common first, as shares of samples. */
static unsigned shares(const struct hotlist *h, uint64_t samples, struct valprof_value *out,
		       unsigned max)
{
	struct hotlist_entry room[HOTLIST_MAX];
	struct hotlist s = *h;
	unsigned n = 0;

	if (!samples)
		return 0;
	memcpy(room, h->e, h->n * sizeof(*room));
	s.e = room;
	hotlist_sort(&s);
	for (size_t i = 0; i < s.n && n < max; i++) {
		double sh = hotlist_estimate(&s, i) / (double)samples;

		if (!hotlist_reportable(&s, i))
			continue;
		out[n].value = s.e[i].value;
		out[n++].share = sh > 1 ? 1 : sh;
	}
	return n;
}

/*
 * A register's values over the samples of listing instructions [a, b]
 * (one block: the register holds the same value at all of them): their
 * hot lists merged.
 */
struct span {
	struct hotlist h;
	struct hotlist_entry room[HOTLIST_MAX];
	uint64_t samples;
};

static void span_values(const struct listing *l, const struct values_profile *prof, size_t a,
			size_t b, int r, struct span *sp)
{
	struct hotlist_rng rng = HOTLIST_RNG_INIT(a * 131 + (size_t)r);

	hotlist_init(&sp->h, sp->room, HOTLIST_MAX);
	sp->samples = 0;
	for (size_t k = a; k <= b; k++) {
		const struct values_rec *rec = valprof_rec_at(l, prof, l->insns[k].insn->addr);

		if (!rec || !(rec->mask & (1u << r)))
			continue;
		hotlist_merge(&sp->h, &rec->h[r], &rng);
		sp->samples += rec->samples;
	}
}

static struct valprof_item *add_item(struct valprof_insn *vi, const char *name)
{
	struct valprof_item *it;

	if (vi->n >= VALPROF_ITEMS)
		return NULL;
	it = &vi->it[vi->n++];
	memset(it, 0, sizeof(*it));
	snprintf(it->name, sizeof(it->name), "%s", name);
	return it;
}

/* The last listing index of instruction i's block. */
static size_t block_last(const struct listing *l, size_t i)
{
	while (i + 1 < l->n_insns && l->insns[i + 1].block == l->insns[i].block)
		i++;
	return i;
}

/* The first listing index of instruction i's block. */
static size_t block_first(const struct listing *l, size_t i)
{
	while (i > 0 && l->insns[i - 1].block == l->insns[i].block)
		i--;
	return i;
}

/* Register r as the emulator saw instruction i write it, if it saw that often enough. */
static bool written_exact(struct valprof_insn *vi, const struct values_rec *rec, int r)
{
	struct valprof_item *it;

	if (!rec || !(rec->mask & (1u << r)) || rec->samples < VALPROF_MIN_SAMPLES ||
	    !(it = add_item(vi, values_reg_name((unsigned)r))))
		return false;
	it->exact = true;
	it->samples = rec->samples;
	it->n = shares(&rec->h[r], rec->samples, it->v, VALPROF_SHOW);
	if (!it->n)
		vi->n--;  /* no value worth showing */
	return true;
}

/*
 * The registers insn i writes: as bursts saw it write them, else their
 * values at the samples of the instructions after it in its block, up to
 * (and including) the next one that writes the register again.
 */
static void written(struct valprof_insn *vi, const struct listing *l,
		    const struct values_profile *prof, const struct values_profile *wr, size_t i,
		    const struct insn_ops *ops)
{
	const struct insn *in = l->insns[i].insn;
	const struct values_rec *rec = valprof_rec_at(l, wr, in->addr);
	size_t last = block_last(l, i);

	for (unsigned d = 0; d < 16; d++) {
		struct valprof_item *it;
		struct span sp;
		size_t end = i + 1;
		int r = valprof_vreg(d);

		if (!regset_has(&in->writes, d) || r < 0)
			continue;
		/* The stack pointer only where it is the named destination (not push, call...). */
		if (d == DREG_RSP && !(ops->n && ops->op[0].kind == OPK_REG && ops->op[0].reg == d))
			continue;
		if (written_exact(vi, rec, r) || i == last || !prof || !prof->n)
			continue;
		while (end < last && !regset_has(&l->insns[end].insn->writes, d))
			end++;
		span_values(l, prof, i + 1, end, r, &sp);
		if (sp.samples < VALPROF_MIN_SAMPLES || !(it = add_item(vi, values_reg_name((unsigned)r))))
			continue;
		it->samples = sp.samples;
		it->n = shares(&sp.h, sp.samples, it->v, VALPROF_SHOW);
		if (!it->n)
			vi->n--;  /* no value worth showing */
	}
}

/*
 * The address of insn i's memory operand, from its address registers at
 * the samples of i and of the instructions before it in its block since
 * either register was last written.
 */
static void address(struct valprof_insn *vi, const struct listing *l,
		    const struct values_profile *prof, size_t i, const struct insn_ops *ops)
{
	const struct insn_operand *m = NULL;
	struct valprof_value b[VALPROF_SHOW], x[VALPROF_SHOW];
	struct valprof_item *it;
	struct span sp;
	size_t first = block_first(l, i), from = i;
	int rb, rx;
	unsigned nb = 0, nx = 0;
	uint64_t samples = 0;

	for (unsigned k = 0; k < ops->n && !m; k++)
		if (ops->op[k].kind == OPK_MEM)
			m = &ops->op[k];
	if (!m || m->base == DREG_PC)
		return;
	rb = m->base == DREG_NONE ? -2 : valprof_vreg(m->base);
	rx = m->index == DREG_NONE ? -2 : valprof_vreg(m->index);
	if (rb == -1 || rx == -1 || (rb == -2 && rx == -2))
		return;
	while (from > first) {
		const struct insn *w = l->insns[from - 1].insn;

		if ((rb >= 0 && regset_has(&w->writes, m->base)) ||
		    (rx >= 0 && regset_has(&w->writes, m->index)))
			break;
		from--;
	}
	if (rb >= 0) {
		span_values(l, prof, from, i, rb, &sp);
		nb = shares(&sp.h, sp.samples, b, VALPROF_SHOW);
		samples = sp.samples;
	}
	if (rx >= 0) {
		span_values(l, prof, from, i, rx, &sp);
		nx = shares(&sp.h, sp.samples, x, VALPROF_SHOW);
		samples = sp.samples;
	}
	if (samples < VALPROF_MIN_SAMPLES || (rb >= 0 && !nb) || (rx >= 0 && !nx))
		return;
	if (!(it = add_item(vi, "addr")))
		return;
	it->address = true;
	it->samples = samples;
	if (rb >= 0 && rx >= 0) {
		/* Per-register lists: the pair of the two most common values, a lower bound. */
		double sh = b[0].share + x[0].share - 1;

		if (sh <= 0) {
			vi->n--;
			return;
		}
		it->lower_bound = true;
		it->n = 1;
		it->v[0].value = b[0].value + x[0].value * m->scale + (uint64_t)m->disp;
		it->v[0].share = sh;
		return;
	}
	it->n = rb >= 0 ? nb : nx;
	for (unsigned k = 0; k < it->n; k++) {
		const struct valprof_value *v = rb >= 0 ? &b[k] : &x[k];

		it->v[k].value = (rb >= 0 ? v->value : v->value * m->scale) + (uint64_t)m->disp;
		it->v[k].share = v->share;
	}
}

void valprof_build(struct valprof *vp, const struct listing *l, const struct values_profile *prof,
		   const struct values_profile *written_by)
{
	memset(vp, 0, sizeof(*vp));
	vp->present = (prof && prof->n) || (written_by && written_by->n);
	if (!vp->present)
		return;  /* every instruction's values empty: none kept */
	vp->n = l->n_insns;
	vp->insns = xcalloc(vp->n ? vp->n : 1, sizeof(*vp->insns));
	for (size_t i = 0; i < l->n_insns; i++) {
		const struct insn *in = l->insns[i].insn;
		const struct values_rec *at = valprof_rec_at(l, prof, in->addr);
		struct insn_ops ops;
		bool ops_ok;

		if (at)
			vp->samples += at->samples;
		if (l->insns[i].block < 0)
			continue;
		/* without the operands, what bursts saw written is still known (not the stack pointer's) */
		ops_ok = insn_operands(in, &ops);
		if (!ops_ok)
			memset(&ops, 0, sizeof(ops));
		written(&vp->insns[i], l, prof, written_by, i, &ops);
		if (ops_ok && (in->flags & (INSN_F_LOAD | INSN_F_STORE)) && !(in->flags & INSN_F_PREFETCH) &&
		    prof && prof->n)
			address(&vp->insns[i], l, prof, i, &ops);
	}
}
