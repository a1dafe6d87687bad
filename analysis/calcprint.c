/*
 * analysis/calcprint.c - dcpicalc's reports, shared with dcpi-tui:
 * the Figure 2 listing as lines (calc_render), the Figure 4 summary, the
 * annotated CFG for Graphviz, JSON, and the procedures-view row.
 */
#include "config.h"

#include "analysis/calc.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "db/meta.h"

#define TEXT_WIDTH 40       /* instruction text column */
#define BUBBLE_LINES_MAX 6  /* half-cycle lines before a stall is drawn scaled */

/* ---- small formatters ------------------------------------------------------------- */

void calc_format_cycles(double cycles, char *buf, size_t size)
{
	if (cycles < 0 || !isfinite(cycles))
		snprintf(buf, size, "?");
	else if (cycles >= 1000)
		snprintf(buf, size, "%.0fcy", cycles);
	else
		snprintf(buf, size, "%.1fcy", cycles);
}

/* "1234", "12.3", "0.52": a frequency or sample count in few characters. */
void calc_format_count(double v, char *buf, size_t size)
{
	if (v < 0 || !isfinite(v))
		snprintf(buf, size, "?");
	else if (v >= 1e7)
		snprintf(buf, size, "%.3g", v);
	else if (v >= 100 || v == floor(v))
		snprintf(buf, size, "%.0f", v);
	else if (v >= 10)
		snprintf(buf, size, "%.1f", v);
	else
		snprintf(buf, size, "%.2f", v);
}

