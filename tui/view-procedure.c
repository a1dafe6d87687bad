/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/view-procedure.c - one procedure, instruction by instruction: the
 * listing of analysis/listing.h (what dcpilist prints) with its basic
 * blocks as headers, each instruction's address, samples per event and
 * coloured text, and, when DWARF is there, the source lines and inlined
 * frames interleaved.  Enter on a branch follows it (to the target block,
 * or to the procedure a call or tail call goes to); back (q, Backspace)
 * retraces the branches followed before leaving the view; H visits the
 * blocks from the hottest down; s shows or hides the source; V shows or
 * hides each instruction's most common values (the value profile of an
 * epoch recorded with --values, as dcpicalc --values prints them).
 *
 * The view stands at loc.procedure (a name or 0xADDRESS, as dcpilist takes
 * it) in loc.image (an image key, or NULL: any image of the epoch), and
 * puts the cursor on loc.address when it is set.  When the listing is
 * refused (a missing or rebuilt binary, a kernel image, an unknown or
 * ambiguous name) the lines say why, and :force is suggested where it
 * would help.  Where the keys go (stalls, culprits, hot blocks, branches)
 * is analysis/calc-nav.h's; this file lays out lines, draws and dispatches.
 */
#include "config.h"
#include "tui/view.h"

#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "analysis/calc.h"
#include "analysis/calc-draw.h"
#include "analysis/calc-nav.h"
#include "analysis/lookup.h"
#include "disasm/decode.h"
#include "tui/data-proc.h"
#include "tui/table.h"
#include "tui/tui.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum pline_kind {
	PL_BLOCK,    /* a basic block's header (idx: block) */
	PL_BLOCK_CALC, /* its analysis: frequency, confidence, CPI (idx: block) */
	PL_BUBBLE,   /* a stall bubble line (idx: line of pd->render) */
	PL_INLINE,   /* entering an inlined subroutine (idx: instruction) */
	PL_SOURCE,   /* a source line (idx: instruction) */
	PL_INSN,     /* an instruction (idx: instruction) */
	PL_MESSAGE,  /* why there is no listing (idx: message line) */
};

struct pline {
	enum pline_kind kind;
	uint32_t idx;
};

struct proc_view {
	const struct proc_data *pd;
	struct pline *lines;
	size_t n, alloc;
	bool source;               /* source lines shown */
	bool values;               /* value profiles shown after the instructions */
	char *spec, *image;        /* what the data was asked for (owned; image may be NULL) */
	uint32_t epoch;            /* the epoch they were asked in */
	uint64_t *history;         /* addresses to go back to */
	size_t n_hist, alloc_hist;
	size_t hot_rank;           /* H: the rank of the block last visited */
	int event;
	enum dcpi_event cols[EVENT__COUNT]; /* event columns, the current first */
	size_t n_cols;
	int aw, sw[EVENT__COUNT];  /* column widths: address, samples */
	int tw, cw;                /* column widths: samples after skid, CPI */
	struct calc_hot hot;       /* per block its samples of the current event, hottest first */
	size_t *block_line;        /* per block: its header line */
	size_t *insn_line;         /* per instruction: its line */
	char **msgs;               /* PL_MESSAGE lines */
	size_t n_msgs;
	bool placed;               /* the cursor was put on loc.address */
	uint64_t keep;             /* the cursor's address while the listing reloads */
	long culprit_of;           /* c: the instruction whose culprits are visited, -1 */
	size_t culprit_k;          /* ... the one visited last */
	size_t culprit_line;       /* ... the line it is on */
};

#define PRV(v) ((struct proc_view *)(v)->priv)

static const struct listing *listing_of(const struct view *v)
{
	const struct proc_data *pd = PRV(v)->pd;

	return pd && !pd->status ? &pd->c.list : NULL;
}

/* The analysis (it exists whenever the listing does). */
static const struct calc *calc_of(const struct view *v)
{
	const struct proc_data *pd = PRV(v)->pd;

	return pd && !pd->status ? &pd->c : NULL;
}

static uint64_t current_samples(const struct proc_view *pv, const struct listing_insn *li)
{
	return pv->event >= 0 ? li->samples[pv->event] : 0;
}

static uint64_t proc_total(const struct proc_view *pv)
{
	return pv->event >= 0 && pv->pd ? pv->pd->c.list.totals[pv->event] : 0;
}

static enum style share_style(uint64_t n, uint64_t total)
{
	return draw_share_style(total ? (double)n / (double)total : 0, n);
}

/* ---- lines ----------------------------------------------------------------- */

static void add_line(struct proc_view *pv, enum pline_kind kind, size_t idx)
{
	ALLOC_GROW(pv->lines, pv->n + 1, pv->alloc);
	pv->lines[pv->n++] = (struct pline){ kind, (uint32_t)idx };
}

static void free_msgs(struct proc_view *pv)
{
	for (size_t i = 0; i < pv->n_msgs; i++)
		free(pv->msgs[i]);
	free(pv->msgs);
	pv->msgs = NULL;
	pv->n_msgs = 0;
}

/* Adds a line of message text (taken over). */
static void add_msg(struct proc_view *pv, char *s)
{
	pv->msgs = xreallocarray(pv->msgs, pv->n_msgs + 1, sizeof(*pv->msgs));
	pv->msgs[pv->n_msgs] = s;
	add_line(pv, PL_MESSAGE, pv->n_msgs++);
}

