/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/freq.h - frequency estimation (the DCPI paper, 6.1.3-6.1.5):
 * from the samples and static minimum cycles of the instructions of one
 * frequency-equivalence class to the class's frequency F (executions per
 * sampling period), local propagation over the flow constraints of the
 * CFG, and the confidence of each estimate.
 *
 * Estimating one class (freq_estimate_class).  The instructions of the
 * class come as est_points, block by block in execution order; a segment
 * is a run of consecutive measurable instructions (a new segment starts at
 * each block and after an instruction whose samples are unknown).  With no
 * dynamic stall, an issue point i collects S_i = F x M_i samples; stalls
 * only add.  So F is estimated from the SMALL ratios S/M, over windows:
 *
 *  - groups: an issue point with the M = 0 instructions that retire with
 *    it (their samples are the issue point's, scattered by the interrupt
 *    delivery);
 *  - pairs of adjacent groups (sample delivery on this hardware moves
 *    samples between neighbouring instructions: a pair is robust to it);
 *  - dependence windows: for an issue point that waited for a producer j
 *    of the same segment, sum(S_k)/sum(M_k) over k in (j, i] (6.1.3,
 *    "fourth": a stall between j and i shortens i's wait, but not the
 *    window's);
 *
 * then clusters of ratios with max <= 1.5 x min are tried from the
 * smallest up; a cluster is rejected as anomalous when it holds too small
 * a share of the class's issue cycles (an isolated low ratio is noise, or
 * an M the schedule overstated).  F is sum(S)/sum(M) over the chosen
 * cluster.  A class with few samples takes the sum ratio over all its
 * measurable instructions instead (the sparse fallback).
 *
 * Propagation (freq_propagate): with the class values found so far, each
 * flow constraint (a block's frequency equals the sum of its incoming
 * edges, and of its outgoing edges) with exactly one unknown class gives
 * it a value; values are per class, so a value reaches every block and
 * edge of its class at once; negative results become 0.  Linear time.
 */
#ifndef DCPI_CORE_ANALYSIS_FREQ_H
#define DCPI_CORE_ANALYSIS_FREQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One instruction of a class, as the estimator sees it. */
struct est_point {
	double s;          /* time samples measuring it (after the skid model) */
	double m;          /* M_i */
	int producer;      /* index in the point array of the instruction it waited for, or -1 */
	unsigned seg;      /* segment number: windows never cross segments */
	bool usable;       /* samples known and M certain; an unusable point ends a segment */
};

enum est_method {
	EST_NONE,          /* nothing to estimate from (no issue point, no sample) */
	EST_CLUSTER,       /* a cluster of small ratios */
	EST_SUM,           /* the sum ratio over the class (few samples) */
	EST_INSTRUCTIONS,  /* counted by the instructions event (calc-est.c), not estimated */
	EST_BURST,         /* a miss-bound chain: the rest of the iteration retires in bursts
			      (calc-est.c burst_estimate) */
	EST_MEASURED,      /* counted from a loop's induction register (measure.h), not estimated */
	EST_PATHS,         /* counted from the paths emulated bursts followed (calc-paths.c) */
};

struct est_result {
	double f;          /* the estimate; 0 with EST_NONE */
	enum est_method method;
	unsigned windows;  /* candidate windows */
	unsigned used;     /* windows in the chosen cluster */
	unsigned points;   /* distinct issue points in the chosen cluster */
	double spread;     /* max / min ratio in the cluster (1: all equal) */
	double support;    /* share of the class's issue cycles (M) the cluster covers */
	double samples;    /* samples behind the estimate */
	double total_m;    /* issue cycles of the class's usable points */
	double total_s;    /* samples of the class's usable points */
	unsigned rejected; /* clusters rejected as anomalous before the chosen one */
	double rel_error;  /* the estimate's relative error, without the period's
			      (analysis/calc-conf.h); set by its estimator */
};

