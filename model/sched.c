/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model/sched.c - the static basic-block scheduler (model/sched.h).
 *
 * The block (after its entry context) is run as a stream of instructions
 * through a small out-of-order machine, in program order: each instruction
 * gets its dispatch cycle D, the cycle its result is ready C (from its
 * operands, units, ports and latency) and its retire cycle R.  While doing
 * so it remembers which constraint set C: that is the reason reported for
 * an issue point.
 *
 * This file runs one schedule and makes its results; the instructions,
 * the machine, a loop's steady state and the contexts kept are in the
 * files model/sched-int.h lists.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "model/sched-int.h"

/* ---- results -------------------------------------------------------------------- */

/* Stream element j as the reason of element i (a body element) names it. */
static struct sched_ref ref_of(const struct sim *s, size_t i, int j)
{
	struct sched_ref ref = { SREF_NONE, 0 };

	if (j < 0)
		return ref;
	if ((size_t)j < s->n_ctx) {
		ref.kind = SREF_PRED;
		ref.index = (unsigned)j;
	} else {
		size_t b = (size_t)j - s->n_ctx;

		ref.kind = b / s->n_body == (i - s->n_ctx) / s->n_body ? SREF_BLOCK : SREF_PREV_ITER;
		ref.index = (unsigned)(b % s->n_body);
	}
	return ref;
}

/* Fills the reason fields of out from stream element i (an issue point). */
static void explain(const struct sim *s, size_t i, int r_prev, struct sched_insn *out)
{
	const struct elem *e = &s->e[i];

	out->reason = e->C <= r_prev ? SCHED_RETIRE : e->why.why;
	out->reg = 0;
	out->unit = 0;
	out->producer = (struct sched_ref){ SREF_NONE, 0 };
	if (out->reason == SCHED_DEP)
		out->reg = e->why.reg;
	if (out->reason == SCHED_UNIT)
		out->unit = e->why.unit;
	if (out->reason == SCHED_DEP || out->reason == SCHED_MEMDEP || out->reason == SCHED_UNIT)
		out->producer = ref_of(s, i, e->why.producer);
}

/* Records stream elements [first, first+n) as one pass over the block. */
static void record_pass(const struct sim *s, size_t first, struct block_schedule *out,
			bool last)
{
	int base = first ? s->e[first - 1].R : 0;

	for (size_t k = 0; k < out->n; k++) {
		size_t i = first + k;
		const struct elem *e = &s->e[i];
		int r_prev = i ? s->e[i - 1].R : 0;
		int m = e->R - r_prev;
		struct sched_insn *o = &out->insn[k];

		o->m += m;
		o->stall += m > 1 ? m - 1 : 0;
		if (m > 0)
			explain(s, i, r_prev, o);  /* the latest pass where it is an issue point */
		if (last) {
			o->dispatch = e->D - base;
			o->issue = e->S - base;
			o->complete = e->C - base;
			o->retire = e->R - base;
		}
	}
}

/* The block's totals from its instructions' results. */
static void totals(struct block_schedule *out)
{
	out->cycles = 0;
	out->issue_points = 0;
	out->uncertain = 0;
	for (size_t k = 0; k < out->n; k++) {
		const struct sched_insn *o = &out->insn[k];

		out->cycles += o->m;
		out->issue_points += o->issue_point;
		out->uncertain += !!(o->flags & SCHED_F_UNCERTAIN);
	}
}

static void finish(struct block_schedule *out, unsigned passes)
{
	for (size_t k = 0; k < out->n; k++) {
		struct sched_insn *o = &out->insn[k];

		o->m /= passes;
		o->stall /= passes;
		o->issue_point = o->m > 0;
		if (!o->issue_point)
			o->reason = SCHED_NONE;
	}
	totals(out);
	out->iterations = passes;
}

/* ---- API ---------------------------------------------------------------------------- */

void block_schedule_init(struct block_schedule *s)
{
	memset(s, 0, sizeof(*s));
}

void block_schedule_release(struct block_schedule *s)
{
	free(s->insn);
	block_schedule_init(s);
}

/* Iterations of a self-loop: enough to fill the ROB twice, then `measured`. */
static void loop_iterations(const struct cpu_model *m, size_t n, unsigned *warm,
			    unsigned *measured)
{
	size_t w = (2 * m->rob_size + n - 1) / n;

	*measured = 8;
	if (w < 2)
		w = 2;
	if (w * n > 8192)
		w = 8192 / n > 2 ? 8192 / n : 2;
	*warm = (unsigned)w;
}

/* Instruction p at a place of the stream, after prev there (NULL: none). */
static void set_slot(struct slot *sl, const struct cpu_model *m, const struct proto *p,
		     const struct proto *prev, bool loop)
{
	sl->p = p;
	sl->latency = p->t.latency + (loop ? p->loop_extra : 0);
	sl->load_lat = p->load_lat + (loop ? p->loop_extra : 0);
	sl->fused = prev && p->in->kind == INSN_CJUMP && sched_macro_fused(m, prev->in, p->in);
	sl->taken = false;
}

