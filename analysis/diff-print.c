/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/diff-print.c - dcpidiff's report: text (drawn, present/draw.h)
 * and JSON.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"

/* ---- text: the header ------------------------------------------------------- */

static void side_header(const struct diff *d, char side, const size_t *idx, size_t n,
			uint64_t total, const char *label, struct draw *dr)
{
	if (n == 1) {
		draw_printf(dr, STYLE_SECTION, "%c: %s: %" PRIu64 " samples of %s", side,
			    d->sets[idx[0]]->desc, total, label);
		draw_eol(dr);
		return;
	}
	draw_printf(dr, STYLE_SECTION, "%c: %zu sets, %" PRIu64 " samples of %s", side, n, total,
		    label);
	draw_eol(dr);
	for (size_t k = 0; k < n; k++) {
		draw_printf(dr, STYLE_NORMAL, "   %s: %s: %" PRIu64 " samples", d->sets[idx[k]]->spec,
			    d->sets[idx[k]]->desc, d->rows_src.totals[idx[k]]);
		draw_eol(dr);
	}
}

static const char *method_sentence(enum diff_method m)
{
	switch (m) {
	case DIFF_POISSON:
		return "counts as Poisson samples, conditional binomial test (one set per side)";
	case DIFF_WELCH:
		return "Welch's t-test on the sets' values: run-to-run variance (several sets per side)";
	case DIFF_PREDICTION:
		return "prediction-interval t-test of the single set against the other side's sets";
	default:
		return "none";
	}
}

static void how(const struct diff *d, struct draw *dr)
{
	bool multi = d->n_a > 1 || d->n_b > 1;
	struct strbuf sb = STRBUF_INIT;

	if (d->opts.norm == PSET_NORM_PERIOD)
		strbuf_addf(&sb, "Time: samples times sampling period (event counts or CPU time, for "
				 "runs of the same work),\nin percent of the mean total of the sets%s: "
				 "unchanged, a row has the same on both sides.\n"
				 "delta = time B - time A, points; ratio: B/A of the times.\n",
			    multi ? " (mean over a side's sets)" : "");
	else
		strbuf_addf(&sb, "Shares: percent of each side's total samples%s; delta = share B - "
				 "share A, points.\nRatio: B/A of the shares.\n",
			    multi ? " (mean over its sets)" : "");
	if (d->method == DIFF_UNTESTED)
		strbuf_addf(&sb, "Not tested: %s.\n", !d->total_a && !d->total_b
			    ? "neither side has samples" : !d->total_a ? "A has no samples"
							   : "B has no samples");
	else
		strbuf_addf(&sb, "Significant: q < %g (Benjamini-Hochberg) and a change of at least %.2f "
				 "points and %.0f%%.\nTest: %s.\n",
			    d->opts.alpha, d->opts.min_delta, (d->opts.min_ratio - 1) * 100,
			    method_sentence(d->method));
	draw_lines(dr, STYLE_DIM, sb.buf);
	strbuf_release(&sb);
}

static void header(const struct diff *d, struct draw *dr)
{
	char label[40];

	pset_event_label(d->sets, d->n_sets, d->event, label, sizeof(label));
	side_header(d, 'A', d->side_a, d->n_a, d->total_a, label, dr);
	side_header(d, 'B', d->side_b, d->n_b, d->total_b, label, dr);
	how(d, dr);
	for (size_t i = 0; i < d->rows_src.n_notes; i++) {
		draw_printf(dr, STYLE_WARNING, "note: %s", d->rows_src.notes[i]);
		draw_eol(dr);
	}
}

/* ---- text: rows --------------------------------------------------------------- */

void diff_format_ratio(double ratio, char *buf, size_t size)
{
	if (isnan(ratio))
		snprintf(buf, size, "-");
	else if (isinf(ratio))
		snprintf(buf, size, "new");
	else if (ratio == 0)
		snprintf(buf, size, "gone");
	else if (ratio >= 1000)
		snprintf(buf, size, "%.0fx", ratio);
	else
		snprintf(buf, size, "%.2fx", ratio);
}

enum style diff_row_style(const struct diff_row *r)
{
	if (!r->significant)
		return STYLE_DIM;
	return r->delta > 0 ? STYLE_WORSE : STYLE_BETTER;
}

struct cols {
	int count;    /* width of the sample columns */
	int name;     /* width of the name column */
	int addr;     /* width of the address column (instructions) */
	bool sd;      /* std-dev columns (several sets) */
	bool insns;   /* instruction rows */
};

