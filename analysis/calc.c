/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc.c - the analysis of one procedure (calc.h): the names of its
 * results, its set-up (event, period, model) and its steps in order
 * (calc-int.h lists the files that hold them).
 */
#include "config.h"

#include "analysis/calc-int.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/skid.h"
#include "core/die.h"
#include "core/xalloc.h"
#include "db/meta.h"
#include "disasm/image.h"

/* ---- names ------------------------------------------------------------------- */

static const struct {
	const char *name, *key;
	char letter;
} culprits[CULPRIT__COUNT] = {
	[CULPRIT_ICACHE] = { "I-cache miss", "icache", 'i' },
	[CULPRIT_ITLB] = { "ITLB miss", "itlb", 'I' },
	[CULPRIT_DCACHE] = { "D-cache miss", "dcache", 'd' },
	[CULPRIT_DTLB] = { "DTLB miss", "dtlb", 'D' },
	[CULPRIT_BRANCH] = { "branch mispredict", "branch", 'p' },
	[CULPRIT_STORE_BUF] = { "store queue full", "store-queue", 'w' },
	[CULPRIT_MUL] = { "multiplier busy", "multiplier", 'm' },
	[CULPRIT_DIV] = { "divider busy or slow divide", "divider", 'v' },
	[CULPRIT_SYNC] = { "synchronisation", "sync", 'y' },
	[CULPRIT_STORE_FWD] = { "store forwarding failed", "store-forward", 'F' },
	[CULPRIT_ALIAS_4K] = { "4K aliasing", "alias-4k", 'K' },
	[CULPRIT_UNEXPLAINED] = { "unexplained stall", "unexplained", 'u' },
}, statics[CALC_STATIC__COUNT] = {
	[CALC_STATIC_SLOT] = { "slotting (dispatch/retire width)", "slotting", 's' },
	[CALC_STATIC_DEP] = { "register dependency", "dependency", 'r' },
	[CALC_STATIC_MEMDEP] = { "memory dependency", "memory-dependency", 'f' },
	[CALC_STATIC_UNIT] = { "functional unit busy", "unit", 'x' },
	[CALC_STATIC_SERIAL] = { "serialisation", "serialisation", 'z' },
};

const char *calc_conf_name(enum calc_conf c)
{
	static const char *const n[] = { "none", "low", "medium", "high" };

	return (unsigned)c < ARRAY_SIZE(n) ? n[c] : "none";
}

char calc_conf_letter(enum calc_conf c)
{
	return "-LMH"[(unsigned)c < 4 ? c : 0];
}

const char *calc_culprit_name(enum calc_culprit k) { return culprits[k].name; }
const char *calc_culprit_key(enum calc_culprit k) { return culprits[k].key; }
char calc_culprit_letter(enum calc_culprit k) { return culprits[k].letter; }
const char *calc_static_name(enum calc_static k) { return statics[k].name; }
const char *calc_static_key(enum calc_static k) { return statics[k].key; }
char calc_static_letter(enum calc_static k) { return statics[k].letter; }

enum calc_static calc_static_of(enum sched_reason r)
{
	switch (r) {
	case SCHED_LATENCY: case SCHED_DEP: return CALC_STATIC_DEP;
	case SCHED_MEMDEP: return CALC_STATIC_MEMDEP;
	case SCHED_UNIT: return CALC_STATIC_UNIT;
	case SCHED_DISPATCH: case SCHED_RETIRE: return CALC_STATIC_SLOT;
	case SCHED_SERIAL: return CALC_STATIC_SERIAL;
	default: return CALC_STATIC__COUNT;
	}
}

const char *calc_how_name(enum calc_how h)
{
	static const char *const n[] = { "none", "samples", "propagated", "flow", "repaired",
					 "measured", "paths", "paths-shares" };

	return (unsigned)h < ARRAY_SIZE(n) ? n[h] : "none";
}

const char *calc_level_name(int level)
{
	static const char *const n[CALC_LEVEL__COUNT] = { "L1", "L2", "L3", "memory" };

	return level >= 0 && level < CALC_LEVEL__COUNT ? n[level] : "?";
}

long calc_insn_at(const struct calc *c, uint64_t addr)
{
	return cfg_insn_at(&c->list.cfg, addr);
}

/* ---- setup -------------------------------------------------------------------- */

