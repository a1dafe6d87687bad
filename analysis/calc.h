/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc.h - instruction-level analysis of one procedure (seed
 * 001, section 6): from sample counts alone, how often each instruction
 * ran, how many cycles it spent per execution, and why it stalled.  This is
 * what dcpicalc prints and what dcpi-tui shows in its procedure and
 * procedures views; both go through this header, so they never disagree.
 * Its reports: calc-draw.h (the Figure 2 listing and the Figure 4
 * summary as text), calc-json.h, calc-dot.h.
 *
 *   struct calc c;
 *   struct calc_opts o = CALC_OPTS_INIT;
 *   if (calc_build(&c, &view, &ref, &o))           // ref from proc_lookup()
 *           ...;                                    // reported (no code, ...)
 *   c.summary.cpi, c.summary.best_cpi, ...          // the procedure (Figure 4)
 *   for (size_t b = 0; b < c.n_blocks; b++)
 *           c.blocks[b].freq, .conf, .best_cpi, .cpi ...
 *   for (size_t i = 0; i < c.n_insns; i++)
 *           c.insns[i].insn->addr, ->text, .cpi, .culprits, .conf ...
 *   calc_release(&c);
 *
 * What is computed (docs/analysis.md has the details and the measurements):
 *
 *  1. The listing (listing.h): the CFG with its frequency-equivalence
 *     classes and the samples recorded at each instruction, per event.
 *  2. The static schedule of every block (model/sched.h): M_i, issue
 *     points, static stall reasons.  opts.sched says what is assumed before
 *     a block (cold, the predecessors' code, a self-loop's steady state).
 *  3. The skid model (skid.h): with timer or non-precise sampling, a sample
 *     recorded at address p measures the instruction executed just before
 *     p.  Samples are moved back to that instruction; at block heads they
 *     are split over the predecessors by edge frequency; samples that
 *     measured another procedure (the instruction after a call measures the
 *     callee's return; the entry measures the callers' calls) leave it, and
 *     instructions whose time was recorded elsewhere (calls, returns, jumps
 *     out) are "unmeasured".
 *  4. Frequencies (freq.h): where the epoch has samples of retired
 *     instructions (the instructions event), counted from them; else per
 *     equivalence class from the ratios of samples to M over windows of
 *     its instructions (clusters of small ratios, the sum-ratio fallback,
 *     anomaly rejection; the paper's fine and dependence windows on
 *     request), then local propagation over the flow constraints, and on
 *     request (opts.flow) a global min-cost flow correction (flow.h) so
 *     that block and edge frequencies conserve flow.  Each estimate
 *     carries its relative error, and its confidence (low, medium, high)
 *     is the level of that error (calc-conf.h), calibrated on measured
 *     errors.
 *  5. CPI per instruction and block (actual and best case), stall cycles
 *     split into static (from the schedule) and dynamic, and the culprits
 *     of each dynamic stall, "guilty until proven innocent" (culprit.h).
 *  6. The procedure summary (Figure 4).
 * Steps 2 to 4 run twice: the second pass splits block-head samples and
 * weighs schedules by the first pass's edge frequencies.
 *
 * Units.  `freq` is executions per sampling period (F in the paper); an
 * execution count is freq x period (`execs`; for the clock event the
 * period is period_ns x MHz / 1000 cycles).  Cycles (cpi, stalls) are per
 * execution.  "Samples" are samples of the time event (cycles, or clock
 * standing in for it); one sample is period cycles.
 */
#ifndef DCPI_CORE_ANALYSIS_CALC_H
#define DCPI_CORE_ANALYSIS_CALC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/culprit.h"
#include "analysis/listing.h"
#include "analysis/measure.h"
#include "analysis/pathview.h"
#include "analysis/valprof.h"
#include "model/model.h"
#include "model/sched.h"

/* ---- options --------------------------------------------------------------- */

/* What the static schedule of a block assumes about the code before it. */
enum calc_sched {
	CALC_SCHED_LOOP,  /* self-loops in their steady state, other blocks cold (the default:
			     the most accurate on the measured workloads) */
	CALC_SCHED_COLD,  /* nothing in flight (DCPI's choice) */
	CALC_SCHED_PRED,  /* per predecessor (the code before it), the per-instruction minimum */
	CALC_SCHED_AUTO,  /* the mean over predecessors' contexts and self-loops, weighted
			     by edge frequency */
};

struct est_params;
struct calc_cache;

