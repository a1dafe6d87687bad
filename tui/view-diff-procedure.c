/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/view-diff-procedure.c - one procedure in two epochs, side by side:
 * dcpidiff's rows of its instructions (dcpidiff A B PROCEDURE), aligned by
 * address, with each side's samples, the change of share in points and the
 * verdict, and, where dcpicalc can analyse the procedure in both epochs,
 * each side's CPI per instruction and per block (frequency and CPI).  When
 * the binaries differ between the epochs, instructions cannot be aligned:
 * the view says so and compares the procedure as a whole (and its CPI).
 *
 * The view stands at loc.procedure (NAME@IMAGE, as lookup.h takes it) in
 * loc.epoch (A) and loc.epoch_b (B).  Enter opens the procedure view of
 * epoch B at the instruction; x exchanges the sides; a shows every
 * instruction, also those without samples (as dcpidiff --all).
 */
#include "config.h"
#include "tui/view.h"

#include "analysis/lookup.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "tui/data-diff.h"
#include "tui/data-proc.h"
#include "tui/table.h"
#include "tui/tui.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum dline_kind {
	DL_WHOLE,    /* the procedure as a whole */
	DL_TEXT,     /* a line of text (idx: into msgs) */
	DL_BLOCK,    /* a basic block (idx: block of the side with the analysis) */
	DL_INSN,     /* an instruction (idx: its row, diff_row_get()) */
};

struct dline {
	enum dline_kind kind;
	uint32_t idx;
};

struct dproc_view {
	const struct diff_data *dd;
	const struct proc_data *pa, *pb;  /* each side's analysis (NULL: loading) */
	const struct calc *ca, *cb;       /* ... when it could be made */
	struct dline *lines;
	size_t n, alloc;
	char **msgs;
	size_t n_msgs;
	bool all;                         /* a: every instruction, also without samples */
	int aw, wa, wb;                   /* column widths: address, A, B */
	uint64_t keep;                    /* the cursor's address across reloads */
};

#define PV(v) ((struct dproc_view *)(v)->priv)

static void add_line(struct dproc_view *pv, enum dline_kind kind, size_t idx)
{
	ALLOC_GROW(pv->lines, pv->n + 1, pv->alloc);
	pv->lines[pv->n++] = (struct dline){ kind, (uint32_t)idx };
}

static void add_msg(struct dproc_view *pv, char *text)
{
	pv->msgs = xreallocarray(pv->msgs, pv->n_msgs + 1, sizeof(*pv->msgs));
	pv->msgs[pv->n_msgs] = text;
	add_line(pv, DL_TEXT, pv->n_msgs++);
}

static void clear_lines(struct dproc_view *pv)
{
	for (size_t i = 0; i < pv->n_msgs; i++)
		free(pv->msgs[i]);
	free(pv->msgs);
	pv->msgs = NULL;
	pv->n_msgs = 0;
	pv->n = 0;
}

/* The analysis of a side if it was made, else NULL. */
static const struct calc *calc_of(const struct proc_data *pd)
{
	return pd && !pd->status ? &pd->c : NULL;
}

/* The index of the instruction at addr in c, or -1. */
static long insn_of(const struct calc *c, uint64_t addr)
{
	return c ? calc_insn_at(c, addr) : -1;
}

/* The side whose blocks head the instructions: A's analysis, else B's. */
static const struct calc *blocks_calc(const struct dproc_view *pv)
{
	return pv->ca ? pv->ca : pv->cb;
}

/* "CPI 0.80 (best 0.80)" of a side's procedure, or why there is none. */
static void side_cpi(const struct proc_data *pd, struct strbuf *sb)
{
	const struct calc *c = calc_of(pd);

	if (!c)
		strbuf_addstr(sb, pd && pd->error ? pd->error : "no analysis");
	else if (c->summary.cpi < 0)
		strbuf_addf(sb, "CPI ? (best %.2f)", c->summary.best_cpi >= 0 ? c->summary.best_cpi : 0);
	else
		strbuf_addf(sb, "CPI %.2f (best %.2f)", c->summary.cpi, c->summary.best_cpi);
}