static void choose_event(struct calc *c, const struct epoch_meta *meta)
{
	const struct listing *l = &c->list;

	c->time_event = EVENT_CYCLES;
	if (!l->totals[EVENT_CYCLES] && (l->totals[EVENT_CLOCK] ||
					 (meta && epoch_meta_event(meta, EVENT_CLOCK) &&
					  !epoch_meta_event(meta, EVENT_CYCLES))))
		c->time_event = EVENT_CLOCK;
	c->has_time = l->totals[c->time_event] > 0;
	c->skid = c->opts.skid >= 0 ? c->opts.skid : skid_default(meta, c->time_event);
}

static void choose_period(struct calc *c, const struct epoch_meta *meta)
{
	const struct epoch_event *e = meta ? epoch_meta_event(meta, c->time_event) : NULL;

	enum epoch_period_source src = EPOCH_PERIOD_NONE;

	c->period_source = "none";
	if (c->opts.period_cycles > 0) {
		c->period = c->opts.period_cycles;
		c->period_source = "option";
	} else if (e && e->period_in_ns && c->opts.mhz > 0) {
		/* a clock period x MHz leaves out what sampling takes, however right the MHz */
		c->period = (double)e->period * c->opts.mhz / 1000.0;
		c->period_source = "option";
		c->period_error = CALC_PERIOD_ERROR_MHZ;
	} else if (meta) {
		const struct epoch_calib *cal = epoch_meta_calib(meta, c->time_event);

		c->period = epoch_meta_time_cycles(meta, c->time_event, &src);
		c->period_source = epoch_period_source_name(src);
		if (cal && (src == EPOCH_PERIOD_CALIBRATED || src == EPOCH_PERIOD_SCALED)) {
			c->period_error = cal->error > 0 ? cal->error : CALC_PERIOD_ERROR_UNCHECKED;
			if (!epoch_calib_problem(cal, c->period_problem, sizeof(c->period_problem)))
				c->period_problem[0] = '\0';
			else if (!strcmp(cal->how, "addloop"))
				c->period_error = CALC_PERIOD_ERROR_ADDLOOP;
		} else if (src == EPOCH_PERIOD_MHZ) {
			c->period_error = CALC_PERIOD_ERROR_MHZ;
		}
	}
}

static void alloc_results(struct calc *c)
{
	const struct cfg *cfg = &c->list.cfg;

	c->n_insns = cfg->n_insns;
	c->insns = xcalloc(c->n_insns + 1, sizeof(*c->insns));
	c->n_blocks = cfg->n_blocks;
	c->blocks = xcalloc(c->n_blocks + 1, sizeof(*c->blocks));
	c->n_edges = cfg->n_edges;
	c->edges = xcalloc(c->n_edges + 1, sizeof(*c->edges));
	for (size_t i = 0; i < c->n_insns; i++) {
		c->insns[i].insn = &cfg->insns[i];
		c->insns[i].block = c->list.insns[i].block;
		memcpy(c->insns[i].raw, c->list.insns[i].samples, sizeof(c->insns[i].raw));
	}
	for (size_t b = 0; b < c->n_blocks; b++) {
		c->blocks[b].cfg = &cfg->blocks[b];
		c->blocks[b].n_insns = cfg->blocks[b].n_insns;
		block_schedule_init(&c->blocks[b].sched);
	}
	for (size_t e = 0; e < c->n_edges; e++)
		c->edges[e].cfg = &cfg->edges[e];
}

/* ---- driver ---------------------------------------------------------------------------------- */

/*
 * The frequencies: each class's own estimate, the counts from paths, the
 * repair of inflated ones, propagation, bounds on what is left, the values
 * on blocks and edges, the global correction if asked.
 */
static void frequencies(struct calc_work *w)
{
	calc_estimate_classes(w);
	calc_paths_estimate(w);
	calc_repair(w);
	calc_propagate(w);
	calc_bound_unknown(w);
	calc_spread_values(w);
	calc_flow_correct(w);
}

static bool can_schedule(const struct calc *c)
{
	return c->model && c->model->arch == c->list.cfg.arch;
}

/* Each class's blocks with instructions (the steps look at them class by class). */
static void class_blocks(struct calc_work *w)
{
	const struct cfg *cfg = w->cfg;
	size_t nc = cfg->n_classes;

	w->cls_first = xcalloc(nc + 2, sizeof(*w->cls_first));
	w->cls_blocks = xcalloc(cfg->n_blocks + 1, sizeof(*w->cls_blocks));
	for (size_t b = 0; b < cfg->exit; b++)
		if (cfg->blocks[b].n_insns && cfg->blocks[b].cls >= 0 && (size_t)cfg->blocks[b].cls < nc)
			w->cls_first[cfg->blocks[b].cls + 2]++;
	for (size_t k = 2; k < nc + 2; k++)
		w->cls_first[k] += w->cls_first[k - 1];
	for (size_t b = 0; b < cfg->exit; b++)
		if (cfg->blocks[b].n_insns && cfg->blocks[b].cls >= 0 && (size_t)cfg->blocks[b].cls < nc)
			w->cls_blocks[w->cls_first[cfg->blocks[b].cls + 1]++] = (uint32_t)b;
}

