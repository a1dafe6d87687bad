/*
 * analysis/diff-print.c - dcpidiff's report: text and JSON.
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
			uint64_t total, const char *label, struct strbuf *sb)
{
	if (n == 1) {
		strbuf_addf(sb, "%c: %s: %" PRIu64 " samples of %s\n", side, d->sets[idx[0]]->desc,
			    total, label);
		return;
	}
	strbuf_addf(sb, "%c: %zu sets, %" PRIu64 " samples of %s\n", side, n, total, label);
	for (size_t k = 0; k < n; k++)
		strbuf_addf(sb, "   %s: %s: %" PRIu64 " samples\n", d->sets[idx[k]]->spec,
			    d->sets[idx[k]]->desc, d->rows_src.totals[idx[k]]);
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

static void how(const struct diff *d, struct strbuf *sb)
{
	bool multi = d->n_a > 1 || d->n_b > 1;

	strbuf_addf(sb, "Shares: percent of each side's total samples%s; delta = share B - share A, "
			"points.\n", multi ? " (mean over its sets)" : "");
	if (d->opts.norm == PSET_NORM_PERIOD)
		strbuf_addstr(sb, "Ratio: B/A of samples times sampling period (normalised by period: "
				  "event counts\nor CPU time, for runs of the same work).\n");
	else
		strbuf_addstr(sb, "Ratio: B/A of the shares.\n");
	if (d->method == DIFF_UNTESTED) {
		strbuf_addf(sb, "Not tested: %s.\n", !d->total_a && !d->total_b
			    ? "neither side has samples" : !d->total_a ? "A has no samples"
							   : "B has no samples");
		return;
	}
	strbuf_addf(sb, "Significant: q < %g (Benjamini-Hochberg) and a change of at least %.2f "
			"points and %.0f%%.\nTest: %s.\n",
		    d->opts.alpha, d->opts.min_delta, (d->opts.min_ratio - 1) * 100,
		    method_sentence(d->method));
}

static void header(const struct diff *d, struct strbuf *sb)
{
	char label[40];

	pset_event_label(d->sets, d->n_sets, d->event, label, sizeof(label));
	side_header(d, 'A', d->side_a, d->n_a, d->total_a, label, sb);
	side_header(d, 'B', d->side_b, d->n_b, d->total_b, label, sb);
	how(d, sb);
	for (size_t i = 0; i < d->rows_src.n_notes; i++)
		strbuf_addf(sb, "note: %s\n", d->rows_src.notes[i]);
}

/* ---- text: rows --------------------------------------------------------------- */

static void add_ratio(struct strbuf *sb, double ratio)
{
	if (isnan(ratio))
		strbuf_addf(sb, "%7s", "-");
	else if (isinf(ratio))
		strbuf_addf(sb, "%7s", "new");
	else if (ratio == 0)
		strbuf_addf(sb, "%7s", "gone");
	else if (ratio >= 1000)
		strbuf_addf(sb, "%6.0fx", ratio);
	else
		strbuf_addf(sb, "%6.2fx", ratio);
}

struct cols {
	int count;    /* width of the sample columns */
	int name;     /* width of the name column */
	int addr;     /* width of the address column (instructions) */
	bool sd;      /* std-dev columns (several sets) */
	bool insns;   /* instruction rows */
};

static void add_numbers(const struct diff *d, const struct diff_row *r, struct cols c,
			struct strbuf *sb)
{
	strbuf_addf(sb, "%*" PRIu64 " %6.2f%% ", c.count, r->a, r->share_a);
	if (c.sd)
		strbuf_addf(sb, "%5.2f ", r->sd_a);
	strbuf_addf(sb, "%*" PRIu64 " %6.2f%% ", c.count, r->b, r->share_b);
	if (c.sd)
		strbuf_addf(sb, "%5.2f ", r->sd_b);
	strbuf_addf(sb, "%+7.2f ", r->delta);
	add_ratio(sb, r->ratio);
	if (d->method == DIFF_UNTESTED)
		strbuf_addf(sb, " %8s", "-");
	else
		strbuf_addf(sb, " %8.2g", r->q);
	strbuf_addf(sb, "  %-12s", diff_verdict(d, r));
}

static void row_line(const struct diff *d, const struct diff_row *r, struct cols c,
		     struct strbuf *sb)
{
	char *name = display_safe(r->name), *image = display_safe(r->image);

	if (c.insns)
		strbuf_addf(sb, "%*" PRIx64 " ", c.addr, r->addr);
	add_numbers(d, r, c, sb);
	if (c.insns) {
		char *text = r->text ? display_safe(r->text) : NULL;

		strbuf_addf(sb, " %-*s  %s\n", c.name, name, text ? text : "");
		free(text);
	} else if (d->rows_src.level == PSET_IMAGES) {
		strbuf_addf(sb, " %s\n", image);
	} else {
		int pad = c.name - (int)strlen(name) - r->builds_differ;

		strbuf_addf(sb, " %s%s%*s  %s\n", name, r->builds_differ ? "*" : "", pad > 0 ? pad : 0,
			    "", image);
	}
	free(name);
	free(image);
}

