/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-cache.c - the static part of the analysis, cached
 * (calc-cache.h): its encoding, its decoder, and the files of a cache.
 *
 * A file (the payload of blob DCPICALC, docs/db-format.md "Cached
 * analyses") holds, after what it was made with, one record per
 * procedure, indexed by the procedure's range:
 *
 *   u format (1)   s analysis   u capstone   s build-id   s model   s symbols
 *   u n            n x { u start - previous start, u end - start, u record bytes }
 *   the records, in that order
 *
 * (u: a varint, s: a varint length and bytes).  A record is the classified
 * CFG (instructions with their timing on the model, blocks, edges, the
 * successor and predecessor lists) and each block's schedules.  Numbers
 * that are multiples of 1/8 (every M and stall: means over 8 passes or of
 * two contexts) are a zigzag varint of 16 times them, others their 8 bytes.
 */
#include "config.h"

#include "analysis/calc-cache.h"
#include "analysis/calc-cache-id.h"
#include "analysis/calc-int.h"
#include "analysis/calc-memo.h"

#include <capstone/capstone.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/cursor.h"
#include "core/die.h"
#include "core/hash.h"
#include "core/search.h"
#include "core/strbuf.h"
#include "core/u64map.h"
#include "core/utf8.h"
#include "core/varint.h"
#include "core/xalloc.h"
#include "db/binaries.h"
#include "db/blob.h"
#include "db/db.h"
#include "disasm/image.h"

#define FORMAT 4
/*
 * What made the records: this version, and a digest of the sources that
 * make CFGs and schedules (disasm/, model/, calc-sched.c: the build makes
 * calc-cache-id.h), so that another build's records are made again.
 */
#define ANALYSIS "dcpi " PACKAGE_VERSION " " CALC_CACHE_SOURCES

/* ---- writing ---------------------------------------------------------------------------- */

/* Appends v as a varint (written in place: records are long runs of them). */
static inline void put_u(struct strbuf *sb, uint64_t v)
{
	uint8_t *p;

	if (sb->alloc - sb->len < VARINT_MAX + 2)
		strbuf_grow(sb, 4096);
	p = (uint8_t *)sb->buf + sb->len;
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	*p = 0;
	sb->len = (size_t)(p - (uint8_t *)sb->buf);
}

/* Appends the n values of v as varints, in order. */
static inline void put_u_list(struct strbuf *sb, const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put_u(sb, v[i]);
}

/* put_u of each argument, in order: a run of a record's fields. */
#define put_us(sb, ...)                                                                    \
	put_u_list(sb, (const uint64_t[]){ __VA_ARGS__ },                                  \
		   sizeof((const uint64_t[]){ __VA_ARGS__ }) / sizeof(uint64_t))

static void put_s(struct strbuf *sb, int64_t v)
{
	put_u(sb, varint_zigzag((uint64_t)v));
}

static void put_str(struct strbuf *sb, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	put_u(sb, n);
	strbuf_add(sb, s ? s : "", n);
}

/* A number: 16 times it if that is a small whole number, else its bits. */
static void put_num(struct strbuf *sb, double x)
{
	double y = x * 16;

	if (y >= -1e15 && y <= 1e15 && y == (double)(int64_t)y) {
		put_u(sb, varint_zigzag((uint64_t)(int64_t)y) << 1);
	} else {
		uint64_t bits;

		memcpy(&bits, &x, sizeof(bits));
		put_u(sb, 1);
		for (int k = 0; k < 8; k++)
			strbuf_addch(sb, (char)(bits >> (8 * k)));
	}
}

/* A register set: how many, then each register's number. */
static void put_regs(struct strbuf *sb, const struct regset *rs)
{
	put_u(sb, (uint64_t)__builtin_popcountll(rs->w[0]) + (uint64_t)__builtin_popcountll(rs->w[1]));
	for (unsigned w = 0; w < 2; w++)
		for (uint64_t bits = rs->w[w]; bits; bits &= bits - 1)
			put_u(sb, w * 64 + (unsigned)__builtin_ctzll(bits));
}

static void put_insn(struct strbuf *sb, const struct insn *in, uint64_t prev)
{
	put_s(sb, (int64_t)(in->addr - prev));
	put_u(sb, in->len);
	put_u(sb, in->kind);
	put_s(sb, in->target ? (int64_t)(in->target - in->addr) : 0);
	put_u(sb, !!in->target);
	put_s(sb, in->mem_addr ? (int64_t)(in->mem_addr - in->addr) : 0);
	put_u(sb, !!in->mem_addr);
	put_us(sb, in->cs_id, in->opsig, in->nops, in->opsize, in->flags);
	put_regs(sb, &in->reads);
	put_regs(sb, &in->writes);
	put_str(sb, in->text);
}

static void put_timing(struct strbuf *sb, const struct model_timing *t, unsigned loop_extra)
{
	put_us(sb, t->latency, t->uops);
	put_num(sb, t->rthroughput);
	put_us(sb, t->fu, t->flags, t->match, t->eliminated, t->n_groups);
	for (unsigned g = 0; g < t->n_groups && g < MODEL_MAX_GROUPS; g++)
		put_us(sb, t->groups[g].mask, t->groups[g].cycles);
	put_u(sb, loop_extra);
}

static void put_schedule(struct strbuf *sb, const struct block_schedule *s, long pred_edge)
{
	put_s(sb, pred_edge);
	put_us(sb, s->entry, s->iterations);
	for (size_t i = 0; i < s->n; i++) {
		const struct sched_insn *x = &s->insn[i];
		bool usual_stall = x->stall == (x->m > 1 ? x->m - 1 : 0);

		put_u(sb, (uint64_t)x->reason | (uint64_t)x->producer.kind << 3 |
			  (uint64_t)x->flags << 5 | (uint64_t)usual_stall << 9 |
			  (uint64_t)!!x->reg << 10 | (uint64_t)!!x->unit << 11 |
			  (uint64_t)!!x->producer.index << 12);
		put_num(sb, x->m);
		if (!usual_stall)
			put_num(sb, x->stall);
		if (x->reg)
			put_u(sb, x->reg);
		if (x->unit)
			put_u(sb, x->unit);
		if (x->producer.index)
			put_u(sb, x->producer.index);
		put_s(sb, x->dispatch);
		put_s(sb, (int64_t)x->issue - x->dispatch);
		put_s(sb, (int64_t)x->complete - x->issue);
		put_s(sb, (int64_t)x->retire - x->complete);
	}
}

/* One procedure's record: its classified CFG and its blocks' schedules. */
static void put_record(struct strbuf *sb, const struct calc_work *w)
{
	const struct cfg *cfg = w->cfg;
	size_t n_succ = 0, n_pred = 0;
	uint64_t prev = cfg->start;

	put_us(sb, cfg->arch, cfg->flags);
	put_str(sb, cfg->missing_why);
	put_us(sb, cfg->n_classes, cfg->n_insns);
	for (size_t i = 0; i < cfg->n_insns; i++) {
		struct model_timing t;
		unsigned extra;

		put_insn(sb, &cfg->insns[i], prev);
		prev = cfg->insns[i].addr;
		sched_prep_timing(w->prep, i, &t, &extra);
		put_timing(sb, &t, extra);
	}
	put_u(sb, cfg->n_blocks);
	for (size_t b = 0; b < cfg->n_blocks; b++) {
		const struct cfg_block *blk = &cfg->blocks[b];

		put_us(sb, blk->start - cfg->start, blk->end - blk->start, blk->first, blk->n_insns,
		       blk->succ, blk->n_succ, blk->pred, blk->n_pred, blk->flags,
		       (uint64_t)(blk->cls + 1));
		n_succ += blk->n_succ;
		n_pred += blk->n_pred;
	}
	put_u(sb, cfg->n_edges);
	for (size_t e = 0; e < cfg->n_edges; e++) {
		const struct cfg_edge *ed = &cfg->edges[e];

		put_us(sb, ed->from, ed->to, ed->kind);
		put_s(sb, (int64_t)(ed->site - cfg->start));
		put_us(sb, ed->target, (uint64_t)(ed->cls + 1));
	}
	put_u(sb, n_succ);
	for (size_t k = 0; k < n_succ; k++)
		put_u(sb, cfg->succ[k]);
	put_u(sb, n_pred);
	for (size_t k = 0; k < n_pred; k++)
		put_u(sb, cfg->pred[k]);
	for (size_t b = 0; b + 1 < cfg->n_blocks; b++) {
		const struct bsched *bs = &w->bs[b];
		size_t n = bs->cycle ? bs->cycle : bs->n;  /* the hot cycle's comes last */

		if (!cfg->blocks[b].n_insns)
			continue;
		put_u(sb, n);
		for (size_t k = 0; k < n; k++)
			put_schedule(sb, &bs->s[k], bs->pred_edge[k]);
	}
	put_u(sb, w->n_known);
	for (size_t k = 0; k < w->n_known; k++) {
		const struct known_cycle *kc = &w->known[k];

		put_us(sb, kc->b, kc->n);
		for (uint32_t j = 0; j < kc->n; j++)
			put_u(sb, kc->blocks[j]);
		put_schedule(sb, &kc->s, -1);
	}
}

/* ---- reading ------------------------------------------------------------------------------ */

/* Records why (the first reason stays) and stops every read after it. */
static bool bad(struct cursor *r, const char *why)
{
	cursor_fail(r, why);
	r->p = r->end;
	return false;
}

static uint64_t get_u_slow(struct cursor *r, uint64_t max)
{
	uint64_t v;

	if (r->why)
		return 0;
	if (varint_decode(&r->p, r->end, &v))
		return bad(r, "truncated or malformed number"), 0;
	if (v > max)
		return bad(r, "number out of range"), 0;
	return v;
}

/* A varint at most max; 0 after a problem (most are one byte). */
static inline uint64_t get_u(struct cursor *r, uint64_t max)
{
	if (r->p < r->end && *r->p < 0x80 && *r->p <= max)
		return *r->p++;
	return get_u_slow(r, max);
}

static int64_t get_s(struct cursor *r)
{
	return (int64_t)varint_unzigzag(get_u(r, UINT64_MAX));
}

static int get_int(struct cursor *r)
{
	int64_t v = get_s(r);

	if (v < INT32_MIN / 2 || v > INT32_MAX / 2)
		return bad(r, "cycle out of range"), 0;
	return (int)v;
}

static int add_int(struct cursor *r, int a, int b)
{
	int64_t v = (int64_t)a + b;

	if (v < INT32_MIN / 2 || v > INT32_MAX / 2)
		return bad(r, "cycle out of range"), 0;
	return (int)v;
}

static double get_num(struct cursor *r)
{
	uint64_t v = get_u(r, UINT64_MAX), bits = 0;
	double x;

	if (!(v & 1))
		return (double)(int64_t)varint_unzigzag(v >> 1) / 16;
	if (v != 1 || r->end - r->p < 8)
		return bad(r, "truncated or malformed number"), 0;
	for (int k = 0; k < 8; k++)
		bits |= (uint64_t)r->p[k] << (8 * k);
	r->p += 8;
	memcpy(&x, &bits, sizeof(x));
	return x;
}

/* A string of at most max bytes (no NUL inside) into out[max + 1]. */
static void get_str(struct cursor *r, char *out, size_t max)
{
	size_t n = (size_t)get_u(r, max);

	out[0] = 0;
	if (r->why)
		return;
	if ((size_t)(r->end - r->p) < n)
		return (void)bad(r, "truncated string");
	if (memchr(r->p, 0, n))
		return (void)bad(r, "NUL in a string");
	memcpy(out, r->p, n);
	out[n] = 0;
	r->p += n;
}

/* A count of records each at least `least` bytes of input must back (cursor_count()). */
static size_t get_count(struct cursor *r, size_t least)
{
	uint64_t n;

	if (cursor_count(r, &n, UINT32_MAX, least))
		return bad(r, r->why), 0;
	return (size_t)n;
}

static void get_regs(struct cursor *r, struct regset *rs)
{
	size_t n = (size_t)get_u(r, DREG__COUNT);

	rs->w[0] = rs->w[1] = 0;
	for (size_t k = 0; k < n; k++)
		regset_add(rs, (unsigned)get_u(r, DREG__COUNT - 1));
}

static void get_insn(struct cursor *r, struct insn *in, uint64_t prev)
{
	bool has;
	int64_t d;

	in->addr = prev + (uint64_t)get_s(r);
	in->len = (uint8_t)get_u(r, 15);
	in->kind = (enum insn_kind)get_u(r, INSN_INVALID);
	d = get_s(r);
	has = get_u(r, 1);
	in->target = has ? in->addr + (uint64_t)d : 0;
	d = get_s(r);
	has = get_u(r, 1);
	in->mem_addr = has ? in->addr + (uint64_t)d : 0;
	in->cs_id = (unsigned)get_u(r, UINT16_MAX);
	in->opsig = (uint8_t)get_u(r, UINT8_MAX);
	in->nops = (uint8_t)get_u(r, UINT8_MAX);
	in->opsize = (uint8_t)get_u(r, UINT8_MAX);
	in->flags = (uint16_t)get_u(r, UINT16_MAX);
	get_regs(r, &in->reads);
	get_regs(r, &in->writes);
	get_str(r, in->text, INSN_TEXT_MAX - 1);
	if (!r->why && !in->len)
		bad(r, "an instruction of no bytes");
}

struct timing_x {
	struct model_timing t;
	unsigned loop_extra;
};

static void get_timing(struct cursor *r, struct timing_x *x)
{
	struct model_timing *t = &x->t;

	memset(x, 0, sizeof(*x));
	t->latency = (unsigned)get_u(r, 1u << 16);
	t->uops = (unsigned)get_u(r, 1u << 16);
	t->rthroughput = get_num(r);
	t->fu = (enum model_fu)get_u(r, FU__COUNT - 1);
	t->flags = (unsigned)get_u(r, UINT8_MAX);
	t->match = (enum model_match)get_u(r, MODEL_DEFAULT);
	t->eliminated = get_u(r, 1);
	t->n_groups = (unsigned)get_u(r, MODEL_MAX_GROUPS);
	for (unsigned g = 0; g < t->n_groups; g++) {
		t->groups[g].mask = (uint32_t)get_u(r, UINT32_MAX);
		t->groups[g].cycles = (uint8_t)get_u(r, UINT8_MAX);
	}
	x->loop_extra = (unsigned)get_u(r, 1u << 16);
}

static void get_schedule(struct cursor *r, struct block_schedule *s, size_t n,
			 const struct timing_x *tx, const struct cpu_model *m, long *pred_edge,
			 size_t n_edges)
{
	int64_t e = get_s(r);

	if (e < -1 || e >= (int64_t)n_edges)
		bad(r, "schedule of an edge out of range");
	*pred_edge = (long)e;
	block_schedule_init(s);
	s->model = m;
	s->entry = (enum sched_entry_kind)get_u(r, SCHED_ENTRY_LOOP);
	s->iterations = (unsigned)get_u(r, 1u << 16);
	s->n = n;
	s->insn = xmalloc((n ? n : 1) * sizeof(*s->insn));
	for (size_t i = 0; i < n; i++) {
		struct sched_insn *x = &s->insn[i];
		unsigned head = (unsigned)get_u(r, (1u << 13) - 1);

		x->reason = (enum sched_reason)(head & 7);
		x->producer.kind = (enum sched_ref_kind)(head >> 3 & 3);
		x->flags = head >> 5 & 15;
		if (x->reason >= SCHED_REASON__COUNT)
			bad(r, "unknown reason");
		x->m = get_num(r);
		x->stall = head >> 9 & 1 ? (x->m > 1 ? x->m - 1 : 0) : get_num(r);
		x->issue_point = x->m > 0;
		x->reg = head >> 10 & 1 ? (unsigned)get_u(r, DREG__COUNT - 1) : 0;
		x->unit = head >> 11 & 1 ? (unsigned)get_u(r, UINT16_MAX) : 0;
		x->producer.index = head >> 12 & 1 ? (unsigned)get_u(r, UINT32_MAX) : 0;
		if ((x->producer.kind == SREF_BLOCK || x->producer.kind == SREF_PREV_ITER) &&
		    x->producer.index >= n)
			bad(r, "producer out of the block");
		if (x->producer.kind == SREF_PRED && x->producer.index >= 1u << 16)
			bad(r, "producer out of the context");
		x->dispatch = get_int(r);
		x->issue = add_int(r, x->dispatch, get_int(r));
		x->complete = add_int(r, x->issue, get_int(r));
		x->retire = add_int(r, x->complete, get_int(r));
		x->timing = tx[i].t;
		if (s->entry == SCHED_ENTRY_LOOP)
			x->timing.latency += tx[i].loop_extra;
		s->cycles += x->m;
		s->issue_points += x->issue_point;
		s->uncertain += !!(x->flags & SCHED_F_UNCERTAIN);
	}
	if (!r->why && !(s->iterations >= 1))
		bad(r, "a schedule of no pass");
}

void calc_static_part_free(struct calc_static_part *st)
{
	if (!st)
		return;
	for (size_t k = 0; k < st->n_known; k++) {
		free(st->known[k].blocks);
		block_schedule_release(&st->known[k].s);
	}
	free(st->known);
	if (st->bs) {
		for (size_t b = 0; b < st->cfg.n_blocks; b++) {
			for (size_t k = 0; k < st->bs[b].n; k++)
				block_schedule_release(&st->bs[b].s[k]);
			free(st->bs[b].s);
			free(st->bs[b].pred_edge);
		}
		free(st->bs);
	}
	cfg_release(&st->cfg);
	free(st);
}

/* Checks the CFG's structure: what the analysis indexes with. */
static bool cfg_sound(struct cursor *r, const struct cfg *cfg, size_t n_succ, size_t n_pred)
{
	if (!cfg->n_blocks)
		return bad(r, "no blocks");
	for (size_t i = 1; i < cfg->n_insns; i++)
		if (cfg->insns[i].addr < cfg->insns[i - 1].addr + cfg->insns[i - 1].len)
			return bad(r, "instructions out of order");
	for (size_t i = 0; i < cfg->n_insns; i++)
		if (cfg->insns[i].addr < cfg->start || cfg->insns[i].addr >= cfg->end)
			return bad(r, "an instruction outside the procedure");
	for (size_t b = 0; b < cfg->n_blocks; b++) {
		const struct cfg_block *blk = &cfg->blocks[b];

		if (blk->first > cfg->n_insns || blk->n_insns > cfg->n_insns - blk->first ||
		    blk->succ > n_succ || blk->n_succ > n_succ - blk->succ || blk->pred > n_pred ||
		    blk->n_pred > n_pred - blk->pred || blk->cls >= (int)cfg->n_classes ||
		    blk->end < blk->start)
			return bad(r, "a block out of range");
		for (uint32_t k = 0; k < blk->n_succ; k++)
			if (cfg->succ[blk->succ + k] >= cfg->n_edges ||
			    cfg->edges[cfg->succ[blk->succ + k]].from != b)
				return bad(r, "a successor list out of joint");
		for (uint32_t k = 0; k < blk->n_pred; k++)
			if (cfg->pred[blk->pred + k] >= cfg->n_edges ||
			    cfg->edges[cfg->pred[blk->pred + k]].to != b)
				return bad(r, "a predecessor list out of joint");
		if (b && blk->n_insns && blk->start < cfg->blocks[b - 1].start)
			return bad(r, "blocks out of order");
	}
	if (cfg->blocks[cfg->exit].n_insns)
		return bad(r, "an exit block with instructions");
	for (size_t e = 0; e < cfg->n_edges; e++)
		if (cfg->edges[e].from >= cfg->n_blocks || cfg->edges[e].to >= cfg->n_blocks ||
		    cfg->edges[e].cls >= (int)cfg->n_classes)
			return bad(r, "an edge out of range");
	return true;
}

/*
 * Decodes one procedure's record of [start, end) for model m (NULL: none
 * needed, for checking).  Returns it, or NULL with r->why.
 */
static struct calc_static_part *get_record(struct cursor *r, uint64_t start, uint64_t end,
				      const struct cpu_model *m)
{
	struct calc_static_part *st = xcalloc(1, sizeof(*st));
	struct cfg *cfg = &st->cfg;
	struct timing_x *tx = NULL;
	char why[256];
	size_t n_succ, n_pred;
	uint64_t prev = start;

	cfg->start = start;
	cfg->end = end;
	cfg->arch = (enum insn_arch)get_u(r, ARCH_AARCH64);
	cfg->flags = (unsigned)get_u(r, CFG_EXITLESS | CFG_CLASSIFIED | CFG_JUMP_TABLES |
					   CFG_MISSING_EDGES);
	get_str(r, why, sizeof(why) - 1);
	if (why[0] && !(cfg->missing_why = cfg_missing_why_of(why)))
		bad(r, "unknown missing-edges reason");
	cfg->n_classes = get_count(r, 0);
	cfg->n_insns = get_count(r, 20);
	cfg->insns = xcalloc(cfg->n_insns + 1, sizeof(*cfg->insns));
	tx = xcalloc(cfg->n_insns + 1, sizeof(*tx));
	for (size_t i = 0; i < cfg->n_insns && !r->why; i++) {
		get_insn(r, &cfg->insns[i], prev);
		prev = cfg->insns[i].addr;
		get_timing(r, &tx[i]);
	}
	cfg->n_blocks = get_count(r, 10);
	cfg->blocks = xcalloc(cfg->n_blocks + 1, sizeof(*cfg->blocks));
	cfg->exit = cfg->n_blocks ? cfg->n_blocks - 1 : 0;
	for (size_t b = 0; b < cfg->n_blocks && !r->why; b++) {
		struct cfg_block *blk = &cfg->blocks[b];

		blk->start = start + get_u(r, end - start);
		blk->end = blk->start + get_u(r, end - start);
		blk->first = (uint32_t)get_u(r, UINT32_MAX);
		blk->n_insns = (uint32_t)get_u(r, UINT32_MAX);
		blk->succ = (uint32_t)get_u(r, UINT32_MAX);
		blk->n_succ = (uint32_t)get_u(r, UINT32_MAX);
		blk->pred = (uint32_t)get_u(r, UINT32_MAX);
		blk->n_pred = (uint32_t)get_u(r, UINT32_MAX);
		blk->flags = (unsigned)get_u(r, 31);
		blk->cls = (int)get_u(r, (uint64_t)cfg->n_classes) - 1;
	}
	cfg->n_edges = get_count(r, 6);
	cfg->edges = xcalloc(cfg->n_edges + 1, sizeof(*cfg->edges));
	for (size_t e = 0; e < cfg->n_edges && !r->why; e++) {
		struct cfg_edge *ed = &cfg->edges[e];

		ed->from = (uint32_t)get_u(r, UINT32_MAX);
		ed->to = (uint32_t)get_u(r, UINT32_MAX);
		ed->kind = (enum cfg_edge_kind)get_u(r, CFG_EDGE_KIND__COUNT - 1);
		ed->site = start + (uint64_t)get_s(r);
		ed->target = get_u(r, UINT64_MAX);
		ed->cls = (int)get_u(r, (uint64_t)cfg->n_classes) - 1;
	}
	n_succ = get_count(r, 1);
	cfg->succ = xcalloc(n_succ + 1, sizeof(*cfg->succ));
	for (size_t k = 0; k < n_succ; k++)
		cfg->succ[k] = (uint32_t)get_u(r, UINT32_MAX);
	n_pred = get_count(r, 1);
	cfg->pred = xcalloc(n_pred + 1, sizeof(*cfg->pred));
	for (size_t k = 0; k < n_pred; k++)
		cfg->pred[k] = (uint32_t)get_u(r, UINT32_MAX);
	if (!r->why)
		cfg_sound(r, cfg, n_succ, n_pred);
	st->bs = xcalloc(cfg->n_blocks + 1, sizeof(*st->bs));
	for (size_t b = 0; b < cfg->exit && !r->why; b++) {
		const struct cfg_block *blk = &cfg->blocks[b];
		struct bsched *bs = &st->bs[b];
		size_t n;

		if (!blk->n_insns)
			continue;
		n = (size_t)get_u(r, (uint64_t)blk->n_pred + 1);
		bs->s = xcalloc(n + 1, sizeof(*bs->s));
		bs->pred_edge = xcalloc(n + 1, sizeof(*bs->pred_edge));
		for (size_t k = 0; k < n && !r->why; k++) {
			get_schedule(r, &bs->s[k], blk->n_insns, &tx[blk->first], m, &bs->pred_edge[k],
				     cfg->n_edges);
			bs->n = k + 1;
		}
	}
	st->n_known = get_count(r, 3);
	st->known = xcalloc(st->n_known + 1, sizeof(*st->known));
	for (size_t k = 0; k < st->n_known && !r->why; k++) {
		struct known_cycle *kc = &st->known[k];
		long e;

		kc->b = (uint32_t)get_u(r, cfg->exit ? cfg->exit - 1 : 0);
		kc->n = (uint32_t)get_u(r, cfg->n_blocks);
		kc->blocks = xcalloc((size_t)kc->n + 1, sizeof(*kc->blocks));
		for (uint32_t j = 0; j < kc->n; j++)
			kc->blocks[j] = (uint32_t)get_u(r, cfg->exit ? cfg->exit - 1 : 0);
		if (!r->why && (!kc->n || kc->blocks[0] != kc->b || !cfg->blocks[kc->b].n_insns))
			bad(r, "a hot cycle out of joint");
		get_schedule(r, &kc->s, r->why ? 0 : cfg->blocks[kc->b].n_insns, &tx[cfg->blocks[kc->b].first],
			     m, &e, 0);
		if (!r->why && (e != -1 || kc->s.entry != SCHED_ENTRY_LOOP))
			bad(r, "a hot cycle's schedule out of joint");
	}
	if (!r->why && r->p != r->end)
		bad(r, "bytes after a record");
	free(tx);
	if (r->why) {
		calc_static_part_free(st);
		return NULL;
	}
	return st;
}

/* ---- files ------------------------------------------------------------------------------- */

struct centry {
	uint64_t start, end;
	size_t off, len;          /* the record in the file's payload, or in `fresh` */
};

/* One (build-id, model): what the database held and what was found here. */
struct cfile {
	uint64_t hash;            /* of build-id, model and symbols: the index's key */
	uint64_t used;            /* the cache's tick when last used */
	uint8_t id[IMAGE_BUILD_ID_MAX];  /* the build-id */
	unsigned id_len;
	char hex[2 * 32 + 1], model[DB_CALC_MODEL_MAX + 1];
	char *symbols;            /* what the records were made with (symbols_of) */
	bool loaded;
	struct strbuf disk;       /* the payload read (records valid with `symbols`) */
	struct centry *ent;       /* its records, by start */
	size_t n;
	struct strbuf fresh;      /* records made here since the last flush */
	struct centry *fent;
	size_t nf, alloc_f;
};

/*
 * What a cache holds of its files' records at most: beyond it, the least
 * recently used files are stored (if they have records found here) and
 * forgotten (read again when needed).  A session that analyses a million
 * procedures must not hold them all.
 */
#define HELD_MAX (16u << 20)

struct calc_cache {
	pthread_mutex_t lock;
	struct db *db;
	struct cfile *files;
	size_t n, alloc;
	struct u64map index;      /* hash -> index + 1 in files (the first of that hash) */
	uint64_t tick;
	size_t held;              /* bytes of records held (disk and fresh) */
	struct calc_cache_stats st;
};

struct calc_cache *calc_cache_new(struct db *db)
{
	struct calc_cache *cc = xcalloc(1, sizeof(*cc));

	pthread_mutex_init(&cc->lock, NULL);
	u64map_init(&cc->index);
	cc->db = db;
	return cc;
}

/* What the image's procedures and their calls' names come from: the binary, or with its debug file. */
static const char *symbols_of(const struct image *img)
{
	return img->dbg_path ? "binary+debug" : "binary";
}

/* The file's identity: what a file must say it was made with to be used. */
static void put_identity(struct strbuf *sb, const struct cfile *f)
{
	put_u(sb, FORMAT);
	put_str(sb, ANALYSIS);
	put_u(sb, (uint64_t)cs_version(NULL, NULL));
	put_str(sb, f->hex);
	put_str(sb, f->model);
	put_str(sb, f->symbols);
}

/*
 * Reads a payload's header and index into ent (allocated); -1 with *why
 * if it is damaged, 1 if it is another analysis' (stale), 0 if usable.
 * With f NULL, only checks that it is well formed.
 */
static int read_index(const uint8_t *p, size_t len, unsigned count, const struct cfile *f,
		      struct centry **ent, size_t *n, const char **why)
{
	struct cursor r = { p, p + len, NULL };
	char analysis[128], hex[2 * 32 + 1], model[DB_CALC_MODEL_MAX + 1], symbols[64];
	uint64_t format, capstone, start = 0;
	size_t off, k;
	int stale;

	*ent = NULL;
	*n = 0;
	format = get_u(&r, UINT32_MAX);
	get_str(&r, analysis, sizeof(analysis) - 1);
	capstone = get_u(&r, UINT32_MAX);
	get_str(&r, hex, sizeof(hex) - 1);
	get_str(&r, model, sizeof(model) - 1);
	get_str(&r, symbols, sizeof(symbols) - 1);
	*n = get_count(&r, 3);
	if (!r.why && *n != count)
		bad(&r, "record count differs from the header's");
	if (r.why) {
		*why = r.why;
		*n = 0;
		return -1;
	}
	*ent = xcalloc(*n + 1, sizeof(**ent));
	for (k = 0; k < *n && !r.why; k++) {
		start += get_u(&r, UINT64_MAX - start);
		(*ent)[k].start = start;
		(*ent)[k].end = start + get_u(&r, UINT64_MAX - start);
		(*ent)[k].len = (size_t)get_u(&r, len);
		if (!r.why && (k && start <= (*ent)[k - 1].start))
			bad(&r, "records out of order");
		if (!r.why && (*ent)[k].end <= start)
			bad(&r, "an empty procedure");
	}
	off = (size_t)(r.p - p);
	for (k = 0; k < *n && !r.why; k++) {
		(*ent)[k].off = off;
		if ((*ent)[k].len > len - off)
			bad(&r, "records beyond the file");
		off += (*ent)[k].len;
	}
	if (!r.why && off != len)
		bad(&r, "bytes after the records");
	if (r.why) {
		free(*ent);
		*ent = NULL;
		*n = 0;
		*why = r.why;
		return -1;
	}
	stale = format != FORMAT || strcmp(analysis, ANALYSIS) ||
		capstone != (uint64_t)cs_version(NULL, NULL);
	if (f)
		stale |= strcmp(hex, f->hex) || strcmp(model, f->model) || strcmp(symbols, f->symbols);
	return stale;
}

int calc_cache_check_payload(const void *payload, size_t len, unsigned count, const char **why)
{
	const struct cpu_model *m = cpu_model_generic();
	struct cursor first = CURSOR_INIT(payload, len);
	struct centry *ent;
	uint64_t format;
	size_t n;
	int r = 0;

	/* a memo of a view's figures (calc-memo.h) lives beside the static parts */
	if (!cursor_varint(&first, &format) && format == CALC_MEMO_FORMAT)
		return calc_memo_check_payload(payload, len, count, why);
	if (read_index(payload, len, count, NULL, &ent, &n, why) < 0)
		return -1;
	for (size_t k = 0; k < n && !r; k++) {
		struct cursor rd = { (const uint8_t *)payload + ent[k].off,
				 (const uint8_t *)payload + ent[k].off + ent[k].len, NULL };
		struct calc_static_part *st = get_record(&rd, ent[k].start, ent[k].end, m);

		if (!st) {
			*why = rd.why;
			r = -1;
		}
		calc_static_part_free(st);
	}
	free(ent);
	return r;
}

/* Loads f from the database (once): its records if it is sound and made as we make them. */
static void load_file(struct calc_cache *cc, struct cfile *f)
{
	struct blob_header h;
	const char *why = NULL;
	struct strbuf buf = STRBUF_INIT;
	int r;

	f->loaded = true;
	if (!cc->db || (r = db_calc_load(cc->db, f->hex, f->model, &buf, &h, &why)) == 1) {
		strbuf_release(&buf);
		return;
	}
	if (!r) {
		r = read_index((const uint8_t *)buf.buf + BLOB_HEADER_SIZE, (size_t)h.payload_size,
			       h.count, f, &f->ent, &f->n, &why);
		if (!r) {
			strbuf_add(&f->disk, buf.buf + BLOB_HEADER_SIZE, (size_t)h.payload_size);
			cc->held += f->disk.len;
		} else {
			free(f->ent);
			f->ent = NULL;
			f->n = 0;
		}
	}
	if (r < 0)
		warning("cached analysis '%s/calc/%s.%s' is damaged: %s (made again)",
			cc->db->path, f->hex, f->model, why);
	else if (r > 0)
		warning("cached analysis '%s/calc/%s.%s' is stale: made by another build or for "
			"another binary (made again)", cc->db->path, f->hex, f->model);
	strbuf_release(&buf);
}

static bool same_file(const struct cfile *f, const struct image *img, const struct cpu_model *m)
{
	return f->id_len == img->rec.build_id_len &&
	       !memcmp(f->id, img->rec.build_id, img->rec.build_id_len) &&
	       !strcmp(f->model, m->name) && !strcmp(f->symbols, symbols_of(img));
}

/* The file of img's build-id on model m, or NULL if img is not cached. */
static struct cfile *file_of(struct calc_cache *cc, const struct image *img,
			     const struct cpu_model *m)
{
	struct strbuf hex = STRBUF_INIT;
	struct cfile *f = NULL;

	uint64_t hash, k;

	if (img->state != IMAGE_OK || img->forced || img->rec.kind != IMAGE_FILE ||
	    !img->rec.build_id_len || img->rec.build_id_len > IMAGE_BUILD_ID_MAX)
		return NULL;
	hash = hash_bytes(HASH_FNV_INIT, img->rec.build_id, img->rec.build_id_len);
	hash = hash_bytes(hash, m->name, strlen(m->name) + 1);
	hash = hash_bytes(hash, symbols_of(img), strlen(symbols_of(img)) + 1);
	if (u64map_get(&cc->index, hash, &k)) {
		if (same_file(&cc->files[k - 1], img, m))
			return &cc->files[k - 1];
		/* another file of the same hash (it never happens): looked for in all */
		for (size_t j = 0; j < cc->n; j++)
			if (same_file(&cc->files[j], img, m))
				return &cc->files[j];
	}
	strbuf_add_build_id(&hex, &img->rec);
	if (!db_binary_name_valid(hex.buf) || !db_calc_model_valid(m->name))
		goto out;
	ALLOC_GROW(cc->files, cc->n + 1, cc->alloc);
	f = &cc->files[cc->n++];
	memset(f, 0, sizeof(*f));
	f->hash = hash;
	if (!u64map_get(&cc->index, hash, &k))
		*u64map_slot(&cc->index, hash) = cc->n;
	memcpy(f->id, img->rec.build_id, img->rec.build_id_len);
	f->id_len = img->rec.build_id_len;
	snprintf(f->hex, sizeof(f->hex), "%s", hex.buf);
	snprintf(f->model, sizeof(f->model), "%s", m->name);
	f->symbols = xstrdup(symbols_of(img));
	strbuf_init(&f->disk, 0);
	strbuf_init(&f->fresh, 0);
out:
	strbuf_release(&hex);
	return f;
}

/* Lets go of f's records (what was found here too: store it first); read again when needed. */
static void forget(struct calc_cache *cc, struct cfile *f)
{
	cc->held -= f->disk.len + f->fresh.len;
	free(f->ent);
	f->ent = NULL;
	f->n = 0;
	strbuf_release(&f->disk);
	strbuf_release(&f->fresh);
	free(f->fent);
	f->fent = NULL;
	f->nf = f->alloc_f = 0;
	f->loaded = false;
}

static int store_file(struct calc_cache *cc, struct cfile *f);

static int older(const void *x, const void *y, void *ctx)
{
	const struct cfile *files = ctx;
	uint64_t a = files[*(const size_t *)x].used, b = files[*(const size_t *)y].used;

	return (a > b) - (a < b);
}

/*
 * Keeps what cc holds under HELD_MAX: the least recently used files but
 * keep are stored (what was found here) and forgotten, down to half of it.
 * Returns keep (cc->files does not move).
 */
static struct cfile *bound(struct calc_cache *cc, struct cfile *keep)
{
	size_t *v, n = 0;

	if (cc->held <= HELD_MAX)
		return keep;
	v = xcalloc(cc->n, sizeof(*v));
	for (size_t k = 0; k < cc->n; k++)
		if (&cc->files[k] != keep && cc->files[k].disk.len + cc->files[k].fresh.len)
			v[n++] = k;
	qsort_r(v, n, sizeof(*v), older, cc->files);
	for (size_t k = 0; k < n && cc->held > HELD_MAX / 2; k++) {
		struct cfile *f = &cc->files[v[k]];

		if (f->nf && cc->db)
			store_file(cc, f);
		forget(cc, f);
	}
	free(v);
	return keep;
}

static const struct centry *find_entry(const struct centry *v, size_t n, uint64_t start)
{
	size_t lo = LOWER_BOUND(n, k, v[k].start < start);

	return lo < n && v[lo].start == start ? &v[lo] : NULL;
}

struct calc_static_part *calc_cache_get(struct calc_cache *cc, struct image *img,
				   const struct cpu_model *m, const struct proc *p)
{
	struct calc_static_part *st = NULL;
	const struct centry *e = NULL;
	const char *src = NULL;
	struct strbuf rec = STRBUF_INIT;
	struct cfile *f;

	pthread_mutex_lock(&cc->lock);
	if ((f = file_of(cc, img, m))) {
		f->used = ++cc->tick;
		if (!f->loaded) {
			load_file(cc, f);
			f = bound(cc, f);
		}
		/* what was found here first: it is what this build makes */
		for (size_t k = f->nf; k-- > 0 && !e;)
			if (f->fent[k].start == p->start) {
				e = &f->fent[k];
				src = f->fresh.buf;
			}
		if (!e && (e = find_entry(f->ent, f->n, p->start)))
			src = f->disk.buf;
		if (e && e->end == p->end)
			strbuf_add(&rec, src + e->off, e->len);
		else
			e = NULL;
	}
	pthread_mutex_unlock(&cc->lock);
	if (e) {
		struct cursor r = { (const uint8_t *)rec.buf, (const uint8_t *)rec.buf + rec.len, NULL };

		if (!(st = get_record(&r, p->start, p->end, m))) {
			char *name = display_safe(p->name);

			warning("cached analysis of '%s' is damaged: %s (made again)", name, r.why);
			free(name);
		}
	}
	strbuf_release(&rec);
	pthread_mutex_lock(&cc->lock);
	if (st)
		cc->st.hits++;
	else if (f)
		cc->st.misses++;
	pthread_mutex_unlock(&cc->lock);
	return st;
}

void calc_cache_put(struct calc_cache *cc, const struct calc_work *w)
{
	const struct listing *l = &w->c->list;
	struct strbuf rec = STRBUF_INIT;
	struct cfile *f;

	if (!l->img || !l->ref.proc || !w->prep || !w->c->model)
		return;
	put_record(&rec, w);
	pthread_mutex_lock(&cc->lock);
	if ((f = file_of(cc, l->img, w->c->model))) {
		f->used = ++cc->tick;
		ALLOC_GROW(f->fent, f->nf + 1, f->alloc_f);
		f->fent[f->nf++] = (struct centry){ l->ref.proc->start, l->ref.proc->end,
						     f->fresh.len, rec.len };
		strbuf_add(&f->fresh, rec.buf, rec.len);
		cc->held += rec.len;
		bound(cc, f);
	}
	pthread_mutex_unlock(&cc->lock);
	strbuf_release(&rec);
}

/* A record to write, from where, and how new (to keep the newest of a procedure). */
struct out_rec {
	struct centry e;
	const char *src;
	size_t age;                 /* 0: the newest */
};

static int cmp_out(const void *a, const void *b)
{
	const struct out_rec *x = a, *y = b;

	if (x->e.start != y->e.start)
		return x->e.start < y->e.start ? -1 : 1;
	return x->age < y->age ? -1 : x->age > y->age;
}

/* Writes f: its records from the database and those made here (these win). */
static int store_file(struct calc_cache *cc, struct cfile *f)
{
	struct strbuf out = STRBUF_INIT;
	struct out_rec *v = xcalloc(f->n + f->nf + 1, sizeof(*v));
	size_t n = 0, kept = 0;
	uint64_t prev = 0;
	int r;

	for (size_t k = 0; k < f->nf; k++)
		v[n++] = (struct out_rec){ f->fent[k], f->fresh.buf, f->nf - 1 - k };
	for (size_t k = 0; k < f->n; k++)
		v[n++] = (struct out_rec){ f->ent[k], f->disk.buf, f->nf + k };
	qsort(v, n, sizeof(*v), cmp_out);
	for (size_t k = 0; k < n; k++)
		if (!kept || v[k].e.start != v[kept - 1].e.start)
			v[kept++] = v[k];
	put_identity(&out, f);
	put_u(&out, kept);
	for (size_t k = 0; k < kept; k++) {
		put_u(&out, v[k].e.start - prev);
		put_u(&out, v[k].e.end - v[k].e.start);
		put_u(&out, v[k].e.len);
		prev = v[k].e.start;
	}
	for (size_t k = 0; k < kept; k++)
		strbuf_add(&out, v[k].src + v[k].e.off, v[k].e.len);
	r = db_calc_store(cc->db, f->hex, f->model, (uint32_t)kept, out.buf, out.len);
	if (!r)
		cc->st.stored += f->nf;
	free(v);
	strbuf_release(&out);
	return r;
}

int calc_cache_flush(struct calc_cache *cc)
{
	int r = 0;

	pthread_mutex_lock(&cc->lock);
	for (size_t k = 0; k < cc->n; k++) {
		struct cfile *f = &cc->files[k];

		if (!f->nf || !cc->db)
			continue;
		if (store_file(cc, f))
			r = -1;
		/* what was stored is what the database holds now: read it again when needed */
		forget(cc, f);
	}
	pthread_mutex_unlock(&cc->lock);
	return r;
}

void calc_cache_free(struct calc_cache *cc)
{
	if (!cc)
		return;
	calc_cache_flush(cc);
	for (size_t k = 0; k < cc->n; k++) {
		free(cc->files[k].symbols);
		free(cc->files[k].ent);
		free(cc->files[k].fent);
		strbuf_release(&cc->files[k].disk);
		strbuf_release(&cc->files[k].fresh);
	}
	free(cc->files);
	u64map_release(&cc->index);
	pthread_mutex_destroy(&cc->lock);
	free(cc);
}

void calc_cache_get_stats(struct calc_cache *cc, struct calc_cache_stats *st)
{
	pthread_mutex_lock(&cc->lock);
	*st = cc->st;
	pthread_mutex_unlock(&cc->lock);
}