/* The width messages are wrapped at (fixed, so that dumps do not depend on the screen). */
#define MSG_WIDTH 76

/* Adds one line of a message, wrapped at spaces; continuations are indented. */
static void add_wrapped(struct proc_view *pv, const char *s, size_t len)
{
	for (bool first = true; first || len; first = false) {
		size_t cut = draw_wrap(s, len, MSG_WIDTH - (first ? 0 : 4));

		add_msg(pv, xasprintf("%s%.*s", first ? "" : "    ", (int)cut, s));
		for (s += cut, len -= cut; len && *s == ' '; s++, len--)
			;
	}
}

/*
 * Why there is no listing: a failed lookup a part a line (lookup.h), any
 * other message a line per line.
 */
static void build_message(struct proc_view *pv, const struct proc_data *pd)
{
	struct strbuf sb = STRBUF_INIT;
	const char *s = pd->error ? pd->error : "cannot show the procedure";

	if (pd->lookup.kind != LOOKUP_FOUND) {
		lookup_failure_lines(&pd->lookup, &sb);
		s = sb.buf;
	}
	add_msg(pv, xstrdup(""));
	while (*s) {
		size_t n = strcspn(s, "\n");

		add_wrapped(pv, s, n);
		s += n;
		while (*s == ' ' || *s == '\n')
			s++;
	}
	strbuf_release(&sb);
	if (pd->need_force) {
		add_msg(pv, xstrdup(""));
		add_msg(pv, xstrdup("A binary that could hold it changed since it was profiled, so its code"));
		add_msg(pv, xstrdup("may not be what ran: :force uses it anyway (as the tools' --force)."));
	}
}

static void build_listing(struct proc_view *pv, const struct listing *l)
{
	long block = -1;
	const struct src_inline *inl = NULL;

	pv->block_line = xcalloc(l->cfg.n_blocks ? l->cfg.n_blocks : 1, sizeof(*pv->block_line));
	pv->insn_line = xcalloc(l->n_insns ? l->n_insns : 1, sizeof(*pv->insn_line));
	for (size_t i = 0; i < l->n_insns; i++) {
		const struct listing_insn *li = &l->insns[i];

		if (li->block != block && li->block >= 0) {
			block = li->block;
			pv->block_line[block] = pv->n;
			add_line(pv, PL_BLOCK, (size_t)block);
			add_line(pv, PL_BLOCK_CALC, (size_t)block);
		}
		if (pv->source && li->inl != inl) {
			inl = li->inl;
			if (inl)
				add_line(pv, PL_INLINE, i);
		}
		if (pv->source && li->new_line)
			add_line(pv, PL_SOURCE, i);
		for (uint32_t k = 0; k < pv->pd->bubble_n[i]; k++)
			add_line(pv, PL_BUBBLE, pv->pd->bubble_first[i] + k);
		pv->insn_line[i] = pv->n;
		add_line(pv, PL_INSN, i);
	}
}

/* Column widths and the samples of each block for the current event. */
static void measure(struct proc_view *pv, const struct listing *l)
{
	pv->aw = 7; /* "address" */
	for (size_t i = 0; i < l->n_insns; i++)
		if (snprintf(NULL, 0, "%" PRIx64, l->insns[i].insn->addr) > pv->aw)
			pv->aw = snprintf(NULL, 0, "%" PRIx64, l->insns[i].insn->addr);
	pv->n_cols = 0;
	if (pv->event >= 0)
		pv->cols[pv->n_cols++] = (enum dcpi_event)pv->event;
	for (size_t c = 0; c < l->n_events; c++)
		if ((int)l->events[c] != pv->event)
			pv->cols[pv->n_cols++] = l->events[c];
	for (size_t c = 0; c < pv->n_cols; c++) {
		int w = (int)strlen(event_name(pv->cols[c]));

		pv->sw[c] = draw_digits(l->totals[pv->cols[c]]) > w ? draw_digits(l->totals[pv->cols[c]]) : w;
	}
	pv->tw = 4; /* "attr": samples after skid */
	pv->cw = 3; /* "CPI" */
	calc_column_widths(&pv->pd->c, &pv->tw, &pv->cw);
	if (pv->event >= 0)
		calc_hot_build(&pv->hot, &pv->pd->c, (enum dcpi_event)pv->event);
}

static void clear_lines(struct proc_view *pv)
{
	pv->n = 0;
	free(pv->block_line);
	free(pv->insn_line);
	calc_hot_release(&pv->hot);
	pv->block_line = pv->insn_line = NULL;
	free_msgs(pv);
}

static bool is_block_line(const struct proc_view *pv, size_t line)
{
	return line < pv->n && (pv->lines[line].kind == PL_BLOCK ||
				pv->lines[line].kind == PL_BLOCK_CALC);
}

/* The address of the instruction at or before line (0 if none). */
static uint64_t line_address(const struct view *v, size_t line)
{
	const struct proc_view *pv = PRV(v);
	const struct listing *l = listing_of(v);

	if (!l || line >= pv->n)
		return 0;
	switch (pv->lines[line].kind) {
	case PL_BLOCK:
	case PL_BLOCK_CALC:
		return l->cfg.blocks[pv->lines[line].idx].start;
	case PL_BUBBLE:
		return l->insns[PRV(v)->pd->render.v[pv->lines[line].idx].insn].insn->addr;
	case PL_MESSAGE:
		return 0;
	default:
		return l->insns[pv->lines[line].idx].insn->addr;
	}
}