static int digits(uint64_t v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

static struct cols measure(const struct diff *d, unsigned flags)
{
	struct cols c = { 7, 9, 4, d->n_a > 1 || d->n_b > 1, d->rows_src.level == PSET_INSTRUCTIONS };

	for (size_t i = 0; i < d->n_rows; i++) {
		size_t len = strlen(d->rows[i].name) + d->rows[i].builds_differ;
		char hex[20];
		int w = snprintf(hex, sizeof(hex), "%" PRIx64, d->rows[i].addr);

		if (w > c.addr)
			c.addr = w;

		if (((flags & DIFF_PRINT_ALL) || diff_row_shown(d, &d->rows[i])) && len > (size_t)c.name)
			c.name = len > 40 ? 40 : (int)len;
	}

	if (digits(d->total_a) > c.count)
		c.count = digits(d->total_a);
	if (digits(d->total_b) > c.count)
		c.count = digits(d->total_b);
	return c;
}

static void titles(const struct diff *d, struct cols c, struct strbuf *sb)
{
	if (c.insns)
		strbuf_addf(sb, "%*s ", c.addr, "Addr");
	strbuf_addf(sb, "%*s %7s ", c.count, "A", "share A");
	if (c.sd)
		strbuf_addf(sb, "%5s ", "sd A");
	strbuf_addf(sb, "%*s %7s ", c.count, "B", "share B");
	if (c.sd)
		strbuf_addf(sb, "%5s ", "sd B");
	strbuf_addf(sb, "%7s %7s %8s  %-12s ", "delta", "ratio", "q", "verdict");
	if (c.insns)
		strbuf_addf(sb, " %-*s  instruction\n", c.name, "at");
	else if (d->rows_src.level == PSET_IMAGES)
		strbuf_addstr(sb, " image\n");
	else
		strbuf_addf(sb, " %-*s  image\n", c.name, "procedure");
}

static void proc_block(const struct diff *d, struct cols c, struct strbuf *sb)
{
	const struct diff_row *p = &d->proc;
	char *name = display_safe(p->name), *image = display_safe(p->image);
	struct cols whole = c;

	whole.insns = false;
	strbuf_addf(sb, "\nProcedure %s in %s, as a whole:\n", name, image);
	whole.name = (int)strlen(name);
	titles(d, whole, sb);
	add_numbers(d, p, whole, sb);
	strbuf_addf(sb, " %s  %s\n", name, image);
	if (d->unaligned)
		strbuf_addf(sb, "note: %s: instructions cannot be aligned, procedure-level only\n",
			    d->unaligned);
	else
		strbuf_addf(sb, "\nInstructions, aligned by address (the same binary in every set)%s:\n",
			    d->rows_src.no_code ? "; no code to show, sampled addresses only" : "");
	free(name);
	free(image);
}

int diff_print_text(const struct diff *d, FILE *out, unsigned flags, size_t max_rows)
{
	struct strbuf sb = STRBUF_INIT;
	struct cols c = measure(d, flags);
	size_t shown = 0, hidden = 0, cut = 0;
	int r;

	header(d, &sb);
	if (d->has_proc)
		proc_block(d, c, &sb);
	if (!d->unaligned) {
		strbuf_addf(&sb, "\n%zu significant change%s among %zu rows (%zu could be tested)\n",
			    d->n_significant, d->n_significant == 1 ? "" : "s", d->n_rows,
			    d->n_tested);
		titles(d, c, &sb);
		for (size_t i = 0; i < d->n_rows; i++) {
			const struct diff_row *row = &d->rows[i];

			if (!(flags & DIFF_PRINT_ALL) && !diff_row_shown(d, row))
				hidden++;
			else if (max_rows && shown >= max_rows)
				cut++;
			else {
				row_line(d, row, c, &sb);
				shown++;
			}
		}
		if (hidden && c.insns)
			strbuf_addf(&sb, "(%zu more instructions without samples: --all shows them)\n",
				    hidden);
		else if (hidden)
			strbuf_addf(&sb, "(%zu more rows within noise, below %.2f%% on both sides: "
					 "--all shows them)\n", hidden, DIFF_SHOW_MIN);
		if (cut)
			strbuf_addf(&sb, "(%zu more rows)\n", cut);
	}
	fwrite(sb.buf, 1, sb.len, out);
	r = fflush(out) || ferror(out) ? -1 : 0;
	strbuf_release(&sb);
	return r;
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

int diff_print_json(const struct diff *d, FILE *out, size_t max_rows)
{
	size_t n = max_rows && max_rows < d->n_rows ? max_rows : d->n_rows;
	bool image_level = d->rows_src.level == PSET_IMAGES;
	struct json_writer w;

	json_init(&w, out, true);
	json_object_begin(&w);
	json_settings(d, &w);
	json_side(d, &w, "a", d->side_a, d->n_a, d->total_a);
	json_side(d, &w, "b", d->side_b, d->n_b, d->total_b);
	json_key(&w, "notes");
	json_array_begin(&w);
	for (size_t i = 0; i < d->rows_src.n_notes; i++)
		json_string(&w, d->rows_src.notes[i]);
	json_array_end(&w);
	json_key(&w, "procedure");
	if (d->has_proc)
		json_row(d, &d->proc, false, &w);
	else
		json_null(&w);
	json_key(&w, "aligned");
	json_bool(&w, d->has_proc && !d->unaligned);
	json_key(&w, "unaligned");
	json_string(&w, d->unaligned);
	json_key(&w, "significant");
	json_u64(&w, d->n_significant);
	json_key(&w, "tested");
	json_u64(&w, d->n_tested);
	json_key(&w, "rows");
	json_array_begin(&w);
	for (size_t i = 0; i < n; i++)
		json_row(d, &d->rows[i], image_level, &w);
	json_array_end(&w);
	json_object_end(&w);
	return json_finish(&w);
}