struct calc_opts {
	enum calc_sched sched;
	bool flow;              /* apply the global min-cost flow correction after local
				   propagation (off by default: measured to make the
				   estimates worse on this platform, docs/analysis.md) */
	int skid;               /* instructions a time sample lands after the one it measures;
				   -1: the event's default (skid.h) */
	double mhz;             /* clock rate for clock-event periods; 0: the epoch's cpu_mhz */
	double period_cycles;   /* cycles per time sample; 0: from the epoch, its calibration
				   if it has one, else period x MHz (overrides mhz) */
	const struct cpu_model *model; /* NULL: cpu_model_for(the epoch) */
	bool source;            /* attach source lines (listing.h) */
	struct srcfiles *src;   /* source text for the listing (may be NULL) */
	const struct est_params *est; /* the estimator's knobs (freq.h); NULL: defaults */
	bool values;            /* show value profiles (valprof.h) in the text and JSON */
	struct calc_cache *cache; /* the static part from and to this cache (calc-cache.h);
				     NULL: found every time */
};

#define CALC_OPTS_INIT { CALC_SCHED_LOOP, false, -1, 0, 0, NULL, false, NULL, NULL, false, NULL }

/* ---- confidence, culprits, static reasons ----------------------------------- */

enum calc_conf {
	CALC_CONF_NONE,    /* no estimate (no samples and nothing to propagate from) */
	CALC_CONF_LOW,
	CALC_CONF_MEDIUM,
	CALC_CONF_HIGH,
};

/* "none", "low", "medium", "high" */
const char *calc_conf_name(enum calc_conf c);
/* '-', 'L', 'M', 'H' (for monochrome displays) */
char calc_conf_letter(enum calc_conf c);

/* Bubble letters of the static stall reasons (enum sched_reason). */
enum calc_static {
	CALC_STATIC_SLOT,    /* s: dispatch or retire width, a taken branch, ROB full */
	CALC_STATIC_DEP,     /* r: waits for a register (dependence or its own latency) */
	CALC_STATIC_MEMDEP,  /* f: waits for a store it reads (store-to-load forwarding) */
	CALC_STATIC_UNIT,    /* x: functional unit or port busy */
	CALC_STATIC_SERIAL,  /* z: serialising instruction */
	CALC_STATIC__COUNT
};

const char *calc_culprit_name(enum calc_culprit k);   /* "D-cache miss" */
const char *calc_culprit_key(enum calc_culprit k);    /* "dcache" (JSON) */
char calc_culprit_letter(enum calc_culprit k);        /* 'd' */
const char *calc_static_name(enum calc_static k);     /* "register dependency" */
const char *calc_static_key(enum calc_static k);      /* "dependency" (JSON) */
char calc_static_letter(enum calc_static k);          /* 'r' */
/* The static class of a schedule reason (SCHED_NONE: CALC_STATIC__COUNT). */
enum calc_static calc_static_of(enum sched_reason r);

/* ---- per instruction, block, edge ------------------------------------------- */

/* How a frequency was obtained. */
enum calc_how {
	CALC_HOW_NONE,        /* no estimate */
	CALC_HOW_SAMPLES,     /* from the class's own samples (ratios S/M) */
	CALC_HOW_PROPAGATED,  /* from neighbours through the flow constraints */
	CALC_HOW_FLOW,        /* changed by the global flow correction */
	CALC_HOW_REPAIRED,    /* lowered to agree with its flow neighbours (freq.h freq_repair) */
	CALC_HOW_MEASURED,    /* counted: a loop's induction register between samples (measure.h) */
	CALC_HOW_PATHS,       /* counted from paths: the procedure's share in bursts' paths times
				 its instructions per sample in matched windows (calc-paths.c) */
	CALC_HOW_PATHS_SHARES,/* the share from paths, the procedure's scale from elsewhere (a
				 measured loop, the model's estimates): no window reached it */
};
/* "none", "samples", "propagated", "flow", "repaired", "measured", "paths", "paths-shares" */
const char *calc_how_name(enum calc_how h);

enum calc_insn_flags {
	CALC_I_ISSUE = (1 << 0),      /* an issue point (M > 0) */
	CALC_I_UNMEASURED = (1 << 1), /* its time was recorded in another procedure (a call,
					 a return, a jump out): samples and CPI unknown */
	CALC_I_AFTER_CALL = (1 << 2), /* follows a call: the samples recorded at it measured
					 the callee's return and were given back */
	CALC_I_UNCERTAIN = (1 << 3),  /* M is a guess (sched.h SCHED_F_UNCERTAIN) */
	CALC_I_USED = (1 << 4),       /* in a window the frequency estimate was taken from */
	CALC_I_HEAD = (1 << 5),       /* first instruction of its block */
	CALC_I_ENTRY = (1 << 6),      /* the procedure's first instruction: its recorded
					 samples measured the callers' calls */
	CALC_I_GAIN = (1 << 7),       /* fewer cycles than the static minimum, beyond noise */
	CALC_I_CAPPED = (1 << 8),     /* an uncertain M the samples contradict: m is what it
					 took (its CPI), not the model's guess */
};

