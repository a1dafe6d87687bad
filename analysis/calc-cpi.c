/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-cpi.c - CPI, stalls and culprits: per instruction its cycles per
 * execution, static and dynamic stall and their causes (culprit.h,
 * bursts' memory-ordering conflicts), measured loads' latencies against
 * the machine's ladder; per block its cycles and CPI.
 */
#include "config.h"

#include "analysis/calc-int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "db/meta.h"

/* True if a difference of d cycles per execution at i is beyond sampling noise. */
static bool significant(const struct calc_insn *ci, double freq, double d)
{
	double noise = freq > 0 ? 2.0 * sqrt(ci->samples > 1 ? ci->samples : 1) / freq : INFINITY;

	return fabs(d) >= 0.5 && fabs(d) > noise;
}

/*
 * The memory-ordering conflicts the bursts saw at load i (burstview.h):
 * culprits of its dynamic stall, each store a culprit instruction; they
 * explain what was unexplained.
 */
static void burst_culprits(struct calc *c, size_t i, struct calc_insn *ci)
{
	unsigned bits = 0;

	for (size_t k = 0; k < c->bursts.n_conflicts; k++) {
		const struct burst_conflict *bc = &c->bursts.conflicts[k];
		enum calc_culprit kind = bc->kind == BURST_STORE_FORWARD ? CULPRIT_STORE_FWD
									 : CULPRIT_ALIAS_4K;

		if (bc->load != i)
			continue;
		bits |= 1u << kind;
		ci->causes = xreallocarray(ci->causes, ci->n_causes + 1, sizeof(*ci->causes));
		ci->causes[ci->n_causes++] = (struct calc_cause){ bc->store, 1u << kind };
	}
	if (bits)
		ci->culprits = (ci->culprits & ~(1u << CULPRIT_UNEXPLAINED)) | bits;
}

static void insn_figures(struct calc_work *w, size_t i, const struct culprit_ctx *cx)
{
	struct calc *c = w->c;
	struct calc_insn *ci = &c->insns[i];
	const struct calc_block *cb = &c->blocks[ci->block];
	double d;

	ci->freq = cb->freq;
	ci->conf = cb->conf;
	ci->execs = cb->freq >= 0 && c->period > 0 ? cb->freq * c->period : -1;
	ci->stall_static = ci->m > 1 ? ci->m - 1 : 0;
	ci->cpi = -1;
	ci->stall_dynamic = 0;
	ci->culprits = 0;
	ci->flags &= ~(CALC_I_GAIN | CALC_I_CAPPED);
	if ((ci->flags & CALC_I_UNMEASURED) || !(cb->freq > 0) || !c->has_time)
		return;
	ci->cpi = ci->samples / cb->freq;
	/*
	 * An uncertain M is no lower bound: a placeholder for a system
	 * instruction (syscall: llvm-mca's 100 cycles, while the kernel's time
	 * is sampled in the kernel) or a guess for bytes the decoder could not
	 * follow.  Where the samples say it took less, what it took is its
	 * best case, so that the best case of its block and procedure never
	 * rests on the guess (read once showed a best-case CPI of 31.5 at a CPI
	 * of 0.5).
	 */
	if ((ci->flags & CALC_I_UNCERTAIN) && ci->cpi < ci->m) {
		ci->m = ci->cpi;
		ci->stall_static = ci->m > 1 ? ci->m - 1 : 0;
		ci->flags |= CALC_I_CAPPED;
	}
	d = ci->cpi - ci->m;
	if (!significant(ci, cb->freq, d))
		return;
	ci->stall_dynamic = d;
	if (d < 0) {
		ci->flags |= CALC_I_GAIN;
		return;
	}
	ci->culprits = culprit_find(cx, i, d, cb->freq, &ci->causes, &ci->n_causes,
				    &(size_t){ ci->n_causes }, NULL);
	burst_culprits(c, i, ci);
}

/* The static culprit: the producer of a static stall, as a cause. */
static void static_cause(struct calc *c, size_t i)
{
	struct calc_insn *ci = &c->insns[i];
	const struct calc_block *cb = &c->blocks[ci->block];
	const struct cfg_block *blk = cb->cfg;
	const struct sched_insn *x;
	size_t k = i - blk->first, p;

	if (ci->sreason == CALC_STATIC__COUNT || !cb->sched.insn || k >= cb->sched.n)
		return;
	x = &cb->sched.insn[k];
	if (x->producer.kind == SREF_BLOCK || x->producer.kind == SREF_PREV_ITER)
		p = blk->first + x->producer.index;
	else
		return;
	if (p >= c->n_insns)
		return;
	ci->causes = xreallocarray(ci->causes, ci->n_causes + 1, sizeof(*ci->causes));
	ci->causes[ci->n_causes++] = (struct calc_cause){ c->insns[p].insn->addr,
							  1u << (16 + ci->sreason) };
}

void calc_cctx_init(struct calc_work *w, struct calc_cctx *x)
{
	struct calc *c = w->c;
	struct culprit_ctx *cx = &x->cx;

	memset(x, 0, sizeof(*x));
	x->bf = xcalloc(c->n_blocks + 1, sizeof(double));
	x->ef = xcalloc(c->n_edges + 1, sizeof(double));
	x->sched = xcalloc(c->n_blocks + 1, sizeof(*x->sched));
	cx->cfg = w->cfg;
	cx->model = c->model;
	for (size_t b = 0; b < c->n_blocks; b++) {
		x->bf[b] = c->blocks[b].freq;
		x->sched[b] = c->blocks[b].sched;
	}
	for (size_t e = 0; e < c->n_edges; e++)
		x->ef[e] = c->edges[e].freq;
	cx->block_freq = x->bf;
	cx->edge_freq = x->ef;
	cx->sched = x->sched;
	cx->time_period = c->period;
	for (size_t ev = 0; ev < EVENT__COUNT; ev++) {
		const struct epoch_event *ee = w->meta ? epoch_meta_event(w->meta, (enum dcpi_event)ev) : NULL;

		if (ev == c->time_event || !w->rec[ev] || !ee || ee->period_in_ns || !ee->period)
			continue;
		cx->ev_period[ev] = (double)ee->period;
		x->ev[ev] = xmalloc((c->n_insns + 1) * sizeof(double));
		for (size_t i = 0; i < c->n_insns; i++)
			x->ev[ev][i] = c->insns[i].attributed[ev];
		cx->ev[ev] = x->ev[ev];
	}
}

void calc_cctx_release(struct calc_cctx *x)
{
	for (size_t ev = 0; ev < EVENT__COUNT; ev++)
		free(x->ev[ev]);
	free(x->sched);
	free(x->bf);
	free(x->ef);
}

void calc_insn_results(struct calc_work *w)
{
	struct calc *c = w->c;
	struct calc_cctx x;

	calc_cctx_init(w, &x);
	for (size_t i = 0; i < c->n_insns; i++) {
		free(c->insns[i].causes);
		c->insns[i].causes = NULL;
		c->insns[i].n_causes = 0;
		if (c->insns[i].block < 0 || (size_t)c->insns[i].block >= c->n_blocks)
			continue;
		static_cause(c, i);
		insn_figures(w, i, &x.cx);
	}
	calc_cctx_release(&x);
}

/*
 * The machine's latency ladder (collect/ladder.h: counters in ps), in
 * cycles: at the calibration loop's clock, else the recorded MHz.
 */
void calc_ladder(struct calc *c, const struct epoch_meta *meta)
{
	static const char *const names[CALC_LEVEL__COUNT] = {
		"lat_l1_ps", "lat_l2_ps", "lat_l3_ps", "lat_mem_ps",
	};
	const struct epoch_calib *cal = meta ? epoch_meta_calib(meta, c->time_event) : NULL;
	double mhz = cal && cal->mhz > 0 ? cal->mhz : meta ? meta->cpu_mhz : 0;

	for (int k = 0; k < CALC_LEVEL__COUNT; k++)
		c->ladder[k] = mhz > 0 && meta ? (double)epoch_meta_counter(meta, names[k]) / 1e6 * mhz
					       : 0;
}

/*
 * Loads whose executions are counted (measured classes): their cycles an
 * execution are a measured latency, not an estimate; the level of the
 * ladder it is nearest to (geometrically) says where the data came from on
 * average.  A load as fast as an L1 hit rules the D-cache and DTLB
 * culprits out at it; one at L2 latency or more confirms the D-cache.
 */
void calc_load_latencies(struct calc_work *w)
{
	struct calc *c = w->c;

	for (size_t i = 0; i < c->n_insns; i++) {
		struct calc_insn *ci = &c->insns[i];
		int cls, level = 0;

		ci->latency = -1;
		ci->latency_level = -1;
		if (ci->block < 0 || !(ci->insn->flags & INSN_F_LOAD) || ci->cpi < 0 ||
		    (cls = w->cfg->blocks[ci->block].cls) < 0 || w->cls_est[cls].method != EST_MEASURED)
			continue;
		ci->latency = ci->cpi;
		if (!(c->ladder[CALC_L1] > 0))
			continue;
		for (int k = 1; k < CALC_LEVEL__COUNT; k++)
			if (c->ladder[k] > 0 && ci->cpi >= sqrt(c->ladder[k - 1] * c->ladder[k]))
				level = k;
		ci->latency_level = level;
		if (ci->cpi <= 1.5 * c->ladder[CALC_L1] + 1)
			ci->culprits &= ~((1u << CULPRIT_DCACHE) | (1u << CULPRIT_DTLB));
		else if (level >= CALC_L2 && (ci->culprits & (1u << CULPRIT_DCACHE)))
			ci->culprits &= ~(1u << CULPRIT_UNEXPLAINED);
		if (ci->stall_dynamic > 0 && !ci->culprits)
			ci->culprits = 1u << CULPRIT_UNEXPLAINED;
	}
}

void calc_block_results(struct calc *c)
{
	for (size_t e = 0; e < c->n_edges; e++)
		c->edges[e].execs = c->edges[e].freq >= 0 && c->period > 0 ? c->edges[e].freq * c->period : -1;
	for (size_t b = 0; b < c->n_blocks; b++) {
		struct calc_block *cb = &c->blocks[b];
		const struct cfg_block *blk = cb->cfg;
		bool known = cb->freq > 0;

		cb->execs = cb->freq >= 0 && c->period > 0 ? cb->freq * c->period : -1;
		cb->samples = cb->best_cycles = cb->cycles = 0;
		for (uint32_t k = 0; k < blk->n_insns; k++) {
			const struct calc_insn *ci = &c->insns[blk->first + k];

			cb->samples += ci->samples;
			cb->best_cycles += ci->m;
			if (ci->cpi >= 0)
				cb->cycles += ci->cpi;
			else if (ci->flags & CALC_I_UNMEASURED)
				cb->cycles += ci->m;
			else
				known = false;
		}
		if (!known || !c->has_time)
			cb->cycles = -1;
		cb->best_cpi = blk->n_insns ? cb->best_cycles / blk->n_insns : 0;
		cb->cpi = cb->cycles >= 0 && blk->n_insns ? cb->cycles / blk->n_insns : -1;
	}
}
