/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-json.c - one procedure's analysis as JSON (calc-json.h): what
 * dcpicalc --json writes.
 */
#include "config.h"

#include "analysis/calc-json.h"

#include <math.h>

#include "core/json.h"

static void json_num(struct json_writer *w, double v)
{
	if (v < 0 || !isfinite(v))
		json_null(w);
	else
		json_double(w, v, 6);
}

static void json_culprits(struct json_writer *w, const struct calc_insn *ci)
{
	json_array_begin(w);
	for (size_t k = 0; k < CULPRIT__COUNT; k++) {
		if (!(ci->culprits & CALC_CAUSE_CULPRIT(k)))
			continue;
		json_object_begin(w);
		json_key(w, "reason");
		json_string(w, calc_culprit_key((enum calc_culprit)k));
		json_key(w, "addrs");
		json_array_begin(w);
		for (size_t j = 0; j < ci->n_causes; j++)
			if (ci->causes[j].what & CALC_CAUSE_CULPRIT(k))
				json_hex(w, ci->causes[j].addr);
		json_array_end(w);
		json_object_end(w);
	}
	json_array_end(w);
}

static void json_static(struct json_writer *w, const struct calc_insn *ci)
{
	if (ci->sreason == CALC_STATIC__COUNT) {
		json_null(w);
		return;
	}
	json_object_begin(w);
	json_key(w, "reason");
	json_string(w, calc_static_key(ci->sreason));
	json_key(w, "cycles");
	json_double(w, ci->stall_static, 4);
	json_key(w, "addrs");
	json_array_begin(w);
	for (size_t j = 0; j < ci->n_causes; j++)
		if (ci->causes[j].what & CALC_CAUSE_STATIC(ci->sreason))
			json_hex(w, ci->causes[j].addr);
	json_array_end(w);
	json_object_end(w);
}

/* A conditional branch's outcomes in bursts: its block's taken and fall-through edges. */
static void json_outcomes(struct json_writer *w, const struct calc *c, const struct calc_insn *ci)
{
	const struct cfg *cfg = &c->list.cfg;
	const struct cfg_block *blk;
	uint64_t n[2] = { 0, 0 };

	if (!c->paths.followed || ci->insn->kind != INSN_CJUMP || ci->block < 0)
		return;
	blk = &cfg->blocks[ci->block];
	if ((size_t)(ci - c->insns) != blk->first + blk->n_insns - 1)
		return;
	for (uint32_t k = 0; k < blk->n_succ; k++) {
		uint32_t e = cfg->succ[blk->succ + k];

		n[cfg->edges[e].kind != CFG_FALLTHROUGH] += c->paths.ecount[e];
	}
	if (!n[0] && !n[1])
		return;
	json_key(w, "burst_outcomes");
	json_object_begin(w);
	json_key(w, "taken");
	json_u64(w, n[1]);
	json_key(w, "fallthrough");
	json_u64(w, n[0]);
	json_object_end(w);
}

static void json_insn(struct json_writer *w, const struct calc *c, const struct calc_insn *ci)
{
	json_object_begin(w);
	json_key(w, "addr");
	json_hex(w, ci->insn->addr);
	json_key(w, "text");
	json_string(w, ci->insn->text);
	json_key(w, "block");
	json_i64(w, ci->block);
	json_key(w, "samples");
	listing_samples_json(&c->list, w, ci->raw);
	json_key(w, "attributed");
	if (ci->flags & CALC_I_UNMEASURED)
		json_null(w);
	else
		json_double(w, ci->samples, 6);
	json_key(w, "m");
	json_double(w, ci->m, 4);
	json_key(w, "m_capped");
	json_bool(w, ci->flags & CALC_I_CAPPED);
	json_key(w, "freq");
	json_num(w, ci->freq);
	json_key(w, "execs");
	json_num(w, ci->execs);
	json_key(w, "cpi");
	json_num(w, ci->cpi);
	json_key(w, "confidence");
	json_string(w, calc_conf_name(ci->conf));
	json_key(w, "stall_static");
	json_static(w, ci);
	json_key(w, "stall_dynamic");
	json_double(w, ci->stall_dynamic, 4);
	json_key(w, "culprits");
	json_culprits(w, ci);
	if (ci->flags & CALC_I_UNMEASURED) {
		json_key(w, "unmeasured");
		json_bool(w, true);
	}
	if (c->opts.values && c->vals.n) {
		json_key(w, "values");
		valprof_json(&c->vals.insns[ci - c->insns], w);
	}
	if (c->paths.n_conflicts) {
		bool any = false;

		for (size_t k = 0; k < c->paths.n_conflicts; k++) {
			const struct pathview_conflict *bc = &c->paths.conflicts[k];

			if (bc->load != (size_t)(ci - c->insns))
				continue;
			if (!any) {
				json_key(w, "burst_conflicts");
				json_array_begin(w);
				any = true;
			}
			json_object_begin(w);
			json_key(w, "kind");
			json_string(w, paths_conflict_name(bc->kind));
			json_key(w, "store");
			json_hex(w, bc->store);
			json_key(w, "count");
			json_u64(w, bc->count);
			json_object_end(w);
		}
		if (any)
			json_array_end(w);
	}
	if (ci->latency >= 0) {
		json_key(w, "latency");
		json_object_begin(w);
		json_key(w, "cycles");
		json_double(w, ci->latency, 4);
		json_key(w, "level");
		json_string(w, ci->latency_level >= 0 ? calc_level_name(ci->latency_level) : NULL);
		json_object_end(w);
	}
	json_outcomes(w, c, ci);
	json_object_end(w);
}