struct calc_insn {
	const struct insn *insn;      /* addr (ELF vaddr), text, ... (in calc.list.cfg) */
	long block;                   /* index into calc.blocks */
	uint64_t raw[EVENT__COUNT];   /* samples recorded at this address, per event */
	double samples;               /* time samples it accounts for after the skid model (S_i) */
	double attributed[EVENT__COUNT]; /* the same for every event (skid-corrected) */
	double m;                     /* M_i: cycles at best (static schedule) */
	double freq;                  /* executions per sampling period (the block's); < 0 unknown */
	double execs;                 /* estimated executions (freq x period); < 0 unknown */
	double cpi;                   /* cycles per execution: samples / freq; < 0 unknown */
	double stall_static;          /* static stall cycles (M - 1 for an issue point) */
	double stall_dynamic;         /* cpi - M (negative: an unexplained gain); 0 if unknown */
	enum calc_static sreason;     /* why the static stall (CALC_STATIC__COUNT: none) */
	unsigned culprits;            /* dynamic stall: bits of enum calc_culprit (0: none) */
	enum calc_conf conf;          /* the block's confidence (its rel_error's level) */
	unsigned flags;               /* enum calc_insn_flags */
	struct calc_cause *causes;    /* culprit instructions (static and dynamic), by address */
	size_t n_causes;
	double latency;               /* a load whose executions are measured (measure.h): its
					 cycles an execution, measured; < 0 unknown */
	int latency_level;            /* ... the level of the machine's latency ladder it
					 matches (enum calc_level), -1 if unknown */
};

/* Where a load's data came from, by its measured latency against the ladder. */
enum calc_level { CALC_L1, CALC_L2, CALC_L3, CALC_MEMORY, CALC_LEVEL__COUNT };
/* "L1", "L2", "L3", "memory" */
const char *calc_level_name(int level);

struct calc_block {
	const struct cfg_block *cfg;  /* start, end, edges, class (in calc.list.cfg) */
	double freq;                  /* executions per sampling period; < 0 unknown */
	double execs;                 /* freq x period; < 0 unknown */
	double rel_error;             /* the relative error of execs, the period's included
					 (analysis/calc-conf.h); < 0 unknown */
	double period_share;          /* ... the share of execs that rests on the period */
	enum calc_conf conf;          /* calc_conf_of(rel_error) */
	enum calc_how how;
	double samples;               /* time samples of its instructions (after skid) */
	double best_cycles;           /* sum of M_i: cycles per execution at best */
	double cycles;                /* cycles per execution (measured instructions: samples /
					 freq; unmeasured ones: M_i); < 0 unknown */
	double best_cpi, cpi;         /* best_cycles / n, cycles / n; cpi < 0 unknown */
	unsigned n_insns;
	struct block_schedule sched;  /* the schedule used (owned) */
	/* how the class's own estimate was made (freq.h struct est_result): for
	 * "why this confidence" displays and the accuracy benchmark */
	struct calc_estimate {
		int method;           /* enum est_method: 0 none, 1 cluster, 2 sum ratio,
					 3 counted by the instructions event, 4 burst (a
					 miss-bound pointer chase), 5 measured (an
					 induction register's change between samples),
					 6 paths (calc-paths.c) */
		unsigned windows, points;
		double spread, support, samples, class_samples, class_m;
		double agreement;     /* best-case cycles of the class under the other
					 schedule model over those used (1: they agree) */
		double loads;         /* share of the class's instructions that load */
		double rel_error;     /* the class's own estimate's relative error, the
					 period's left out (calc-conf.h); < 0 none */
	} est;
};

struct calc_edge {
	const struct cfg_edge *cfg;   /* from, to, kind (in calc.list.cfg) */
	double freq, execs;           /* < 0 unknown */
	double rel_error, period_share; /* as a block's */
	enum calc_conf conf;
	enum calc_how how;
};

