/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-draw.c - dcpicalc's text, shared with dcpi-tui (calc-draw.h): the
 * Figure 2 listing as lines (calc_render) drawn as styled segments
 * (calc_draw_line), the formatters its figures go through, and the Figure 4
 * summary, in full and in brief for the TUI's pane.
 */
#include "config.h"

#include "analysis/calc-draw.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "db/meta.h"
#include "disasm/decode.h"

#define TEXT_WIDTH 40       /* instruction text column */
#define BUBBLE_LINES_MAX 6  /* half-cycle lines before a stall is drawn scaled */

/* ---- small formatters ------------------------------------------------------------- */

/*
 * "?" for an unknown v (negative, or not finite), else v in format big
 * from big_from on, in format small below it.
 */
static void format_known(double v, double big_from, const char *big, const char *small,
			 char *buf, size_t size)
{
	if (v < 0 || !isfinite(v))
		snprintf(buf, size, "?");
	else
		snprintf(buf, size, v >= big_from ? big : small, v);
}

void calc_format_cycles(double cycles, char *buf, size_t size)
{
	format_known(cycles, 1000, "%.0fcy", "%.1fcy", buf, size);
}

/* "1234", "12.3", "0.52": a frequency or sample count in few characters. */
void calc_format_count(double v, char *buf, size_t size)
{
	format_known(v, 1e7, "%.3g", v >= 100 || v == floor(v) ? "%.0f" : v >= 10 ? "%.1f" : "%.2f",
		     buf, size);
}

void calc_format_execs(double v, char *buf, size_t size)
{
	format_known(v, 1e6, "%.3g", "%.0f", buf, size);
}

static int addr_width(const struct calc *c)
{
	char buf[32];

	return snprintf(buf, sizeof(buf), "%" PRIx64, c->list.ref.proc->end);
}

void calc_format_samples(const struct calc_insn *ci, char *buf, size_t size)
{
	calc_format_count(ci->flags & CALC_I_UNMEASURED ? -1 : ci->samples, buf, size);
	if (!(ci->flags & CALC_I_UNMEASURED) && ci->samples > 0 && ci->samples < 10 &&
	    ci->samples != floor(ci->samples))
		snprintf(buf, size, "%.1f", ci->samples);
}

void calc_format_fraction(double cycles, double n, double cpi, char *buf, size_t size)
{
	char num[32], den[32];

	calc_format_count(n, den, sizeof(den));
	if (cycles < 0) {
		snprintf(buf, size, "?/%s = ? CPI", den);
		return;
	}
	calc_format_count(cycles, num, sizeof(num));
	snprintf(buf, size, "%s/%s = %.2fCPI", num, den, cpi);
}

void calc_column_widths(const struct calc *c, int *samples_w, int *cpi_w)
{
	char buf[32];

	for (size_t i = 0; i < c->n_insns; i++) {
		calc_format_samples(&c->insns[i], buf, sizeof(buf));
		if ((int)strlen(buf) > *samples_w)
			*samples_w = (int)strlen(buf);
		calc_format_cycles(c->insns[i].cpi, buf, sizeof(buf));
		if ((int)strlen(buf) > *cpi_w)
			*cpi_w = (int)strlen(buf);
	}
}

enum style calc_conf_style(enum calc_conf c)
{
	switch (c) {
	case CALC_CONF_HIGH: return STYLE_CONF_HIGH;
	case CALC_CONF_MEDIUM: return STYLE_CONF_MEDIUM;
	case CALC_CONF_LOW: return STYLE_CONF_LOW;
	default: return STYLE_DIM;
	}
}

const char *calc_unmeasured_note(const struct calc_insn *ci)
{
	if (!(ci->flags & CALC_I_UNMEASURED))
		return NULL;
	return ci->insn->kind == INSN_CALL || ci->insn->kind == INSN_ICALL
	       ? "(time in the callee's entry)" : "(time recorded outside)";
}

/* ---- stalls and their reasons ------------------------------------------------------- */

bool calc_insn_stalled(const struct calc_insn *ci)
{
	return ci->culprits && ci->stall_dynamic >= 0.5;
}

bool calc_bubble_of(const struct calc *c, size_t i, struct calc_bubble *out)
{
	const struct calc_insn *ci = &c->insns[i];
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	if (ci->sreason != CALC_STATIC__COUNT && ci->stall_static >= 0.5) {
		out->static_cycles = ci->stall_static;
		out->static_letter = calc_static_letter(ci->sreason);
	}
	if (calc_insn_stalled(ci)) {
		out->dynamic_cycles = ci->stall_dynamic;
		for (size_t k = 0; k < CULPRIT__COUNT; k++)
			if (ci->culprits & CALC_CAUSE_CULPRIT(k))
				out->letters[n++] = calc_culprit_letter((enum calc_culprit)k);
	}
	return out->static_cycles > 0 || out->dynamic_cycles > 0;
}

void calc_describe_reasons(unsigned what, struct strbuf *sb)
{
	bool first = true;

	for (size_t k = 0; k < CULPRIT__COUNT; k++) {
		if (!(what & CALC_CAUSE_CULPRIT(k)))
			continue;
		strbuf_addf(sb, "%s%c %s", first ? "" : ", ", calc_culprit_letter((enum calc_culprit)k),
			    calc_culprit_name((enum calc_culprit)k));
		first = false;
	}
	for (size_t k = 0; k < CALC_STATIC__COUNT; k++) {
		if (!(what & CALC_CAUSE_STATIC(k)))
			continue;
		strbuf_addf(sb, "%s%c %s", first ? "" : ", ", calc_static_letter((enum calc_static)k),
			    calc_static_name((enum calc_static)k));
		first = false;
	}
}

