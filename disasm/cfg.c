/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/cfg.c - basic blocks, edges, jump tables, and the preparation of
 * the graph for cycle equivalence.  See cfg.h.
 */
#include "config.h"

#include "disasm/cfg.h"

#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "core/search.h"
#include "core/xalloc.h"
#include "disasm/cycleq.h"
#include "disasm/decode.h"
#include "disasm/jumptab.h"

#define MAX_TABLE 4096          /* entries of one jump table */
#define SLICE_WINDOW 24         /* instructions looked at before an indirect jump */

const char *cfg_edge_kind_name(enum cfg_edge_kind kind)
{
	static const char *const names[] = { "fallthrough", "taken", "jump", "switch",
					      "call-return", "reentry", "return", "tail-call",
					      "noreturn", "trap", "unresolved" };

	return (unsigned)kind < ARRAY_SIZE(names) ? names[kind] : "?";
}

long cfg_insn_at(const struct cfg *cfg, uint64_t addr)
{
	size_t lo = LOWER_BOUND(cfg->n_insns, k, cfg->insns[k].addr < addr);

	return lo < cfg->n_insns && cfg->insns[lo].addr == addr ? (long)lo : -1;
}

long cfg_block_at(const struct cfg *cfg, uint64_t addr)
{
	size_t lo = LOWER_BOUND(cfg->exit, k, cfg->blocks[k].end <= addr);

	if (lo < cfg->exit && cfg->blocks[lo].start <= addr && addr < cfg->blocks[lo].end)
		return (long)lo;
	return -1;
}

/* ---- construction state ---------------------------------------------------- */

/* A successor of one instruction, before blocks exist. */
struct succ_rec {
	uint32_t insn;          /* the instruction making the edge */
	enum cfg_edge_kind kind;
	uint64_t target;        /* address (inside: a leader; outside/exit: informational) */
};

struct builder {
	struct cfg *cfg;
	const struct cfg_env *env;
	uint8_t *leader;        /* per instruction */
	uint8_t *ends;          /* per instruction: ends its block */
	struct succ_rec *succ;  /* per-instruction successors, grouped by insn */
	size_t n_succ, alloc_succ;
	uint64_t *reentry;      /* addresses control comes back to from outside */
	size_t n_reentry, alloc_reentry;
	/* table bases set outside the slice window, found on the first pass's graph */
	struct base_hint *hints;
	size_t n_hints, alloc_hints;
	bool second_pass;
};

struct base_hint {
	uint32_t jump;          /* instruction index of the indirect jump */
	uint8_t reg;
	bool resolved;
	uint64_t value;         /* lea [rip + value] reaching the jump on every path */
};

static bool inside(const struct cfg *cfg, uint64_t addr)
{
	return addr >= cfg->start && addr < cfg->end;
}

static void add_succ(struct builder *b, size_t i, enum cfg_edge_kind kind, uint64_t target)
{
	struct succ_rec *s;

	ALLOC_GROW(b->succ, b->n_succ + 1, b->alloc_succ);
	s = &b->succ[b->n_succ++];
	s->insn = (uint32_t)i;
	s->kind = kind;
	s->target = target;
}

/* Why a procedure has missing edges (cfg->missing_why). */
enum missing { MISSING_INTO_INSN, MISSING_INDIRECT, MISSING_BACK_INTO_INSN, MISSING_UNDECODED };
static const char *const missing_whys[] = {
	[MISSING_INTO_INSN] = "a branch into the middle of an instruction",
	[MISSING_INDIRECT] = "an indirect jump that could not be resolved",
	[MISSING_BACK_INTO_INSN] = "a jump back into the middle of an instruction",
	[MISSING_UNDECODED] = "reachable bytes that cannot be decoded",
};

const char *cfg_missing_why_of(const char *text)
{
	for (size_t k = 0; k < sizeof(missing_whys) / sizeof(missing_whys[0]); k++)
		if (!strcmp(missing_whys[k], text))
			return missing_whys[k];
	return NULL;
}

static void set_missing(struct cfg *cfg, const char *why)
{
	if (!(cfg->flags & CFG_MISSING_EDGES))
		cfg->missing_why = why;
	cfg->flags |= CFG_MISSING_EDGES;
}

/* A branch to target: an edge inside (marking the leader), or leaving. */
static void branch_to(struct builder *b, size_t i, enum cfg_edge_kind inner, uint64_t target)
{
	struct cfg *cfg = b->cfg;
	long t;

	if (!inside(cfg, target)) {
		add_succ(b, i, CFG_TAIL_CALL, target);
		return;
	}
	if ((t = cfg_insn_at(cfg, target)) < 0) {
		set_missing(cfg, missing_whys[MISSING_INTO_INSN]);
		add_succ(b, i, CFG_UNRESOLVED, target);
		return;
	}
	b->leader[t] = 1;
	add_succ(b, i, inner, target);
}

/* ---- jump tables (x86-64) -------------------------------------------------- */