/* The line of the instruction holding addr; -1 if none. */
static long address_line(const struct view *v, uint64_t addr)
{
	const struct listing *l = listing_of(v);
	long i = l ? listing_insn_holding(l, addr) : -1;

	return i < 0 ? -1 : (long)PRV(v)->insn_line[i];
}

/*
 * Rebuilds the lines, keeping the cursor on its instruction (or block);
 * at is its address from before (0: none).
 */
static void rebuild_at(struct view *v, uint64_t at, bool on_block)
{
	struct proc_view *pv = PRV(v);
	const struct listing *l = listing_of(v);

	clear_lines(pv);
	pv->culprit_of = -1;
	if (pv->pd && pv->pd->status)
		build_message(pv, pv->pd);
	if (l) {
		measure(pv, l);
		build_listing(pv, l);
	}
	view_set_lines(v, pv->n);
	if (l && at) {
		long line = address_line(v, at);

		if (line >= 0)
			view_move_to(v, on_block ? pv->block_line[l->insns[pv->lines[line].idx].block]
						 : (size_t)line);
	}
}

static void rebuild(struct view *v)
{
	struct proc_view *pv = PRV(v);

	rebuild_at(v, line_address(v, v->pos), is_block_line(pv, v->pos));
}

/* ---- data --------------------------------------------------------------------- */

/* After a change of epoch, look for the procedure found before, precisely. */
static void follow_epoch(struct view *v)
{
	struct proc_view *pv = PRV(v);
	const struct proc_data *pd = pv->pd;

	if (pv->epoch == v->loc.epoch)
		return;
	pv->epoch = v->loc.epoch;
	if (!pd || pd->status)
		return;
	free(pv->spec);
	free(pv->image);
	pv->spec = xasprintf("0x%" PRIx64, pd->c.list.ref.proc->start);
	pv->image = xstrdup(pd->image_key);
}

static void place_cursor(struct view *v)
{
	struct proc_view *pv = PRV(v);
	long line;

	if (pv->placed || !listing_of(v))
		return;
	pv->placed = true;
	if (v->loc.address && (line = address_line(v, v->loc.address)) >= 0)
		view_move_to(v, (size_t)line);
}

static void proc_reload(struct view *v)
{
	struct proc_view *pv = PRV(v);
	const struct proc_data *pd;
	uint64_t at = line_address(v, v->pos);
	bool on_block = is_block_line(pv, v->pos);

	/* the listing goes while the new one loads: remember where the cursor was */
	if (at)
		pv->keep = at;
	follow_epoch(v);
	pd = data_proc(v->src, v->loc.epoch, pv->image, pv->spec, v);
	pv->pd = pd;
	v->empty = tui_has_db(v->tui) ? "(no procedure)" : "(no database)";
	if (pd && !pd->status) {
		bool events[EVENT__COUNT] = { false };

		for (size_t c = 0; c < pd->c.list.n_events; c++)
			events[pd->c.list.events[c]] = true;
		tui_default_event(v->tui, events);
		pv->event = tui_event(v->tui) >= 0 && events[tui_event(v->tui)] ? tui_event(v->tui) : -1;
		if (!pd->c.list.n_lines)
			pv->source = false;
	}
	rebuild_at(v, pv->keep, on_block);
	if (listing_of(v))
		pv->keep = 0;
	place_cursor(v);
}

static int proc_open(struct view *v)
{
	struct proc_view *pv = PRV(v);

	if (!v->loc.epoch)
		return errorf("no epoch to look for procedures in");
	if (!v->loc.procedure || !*v->loc.procedure)
		return errorf("no procedure given");
	pv->spec = xstrdup(v->loc.procedure);
	pv->image = v->loc.image ? xstrdup(v->loc.image) : NULL;
	pv->epoch = v->loc.epoch;
	pv->source = true;
	pv->event = -1;
	pv->culprit_of = -1;
	proc_reload(v);
	return 0;
}

static void proc_close(struct view *v)
{
	struct proc_view *pv = PRV(v);

	clear_lines(pv);
	free(pv->lines);
	free(pv->spec);
	free(pv->image);
	free(pv->history);
}

/* ---- drawing ---------------------------------------------------------------------- */

static void draw_insn_text(struct draw *d, const struct insn *in, const char *target_name,
			   const struct listing *l)
{
	bool direct = in->target && (in->kind == INSN_JUMP || in->kind == INSN_CJUMP ||
				     in->kind == INSN_CALL);

	listing_draw_insn(in, d);
	if (!direct)
		return;
	if (target_name) {
		draw_text(d, STYLE_NORMAL, " <");
		draw_text(d, STYLE_LABEL, target_name);
		draw_text(d, STYLE_NORMAL, ">");
	} else if (in->target >= l->cfg.start && in->target < l->cfg.end) {
		long b = cfg_block_at(&l->cfg, in->target);

		draw_space(d, STYLE_NORMAL, 1);
		draw_glyph(d, STYLE_DIM, GLYPH_ARROW_RIGHT);
		if (b >= 0)
			draw_printf(d, STYLE_BLOCK, " block %ld", b);
	}
}