/* The estimator's knobs (defaults in EST_PARAMS_INIT, as calibrated in docs/analysis.md). */
struct est_params {
	double cluster;        /* max/min ratio within a cluster (1.5) */
	double min_support;    /* minimum share of the class's issue cycles in a cluster */
	double sparse;         /* below this many samples in the class: the sum ratio */
	size_t window;         /* also windows of this many consecutive groups (0: none) */
	bool pairs;            /* also single groups and pairs of adjacent groups */
	bool dep_windows;      /* also dependence windows */
	double trim;           /* keep cluster windows within this of F (or 3 Poisson deviations) */
	/* beyond the estimator of one class (calc-*.c; docs/analysis.md) */
	double repair;         /* freq_repair's tolerance (0.15); 0: no repair */
	bool burst;            /* miss-bound pointer chases: the burst estimate (calc-est.c) */
	bool measure;          /* counts measured from value profiles (measure.h) */
	bool paths;            /* counts from the paths of bursts (calc-paths.c) */
	int paths_fallback;    /* a procedure's scale besides the windows: 0 none, 1 a
				  measured loop and the median of the model's estimates
				  over their shares, 3 ... the model pooled over the
				  procedure (measured no better, docs/analysis.md) */
	double paths_kappa;    /* weight of the bursts' sampling error in a share's */
};

#define EST_PARAMS_INIT { 1.5, 0.25, 24, 8, false, false, 0.10, 0.15, true, true, true, 1, 1 }

/*
 * Estimates the frequency of one class from its points.  used (may be
 * NULL; n entries) is set to 1 for the points of the windows the estimate
 * came from.
 */
void freq_estimate_class(const struct est_point *p, size_t n, const struct est_params *par,
			 struct est_result *r, unsigned char *used);

/* ---- propagation ------------------------------------------------------------- */

/*
 * The flow constraints of a procedure: nodes (blocks, the virtual EXIT
 * among them) and arcs (CFG edges), each with its class; the invocations
 * are the implied arc exit -> entry, of the EXIT node's class.
 */
struct fgraph {
	size_t n_nodes, n_arcs, n_classes;
	const uint32_t *from, *to;    /* arcs */
	const int *node_cls, *arc_cls;/* classes (-1: not in the flow: unreachable) */
	uint32_t entry, exit;
	bool in_constraints;          /* false when incoming edges may be missing */
};

enum freq_state { FREQ_UNKNOWN, FREQ_ESTIMATED, FREQ_PROPAGATED };

/*
 * The errors of the class values, carried through propagation: err[c],
 * the relative error of class c's value independent of the others', and
 * share[c] (may be NULL), the share of it that rests on a factor common to
 * all (the cycles per sample: calc-conf.h).  A value solved from others
 * gets their absolute errors added as independent deviations and their
 * common shares added as they are; a value clamped at zero, or made of
 * values with no error (< 0), FREQ_ERR_UNBOUNDED.
 */
struct freq_errors {
	double *err, *share;
};
#define FREQ_ERR_UNBOUNDED 10.0

/*
 * Fills unknown classes from the flow constraints.  val[c] is the value
 * of class c, state[c] its enum freq_state (updated).  scale (may be NULL)
 * receives, for each class filled, the largest of the values it was
 * computed from: a value found as a small difference of large ones is
 * only as precise as they are (the flow correction weighs it so).  e (may
 * be NULL) carries the errors.  Returns how many classes got a value.
 */
size_t freq_propagate(const struct fgraph *g, double *val, unsigned char *state, double *scale,
		      const struct freq_errors *e);

/* ---- repair ----------------------------------------------------------------- */

/*
 * Local repair of inflated estimates: for each flow constraint that reads
 * "whole = sum of parts" where the whole and every part are classes in
 * `ok` state (estimated from samples), when the parts add up to more than
 * (1 + tol) x the whole and the whole rests on at least as much weight
 * (samples) as all the parts together, the parts are scaled down to the
 * whole.  The typical case: the two sides of a hard-to-predict branch,
 * whose heads carry the mispredict penalties, each estimated at several
 * times the block that branches to them.  Sets changed[c] for the classes
 * scaled; returns how many.  At most 4 rounds.
 */
size_t freq_repair(const struct fgraph *g, double *val, const unsigned char *ok,
		   const double *weight, const double *susp, double tol, unsigned char *changed);

#endif