static void work_init(struct calc_work *w, struct calc *c, const struct epoch_meta *meta)
{
	const struct cfg *cfg = &c->list.cfg;
	size_t nc = cfg->n_classes + 1;

	memset(w, 0, sizeof(*w));
	w->c = c;
	w->meta = meta;
	w->cfg = cfg;
	for (size_t ev = 0; ev < EVENT__COUNT; ev++) {
		if (!c->list.totals[ev])
			continue;
		w->rec[ev] = xcalloc(cfg->n_insns + 1, sizeof(double));
		for (size_t i = 0; i < cfg->n_insns; i++)
			w->rec[ev][i] = (double)c->list.insns[i].samples[ev];
	}
	w->skflags = xcalloc(cfg->n_insns + 1, sizeof(unsigned));
	class_blocks(w);
	w->idx = xcalloc(cfg->n_insns + 1, sizeof(*w->idx));
	w->bs = xcalloc(cfg->n_blocks + 1, sizeof(*w->bs));
	w->cls_val = xcalloc(nc, sizeof(double));
	w->cls_state = xcalloc(nc, 1);
	w->cls_err = xcalloc(nc, sizeof(double));
	w->cls_pshare = xcalloc(nc, sizeof(double));
	w->cls_est = xcalloc(nc, sizeof(struct est_result));
	w->cls_m = xcalloc(nc, sizeof(double));
	w->cls_scale = xcalloc(nc, sizeof(double));
	w->alt_m = xcalloc(cfg->n_blocks + 1, sizeof(double));
	w->cls_agree = xcalloc(nc, sizeof(double));
	w->cls_loads = xcalloc(nc, sizeof(double));
	w->cls_repaired = xcalloc(nc, 1);
}

static void work_release(struct calc_work *w)
{
	for (size_t ev = 0; ev < EVENT__COUNT; ev++)
		free(w->rec[ev]);
	for (size_t b = 0; b < w->cfg->n_blocks; b++) {
		for (size_t k = 0; k < w->bs[b].n; k++)
			block_schedule_release(&w->bs[b].s[k]);
		free(w->bs[b].s);
		free(w->bs[b].pred_edge);
	}
	free(w->bs);
	for (size_t k = 0; k < w->n_known; k++) {
		free(w->known[k].blocks);
		block_schedule_release(&w->known[k].s);
	}
	free(w->known);
	free(w->skflags);
	free(w->cls_first);
	free(w->cls_blocks);
	free(w->idx);
	sched_prep_free(w->prep);
	free(w->cls_val);
	free(w->cls_state);
	free(w->cls_err);
	free(w->cls_pshare);
	free(w->cls_est);
	free(w->cls_m);
	free(w->cls_scale);
	free(w->alt_m);
	free(w->cls_agree);
	free(w->cls_loads);
	free(w->cls_repaired);
}

/*
 * Says once per process (not in every report) that the epoch's CPU has no
 * model of its own, which one its schedules use instead, and why.
 */