/*
 * Instruction orig with its operands into *w and *ops: those the decoder
 * kept with it, or decoded again if it has none (made by hand).  False if
 * its bytes cannot be read.
 */
static bool with_operands(struct builder *b, const struct insn *orig, struct insn *w,
			  struct insn_ops *ops)
{
	const struct cfg_env *env = b->env;
	uint8_t buf[16];

	*w = *orig;
	if (insn_operands(w, ops))
		return true;
	if (orig->len > sizeof(buf) || env->read(env->ctx, orig->addr, buf, orig->len))
		return false;
	decode_one(env->dec, buf, orig->len, orig->addr, w);
	insn_operands(w, ops);
	return true;
}

/*
 * The instructions on the straight-line path before instruction j (up to
 * SLICE_WINDOW, stopping after an instruction that does not fall through),
 * in address order, with their operands.  Returns how many.
 */
static size_t load_window(struct builder *b, size_t j, struct insn *w, struct insn_ops *ops)
{
	struct cfg *cfg = b->cfg;
	size_t n = 0, first = j;

	while (first > 0 && n < SLICE_WINDOW) {
		const struct insn *prev = &cfg->insns[first - 1];

		if (!insn_falls_through(prev) || prev->kind == INSN_INVALID)
			break;
		first--;
		n++;
	}
	for (size_t k = 0; k < n; k++)
		if (!with_operands(b, &cfg->insns[first + k], &w[k], &ops[k]))
			return 0;
	return n;
}

static int read_table_entry(struct builder *b, const struct jumptab *t, uint64_t i,
			    uint64_t *target)
{
	const struct cfg_env *env = b->env;
	uint8_t raw[8];

	if (env->read(env->ctx, t->table + i * t->entsize, raw, t->entsize))
		return -1;
	if (t->relative) {
		int32_t rel = (int32_t)((uint32_t)raw[0] | (uint32_t)raw[1] << 8 |
					(uint32_t)raw[2] << 16 | (uint32_t)raw[3] << 24);

		*target = t->rel_base + (uint64_t)(int64_t)rel;
	} else {
		*target = 0;
		for (int k = 7; k >= 0; k--)
			*target = *target << 8 | raw[k];
	}
	return 0;
}

/*
 * Reads the targets of a table.  A bounded table must be all valid
 * (instruction starts inside the procedure, or addresses outside it, which
 * leave); an unbounded one ends at its first entry that is not an
 * instruction start inside the procedure.  Returns -1 if the table is bad.
 */
