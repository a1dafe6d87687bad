/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/pathscale.h - how many true executions each execution the
 * bursts saw stands for, per procedure of an image (docs/analysis.md,
 * "Counts from paths"): the scale calc-paths.c multiplies a procedure's
 * counts in bursts by.
 *
 * A burst follows thousands of instructions from a sampled moment: code
 * that runs interleaved within that span (a procedure and the callees it
 * calls many times a burst) is seen in the true proportions of its
 * executions, so one factor scales all of it; code that runs in phases
 * longer than a burst is seen in proportion to its TIME, and needs a
 * factor of its own.  So the procedures of the image are grouped into
 * regions: two procedures are in one region when the bursts saw calls
 * between them at least twice for each burst that went through the less
 * followed one (they interleave), and not otherwise.
 *
 * A region's factor comes from the matched windows (the paths between two
 * consecutive ordinary samples, one sampling period): the time samples of
 * the region over the windows that began in it (the periods a window
 * stands for) times the region's instructions in all windows, over the
 * instructions bursts followed there.  Its relative error: the spread of
 * the instructions a window runs (at least WINDOW_CV: on a virtual machine
 * the useful work in a period varies by a quarter or more) over the root
 * of the windows, with the share of the region's window instructions that
 * windows of other code ran, and the slowdown the collector may have left
 * in the windows it kept (PATHS_WINDOW_BIAS: a bias no count of windows
 * averages away).  A region no window began in but whose code
 * windows ran takes the image's samples per window instead (unbiased only
 * if every period matches as often: 10% error at least).
 */
#ifndef DCPI_ANALYSIS_PATHSCALE_H
#define DCPI_ANALYSIS_PATHSCALE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/event.h"

struct epoch_view;

/* The least coefficient of variation assumed of the instructions in a window. */
#define PATHSCALE_WINDOW_CV 0.3

struct pathscale_region {
	double samples;         /* time samples recorded in its procedures */
	double followed;        /* instructions bursts followed there */
	double wfollowed;       /* ... in matched windows */
	double win_b1;          /* matched windows that began there (estimated) */
	double win_b1_here;     /* ... their instructions in the image (estimated) */
	double sigma;           /* true executions per execution in bursts; <= 0: none */
	double rel_error;       /* sigma's relative standard error */
	bool own;               /* from the windows that began in it (else the image's) */
	size_t n_procs;
};

struct pathscale_proc {
	uint64_t start, end;    /* the procedure's addresses */
	double samples, followed, wfollowed, win_b1, win_b1_here;
	size_t region;          /* index in regions */
};

struct pathscale {
	struct pathscale_proc *procs;      /* by start address */
	size_t n_procs;
	struct pathscale_region *regions;
	size_t n_regions;
	double img_k;           /* the image's samples per matched window (0: none) */
};

/*
 * Builds the scales of image i of view v from its path profile and the
 * time samples of event ev.  An image without a path profile gives an
 * empty table.
 */
void pathscale_build(struct pathscale *ps, struct epoch_view *v, size_t i, enum dcpi_event ev);
void pathscale_release(struct pathscale *ps);

/*
 * The scales of image i of view v with the time samples of ev, built on
 * first use and kept with the view (freed with it).
 */
const struct pathscale *pathscale_of(struct epoch_view *v, size_t i, enum dcpi_event ev);

/* The procedure starting at start, or NULL. */
const struct pathscale_proc *pathscale_find(const struct pathscale *ps, uint64_t start);

#endif
