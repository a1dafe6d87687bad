/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-draw.h - dcpicalc's text, shared with dcpi-tui: the
 * analysis of one procedure (calc.h) as the Figure 2 listing, line by line,
 * and the Figure 4 summary, drawn as styled segments (present/draw.h); the
 * formatters every view of the analysis uses for its figures.
 *
 *   struct calc_lines lines;                        // Figure 2, line by line
 *   calc_render(&c, &lines, 0);
 *   for (size_t k = 0; k < lines.n; k++)            // .kind, .insn, .block ...
 *           calc_draw_line(&c, &lines.v[k], &d), draw_eol(&d);
 *   calc_lines_release(&lines);
 *
 * calc_draw() does the same in one call (dcpicalc).
 */
#ifndef DCPI_CORE_ANALYSIS_CALC_DRAW_H
#define DCPI_CORE_ANALYSIS_CALC_DRAW_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/calc.h"
#include "present/draw.h"

struct strbuf;

/* ---- the listing (dcpicalc's text, the TUI's procedure view) -------------------- */

enum calc_line_kind {
	CALC_LINE_HEADER,   /* procedure, image, epoch, model, period (part: enum calc_head) */
	CALC_LINE_BLOCK,    /* part 0 "*** Block ...", 1 "*** Best-case ...", 2 "*** Actual ..." */
	CALC_LINE_BUBBLE,   /* a stall bubble above an instruction (letters, maybe a legend) */
	CALC_LINE_INSN,     /* an instruction */
	CALC_LINE_SOURCE,   /* a source line (opts.source) */
	CALC_LINE_COLUMNS,  /* the column titles */
	CALC_LINE_BLANK,
};

enum calc_head {
	CALC_HEAD_TITLE,    /* "Procedure NAME in PATH, epoch N" */
	CALC_HEAD_RANGE,    /* addresses, instructions, blocks, model */
	CALC_HEAD_SAMPLES,  /* samples, share of the epoch, cycles per sample, skid */
	CALC_HEAD_FORCED,   /* a changed binary used anyway */
	CALC_HEAD_NO_TIME,  /* no time samples */
	CALC_HEAD_MEASURED, /* a measured count (item: its index in c->measured) */
	CALC_HEAD_LATENCY,  /* a load's measured cycles (insn: the load) */
	CALC_HEAD_BURSTS,   /* bursts through the procedure, and where they ended */
	CALC_HEAD_PATHS,    /* where the counts from paths got their scale */
	CALC_HEAD_CONFLICT, /* a memory-ordering conflict (item: its index in c->paths.conflicts) */
	CALC_HEAD_MODEL,    /* the processor model and why it was chosen */
};

/*
 * A line of the listing: what it is about; calc_draw_line() draws it.  No
 * text is kept: the TUI draws the same lines from the same data.
 */
struct calc_line {
	enum calc_line_kind kind;
	unsigned part;      /* HEADER: enum calc_head; BLOCK: 0, 1, 2 (above) */
	long block;         /* the block it belongs to, or -1 */
	long insn;          /* the instruction (INSN, BUBBLE, SOURCE, HEADER LATENCY), or -1 */
	size_t item;        /* HEADER MEASURED, CONFLICT: which one */
	bool values;        /* INSN: its values at the end (CALC_RENDER_VALUES) */
	/* BUBBLE */
	bool is_static;     /* a static stall line (else dynamic) */
	char letters[CULPRIT__COUNT + 1];  /* its reasons' letters */
	double cycles;      /* the stall, in cycles */
	bool middle;        /* the line of a long stall that says how long ("... 18.0cy") */
	char legend;        /* the letter it explains at its end ("(d = D-cache miss)"), or 0 */
};

struct calc_lines {
	struct calc_line *v;
	size_t n, alloc;
};

enum calc_render_flags {
	CALC_RENDER_NO_HEADER = (1 << 0), /* no procedure header lines */
	CALC_RENDER_VALUES = (1 << 1),    /* each instruction's values at the end of its line */
	CALC_RENDER_HEADER_ONLY = (1 << 2), /* the procedure header lines, nothing after them */
};