static void add_numbers(const struct diff *d, const struct diff_row *r, struct cols c,
			struct draw *dr)
{
	enum style st = diff_row_style(r);
	char ratio[24];

	/* the shares, or the times by period: norm_a, norm_b, and their change, effect */
	draw_printf(dr, STYLE_NORMAL, "%*" PRIu64 " %6.2f%% ", c.count, r->a, r->norm_a);
	if (c.sd)
		draw_printf(dr, STYLE_NORMAL, "%5.2f ", r->sd_a);
	draw_printf(dr, STYLE_NORMAL, "%*" PRIu64 " %6.2f%% ", c.count, r->b, r->norm_b);
	if (c.sd)
		draw_printf(dr, STYLE_NORMAL, "%5.2f ", r->sd_b);
	diff_format_ratio(r->ratio, ratio, sizeof(ratio));
	draw_printf(dr, st, "%+7.2f %7s", r->effect, ratio);
	if (d->method == DIFF_UNTESTED)
		draw_printf(dr, STYLE_NORMAL, " %8s", "-");
	else
		draw_printf(dr, STYLE_NORMAL, " %8.2g", r->q);
	draw_printf(dr, st, "  %-12s", diff_verdict(d, r));
}

static void row_line(const struct diff *d, const struct diff_row *r, struct cols c,
		     struct draw *dr)
{
	char *name = display_safe(r->name), *image = display_safe(r->image);

	if (c.insns)
		draw_printf(dr, STYLE_ADDRESS, "%*" PRIx64 " ", c.addr, r->addr);
	add_numbers(d, r, c, dr);
	if (c.insns) {
		char *text = r->text ? display_safe(r->text) : NULL;

		draw_space(dr, STYLE_NORMAL, 1);
		draw_field(dr, STYLE_NORMAL, name, c.name, ALIGN_LEFT_MIDDLE);
		draw_printf(dr, STYLE_NORMAL, "  %s", text ? text : "");
		free(text);
	} else if (d->rows_src.level == PSET_IMAGES) {
		draw_printf(dr, STYLE_NORMAL, " %s", image);
	} else {
		/* a name too long for its column is cut in the middle: the images stay in line */
		int w = text_width(name, dr->flags), room = c.name - r->builds_differ;

		draw_space(dr, STYLE_NORMAL, 1);
		draw_field(dr, STYLE_NORMAL, name, w < room ? w : room, ALIGN_LEFT_MIDDLE);
		if (r->builds_differ)
			draw_text(dr, STYLE_WARNING, "*");
		draw_printf(dr, STYLE_NORMAL, "%*s  %s", room > w ? room - w : 0, "", image);
	}
	draw_eol(dr);
	free(name);
	free(image);
}

static struct cols diff_widths(const struct diff *d, unsigned flags, unsigned draw_flags)
{
	struct cols c = { 7, 9, 4, d->n_a > 1 || d->n_b > 1, d->rows_src.level == PSET_INSTRUCTIONS };

	for (size_t i = 0; i < d->n_rows; i++) {
		size_t src = diff_row_src(d, i);
		const struct pset_row *r = &d->rows_src.rows[src];
		char *safe = display_safe(r->name);
		size_t len = (size_t)text_width(safe, draw_flags) + r->builds_differ;
		char hex[20];
		int w = snprintf(hex, sizeof(hex), "%" PRIx64, r->addr);

		free(safe);
		if (w > c.addr)
			c.addr = w;

		if (((flags & DIFF_PRINT_ALL) || diff_src_shown(d, src)) && len > (size_t)c.name)
			c.name = len > DRAW_NAME_MAX ? DRAW_NAME_MAX : (int)len;
	}

	if (draw_digits(d->total_a) > c.count)
		c.count = draw_digits(d->total_a);
	if (draw_digits(d->total_b) > c.count)
		c.count = draw_digits(d->total_b);
	return c;
}

static void titles(const struct diff *d, struct cols c, struct draw *dr)
{
	if (c.insns)
		draw_printf(dr, STYLE_HEADER, "%*s ", c.addr, "Addr");
	bool time = d->opts.norm == PSET_NORM_PERIOD;

	draw_printf(dr, STYLE_HEADER, "%*s %7s ", c.count, "A", time ? "time A" : "share A");
	if (c.sd)
		draw_printf(dr, STYLE_HEADER, "%5s ", "sd A");
	draw_printf(dr, STYLE_HEADER, "%*s %7s ", c.count, "B", time ? "time B" : "share B");
	if (c.sd)
		draw_printf(dr, STYLE_HEADER, "%5s ", "sd B");
	draw_printf(dr, STYLE_HEADER, "%7s %7s %8s  %-12s ", "delta", "ratio", "q", "verdict");
	if (c.insns)
		draw_printf(dr, STYLE_HEADER, " %-*s  instruction", c.name, "at");
	else if (d->rows_src.level == PSET_IMAGES)
		draw_text(dr, STYLE_HEADER, " image");
	else
		draw_printf(dr, STYLE_HEADER, " %-*s  image", c.name, "procedure");
	draw_eol(dr);
}