/* The procedure summary, as the DCPI paper's Figure 4.  Cycle figures are in samples. */
struct calc_summary {
	double samples;               /* tallied: time samples of the procedure after skid */
	double recorded;              /* time samples recorded in the procedure's range */
	double moved_out;             /* ... of them that measured other procedures (skid) */
	double epoch_share;           /* samples / all time samples of the epoch */
	double insns;                 /* instructions executed, in freq units (sum freq x n) */
	double best_cycles;           /* sum freq x M (samples) */
	double best_cpi, cpi;         /* best_cycles / insns, samples / insns; < 0 unknown */
	/* each culprit's range of the subtotal dynamic: from what it alone explains to all it may */
	double dyn_lo[CULPRIT__COUNT], dyn_hi[CULPRIT__COUNT];
	double gain;                  /* unexplained gain: samples below the model's M (<= 0) */
	/*
	 * Subtotal dynamic: the samples beyond the best case, net of the
	 * gains (stalls at some instructions, gains at others offset each
	 * other); never negative.
	 */
	double dynamic;
	double stat[CALC_STATIC__COUNT];
	double static_total;
	double execution;             /* one cycle per issue point */
	double unestimated;           /* samples of instructions without a frequency */
	/*
	 * The sampling noise of the tally: two standard deviations of a
	 * Poisson count of samples, 2 sqrt(samples).  Gains the stalls do not
	 * offset are noise within it, and count in net_error; beyond it the
	 * model and the samples disagree: disagreement is then what the gains
	 * leave below zero (said in words, never shown as a negative share),
	 * else 0.
	 */
	double noise;
	double disagreement;
	double net_error;             /* samples - (execution + static + dynamic + unestimated
					 - disagreement): the deviations within noise */
	double high_share;            /* share of samples in high-confidence estimates */
	double low_share;             /* ... in low-confidence (or no) estimates */
	/*
	 * The culprits that may lead the dynamic stall: those whose upper
	 * bound reaches every other's lower bound (bit k: enum calc_culprit
	 * k).  The dominant culprit is named only when one alone can lead and
	 * the estimate is confident enough (CALC_DOMINANT_CONF of the samples
	 * in high-confidence frequencies); else dominant is -1 and the
	 * culprit is unknown, one of the candidates.
	 */
	unsigned candidates;
	int dominant;                 /* enum calc_culprit, or -1: none, or unknown */
	unsigned n_classes, n_estimated, n_propagated, n_flow; /* how the classes got values */
};

struct calc {
	struct listing list;          /* the instructions, samples per event, CFG */
	const struct cpu_model *model;
	bool model_exact;             /* the epoch's CPU was recognised */
	char model_reason[256];       /* why the model (struct model_choice's reason) */
	enum dcpi_event time_event;   /* the event used for time (cycles, or clock) */
	bool has_time;                /* the epoch has samples of it */
	int skid;                     /* instructions of skid assumed for the time event */
	double period;                /* cycles per time sample (0 if unknown: execs < 0) */
	const char *period_source;    /* where period came from: "calibrated" (measured by the
					 collector, db/meta.h epoch_calib), "calibrated-scaled"
					 (measured at another period), "cpu_mhz" (the clock
					 period x the recorded MHz: on a virtual machine often
					 5-30% off), "events" (a cycles counter), "option"
					 (--period-cycles / --mhz), "none" */
	double period_error;          /* the period's relative uncertainty: the calibration's
					 (how far its clocks disagree, at least 1%), 0.3 for a
					 clock period x MHz (--mhz too: what sampling takes is
					 left out), 0 if given in cycles or counted by events */
	char period_problem[160];     /* what is wrong with the calibration, or "" (the
					 clocks disagree; an old add-immediate loop) */
	struct calc_insn *insns;      /* list.n_insns, in address order */
	size_t n_insns;
	struct calc_block *blocks;    /* list.cfg.n_blocks (the last is the virtual EXIT) */
	size_t n_blocks;
	struct calc_edge *edges;      /* list.cfg.n_edges */
	size_t n_edges;
	double invocations;           /* calls of the procedure, freq units (the EXIT class) */
	struct calc_summary summary;
	struct calc_opts opts;
	/* the image's value profile in this epoch (NULL or empty: none; not owned),
	 * and what the instructions' values are (built by calc_build) */
	const struct values_profile *vprof;
	struct valprof vals;
	/* executions measured from the value profile's pairs (measure.h), per
	 * counting instruction found */
	struct measure *measured;
	size_t n_measured;
	/* what the epoch's bursts say about the procedure (pathview.h) */
	struct pathview paths;
	/* the procedure's scale from paths (calc-paths.c): its instructions in
	 * the epoch, from each source that could say, and all of them combined */
	struct calc_pathscale {
		enum calc_pathscale_source {
			CALC_PSCALE_NONE,      /* no count from paths */
			CALC_PSCALE_WINDOWS,   /* its region's instructions in matched windows */
			CALC_PSCALE_MEASURED,  /* a loop measured from the registers (measure.h) */
			CALC_PSCALE_MODEL,     /* the model's estimates of its classes */
			CALC_PSCALE__COUNT
		} source;              /* the weightiest source (NONE: no count from paths) */
		double insns;          /* instructions the procedure ran in the epoch (estimated) */
		double per_sample;     /* ... per time sample recorded in it */
		double rel_error;      /* the scale's relative standard error */
		double cand[CALC_PSCALE__COUNT];       /* each source's insns (0: it had none) */
		double cand_error[CALC_PSCALE__COUNT]; /* ... and its relative error (< 0: left
							  out, it disagreed with the others) */
		bool conflict;         /* sources disagreed beyond their errors: low confidence */
		double windows;        /* matched windows that began in its region (estimated) */
		bool own;              /* WINDOWS: the samples a window stands for are the
					  region's own (else the image's) */
	} pscale;
	/* the machine's load latencies measured by the collector (collect/ladder.h),
	 * in cycles per load; 0 unknown */
	double ladder[CALC_LEVEL__COUNT];
	/* private: what calc_prepare() read for calc_compute() */
	const struct epoch_meta *prep_meta;
	const uint64_t *prep_totals;
	struct calc_static_part *stat;
};