static void draw_insn(struct view *v, const struct listing_insn *li, size_t i, struct draw *d)
{
	struct proc_view *pv = PRV(v);
	uint64_t total = proc_total(pv), n = current_samples(pv, li);
	char buf[32];

	draw_space(d, STYLE_NORMAL, 1);
	snprintf(buf, sizeof(buf), "%" PRIx64, li->insn->addr);
	draw_field(d, STYLE_ADDRESS, buf, pv->aw, ALIGN_RIGHT);
	for (size_t c = 0; c < pv->n_cols; c++) {
		uint64_t s = li->samples[pv->cols[c]];

		snprintf(buf, sizeof(buf), "%" PRIu64, s);
		draw_space(d, STYLE_NORMAL, 1);
		draw_field(d, c || pv->event < 0 ? (s ? STYLE_NORMAL : STYLE_DIM) : share_style(s, total),
			   buf, pv->sw[c], ALIGN_RIGHT);
	}
	if (pv->event >= 0) {
		if (n && total)
			snprintf(buf, sizeof(buf), "%.1f", 100.0 * (double)n / (double)total);
		else
			snprintf(buf, sizeof(buf), "%s", n ? "-" : "");
		draw_space(d, STYLE_NORMAL, 1);
		draw_field(d, share_style(n, total), buf, 5, ALIGN_RIGHT);
	}
	/* dcpicalc's columns: samples after skid, CPI, confidence letter */
	draw_space(d, STYLE_NORMAL, 1);
	calc_draw_insn_figures(&pv->pd->c.insns[i], pv->tw, pv->cw, d);
	draw_space(d, STYLE_NORMAL, 2);
	draw_insn_text(d, li->insn, pv->pd->targets[i].name, &pv->pd->c.list);
	calc_draw_causes(&pv->pd->c.insns[i], d);
	if (pv->values && i < pv->pd->c.vals.n && pv->pd->c.vals.insns[i].n) {
		draw_space(d, STYLE_NORMAL, 2);
		valprof_draw(&pv->pd->c.vals.insns[i], d);
	}
}

static void draw_block(struct view *v, size_t b, struct draw *d)
{
	struct proc_view *pv = PRV(v);
	const struct cfg *cfg = &pv->pd->c.list.cfg;
	const struct cfg_block *blk = &cfg->blocks[b];
	uint64_t total = proc_total(pv), n = pv->event >= 0 ? pv->hot.samples[b] : 0;

	draw_glyph(d, STYLE_BLOCK, GLYPH_HLINE);
	draw_glyph(d, STYLE_BLOCK, GLYPH_HLINE);
	draw_printf(d, STYLE_BLOCK, " block %zu ", b);
	draw_printf(d, STYLE_DIM, "0x%" PRIx64 "-0x%" PRIx64 " class %d", blk->start, blk->end,
		    blk->cls);
	draw_space(d, STYLE_DIM, 1);
	listing_draw_preds(&pv->pd->c.list, d, b, STYLE_DIM);
	if (blk->flags & CFG_BLOCK_UNREACHABLE)
		draw_text(d, STYLE_WARNING, " unreachable");
	if (blk->flags & CFG_BLOCK_NO_EXIT)
		draw_text(d, STYLE_WARNING, " never exits");
	if (pv->event >= 0 && n) {
		draw_text(d, STYLE_DIM, "  ");
		draw_printf(d, share_style(n, total), "%" PRIu64 " %s", n,
			    event_name((enum dcpi_event)pv->event));
		if (total)
			draw_printf(d, share_style(n, total), " %.1f%%", 100.0 * (double)n / (double)total);
	}
}

/* A block's analysis: frequency, executions, confidence, best-case and actual CPI. */
static void draw_block_calc(struct view *v, size_t b, struct draw *d)
{
	draw_space(d, STYLE_NORMAL, 3);
	calc_draw_block_brief(&PRV(v)->pd->c, b, d);
}

static int text_indent(const struct proc_view *pv)
{
	int w = 1 + pv->aw + (pv->event >= 0 ? 6 : 0) + 2 + 1 + pv->tw + 1 + pv->cw + 2;

	for (size_t c = 0; c < pv->n_cols; c++)
		w += 1 + pv->sw[c];
	return w;
}

static const char *file_base(const char *file)
{
	const char *slash = strrchr(file, '/');

	return slash ? slash + 1 : file;
}

static void draw_source(struct view *v, const struct listing_insn *li, struct draw *d)
{
	struct proc_view *pv = PRV(v);
	char *file = display_safe(file_base(li->line->file));

	draw_space(d, STYLE_NORMAL, text_indent(pv));
	draw_printf(d, STYLE_SOURCE, "%s:%" PRIu32, file, li->line->line);
	if (li->src_text) {
		char *text = listing_source_text(li->src_text);

		draw_text(d, STYLE_SOURCE, "  ");
		draw_text(d, STYLE_SOURCE, text);
		free(text);
	}
	free(file);
}