static void proc_block(const struct diff *d, struct cols c, struct draw *dr)
{
	const struct diff_row *p = &d->proc;
	char *name = display_safe(p->name), *image = display_safe(p->image);
	struct cols whole = c;

	whole.insns = false;
	draw_eol(dr);
	draw_printf(dr, STYLE_SECTION, "Procedure %s in %s, as a whole:", name, image);
	draw_eol(dr);
	whole.name = (int)strlen(name);
	titles(d, whole, dr);
	add_numbers(d, p, whole, dr);
	draw_printf(dr, STYLE_NORMAL, " %s  %s", name, image);
	draw_eol(dr);
	if (d->unaligned) {
		draw_printf(dr, STYLE_WARNING, "note: %s: instructions cannot be aligned, "
			    "procedure-level only", d->unaligned);
		draw_eol(dr);
	} else {
		draw_eol(dr);
		draw_printf(dr, STYLE_SECTION, "Instructions, aligned by address (the same binary in "
			    "every set)%s:", d->rows_src.no_code
			    ? "; no code to show, sampled addresses only" : "");
		draw_eol(dr);
	}
	free(name);
	free(image);
}

static void rows(const struct diff *d, struct cols c, unsigned flags, size_t max_rows,
		 struct draw *dr)
{
	size_t shown = 0, hidden = 0, cut = 0;

	for (size_t i = 0; i < d->n_rows; i++) {
		struct diff_row row;

		if (!(flags & DIFF_PRINT_ALL) && !diff_src_shown(d, diff_row_src(d, i))) {
			hidden++;
		} else if (max_rows && shown >= max_rows) {
			cut++;
		} else {
			diff_row_get(d, i, &row);
			row_line(d, &row, c, dr);
			shown++;
		}
	}
	if (hidden && c.insns)
		draw_printf(dr, STYLE_DIM, "(%zu more instructions without samples: --all shows "
			    "them)", hidden);
	else if (hidden)
		draw_printf(dr, STYLE_DIM, "(%zu more rows within noise, below %.2f%% on both sides: "
			    "--all shows them)", hidden, DIFF_SHOW_MIN);
	if (hidden)
		draw_eol(dr);
	if (cut) {
		draw_printf(dr, STYLE_DIM, "(%zu more rows)", cut);
		draw_eol(dr);
	}
}

void diff_draw(const struct diff *d, struct draw *dr, unsigned flags, size_t max_rows)
{
	struct cols c = diff_widths(d, flags, dr->flags);

	header(d, dr);
	if (d->has_proc)
		proc_block(d, c, dr);
	if (d->unaligned)
		return;
	draw_eol(dr);
	draw_printf(dr, STYLE_NORMAL, "%zu significant change%s among %zu rows (%zu could be tested)",
		    d->n_significant, d->n_significant == 1 ? "" : "s", d->n_rows, d->n_tested);
	draw_eol(dr);
	titles(d, c, dr);
	rows(d, c, flags, max_rows, dr);
}

/* ---- JSON ------------------------------------------------------------------ */

static void json_side(const struct diff *d, struct json_writer *w, const char *key,
		      const size_t *idx, size_t n, uint64_t total)
{
	json_key(w, key);
	json_object_begin(w);
	json_key(w, "samples");
	json_u64(w, total);
	json_key(w, "sets");
	json_array_begin(w);
	for (size_t k = 0; k < n; k++) {
		json_object_begin(w);
		json_key(w, "name");
		json_string(w, d->sets[idx[k]]->spec);
		json_key(w, "description");
		json_string(w, d->sets[idx[k]]->desc);
		json_key(w, "samples");
		json_u64(w, d->rows_src.totals[idx[k]]);
		json_object_end(w);
	}
	json_array_end(w);
	json_object_end(w);
}

static const char *status_name(enum diff_status s)
{
	return s == DIFF_APPEARED ? "appeared" : s == DIFF_DISAPPEARED ? "disappeared" : "both";
}