static void build_unaligned(struct view *v)
{
	struct dproc_view *pv = PV(v);
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

	add_msg(pv, xstrdup(""));
	add_msg(pv, xasprintf("The binaries differ between the epochs: %s.", pv->dd->unaligned));
	add_msg(pv, xstrdup("Instructions cannot be aligned: the procedure is compared as a whole."));
	side_cpi(pv->pa, &a);
	side_cpi(pv->pb, &b);
	add_msg(pv, xstrdup(""));
	add_msg(pv, xasprintf("A: %s", a.buf));
	add_msg(pv, xasprintf("B: %s", b.buf));
	strbuf_release(&a);
	strbuf_release(&b);
}

static void build_aligned(struct view *v)
{
	struct dproc_view *pv = PV(v);
	const struct diff_data *dd = pv->dd;
	const struct calc *bc = blocks_calc(pv);
	long block = -1;

	if (dd->de.diff.rows_src.no_code)
		add_msg(pv, xstrdup("  (no code to show: the sampled addresses only)"));
	for (size_t i = 0; i < dd->n; i++) {
		const struct pset_row *r = &dd->de.diff.rows_src.rows[diff_row_src(&dd->de.diff, i)];
		long k = insn_of(bc, r->addr);
		bool sampled = false;

		for (size_t s = 0; s < dd->de.diff.n_sets; s++)
			sampled |= r->counts[s] != 0;
		if (!pv->all && !sampled)
			continue;
		if (k >= 0 && bc->insns[k].block != block) {
			block = bc->insns[k].block;
			add_line(pv, DL_BLOCK, (size_t)block);
		}
		add_line(pv, DL_INSN, i);
	}
}

static void dproc_widths(struct dproc_view *pv)
{
	const struct diff *d = &pv->dd->de.diff;
	char buf[32];

	pv->aw = 7;
	for (size_t i = 0; i < pv->dd->n; i++)
		if (snprintf(buf, sizeof(buf), "%" PRIx64, d->rows_src.rows[i].addr) > pv->aw)
			pv->aw = (int)strlen(buf);
	pv->wa = draw_digits(d->total_a) > 3 ? draw_digits(d->total_a) : 3;
	pv->wb = draw_digits(d->total_b) > 3 ? draw_digits(d->total_b) : 3;
}

static uint64_t line_addr(const struct view *v, size_t line)
{
	const struct dproc_view *pv = PV(v);

	if (line >= pv->n)
		return 0;
	if (pv->lines[line].kind == DL_INSN)
		return pv->dd->de.diff.rows_src.rows[diff_row_src(&pv->dd->de.diff,
								  pv->lines[line].idx)].addr;
	if (pv->lines[line].kind == DL_BLOCK)
		return blocks_calc(pv)->blocks[pv->lines[line].idx].cfg->start;
	return 0;
}

static void rebuild(struct view *v)
{
	struct dproc_view *pv = PV(v);
	uint64_t at = pv->keep ? pv->keep : line_addr(v, v->pos);

	clear_lines(pv);
	if (pv->dd && !pv->dd->status) {
		dproc_widths(pv);
		add_line(pv, DL_WHOLE, 0);
		if (pv->dd->unaligned)
			build_unaligned(v);
		else
			build_aligned(v);
	} else if (pv->dd) {
		add_msg(pv, xstrdup(""));
		add_msg(pv, xstrdup(pv->dd->error));
	}
	view_set_lines(v, pv->n);
	for (size_t i = 0; at && i < pv->n; i++) {
		if (pv->lines[i].kind == DL_INSN && line_addr(v, i) == at) {
			view_move_to(v, i);
			break;
		}
	}
}

static void dproc_reload(struct view *v)
{
	struct dproc_view *pv = PV(v);
	struct tui *t = v->tui;
	uint64_t at = line_addr(v, v->pos);

	if (at)
		pv->keep = at;
	/* jobs run in order: waiting for the last one asked waits for all three */
	pv->dd = data_diff(v->src, v->loc.epoch, v->loc.epoch_b, v->loc.procedure, v);
	pv->pa = data_proc(v->src, v->loc.epoch, NULL, v->loc.procedure, v);
	pv->pb = data_proc(v->src, v->loc.epoch_b, NULL, v->loc.procedure, v);
	pv->ca = calc_of(pv->pa);
	pv->cb = calc_of(pv->pb);
	v->empty = tui_has_db(t) ? "(nothing to compare)" : "(no database)";
	if (!pv->dd || !pv->pa || !pv->pb) {
		clear_lines(pv);
		view_set_lines(v, 0);
		return;
	}
	rebuild(v);
	pv->keep = 0;
}