static void draw_inline(struct view *v, const struct listing_insn *li, struct draw *d)
{
	struct proc_view *pv = PRV(v);
	char *name = display_safe(li->inl->name);

	draw_space(d, STYLE_NORMAL, text_indent(pv) + 2 * (int)(li->inl->depth - 1));
	draw_text(d, STYLE_LABEL, "inlined ");
	draw_text(d, STYLE_LABEL, name);
	if (li->inl->call_file) {
		char *file = display_safe(file_base(li->inl->call_file));

		draw_printf(d, STYLE_DIM, " (called at %s:%" PRIu32 ")", file, li->inl->call_line);
		free(file);
	}
	free(name);
}

/* A stall bubble line: dcpicalc's (calc_draw_bubble), over the instruction text column. */
static void draw_bubble(struct view *v, size_t k, struct draw *d)
{
	const struct calc_line *cl = &PRV(v)->pd->render.v[k];
	enum style st = cl->is_static ? STYLE_BUBBLE_STATIC : STYLE_BUBBLE;

	draw_space(d, STYLE_NORMAL, text_indent(PRV(v)));
	draw_glyph(d, st, GLYPH_BUBBLE);
	draw_glyph(d, st, GLYPH_BUBBLE);
	draw_space(d, STYLE_NORMAL, 1);
	calc_draw_bubble(&PRV(v)->pd->c, cl, d);
}

static void proc_draw(struct view *v, size_t line, struct draw *d)
{
	struct proc_view *pv = PRV(v);
	const struct pline *pl = &pv->lines[line];

	switch (pl->kind) {
	case PL_BLOCK:
		draw_block(v, pl->idx, d);
		break;
	case PL_BLOCK_CALC:
		draw_block_calc(v, pl->idx, d);
		break;
	case PL_BUBBLE:
		draw_bubble(v, pl->idx, d);
		break;
	case PL_INLINE:
		draw_inline(v, &pv->pd->c.list.insns[pl->idx], d);
		break;
	case PL_SOURCE:
		draw_source(v, &pv->pd->c.list.insns[pl->idx], d);
		break;
	case PL_INSN:
		draw_insn(v, &pv->pd->c.list.insns[pl->idx], pl->idx, d);
		break;
	case PL_MESSAGE:
		draw_space(d, STYLE_NORMAL, 2);
		draw_text(d, pl->idx == 1 ? STYLE_ERROR : STYLE_NORMAL, pv->msgs[pl->idx]);
		break;
	}
}

static void proc_draw_header(struct view *v, struct draw *d)
{
	struct proc_view *pv = PRV(v);

	if (!listing_of(v))
		return;
	draw_space(d, STYLE_HEADER, 1);
	draw_field(d, STYLE_HEADER, "address", pv->aw, ALIGN_RIGHT);
	for (size_t c = 0; c < pv->n_cols; c++) {
		draw_space(d, STYLE_HEADER, 1);
		draw_field(d, STYLE_HEADER, event_name(pv->cols[c]), pv->sw[c], ALIGN_RIGHT);
	}
	if (pv->event >= 0) {
		draw_space(d, STYLE_HEADER, 1);
		draw_field(d, STYLE_HEADER, "%", 5, ALIGN_RIGHT);
	}
	draw_space(d, STYLE_HEADER, 1);
	draw_field(d, STYLE_HEADER, "attr", pv->tw, ALIGN_RIGHT);
	draw_space(d, STYLE_HEADER, 1);
	draw_field(d, STYLE_HEADER, "CPI", pv->cw, ALIGN_RIGHT);
	draw_text(d, STYLE_HEADER, " C");
	draw_space(d, STYLE_HEADER, 2);
	draw_text(d, STYLE_HEADER, "instruction");
	draw_fill(d, STYLE_HEADER);
}

/* ---- requests ---------------------------------------------------------------------- */

static void jump_to_line(struct view *v, size_t line)
{
	struct proc_view *pv = PRV(v);
	uint64_t from = line_address(v, v->pos);

	if (from) {
		ALLOC_GROW(pv->history, pv->n_hist + 1, pv->alloc_hist);
		pv->history[pv->n_hist++] = from;
	}
	view_move_to(v, line);
}

/* Enter on an instruction: follow its branch or call. */
static void follow(struct view *v, size_t i)
{
	struct proc_view *pv = PRV(v);
	const struct calc *c = &pv->pd->c;
	struct strbuf sb = STRBUF_INIT;
	char spec[32];
	uint64_t to = 0;
	long line;

	switch (calc_nav_branch(c, i, &to)) {
	case CALC_GO_BLOCK:
		if ((line = address_line(v, to)) < 0)
			errorf("0x%" PRIx64 " is not the start of an instruction of this procedure", to);
		else
			jump_to_line(v, (size_t)line);
		break;
	case CALC_GO_PROC:
		snprintf(spec, sizeof(spec), "0x%" PRIx64, to);
		tui_push(v->tui, v->ops, &(struct view_loc){ .epoch = v->loc.epoch,
			.image = (char *)pv->pd->image_key, .procedure = spec, .address = to });
		break;
	case CALC_GO_SWITCH:
		if (calc_nav_switch_text(c, i, &sb))
			strbuf_addstr(&sb, " (:goto 0xADDRESS follows one)");
		tui_info(v->tui, "%s", sb.buf);
		break;
	case CALC_GO_ICALL:
		tui_info(v->tui, "indirect call: its target is not known");
		break;
	case CALC_GO_RET:
		tui_info(v->tui, "return: back (q) goes to where you came from");
		break;
	case CALC_GO_UNKNOWN:
		tui_info(v->tui, "the target of this branch is not known");
		break;
	case CALC_GO_NONE:
		tui_info(v->tui, "Enter follows branches and calls; this instruction is neither");
		break;
	}
	strbuf_release(&sb);
}