/*
 * The Figure 2 listing of c, one line each: per block its header (address
 * range, frequency, execs, confidence, "Best-case x/y = CPI", "Actual
 * x/y = CPI"), then the instructions (address, text, samples, CPI,
 * confidence letter, culprit addresses) with bubbles above the stalled ones
 * (one line per half cycle of stall, or three lines with "... N.Ncy" for
 * long stalls; letters for the reasons, each letter explained once, at the
 * end of the first bubble line it appears on: "(d = D-cache miss)").
 */
void calc_render(const struct calc *c, struct calc_lines *out, unsigned flags);
void calc_lines_release(struct calc_lines *l);

/* Draws line l of c's listing as styled segments (no line end: present/draw.h). */
void calc_draw_line(const struct calc *c, const struct calc_line *l, struct draw *d);
/*
 * A BUBBLE line without its indentation: the letters, "... 18.0cy" on the
 * middle line of a long stall, the legend ("(d = D-cache miss)", dim).
 */
void calc_draw_bubble(const struct calc *c, const struct calc_line *l, struct draw *d);
/*
 * A block's analysis in brief, as dcpi-tui's procedure view draws it under
 * the block: "L freq 80  execs 2.08e+07  best-case 1/3 = 0.33CPI  actual
 * 1/3 = 0.33CPI" (the confidence letter in its style, actual in the worse
 * style when half a cycle an instruction above the best case).
 */
void calc_draw_block_brief(const struct calc *c, size_t b, struct draw *d);
/*
 * True if instruction ci stalled for a reason the analysis found (a
 * dynamic stall of half a cycle or more with culprits): its CPI is drawn in
 * the bubble style, and its bubble lines have letters.  The one rule of
 * dcpicalc and dcpi-tui.
 */
bool calc_insn_stalled(const struct calc_insn *ci);
/*
 * An instruction's figures as dcpicalc's row has them, one space apart:
 * its samples after the skid model (calc_format_samples(), right-aligned
 * in samples_w; dim without samples of its own), its CPI (in cpi_w: dim
 * when unknown, in the bubble style when calc_insn_stalled()), its
 * confidence letter in its style.
 */
void calc_draw_insn_figures(const struct calc_insn *ci, int samples_w, int cpi_w, struct draw *d);
/* An instruction's culprit addresses, "  <- 401050,401060", and why it has no samples. */
void calc_draw_causes(const struct calc_insn *ci, struct draw *d);
/* The plain text of line l (what dcpicalc prints), appended to sb. */
void calc_line_text(const struct calc *c, const struct calc_line *l, struct strbuf *sb);
/* Draws the whole listing (calc_render, flags as there), a line after another. */
void calc_draw(const struct calc *c, struct draw *d, unsigned flags);

/* Formats a CPI the way every view shows it ("18.0cy", "0.62", "?"). */
void calc_format_cycles(double cycles, char *buf, size_t size);
/* Formats a frequency or a sample count as dcpicalc does ("1234", "12.3", "0.52", "?"). */
void calc_format_count(double v, char *buf, size_t size);
/* Formats an execution count as dcpicalc does ("866667", "1.3e+08", "?"). */
void calc_format_execs(double v, char *buf, size_t size);
/* Formats an instruction's samples after the skid model: dcpicalc's Samples column. */
void calc_format_samples(const struct calc_insn *ci, char *buf, size_t size);
/*
 * Formats cycles over n instructions as dcpicalc does: "6/9 = 0.67CPI", with
 * cpi the ratio to print; "?/9 = ? CPI" when cycles are unknown (< 0).
 */
void calc_format_fraction(double cycles, double n, double cpi, char *buf, size_t size);

/*
 * Widens *samples_w and *cpi_w to c's widest Samples and CPI entries
 * (calc_format_samples(), calc_format_cycles()): columns that fit them all.
 */