static int dproc_open(struct view *v)
{
	if (!v->loc.epoch || !v->loc.epoch_b)
		return errorf("a diff needs two epochs: mark them with m, or ':diff A B'");
	if (!v->loc.procedure || !*v->loc.procedure)
		return errorf("no procedure given");
	dproc_reload(v);
	return 0;
}

static void dproc_close(struct view *v)
{
	clear_lines(PV(v));
	free(PV(v)->lines);
}

/* ---- drawing -------------------------------------------------------------------- */

/* B's CPI against A's: worse (10% and 0.1 cycle more), better, or the same. */
static enum style cpi_style(double a, double b)
{
	if (a >= 0 && b >= 0 && b > a * 1.1 + 0.1)
		return STYLE_WORSE;
	if (a >= 0 && b >= 0 && b < a / 1.1 - 0.1)
		return STYLE_BETTER;
	return STYLE_NORMAL;
}

/* "0.8cy->1.2cy" */
static void draw_change(struct draw *d, double a, double b)
{
	char ba[32], bb[32];

	calc_format_cycles(a, ba, sizeof(ba));
	calc_format_cycles(b, bb, sizeof(bb));
	draw_text(d, a < 0 ? STYLE_DIM : STYLE_NORMAL, ba);
	draw_glyph(d, STYLE_DIM, GLYPH_ARROW_RIGHT);
	draw_text(d, b < 0 ? STYLE_DIM : cpi_style(a, b), bb);
}

/* A's CPI then B's, B's coloured by the change. */
static void draw_cpis(struct draw *d, double a, double b)
{
	char ba[32], bb[32];
	enum style st = cpi_style(a, b);

	calc_format_cycles(a, ba, sizeof(ba));
	calc_format_cycles(b, bb, sizeof(bb));
	draw_space(d, STYLE_NORMAL, 1);
	draw_field(d, a < 0 ? STYLE_DIM : STYLE_NORMAL, ba, 6, ALIGN_RIGHT);
	draw_space(d, STYLE_NORMAL, 1);
	draw_field(d, b < 0 ? STYLE_DIM : st, bb, 6, ALIGN_RIGHT);
}

/* Samples, delta and verdict of a row, from the address column on. */
static void draw_numbers(struct view *v, const struct diff_row *r, struct draw *d)
{
	struct dproc_view *pv = PV(v);
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, r->a);
	draw_space(d, STYLE_NORMAL, 1);
	draw_field(d, r->a ? STYLE_NORMAL : STYLE_DIM, buf, pv->wa, ALIGN_RIGHT);
	snprintf(buf, sizeof(buf), "%" PRIu64, r->b);
	draw_space(d, STYLE_NORMAL, 1);
	draw_field(d, r->b ? STYLE_NORMAL : STYLE_DIM, buf, pv->wb, ALIGN_RIGHT);
	snprintf(buf, sizeof(buf), "%+.2f", r->effect);
	draw_space(d, STYLE_NORMAL, 1);
	draw_field(d, r->a || r->b ? diff_row_style(r) : STYLE_DIM, buf, 7, ALIGN_RIGHT);
}

static void draw_verdict(struct view *v, const struct diff_row *r, struct draw *d)
{
	draw_space(d, STYLE_NORMAL, 1);
	draw_field(d, diff_row_style(r), diff_verdict(&PV(v)->dd->de.diff, r), 12, ALIGN_LEFT);
}