/* True if control goes from a to b other than by falling through. */
static bool taken_to(const struct proto *a, const struct proto *b)
{
	return insn_is_control(a->in) && a->in->addr + a->in->len != b->in->addr;
}

/*
 * The schedule of body[0..n) after ctx[0..n_ctx) (PRED), repeated (LOOP)
 * or alone (COLD).  The instructions before each one (for fusion) are
 * those of its array: none before the first of the context, nor before
 * the first of each pass over the body but the context's last.
 */
static int run_schedule(struct sched_prep *sp, const struct proto *const *body, size_t n,
			enum sched_entry_kind kind, const struct proto *const *ctx, size_t n_ctx,
			const uint32_t *ctx_idx, struct block_schedule *out)
{
	const struct cpu_model *m = sp->m;
	bool loop = kind == SCHED_ENTRY_LOOP;
	unsigned warm = 0, measured = 1;
	size_t total, n_key;
	struct slot *sl;
	struct sim s;
	uint64_t *key;
	bool remembered;

	if (!n)
		return errorf("cannot schedule an empty block");
	for (size_t i = 0; i < n; i++)
		if (body[i]->bad)
			return errorf("instruction at 0x%llx is not for model '%s'",
				      (unsigned long long)body[i]->in->addr, m->name);
	if (kind != SCHED_ENTRY_PRED)
		n_ctx = 0;
	block_schedule_release(out);
	out->model = m;
	out->entry = kind;
	out->n = n;
	out->insn = xcalloc(n, sizeof(*out->insn));
	if (loop)
		loop_iterations(m, n, &warm, &measured);
	total = n_ctx + (size_t)(warm + measured) * n;

	sched_sim_init(&s, m, &sp->buf);
	ALLOC_GROW(sp->buf.e, total, sp->buf.e_alloc);
	ALLOC_GROW(sp->buf.slots, n_ctx + 2 * n, sp->buf.slots_alloc);
	sl = sp->buf.slots;
	s.e = sp->buf.e;
	s.n = total;
	s.n_ctx = n_ctx;
	s.n_body = n;
	s.slots = sl;
	/* the context, the first pass, the passes after it (after the body, not the context) */
	for (size_t i = 0; i < n_ctx; i++)
		set_slot(&sl[i], m, ctx[i], i ? ctx[i - 1] : NULL, false);
	for (size_t i = 0; i < n; i++) {
		set_slot(&sl[n_ctx + i], m, body[i], i ? body[i - 1] : n_ctx ? ctx[n_ctx - 1] : NULL,
			 loop);
		sl[n_ctx + n + i] = sl[n_ctx + i];
	}
	sl[n_ctx + n].fused = false;
	for (size_t i = 1; i < n_ctx; i++)
		sl[i - 1].taken = taken_to(ctx[i - 1], ctx[i]);
	if (n_ctx)
		sl[n_ctx - 1].taken = taken_to(ctx[n_ctx - 1], body[0]);
	for (size_t i = 1; i < n; i++)
		sl[n_ctx + i - 1].taken = sl[n_ctx + n + i - 1].taken = taken_to(body[i - 1], body[i]);
	if (warm + measured > 1)
		sl[n_ctx + n - 1].taken = sl[n_ctx + 2 * n - 1].taken = taken_to(body[n - 1], body[0]);
	n_key = sched_memo_key(sp, sl, n_ctx, n, kind, &key);
	remembered = n_key && sched_memo_get(key, n_key, out);

	if (remembered) {
		/* the machine is not run */
	} else if (loop && warm > STEADY_MAX_PERIOD && !sp->full_runs) {
		sched_sim_run_loop(&s, n_ctx + (size_t)warm * n - 1, sp);
	} else if (ctx_idx && n_ctx >= 2 && n_ctx <= CTX_SNAP_MAX && !sp->full_runs) {
		const struct ctx_snap *c = sched_ctx_find(&sp->buf, ctx_idx, n_ctx);

		if (c) {
			sched_ctx_restore(&s, c);
		} else {
			sched_sim_run_to(&s, n_ctx - 1);
			sched_ctx_save(&sp->buf, &s, ctx_idx, n_ctx);
		}
		sched_sim_run(&s, n_ctx - 1);
	} else {
		sched_sim_run(&s, 0);
	}
	for (unsigned it = 0; it < measured && !remembered; it++)
		record_pass(&s, n_ctx + (size_t)(warm + it) * n, out, it == measured - 1);
	for (size_t i = 0; i < n; i++) {
		const struct proto *p = body[i];
		bool after_call = i ? body[i - 1]->call : n_ctx && ctx[n_ctx - 1]->call;

		out->insn[i].timing = p->t;
		out->insn[i].timing.latency = sl[n_ctx + i].latency;
		out->insn[i].flags = (sl[n_ctx + i].fused ? SCHED_F_FUSED : 0) |
				     (after_call ? SCHED_F_AFTER_CALL : 0) |
				     (p->t.eliminated ? SCHED_F_ELIMINATED : 0) |
				     (p->uncertain ? SCHED_F_UNCERTAIN : 0);
	}
	if (remembered) {
		totals(out);
	} else {
		finish(out, measured);
		if (n_key)
			sched_memo_put(key, n_key, out);
	}
	sched_sim_finish(&s);
	return 0;
}