/* ---- stalls and culprits ------------------------------------------------------- */

/* The instruction a line is about (an instruction or its bubble), or -1. */
static long line_insn(const struct view *v, size_t line)
{
	const struct proc_view *pv = PRV(v);

	if (line >= pv->n || !listing_of(v))
		return -1;
	if (pv->lines[line].kind == PL_INSN)
		return (long)pv->lines[line].idx;
	if (pv->lines[line].kind == PL_BUBBLE)
		return pv->pd->render.v[pv->lines[line].idx].insn;
	return -1;
}

/* ] and [: the next (dir 1) or previous (-1) instruction with a bubble, wrapping. */
static void next_stall(struct view *v, int dir)
{
	struct proc_view *pv = PRV(v);
	const struct calc *c = calc_of(v);
	long cur = line_insn(v, v->pos), i;
	struct strbuf sb = STRBUF_INIT;
	bool wrapped;

	if (!c)
		return;
	if (cur < 0) {
		uint64_t a = line_address(v, v->pos);
		long at = a ? calc_insn_at(c, a) : -1;

		/* on a block header: its first instruction counts as the next */
		cur = at < 0 ? (dir > 0 ? -1 : (long)c->n_insns) : (dir > 0 ? at - 1 : at);
	}
	if ((i = calc_nav_stall(c, cur, dir, &wrapped)) < 0) {
		errorf("no stalls in this procedure%s", c->has_time ? "" : " (no time samples)");
		return;
	}
	jump_to_line(v, pv->insn_line[i]);
	calc_nav_stall_text(c, (size_t)i, &sb);
	tui_info(v->tui, "%s%s; %s", sb.buf, wrapped ? " (wrapped)" : "",
		 c->insns[i].n_causes ? "c: its culprit" : "] [: next, previous");
	strbuf_release(&sb);
}

/*
 * c (and Enter on a bubble, or on an instruction that neither branches nor
 * calls): the culprit of the stall; again, from the culprit, the next one.
 */
static void culprit(struct view *v)
{
	struct proc_view *pv = PRV(v);
	const struct calc *c = calc_of(v);
	long i = line_insn(v, v->pos), line;
	const struct calc_cause *x;
	struct strbuf sb = STRBUF_INIT;
	size_t k = 0;

	if (!c)
		return;
	if (pv->culprit_of >= 0 && v->pos == pv->culprit_line) {
		i = pv->culprit_of;
		k = pv->culprit_k + 1;
	}
	if (i < 0 || !(x = calc_nav_culprit(c, (size_t)i, &k))) {
		errorf("no culprit here: put the cursor on a stalled instruction (] finds one)");
		return;
	}
	if ((line = address_line(v, x->addr)) < 0) {
		errorf("the culprit %" PRIx64 " is not an instruction of this procedure", x->addr);
		return;
	}
	jump_to_line(v, (size_t)line);
	pv->culprit_of = i;
	pv->culprit_k = k;
	pv->culprit_line = v->pos;
	calc_nav_culprit_text(c, (size_t)i, k, &sb);
	tui_info(v->tui, "%s%s; back (q) returns", sb.buf,
		 c->insns[i].n_causes > 1 ? "; c again: the next" : "");
	strbuf_release(&sb);
}

static void enter(struct view *v)
{
	struct proc_view *pv = PRV(v);
	const struct pline *pl;
	uint64_t to;

	if (v->pos >= pv->n || !listing_of(v)) {
		tui_info(v->tui, "nothing to open here");
		return;
	}
	pl = &pv->lines[v->pos];
	if (pl->kind == PL_BUBBLE ||
	    (pl->kind == PL_INSN && pv->pd->c.insns[pl->idx].n_causes &&
	     calc_nav_branch(&pv->pd->c, pl->idx, &to) == CALC_GO_NONE))
		culprit(v);
	else if (pl->kind == PL_INSN)
		follow(v, pl->idx);
	else
		tui_info(v->tui, "Enter on a branch or a call follows it, on a stall goes to its culprit");
}

static bool go_back(struct view *v)
{
	struct proc_view *pv = PRV(v);
	long line;

	while (pv->n_hist) {
		line = address_line(v, pv->history[--pv->n_hist]);
		if (line >= 0) {
			view_move_to(v, (size_t)line);
			return true;
		}
	}
	return false;
}

/* H: the hottest block, or the next one down from where the cursor is. */
static void hottest(struct view *v)
{
	struct proc_view *pv = PRV(v);
	const struct listing *l = listing_of(v);
	struct strbuf sb = STRBUF_INIT;
	uint64_t a;

	if (!l || pv->event < 0 || !pv->hot.n) {
		errorf("no %s samples in this procedure",
		       pv->event >= 0 ? event_name((enum dcpi_event)pv->event) : "");
		return;
	}
	a = v->pos < pv->n ? line_address(v, v->pos) : 0;
	pv->hot_rank = calc_hot_next(&pv->hot, pv->hot_rank, a ? cfg_block_at(&l->cfg, a) : -1);
	view_move_to(v, pv->block_line[pv->hot.rank[pv->hot_rank]]);
	calc_hot_text(&pv->hot, pv->hot_rank, &sb);
	tui_info(v->tui, "%s%s", sb.buf, pv->hot.n > 1 ? "; H again: the next" : "");
	strbuf_release(&sb);
}