static void draw_insn(struct view *v, size_t i, struct draw *d)
{
	struct dproc_view *pv = PV(v);
	struct diff_row row, *r = &row;
	long ia, ib;
	char buf[32];

	diff_row_get(&pv->dd->de.diff, i, r);
	ia = insn_of(pv->ca, r->addr);
	ib = insn_of(pv->cb, r->addr);

	snprintf(buf, sizeof(buf), "%" PRIx64, r->addr);
	draw_space(d, STYLE_NORMAL, 1);
	draw_field(d, STYLE_ADDRESS, buf, pv->aw, ALIGN_RIGHT);
	draw_numbers(v, r, d);
	draw_cpis(d, ia >= 0 ? pv->ca->insns[ia].cpi : -1, ib >= 0 ? pv->cb->insns[ib].cpi : -1);
	draw_verdict(v, r, d);
	draw_space(d, STYLE_NORMAL, 1);
	if (ib >= 0 || ia >= 0) {
		/* the instruction as decoded (B's, else A's), as the procedure view shows it */
		listing_draw_insn(ib >= 0 ? pv->cb->insns[ib].insn : pv->ca->insns[ia].insn, d);
	} else if (r->text) {
		char *safe = display_safe(r->text);

		draw_text(d, STYLE_NORMAL, safe);
		free(safe);
	} else {
		char *safe = display_safe(r->name);

		draw_text(d, STYLE_DIM, safe);
		free(safe);
	}
}

static void draw_block(struct view *v, size_t b, struct draw *d)
{
	struct dproc_view *pv = PV(v);
	const struct calc *bc = blocks_calc(pv);
	const struct cfg_block *blk = bc->blocks[b].cfg;
	char fa[32], fb[32];

	draw_glyph(d, STYLE_BLOCK, GLYPH_HLINE);
	draw_glyph(d, STYLE_BLOCK, GLYPH_HLINE);
	draw_printf(d, STYLE_BLOCK, " block %zu ", b);
	draw_printf(d, STYLE_DIM, "0x%" PRIx64 "-0x%" PRIx64, blk->start, blk->end);
	calc_format_count(pv->ca ? pv->ca->blocks[b].freq : -1, fa, sizeof(fa));
	calc_format_count(pv->cb ? pv->cb->blocks[b].freq : -1, fb, sizeof(fb));
	draw_printf(d, STYLE_NORMAL, "  freq %s", fa);
	draw_glyph(d, STYLE_DIM, GLYPH_ARROW_RIGHT);
	draw_text(d, STYLE_NORMAL, fb);
	draw_text(d, STYLE_NORMAL, "  CPI ");
	draw_change(d, pv->ca ? pv->ca->blocks[b].cpi : -1, pv->cb ? pv->cb->blocks[b].cpi : -1);
}

static void draw_whole(struct view *v, struct draw *d)
{
	struct dproc_view *pv = PV(v);
	const struct diff_row *r = &pv->dd->de.diff.proc;

	draw_space(d, STYLE_NORMAL, 1);
	draw_field(d, STYLE_LABEL, "whole", pv->aw, ALIGN_RIGHT);
	draw_numbers(v, r, d);
	draw_cpis(d, pv->ca ? pv->ca->summary.cpi : -1, pv->cb ? pv->cb->summary.cpi : -1);
	draw_verdict(v, r, d);
	draw_space(d, STYLE_NORMAL, 1);
	draw_text(d, STYLE_LABEL, pv->dd->proc_name);
}

static void dproc_draw(struct view *v, size_t line, struct draw *d)
{
	struct dproc_view *pv = PV(v);
	const struct dline *l = &pv->lines[line];

	switch (l->kind) {
	case DL_WHOLE:
		draw_whole(v, d);
		break;
	case DL_TEXT:
		draw_space(d, STYLE_NORMAL, 2);
		draw_text(d, STYLE_NORMAL, pv->msgs[l->idx]);
		break;
	case DL_BLOCK:
		draw_block(v, l->idx, d);
		break;
	case DL_INSN:
		draw_insn(v, l->idx, d);
		break;
	}
}

static void dproc_draw_header(struct view *v, struct draw *d)
{
	struct dproc_view *pv = PV(v);
	const struct draw_col head[] = {
		{ "address", pv->aw, ALIGN_RIGHT }, { "A", pv->wa, ALIGN_RIGHT },
		{ "B", pv->wb, ALIGN_RIGHT },
		{ pv->dd && pv->dd->de.diff.opts.norm == PSET_NORM_PERIOD ? "delta t" : "delta", 7,
		  ALIGN_RIGHT },
		{ "CPI A", 6, ALIGN_RIGHT }, { "CPI B", 6, ALIGN_RIGHT },
		{ "verdict", 12, ALIGN_LEFT },
	};

	if (!pv->dd || pv->dd->status)
		return;
	draw_space(d, STYLE_HEADER, 1);
	draw_columns(d, STYLE_HEADER, head, ARRAY_SIZE(head), STYLE_HEADER, 1);
	draw_text(d, STYLE_HEADER, " instruction");
	draw_fill(d, STYLE_HEADER);
}

