/*
 * tui/view-procedure.c - one procedure, instruction by instruction: the
 * listing of core/analysis/listing.h (what dcpilist prints) with its basic
 * blocks as headers, each instruction's address, samples per event and
 * coloured text, and, when DWARF is there, the source lines and inlined
 * frames interleaved.  Enter on a branch follows it (to the target block,
 * or to the procedure a call or tail call goes to); back (q, Backspace)
 * retraces the branches followed before leaving the view; H visits the
 * blocks from the hottest down; s shows or hides the source.
 *
 * The view stands at loc.procedure (a name or 0xADDRESS, as dcpilist takes
 * it) in loc.image (an image key, or NULL: any image of the epoch), and
 * puts the cursor on loc.address when it is set.  When the listing is
 * refused (a missing or rebuilt binary, a kernel image, an unknown or
 * ambiguous name) the lines say why, and :force is suggested where it
 * would help.
 */
#include "config.h"
#include "tui/view.h"

#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "disasm/decode.h"
#include "tui/data-proc.h"
#include "tui/insntext.h"
#include "tui/tui.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum pline_kind {
	PL_BLOCK,    /* a basic block's header (idx: block) */
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
	char *spec, *image;        /* what the data was asked for (owned; image may be NULL) */
	uint32_t epoch;            /* the epoch they were asked in */
	uint64_t *history;         /* addresses to go back to */
	size_t n_hist, alloc_hist;
	size_t hot_rank;           /* H: the rank of the block last visited */
	int event;
	enum dcpi_event cols[EVENT__COUNT]; /* event columns, the current first */
	size_t n_cols;
	int aw, sw[EVENT__COUNT];  /* column widths: address, samples */
	uint64_t *block_samples;   /* per block, current event */
	size_t *block_line;        /* per block: its header line */
	size_t *insn_line;         /* per instruction: its line */
	char **msgs;               /* PL_MESSAGE lines */
	size_t n_msgs;
	bool placed;               /* the cursor was put on loc.address */
	uint64_t keep;             /* the cursor's address while the listing reloads */
};

#define PRV(v) ((struct proc_view *)(v)->priv)

static const struct listing *listing_of(const struct view *v)
{
	const struct proc_data *pd = PRV(v)->pd;

	return pd && !pd->status ? &pd->l : NULL;
}

static uint64_t current_samples(const struct proc_view *pv, const struct listing_insn *li)
{
	return pv->event >= 0 ? li->samples[pv->event] : 0;
}

static uint64_t proc_total(const struct proc_view *pv)
{
	return pv->event >= 0 && pv->pd ? pv->pd->l.totals[pv->event] : 0;
}

static enum style share_style(uint64_t n, uint64_t total)
{
	if (!n)
		return STYLE_DIM;
	if (!total)
		return STYLE_NORMAL;
	return n * 10 >= total ? STYLE_HOT : n * 100 >= total ? STYLE_WARM : STYLE_NORMAL;
}

static int digits(uint64_t n)
{
	int d = 1;

	while (n >= 10) {
		n /= 10;
		d++;
	}
	return d;
}