void calc_column_widths(const struct calc *c, int *samples_w, int *cpi_w);

/* The style of a confidence level (high, medium, low; dim without an estimate). */
enum style calc_conf_style(enum calc_conf c);
/*
 * Why an instruction has no samples of its own ("(time in the callee's
 * entry)", "(time recorded outside)"), or NULL if it has.
 */
const char *calc_unmeasured_note(const struct calc_insn *ci);

/*
 * The bubble of instruction i: how many half-cycle lines of static and of
 * dynamic stall (before scaling), and its letters (static reason letter;
 * culprit letters).  Returns false when the instruction has no stall.
 */
struct calc_bubble {
	double static_cycles, dynamic_cycles;
	char static_letter;        /* 0 if none */
	char letters[CULPRIT__COUNT + 1]; /* dynamic culprits, NUL-terminated */
};
bool calc_bubble_of(const struct calc *c, size_t i, struct calc_bubble *out);

/* Appends the legend of the letters (dynamic, static, confidence) for a help text. */
void calc_legend(struct strbuf *sb);
/* Appends "r register dependency, d D-cache miss": the reasons of a cause's what bits. */
void calc_describe_reasons(unsigned what, struct strbuf *sb);
/*
 * Appends "NAME 0xSTART-0xEND, 12 classes; model znver4" (and why edges
 * are missing): the procedure in a line.
 */
void calc_describe_proc(const struct calc *c, struct strbuf *sb);
/*
 * Appends "cycles 6600 (12.50%), imiss 40; 1 sample = 100000 cycles, skid 1":
 * the samples of each event and their share of the epoch's (epoch_totals).
 */
void calc_describe_samples(const struct calc *c, const uint64_t *epoch_totals, struct strbuf *sb);
/* Appends "3.1cy per execution (best 0.5cy), dynamic 2.5cy du, static 0.8cy r". */
void calc_describe_stall(const struct calc *c, size_t i, struct strbuf *sb);
/*
 * Appends "4: freq 80, execs 2.08e+07, confidence low (samples); class 4,
 * 9 instructions; to 5 (taken), 6 (fallthrough)": block b in a line.
 */
void calc_describe_block(const struct calc *c, size_t b, struct strbuf *sb);
/*
 * Appends "0x401083 (4 bytes, other), prog.c:31, inlined f; " and the
 * stall (calc_describe_stall()): instruction i in a line.
 */
void calc_describe_insn(const struct calc *c, size_t i, struct strbuf *sb);

/* ---- the summary ---------------------------------------------------------------- */

/*
 * The Figure 4 summary, drawn a line after another as dcpicalc --summary
 * prints it ("*** D-cache miss  27.9% to 27.9%", the ranges explained
 * above the first); calc_summary_text() appends its text to sb.  No
 * share it shows is negative: an unexplained gain within the sampling
 * noise is part of the net sampling error, and beyond it the summary says
 * in words that the model and the samples disagree, and by how much.
 */
void calc_draw_summary(const struct calc *c, struct draw *d);
void calc_summary_text(const struct calc *c, struct strbuf *sb);

/*
 * The dominant culprit in words: "D-cache miss", "unknown: D-cache miss
 * or DTLB miss (their ranges overlap)", "unknown: DTLB miss (low
 * confidence: ...)", "none (no dynamic stall)" (calc_summary.dominant,
 * candidates).
 */
void calc_dominant_text(const struct calc_summary *s, struct strbuf *sb);

/*
 * The same summary in brief, a line per part with only the reasons that
 * have cycles (dcpi-tui's details pane): best-case and actual CPI with the
 * confidence; the dynamic stalls; the static stalls; stall, execution and
 * sampling error.  One line each, no line end.
 */
enum calc_brief { CALC_BRIEF_CPI, CALC_BRIEF_DYNAMIC, CALC_BRIEF_STATIC, CALC_BRIEF_TOTAL };
void calc_draw_summary_brief(const struct calc *c, enum calc_brief line, struct draw *d);

#endif
