/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-dot.c - the annotated control-flow graph of one procedure for
 * Graphviz (calc-dot.h): blocks with frequency, CPI and confidence, edges
 * with their kind and frequency.
 */
#include "config.h"

#include "analysis/calc-dot.h"

#include <inttypes.h>
#include <stdio.h>

#include "analysis/calc-draw.h"
#include "core/strbuf.h"

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

int calc_dot(const struct calc *c, FILE *out)
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
