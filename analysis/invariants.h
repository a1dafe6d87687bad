/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/invariants.h - the semi-invariant instructions of an epoch
 * (dcpivals): those whose written register or accessed address holds one
 * value at least a given share of the time they were sampled, hottest
 * first (seed 004: "find semi-invariant values for prefetching,
 * specialization, speculation").  Built from the value profiles through
 * valprof.h, so the values are those dcpicalc --values shows.
 *
 *   struct invariants inv;
 *   struct invariants_opts o = INVARIANTS_OPTS_INIT;
 *   invariants_build(&inv, &view, &o);
 *   invariants_draw(&inv, &draw, &view);        // or invariants_json()
 *   invariants_release(&inv);
 */
#ifndef DCPI_ANALYSIS_INVARIANTS_H
#define DCPI_ANALYSIS_INVARIANTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/epochview.h"
#include "analysis/valprof.h"

struct draw;
struct json_writer;

struct invariants_opts {
	const char *image;      /* this image only (epoch_view_image_matches), or NULL */
	double min_share;       /* the most common value's share, at least */
	uint64_t min_samples;   /* value samples behind it, at least */
	uint64_t limit;         /* at most this many rows (0: all) */
};

#define INVARIANTS_OPTS_INIT { NULL, VALPROF_INVARIANT, VALPROF_MIN_SAMPLES, 0 }

struct invariant {
	size_t image;           /* index into the view's images */
	const struct proc *proc;
	uint64_t addr;          /* the instruction (ELF virtual address) */
	char *text;             /* its text (owned) */
	struct valprof_insn vi; /* its values */
	unsigned best;          /* the item of vi holding the invariant value */
};

struct invariants {
	struct invariant *v;    /* hottest first: by the value samples behind the share */
	size_t n, alloc;
	struct invariants_opts opts;
	uint32_t seq;
	bool any_values;        /* some image (of opts.image) has a value profile */
};

/*
 * Finds them in every image with a value profile whose code can be read.
 * Warns when there is no value profile at all.  Returns 0.
 */
int invariants_build(struct invariants *inv, struct epoch_view *v,
		     const struct invariants_opts *o);
void invariants_release(struct invariants *inv);

/* The report dcpivals prints: a title, column heads, a row per instruction, or "(none)". */
void invariants_draw(const struct invariants *inv, struct draw *d, const struct epoch_view *v);

/* The same as one JSON object (dcpivals --json). */
void invariants_json(const struct invariants *inv, struct json_writer *w,
		     const struct epoch_view *v);

#endif