static void json_row(const struct diff *d, const struct diff_row *r, bool image_level,
		     struct json_writer *w)
{
	bool tested = d->method != DIFF_UNTESTED;

	json_object_begin(w);
	json_key(w, "procedure");
	json_string(w, image_level ? NULL : r->name);
	json_key(w, "image");
	json_string(w, r->image);
	if (d->rows_src.level == PSET_INSTRUCTIONS || r->has_addr) {
		json_key(w, "address");
		if (r->has_addr)
			json_hex(w, r->addr);
		else
			json_null(w);
	}
	if (r->text) {
		json_key(w, "instruction");
		json_string(w, r->text);
	}
	json_key(w, "a");
	json_u64(w, r->a);
	json_key(w, "b");
	json_u64(w, r->b);
	json_key(w, "share_a");
	json_double(w, r->share_a, 8);
	json_key(w, "share_b");
	json_double(w, r->share_b, 8);
	json_key(w, "delta");
	json_double(w, r->delta, 8);
	if (d->opts.norm == PSET_NORM_PERIOD) {
		/* what the text shows by period; effect is their change */
		json_key(w, "time_a");
		json_double(w, r->norm_a, 8);
		json_key(w, "time_b");
		json_double(w, r->norm_b, 8);
	}
	json_key(w, "ratio");
	json_double(w, r->ratio, 8);
	json_key(w, "significant");
	json_bool(w, r->significant);
	json_key(w, "method");
	json_string(w, diff_method_name(d->method));
	json_key(w, "status");
	json_string(w, status_name(r->status));
	json_key(w, "verdict");
	json_string(w, diff_verdict(d, r));
	if (d->n_a > 1 || d->n_b > 1) {
		json_key(w, "sd_a");
		json_double(w, r->sd_a, 8);
		json_key(w, "sd_b");
		json_double(w, r->sd_b, 8);
	}
	json_key(w, "tested");
	json_bool(w, r->tested);
	json_key(w, "effect");
	json_double(w, r->effect, 8);
	json_key(w, "p");
	if (tested)
		json_double(w, r->p, 6);
	else
		json_null(w);
	json_key(w, "q");
	if (tested)
		json_double(w, r->q, 6);
	else
		json_null(w);
	json_key(w, "builds_differ");
	json_bool(w, r->builds_differ);
	json_object_end(w);
}

static void json_settings(const struct diff *d, struct json_writer *w)
{
	json_key(w, "event");
	json_string(w, event_name(d->event));
	json_key(w, "used");
	json_string(w, event_name(pset_event_used(d->sets, d->n_sets, d->event)));
	json_key(w, "level");
	json_string(w, pset_level_name(d->rows_src.level));
	json_key(w, "normalize");
	json_string(w, pset_norm_name(d->opts.norm));
	json_key(w, "method");
	json_string(w, diff_method_name(d->method));
	json_key(w, "alpha");
	json_double(w, d->opts.alpha, 6);
	json_key(w, "min_ratio");
	json_double(w, d->opts.min_ratio, 6);
	json_key(w, "min_delta");
	json_double(w, d->opts.min_delta, 6);
}

void diff_json(const struct diff *d, struct json_writer *w, size_t max_rows)
{
	size_t n = max_rows && max_rows < d->n_rows ? max_rows : d->n_rows;
	bool image_level = d->rows_src.level == PSET_IMAGES;

	json_object_begin(w);
	json_settings(d, w);
	json_side(d, w, "a", d->side_a, d->n_a, d->total_a);
	json_side(d, w, "b", d->side_b, d->n_b, d->total_b);
	json_key(w, "notes");
	json_array_begin(w);
	for (size_t i = 0; i < d->rows_src.n_notes; i++)
		json_string(w, d->rows_src.notes[i]);
	json_array_end(w);
	json_key(w, "procedure");
	if (d->has_proc)
		json_row(d, &d->proc, false, w);
	else
		json_null(w);
	json_key(w, "aligned");
	json_bool(w, d->has_proc && !d->unaligned);
	json_key(w, "unaligned");
	json_string(w, d->unaligned);
	json_key(w, "significant");
	json_u64(w, d->n_significant);
	json_key(w, "tested");
	json_u64(w, d->n_tested);
	json_key(w, "rows");
	json_array_begin(w);
	for (size_t i = 0; i < n; i++) {
		struct diff_row row;

		diff_row_get(d, i, &row);
		json_row(d, &row, image_level, w);
	}
	json_array_end(w);
	pset_damage_json(d->sets, d->n_sets, w);
	json_object_end(w);
}