void calc_format_execs(double v, char *buf, size_t size)
{
	if (v < 0 || !isfinite(v))
		snprintf(buf, size, "?");
	else if (v >= 1e6)
		snprintf(buf, size, "%.3g", v);
	else
		snprintf(buf, size, "%.0f", v);
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

/* ---- bubbles -------------------------------------------------------------------------- */

bool calc_bubble_of(const struct calc *c, size_t i, struct calc_bubble *out)
{
	const struct calc_insn *ci = &c->insns[i];
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	if (ci->sreason != CALC_STATIC__COUNT && ci->stall_static >= 0.5) {
		out->static_cycles = ci->stall_static;
		out->static_letter = calc_static_letter(ci->sreason);
	}
	if (ci->culprits && ci->stall_dynamic >= 0.5) {
		out->dynamic_cycles = ci->stall_dynamic;
		for (size_t k = 0; k < CULPRIT__COUNT; k++)
			if (ci->culprits & (1u << k))
				out->letters[n++] = calc_culprit_letter((enum calc_culprit)k);
	}
	return out->static_cycles > 0 || out->dynamic_cycles > 0;
}

static void lines_add(struct calc_lines *l, enum calc_line_kind kind, long block, long insn,
		      bool is_static, struct strbuf *sb)
{
	struct calc_line *x;

	ALLOC_GROW(l->v, l->n + 1, l->alloc);
	x = &l->v[l->n++];
	x->kind = kind;
	x->block = block;
	x->insn = insn;
	x->is_static = is_static;
	x->text = strbuf_detach(sb, NULL);
}

struct render {
	const struct calc *c;
	struct calc_lines *out;
	int aw;                       /* address width */
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
		struct strbuf sb = STRBUF_INIT;
		char legend, cy[32];

		if (k >= lines) {
			/* keep going only to explain letters */
			bool left = false;

			for (const char *p = letters; *p; p++)
				left |= !r->explained[(unsigned char)*p];
			if (!left)
				break;
		}
		strbuf_addf(&sb, "%*s  %-8s", r->aw, "", letters);
		if (scaled && k == 1) {
			calc_format_cycles(cycles, cy, sizeof(cy));
			strbuf_addf(&sb, " ... %s", cy);
		}
		legend = next_legend(r, letters);
		if (legend) {
			strbuf_rtrim(&sb);
			strbuf_addf(&sb, "%s(%c = %s)", scaled && k == 1 ? " " : "   ", legend,
				    letter_meaning(legend));
		}
		strbuf_rtrim(&sb);
		lines_add(r->out, CALC_LINE_BUBBLE, b, i, is_static, &sb);
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

static void insn_note(const struct calc_insn *ci, struct strbuf *sb)
{
	if (ci->flags & CALC_I_UNMEASURED) {
		bool call = ci->insn->kind == INSN_CALL || ci->insn->kind == INSN_ICALL;

		strbuf_addstr(sb, call ? "(time in the callee's entry)" : "(time recorded outside)");
	} else if (ci->m <= 0 && ci->cpi >= 0 && ci->cpi < 0.5) {
		strbuf_addstr(sb, "(same cycle)");
	}
}

static void insn_line(struct render *r, size_t i)
{
	const struct calc *c = r->c;
	const struct calc_insn *ci = &c->insns[i];
	struct strbuf sb = STRBUF_INIT;
	char *text = display_safe(ci->insn->text), cpi[32], samples[32];
	size_t tl = strlen(text);

	if (tl > TEXT_WIDTH) {
		text[TEXT_WIDTH - 1] = '~';
		text[TEXT_WIDTH] = '\0';
	}
	calc_format_samples(ci, samples, sizeof(samples));
	calc_format_cycles(ci->cpi, cpi, sizeof(cpi));
	strbuf_addf(&sb, "%*" PRIx64 "  %-*s %8s %8s %c ", r->aw, ci->insn->addr, TEXT_WIDTH, text,
		    samples, cpi, calc_conf_letter(ci->conf));
	for (size_t k = 0; k < ci->n_causes; k++)
		strbuf_addf(&sb, "%s%" PRIx64, k ? "," : "", ci->causes[k].addr);
	if (ci->n_causes)
		strbuf_addch(&sb, ' ');
	insn_note(ci, &sb);
	strbuf_rtrim(&sb);
	if ((r->flags & CALC_RENDER_VALUES) && i < c->vals.n && c->vals.insns[i].n) {
		strbuf_addstr(&sb, "  ");
		valprof_format(&c->vals.insns[i], &sb);
	}
	lines_add(r->out, CALC_LINE_INSN, ci->block, (long)i, false, &sb);
	free(text);
}

static void cycles_fraction(struct strbuf *sb, const char *what, double cycles, unsigned n)
{
	char num[32];

	calc_format_count(cycles, num, sizeof(num));
	if (cycles < 0)
		strbuf_addf(sb, "*** %-9s ?/%u = ? CPI", what, n);
	else
		strbuf_addf(sb, "*** %-9s %s/%u = %.2fCPI", what, num, n, n ? cycles / n : 0);
}

static void block_header(struct render *r, size_t b)
{
	const struct calc *c = r->c;
	const struct calc_block *cb = &c->blocks[b];
	struct strbuf sb = STRBUF_INIT;
	char f[32], ex[32];

	calc_format_count(cb->freq, f, sizeof(f));
	calc_format_execs(cb->execs, ex, sizeof(ex));
	strbuf_addf(&sb, "*** Block %zu  0x%" PRIx64 "-0x%" PRIx64 "  freq %s  execs %s  confidence %s (%s)",
		    b, cb->cfg->start, cb->cfg->end, f, ex, calc_conf_name(cb->conf), calc_how_name(cb->how));
	if (cb->cfg->flags & CFG_BLOCK_UNREACHABLE)
		strbuf_addstr(&sb, "  unreachable");
	lines_add(r->out, CALC_LINE_BLOCK, (long)b, -1, false, &sb);
	cycles_fraction(&sb, "Best-case", cb->best_cycles, cb->n_insns);
	lines_add(r->out, CALC_LINE_BLOCK, (long)b, -1, false, &sb);
	cycles_fraction(&sb, "Actual", cb->cycles, cb->n_insns);
	lines_add(r->out, CALC_LINE_BLOCK, (long)b, -1, false, &sb);
}

/* Where the cycles per sample came from, for the header. */
static const char *period_how(const struct calc *c)
{
	const char *s = c->period_source ? c->period_source : "none";

	return !strcmp(s, "cpu_mhz") ? "period x cpu MHz, not calibrated" : s;
}

static void header(struct render *r)
{
	const struct calc *c = r->c;
	const struct listing *l = &c->list;
	const struct calc_summary *s = &c->summary;
	struct strbuf sb = STRBUF_INIT;
	char *name = display_safe(l->ref.proc->name), *path = display_safe(l->img->rec.path), lab[40];

	strbuf_addf(&sb, "Procedure %s in %s, epoch %" PRIu32, name, path, l->view ? l->view->seq : 0);
	lines_add(r->out, CALC_LINE_HEADER, -1, -1, false, &sb);
	strbuf_addf(&sb, "  0x%" PRIx64 "-0x%" PRIx64 ", %zu instructions, %zu basic blocks%s; model %s",
		    l->ref.proc->start, l->ref.proc->end, c->n_insns, c->n_blocks ? c->n_blocks - 1 : 0,
		    l->cfg.flags & CFG_MISSING_EDGES ? " (missing edges)" : "", c->model->name);
	lines_add(r->out, CALC_LINE_HEADER, -1, -1, false, &sb);
	if (l->view)
		epoch_view_event_label(l->view, c->time_event, lab, sizeof(lab));
	else
		snprintf(lab, sizeof(lab), "%s", event_name(c->time_event));
	strbuf_addf(&sb, "  %s: %.0f samples", lab, s->recorded);
	if (s->epoch_share > 0)
		strbuf_addf(&sb, " (%.2f%% of the epoch)", 100 * s->epoch_share);
	if (c->period > 0)
		strbuf_addf(&sb, ", 1 sample = %.0f cycles (%s)", c->period, period_how(c));
	strbuf_addf(&sb, ", skid %d", c->skid);
	lines_add(r->out, CALC_LINE_HEADER, -1, -1, false, &sb);
	if (l->img->forced && l->img->why) {
		char *why = display_safe(l->img->why);

		strbuf_addf(&sb, "  warning: %s", why);
		lines_add(r->out, CALC_LINE_HEADER, -1, -1, false, &sb);
		free(why);
	}
	if (!c->has_time) {
		strbuf_addstr(&sb, "  no time samples: frequencies unknown, best case only");
		lines_add(r->out, CALC_LINE_HEADER, -1, -1, false, &sb);
	}
	for (size_t k = 0; k < c->n_measured; k++) {
		strbuf_addstr(&sb, "  ");
		measure_describe(&c->measured[k], l, &sb);
		lines_add(r->out, CALC_LINE_HEADER, -1, -1, false, &sb);
	}
	for (size_t i = 0; i < c->n_insns; i++) {
		const struct calc_insn *ci = &c->insns[i];

		if (ci->latency < 0)
			continue;
		strbuf_addf(&sb, "  load at 0x%" PRIx64 ": %.1f cycles an execution, measured", ci->insn->addr,
			    ci->latency);
		if (ci->latency_level >= 0)
			strbuf_addf(&sb, " (%s; the latencies here: L1 %.0f, L2 %.0f, L3 %.0f, memory %.0f "
				    "cycles)", calc_level_name(ci->latency_level), c->ladder[CALC_L1],
				    c->ladder[CALC_L2], c->ladder[CALC_L3], c->ladder[CALC_MEMORY]);
		lines_add(r->out, CALC_LINE_HEADER, -1, -1, false, &sb);
	}
	if (c->bursts.bursts) {
		strbuf_addf(&sb, "  bursts: %zu through here (of %" PRIu64 " taken), %" PRIu64
			    " instructions stepped", c->bursts.bursts, c->bursts.seen, c->bursts.steps);
		lines_add(r->out, CALC_LINE_HEADER, -1, -1, false, &sb);
	}
	for (size_t k = 0; k < c->bursts.n_conflicts; k++) {
		const struct burst_conflict *bc = &c->bursts.conflicts[k];

		strbuf_addf(&sb, "  %s at 0x%" PRIx64 ": the store at 0x%" PRIx64 ", %" PRIu64 " time%s in bursts",
			    bc->kind == BURST_STORE_FORWARD ? "store forwarding failed" : "4K aliasing",
			    c->insns[bc->load].insn->addr, bc->store, bc->count, bc->count == 1 ? "" : "s");
		lines_add(r->out, CALC_LINE_HEADER, -1, -1, false, &sb);
	}
	free(name);
	free(path);
}

static void source_line(struct render *r, size_t i)
{
	const struct listing_insn *li = &r->c->list.insns[i];
	const char *file = li->line->file, *slash = strrchr(file, '/');
	char *f = display_safe(slash ? slash + 1 : file);
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "%*s  %s:%" PRIu32, r->aw, "", f, li->line->line);
	if (li->src_text) {
		char *t = display_safe(li->src_text);

		for (char *p = t; *p; p++)
			if (*p == '\t')
				*p = ' ';
		strbuf_addf(&sb, ":  %s", t);
		free(t);
	}
	strbuf_rtrim(&sb);
	lines_add(r->out, CALC_LINE_SOURCE, r->c->insns[i].block, (long)i, false, &sb);
	free(f);
}

void calc_render(const struct calc *c, struct calc_lines *out, unsigned flags)
{
	struct render r = { c, out, addr_width(c), { false }, flags };
	struct strbuf sb = STRBUF_INIT;

	memset(out, 0, sizeof(*out));
	if (!(flags & CALC_RENDER_NO_HEADER))
		header(&r);
	strbuf_addf(&sb, "%*s  %-*s %8s %8s %c %s", r.aw, "Addr", TEXT_WIDTH, "Instruction", "Samples",
		    "CPI", 'C', "Culprit");
	lines_add(out, CALC_LINE_COLUMNS, -1, -1, false, &sb);
	for (size_t b = 0; b + 1 < c->n_blocks; b++) {
		const struct cfg_block *blk = c->blocks[b].cfg;

		if (!blk->n_insns)
			continue;
		lines_add(out, CALC_LINE_BLANK, (long)b, -1, false, &sb);
		block_header(&r, b);
		for (uint32_t k = 0; k < blk->n_insns; k++) {
			size_t i = blk->first + k;

			if (c->list.insns[i].line && c->list.insns[i].new_line)
				source_line(&r, i);
			bubbles(&r, i);
			insn_line(&r, i);
		}
	}
	strbuf_release(&sb);
}

void calc_lines_release(struct calc_lines *l)
{
	for (size_t k = 0; k < l->n; k++)
		free(l->v[k].text);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int calc_print_text(const struct calc *c, FILE *out)
{
	struct calc_lines l;

	calc_render(c, &l, c->opts.values ? CALC_RENDER_VALUES : 0);
	for (size_t k = 0; k < l.n; k++) {
		fputs(l.v[k].text, out);
		fputc('\n', out);
	}
	calc_lines_release(&l);
	return ferror(out) ? -1 : 0;
}

/* ---- summary (Figure 4) -------------------------------------------------------------- */

static double pct(const struct calc *c, double v)
{
	return c->summary.samples > 0 ? 100.0 * v / c->summary.samples : 0;
}

static void sum_line(struct strbuf *sb, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void sum_line(struct strbuf *sb, const char *what, const char *fmt, ...)
{
	va_list ap;

	strbuf_addf(sb, "*** %-34s ", what);
	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
	strbuf_rtrim(sb);
	strbuf_addch(sb, '\n');
}

void calc_summary_text(const struct calc *c, struct strbuf *sb)
{
	const struct calc_summary *s = &c->summary;
	const char *rule = "*** ----------------------------------------------\n";
	char n1[32], n2[32];

	calc_format_count(s->best_cycles, n1, sizeof(n1));
	calc_format_count(s->insns, n2, sizeof(n2));
	strbuf_addf(sb, "*** Best-case %s/%s = %.2fCPI\n", n1, n2, s->best_cpi >= 0 ? s->best_cpi : 0);
	calc_format_count(s->cpi >= 0 ? s->cpi * s->insns : -1, n1, sizeof(n1));
	if (s->cpi >= 0)
		strbuf_addf(sb, "*** Actual %s/%s = %.2fCPI\n", n1, n2, s->cpi);
	else
		strbuf_addstr(sb, "*** Actual ? (no frequency estimates)\n");
	strbuf_addstr(sb, "***\n");
	for (size_t k = 0; k < CULPRIT__COUNT; k++) {
		/* Only bursts find these: no line when they found none. */
		if ((k == CULPRIT_STORE_FWD || k == CULPRIT_ALIAS_4K) && !(s->dyn_hi[k] > 0))
			continue;
		sum_line(sb, calc_culprit_name((enum calc_culprit)k), "%5.1f%% to %5.1f%%",
			 pct(c, s->dyn_lo[k]), pct(c, s->dyn_hi[k]));
	}
	sum_line(sb, "unexplained gain", "%5.1f%% to %5.1f%%", pct(c, s->gain), pct(c, s->gain));
	strbuf_addstr(sb, rule);
	sum_line(sb, "Subtotal dynamic", "%5.1f%%", pct(c, s->dynamic));
	strbuf_addstr(sb, "***\n");
	for (size_t k = 0; k < CALC_STATIC__COUNT; k++)
		sum_line(sb, calc_static_name((enum calc_static)k), "%5.1f%%", pct(c, s->stat[k]));
	strbuf_addstr(sb, rule);
	sum_line(sb, "Subtotal static", "%5.1f%%", pct(c, s->static_total));
	strbuf_addstr(sb, rule);
	sum_line(sb, "Total stall", "%5.1f%%", pct(c, s->dynamic + s->static_total));
	sum_line(sb, "Execution", "%5.1f%%", pct(c, s->execution));
	if (s->unestimated > 0)
		sum_line(sb, "No frequency estimate", "%5.1f%%", pct(c, s->unestimated));
	sum_line(sb, "Net sampling error", "%5.1f%%", pct(c, s->net_error));
	strbuf_addstr(sb, rule);
	sum_line(sb, "Total tallied", "%5.1f%%", s->samples > 0 ? 100.0 : 0);
	strbuf_addf(sb, "*** (%.0f, %.1f%% of all samples", s->samples, 100 * s->epoch_share *
		    (s->recorded > 0 ? s->samples / s->recorded : 0));
	if (s->moved_out > 0.5)
		strbuf_addf(sb, "; %.0f recorded here measured callers or callees", s->moved_out);
	strbuf_addstr(sb, ")\n");
	strbuf_addf(sb, "*** Confidence: %.0f%% of the samples high, %.0f%% low\n", 100 * s->high_share,
		    100 * s->low_share);
}

/* ---- dot ---------------------------------------------------------------------------------- */

static const char *conf_colour(enum calc_conf c)
{
	switch (c) {
	case CALC_CONF_HIGH: return "darkgreen";
	case CALC_CONF_MEDIUM: return "darkorange";
	case CALC_CONF_LOW: return "red";
	default: return "gray";
	}
}

static void dot_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\l", out);
		else if (ch < 0x20 || ch >= 0x7f)
			fprintf(out, "\\\\x%02x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}

int calc_print_dot(const struct calc *c, FILE *out)
{
	const struct cfg *cfg = &c->list.cfg;
	struct strbuf sb = STRBUF_INIT;

	fputs("digraph ", out);
	dot_string(out, c->list.ref.proc->name);
	fputs(" {\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n", out);
	for (size_t b = 0; b < c->n_blocks; b++) {
		const struct calc_block *cb = &c->blocks[b];
		char f[32], ex[32], cpi[32], best[32];

		strbuf_setlen(&sb, 0);
		calc_format_count(cb->freq, f, sizeof(f));
		calc_format_execs(cb->execs, ex, sizeof(ex));
		if (b == cfg->exit) {
			strbuf_addf(&sb, "EXIT\ninvocations %s (execs %s)\n", f, ex);
		} else {
			snprintf(cpi, sizeof(cpi), cb->cpi >= 0 ? "%.2f" : "?", cb->cpi);
			snprintf(best, sizeof(best), "%.2f", cb->best_cpi);
			strbuf_addf(&sb, "%zu: 0x%" PRIx64 "-0x%" PRIx64 "\nfreq %s  execs %s\nCPI %s (best %s)\nconfidence %s (%s)\n",
				    b, cb->cfg->start, cb->cfg->end, f, ex, cpi, best,
				    calc_conf_name(cb->conf), calc_how_name(cb->how));
		}
		fprintf(out, "  b%zu [label=", b);
		dot_string(out, sb.buf);
		fprintf(out, ", color=%s%s];\n", conf_colour(cb->conf),
			b == cfg->exit ? ", shape=ellipse" : "");
	}
	for (size_t e = 0; e < c->n_edges; e++) {
		const struct calc_edge *ce = &c->edges[e];
		char f[32];

		calc_format_count(ce->freq, f, sizeof(f));
		strbuf_setlen(&sb, 0);
		strbuf_addf(&sb, "%s %s", cfg_edge_kind_name(ce->cfg->kind), f);
		fprintf(out, "  b%u -> b%u [label=", ce->cfg->from, ce->cfg->to);
		dot_string(out, sb.buf);
		fprintf(out, ", color=%s];\n", conf_colour(ce->conf));
	}
	fputs("}\n", out);
	strbuf_release(&sb);
	return ferror(out) ? -1 : 0;
}

/* ---- JSON ---------------------------------------------------------------------------------- */

static void json_num(struct json_writer *w, double v)
{
	if (v < 0 || !isfinite(v))
		json_null(w);
	else
		json_double(w, v, 6);
}

static void json_samples(struct json_writer *w, const struct calc *c, const uint64_t *raw)
{
	json_object_begin(w);
	for (size_t k = 0; k < c->list.n_events; k++) {
		json_key(w, event_name(c->list.events[k]));
		json_u64(w, raw[c->list.events[k]]);
	}
	json_object_end(w);
}

static void json_culprits(struct json_writer *w, const struct calc_insn *ci)
{
	json_array_begin(w);
	for (size_t k = 0; k < CULPRIT__COUNT; k++) {
		if (!(ci->culprits & (1u << k)))
			continue;
		json_object_begin(w);
		json_key(w, "reason");
		json_string(w, calc_culprit_key((enum calc_culprit)k));
		json_key(w, "addrs");
		json_array_begin(w);
		for (size_t j = 0; j < ci->n_causes; j++)
			if (ci->causes[j].what & (1u << k))
				json_hex(w, ci->causes[j].addr);
		json_array_end(w);
		json_object_end(w);
	}
	json_array_end(w);
}

static void json_static(struct json_writer *w, const struct calc_insn *ci)
{
	if (ci->sreason == CALC_STATIC__COUNT) {
		json_null(w);
		return;
	}
	json_object_begin(w);
	json_key(w, "reason");
	json_string(w, calc_static_key(ci->sreason));
	json_key(w, "cycles");
	json_double(w, ci->stall_static, 4);
	json_key(w, "addrs");
	json_array_begin(w);
	for (size_t j = 0; j < ci->n_causes; j++)
		if (ci->causes[j].what & (1u << (16 + ci->sreason)))
			json_hex(w, ci->causes[j].addr);
	json_array_end(w);
	json_object_end(w);
}

static void json_insn(struct json_writer *w, const struct calc *c, const struct calc_insn *ci)
{
	json_object_begin(w);
	json_key(w, "addr");
	json_hex(w, ci->insn->addr);
	json_key(w, "text");
	json_string(w, ci->insn->text);
	json_key(w, "block");
	json_i64(w, ci->block);
	json_key(w, "samples");
	json_samples(w, c, ci->raw);
	json_key(w, "attributed");
	if (ci->flags & CALC_I_UNMEASURED)
		json_null(w);
	else
		json_double(w, ci->samples, 6);
	json_key(w, "m");
	json_double(w, ci->m, 4);
	json_key(w, "m_capped");
	json_bool(w, ci->flags & CALC_I_CAPPED);
	json_key(w, "freq");
	json_num(w, ci->freq);
	json_key(w, "execs");
	json_num(w, ci->execs);
	json_key(w, "cpi");
	json_num(w, ci->cpi);
	json_key(w, "confidence");
	json_string(w, calc_conf_name(ci->conf));
	json_key(w, "stall_static");
	json_static(w, ci);
	json_key(w, "stall_dynamic");
	json_double(w, ci->stall_dynamic, 4);
	json_key(w, "culprits");
	json_culprits(w, ci);
	if (ci->flags & CALC_I_UNMEASURED) {
		json_key(w, "unmeasured");
		json_bool(w, true);
	}
	if (c->opts.values && c->vals.n) {
		json_key(w, "values");
		valprof_json(&c->vals.insns[ci - c->insns], w);
	}
	if (c->bursts.n_conflicts) {
		bool any = false;

		for (size_t k = 0; k < c->bursts.n_conflicts; k++) {
			const struct burst_conflict *bc = &c->bursts.conflicts[k];

			if (bc->load != (size_t)(ci - c->insns))
				continue;
			if (!any) {
				json_key(w, "burst_conflicts");
				json_array_begin(w);
				any = true;
			}
			json_object_begin(w);
			json_key(w, "kind");
			json_string(w, bc->kind == BURST_STORE_FORWARD ? "store-forward" : "alias-4k");
			json_key(w, "store");
			json_hex(w, bc->store);
			json_key(w, "count");
			json_u64(w, bc->count);
			json_object_end(w);
		}
		if (any)
			json_array_end(w);
	}
	if (ci->latency >= 0) {
		json_key(w, "latency");
		json_object_begin(w);
		json_key(w, "cycles");
		json_double(w, ci->latency, 4);
		json_key(w, "level");
		json_string(w, ci->latency_level >= 0 ? calc_level_name(ci->latency_level) : NULL);
		json_object_end(w);
	}
	if (c->bursts.bursts && (ci->insn->kind == INSN_CJUMP) &&
	    c->bursts.taken[ci - c->insns] + c->bursts.fallthrough[ci - c->insns]) {
		json_key(w, "burst_outcomes");
		json_object_begin(w);
		json_key(w, "taken");
		json_u64(w, c->bursts.taken[ci - c->insns]);
		json_key(w, "fallthrough");
		json_u64(w, c->bursts.fallthrough[ci - c->insns]);
		json_object_end(w);
	}
	json_object_end(w);
}

static void json_block(struct json_writer *w, const struct calc *c, size_t b)
{
	const struct calc_block *cb = &c->blocks[b];

	json_object_begin(w);
	json_key(w, "index");
	json_u64(w, b);
	json_key(w, "start");
	json_hex(w, cb->cfg->start);
	json_key(w, "end");
	json_hex(w, cb->cfg->end);
	json_key(w, "class");
	json_i64(w, cb->cfg->cls);
	json_key(w, "freq");
	json_num(w, cb->freq);
	json_key(w, "execs");
	json_num(w, cb->execs);
	json_key(w, "confidence");
	json_string(w, calc_conf_name(cb->conf));
	json_key(w, "how");
	json_string(w, calc_how_name(cb->how));
	json_key(w, "best_cpi");
	json_double(w, cb->best_cpi, 4);
	json_key(w, "cpi");
	json_num(w, cb->cpi);
	json_key(w, "best_cycles");
	json_double(w, cb->best_cycles, 4);
	json_key(w, "cycles");
	json_num(w, cb->cycles);
	json_key(w, "samples");
	json_double(w, cb->samples, 6);
	json_object_end(w);
}

static void json_edge(struct json_writer *w, const struct calc *c, size_t e)
{
	const struct calc_edge *ce = &c->edges[e];
	const struct cfg *cfg = &c->list.cfg;

	json_object_begin(w);
	json_key(w, "from");
	if (ce->cfg->from == cfg->exit)
		json_string(w, "exit");
	else
		json_u64(w, ce->cfg->from);
	json_key(w, "to");
	if (ce->cfg->to == cfg->exit)
		json_string(w, "exit");
	else
		json_u64(w, ce->cfg->to);
	json_key(w, "kind");
	json_string(w, cfg_edge_kind_name(ce->cfg->kind));
	json_key(w, "site");
	json_hex(w, ce->cfg->site);
	json_key(w, "freq");
	json_num(w, ce->freq);
	json_key(w, "execs");
	json_num(w, ce->execs);
	json_key(w, "confidence");
	json_string(w, calc_conf_name(ce->conf));
	json_key(w, "how");
	json_string(w, calc_how_name(ce->how));
	json_object_end(w);
}

static void json_pct(struct json_writer *w, const struct calc *c, const char *key, double v)
{
	json_key(w, key);
	json_double(w, pct(c, v), 4);
}

static void json_summary(struct json_writer *w, const struct calc *c)
{
	const struct calc_summary *s = &c->summary;

	json_object_begin(w);
	json_key(w, "samples");
	json_double(w, s->samples, 8);
	json_key(w, "recorded");
	json_double(w, s->recorded, 8);
	json_key(w, "moved_out");
	json_double(w, s->moved_out, 8);
	json_key(w, "best_cpi");
	json_num(w, s->best_cpi);
	json_key(w, "cpi");
	json_num(w, s->cpi);
	json_key(w, "dynamic");
	json_object_begin(w);
	for (size_t k = 0; k < CULPRIT__COUNT; k++) {
		json_key(w, calc_culprit_key((enum calc_culprit)k));
		json_array_begin(w);
		json_double(w, pct(c, s->dyn_lo[k]), 4);
		json_double(w, pct(c, s->dyn_hi[k]), 4);
		json_array_end(w);
	}
	json_pct(w, c, "gain", s->gain);
	json_object_end(w);
	json_pct(w, c, "dynamic_total", s->dynamic);
	json_key(w, "static");
	json_object_begin(w);
	for (size_t k = 0; k < CALC_STATIC__COUNT; k++)
		json_pct(w, c, calc_static_key((enum calc_static)k), s->stat[k]);
	json_object_end(w);
	json_pct(w, c, "static_total", s->static_total);
	json_pct(w, c, "execution", s->execution);
	json_pct(w, c, "unestimated", s->unestimated);
	json_pct(w, c, "net_sampling_error", s->net_error);
	json_key(w, "epoch_share");
	json_double(w, s->epoch_share, 6);
	json_key(w, "high_confidence_share");
	json_double(w, s->high_share, 4);
	json_key(w, "dominant");
	if (s->dominant >= 0)
		json_string(w, calc_culprit_key((enum calc_culprit)s->dominant));
	else
		json_null(w);
	json_object_end(w);
}

void calc_json(const struct calc *c, struct json_writer *w)
{
	const struct listing *l = &c->list;

	json_object_begin(w);
	json_key(w, "name");
	json_string(w, l->ref.proc->name);
	json_key(w, "image");
	json_string(w, l->img->rec.path);
	json_key(w, "start");
	json_hex(w, l->ref.proc->start);
	json_key(w, "end");
	json_hex(w, l->ref.proc->end);
	json_key(w, "missing_edges");
	json_bool(w, l->cfg.flags & CFG_MISSING_EDGES);
	json_key(w, "model");
	json_string(w, c->model->name);
	json_key(w, "model_exact");
	json_bool(w, c->model_exact);
	json_key(w, "event");
	json_string(w, event_name(c->time_event));
	json_key(w, "period_cycles");
	json_num(w, c->period > 0 ? c->period : -1);
	json_key(w, "period_source");
	json_string(w, c->period_source ? c->period_source : "none");
	json_key(w, "skid");
	json_i64(w, c->skid);
	json_key(w, "invocations");
	json_num(w, c->invocations);
	json_key(w, "summary");
	json_summary(w, c);
	json_key(w, "blocks");
	json_array_begin(w);
	for (size_t b = 0; b + 1 < c->n_blocks; b++)
		json_block(w, c, b);
	json_array_end(w);
	json_key(w, "edges");
	json_array_begin(w);
	for (size_t e = 0; e < c->n_edges; e++)
		json_edge(w, c, e);
	json_array_end(w);
	json_key(w, "instructions");
	json_array_begin(w);
	for (size_t i = 0; i < c->n_insns; i++)
		json_insn(w, c, &c->insns[i]);
	json_array_end(w);
	json_key(w, "measured");
	json_array_begin(w);
	for (size_t k = 0; k < c->n_measured; k++)
		measure_json(&c->measured[k], &c->list, w);
	json_array_end(w);
	json_object_end(w);
}

/* ---- procedures view ---------------------------------------------------------------------- */

void calc_procrow(const struct calc *c, struct calc_procrow *row)
{
	const struct calc_summary *s = &c->summary;

	row->samples = s->samples;
	row->cpi = s->cpi;
	row->best_cpi = s->best_cpi;
	row->dominant = s->dominant;
	row->dominant_share = s->dominant >= 0 && s->samples > 0 ? s->dyn_hi[s->dominant] / s->samples : 0;
	row->high_share = s->high_share;
}
