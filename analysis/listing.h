/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/listing.h - one procedure instruction by instruction: each
 * instruction with its samples per event, its basic block (with the
 * frequency-equivalence classes of the CFG) and, on request, its source
 * line and the inlined subroutine it comes from (dcpilist; the TUI's
 * procedure view and dcpicalc build on it).
 *
 *   struct proc_ref ref;
 *   struct listing l;
 *   struct listing_opts o = LISTING_OPTS_INIT;
 *   if (proc_lookup(&view, "main", NULL, &ref) || listing_build(&l, &view, &ref, &o))
 *           ...;                                     // reported
 *   for (size_t i = 0; i < l.n_insns; i++)
 *           l.insns[i].insn->addr, ->text, l.insns[i].samples[EVENT_CYCLES],
 *           l.insns[i].block (index into l.cfg.blocks), l.insns[i].line ...
 *   listing_release(&l);
 *
 * Samples are attributed to the instruction at their address, as recorded
 * (no skid correction: that is the analysis' business).  Samples inside the
 * procedure's range that do not fall on an instruction start are counted
 * in stray[].
 *
 * Refused (-1, reported) when the image has no code to show: a missing
 * binary, a binary that changed since it was profiled (unless the view was
 * opened with force), kernel and JIT images.
 */
#ifndef DCPI_CORE_ANALYSIS_LISTING_H
#define DCPI_CORE_ANALYSIS_LISTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/epochview.h"
#include "analysis/lookup.h"
#include "disasm/cfg.h"
#include "disasm/dwarf.h"
#include "present/draw.h"

struct srcfiles;
struct valprof;

struct listing_opts {
	const enum dcpi_event *events;  /* columns; NULL: every event of the epoch */
	size_t n_events;
	bool source;                    /* attach source lines and inlines (DWARF) */
	struct srcfiles *src;           /* read source text from here (may be NULL) */
};

#define LISTING_OPTS_INIT { NULL, 0, false, NULL }

struct listing_insn {
	const struct insn *insn;        /* in the listing's cfg */
	uint64_t samples[EVENT__COUNT]; /* indexed by enum dcpi_event */
	long block;                     /* index into cfg.blocks */
	const struct src_line *line;    /* the line-table row covering it, or NULL */
	const char *src_text;           /* that line's text (opts.src), or NULL */
	const struct src_inline *inl;   /* the innermost inlined subroutine holding it, or NULL */
	bool new_line;                  /* starts a run of instructions of one source line */
};

struct listing {
	struct epoch_view *view;
	struct proc_ref ref;
	struct image *img;
	enum dcpi_event events[EVENT__COUNT];  /* columns */
	size_t n_events;
	struct cfg cfg;                 /* the procedure's CFG, classified */
	struct listing_insn *insns;     /* one per cfg instruction, in address order */
	size_t n_insns;
	uint64_t totals[EVENT__COUNT];  /* samples in the procedure */
	uint64_t stray[EVENT__COUNT];   /* ... of them not at an instruction start */
	/* source (opts.source) */
	struct src_line *lines;
	size_t n_lines;
	struct src_inline *inlines;
	size_t n_inlines;
	const char *comp_dir;
	const char *src_why;            /* why there are no source lines, or NULL */
	/* set by the caller to print value profiles (valprof.h); not owned */
	const struct valprof *values;
};

int listing_build(struct listing *l, struct epoch_view *v, const struct proc_ref *ref,
		  const struct listing_opts *o);
/*
 * The same with the procedure's CFG given (classified, as image_cfg() and
 * cfg_classify() make it: from a cache), which the listing takes over in
 * every case (on failure too).
 */
int listing_build_cfg(struct listing *l, struct epoch_view *v, const struct proc_ref *ref,
		      const struct listing_opts *o, struct cfg *cfg);
void listing_release(struct listing *l);

/*
 * Gives every instruction the operands the decoder keeps with it (struct
 * insn's opd), which what looks inside instructions (value profiles,
 * measured counts) reads instead of decoding again: only instructions
 * read back from the analysis cache (listing_build_cfg()), which keeps
 * none, are decoded, once, with the image's decoder (hold what guards
 * it).  Returns how many were decoded.
 */
size_t listing_operands(struct listing *l);

/* The instruction whose bytes hold addr (its index), or -1. */
long listing_insn_holding(const struct listing *l, uint64_t addr);

enum listing_print_flags {
	LISTING_SOURCE = (1 << 0),      /* interleave source lines */
	LISTING_BLOCKS = (1 << 1),      /* a line before each basic block: its class and edges */
};

/* Draws the listing as dcpilist prints it (present/draw.h, a line after another). */
void listing_draw(const struct listing *l, struct draw *d, unsigned flags);

/*
 * Pieces every procedure report shares (dcpilist, dcpicalc), each one line
 * without its end (the caller may add to it):
 *   "Procedure NAME in PATH, epoch N";
 *   "  0xSTART-0xEND, N instructions, N basic blocks";
 *   "  warning: WHY" for a changed binary used anyway (img->forced);
 *   "FILE:LINE:  TEXT", the source line of an instruction (li->line set).
 */
void listing_draw_title(const struct listing *l, struct draw *d);
void listing_draw_range(const struct listing *l, struct draw *d, size_t n_insns, size_t n_blocks);
void listing_draw_forced(const struct listing *l, struct draw *d);
void listing_draw_source(const struct listing_insn *li, struct draw *d);
/*
 * An instruction's text in colour, from what the decoder knows of it
 * (disasm/insntext.h): mnemonic, registers, immediates, size keywords
 * dim, a direct branch's target; the mnemonic padded to 7 columns.
 * dcpi-tui's procedure views.
 */
void listing_draw_insn(const struct insn *in, struct draw *d);
/*
 * Where block b is entered from, in style st: "from entry, 1 (taken), 4,
 * outside (reentry)", or "from nowhere" (a fallthrough is the number
 * alone: it is how a block is entered unless something else says).
 * dcpilist -b and dcpi-tui's block headers.
 */
void listing_draw_preds(const struct listing *l, struct draw *d, size_t b, enum style st);

/*
 * A line of source as every report and view shows it: tabs expanded to 8
 * columns, trailing blanks dropped, controls escaped (display_safe).
 * Newly allocated.
 */
char *listing_source_text(const char *text);

struct json_writer;
/* Writes samples per event of the listing's columns as a JSON object ("cycles": 12, ...). */
void listing_samples_json(const struct listing *l, struct json_writer *w, const uint64_t *s);

/* The keys image, start, end and missing_edges: where the procedure is (dcpilist, dcpicalc). */
void listing_where_json(const struct listing *l, struct json_writer *w);

/* The listing as JSON (dcpilist --json: instructions, blocks with classes, edges): one object. */
void listing_json(const struct listing *l, struct json_writer *w, unsigned flags);

#endif