static bool parse_address(const char *s, uint64_t *addr)
{
	char *end;

	if (strncmp(s, "0x", 2) && strncmp(s, "0X", 2))
		return false;
	errno = 0;
	*addr = strtoull(s + 2, &end, 16);
	return !errno && end != s + 2 && !*end;
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

static void add_msg(struct proc_view *pv, const char *s, size_t len)
{
	pv->msgs = xreallocarray(pv->msgs, pv->n_msgs + 1, sizeof(*pv->msgs));
	pv->msgs[pv->n_msgs] = xstrndup(s, len);
	add_line(pv, PL_MESSAGE, pv->n_msgs++);
}

static void add_msg0(struct proc_view *pv, const char *s)
{
	add_msg(pv, s, strlen(s));
}

/* The width messages are wrapped at (fixed, so that dumps do not depend on the screen). */
#define MSG_WIDTH 76

/* Adds one line of a message, wrapped at spaces; continuations are indented. */
static void add_wrapped(struct proc_view *pv, const char *s, size_t len)
{
	bool first = true;

	while (len > MSG_WIDTH - (first ? 0 : 4)) {
		size_t max = MSG_WIDTH - (first ? 0 : 4), cut = max;

		while (cut > max / 2 && s[cut] != ' ')
			cut--;
		if (s[cut] != ' ')
			cut = max;
		if (first) {
			add_msg(pv, s, cut);
		} else {
			char *t = xasprintf("    %.*s", (int)cut, s);

			add_msg0(pv, t);
			free(t);
		}
		first = false;
		while (cut < len && s[cut] == ' ')
			cut++;
		s += cut;
		len -= cut;
	}
	if (first) {
		add_msg(pv, s, len);
	} else {
		char *t = xasprintf("    %.*s", (int)len, s);

		add_msg0(pv, t);
		free(t);
	}
}

/*
 * Why there is no listing: the message reported, a line per line and per
 * "; " clause (lookup.h lists the images that cannot be named that way).
 */
static void build_message(struct proc_view *pv, const struct proc_data *pd)
{
	const char *s = pd->error ? pd->error : "cannot show the procedure";

	add_msg(pv, "", 0);
	while (*s) {
		size_t nl = strcspn(s, "\n"), n = nl;
		const char *semi = strstr(s, "; ");

		if (semi && (size_t)(semi - s) < nl)
			n = (size_t)(semi - s) + 1;
		add_wrapped(pv, s, n);
		s += n;
		while (*s == ' ' || *s == '\n')
			s++;
	}
	if (pd->need_force) {
		add_msg(pv, "", 0);
		add_msg0(pv, "A binary that could hold it changed since it was profiled, so its code");
		add_msg0(pv, "may not be what ran: :force uses it anyway (as the tools' --force).");
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
		}
		if (pv->source && li->inl != inl) {
			inl = li->inl;
			if (inl)
				add_line(pv, PL_INLINE, i);
		}
		if (pv->source && li->new_line)
			add_line(pv, PL_SOURCE, i);
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

		pv->sw[c] = digits(l->totals[pv->cols[c]]) > w ? digits(l->totals[pv->cols[c]]) : w;
	}
	pv->block_samples = xcalloc(l->cfg.n_blocks ? l->cfg.n_blocks : 1,
				    sizeof(*pv->block_samples));
	for (size_t i = 0; i < l->n_insns; i++)
		if (l->insns[i].block >= 0)
			pv->block_samples[l->insns[i].block] += current_samples(pv, &l->insns[i]);
}