void calc_describe_stall(const struct calc *c, size_t i, struct strbuf *sb)
{
	const struct calc_insn *ci = &c->insns[i];
	struct calc_bubble bb;
	char cy[32], best[32];

	calc_format_cycles(ci->cpi, cy, sizeof(cy));
	calc_format_cycles(ci->m, best, sizeof(best));
	strbuf_addf(sb, "%s per execution (best %s)", cy, best);
	if (!calc_bubble_of(c, i, &bb))
		return;
	if (bb.dynamic_cycles > 0) {
		calc_format_cycles(bb.dynamic_cycles, cy, sizeof(cy));
		strbuf_addf(sb, ", dynamic %s %s", cy, bb.letters);
	}
	if (bb.static_cycles > 0) {
		calc_format_cycles(bb.static_cycles, cy, sizeof(cy));
		strbuf_addf(sb, ", static %s %c", cy, bb.static_letter);
	}
}

void calc_describe_block(const struct calc *c, size_t b, struct strbuf *sb)
{
	const struct cfg *cfg = &c->list.cfg;
	const struct cfg_block *blk = &cfg->blocks[b];
	char f[32], ex[32];

	calc_format_count(c->blocks[b].freq, f, sizeof(f));
	calc_format_execs(c->blocks[b].execs, ex, sizeof(ex));
	strbuf_addf(sb, "%zu: freq %s, execs %s, confidence %s (%s); class %d, %u instructions; to ",
		    b, f, ex, calc_conf_name(c->blocks[b].conf), calc_how_name(c->blocks[b].how),
		    blk->cls, blk->n_insns);
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

void calc_describe_insn(const struct calc *c, size_t i, struct strbuf *sb)
{
	const struct listing_insn *li = &c->list.insns[i];

	strbuf_addf(sb, "0x%" PRIx64 " (%u bytes, %s)", li->insn->addr, li->insn->len,
		    insn_kind_name(li->insn->kind));
	if (li->line) {
		const char *slash = strrchr(li->line->file, '/');
		char *f = display_safe(slash ? slash + 1 : li->line->file);

		strbuf_addf(sb, ", %s:%" PRIu32, f, li->line->line);
		free(f);
	}
	if (li->inl) {
		char *n = display_safe(li->inl->name);

		strbuf_addf(sb, ", inlined %s", n);
		free(n);
	}
	strbuf_addstr(sb, "; ");
	calc_describe_stall(c, i, sb);
}

void calc_describe_proc(const struct calc *c, struct strbuf *sb)
{
	const struct listing *l = &c->list;
	char *name = display_safe(l->ref.proc->name);

	strbuf_addf(sb, "%s 0x%" PRIx64 "-0x%" PRIx64 ", %zu classes; model %s", name,
		    l->ref.proc->start, l->ref.proc->end, l->cfg.n_classes, c->model->name);
	if (l->cfg.flags & CFG_MISSING_EDGES)
		strbuf_addf(sb, "; missing edges: %s", l->cfg.missing_why ? l->cfg.missing_why : "?");
	free(name);
}

void calc_describe_samples(const struct calc *c, const uint64_t *epoch_totals, struct strbuf *sb)
{
	const struct listing *l = &c->list;

	for (size_t k = 0; k < l->n_events; k++) {
		enum dcpi_event e = l->events[k];

		strbuf_addf(sb, "%s%s %" PRIu64, k ? ", " : "", event_name(e), l->totals[e]);
		if (epoch_totals[e])
			strbuf_addf(sb, " (%.2f%%)", 100.0 * (double)l->totals[e] / (double)epoch_totals[e]);
		if (l->stray[e])
			strbuf_addf(sb, " [%" PRIu64 " not at an instruction start]", l->stray[e]);
	}
	if (!l->n_events)
		strbuf_addstr(sb, "none in this epoch");
	if (c->period > 0)
		strbuf_addf(sb, "; 1 sample = %.0f cycles", c->period);
	strbuf_addf(sb, ", skid %d", c->skid);
}

/* ---- the Figure 2 listing as lines ------------------------------------------------------ */

static struct calc_line *line_add(struct calc_lines *l, enum calc_line_kind kind, unsigned part,
				  long block, long insn)
{
	struct calc_line *x;

	ALLOC_GROW(l->v, l->n + 1, l->alloc);
	x = &l->v[l->n++];
	memset(x, 0, sizeof(*x));
	x->kind = kind;
	x->part = part;
	x->block = block;
	x->insn = insn;
	return x;
}

struct render {
	const struct calc *c;
	struct calc_lines *out;
	bool explained[128];          /* legend letters already explained */
	unsigned flags;               /* enum calc_render_flags */
};

static const char *letter_meaning(char ch)
{
	for (size_t k = 0; k < CULPRIT__COUNT; k++)
		if (calc_culprit_letter((enum calc_culprit)k) == ch)
			return calc_culprit_name((enum calc_culprit)k);
	for (size_t k = 0; k < CALC_STATIC__COUNT; k++)
		if (calc_static_letter((enum calc_static)k) == ch)
			return calc_static_name((enum calc_static)k);
	return ch == 'g' ? "unexplained gain" : "?";
}

/* The next letter of `letters` not explained yet (0 if none). */
static char next_legend(struct render *r, const char *letters)
{
	for (const char *p = letters; *p; p++)
		if (!r->explained[(unsigned char)*p]) {
			r->explained[(unsigned char)*p] = true;
			return *p;
		}
	return 0;
}

/*
 * Bubble lines for `cycles` of stall with these letters: one line per half
 * cycle, or three with "... N.Ncy" in the middle for a long stall; extra
 * lines while letters remain to be explained.
 */
static void bubble_lines(struct render *r, long b, long i, double cycles, const char *letters,
			 bool is_static)
{
	long half = lround(cycles * 2);
	bool scaled = half > BUBBLE_LINES_MAX;
	long lines = scaled ? 3 : (half > 0 ? half : 1);

	for (long k = 0; ; k++) {
		struct calc_line *x;

		if (k >= lines) {
			/* keep going only to explain letters */
			bool left = false;

			for (const char *p = letters; *p; p++)
				left |= !r->explained[(unsigned char)*p];
			if (!left)
				break;
		}
		x = line_add(r->out, CALC_LINE_BUBBLE, 0, b, i);
		x->is_static = is_static;
		snprintf(x->letters, sizeof(x->letters), "%s", letters);
		x->cycles = cycles;
		x->middle = scaled && k == 1;
		x->legend = next_legend(r, letters);
	}
}

/*
 * Bubbles above instruction i: its dynamic stall (culprit letters), then
 * its static stall (the schedule's reason).  An unexplained gain (fewer
 * cycles than M) gets no bubble, as in Figure 2: its CPI shows it, and the
 * summary adds the gains up.
 */
static void bubbles(struct render *r, size_t i)
{
	const struct calc_insn *ci = &r->c->insns[i];
	struct calc_bubble bb;

	if (!calc_bubble_of(r->c, i, &bb))
		return;
	if (bb.dynamic_cycles > 0)
		bubble_lines(r, ci->block, (long)i, bb.dynamic_cycles, bb.letters, false);
	if (bb.static_cycles > 0) {
		char l[2] = { bb.static_letter, 0 };

		bubble_lines(r, ci->block, (long)i, bb.static_cycles, l, true);
	}
}

void calc_render(const struct calc *c, struct calc_lines *out, unsigned flags)
{
	struct render r = { c, out, { false }, flags };
	const struct listing *l = &c->list;

	memset(out, 0, sizeof(*out));
	if (!(flags & CALC_RENDER_NO_HEADER)) {
		line_add(out, CALC_LINE_HEADER, CALC_HEAD_TITLE, -1, -1);
		line_add(out, CALC_LINE_HEADER, CALC_HEAD_RANGE, -1, -1);
		line_add(out, CALC_LINE_HEADER, CALC_HEAD_MODEL, -1, -1);
		line_add(out, CALC_LINE_HEADER, CALC_HEAD_SAMPLES, -1, -1);
		if (l->img->forced && l->img->why)
			line_add(out, CALC_LINE_HEADER, CALC_HEAD_FORCED, -1, -1);
		if (!c->has_time)
			line_add(out, CALC_LINE_HEADER, CALC_HEAD_NO_TIME, -1, -1);
		for (size_t k = 0; k < c->n_measured; k++)
			line_add(out, CALC_LINE_HEADER, CALC_HEAD_MEASURED, -1, -1)->item = k;
		for (size_t i = 0; i < c->n_insns; i++)
			if (c->insns[i].latency >= 0)
				line_add(out, CALC_LINE_HEADER, CALC_HEAD_LATENCY, -1, (long)i);
		if (c->paths.followed)
			line_add(out, CALC_LINE_HEADER, CALC_HEAD_BURSTS, -1, -1);
		if (c->pscale.source != CALC_PSCALE_NONE)
			line_add(out, CALC_LINE_HEADER, CALC_HEAD_PATHS, -1, -1);
		for (size_t k = 0; k < c->paths.n_conflicts; k++)
			line_add(out, CALC_LINE_HEADER, CALC_HEAD_CONFLICT, -1, -1)->item = k;
	}
	if (flags & CALC_RENDER_HEADER_ONLY)
		return;
	line_add(out, CALC_LINE_COLUMNS, 0, -1, -1);
	for (size_t b = 0; b + 1 < c->n_blocks; b++) {
		const struct cfg_block *blk = c->blocks[b].cfg;

		if (!blk->n_insns)
			continue;
		line_add(out, CALC_LINE_BLANK, 0, (long)b, -1);
		for (unsigned part = 0; part < 3; part++)
			line_add(out, CALC_LINE_BLOCK, part, (long)b, -1);
		for (uint32_t k = 0; k < blk->n_insns; k++) {
			size_t i = blk->first + k;

			if (l->insns[i].line && l->insns[i].new_line)
				line_add(out, CALC_LINE_SOURCE, 0, (long)b, (long)i);
			bubbles(&r, i);
			line_add(out, CALC_LINE_INSN, 0, (long)b, (long)i)->values =
				(flags & CALC_RENDER_VALUES) && i < c->vals.n && c->vals.insns[i].n;
		}
	}
}

void calc_lines_release(struct calc_lines *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---- drawing the lines ------------------------------------------------------------------- */

static const char no_time[] = "no time samples: frequencies unknown, best case only";

/* Where the cycles per sample came from, for the header. */
static const char *period_how(const struct calc *c)
{
	const char *s = c->period_source ? c->period_source : "none";

	return !strcmp(s, "cpu_mhz") ? "period x cpu MHz, not calibrated" : s;
}

/* "  bursts: 1.2e+06 instructions followed here (about 40 bursts); 3 ended here: 2 syscall, 1 unsupported" */
static void bursts_line(const struct calc *c, struct draw *d)
{
	const struct pathview *pv = &c->paths;
	uint64_t ended[PATHS_END__COUNT] = { 0 }, all = 0;
	const char *sep = ": ";

	draw_printf(d, STYLE_NORMAL, "  bursts: %.4g instructions followed here", (double)pv->followed);
	if (pv->img_insns)
		draw_printf(d, STYLE_NORMAL, " (about %.0f bursts)",
			    ceil((double)pv->followed * (double)pv->img_bursts / (double)pv->img_insns));
	for (size_t k = 0; k < pv->n_stops; k++) {
		ended[pv->stops[k].reason] += pv->stops[k].count;
		all += pv->stops[k].count;
	}
	if (!all)
		return;
	draw_printf(d, STYLE_NORMAL, "; %" PRIu64 " ended here", all);
	for (unsigned r = 0; r < PATHS_END__COUNT; r++)
		if (ended[r]) {
			draw_printf(d, STYLE_NORMAL, "%s%" PRIu64 " %s", sep, ended[r], paths_end_name(r));
			sep = ", ";
		}
}

/*
 * Where the counts from paths got the procedure's scale:
 * "  counts from paths: 3e+07 instructions ran here, 13333 a sample (+-3%): matched
 *  windows 3.1e+07 (225 began in its region, +-2%), the measured loop 2.9e+07 (+-5%)"
 */
static void paths_line(const struct calc *c, struct draw *d)
{
	const struct calc_pathscale *ps = &c->pscale;
	const char *sep = ": ";

	draw_printf(d, STYLE_NORMAL, "  counts from paths: %.4g instructions ran here, %.0f a sample (+-%.0f%%)",
		    ps->insns, ps->per_sample, 100 * ps->rel_error);
	for (unsigned k = CALC_PSCALE_WINDOWS; k < CALC_PSCALE__COUNT; k++) {
		if (!(ps->cand[k] > 0))
			continue;
		draw_printf(d, STYLE_NORMAL, "%s%s %.3g (", sep,
			    k == CALC_PSCALE_WINDOWS ? "matched windows" :
			    k == CALC_PSCALE_MEASURED ? "the measured loop" : "the model, low confidence",
			    ps->cand[k]);
		if (k == CALC_PSCALE_WINDOWS && ps->own)
			draw_printf(d, STYLE_NORMAL, "%.1f began in its region, ", ps->windows);
		else if (k == CALC_PSCALE_WINDOWS)
			draw_printf(d, STYLE_NORMAL, "other code's, at the image's samples a window, ");
		if (ps->cand_error[k] < 0)
			draw_printf(d, STYLE_WARNING, "left out: it disagrees)");
		else
			draw_printf(d, STYLE_NORMAL, "+-%.0f%%)", 100 * ps->cand_error[k]);
		sep = ", ";
	}
	if (!(ps->cand[CALC_PSCALE_WINDOWS] > 0))
		draw_printf(d, STYLE_NORMAL, "; no matched window ran here");
}

static void header_line(const struct calc *c, unsigned part, size_t item, long insn, struct draw *d)
{
	const struct listing *l = &c->list;
	const struct calc_summary *s = &c->summary;
	char lab[40];

	switch (part) {
	case CALC_HEAD_TITLE:
		listing_draw_title(l, d);
		break;
	case CALC_HEAD_RANGE:
		listing_draw_range(l, d, c->n_insns, c->n_blocks ? c->n_blocks - 1 : 0);
		draw_printf(d, STYLE_NORMAL, "; model %s", c->model->name);
		break;
	case CALC_HEAD_MODEL:
		/* "model:", not "model NAME": no bubble line's shape (a word, a space) */
		draw_printf(d, STYLE_NORMAL, "  model: %s (%s)", c->model->name, c->model_reason);
		break;
	case CALC_HEAD_SAMPLES:
		if (l->view)
			epoch_view_event_label(l->view, c->time_event, lab, sizeof(lab));
		else
			snprintf(lab, sizeof(lab), "%s", event_name(c->time_event));
		draw_printf(d, STYLE_NORMAL, "  %s: %.0f samples", lab, s->recorded);
		if (s->epoch_share > 0)
			draw_printf(d, STYLE_NORMAL, " (%.2f%% of the epoch)", 100 * s->epoch_share);
		if (c->period > 0) {
			draw_printf(d, STYLE_NORMAL, ", 1 sample = %.0f cycles (%s", c->period,
				    period_how(c));
			if (c->period_problem[0])
				draw_printf(d, STYLE_WARNING, "; %s", c->period_problem);
			draw_printf(d, STYLE_NORMAL, ")");
		}
		draw_printf(d, STYLE_NORMAL, ", skid %d", c->skid);
		break;
	case CALC_HEAD_FORCED:
		listing_draw_forced(l, d);
		break;
	case CALC_HEAD_NO_TIME:
		draw_printf(d, STYLE_WARNING, "  %s", no_time);
		break;
	case CALC_HEAD_MEASURED: {
		struct strbuf sb = STRBUF_INIT;

		measure_describe(&c->measured[item], l, &sb);
		draw_printf(d, STYLE_NORMAL, "  %s", sb.buf);
		strbuf_release(&sb);
		break;
	}
	case CALC_HEAD_LATENCY: {
		const struct calc_insn *ci = &c->insns[insn];

		draw_printf(d, STYLE_NORMAL, "  load at 0x%" PRIx64 ": %.1f cycles an execution, measured",
			    ci->insn->addr, ci->latency);
		if (ci->latency_level >= 0)
			draw_printf(d, STYLE_NORMAL, " (%s; the latencies here: L1 %.0f, L2 %.0f, L3 %.0f, "
				    "memory %.0f cycles)", calc_level_name(ci->latency_level),
				    c->ladder[CALC_L1], c->ladder[CALC_L2], c->ladder[CALC_L3],
				    c->ladder[CALC_MEMORY]);
		break;
	}
	case CALC_HEAD_BURSTS:
		bursts_line(c, d);
		break;
	case CALC_HEAD_PATHS:
		paths_line(c, d);
		break;
	case CALC_HEAD_CONFLICT: {
		const struct pathview_conflict *bc = &c->paths.conflicts[item];

		draw_printf(d, STYLE_NORMAL, "  %s at 0x%" PRIx64 ": the store at 0x%" PRIx64 ", %" PRIu64
			    " time%s in bursts",
			    bc->kind == PATHS_STORE_FORWARD ? "store forwarding failed" : "4K aliasing",
			    c->insns[bc->load].insn->addr, bc->store, bc->count, bc->count == 1 ? "" : "s");
		break;
	}
	}
}

static void columns_line(const struct calc *c, struct draw *d)
{
	draw_printf(d, STYLE_HEADER, "%*s  %-*s %8s %8s %c %s", addr_width(c), "Addr", TEXT_WIDTH,
		    "Instruction", "Samples", "CPI", 'C', "Culprit");
}

static void block_line(const struct calc *c, size_t b, unsigned part, struct draw *d)
{
	const struct calc_block *cb = &c->blocks[b];
	char f[32], ex[32];

	if (part) {
		double cycles = part == 1 ? cb->best_cycles : cb->cycles;

		calc_format_fraction(cycles, cb->n_insns, cb->n_insns ? cycles / cb->n_insns : 0, f,
				     sizeof(f));
		draw_printf(d, STYLE_BLOCK, "*** %-9s %s", part == 1 ? "Best-case" : "Actual", f);
		return;
	}
	calc_format_count(cb->freq, f, sizeof(f));
	calc_format_execs(cb->execs, ex, sizeof(ex));
	draw_printf(d, STYLE_BLOCK, "*** Block %zu  0x%" PRIx64 "-0x%" PRIx64 "  freq %s  execs %s  "
		    "confidence ", b, cb->cfg->start, cb->cfg->end, f, ex);
	draw_printf(d, calc_conf_style(cb->conf), "%s (%s)", calc_conf_name(cb->conf),
		    calc_how_name(cb->how));
	if (cb->cfg->flags & CFG_BLOCK_UNREACHABLE)
		draw_text(d, STYLE_WARNING, "  unreachable");
}

void calc_draw_bubble(const struct calc *c, const struct calc_line *l, struct draw *d)
{
	enum style st = l->is_static ? STYLE_BUBBLE_STATIC : STYLE_BUBBLE;
	int pad = 8 - (int)strlen(l->letters);

	draw_text(d, st, l->letters);
	if (l->middle) {
		char cy[32];

		calc_format_cycles(l->cycles, cy, sizeof(cy));
		draw_printf(d, st, "%*s ... %s", pad > 0 ? pad : 0, "", cy);
	}
	if (l->legend) {
		draw_text(d, st, l->middle ? " " : "   ");
		draw_printf(d, STYLE_DIM, "(%c = %s)", l->legend, letter_meaning(l->legend));
	}
}

/* "best-case 6/9 = 0.67CPI", as dcpicalc writes a block's cycles. */
static void draw_fraction(struct draw *d, enum style st, const char *what, double cycles,
			  unsigned n)
{
	char buf[64];

	calc_format_fraction(cycles, n, n ? cycles / n : 0, buf, sizeof(buf));
	draw_printf(d, cycles < 0 ? STYLE_DIM : st, "%s %s", what, buf);
}

void calc_draw_block_brief(const struct calc *c, size_t b, struct draw *d)
{
	const struct calc_block *cb = &c->blocks[b];
	char f[32], ex[32], letter[2] = { calc_conf_letter(cb->conf), 0 };
	bool slow = cb->cycles >= 0 && cb->cycles > cb->best_cycles + 0.5 * cb->n_insns;

	calc_format_count(cb->freq, f, sizeof(f));
	calc_format_execs(cb->execs, ex, sizeof(ex));
	draw_text(d, calc_conf_style(cb->conf), letter);
	draw_printf(d, STYLE_BLOCK, " freq %s  execs %s", f, ex);
	draw_text(d, STYLE_NORMAL, "  ");
	draw_fraction(d, STYLE_NORMAL, "best-case", cb->best_cycles, cb->n_insns);
	draw_text(d, STYLE_NORMAL, "  ");
	draw_fraction(d, slow ? STYLE_WORSE : STYLE_NORMAL, "actual", cb->cycles, cb->n_insns);
}

void calc_draw_causes(const struct calc_insn *ci, struct draw *d)
{
	if (ci->n_causes) {
		draw_space(d, STYLE_NORMAL, 2);
		draw_glyph(d, STYLE_BUBBLE, GLYPH_ARROW_LEFT);
		draw_space(d, STYLE_NORMAL, 1);
		for (size_t k = 0; k < ci->n_causes; k++) {
			if (k)
				draw_text(d, STYLE_DIM, ",");
			draw_printf(d, STYLE_TARGET, "%" PRIx64, ci->causes[k].addr);
		}
	}
	if (calc_unmeasured_note(ci))
		draw_printf(d, STYLE_DIM, "  %s", calc_unmeasured_note(ci));
}

/* s right-aligned in width, or all of it if it is wider. */
static void draw_right(struct draw *d, enum style st, const char *s, int width)
{
	int len = (int)strlen(s);

	draw_field(d, st, s, len > width ? len : width, ALIGN_RIGHT);
}

void calc_draw_insn_figures(const struct calc_insn *ci, int samples_w, int cpi_w, struct draw *d)
{
	char buf[32];

	calc_format_samples(ci, buf, sizeof(buf));
	draw_right(d, ci->samples > 0 && !(ci->flags & CALC_I_UNMEASURED) ? STYLE_NORMAL : STYLE_DIM,
		   buf, samples_w);
	calc_format_cycles(ci->cpi, buf, sizeof(buf));
	draw_space(d, STYLE_NORMAL, 1);
	draw_right(d, ci->cpi < 0 ? STYLE_DIM : calc_insn_stalled(ci) ? STYLE_BUBBLE : STYLE_NORMAL,
		   buf, cpi_w);
	draw_space(d, STYLE_NORMAL, 1);
	buf[0] = calc_conf_letter(ci->conf);
	buf[1] = '\0';
	draw_text(d, calc_conf_style(ci->conf), buf);
}

static void insn_line(const struct calc *c, size_t i, struct draw *d)
{
	const struct calc_insn *ci = &c->insns[i];
	char *text = display_safe(ci->insn->text);
	const char *note = calc_unmeasured_note(ci);

	if (strlen(text) > TEXT_WIDTH) {
		text[TEXT_WIDTH - 1] = '~';
		text[TEXT_WIDTH] = '\0';
	}
	draw_printf(d, STYLE_ADDRESS, "%*" PRIx64, addr_width(c), ci->insn->addr);
	draw_printf(d, STYLE_NORMAL, "  %-*s ", TEXT_WIDTH, text);
	calc_draw_insn_figures(ci, 8, 8, d);
	for (size_t k = 0; k < ci->n_causes; k++)
		draw_printf(d, STYLE_TARGET, "%c%" PRIx64, k ? ',' : ' ', ci->causes[k].addr);
	if (!note && ci->m <= 0 && ci->cpi >= 0 && ci->cpi < 0.5)
		note = "(same cycle)";
	if (note)
		draw_printf(d, STYLE_DIM, " %s", note);
	free(text);
}

void calc_draw_line(const struct calc *c, const struct calc_line *l, struct draw *d)
{
	switch (l->kind) {
	case CALC_LINE_HEADER:
		header_line(c, l->part, l->item, l->insn, d);
		break;
	case CALC_LINE_COLUMNS:
		columns_line(c, d);
		break;
	case CALC_LINE_BLOCK:
		block_line(c, (size_t)l->block, l->part, d);
		break;
	case CALC_LINE_BUBBLE:
		draw_space(d, STYLE_NORMAL, addr_width(c) + 2);
		calc_draw_bubble(c, l, d);
		break;
	case CALC_LINE_INSN:
		insn_line(c, (size_t)l->insn, d);
		if (l->values) {
			draw_text(d, STYLE_NORMAL, "  ");
			valprof_draw(&c->vals.insns[l->insn], d);
		}
		break;
	case CALC_LINE_SOURCE:
		draw_space(d, STYLE_NORMAL, addr_width(c) + 2);
		listing_draw_source(&c->list.insns[l->insn], d);
		break;
	case CALC_LINE_BLANK:
		break;
	}
}

void calc_line_text(const struct calc *c, const struct calc_line *l, struct strbuf *sb)
{
	struct draw d;

	draw_init_text(&d, sb, DRAW_UNBOUNDED, DRAW_UTF8);
	calc_draw_line(c, l, &d);
}

void calc_draw(const struct calc *c, struct draw *d, unsigned flags)
{
	struct calc_lines l;

	calc_render(c, &l, flags);
	for (size_t k = 0; k < l.n; k++) {
		calc_draw_line(c, &l.v[k], d);
		draw_eol(d);
	}
	calc_lines_release(&l);
}

/* ---- summary (Figure 4) -------------------------------------------------------------- */

/* The procedure's share of all samples, counting only those tallied here. */
static double tallied_share(const struct calc_summary *s)
{
	return 100 * s->epoch_share * (s->recorded > 0 ? s->samples / s->recorded : 0);
}

/* "3130/8112 = 0.39CPI" for the best case (which 0) or as measured (1); NULL if unknown. */
static const char *summary_cpi(const struct calc_summary *s, int which, char *buf, size_t size)
{
	if (!which) {
		calc_format_fraction(s->best_cycles, s->insns, s->best_cpi >= 0 ? s->best_cpi : 0,
				     buf, size);
		return buf;
	}
	if (s->cpi < 0)
		return NULL;
	calc_format_fraction(s->cpi * s->insns, s->insns, s->cpi, buf, size);
	return buf;
}

static void sum_line(struct draw *d, enum style st, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void sum_line(struct draw *d, enum style st, const char *what, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	char small[256];
	va_list ap;
	int n, k = -1;

	/* on the stack first (a strbuf formats twice past 64 bytes): 80,000 lines for libc */
	n = -1;
	if (strlen(what) < 200) {
		/* "*** %-34s " without formatting it */
		size_t w = strlen(what);

		memcpy(small, "*** ", 4);
		memcpy(small + 4, what, w);
		for (; w < 34; w++)
			small[4 + w] = ' ';
		small[4 + w] = ' ';
		n = (int)(5 + w);
		small[n] = '\0';
	}
	if (n >= 0 && (size_t)n < sizeof(small)) {
		va_start(ap, fmt);
		k = vsnprintf(small + n, sizeof(small) - (size_t)n, fmt, ap);
		va_end(ap);
	}
	if (k >= 0 && (size_t)k < sizeof(small) - (size_t)n) {
		n += k;
		while (n && isspace((unsigned char)small[n - 1]))
			n--;
		draw_textn(d, st, small, (size_t)n);
		draw_eol(d);
		return;
	}
	strbuf_addf(&sb, "*** %-34s ", what);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strbuf_rtrim(&sb);
	draw_text(d, st, sb.buf);
	draw_eol(d);
	strbuf_release(&sb);
}

static void sum_text(struct draw *d, enum style st, const char *text)
{
	draw_text(d, st, text);
	draw_eol(d);
}

static void summary_cpis(const struct calc *c, struct draw *d)
{
	const struct calc_summary *s = &c->summary;
	char buf[96];

	draw_printf(d, STYLE_NORMAL, "*** Best-case %s", summary_cpi(s, 0, buf, sizeof(buf)));
	draw_eol(d);
	if (summary_cpi(s, 1, buf, sizeof(buf)))
		draw_printf(d, STYLE_NORMAL, "*** Actual %s", buf);
	else
		draw_text(d, STYLE_NORMAL, "*** Actual ? (no frequency estimates)");
	draw_eol(d);
}

/* "D-cache miss or DTLB miss" (the culprits of mask), into sb. */
static void culprit_list(unsigned mask, const char *sep, struct strbuf *sb)
{
	unsigned n = 0, total = 0;

	for (size_t k = 0; k < CULPRIT__COUNT; k++)
		total += !!(mask & (1u << k));
	for (size_t k = 0; k < CULPRIT__COUNT; k++) {
		if (!(mask & (1u << k)))
			continue;
		strbuf_addf(sb, "%s%s", n ? (n + 1 == total ? sep : ", ") : "",
			    calc_culprit_name((enum calc_culprit)k));
		n++;
	}
}

void calc_dominant_text(const struct calc_summary *s, struct strbuf *sb)
{
	if (s->dominant >= 0) {
		strbuf_addstr(sb, calc_culprit_name((enum calc_culprit)s->dominant));
		return;
	}
	if (!s->candidates) {
		strbuf_addstr(sb, "none (no dynamic stall)");
		return;
	}
	strbuf_addstr(sb, "unknown: ");
	culprit_list(s->candidates, " or ", sb);
	if (s->candidates & (s->candidates - 1))
		strbuf_addstr(sb, " (their ranges overlap)");
	else
		strbuf_addf(sb, " (low confidence: %.0f%% of the samples high, %.0f%% needed)",
			    100 * s->high_share, 100 * CALC_DOMINANT_CONF);
}

/*
 * An unexplained gain beyond the sampling noise: the model's best case
 * for some instructions is more cycles than they were sampled for.  Said
 * in words with the bound, never as a negative share.
 */
static void disagreement_lines(const struct calc *c, struct draw *d)
{
	const struct calc_summary *s = &c->summary;

	if (!(s->disagreement > 0))
		return;
	draw_printf(d, STYLE_WARNING, "*** The model and the samples disagree by %.1f%% of the "
		    "samples, beyond the %.1f%%", calc_summary_pct(c, s->disagreement),
		    calc_summary_pct(c, s->noise));
	draw_eol(d);
	draw_text(d, STYLE_WARNING, "*** sampling noise: the model's best case is more cycles "
		  "than were sampled, so");
	draw_eol(d);
	draw_text(d, STYLE_WARNING, "*** execution and static stall above are too high by that much.");
	draw_eol(d);
}

void calc_draw_summary(const struct calc *c, struct draw *d)
{
	const struct calc_summary *s = &c->summary;
	const char *rule = "*** ----------------------------------------------";
	struct strbuf sb = STRBUF_INIT;

	summary_cpis(c, d);
	sum_text(d, STYLE_NORMAL, "***");
	sum_text(d, STYLE_DIM, "*** Dynamic stall by culprit, each a range: from the stall only it "
		 "can explain");
	sum_text(d, STYLE_DIM, "*** to all it may explain (culprits may share a stall), of the "
		 "subtotal below:");
	for (size_t k = 0; k < CULPRIT__COUNT; k++) {
		/* Only bursts find these: no line when they found none. */
		if ((k == CULPRIT_STORE_FWD || k == CULPRIT_ALIAS_4K) && !(s->dyn_hi[k] > 0))
			continue;
		sum_line(d, STYLE_BUBBLE, calc_culprit_name((enum calc_culprit)k), "%5.1f%% to %5.1f%%",
			 calc_summary_pct(c, s->dyn_lo[k]), calc_summary_pct(c, s->dyn_hi[k]));
	}
	sum_text(d, STYLE_DIM, rule);
	sum_line(d, STYLE_BUBBLE, "Subtotal dynamic", "%5.1f%%", calc_summary_pct(c, s->dynamic));
	sum_text(d, STYLE_NORMAL, "***");
	for (size_t k = 0; k < CALC_STATIC__COUNT; k++)
		sum_line(d, STYLE_BUBBLE_STATIC, calc_static_name((enum calc_static)k), "%5.1f%%",
			 calc_summary_pct(c, s->stat[k]));
	sum_text(d, STYLE_DIM, rule);
	sum_line(d, STYLE_BUBBLE_STATIC, "Subtotal static", "%5.1f%%", calc_summary_pct(c, s->static_total));
	sum_text(d, STYLE_DIM, rule);
	sum_line(d, STYLE_NORMAL, "Total stall", "%5.1f%%", calc_summary_pct(c, s->dynamic + s->static_total));
	sum_line(d, STYLE_NORMAL, "Execution", "%5.1f%%", calc_summary_pct(c, s->execution));
	if (s->unestimated > 0)
		sum_line(d, STYLE_NORMAL, "No frequency estimate", "%5.1f%%", calc_summary_pct(c, s->unestimated));
	sum_line(d, STYLE_NORMAL, "Net sampling error", "%5.1f%%  (noise: %.1f%%)",
		 calc_summary_pct(c, s->net_error), calc_summary_pct(c, s->noise));
	sum_text(d, STYLE_DIM, rule);
	sum_line(d, STYLE_NORMAL, "Total tallied", "%5.1f%%", s->samples > 0 ? 100.0 : 0);
	draw_printf(d, STYLE_NORMAL, "*** (%.0f, %.1f%% of all samples", s->samples, tallied_share(s));
	if (s->moved_out > 0.5)
		draw_printf(d, STYLE_NORMAL, "; %.0f recorded here measured callers or callees",
			    s->moved_out);
	draw_text(d, STYLE_NORMAL, ")");
	draw_eol(d);
	draw_printf(d, STYLE_NORMAL, "*** Confidence: %.0f%% of the samples high, %.0f%% low",
		    100 * s->high_share, 100 * s->low_share);
	draw_eol(d);
	calc_dominant_text(s, &sb);
	draw_printf(d, STYLE_NORMAL, "*** Dominant culprit: %s", sb.buf);
	draw_eol(d);
	strbuf_release(&sb);
	disagreement_lines(c, d);
}

void calc_summary_text(const struct calc *c, struct strbuf *sb)
{
	struct draw d;

	draw_init_text(&d, sb, DRAW_UNBOUNDED, DRAW_UTF8);
	calc_draw_summary(c, &d);
}

void calc_legend(struct strbuf *sb)
{
	strbuf_addstr(sb, "Dynamic stalls:");
	for (size_t k = 0; k < CULPRIT__COUNT; k++)
		strbuf_addf(sb, "%s%c %s", k % 3 == 0 ? "\n  " : ", ",
			    calc_culprit_letter((enum calc_culprit)k), calc_culprit_name((enum calc_culprit)k));
	strbuf_addstr(sb, "\nStatic stalls (from the schedule):");
	for (size_t k = 0; k < CALC_STATIC__COUNT; k++)
		strbuf_addf(sb, "%s%c %s", k % 3 == 0 ? "\n  " : ", ",
			    calc_static_letter((enum calc_static)k), calc_static_name((enum calc_static)k));
	strbuf_addstr(sb, "\nConfidence:");
	for (int k = CALC_CONF_HIGH; k > CALC_CONF_NONE; k--)
		strbuf_addf(sb, " %c %s,", calc_conf_letter((enum calc_conf)k),
			    calc_conf_name((enum calc_conf)k));
	strbuf_addf(sb, " %c no estimate.", calc_conf_letter(CALC_CONF_NONE));
}

/* ---- the summary in brief (dcpi-tui's pane) -------------------------------------------- */

/* "12.0%" or "12.0% to 27.9%"; false if both round to zero. */
static bool brief_range(const struct calc *c, double lo, double hi, struct strbuf *sb)
{
	char a[16], b[16];

	snprintf(a, sizeof(a), "%.1f", calc_summary_pct(c, lo));
	snprintf(b, sizeof(b), "%.1f", calc_summary_pct(c, hi));
	if (!strcmp(a, "0.0") && !strcmp(b, "0.0"))
		return false;
	if (!strcmp(a, b))
		strbuf_addf(sb, "%s%%", a);
	else
		strbuf_addf(sb, "%s%% to %s%%", a, b);
	return true;
}

static void brief_cpi(const struct calc *c, struct strbuf *sb)
{
	const struct calc_summary *s = &c->summary;
	char buf[96];

	if (!c->has_time) {
		strbuf_addstr(sb, no_time);
		return;
	}
	strbuf_addf(sb, "best-case %s, ", summary_cpi(s, 0, buf, sizeof(buf)));
	if (summary_cpi(s, 1, buf, sizeof(buf)))
		strbuf_addf(sb, "actual %s", buf);
	else
		strbuf_addstr(sb, "actual ? (no frequency estimates)");
	strbuf_addf(sb, "; confidence: %.0f%% of the samples high, %.0f%% low", 100 * s->high_share,
		    100 * s->low_share);
}

/* The dynamic stalls (those with cycles), with their letters. */
static void brief_dynamic(const struct calc *c, struct strbuf *sb)
{
	const struct calc_summary *s = &c->summary;
	struct strbuf item = STRBUF_INIT;
	bool any = false, explained = false;

	strbuf_addf(sb, "%.1f%%", calc_summary_pct(c, s->dynamic));
	for (size_t k = 0; k < CULPRIT__COUNT; k++) {
		strbuf_reset(&item);
		if (!brief_range(c, s->dyn_lo[k], s->dyn_hi[k], &item))
			continue;
		strbuf_addf(sb, "%s%c %s %s", any ? ", " : ": ", calc_culprit_letter((enum calc_culprit)k),
			    calc_culprit_name((enum calc_culprit)k), item.buf);
		/* the first range says what a range is */
		if (!explained && strstr(item.buf, " to ")) {
			strbuf_addstr(sb, " (the stall only it explains to all it may)");
			explained = true;
		}
		any = true;
	}
	if (s->disagreement > 0)
		strbuf_addf(sb, "%sthe model and the samples disagree by %.1f%% (noise %.1f%%)",
			    any ? "; " : ": ", calc_summary_pct(c, s->disagreement),
			    calc_summary_pct(c, s->noise));
	strbuf_release(&item);
}

static void brief_static(const struct calc *c, struct strbuf *sb)
{
	const struct calc_summary *s = &c->summary;
	bool any = false;

	strbuf_addf(sb, "%.1f%%", calc_summary_pct(c, s->static_total));
	for (size_t k = 0; k < CALC_STATIC__COUNT; k++) {
		struct strbuf item = STRBUF_INIT;

		if (brief_range(c, s->stat[k], s->stat[k], &item)) {
			strbuf_addf(sb, "%s%c %s %s", any ? ", " : ": ",
				    calc_static_letter((enum calc_static)k),
				    calc_static_name((enum calc_static)k), item.buf);
			any = true;
		}
		strbuf_release(&item);
	}
}

static void brief_total(const struct calc *c, struct strbuf *sb)
{
	const struct calc_summary *s = &c->summary;

	strbuf_addf(sb, "stall %.1f%%, execution %.1f%%, ", calc_summary_pct(c, s->dynamic + s->static_total),
		    calc_summary_pct(c, s->execution));
	if (s->unestimated > 0)
		strbuf_addf(sb, "no frequency estimate %.1f%%, ", calc_summary_pct(c, s->unestimated));
	strbuf_addf(sb, "net sampling error %.1f%% of %.0f samples tallied (%.1f%% of all)",
		    calc_summary_pct(c, s->net_error), s->samples, tallied_share(s));
}

void calc_draw_summary_brief(const struct calc *c, enum calc_brief line, struct draw *d)
{
	struct strbuf sb = STRBUF_INIT;

	if (line == CALC_BRIEF_CPI)
		brief_cpi(c, &sb);
	else if (!c->has_time)
		;  /* the CPI line said why there is nothing to show */
	else if (line == CALC_BRIEF_DYNAMIC)
		brief_dynamic(c, &sb);
	else if (line == CALC_BRIEF_STATIC)
		brief_static(c, &sb);
	else
		brief_total(c, &sb);
	draw_text(d, line == CALC_BRIEF_DYNAMIC ? STYLE_BUBBLE : STYLE_NORMAL, sb.buf);
	strbuf_release(&sb);
}