static void toggle_source(struct view *v)
{
	struct proc_view *pv = PRV(v);
	const struct listing *l = listing_of(v);

	if (!l)
		return;
	if (!pv->source && !l->n_lines) {
		errorf("no source lines: %s", l->src_why ? l->src_why : "no line information");
		return;
	}
	pv->source = !pv->source;
	rebuild(v);
	tui_info(v->tui, pv->source ? "source lines shown" : "source lines hidden");
}

/* C: the callers and callees of this procedure (the epoch's stacks). */
static void open_callers(struct view *v)
{
	const struct proc_view *pv = v->priv;
	const struct proc_data *pd = pv->pd;
	struct view_loc loc = { .epoch = v->loc.epoch };

	if (!pd || pd->status || !pd->c.list.ref.proc) {
		errorf("no procedure to show the callers of");
		return;
	}
	loc.image = (char *)pd->image_key;
	loc.procedure = (char *)pd->c.list.ref.proc->name;
	loc.address = pd->c.list.ref.proc->start;
	tui_open_view(v->tui, "callers", &loc);
}

static void toggle_values(struct view *v)
{
	struct proc_view *pv = PRV(v);

	if (!pv->pd || pv->pd->status)
		return;
	if (!pv->values && !pv->pd->c.vals.present) {
		errorf("no value profile of this image in the epoch (record with dcpirun --values)");
		return;
	}
	pv->values = !pv->values;
	tui_info(v->tui, pv->values ? "value profiles shown" : "value profiles hidden");
}

static enum view_result proc_request(struct view *v, enum request req, const char *arg)
{
	switch (req) {
	case REQ_CALLERS:
		open_callers(v);
		return VIEW_DONE;
	case REQ_ENTER:
		enter(v);
		return VIEW_DONE;
	case REQ_BACK:
		return go_back(v) ? VIEW_DONE : VIEW_PASS;
	case REQ_HOTTEST:
		hottest(v);
		return VIEW_DONE;
	case REQ_TOGGLE_SOURCE:
		toggle_source(v);
		return VIEW_DONE;
	case REQ_TOGGLE_VALUES:
		toggle_values(v);
		return VIEW_DONE;
	case REQ_NEXT_STALL:
	case REQ_PREV_STALL:
		next_stall(v, req == REQ_NEXT_STALL ? 1 : -1);
		return VIEW_DONE;
	case REQ_CULPRIT:
		culprit(v);
		return VIEW_DONE;
	default:
		return VIEW_PASS;
	}
}

/*
 * :goto 0xADDRESS in this procedure moves there (back returns); anything
 * else opens that procedure.
 */
static int proc_goto(struct view *v, const char *what)
{
	struct proc_view *pv = PRV(v);
	const struct listing *l = listing_of(v);
	uint64_t addr;

	if (l && lookup_parse_address(what, false, &addr)) {
		long line = address_line(v, addr);

		if (line >= 0) {
			jump_to_line(v, (size_t)line);
			return 0;
		}
		return tui_push(v->tui, v->ops, &(struct view_loc){ .epoch = v->loc.epoch,
			.image = (char *)pv->pd->image_key, .procedure = (char *)what,
			.address = addr });
	}
	return tui_open_procedure(v->tui, v->loc.epoch, NULL, what);
}

static void proc_complete(struct view *v, enum arg_kind kind, struct candidates *c)
{
	const struct proc_data *pd = PRV(v)->pd;

	if (kind != ARG_GOTO || !pd)
		return;
	for (size_t i = 0; i < pd->n_names; i++)
		candidates_add(c, pd->names[i]);
	procs_complete_names(v->src, v->loc.epoch, c);
}

static void proc_title(struct view *v, struct strbuf *sb)
{
	struct proc_view *pv = PRV(v);
	const struct proc_data *pd = pv->pd;
	const struct listing *l = listing_of(v);

	if (!l) {
		char *spec = display_safe(pv->spec);

		strbuf_addf(sb, "%s, epoch ", spec);
		tui_epoch_name(v->tui, v->loc.epoch, sb);
		free(spec);
		return;
	}
	strbuf_addf(sb, "%s in %s:", pd->name, file_base(pd->image_path));
	if (pv->event >= 0) {
		uint64_t ep = pd->epoch_totals[pv->event];

		strbuf_addf(sb, " %" PRIu64 " %s", l->totals[pv->event],
			    event_name((enum dcpi_event)pv->event));
		if (ep)
			strbuf_addf(sb, " (%.1f%%)", 100.0 * (double)l->totals[pv->event] / (double)ep);
		strbuf_addch(sb, ',');
	}
	if (pd->c.summary.cpi >= 0)
		strbuf_addf(sb, " CPI %.2f (best %.2f),", pd->c.summary.cpi, pd->c.summary.best_cpi);
	strbuf_addf(sb, " %zu instruction%s, %zu block%s", l->n_insns, l->n_insns == 1 ? "" : "s",
		    l->cfg.n_blocks - 1, l->cfg.n_blocks == 2 ? "" : "s");
	if (pd->warning)
		strbuf_addstr(sb, " (forced)");
}