/* ---- requests -------------------------------------------------------------------- */

static void open_in_b(struct view *v)
{
	uint64_t a = line_addr(v, v->pos);

	if (!a || PV(v)->dd->unaligned) {
		tui_open_procedure(v->tui, v->loc.epoch_b, NULL, v->loc.procedure);
		return;
	}
	tui_open_view(v->tui, "procedure", &(struct view_loc){ .epoch = v->loc.epoch_b,
		.image = (char *)PV(v)->pb->image_key, .procedure = v->loc.procedure, .address = a });
}

static enum view_result dproc_request(struct view *v, enum request req, const char *arg)
{
	struct dproc_view *pv = PV(v);
	uint32_t a;

	if (req == REQ_SWAP) {
		a = v->loc.epoch;
		v->loc.epoch = v->loc.epoch_b;
		v->loc.epoch_b = a;
		view_wait(v, NULL);
		dproc_reload(v);
		tui_info(v->tui, "sides exchanged");
		return VIEW_DONE;
	}
	if (!pv->dd || pv->dd->status || !pv->pb)
		return req == REQ_ENTER || req == REQ_TOGGLE_ALL ? VIEW_DONE : VIEW_PASS;
	switch (req) {
	case REQ_ENTER:
		if (calc_of(pv->pb))
			open_in_b(v);
		else
			errorf("epoch B has no listing of this procedure: %s",
			       pv->pb->error ? pv->pb->error : "?");
		return VIEW_DONE;
	case REQ_TOGGLE_ALL:
		pv->all = !pv->all;
		rebuild(v);
		tui_info(v->tui, pv->all ? "every instruction (a again: those with samples)"
			 : "instructions with samples only (a again: every one)");
		return VIEW_DONE;
	default:
		return VIEW_PASS;
	}
}

static void dproc_title(struct view *v, struct strbuf *sb)
{
	struct dproc_view *pv = PV(v);
	char *spec = display_safe(v->loc.procedure);

	strbuf_addf(sb, "%s: A ", pv->dd && !pv->dd->status ? pv->dd->proc_name : spec);
	tui_epoch_name(v->tui, v->loc.epoch, sb);
	strbuf_addstr(sb, " vs B ");
	tui_epoch_name(v->tui, v->loc.epoch_b, sb);
	free(spec);
	if (!pv->dd || pv->dd->status)
		return;
	if (pv->dd->de.diff.opts.norm == PSET_NORM_PERIOD)
		strbuf_addstr(sb, " by period");
	strbuf_addf(sb, ", %s", diff_verdict(&pv->dd->de.diff, &pv->dd->de.diff.proc));
	if (!pv->dd->unaligned)
		strbuf_addf(sb, ", %zu significant of %zu instructions", pv->dd->de.diff.n_significant,
			    pv->dd->n);
	strbuf_addf(sb, ", %s", pv->dd->label);
}

static int dproc_goto(struct view *v, const char *what)
{
	uint64_t addr = 0;
	bool ok = lookup_parse_address(what, true, &addr);

	for (size_t i = 0; ok && i < PV(v)->n; i++) {
		if (PV(v)->lines[i].kind == DL_INSN && line_addr(v, i) == addr) {
			view_move_to(v, i);
			return 0;
		}
	}
	return errorf("no instruction at '%s' here (:goto 0xADDRESS)", what);
}

/* ---- the pane: both sides, the row and the analysis at the cursor --------------------- */

enum { PANE_A, PANE_B, PANE_WHOLE, PANE_ROW, PANE_CPI, PANE__LINES };

static size_t dproc_pane_lines(struct view *v)
{
	return PV(v)->dd && !PV(v)->dd->status ? PANE__LINES : 0;
}