/*
 * A block's or an edge's estimate: its frequency, executions, confidence,
 * how, and the relative error the confidence is the level of (-1: none).
 */
static void json_estimate(struct json_writer *w, double freq, double execs, enum calc_conf conf,
			  enum calc_how how, double rel_error)
{
	json_key(w, "freq");
	json_num(w, freq);
	json_key(w, "execs");
	json_num(w, execs);
	json_key(w, "confidence");
	json_string(w, calc_conf_name(conf));
	json_key(w, "how");
	json_string(w, calc_how_name(how));
	json_key(w, "rel_error");
	json_num(w, rel_error >= 0 ? rel_error : -1);
}

static void json_block(struct json_writer *w, const struct calc *c, size_t b)
{
	const struct calc_block *cb = &c->blocks[b];

	json_object_begin(w);
	json_key(w, "index");
	json_u64(w, b);
	json_key(w, "start");
	json_hex(w, cb->cfg->start);
	json_key(w, "end");
	json_hex(w, cb->cfg->end);
	json_key(w, "class");
	json_i64(w, cb->cfg->cls);
	json_estimate(w, cb->freq, cb->execs, cb->conf, cb->how, cb->rel_error);
	json_key(w, "best_cpi");
	json_double(w, cb->best_cpi, 4);
	json_key(w, "cpi");
	json_num(w, cb->cpi);
	json_key(w, "best_cycles");
	json_double(w, cb->best_cycles, 4);
	json_key(w, "cycles");
	json_num(w, cb->cycles);
	json_key(w, "samples");
	json_double(w, cb->samples, 6);
	json_object_end(w);
}

static void json_edge(struct json_writer *w, const struct calc *c, size_t e)
{
	const struct calc_edge *ce = &c->edges[e];
	const struct cfg *cfg = &c->list.cfg;

	json_object_begin(w);
	json_key(w, "from");
	if (ce->cfg->from == cfg->exit)
		json_string(w, "exit");
	else
		json_u64(w, ce->cfg->from);
	json_key(w, "to");
	if (ce->cfg->to == cfg->exit)
		json_string(w, "exit");
	else
		json_u64(w, ce->cfg->to);
	json_key(w, "kind");
	json_string(w, cfg_edge_kind_name(ce->cfg->kind));
	json_key(w, "site");
	json_hex(w, ce->cfg->site);
	json_estimate(w, ce->freq, ce->execs, ce->conf, ce->how, ce->rel_error);
	json_object_end(w);
}

static void json_pct(struct json_writer *w, const struct calc *c, const char *key, double v)
{
	json_key(w, key);
	json_double(w, calc_summary_pct(c, v), 4);
}