static void clear_lines(struct proc_view *pv)
{
	pv->n = 0;
	free(pv->block_line);
	free(pv->insn_line);
	free(pv->block_samples);
	pv->block_line = pv->insn_line = NULL;
	pv->block_samples = NULL;
	free_msgs(pv);
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
		return l->cfg.blocks[pv->lines[line].idx].start;
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
	long i;

	if (!l)
		return -1;
	if ((i = cfg_insn_at(&l->cfg, addr)) < 0) {
		for (size_t k = 0; k < l->n_insns; k++) {
			const struct insn *in = l->insns[k].insn;

			if (addr >= in->addr && addr < in->addr + in->len)
				return (long)PRV(v)->insn_line[k];
		}
		return -1;
	}
	return (long)PRV(v)->insn_line[i];
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

	rebuild_at(v, line_address(v, v->pos),
		   v->pos < pv->n && pv->lines[v->pos].kind == PL_BLOCK);
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
	pv->spec = xasprintf("0x%" PRIx64, pd->l.ref.proc->start);
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
	bool on_block = v->pos < pv->n && pv->lines[v->pos].kind == PL_BLOCK;

	/* the listing goes while the new one loads: remember where the cursor was */
	if (at)
		pv->keep = at;
	follow_epoch(v);
	pd = tui_proc(v->tui, v->loc.epoch, pv->image, pv->spec, v);
	pv->pd = pd;
	v->empty = v->tui->db ? "(no procedure)" : "(no database)";
	if (pd && !pd->status) {
		bool events[EVENT__COUNT] = { false };

		for (size_t c = 0; c < pd->l.n_events; c++)
			events[pd->l.events[c]] = true;
		tui_default_event(v->tui, events);
		pv->event = v->tui->event >= 0 && events[v->tui->event] ? v->tui->event : -1;
		if (!pd->l.n_lines)
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
	struct insn_span sp[INSN_SPANS_MAX];
	bool direct = in->target && (in->kind == INSN_JUMP || in->kind == INSN_CJUMP ||
				     in->kind == INSN_CALL);
	size_t n = insn_text_spans(in->text, direct, sp, INSN_SPANS_MAX);
	static const enum style styles[] = {
		[SPAN_MNEMONIC] = STYLE_MNEMONIC, [SPAN_REGISTER] = STYLE_REGISTER,
		[SPAN_IMMEDIATE] = STYLE_IMMEDIATE, [SPAN_SIZE] = STYLE_DIM,
		[SPAN_TARGET] = STYLE_TARGET, [SPAN_OTHER] = STYLE_NORMAL,
	};

	for (size_t k = 0; k < n; k++) {
		draw_textn(d, styles[sp[k].kind], in->text + sp[k].off, sp[k].len);
		if (sp[k].kind == SPAN_MNEMONIC && k + 1 < n && sp[k].len < 7)
			draw_space(d, STYLE_NORMAL, (int)(7 - sp[k].len));
	}
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
	draw_space(d, STYLE_NORMAL, 2);
	draw_insn_text(d, li->insn, pv->pd->targets[i].name, &pv->pd->l);
}

/* "from entry, 1 (taken), outside (reentry)" */
static void describe_preds(const struct cfg *cfg, size_t b, struct strbuf *sb)
{
	const struct cfg_block *blk = &cfg->blocks[b];

	if (b == cfg->entry)
		strbuf_addstr(sb, "entry");
	else if (!blk->n_pred)
		strbuf_addstr(sb, "nowhere");
	for (uint32_t k = 0; k < blk->n_pred; k++) {
		const struct cfg_edge *e = &cfg->edges[cfg->pred[blk->pred + k]];

		if (sb->len)
			strbuf_addstr(sb, ", ");
		if (e->from == cfg->exit)
			strbuf_addf(sb, "outside (%s)", cfg_edge_kind_name(e->kind));
		else if (e->kind == CFG_FALLTHROUGH)
			strbuf_addf(sb, "%u", e->from);
		else
			strbuf_addf(sb, "%u (%s)", e->from, cfg_edge_kind_name(e->kind));
	}
}

static void draw_block(struct view *v, size_t b, struct draw *d)
{
	struct proc_view *pv = PRV(v);
	const struct cfg *cfg = &pv->pd->l.cfg;
	const struct cfg_block *blk = &cfg->blocks[b];
	uint64_t total = proc_total(pv), n = pv->block_samples[b];
	struct strbuf sb = STRBUF_INIT;

	draw_glyph(d, STYLE_BLOCK, GLYPH_HLINE);
	draw_glyph(d, STYLE_BLOCK, GLYPH_HLINE);
	draw_printf(d, STYLE_BLOCK, " block %zu ", b);
	draw_printf(d, STYLE_DIM, "0x%" PRIx64 "-0x%" PRIx64 " class %d", blk->start, blk->end,
		    blk->cls);
	describe_preds(cfg, b, &sb);
	draw_printf(d, STYLE_DIM, " from %s", sb.buf);
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
	strbuf_release(&sb);
}

static int text_indent(const struct proc_view *pv)
{
	int w = 1 + pv->aw + (pv->event >= 0 ? 6 : 0) + 2;

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
		struct strbuf sb = STRBUF_INIT;
		char *safe;
		size_t col = 0;

		for (const char *p = li->src_text; *p; p++) {
			if (*p == '\t') {
				do
					strbuf_addch(&sb, ' ');
				while (++col % 8);
			} else {
				strbuf_addch(&sb, *p);
				col++;
			}
		}
		safe = display_safe(sb.buf);
		draw_text(d, STYLE_SOURCE, "  ");
		draw_text(d, STYLE_SOURCE, safe);
		free(safe);
		strbuf_release(&sb);
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

static void proc_draw(struct view *v, size_t line, struct draw *d)
{
	struct proc_view *pv = PRV(v);
	const struct pline *pl = &pv->lines[line];

	switch (pl->kind) {
	case PL_BLOCK:
		draw_block(v, pl->idx, d);
		break;
	case PL_INLINE:
		draw_inline(v, &pv->pd->l.insns[pl->idx], d);
		break;
	case PL_SOURCE:
		draw_source(v, &pv->pd->l.insns[pl->idx], d);
		break;
	case PL_INSN:
		draw_insn(v, &pv->pd->l.insns[pl->idx], pl->idx, d);
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

static void follow_switch(struct view *v, const struct listing_insn *li)
{
	const struct cfg *cfg = &PRV(v)->pd->l.cfg;
	const struct cfg_block *blk = &cfg->blocks[li->block];
	struct strbuf sb = STRBUF_INIT;
	size_t n = 0;

	for (uint32_t k = 0; k < blk->n_succ; k++) {
		const struct cfg_edge *e = &cfg->edges[cfg->succ[blk->succ + k]];

		if (e->kind == CFG_SWITCH && n++ < 12)
			strbuf_addf(&sb, "%s%u", n > 1 ? ", " : "", e->to);
	}
	if (n)
		tui_info(v->tui, "jump table to block%s %s%s (:goto 0xADDRESS follows one)",
			 n == 1 ? "" : "s", sb.buf, n > 12 ? ", ..." : "");
	else
		tui_info(v->tui, "indirect jump: its targets are not known");
	strbuf_release(&sb);
}

/* Enter on an instruction: follow its branch or call. */
static void follow(struct view *v, size_t i)
{
	struct proc_view *pv = PRV(v);
	const struct listing *l = &pv->pd->l;
	const struct insn *in = l->insns[i].insn;
	char spec[32];
	long line;

	switch (in->kind) {
	case INSN_JUMP:
	case INSN_CJUMP:
	case INSN_CALL:
		break;
	case INSN_IJUMP:
		follow_switch(v, &l->insns[i]);
		return;
	case INSN_ICALL:
		tui_info(v->tui, "indirect call: its target is not known");
		return;
	case INSN_RET:
		tui_info(v->tui, "return: back (q) goes to where you came from");
		return;
	default:
		tui_info(v->tui, "Enter follows branches and calls; this instruction is neither");
		return;
	}
	if (!in->target) {
		tui_info(v->tui, "the target of this branch is not known");
		return;
	}
	if (in->kind != INSN_CALL && in->target >= l->cfg.start && in->target < l->cfg.end) {
		if ((line = address_line(v, in->target)) < 0) {
			errorf("0x%" PRIx64 " is not the start of an instruction of this procedure",
			       in->target);
			return;
		}
		jump_to_line(v, (size_t)line);
		return;
	}
	snprintf(spec, sizeof(spec), "0x%" PRIx64, in->target);
	tui_push(v->tui, v->ops, &(struct view_loc){ .epoch = v->loc.epoch,
		.image = (char *)pv->pd->image_key, .procedure = spec, .address = in->target });
}

static void enter(struct view *v)
{
	struct proc_view *pv = PRV(v);
	const struct pline *pl;

	if (v->pos >= pv->n || !listing_of(v)) {
		tui_info(v->tui, "nothing to open here");
		return;
	}
	pl = &pv->lines[v->pos];
	if (pl->kind == PL_INSN)
		follow(v, pl->idx);
	else
		tui_info(v->tui, "Enter on a branch or a call follows it");
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

static int cmp_rank(const void *a, const void *b, void *arg)
{
	const uint64_t *s = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (s[x] != s[y])
		return s[x] > s[y] ? -1 : 1;
	return (x > y) - (x < y);
}

/* H: the hottest block, or the next one down from where the cursor is. */
static void hottest(struct view *v)
{
	struct proc_view *pv = PRV(v);
	const struct listing *l = listing_of(v);
	size_t *rank, n = 0, cur_block = SIZE_MAX, pick;
	uint64_t total = proc_total(pv);

	if (!l || pv->event < 0 || !total) {
		errorf("no %s samples in this procedure",
		       pv->event >= 0 ? event_name((enum dcpi_event)pv->event) : "");
		return;
	}
	rank = xcalloc(l->cfg.n_blocks, sizeof(*rank));
	for (size_t b = 0; b < l->cfg.n_blocks; b++)
		if (pv->block_samples[b])
			rank[n++] = b;
	qsort_r(rank, n, sizeof(*rank), cmp_rank, pv->block_samples);
	if (v->pos < pv->n) {
		uint64_t a = line_address(v, v->pos);
		long b = a ? cfg_block_at(&l->cfg, a) : -1;

		cur_block = b >= 0 ? (size_t)b : SIZE_MAX;
	}
	pick = pv->hot_rank < n && rank[pv->hot_rank] == cur_block ? (pv->hot_rank + 1) % n : 0;
	pv->hot_rank = pick;
	view_move_to(v, pv->block_line[rank[pick]]);
	tui_info(v->tui, "%s block: %zu, %" PRIu64 " %s samples (%.1f%%)%s",
		 pick ? "next hottest" : "hottest", rank[pick], pv->block_samples[rank[pick]],
		 event_name((enum dcpi_event)pv->event),
		 100.0 * (double)pv->block_samples[rank[pick]] / (double)total,
		 n > 1 ? "; H again: the next" : "");
	free(rank);
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

static enum view_result proc_request(struct view *v, enum request req, const char *arg)
{
	switch (req) {
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

	if (l && parse_address(what, &addr)) {
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
	tui_complete_procedures(v->tui, v->loc.epoch, c);
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
	strbuf_addf(sb, "%s in %s: %zu instruction%s, %zu block%s", pd->name,
		    file_base(pd->image_path), l->n_insns, l->n_insns == 1 ? "" : "s",
		    l->cfg.n_blocks - 1, l->cfg.n_blocks == 2 ? "" : "s");
	if (pv->event >= 0) {
		uint64_t ep = pd->epoch_totals[pv->event];

		strbuf_addf(sb, ", %" PRIu64 " %s", l->totals[pv->event],
			    event_name((enum dcpi_event)pv->event));
		if (ep)
			strbuf_addf(sb, " (%.1f%%)", 100.0 * (double)l->totals[pv->event] / (double)ep);
	}
	if (pd->warning)
		strbuf_addstr(sb, " (forced)");
}

/* ---- the details pane: the procedure, and where the cursor is ----------------------- */

enum { PANE_PROC, PANE_IMAGE, PANE_SAMPLES, PANE_SOURCE, PANE_BLOCK, PANE_LINE, PANE__LINES };

static size_t proc_pane_lines(struct view *v)
{
	return listing_of(v) ? PANE__LINES : 0;
}

static void pane_samples(const struct proc_data *pd, struct strbuf *sb)
{
	const struct listing *l = &pd->l;

	for (size_t c = 0; c < l->n_events; c++) {
		enum dcpi_event e = l->events[c];

		strbuf_addf(sb, "%s%s %" PRIu64, c ? ", " : "", event_name(e), l->totals[e]);
		if (pd->epoch_totals[e])
			strbuf_addf(sb, " (%.2f%%)",
				    100.0 * (double)l->totals[e] / (double)pd->epoch_totals[e]);
		if (l->stray[e])
			strbuf_addf(sb, " [%" PRIu64 " not at an instruction start]", l->stray[e]);
	}
	if (!l->n_events)
		strbuf_addstr(sb, "none in this epoch");
}

static void pane_block(struct view *v, struct strbuf *sb)
{
	const struct cfg *cfg = &PRV(v)->pd->l.cfg;
	uint64_t a = line_address(v, v->pos);
	long b = a ? cfg_block_at(cfg, a) : -1;
	const struct cfg_block *blk;

	if (b < 0)
		return;
	blk = &cfg->blocks[b];
	strbuf_addf(sb, "%ld, class %d, %u instructions; to ", b, blk->cls, blk->n_insns);
	for (uint32_t k = 0; k < blk->n_succ; k++) {
		const struct cfg_edge *e = &cfg->edges[cfg->succ[blk->succ + k]];

		if (k)
			strbuf_addstr(sb, ", ");
		if (e->to == cfg->exit)
			strbuf_addf(sb, "outside (%s)", cfg_edge_kind_name(e->kind));
		else
			strbuf_addf(sb, "%u (%s)", e->to, cfg_edge_kind_name(e->kind));
	}
	if (!blk->n_succ)
		strbuf_addstr(sb, "nowhere");
}

static void pane_line(struct view *v, struct strbuf *sb)
{
	struct proc_view *pv = PRV(v);
	const struct listing *l = &pv->pd->l;
	uint64_t a = line_address(v, v->pos);
	long i = a ? cfg_insn_at(&l->cfg, a) : -1;
	const struct listing_insn *li;

	if (i < 0)
		return;
	li = &l->insns[i];
	strbuf_addf(sb, "0x%" PRIx64 " (%u bytes, %s)", li->insn->addr, li->insn->len,
		    insn_kind_name(li->insn->kind));
	if (li->line) {
		char *f = display_safe(file_base(li->line->file));

		strbuf_addf(sb, ", %s:%" PRIu32, f, li->line->line);
		free(f);
	}
	if (li->inl) {
		char *n = display_safe(li->inl->name);

		strbuf_addf(sb, ", inlined %s", n);
		free(n);
	}
}

static void proc_draw_pane(struct view *v, size_t line, struct draw *d)
{
	static const char *const labels[] = { "procedure", "image", "samples", "source", "block",
					      "cursor" };
	const struct proc_data *pd = PRV(v)->pd;
	const struct listing *l = &pd->l;
	struct strbuf sb = STRBUF_INIT;

	if (line >= PANE__LINES)
		return;
	switch (line) {
	case PANE_PROC:
		strbuf_addf(&sb, "%s 0x%" PRIx64 "-0x%" PRIx64 ", %zu classes", pd->name,
			    l->ref.proc->start, l->ref.proc->end, l->cfg.n_classes);
		if (l->cfg.flags & CFG_MISSING_EDGES)
			strbuf_addf(&sb, "; missing edges: %s",
				    l->cfg.missing_why ? l->cfg.missing_why : "?");
		break;
	case PANE_IMAGE:
		strbuf_addf(&sb, "%s (key %s)", pd->image_path, pd->image_key);
		if (pd->warning)
			strbuf_addf(&sb, "; forced: %s", pd->warning);
		break;
	case PANE_SAMPLES:
		pane_samples(pd, &sb);
		break;
	case PANE_SOURCE:
		if (pd->src_file)
			strbuf_addstr(&sb, pd->src_file);
		else
			strbuf_addf(&sb, "none: %s", l->src_why ? l->src_why : "?");
		break;
	case PANE_BLOCK:
		pane_block(v, &sb);
		break;
	case PANE_LINE:
		pane_line(v, &sb);
		break;
	}
	draw_printf(d, STYLE_DIM, " %-10s", labels[line]);
	draw_text(d, line == PANE_IMAGE && pd->warning ? STYLE_WARNING : STYLE_NORMAL, sb.buf);
	strbuf_release(&sb);
}

const struct view_ops procedure_view_ops = {
	.name = "procedure",
	.flags = VIEW_FOLLOWS_EPOCH | VIEW_CACHE_TEXT,
	.legend = "One procedure as dcpilist lists it: basic blocks (their class of equal\n"
		  "execution counts, where control comes from, their samples), each instruction's\n"
		  "address, samples per event and % of the procedure's samples of the current\n"
		  "event, source lines and inlined frames when there is DWARF (s hides them).\n"
		  "Enter on a branch goes to its target block, on a call or a tail call to the\n"
		  "procedure called; back (q) retraces the branches followed.  H visits the blocks\n"
		  "from the hottest down; :goto 0xADDRESS moves, :goto NAME opens a procedure; p\n"
		  "shows the procedure and the cursor's block and line in a pane.  A binary that is\n"
		  "missing, or changed since it was profiled, is refused (:force uses it anyway).",
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