/* ---- the details pane: the procedure, and where the cursor is ----------------------- */

/*
 * The procedure and its analysis: the paper's Figure 4 summary (dcpicalc
 * --summary) in a few lines, with only the reasons that have cycles; then
 * the cursor's block and instruction, the image and the source file.
 */
enum {
	PANE_PROC, PANE_SAMPLES, PANE_CPI, PANE_DYNAMIC, PANE_STATIC, PANE_TOTAL, PANE_BLOCK,
	PANE_LINE, PANE_IMAGE, PANE_SOURCE, PANE__LINES
};

static size_t proc_pane_lines(struct view *v)
{
	return listing_of(v) ? PANE__LINES : 0;
}

/* The cursor's block and instruction. */
static void pane_cursor(struct view *v, bool block, struct strbuf *sb)
{
	const struct calc *c = &PRV(v)->pd->c;
	uint64_t a = line_address(v, v->pos);
	long k = !a ? -1 : block ? cfg_block_at(&c->list.cfg, a) : cfg_insn_at(&c->list.cfg, a);

	if (k >= 0 && block)
		calc_describe_block(c, (size_t)k, sb);
	else if (k >= 0)
		calc_describe_insn(c, (size_t)k, sb);
}

static void proc_draw_pane(struct view *v, size_t line, struct draw *d)
{
	static const char *const labels[] = { "procedure", "samples", "CPI", "dynamic", "static",
					      "total", "block", "cursor", "image", "source" };
	const struct proc_data *pd = PRV(v)->pd;
	const struct calc *c = &pd->c;
	struct strbuf sb = STRBUF_INIT;

	if (line >= PANE__LINES)
		return;
	if (line >= PANE_CPI && line <= PANE_TOTAL) {
		/* the Figure 4 summary, in brief */
		view_pane_line(d, labels[line], 10, STYLE_NORMAL, "");
		calc_draw_summary_brief(c, CALC_BRIEF_CPI + (line - PANE_CPI), d);
		return;
	}
	switch (line) {
	case PANE_PROC: calc_describe_proc(c, &sb); break;
	case PANE_SAMPLES: calc_describe_samples(c, pd->epoch_totals, &sb); break;
	case PANE_BLOCK: pane_cursor(v, true, &sb); break;
	case PANE_LINE: pane_cursor(v, false, &sb); break;
	case PANE_IMAGE:
		strbuf_addf(&sb, "%s (key %s)", pd->image_path, pd->image_key);
		if (pd->warning)
			strbuf_addf(&sb, "; forced: %s", pd->warning);
		break;
	case PANE_SOURCE:
		if (pd->src_file)
			strbuf_addstr(&sb, pd->src_file);
		else
			strbuf_addf(&sb, "none: %s", c->list.src_why ? c->list.src_why : "?");
		break;
	}
	view_pane_line(d, labels[line], 10, line == PANE_IMAGE && pd->warning ? STYLE_WARNING
		       : STYLE_NORMAL, sb.buf);
	strbuf_release(&sb);
}

const struct view_ops procedure_view_ops = {
	.name = "procedure",
	.flags = VIEW_FOLLOWS_EPOCH | VIEW_CACHE_TEXT,
	.legend = "One procedure as dcpilist lists it and dcpicalc analyses it: basic blocks\n"
		  "(their class of equal execution counts, where control comes from, their\n"
		  "samples; then the confidence letter L, M, H, the estimated frequency per\n"
		  "sampling period, executions, best-case and actual cycles over instructions),\n"
		  "each instruction's address, samples per event, % of the procedure's samples of\n"
		  "the current event, attr (the samples it accounts for after the skid model:\n"
		  "dcpicalc's Samples), CPI (cycles per execution), C (confidence), its text, and\n"
		  "<- the culprit addresses of its stall.  Stall bubbles above an instruction are\n"
		  "dcpicalc's: a line per half cycle (long stalls: three lines and the cycles),\n"
		  "letters for the reasons, each explained where it first appears; dynamic ones\n"
		  "in red, static ones in magenta.  ] and [ go to the next and previous stall, c\n"
		  "(or Enter on a bubble) to its culprit, again to the next culprit.  Enter on a\n"
		  "branch goes to its target block, on a call or a tail call to the procedure\n"
		  "called; back (q) retraces the jumps.  H visits the blocks from the hottest\n"
		  "down; :goto 0xADDRESS moves, :goto NAME opens a procedure; s hides the source;\n"
		  "p shows the Figure 4 summary (dcpicalc --summary) and the cursor's block and\n"
		  "instruction in a pane.  A binary that is missing, or changed since it was\n"
		  "profiled, is refused (:force uses it anyway).",
	.legend_more = calc_legend,
	.priv_size = sizeof(struct proc_view),
	.open = proc_open,
	.close = proc_close,
	.reload = proc_reload,
	.draw = proc_draw,
	.draw_header = proc_draw_header,
	.request = proc_request,
	.title = proc_title,
	.go_to = proc_goto,
	.complete = proc_complete,
	.pane_lines = proc_pane_lines,
	.draw_pane = proc_draw_pane,
};