static void pane_cpi(struct view *v, struct strbuf *sb)
{
	struct dproc_view *pv = PV(v);
	uint64_t a = line_addr(v, v->pos);
	long ia = insn_of(pv->ca, a), ib = insn_of(pv->cb, a);
	char fa[32], fb[32], ca[32], cb[32];

	if (!a || (ia < 0 && ib < 0)) {
		strbuf_addstr(sb, "A: ");
		side_cpi(pv->pa, sb);
		strbuf_addstr(sb, "; B: ");
		side_cpi(pv->pb, sb);
		return;
	}
	calc_format_count(ia >= 0 ? pv->ca->insns[ia].freq : -1, fa, sizeof(fa));
	calc_format_count(ib >= 0 ? pv->cb->insns[ib].freq : -1, fb, sizeof(fb));
	calc_format_cycles(ia >= 0 ? pv->ca->insns[ia].cpi : -1, ca, sizeof(ca));
	calc_format_cycles(ib >= 0 ? pv->cb->insns[ib].cpi : -1, cb, sizeof(cb));
	strbuf_addf(sb, "freq %s -> %s, CPI %s -> %s", fa, fb, ca, cb);
	if (ib >= 0 && pv->cb->insns[ib].n_causes)
		strbuf_addf(sb, "; B's culprits at %" PRIx64 "%s", pv->cb->insns[ib].causes[0].addr,
			    pv->cb->insns[ib].n_causes > 1 ? ", ..." : "");
}

static void dproc_draw_pane(struct view *v, size_t line, struct draw *d)
{
	static const char *const labels[] = { "A", "B", "whole", "cursor", "analysis" };
	struct dproc_view *pv = PV(v);
	const struct diff *df = &pv->dd->de.diff;
	const struct diff_row *r = NULL;
	struct diff_row row;
	struct strbuf sb = STRBUF_INIT;
	char ratio[24];

	if (v->pos < pv->n && pv->lines[v->pos].kind == DL_INSN) {
		diff_row_get(df, pv->lines[v->pos].idx, &row);
		r = &row;
	}
	switch (line) {
	case PANE_A:
		strbuf_addf(&sb, "%s: %" PRIu64 " samples of %s", pv->dd->desc_a, df->total_a,
			    pv->dd->label);
		break;
	case PANE_B:
		strbuf_addf(&sb, "%s: %" PRIu64 " samples of %s", pv->dd->desc_b, df->total_b,
			    pv->dd->label);
		break;
	case PANE_WHOLE:
		r = &df->proc;
		/* fall through */
	case PANE_ROW:
		if (!r)
			break;
		diff_format_ratio(r->ratio, ratio, sizeof(ratio));
		strbuf_addf(&sb, "A %.2f%%, B %.2f%%%s, delta %+.2f points, ratio %s; %s", r->norm_a,
			    r->norm_b, df->opts.norm == PSET_NORM_PERIOD ? " time" : "", r->effect,
			    ratio, diff_verdict(df, r));
		if (r->tested)
			strbuf_addf(&sb, " (q %.2g)", r->q);
		break;
	case PANE_CPI:
		pane_cpi(v, &sb);
		break;
	}
	view_pane_line(d, labels[line], 9, STYLE_NORMAL, sb.buf);
	strbuf_release(&sb);
}

const struct view_ops diff_procedure_view_ops = {
	.name = "diff-procedure",
	.flags = VIEW_CACHE_TEXT,
	.legend = "One procedure in two epochs, side by side (dcpidiff A B PROCEDURE): each\n"
		  "instruction, aligned by address, with its samples in A and in B, delta (the\n"
		  "change of its share of each side's samples, in points; by period, delta t:\n"
		  "of its time, as the diff view's), CPI A and CPI B\n"
		  "(dcpicalc's cycles per execution in each epoch) and the verdict; blocks with\n"
		  "their frequency and CPI in A and B; the first line is the procedure as a whole.\n"
		  "When the binaries differ between the epochs, instructions cannot be aligned and\n"
		  "only the procedure as a whole is compared.  Enter opens the procedure view of\n"
		  "epoch B at the instruction; x exchanges A and B; a shows every instruction,\n"
		  "also those without samples (again: those with samples only, as dcpidiff shows\n"
		  "them without --all); p shows both sides and the cursor's row in a pane.",
	.priv_size = sizeof(struct dproc_view),
	.open = dproc_open,
	.close = dproc_close,
	.reload = dproc_reload,
	.draw = dproc_draw,
	.draw_header = dproc_draw_header,
	.request = dproc_request,
	.title = dproc_title,
	.go_to = dproc_goto,
	.pane_lines = dproc_pane_lines,
	.draw_pane = dproc_draw_pane,
};