static void json_summary(struct json_writer *w, const struct calc *c)
{
	const struct calc_summary *s = &c->summary;

	json_object_begin(w);
	json_key(w, "samples");
	json_double(w, s->samples, 8);
	json_key(w, "recorded");
	json_double(w, s->recorded, 8);
	json_key(w, "moved_out");
	json_double(w, s->moved_out, 8);
	json_key(w, "best_cpi");
	json_num(w, s->best_cpi);
	json_key(w, "cpi");
	json_num(w, s->cpi);
	json_key(w, "dynamic");
	json_object_begin(w);
	for (size_t k = 0; k < CULPRIT__COUNT; k++) {
		json_key(w, calc_culprit_key((enum calc_culprit)k));
		json_array_begin(w);
		json_double(w, calc_summary_pct(c, s->dyn_lo[k]), 4);
		json_double(w, calc_summary_pct(c, s->dyn_hi[k]), 4);
		json_array_end(w);
	}
	json_pct(w, c, "gain", s->gain);
	json_object_end(w);
	json_pct(w, c, "dynamic_total", s->dynamic);
	json_key(w, "static");
	json_object_begin(w);
	for (size_t k = 0; k < CALC_STATIC__COUNT; k++)
		json_pct(w, c, calc_static_key((enum calc_static)k), s->stat[k]);
	json_object_end(w);
	json_pct(w, c, "static_total", s->static_total);
	json_pct(w, c, "execution", s->execution);
	json_pct(w, c, "unestimated", s->unestimated);
	json_pct(w, c, "net_sampling_error", s->net_error);
	json_key(w, "epoch_share");
	json_double(w, s->epoch_share, 6);
	json_key(w, "high_confidence_share");
	json_double(w, s->high_share, 4);
	json_key(w, "dominant");
	if (s->dominant >= 0)
		json_string(w, calc_culprit_key((enum calc_culprit)s->dominant));
	else
		json_null(w);
	json_key(w, "dominant_candidates");
	json_array_begin(w);
	for (size_t k = 0; k < CULPRIT__COUNT; k++)
		if (s->candidates & (1u << k))
			json_string(w, calc_culprit_key((enum calc_culprit)k));
	json_array_end(w);
	json_pct(w, c, "noise_bound", s->noise);
	json_pct(w, c, "disagreement", s->disagreement);
	json_object_end(w);
}

/* What the paths of bursts gave: instructions followed, and the procedure's scale. */
static void json_paths(struct json_writer *w, const struct calc *c)
{
	static const char *const src[] = { NULL, "windows", "measured", "model", "image" };
	const struct calc_pathscale *ps = &c->pscale;

	if (!c->paths.present) {
		json_null(w);
		return;
	}
	json_object_begin(w);
	json_key(w, "followed");
	json_u64(w, c->paths.followed);
	json_key(w, "window_insns");
	json_u64(w, c->paths.wfollowed);
	json_key(w, "windows");
	json_double(w, c->paths.win_b1, 4);
	json_key(w, "scale");
	json_string(w, src[ps->source]);
	json_key(w, "insns");
	json_num(w, ps->source ? ps->insns : -1);
	json_key(w, "per_sample");
	json_num(w, ps->source ? ps->per_sample : -1);
	json_key(w, "rel_error");
	json_num(w, ps->source ? ps->rel_error : -1);
	json_object_end(w);
}

void calc_json(const struct calc *c, struct json_writer *w)
{
	const struct listing *l = &c->list;

	json_object_begin(w);
	json_key(w, "name");
	json_string(w, l->ref.proc->name);
	listing_where_json(l, w);
	json_key(w, "model");
	json_string(w, c->model->name);
	json_key(w, "model_exact");
	json_bool(w, c->model_exact);
	json_key(w, "model_reason");
	json_string(w, c->model_reason);
	json_key(w, "event");
	json_string(w, event_name(c->time_event));
	json_key(w, "period_cycles");
	json_num(w, c->period > 0 ? c->period : -1);
	json_key(w, "period_source");
	json_string(w, c->period_source ? c->period_source : "none");
	json_key(w, "period_error");
	json_num(w, c->period_error);
	if (c->period_problem[0]) {
		json_key(w, "period_problem");
		json_string(w, c->period_problem);
	}
	json_key(w, "skid");
	json_i64(w, c->skid);
	json_key(w, "invocations");
	json_num(w, c->invocations);
	json_key(w, "paths");
	json_paths(w, c);
	json_key(w, "summary");
	json_summary(w, c);
	json_key(w, "blocks");
	json_array_begin(w);
	for (size_t b = 0; b + 1 < c->n_blocks; b++)
		json_block(w, c, b);
	json_array_end(w);
	json_key(w, "edges");
	json_array_begin(w);
	for (size_t e = 0; e < c->n_edges; e++)
		json_edge(w, c, e);
	json_array_end(w);
	json_key(w, "instructions");
	json_array_begin(w);
	for (size_t i = 0; i < c->n_insns; i++)
		json_insn(w, c, &c->insns[i]);
	json_array_end(w);
	json_key(w, "measured");
	json_array_begin(w);
	for (size_t k = 0; k < c->n_measured; k++)
		measure_json(&c->measured[k], w, &c->list);
	json_array_end(w);
	json_object_end(w);
}