static void note_inexact_model(const struct calc *c, const struct epoch_meta *meta)
{
	static int said;
	char cpu[128];

	if (c->model_exact || __atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		return;
	if (meta && meta->cpu_vendor)
		snprintf(cpu, sizeof(cpu), "%s family %d model %d", meta->cpu_vendor,
			 meta->cpu_family, meta->cpu_model_id);
	else
		snprintf(cpu, sizeof(cpu), "an unknown CPU");
	warning("no processor model for %s: the schedules use %s%s (%s)", cpu,
		c->model == cpu_model_generic() ? "the generic one, " : "the closest one, ",
		c->model->name, c->model_reason);
}

/* The model the schedules use: the caller's, or the one chosen for the epoch's CPU. */
static void choose_model(struct calc *c, const struct epoch_meta *meta)
{
	struct model_choice ch;

	if (c->opts.model) {
		c->model = c->opts.model;
		c->model_exact = true;
		snprintf(c->model_reason, sizeof(c->model_reason),
			 "chosen by the caller, not by the epoch's CPU");
		return;
	}
	c->model = cpu_model_choose(meta, &ch);
	c->model_exact = ch.exact;
	snprintf(c->model_reason, sizeof(c->model_reason), "%s", ch.reason);
}

int calc_from_listing(struct calc *c, const struct epoch_meta *meta, const uint64_t *epoch_totals,
		      const struct calc_opts *o)
{
	static const struct calc_opts defaults = CALC_OPTS_INIT;
	struct calc_work w;

	c->opts = o ? *o : defaults;
	choose_model(c, meta);
	note_inexact_model(c, meta);
	choose_event(c, meta);
	choose_period(c, meta);
	alloc_results(c);
	if (c->vprof && c->has_time && (!c->opts.est || c->opts.est->measure))
		c->n_measured = measure_loops(&c->list, c->vprof, c->time_event, c->period,
					      c->model ? c->model->retire_width : 0, &c->measured);
	/* Samples lost (rings overrun): a count from the loop's samples misses theirs. */
	for (size_t k = 0; k < c->n_measured; k++)
		c->measured[k].lost = meta ? epoch_meta_counter(meta, "lost") : 0;
	work_init(&w, c, meta);
	if (c->stat) {
		/* the static part came from the cache */
		free(w.bs);
		w.bs = c->stat->bs;
		c->stat->bs = NULL;
		w.known = c->stat->known;
		w.n_known = w.alloc_known = c->stat->n_known;
		c->stat->known = NULL;
		c->stat->n_known = 0;
		calc_static_part_free(c->stat);
		c->stat = NULL;
	} else if (can_schedule(c)) {
		calc_schedule_blocks(&w);
		w.known_new = true;
	}
	/* pass 1: unweighted schedules, head samples split evenly */
	calc_schedules(&w, false);
	calc_apply_schedules(&w);
	calc_skid_attribute(&w, false);
	frequencies(&w);
	/* pass 2: with the edge frequencies of pass 1 */
	if (can_schedule(c) && c->opts.sched == CALC_SCHED_LOOP)
		calc_cycle_schedules(&w);
	if (c->opts.cache && w.known_new)
		calc_cache_put(c->opts.cache, &w);
	calc_schedules(&w, true);
	calc_apply_schedules(&w);
	calc_skid_attribute(&w, true);
	frequencies(&w);
	calc_insn_results(&w);
	calc_ladder(c, meta);
	calc_load_latencies(&w);
	calc_block_results(c);
	calc_summarise(&w, epoch_totals ? (double)epoch_totals[c->time_event] : 0);
	work_release(&w);
	return 0;
}

int calc_prepare(struct calc *c, struct epoch_view *v, const struct proc_ref *ref,
		 const struct calc_opts *o)
{
	static const struct calc_opts defaults = CALC_OPTS_INIT;
	struct listing_opts lo = LISTING_OPTS_INIT;
	const struct epoch_meta *meta = v->meta_ok ? &v->meta : NULL;
	int r;

	memset(c, 0, sizeof(*c));
	c->opts = o ? *o : defaults;
	lo.source = c->opts.source;
	lo.src = c->opts.src;
	if (c->opts.cache && ref->proc) {
		struct image *img = epoch_view_image(v, ref->image);
		const struct cpu_model *m = c->opts.model ? c->opts.model : cpu_model_for(meta, NULL);

		if (image_has_code(img, NULL))
			c->stat = calc_cache_get(c->opts.cache, img, m, ref->proc);
	}
	if (c->stat)
		r = listing_build_cfg(&c->list, v, ref, &lo, &c->stat->cfg);
	else
		r = listing_build(&c->list, v, ref, &lo);
	if (r)
		return -1;
	c->vprof = epoch_view_values(v, ref->image);
	valprof_build(&c->vals, &c->list, c->vprof, &epoch_view_paths(v, ref->image)->values);
	pathview_build(&c->paths, &c->list, epoch_view_paths(v, ref->image));
	c->prep_meta = meta;
	c->prep_totals = v->totals;
	return 0;
}

int calc_compute(struct calc *c)
{
	struct calc_opts o = c->opts;

	return calc_from_listing(c, c->prep_meta, c->prep_totals, &o);
}

int calc_build(struct calc *c, struct epoch_view *v, const struct proc_ref *ref,
	       const struct calc_opts *o)
{
	if (calc_prepare(c, v, ref, o))
		return -1;
	return calc_compute(c);
}

void calc_release(struct calc *c)
{
	for (size_t i = 0; i < c->n_insns; i++)
		free(c->insns[i].causes);
	for (size_t b = 0; b < c->n_blocks; b++)
		block_schedule_release(&c->blocks[b].sched);
	free(c->insns);
	free(c->blocks);
	free(c->edges);
	free(c->measured);
	pathview_release(&c->paths);
	valprof_release(&c->vals);
	listing_release(&c->list);
	calc_static_part_free(c->stat);
	memset(c, 0, sizeof(*c));
}
