/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-int.h - inside the analysis of one procedure (calc.h is
 * its API): the state its steps share while calc_from_listing() (calc.c)
 * runs them, and the steps, a file each, in the order they run:
 *
 *   calc-sched.c    the schedules of every block (cold, after each
 *                   predecessor's code, in a loop's steady state) and the
 *                   one each mode uses
 *   calc-skid.c     samples moved back to the instructions they measured
 *   calc-est.c      each class's frequency from its own samples (or
 *                   counted, or a pointer chase's burst estimate), and its
 *                   relative error
 *   calc-prop.c     local: the repair of inflated estimates, propagation,
 *                   bounds on what is left, the values put on blocks and edges
 *   calc-paths.c    counts from the paths of bursts (pathview.h)
 *   calc-flow.c     the global min-cost flow correction
 *   calc-cpi.c      CPI, stalls and culprits per instruction; blocks' figures
 *   calc-summary.c  the procedure summary (Figure 4)
 *
 * Nothing here is for code outside analysis/calc*.c.
 */
#ifndef DCPI_CORE_ANALYSIS_CALC_INT_H
#define DCPI_CORE_ANALYSIS_CALC_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/calc.h"
#include "analysis/culprit.h"
#include "analysis/freq.h"

/* Everything the analysis keeps while it runs. */
struct calc_work {
	struct calc *c;
	const struct epoch_meta *meta;
	const struct cfg *cfg;
	double *rec[EVENT__COUNT];     /* recorded samples per instruction, events present */
	unsigned *skflags;             /* enum skid_flags per instruction */
	struct sched_prep *prep;       /* the instructions prepared for the scheduler (or NULL) */
	uint32_t *idx;                 /* scratch: instruction indices of a block */
	/* schedules: per block, one per distinct predecessor (and the cold one) */
	struct bsched {
		size_t n;
		struct block_schedule *s;  /* s[0]: cold */
		long *pred_edge;           /* edge index each schedule stands for (-1: cold/outside) */
		size_t cycle;              /* s[cycle]: in its loop's steady state (0: none) */
	} *bs;
	/* schedules of blocks on hot cycles found so far, this analysis' or the
	   cache's (they depend on the cycle only: calc-cache.c keeps them) */
	struct known_cycle {
		uint32_t b, n;             /* block b on the cycle blocks[0..n), b first */
		uint32_t *blocks;
		struct block_schedule s;
	} *known;
	size_t n_known, alloc_known;
	bool known_new;                /* some found by this analysis */
	/* per class: its blocks with instructions, in address order:
	   cls_blocks[cls_first[cls] .. cls_first[cls + 1]) */
	uint32_t *cls_first, *cls_blocks;
	double *cls_val;               /* per class */
	unsigned char *cls_state;      /* enum freq_state */
	/* per class: its value's relative error without the period's, and the
	   share of its value that rests on the period (calc-conf.h); err < 0:
	   no value */
	double *cls_err, *cls_pshare;
	struct est_result *cls_est;
	double *cls_m;                 /* usable issue cycles of each class */
	double *cls_scale;             /* magnitude behind each value (freq_propagate) */
	double *alt_m;                 /* per block: best-case cycles under the other model */
	double *cls_agree, *cls_loads; /* per class: confidence features */
	unsigned char *cls_repaired;   /* per class: lowered by freq_repair */
	double moved_out;
};

/* True if block b is a block of code the procedure can reach (not EXIT). */
static inline bool calc_reachable(const struct cfg *cfg, size_t b)
{
	return b != cfg->exit && !(cfg->blocks[b].flags & CFG_BLOCK_UNREACHABLE);
}

/* ---- calc-sched.c ---------------------------------------------------------- */

/* Schedules every block cold and after each predecessor's code (into w->bs). */
void calc_schedule_blocks(struct calc_work *w);
/* Pass 2, LOOP mode: each block on a loop of several blocks in the loop's steady state. */
void calc_cycle_schedules(struct calc_work *w);
/* The schedule each block uses (c->blocks[b].sched) by the mode; weighted: by edge frequency. */
void calc_schedules(struct calc_work *w, bool weighted);
/* Copies M, the static reasons and the flags into the instructions. */
void calc_apply_schedules(struct calc_work *w);