/*
 * Analyses the procedure ref of view v.  Returns 0, or -1 after reporting
 * why (the image has no code, a changed binary without force...).  An
 * epoch without time samples still gives the schedule (best case) with
 * every frequency unknown.
 */
int calc_build(struct calc *c, struct epoch_view *v, const struct proc_ref *ref,
	       const struct calc_opts *o);

/*
 * calc_build() in two steps, for threads analysing procedures of one epoch
 * view at once: calc_prepare() reads from the view what the analysis
 * needs (the listing, or its CFG from opts.cache; the value profile; the
 * bursts) and must have the view to itself (an epoch view and its images
 * are not thread-safe: hold the lock that guards the view);
 * calc_compute() does the rest on any thread without it.  Together they
 * give what calc_build() gives.  After a failed calc_prepare() (-1,
 * reported), calc_release() only.  The view and opts.cache must outlive c.
 */
int calc_prepare(struct calc *c, struct epoch_view *v, const struct proc_ref *ref,
		 const struct calc_opts *o);
int calc_compute(struct calc *c);
void calc_release(struct calc *c);

/*
 * The analysis proper, on a listing the caller filled in c->list (c zeroed
 * otherwise; c takes the listing over and calc_release() releases it):
 * tests build listings from machine code and synthetic samples.  meta (may
 * be NULL: generic model, no period) gives the model, events and periods;
 * epoch_totals (may be NULL) the time samples of the epoch for the
 * summary's share.  Returns 0.
 */
int calc_from_listing(struct calc *c, const struct epoch_meta *meta, const uint64_t *epoch_totals,
		      const struct calc_opts *o);

/* The instruction at addr (its index), or -1. */
long calc_insn_at(const struct calc *c, uint64_t addr);

/* ---- the procedures view --------------------------------------------------------- */

/* One procedure's figures for a table of procedures (dcpi-tui, dcpicalc --image). */
/* The share of samples in high-confidence frequencies a named dominant culprit needs. */
#define CALC_DOMINANT_CONF 0.5

/*
 * The period's relative uncertainty where the calibration does not say:
 * an epoch calibrated before the clocks were checked (2%), one calibrated
 * with add-immediates (folded on some cores: up to several times off), the
 * clock period x cpu MHz (5-30% off on virtual machines: docs/analysis.md).
 */
#define CALC_PERIOD_ERROR_UNCHECKED 0.02
#define CALC_PERIOD_ERROR_ADDLOOP 1.0
#define CALC_PERIOD_ERROR_MHZ 0.3

struct calc_procrow {
	double samples;          /* time samples tallied */
	double cpi, best_cpi;    /* < 0 unknown */
	/*
	 * The dominant culprit (enum calc_culprit) when the summary can name
	 * it, else -1: then with candidates (bits of enum calc_culprit) it is
	 * unknown, one of those ("unknown: D-cache or DTLB"), and without,
	 * there is none (no dynamic stall).
	 */
	int dominant;
	unsigned candidates;
	double dominant_share;   /* the dominant's (or the likeliest candidate's) upper bound, share */
	double high_share;       /* share of samples with high-confidence frequencies */
};
void calc_procrow(const struct calc *c, struct calc_procrow *row);

/* v (samples) as a percentage of the samples tallied: how the summary shows every figure. */
double calc_summary_pct(const struct calc *c, double v);

#endif

