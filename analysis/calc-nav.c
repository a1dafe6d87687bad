/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-nav.c - stalls, culprits, hot blocks and branches of one
 * procedure's analysis, one after another (calc-nav.h).
 */
#include "config.h"

#include "analysis/calc-nav.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/calc-draw.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

/* ---- stalls and culprits ------------------------------------------------------ */

bool calc_nav_stalled(const struct calc *c, size_t i)
{
	struct calc_bubble bb;

	return i < c->n_insns && calc_bubble_of(c, i, &bb);
}

long calc_nav_stall(const struct calc *c, long from, int dir, bool *wrapped)
{
	long n = (long)c->n_insns;

	*wrapped = false;
	for (long k = 1; k <= n; k++) {
		long i = ((from + dir * k) % n + n) % n;

		if (!calc_nav_stalled(c, (size_t)i))
			continue;
		*wrapped = dir > 0 ? i <= from : i >= from;
		return i;
	}
	return -1;
}

void calc_nav_stall_text(const struct calc *c, size_t i, struct strbuf *sb)
{
	strbuf_addf(sb, "stall at %" PRIx64 ": ", c->insns[i].insn->addr);
	calc_describe_stall(c, i, sb);
}

const struct calc_cause *calc_nav_culprit(const struct calc *c, size_t i, size_t *k)
{
	if (i >= c->n_insns || !c->insns[i].n_causes)
		return NULL;
	*k %= c->insns[i].n_causes;
	return &c->insns[i].causes[*k];
}

void calc_nav_culprit_text(const struct calc *c, size_t i, size_t k, struct strbuf *sb)
{
	const struct calc_insn *ci = &c->insns[i];

	strbuf_addf(sb, "culprit %zu of %zu of the stall at %" PRIx64 ": %" PRIx64 " (",
		    k + 1, ci->n_causes, ci->insn->addr, ci->causes[k].addr);
	calc_describe_reasons(ci->causes[k].what, sb);
	strbuf_addch(sb, ')');
}

/* ---- hot blocks --------------------------------------------------------------- */

static int by_samples(const void *a, const void *b, void *arg)
{
	const uint64_t *s = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (s[x] != s[y])
		return s[x] > s[y] ? -1 : 1;
	return (x > y) - (x < y);
}

void calc_hot_build(struct calc_hot *h, const struct calc *c, enum dcpi_event ev)
{
	const struct listing *l = &c->list;
	size_t nb = c->n_blocks ? c->n_blocks : 1;

	memset(h, 0, sizeof(*h));
	h->ev = ev;
	h->samples = xcalloc(nb, sizeof(*h->samples));
	h->rank = xcalloc(nb, sizeof(*h->rank));
	for (size_t i = 0; i < l->n_insns; i++)
		if (l->insns[i].block >= 0)
			h->samples[l->insns[i].block] += l->insns[i].samples[ev];
	for (size_t b = 0; b < c->n_blocks; b++)
		if (h->samples[b])
			h->rank[h->n++] = b;
	qsort_r(h->rank, h->n, sizeof(*h->rank), by_samples, h->samples);
	h->total = l->totals[ev];
}

void calc_hot_release(struct calc_hot *h)
{
	free(h->samples);
	free(h->rank);
	memset(h, 0, sizeof(*h));
}

size_t calc_hot_next(const struct calc_hot *h, size_t rank, long block)
{
	return rank < h->n && block >= 0 && h->rank[rank] == (size_t)block ? (rank + 1) % h->n : 0;
}

void calc_hot_text(const struct calc_hot *h, size_t rank, struct strbuf *sb)
{
	size_t b = h->rank[rank];

	strbuf_addf(sb, "%s block: %zu, %" PRIu64 " %s samples (%.1f%%)",
		    rank ? "next hottest" : "hottest", b, h->samples[b], event_name(h->ev),
		    h->total ? 100.0 * (double)h->samples[b] / (double)h->total : 0);
}

/* ---- branches ----------------------------------------------------------------- */

enum calc_go calc_nav_branch(const struct calc *c, size_t i, uint64_t *addr)
{
	const struct cfg *cfg = &c->list.cfg;
	const struct insn *in = c->insns[i].insn;

	switch (in->kind) {
	case INSN_JUMP:
	case INSN_CJUMP:
	case INSN_CALL:
		break;
	case INSN_IJUMP:
		return CALC_GO_SWITCH;
	case INSN_ICALL:
		return CALC_GO_ICALL;
	case INSN_RET:
		return CALC_GO_RET;
	default:
		return CALC_GO_NONE;
	}
	if (!in->target)
		return CALC_GO_UNKNOWN;
	*addr = in->target;
	return in->kind != INSN_CALL && in->target >= cfg->start && in->target < cfg->end
	       ? CALC_GO_BLOCK : CALC_GO_PROC;
}

size_t calc_nav_switch_text(const struct calc *c, size_t i, struct strbuf *sb)
{
	const struct cfg *cfg = &c->list.cfg;
	const struct cfg_block *blk = &cfg->blocks[c->insns[i].block];
	struct strbuf to = STRBUF_INIT;
	size_t n = 0;

	for (uint32_t k = 0; k < blk->n_succ; k++) {
		const struct cfg_edge *e = &cfg->edges[cfg->succ[blk->succ + k]];

		if (e->kind == CFG_SWITCH && n++ < 12)
			strbuf_addf(&to, "%s%u", n > 1 ? ", " : "", e->to);
	}
	if (n)
		strbuf_addf(sb, "jump table to block%s %s%s", n == 1 ? "" : "s", to.buf,
			    n > 12 ? ", ..." : "");
	else
		strbuf_addstr(sb, "indirect jump: its targets are not known");
	strbuf_release(&to);
	return n;
}