/* ---- calc-cache.c ----------------------------------------------------------- */

/* A procedure's static part (calc-cache.h): its classified CFG, its blocks' schedules. */
struct calc_static_part {
	struct cfg cfg;
	struct bsched *bs;             /* cfg.n_blocks; no hot cycles */
	struct known_cycle *known;     /* the schedules on hot cycles found before */
	size_t n_known;
};
struct calc_cache;
struct image;
struct proc;
/* The static part of procedure p of img on model m from the cache (the caller's), or NULL. */
struct calc_static_part *calc_cache_get(struct calc_cache *cc, struct image *img,
				   const struct cpu_model *m, const struct proc *p);
/* Adds the static part w has (its blocks' schedules but those on hot cycles, and those). */
void calc_cache_put(struct calc_cache *cc, const struct calc_work *w);
void calc_static_part_free(struct calc_static_part *st);

/* ---- calc-skid.c ----------------------------------------------------------- */

/* Moves samples back to what they measured (weighted: by the edge frequencies). */
void calc_skid_attribute(struct calc_work *w, bool weighted);

/* ---- calc-est.c ------------------------------------------------------------ */

/* The estimator's knobs (c->opts.est, else the defaults). */
const struct est_params *calc_est_params(const struct calc_work *w);
/* Each class's frequency and relative error from its own samples, counts or bursts. */
void calc_estimate_classes(struct calc_work *w);

/* ---- calc-prop.c ----------------------------------------------------------- */

/* Class cls's value's whole relative error, the period's included (calc-conf.h). */
double calc_class_error(const struct calc_work *w, int cls);
/* Lowers estimates inflated by mispredicts to agree with their flow neighbours. */
void calc_repair(struct calc_work *w);
/* Values the classes the flow constraints determine from the known ones. */
void calc_propagate(struct calc_work *w);
/* Classes with samples still unknown: the middle of their neighbours' bounds. */
void calc_bound_unknown(struct calc_work *w);
/* Puts the class values on blocks and edges (and c->invocations). */
void calc_spread_values(struct calc_work *w);

/* ---- calc-paths.c ---------------------------------------------------------- */

/*
 * Class values counted from the paths of bursts (and c->pscale): each
 * class's share of its procedure's instructions in bursts times the
 * procedure's instructions; returns the classes valued.
 */
size_t calc_paths_estimate(struct calc_work *w);

/* ---- calc-flow.c ----------------------------------------------------------- */

/* The global min-cost flow correction (opts.flow), on blocks and edges. */
void calc_flow_correct(struct calc_work *w);

/* ---- calc-cpi.c ------------------------------------------------------------ */

/* What culprit_find() needs, built from the results (calc_cctx_release() frees it). */
struct calc_cctx {
	struct culprit_ctx cx;
	double *bf, *ef, *ev[EVENT__COUNT];
	struct block_schedule *sched;
};
void calc_cctx_init(struct calc_work *w, struct calc_cctx *x);
void calc_cctx_release(struct calc_cctx *x);
/* CPI, stalls, culprits and causes of every instruction. */
void calc_insn_results(struct calc_work *w);
/* The machine's latency ladder in cycles (c->ladder). */
void calc_ladder(struct calc *c, const struct epoch_meta *meta);
/* Measured loads: their latency, its level, the culprits it rules out. */
void calc_load_latencies(struct calc_work *w);
/* Blocks' samples, cycles and CPI; blocks' and edges' executions. */
void calc_block_results(struct calc *c);

/* ---- calc-summary.c -------------------------------------------------------- */

/* The summary (c->summary); epoch_total: the epoch's time samples (0 unknown). */
void calc_summarise(struct calc_work *w, double epoch_total);

#endif