/* The prepared instructions idx[0..n) as an array of pointers, at seq[at]. */
static void protos_of(const struct sched_prep *sp, const struct proto **seq, const uint32_t *idx,
		      size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (idx[i] >= sp->n)
			BUG("schedule_prepared: instruction %u of %zu", idx[i], sp->n);
		seq[i] = &sp->p[idx[i]];
	}
}

int schedule_prepared(struct sched_prep *sp, const uint32_t *body, size_t n,
		      enum sched_entry_kind kind, const uint32_t *ctx, size_t n_ctx,
		      struct block_schedule *out)
{
	if (kind != SCHED_ENTRY_PRED)
		n_ctx = 0;
	ALLOC_GROW(sp->buf.seq, n_ctx + n + 1, sp->buf.seq_alloc);
	protos_of(sp, sp->buf.seq, ctx, n_ctx);
	protos_of(sp, sp->buf.seq + n_ctx, body, n);
	return run_schedule(sp, sp->buf.seq + n_ctx, n, kind, sp->buf.seq, n_ctx, ctx, out);
}

int schedule_block(const struct cpu_model *m, const struct insn *insns, size_t n,
		   const struct sched_entry *entry, struct block_schedule *out)
{
	enum sched_entry_kind kind = entry ? entry->kind : SCHED_ENTRY_COLD;
	size_t n_pred = kind == SCHED_ENTRY_PRED ? entry->n_pred : 0;
	struct sched_prep *sp;
	const struct proto **seq;
	int r;

	if (!n)
		return errorf("cannot schedule an empty block");
	sp = sched_prep_new(m, n_pred ? entry->pred : NULL, n_pred);
	sched_prep_add(sp, insns, n);
	seq = xmalloc((n_pred + n + 1) * sizeof(*seq));
	for (size_t i = 0; i < n_pred + n; i++)
		seq[i] = &sp->p[i];
	r = run_schedule(sp, seq + n_pred, n, kind, seq, n_pred, NULL, out);
	free(seq);
	sched_prep_free(sp);
	return r;
}

void block_schedule_min(struct block_schedule *acc, const struct block_schedule *other)
{
	if (!other || other->n != acc->n)
		BUG("block_schedule_min: schedules of different blocks");
	acc->cycles = 0;
	acc->issue_points = 0;
	for (size_t i = 0; i < acc->n; i++) {
		if (other->insn[i].m < acc->insn[i].m)
			acc->insn[i] = other->insn[i];
		acc->cycles += acc->insn[i].m;
		acc->issue_points += acc->insn[i].issue_point;
	}
}

const char *sched_reason_name(enum sched_reason r)
{
	static const char *const names[] = {
		[SCHED_NONE] = "none",
		[SCHED_LATENCY] = "latency",
		[SCHED_DEP] = "dependence",
		[SCHED_MEMDEP] = "memory dependence",
		[SCHED_UNIT] = "unit busy",
		[SCHED_DISPATCH] = "dispatch",
		[SCHED_RETIRE] = "retire width",
		[SCHED_SERIAL] = "serialising",
	};

	return (unsigned)r < ARRAY_SIZE(names) ? names[r] : "?";
}

static void describe_ref(const struct sched_ref *ref, struct strbuf *out)
{
	switch (ref->kind) {
	case SREF_BLOCK: strbuf_addf(out, " from #%u", ref->index); break;
	case SREF_PREV_ITER: strbuf_addf(out, " from #%u (previous iteration)", ref->index); break;
	case SREF_PRED: strbuf_addf(out, " from predecessor #%u", ref->index); break;
	default: break;
	}
}

void sched_describe(const struct block_schedule *s, size_t i, struct strbuf *out)
{
	const struct sched_insn *o = &s->insn[i];

	strbuf_addf(out, "M=%g", o->m);
	if (o->flags & SCHED_F_FUSED)
		strbuf_addstr(out, " fused");
	if (o->flags & SCHED_F_ELIMINATED)
		strbuf_addstr(out, " eliminated");
	if (o->issue_point) {
		strbuf_addf(out, " %s", sched_reason_name(o->reason));
		if (o->reason == SCHED_DEP)
			strbuf_addf(out, " on %s", sched_reg_name(o->reg));
		if (o->reason == SCHED_UNIT)
			strbuf_addf(out, " %s", o->unit == SCHED_UNIT_LOAD_PORT ? "load port" :
				    o->unit == SCHED_UNIT_STORE_PORT ? "store port" :
				    model_unit_name(s->model, o->unit));
		describe_ref(&o->producer, out);
		if (o->reason == SCHED_LATENCY)
			strbuf_addf(out, " (%s, %u cycles)", model_fu_name(o->timing.fu),
				    o->timing.latency);
	}
	if (o->flags & SCHED_F_UNCERTAIN)
		strbuf_addstr(out, " uncertain");
}