static int table_targets(struct builder *b, const struct jumptab *t, uint64_t **out, size_t *n)
{
	bool bounded = t->hi >= t->lo;
	uint64_t lo = bounded ? t->lo : 0, hi = bounded ? t->hi : MAX_TABLE - 1;
	size_t alloc = 0;

	*out = NULL;
	*n = 0;
	if (hi - lo >= MAX_TABLE)
		return -1;
	for (uint64_t i = lo; i <= hi; i++) {
		uint64_t target;
		bool in = false;

		if (read_table_entry(b, t, i, &target))
			return bounded ? -1 : 0;
		in = inside(b->cfg, target);
		if (in ? cfg_insn_at(b->cfg, target) < 0 : !bounded) {
			if (bounded)
				return -1;
			break;
		}
		ALLOC_GROW(*out, *n + 1, alloc);
		(*out)[(*n)++] = target;
	}
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Resolves jump j against a hint for reg, or asks for one. */
static enum jumptab_result need_base(struct builder *b, size_t j, const struct jumptab *t,
				     struct jumptab_hint *hint)
{
	for (size_t i = 0; i < b->n_hints; i++) {
		const struct base_hint *h = &b->hints[i];

		if (h->jump == j && h->reg == t->need_reg) {
			if (!h->resolved)
				return t->fallback;
			hint->reg = h->reg;
			hint->value = h->value;
			return JT_NEED_BASE;
		}
	}
	if (!b->second_pass) {
		struct base_hint *h;

		ALLOC_GROW(b->hints, b->n_hints + 1, b->alloc_hints);
		h = &b->hints[b->n_hints++];
		memset(h, 0, sizeof(*h));
		h->jump = (uint32_t)j;
		h->reg = (uint8_t)t->need_reg;
	}
	return t->fallback;
}

static enum jumptab_result analyse_jump(struct builder *b, size_t j, struct jumptab *t)
{
	const struct cfg_env *env = b->env;
	struct insn *w = xcalloc(SLICE_WINDOW, sizeof(*w)), jin;
	struct insn_ops *wops = xcalloc(SLICE_WINDOW, sizeof(*wops)), jops;
	struct jumptab_hint hint;
	enum jumptab_result r = JT_UNRESOLVED;
	size_t n;

	if (with_operands(b, &b->cfg->insns[j], &jin, &jops)) {
		n = load_window(b, j, w, wops);
		r = jumptab_analyse(w, wops, n, &jin, &jops, NULL, 0, env->read, env->ctx, t);
		if (r == JT_NEED_BASE && (r = need_base(b, j, t, &hint)) == JT_NEED_BASE) {
			r = jumptab_analyse(w, wops, n, &jin, &jops, &hint, 1, env->read, env->ctx, t);
			if (r == JT_NEED_BASE)
				r = t->fallback;
		}
	}
	free(w);
	free(wops);
	return r;
}

static void indirect_jump(struct builder *b, size_t j)
{
	struct cfg *cfg = b->cfg;
	const struct cfg_env *env = b->env;
	struct jumptab t;
	uint64_t *targets = NULL;
	size_t nt = 0;
	enum jumptab_result r = JT_UNRESOLVED;

	if (cfg->arch == ARCH_X86_64 && env && env->dec && env->read)
		r = analyse_jump(b, j, &t);
	if (r == JT_TABLE && (table_targets(b, &t, &targets, &nt) || !nt))
		r = JT_UNRESOLVED;
	if (r == JT_TAIL) {
		add_succ(b, j, CFG_TAIL_CALL, 0);
	} else if (r == JT_CONST) {
		branch_to(b, j, CFG_JUMP, t.table);
	} else if (r == JT_TABLE) {
		if (nt > 1)
			qsort(targets, nt, sizeof(*targets), u64_cmp);
		for (size_t k = 0; k < nt; k++)
			if (!k || targets[k] != targets[k - 1])
				branch_to(b, j, CFG_SWITCH, targets[k]);  /* outside: leaves */
		cfg->flags |= CFG_JUMP_TABLES;
	} else {
		set_missing(cfg, missing_whys[MISSING_INDIRECT]);
		add_succ(b, j, CFG_UNRESOLVED, 0);
	}
	free(targets);
}

/* ---- blocks and edges ------------------------------------------------------ */

static bool is_noreturn(const struct builder *b, const struct insn *in)
{
	const struct cfg_env *env = b->env;

	return env && env->noreturn && env->noreturn(env->ctx, in);
}

/* Successors of every instruction that transfers control, and the leaders. */
static void scan_insns(struct builder *b)
{
	struct cfg *cfg = b->cfg;

	for (size_t i = 0; i < cfg->n_insns; i++) {
		const struct insn *in = &cfg->insns[i];

		switch (in->kind) {
		case INSN_JUMP:
			branch_to(b, i, CFG_JUMP, in->target);
			b->ends[i] = 1;
			break;
		case INSN_CJUMP:
			branch_to(b, i, CFG_TAKEN, in->target);
			b->ends[i] = 1;
			break;
		case INSN_IJUMP:
			indirect_jump(b, i);
			b->ends[i] = 1;
			break;
		case INSN_RET:
			add_succ(b, i, CFG_RETURN, 0);
			b->ends[i] = 1;
			break;
		case INSN_TRAP:
		case INSN_INVALID:
			add_succ(b, i, CFG_TRAP, 0);
			b->ends[i] = 1;
			break;
		case INSN_CALL:
		case INSN_ICALL:
			if (is_noreturn(b, in)) {
				add_succ(b, i, CFG_NORETURN, in->target);
				b->ends[i] = 1;
			}
			break;
		default:
			break;
		}
		if (b->ends[i] && i + 1 < cfg->n_insns)
			b->leader[i + 1] = 1;
	}
	if (cfg->n_insns)
		b->leader[0] = 1;
}

/* Asks the image where code outside that this procedure jumps to comes back in. */
static void find_reentries(struct builder *b)
{
	struct cfg *cfg = b->cfg;
	const struct cfg_env *env = b->env;
	uint64_t *seen = NULL;
	size_t n_seen = 0, alloc_seen = 0;

	if (!env || !env->reentries)
		return;
	for (size_t i = 0; i < b->n_succ; i++) {
		const struct succ_rec *s = &b->succ[i];
		uint64_t *v = NULL;
		size_t n;
		bool dup = false;

		if (s->kind != CFG_TAIL_CALL || !s->target || inside(cfg, s->target))
			continue;
		for (size_t k = 0; k < n_seen && !dup; k++)
			dup = seen[k] == s->target;
		if (dup)
			continue;
		ALLOC_GROW(seen, n_seen + 1, alloc_seen);
		seen[n_seen++] = s->target;
		n = env->reentries(env->ctx, s->target, cfg->start, cfg->end, &v);
		for (size_t k = 0; k < n; k++) {
			long t = inside(cfg, v[k]) ? cfg_insn_at(cfg, v[k]) : -1;

			if (t < 0) {
				set_missing(cfg, missing_whys[MISSING_BACK_INTO_INSN]);
				continue;
			}
			b->leader[t] = 1;
			ALLOC_GROW(b->reentry, b->n_reentry + 1, b->alloc_reentry);
			b->reentry[b->n_reentry++] = v[k];
		}
		free(v);
	}
	free(seen);
}

static int succ_cmp(const void *a, const void *b)
{
	const struct succ_rec *x = a, *y = b;

	if (x->insn != y->insn)
		return x->insn < y->insn ? -1 : 1;
	return x->target < y->target ? -1 : x->target > y->target;
}

static void make_blocks(struct builder *b)
{
	struct cfg *cfg = b->cfg;
	size_t nb = 1, k = 0;

	for (size_t i = 0; i < cfg->n_insns; i++)
		nb += b->leader[i];
	if (!cfg->n_insns)
		nb++;  /* an empty entry block */
	cfg->blocks = xcalloc(nb, sizeof(*cfg->blocks));
	cfg->n_blocks = nb;
	cfg->entry = 0;
	cfg->exit = nb - 1;
	for (size_t i = 0; i < cfg->n_insns; i++) {
		struct cfg_block *blk;

		if (b->leader[i]) {
			blk = &cfg->blocks[k++];
			blk->start = cfg->insns[i].addr;
			blk->first = (uint32_t)i;
		}
		blk = &cfg->blocks[k - 1];
		blk->n_insns++;
		blk->end = cfg->insns[i].addr + cfg->insns[i].len;
	}
	if (!cfg->n_insns)
		cfg->blocks[0].start = cfg->blocks[0].end = cfg->start;
	cfg->blocks[0].flags |= CFG_BLOCK_ENTRY;
	cfg->blocks[cfg->exit].flags |= CFG_BLOCK_EXIT;
	cfg->blocks[cfg->exit].start = cfg->blocks[cfg->exit].end = cfg->end;
	for (size_t i = 0; i < nb; i++)
		cfg->blocks[i].cls = -1;
}

static void push_edge(struct cfg *cfg, size_t *alloc, uint32_t from, uint32_t to,
		      enum cfg_edge_kind kind, uint64_t site, uint64_t target)
{
	struct cfg_edge *e;

	ALLOC_GROW(cfg->edges, cfg->n_edges + 1, *alloc);
	e = &cfg->edges[cfg->n_edges++];
	e->from = from;
	e->to = to;
	e->kind = kind;
	e->site = site;
	e->target = target;
	e->cls = -1;
}

static void make_edges(struct builder *b)
{
	struct cfg *cfg = b->cfg;
	size_t alloc = 0, si = 0;

	if (b->n_succ > 1)
		qsort(b->succ, b->n_succ, sizeof(*b->succ), succ_cmp);
	for (size_t k = 0; k < cfg->exit; k++) {
		const struct cfg_block *blk = &cfg->blocks[k];
		size_t last;
		const struct insn *in;

		if (!blk->n_insns) {
			push_edge(cfg, &alloc, (uint32_t)k, (uint32_t)cfg->exit, CFG_TAIL_CALL,
				  blk->start, 0);
			continue;
		}
		last = blk->first + blk->n_insns - 1;
		in = &cfg->insns[last];
		while (si < b->n_succ && b->succ[si].insn < last)
			si++;
		/* fall-through first */
		if (!b->ends[last] || in->kind == INSN_CJUMP) {
			enum cfg_edge_kind kind = in->kind == INSN_CALL || in->kind == INSN_ICALL
							  ? CFG_CALL_RETURN : CFG_FALLTHROUGH;

			if (k + 1 < cfg->exit)
				push_edge(cfg, &alloc, (uint32_t)k, (uint32_t)(k + 1), kind, in->addr,
					  cfg->blocks[k + 1].start);
			else
				push_edge(cfg, &alloc, (uint32_t)k, (uint32_t)cfg->exit,
					  CFG_TAIL_CALL, in->addr, in->addr + in->len);
		}
		for (; si < b->n_succ && b->succ[si].insn == last; si++) {
			const struct succ_rec *s = &b->succ[si];
			long to = cfg_edge_kind_leaves(s->kind) ? -1 : cfg_block_at(cfg, s->target);

			push_edge(cfg, &alloc, (uint32_t)k, to < 0 ? (uint32_t)cfg->exit : (uint32_t)to,
				  to < 0 && !cfg_edge_kind_leaves(s->kind) ? CFG_UNRESOLVED : s->kind,
				  in->addr, s->target);
		}
	}
	if (b->n_reentry > 1)
		qsort(b->reentry, b->n_reentry, sizeof(*b->reentry), u64_cmp);
	for (size_t i = 0; i < b->n_reentry; i++) {
		long to = cfg_block_at(cfg, b->reentry[i]);

		if (to >= 0 && (!i || b->reentry[i] != b->reentry[i - 1]))
			push_edge(cfg, &alloc, (uint32_t)cfg->exit, (uint32_t)to, CFG_REENTRY,
				  b->reentry[i], b->reentry[i]);
	}
}

/* Fills the succ/pred index arrays (CSR by block). */
static void index_edges(struct cfg *cfg)
{
	uint32_t *fill_s = xcalloc(cfg->n_blocks + 1, sizeof(uint32_t));
	uint32_t *fill_p = xcalloc(cfg->n_blocks + 1, sizeof(uint32_t));

	cfg->succ = xcalloc(cfg->n_edges + 1, sizeof(uint32_t));
	cfg->pred = xcalloc(cfg->n_edges + 1, sizeof(uint32_t));
	for (size_t e = 0; e < cfg->n_edges; e++) {
		cfg->blocks[cfg->edges[e].from].n_succ++;
		cfg->blocks[cfg->edges[e].to].n_pred++;
	}
	for (size_t k = 0, s = 0, p = 0; k < cfg->n_blocks; k++) {
		cfg->blocks[k].succ = (uint32_t)s;
		cfg->blocks[k].pred = (uint32_t)p;
		fill_s[k] = (uint32_t)s;
		fill_p[k] = (uint32_t)p;
		s += cfg->blocks[k].n_succ;
		p += cfg->blocks[k].n_pred;
	}
	for (size_t e = 0; e < cfg->n_edges; e++) {
		cfg->succ[fill_s[cfg->edges[e].from]++] = (uint32_t)e;
		cfg->pred[fill_p[cfg->edges[e].to]++] = (uint32_t)e;
	}
	free(fill_s);
	free(fill_p);
}

/* Marks blocks unreachable from the entry, and reachable ones that cannot reach EXIT. */
static void mark_reachability(struct cfg *cfg)
{
	uint32_t *stack = xmalloc((cfg->n_blocks + 1) * sizeof(*stack));
	uint8_t *seen = xcalloc(cfg->n_blocks, 1), *back = xcalloc(cfg->n_blocks, 1);
	size_t sp = 0;

	seen[cfg->entry] = 1;
	stack[sp++] = (uint32_t)cfg->entry;
	while (sp) {
		const struct cfg_block *blk = &cfg->blocks[stack[--sp]];

		for (uint32_t k = 0; k < blk->n_succ; k++) {
			uint32_t to = cfg->edges[cfg->succ[blk->succ + k]].to;

			if (!seen[to]) {
				seen[to] = 1;
				stack[sp++] = to;
			}
		}
	}
	back[cfg->exit] = 1;
	stack[sp++] = (uint32_t)cfg->exit;
	while (sp) {
		const struct cfg_block *blk = &cfg->blocks[stack[--sp]];

		for (uint32_t k = 0; k < blk->n_pred; k++) {
			uint32_t from = cfg->edges[cfg->pred[blk->pred + k]].from;

			if (!back[from] && seen[from]) {
				back[from] = 1;
				stack[sp++] = from;
			}
		}
	}
	for (size_t k = 0; k < cfg->exit; k++) {
		if (!seen[k])
			cfg->blocks[k].flags |= CFG_BLOCK_UNREACHABLE;
		else if (!back[k]) {
			cfg->blocks[k].flags |= CFG_BLOCK_NO_EXIT;
			cfg->flags |= CFG_EXITLESS;
		}
	}
	free(stack);
	free(seen);
	free(back);
}

/* Reachable bytes that do not decode: the graph cannot be trusted. */
static void check_undecodable(struct cfg *cfg)
{
	for (size_t k = 0; k < cfg->exit; k++) {
		const struct cfg_block *blk = &cfg->blocks[k];

		if (!(blk->flags & CFG_BLOCK_UNREACHABLE) && blk->n_insns &&
		    cfg->insns[blk->first + blk->n_insns - 1].kind == INSN_INVALID)
			set_missing(cfg, missing_whys[MISSING_UNDECODED]);
	}
}

/*
 * A jump into the middle of an instruction that skips its prefix (glibc's
 * `je 1f; lock; 1: cmpxchg` for single-threaded processes): splits the
 * instruction into its prefix and the instruction without it, so both are
 * branch targets.
 */
static void split_at(struct cfg *cfg, const struct cfg_env *env, uint64_t target)
{
	size_t lo = LOWER_BOUND(cfg->n_insns, k, cfg->insns[k].addr <= target), tail;
	struct insn pre, rest, *c;
	uint8_t buf[16];

	if (!lo)
		return;
	c = &cfg->insns[lo - 1];
	if (!(c->addr < target && target < c->addr + c->len))
		return;
	tail = c->addr + c->len - target;
	if (env->read(env->ctx, target, buf, tail) ||
	    decode_one(env->dec, buf, tail, target, &rest) != tail || rest.kind == INSN_INVALID)
		return;
	memset(&pre, 0, sizeof(pre));
	pre.addr = c->addr;
	pre.len = (uint8_t)(target - c->addr);
	pre.kind = INSN_OTHER;
	pre.flags = c->flags & INSN_F_LOCK;
	snprintf(pre.text, sizeof(pre.text), "%s", pre.flags ? "lock (prefix)" : "(prefix)");
	cfg->insns = xreallocarray(cfg->insns, cfg->n_insns + 1, sizeof(*cfg->insns));
	c = &cfg->insns[lo - 1];
	memmove(c + 2, c + 1, (cfg->n_insns - lo) * sizeof(*c));
	c[0] = pre;
	c[1] = rest;
	cfg->n_insns++;
}

static void split_prefix_targets(struct cfg *cfg, const struct cfg_env *env)
{
	if (!env || !env->dec || !env->read)
		return;
	for (size_t i = 0; i < cfg->n_insns; i++) {
		uint64_t t = cfg->insns[i].target;

		if ((cfg->insns[i].kind == INSN_JUMP || cfg->insns[i].kind == INSN_CJUMP) &&
		    inside(cfg, t) && cfg_insn_at(cfg, t) < 0)
			split_at(cfg, env, t);
	}
}

/*
 * The value of `lea reg, [rip + x]` reaching instruction j on every path of
 * the first pass's graph (walking predecessors backwards); false if some
 * path sets reg otherwise, or reaches the entry or an outside re-entry
 * without setting it.  Blocks without predecessors end a path: on the
 * first pass they are reached only through the unresolved jumps.
 */
static bool reaching_lea(const struct cfg *cfg, size_t j, unsigned reg, uint64_t *value)
{
	uint32_t *stack = xmalloc((cfg->n_blocks + 1) * sizeof(*stack));
	uint8_t *seen = xcalloc(cfg->n_blocks, 1);
	long b0 = cfg_block_at(cfg, cfg->insns[j].addr);
	size_t sp = 0;
	bool found = false, ok = b0 >= 0;

	if (ok) {
		stack[sp++] = (uint32_t)b0;
		seen[b0] = 2;  /* the jump's own block: scanned from j - 1 first */
	}
	while (ok && sp) {
		uint32_t k = stack[--sp];
		const struct cfg_block *blk = &cfg->blocks[k];
		size_t i = seen[k] == 2 ? j : blk->first + blk->n_insns;
		bool def = false;

		seen[k] = 1;
		while (i-- > blk->first && !def) {
			const struct insn *in = &cfg->insns[i];

			if (!regset_has(&in->writes, reg))
				continue;
			def = true;
			if (in->cs_id != X86_INS_LEA || !(in->flags & INSN_F_RIP_REL) ||
			    (found && *value != in->mem_addr))
				ok = false;
			*value = in->mem_addr;
			found = true;
		}
		if (def)
			continue;
		if (k == cfg->entry)
			ok = false;
		/* a block without predecessors is reached only through control not
		 * resolved yet (the jump table itself): its own code was checked */
		for (uint32_t p = 0; ok && p < blk->n_pred; p++) {
			uint32_t from = cfg->edges[cfg->pred[blk->pred + p]].from;

			if (from == cfg->exit)
				ok = false;
			else if (!seen[from]) {
				seen[from] = 1;
				stack[sp++] = from;
			}
		}
	}
	free(stack);
	free(seen);
	return ok && found;
}

static void build_pass(struct builder *b)
{
	struct cfg *cfg = b->cfg;

	b->leader = xcalloc(cfg->n_insns + 1, 1);
	b->ends = xcalloc(cfg->n_insns + 1, 1);
	scan_insns(b);
	find_reentries(b);
	make_blocks(b);
	make_edges(b);
	index_edges(cfg);
	mark_reachability(cfg);
	check_undecodable(cfg);
	free(b->leader);
	free(b->ends);
	free(b->succ);
	free(b->reentry);
	b->succ = NULL;
	b->reentry = NULL;
	b->n_succ = b->alloc_succ = b->n_reentry = b->alloc_reentry = 0;
}

/* Drops everything but the instructions, for another pass. */
static void reset_graph(struct cfg *cfg)
{
	free(cfg->blocks);
	free(cfg->edges);
	free(cfg->succ);
	free(cfg->pred);
	cfg->blocks = NULL;
	cfg->edges = NULL;
	cfg->succ = cfg->pred = NULL;
	cfg->n_blocks = cfg->n_edges = 0;
	cfg->flags = 0;
	cfg->missing_why = NULL;
}

void cfg_build(struct cfg *cfg, struct insn *insns, size_t n, uint64_t start, uint64_t end,
	       enum insn_arch arch, const struct cfg_env *env)
{
	struct builder b;
	bool any = false;

	memset(cfg, 0, sizeof(*cfg));
	cfg->start = start;
	cfg->end = end;
	cfg->arch = arch;
	cfg->insns = insns;
	cfg->n_insns = n;
	memset(&b, 0, sizeof(b));
	b.cfg = cfg;
	b.env = env;
	split_prefix_targets(cfg, env);
	build_pass(&b);
	for (size_t i = 0; i < b.n_hints; i++) {
		b.hints[i].resolved = reaching_lea(cfg, b.hints[i].jump, b.hints[i].reg,
						   &b.hints[i].value);
		any |= b.hints[i].resolved;
	}
	if (any) {
		reset_graph(cfg);
		b.second_pass = true;
		build_pass(&b);
	}
	free(b.hints);
}

void cfg_release(struct cfg *cfg)
{
	free(cfg->insns);
	free(cfg->blocks);
	free(cfg->edges);
	free(cfg->succ);
	free(cfg->pred);
	memset(cfg, 0, sizeof(*cfg));
}

/* ---- frequency-equivalence classes ---------------------------------------- */

/* Every block and edge in a class of its own (missing edges, or a failure). */
static void singleton_classes(struct cfg *cfg)
{
	int next = 0;

	for (size_t k = 0; k < cfg->n_blocks; k++)
		cfg->blocks[k].cls = next++;
	for (size_t e = 0; e < cfg->n_edges; e++)
		cfg->edges[e].cls = next++;
	cfg->n_classes = (size_t)next;
}

/*
 * Tarjan's strongly connected components over the NO_EXIT blocks, done
 * iteratively.  Every NO_EXIT block leads to a sink component (one with no
 * edge to another NO_EXIT component); the lowest block of each sink gets a
 * virtual edge to EXIT, which makes every block reach EXIT.
 */
struct tarjan {
	const struct cfg *cfg;
	uint32_t *idx, *low, *comp;
	uint32_t *stack, *cstack, *cpos;
	uint8_t *on;
	size_t sp, csp;
	uint32_t counter, ncomp;
	uint32_t *sinks;
	size_t nsinks, alloc_sinks;
};

static bool no_exit(const struct cfg *cfg, uint32_t b)
{
	return (cfg->blocks[b].flags & CFG_BLOCK_NO_EXIT) != 0;
}

static void tj_push(struct tarjan *t, uint32_t v)
{
	t->idx[v] = t->low[v] = t->counter++;
	t->stack[t->sp++] = v;
	t->on[v] = 1;
	t->cstack[t->csp] = v;
	t->cpos[t->csp++] = 0;
}

/* Pops the component rooted at v; records its lowest block if it is a sink. */
static void tj_component(struct tarjan *t, uint32_t v)
{
	const struct cfg *cfg = t->cfg;
	size_t top = t->sp;
	uint32_t w, first = v;
	bool sink = true;

	do {
		w = t->stack[--t->sp];
		t->on[w] = 0;
		t->comp[w] = t->ncomp;
		if (w < first)
			first = w;
	} while (w != v);
	/* components completed earlier are the only others it can reach */
	for (size_t m = t->sp; m < top && sink; m++) {
		const struct cfg_block *bu = &cfg->blocks[t->stack[m]];

		for (uint32_t k = 0; k < bu->n_succ && sink; k++) {
			uint32_t to = cfg->edges[cfg->succ[bu->succ + k]].to;

			sink = !no_exit(cfg, to) || t->comp[to] == t->ncomp;
		}
	}
	if (sink) {
		ALLOC_GROW(t->sinks, t->nsinks + 1, t->alloc_sinks);
		t->sinks[t->nsinks++] = first;
	}
	t->ncomp++;
}

static void tj_visit(struct tarjan *t, uint32_t root)
{
	const struct cfg *cfg = t->cfg;

	tj_push(t, root);
	while (t->csp) {
		uint32_t v = t->cstack[t->csp - 1];
		const struct cfg_block *bv = &cfg->blocks[v];

		if (t->cpos[t->csp - 1] < bv->n_succ) {
			uint32_t w = cfg->edges[cfg->succ[bv->succ + t->cpos[t->csp - 1]++]].to;

			if (!no_exit(cfg, w))
				continue;
			if (t->idx[w] == UINT32_MAX)
				tj_push(t, w);
			else if (t->on[w] && t->idx[w] < t->low[v])
				t->low[v] = t->idx[w];
			continue;
		}
		t->csp--;
		if (t->csp && t->low[v] < t->low[t->cstack[t->csp - 1]])
			t->low[t->cstack[t->csp - 1]] = t->low[v];
		if (t->low[v] == t->idx[v])
			tj_component(t, v);
	}
}

static void exitless_sources(const struct cfg *cfg, uint32_t **out, size_t *nout)
{
	size_t nb = cfg->n_blocks;
	struct tarjan t;

	memset(&t, 0, sizeof(t));
	t.cfg = cfg;
	t.idx = xmalloc(nb * sizeof(uint32_t));
	t.low = xmalloc(nb * sizeof(uint32_t));
	t.comp = xmalloc(nb * sizeof(uint32_t));
	t.stack = xmalloc(nb * sizeof(uint32_t));
	t.cstack = xmalloc(nb * sizeof(uint32_t));
	t.cpos = xmalloc(nb * sizeof(uint32_t));
	t.on = xcalloc(nb, 1);
	for (size_t v = 0; v < nb; v++)
		t.idx[v] = t.comp[v] = UINT32_MAX;
	for (uint32_t root = 0; root < nb; root++)
		if (no_exit(cfg, root) && t.idx[root] == UINT32_MAX)
			tj_visit(&t, root);
	free(t.idx);
	free(t.low);
	free(t.comp);
	free(t.stack);
	free(t.cstack);
	free(t.cpos);
	free(t.on);
	*out = t.sinks;
	*nout = t.nsinks;
}

struct split_graph {
	uint32_t *from, *to;
	size_t n, alloc;
};

static void sg_add(struct split_graph *g, uint32_t from, uint32_t to)
{
	size_t alloc = g->alloc;

	ALLOC_GROW(g->from, g->n + 1, g->alloc);
	if (g->alloc != alloc || !g->to)
		g->to = xreallocarray(g->to, g->alloc, sizeof(*g->to));
	g->from[g->n] = from;
	g->to[g->n] = to;
	g->n++;
}

static bool live(const struct cfg *cfg, size_t k)
{
	return !(cfg->blocks[k].flags & CFG_BLOCK_UNREACHABLE);
}

/*
 * Split graph: block k (not EXIT) is nodes 2k (in) and 2k+1 (out); EXIT is
 * node 2*exit.  Edge ids: first one per live block (in -> out), then one per
 * CFG edge between live blocks (edge_id[e]), then the virtual ones.
 */
static int classify_split(struct cfg *cfg)
{
	struct split_graph g = { NULL, NULL, 0, 0 };
	uint32_t *block_id = xmalloc(cfg->n_blocks * sizeof(uint32_t));
	uint32_t *edge_id = xmalloc((cfg->n_edges + 1) * sizeof(uint32_t));
	uint32_t *srcs, exit_node = (uint32_t)(2 * cfg->exit), back_id;
	size_t nsrc;
	int *cls, nclasses, next;

	for (size_t k = 0; k < cfg->exit; k++) {
		block_id[k] = UINT32_MAX;
		if (live(cfg, k)) {
			block_id[k] = (uint32_t)g.n;
			sg_add(&g, (uint32_t)(2 * k), (uint32_t)(2 * k + 1));
		}
	}
	for (size_t e = 0; e < cfg->n_edges; e++) {
		const struct cfg_edge *ce = &cfg->edges[e];

		edge_id[e] = UINT32_MAX;
		if (!live(cfg, ce->from))
			continue;
		edge_id[e] = (uint32_t)g.n;
		sg_add(&g, (uint32_t)(2 * ce->from + 1),
		       ce->to == cfg->exit ? exit_node : (uint32_t)(2 * ce->to));
	}
	exitless_sources(cfg, &srcs, &nsrc);
	for (size_t i = 0; i < nsrc; i++)
		sg_add(&g, 2 * srcs[i] + 1, exit_node);
	back_id = (uint32_t)g.n;
	sg_add(&g, exit_node, (uint32_t)(2 * cfg->entry));
	cls = xmalloc(g.n * sizeof(int));
	nclasses = cycleq_classes(2 * cfg->exit + 1, g.n, g.from, g.to, (uint32_t)(2 * cfg->entry), cls);
	if (nclasses >= 0) {
		next = nclasses;
		for (size_t k = 0; k < cfg->exit; k++)
			cfg->blocks[k].cls = block_id[k] != UINT32_MAX ? cls[block_id[k]] : next++;
		cfg->blocks[cfg->exit].cls = cls[back_id];
		for (size_t e = 0; e < cfg->n_edges; e++)
			cfg->edges[e].cls = edge_id[e] != UINT32_MAX ? cls[edge_id[e]] : next++;
		cfg->n_classes = (size_t)next;
	}
	free(cls);
	free(srcs);
	free(g.from);
	free(g.to);
	free(block_id);
	free(edge_id);
	return nclasses < 0 ? -1 : 0;
}

/* Renumbers classes in order of first appearance (blocks, then edges). */
static void compact_classes(struct cfg *cfg)
{
	int *map = xmalloc((cfg->n_classes + 1) * sizeof(int)), next = 0;

	for (size_t i = 0; i < cfg->n_classes; i++)
		map[i] = -1;
	for (size_t k = 0; k < cfg->n_blocks; k++) {
		int *c = &cfg->blocks[k].cls;

		if (map[*c] < 0)
			map[*c] = next++;
		*c = map[*c];
	}
	for (size_t e = 0; e < cfg->n_edges; e++) {
		int *c = &cfg->edges[e].cls;

		if (map[*c] < 0)
			map[*c] = next++;
		*c = map[*c];
	}
	cfg->n_classes = (size_t)next;
	free(map);
}

void cfg_classify(struct cfg *cfg)
{
	if (cfg->flags & CFG_CLASSIFIED)
		return;
	cfg->flags |= CFG_CLASSIFIED;
	if ((cfg->flags & CFG_MISSING_EDGES) || classify_split(cfg))
		singleton_classes(cfg);
	compact_classes(cfg);
}
