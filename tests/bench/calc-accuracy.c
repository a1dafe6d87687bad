/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tests/bench/calc-accuracy.c - how close dcpicalc's estimated execution
 * counts are to the truth: compares the `execs` of every analysed
 * instruction (and edge) with callgrind's exact counts, and prints the
 * distribution of errors in the buckets of the DCPI paper (Anderson et al., SOSP 1997), Figures 8 and 9.
 *
 *   calc-accuracy -d DB [-E EPOCH] --callgrind FILE [--callgrind FILE...]
 *                 [--scale X] [--period-cycles P | --mhz M]
 *                 [--schedule auto|cold|pred|loop] [--no-flow] [--model NAME]
 *                 [--min-samples N] [--label NAME] [--csv FILE] [--procs] [--rates]
 *
 * Callgrind output (--dump-instr=yes --collect-jumps=yes --compress-pos=no
 * --compress-strings=no) gives, under ob= headers, cost lines "ADDR LINE
 * COUNT" whose ADDR is the object's ELF virtual address (checked on PIE
 * executables and shared libraries); all lines of one address are summed
 * (it repeats per context); the line after calls= is a call's inclusive
 * cost and is skipped; "jcnd=TAKEN/EXECUTED TARGET" and "jump=N TARGET"
 * give edge counts, the line after them names the jump.  Counts times
 * --scale (the number of profiled runs per callgrind run) are the truth.
 *
 * Instructions are weighted by their time samples (after the skid model),
 * as the paper weights by CYCLES samples; edges by their true executions.
 * An image of the epoch is compared when callgrind saw an object with the
 * same path (or, failing that, the same file name).
 *
 * With paths (dcpirun --bursts): the share of the samples in procedures
 * matched windows ran (and in those whose scale the windows of their own
 * region gave); --rates prints, for each procedure with such a scale, the
 * instructions per sample the windows measured against callgrind's (its
 * instructions over its time samples); --counted NAME=INSNS does the same
 * for a procedure callgrind did not run whose instructions are known
 * (calc-calib's loop: 6 an iteration), per profiled run.
 *
 * --model NAME schedules with that processor model (model/model.h:
 * "znver5", "goldencove"...) instead of the one chosen for the epoch's
 * CPU: the same recordings under another table.
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/calc.h"
#include "analysis/freq.h"
#include "analysis/procprof.h"
#include "core/cli.h"
#include "core/die.h"
#include "core/u64map.h"
#include "core/xalloc.h"

/* ---- callgrind ------------------------------------------------------------------- */

struct object {
	char *path;
	struct u64map count;   /* addr -> executions */
	struct u64map jumps;   /* (site << 20 ^ target) hashed key -> count; see jkey() */
};

static struct object *objects;
static size_t n_objects, alloc_objects;

static uint64_t jkey(uint64_t site, uint64_t target)
{
	return site * 0x9E3779B97F4A7C15ull ^ target;
}

static struct object *object_get(const char *path)
{
	for (size_t k = 0; k < n_objects; k++)
		if (!strcmp(objects[k].path, path))
			return &objects[k];
	ALLOC_GROW(objects, n_objects + 1, alloc_objects);
	objects[n_objects].path = xstrdup(path);
	u64map_init(&objects[n_objects].count);
	u64map_init(&objects[n_objects].jumps);
	return &objects[n_objects++];
}

static void read_callgrind(const char *file)
{
	FILE *f = fopen(file, "r");
	char line[8192];
	struct object *ob = NULL;
	enum { NONE, SKIP, JUMP } next = NONE;
	unsigned long long jn = 0, jt = 0;

	if (!f)
		die_errno("cannot open '%s'", file);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, l, c;

		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "ob=", 3)) {
			ob = object_get(line + 3);
		} else if (!strncmp(line, "calls=", 6)) {
			next = SKIP;
		} else if (!strncmp(line, "jcnd=", 5) || !strncmp(line, "jump=", 5)) {
			unsigned long long x, y;

			if (sscanf(line + 5, "%llu/%llu %llx", &x, &y, &jt) == 3)
				jn = x;
			else if (sscanf(line + 5, "%llu %llx", &x, &jt) == 2)
				jn = x;
			else
				continue;
			next = JUMP;
		} else if (!strncmp(line, "0x", 2)) {
			if (next == JUMP && sscanf(line, "%llx", &a) == 1 && ob)
				u64map_add(&ob->jumps, jkey(a, jt), jn);
			else if (next == NONE && ob && sscanf(line, "%llx %llu %llu", &a, &l, &c) == 3)
				u64map_add(&ob->count, a, c);
			next = NONE;
		}
	}
	fclose(f);
}

static const struct object *object_for(const char *path)
{
	const char *base = strrchr(path, '/');

	for (size_t k = 0; k < n_objects; k++)
		if (!strcmp(objects[k].path, path))
			return &objects[k];
	base = base ? base + 1 : path;
	for (size_t k = 0; k < n_objects; k++) {
		const char *b = strrchr(objects[k].path, '/');

		if (!strcmp(b ? b + 1 : objects[k].path, base))
			return &objects[k];
	}
	return NULL;
}

/* ---- tallies --------------------------------------------------------------------- */

#define NB 11
static const double bucket_hi[NB] = { 0.05, 0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 1e300, 1e300 };

struct tally {
	double w;                  /* total weight */
	double within[3];          /* <= 5%, 10%, 15% */
	double over_conf[4];       /* > 15%, by confidence */
	double conf_w[4];          /* all, by confidence */
	double conf_within15[4];
	double under, over;        /* > 15% low / high */
	double bucket[NB];         /* |error| buckets; last: no truth (never ran) */
	double procs;
	double win_any, win_own;   /* samples in procedures windows ran; ... scaled by their own */
};

static void tally_add(struct tally *t, double w, double est, double truth, enum calc_conf conf)
{
	double err;
	size_t b = 0;

	if (!(w > 0))
		return;
	t->w += w;
	t->conf_w[conf] += w;
	if (!(truth > 0)) {
		t->bucket[NB - 1] += w;
		t->over_conf[conf] += w;
		t->over += w;
		return;
	}
	err = est < 0 ? INFINITY : (est - truth) / truth;
	while (b < NB - 2 && fabs(err) > bucket_hi[b])
		b++;
	t->bucket[b] += w;
	for (size_t k = 0; k < 3; k++)
		if (fabs(err) <= 0.05 * (k + 1))
			t->within[k] += w;
	if (fabs(err) <= 0.15) {
		t->conf_within15[conf] += w;
	} else {
		t->over_conf[conf] += w;
		if (err < 0)
			t->under += w;
		else
			t->over += w;
	}
}

static void tally_merge(struct tally *a, const struct tally *b)
{
	double *x = (double *)a;
	const double *y = (const double *)b;

	for (size_t k = 0; k < sizeof(*a) / sizeof(double); k++)
		x[k] += y[k];
}

static double pc(double x, double w)
{
	return w > 0 ? 100 * x / w : 0;
}

static void tally_print(const char *label, const struct tally *t, const struct tally *e)
{
	double o = t->over_conf[1] + t->over_conf[2] + t->over_conf[3] + t->over_conf[0];

	printf("%-22s %8.0f %5.1f%% %5.1f%% %5.1f%%  >15%%: %4.1f%% (low %4.1f%% of them, %2.0f%% under)"
	       "  high-conf %4.1f%% ok %5.1f%%  edges<=10%% %5.1f%%  windows %5.1f%% own %5.1f%%"
	       "  edge-execs %.4g\n",
	       label, t->w, pc(t->within[0], t->w), pc(t->within[1], t->w), pc(t->within[2], t->w),
	       pc(o, t->w), pc(t->over_conf[1] + t->over_conf[0], o), pc(t->under, o),
	       pc(t->conf_w[3], t->w), pc(t->conf_within15[3], t->conf_w[3]),
	       pc(e->within[1], e->w), pc(t->win_any, t->w), pc(t->win_own, t->w), e->w);
}

/* ---- comparison ----------------------------------------------------------------------- */

struct args {
	const char *db, *epoch, *label, *csv;
	double scale;
	uint64_t min_samples;
	bool procs, rates;
	struct calc_opts co;
	struct est_params est;
};

static double truth_of(const struct object *ob, uint64_t addr, double scale)
{
	uint64_t n = 0;

	u64map_get(&ob->count, addr, &n);
	return (double)n * scale;
}

static FILE *csv, *dump;

/* One line per instruction of analysed blocks: for prototyping estimators offline. */
static void dump_insns(const struct calc *c, const struct object *ob, double scale)
{
	for (size_t i = 0; i < c->n_insns; i++) {
		const struct calc_insn *ci = &c->insns[i];
		const struct calc_block *cb = &c->blocks[ci->block];
		double t = truth_of(ob, ci->insn->addr, scale);

		if (ci->block < 0 || (cb->cfg->flags & CFG_BLOCK_UNREACHABLE))
			continue;
		size_t k = i - cb->cfg->first;
		const struct sched_insn *x = cb->sched.insn && k < cb->sched.n ? &cb->sched.insn[k] : NULL;

		fprintf(dump, "%s\t%s\t%ld\t%d\t0x%" PRIx64 "\t%u\t%.6g\t%.6g\t%" PRIu64 "\t%u\t%d\t%.6g\t%.6g\t%s\t%d\t%d\t%d\t%d\n",
			c->list.img->base, c->list.ref.proc->name, ci->block, cb->cfg->cls, ci->insn->addr,
			ci->insn->len, ci->samples, ci->m, ci->raw[c->time_event], ci->flags, ci->insn->kind,
			t, c->period > 0 ? t / c->period : -1, ci->insn->text, x ? (int)x->reason : -1,
			x ? (int)x->producer.kind : -1, x ? (int)x->producer.index : -1,
			x ? (int)x->timing.fu : -1);
	}
}

static double edge_truth(const struct calc *c, const struct object *ob, size_t e, double scale)
{
	const struct cfg *cfg = &c->list.cfg;
	const struct cfg_edge *ed = &cfg->edges[e];
	const struct cfg_block *from;
	const struct insn *last;
	uint64_t n = 0;
	double blk;

	if (ed->from == cfg->exit)
		return -1;
	from = &cfg->blocks[ed->from];
	if (!from->n_insns)
		return -1;
	last = &cfg->insns[from->first + from->n_insns - 1];
	blk = truth_of(ob, last->addr, 1);
	switch (ed->kind) {
	case CFG_TAKEN:
	case CFG_SWITCH:
	case CFG_JUMP:
		if (u64map_get(&ob->jumps, jkey(last->addr, ed->target), &n))
			return (double)n * scale;
		return ed->kind == CFG_JUMP ? blk * scale : 0;
	case CFG_FALLTHROUGH:
		if (last->kind == INSN_CJUMP) {
			for (uint32_t k = 0; k < from->n_succ; k++) {
				const struct cfg_edge *o = &cfg->edges[cfg->succ[from->succ + k]];

				if (o->kind == CFG_TAKEN && u64map_get(&ob->jumps, jkey(last->addr, o->target), &n))
					return (blk - (double)n) * scale;
			}
			return blk * scale;
		}
		return blk * scale;
	case CFG_CALL_RETURN:
		return blk * scale;
	default:
		return -1;
	}
}

static void dump_blocks(const struct calc *c, const struct object *ob, double scale)
{
	for (size_t b = 0; b + 1 < c->n_blocks; b++) {
		const struct calc_block *cb = &c->blocks[b];
		double t;

		if (!cb->cfg->n_insns || cb->samples <= 0)
			continue;
		t = truth_of(ob, cb->cfg->start, scale);
		fprintf(csv, "%s,%s,0x%" PRIx64 ",%d,%d,%u,%u,%.4g,%.4g,%.4g,%.4g,%.4g,%s,%s,%.6g,%.6g,%.6g,%.4g,%.4g,"
			"%.4g,%.4g,%.4g,%d,%u,%d,%.4g,%.4g,%.4g,%.4g,%d\n",
			c->list.img->base, c->list.ref.proc->name, cb->cfg->start, cb->cfg->cls,
			cb->est.method, cb->est.windows, cb->est.points, cb->est.spread, cb->est.support,
			cb->est.samples, cb->est.class_samples, cb->est.class_m, calc_how_name(cb->how),
			calc_conf_name(cb->conf), cb->samples, cb->execs, t, cb->est.agreement, cb->est.loads,
			cb->rel_error, cb->period_share, cb->est.rel_error, (int)cb->sched.entry, cb->n_insns,
			(int)c->pscale.source, c->pscale.rel_error, c->pscale.cand_error[CALC_PSCALE_WINDOWS],
			c->pscale.cand_error[CALC_PSCALE_MEASURED], c->pscale.cand_error[CALC_PSCALE_MODEL],
			(int)c->pscale.conflict);
	}
}

/* Samples of procedures callgrind never ran (ifunc variants chosen by CPU features differ). */
static double not_comparable;

static bool ran(const struct calc *c, const struct object *ob)
{
	for (size_t i = 0; i < c->n_insns; i++)
		if (truth_of(ob, c->insns[i].insn->addr, 1) > 0)
			return true;
	return false;
}

/* The instructions per sample matched windows measured against callgrind's. */
static void print_rate(const struct calc *c, const struct object *ob, double scale)
{
	double truth = 0, s = (double)c->list.totals[c->time_event];

	for (size_t i = 0; i < c->n_insns; i++)
		truth += truth_of(ob, c->insns[i].insn->addr, scale);
	if (!(s > 0) || !(truth > 0))
		return;
	double w = c->pscale.cand[CALC_PSCALE_WINDOWS] / s;

	printf("  rate %-22.22s %6.1f windows (%s): %9.0f instructions a sample, callgrind %9.0f: %+6.1f%%",
	       c->list.ref.proc->name, c->pscale.windows, c->pscale.own ? "own" : "image's", w, truth / s,
	       100 * (w / (truth / s) - 1));
	if (c->pscale.cand_error[CALC_PSCALE_WINDOWS] < 0)
		printf(" (left out)\n");
	else
		printf(" (+-%.1f%%)\n", 100 * c->pscale.cand_error[CALC_PSCALE_WINDOWS]);
}

static void compare(const struct calc *c, const struct object *ob, double scale, struct tally *t,
		    struct tally *e, bool procs, bool rates)
{
	struct tally pt = { 0 }, pe = { 0 };

	if (!ran(c, ob)) {
		not_comparable += c->summary.samples;
		return;
	}
	if (rates && c->pscale.cand[CALC_PSCALE_WINDOWS] > 0)
		print_rate(c, ob, scale);
	for (size_t i = 0; i < c->n_insns; i++) {
		const struct calc_insn *ci = &c->insns[i];

		if (ci->flags & CALC_I_UNMEASURED)
			continue;
		tally_add(&pt, ci->samples, ci->execs, truth_of(ob, ci->insn->addr, scale), ci->conf);
	}
	for (size_t k = 0; k < c->n_edges; k++) {
		double tr = edge_truth(c, ob, k, scale);

		if (tr > 0)
			tally_add(&pe, tr, c->edges[k].execs, tr, c->edges[k].conf);
	}
	pt.procs = 1;
	if (c->paths.wfollowed)
		pt.win_any = pt.w;
	if (c->pscale.cand[CALC_PSCALE_WINDOWS] > 0 && c->pscale.own)
		pt.win_own = pt.w;
	if (procs) {
		char label[64];

		snprintf(label, sizeof(label), "  %.20s", c->list.ref.proc->name);
		tally_print(label, &pt, &pe);
	}
	if (csv)
		dump_blocks(c, ob, scale);
	if (dump)
		dump_insns(c, ob, scale);
	tally_merge(t, &pt);
	tally_merge(e, &pe);
}

static void run_image(struct epoch_view *v, size_t i, const struct object *ob, struct args *a,
		      struct tally *tt, struct tally *te)
{
	struct procprof_opts po = PROCPROF_OPTS_INIT;
	const char *images[1] = { v->images[i].rec->path };
	struct procprof pp;
	struct tally t = { 0 }, e = { 0 };

	po.images = images;
	po.n_images = 1;
	po.quiet = true;
	if (procprof_build(&pp, v, &po))
		return;
	for (size_t r = 0; r < pp.n_rows; r++) {
		const struct procprof_row *row = &pp.rows[r];
		struct proc_ref ref = { row->image, row->proc };
		uint64_t s = procprof_event_samples(&pp, r, EVENT_CYCLES) +
			     procprof_event_samples(&pp, r, EVENT_CLOCK);
		struct calc c;

		if (!row->proc || row->image != i || s < a->min_samples)
			continue;
		if (calc_build(&c, v, &ref, &a->co))
			continue;
		compare(&c, ob, a->scale, &t, &e, a->procs, a->rates);
		calc_release(&c);
	}
	procprof_release(&pp);
	if (t.w > 0) {
		char label[64];
		const char *base = strrchr(images[0], '/');

		snprintf(label, sizeof(label), "%s:%s", a->label ? a->label : "", base ? base + 1 : images[0]);
		tally_print(label, &t, &e);
	}
	tally_merge(tt, &t);
	tally_merge(te, &e);
}

static void print_buckets(const struct tally *t)
{
	static const char *const names[NB] = { "5%", "10%", "15%", "20%", "25%", "30%", "35%", "40%", "45%",
					       ">45%", "never ran" };

	printf("  buckets (|error| <=):");
	for (size_t b = 0; b < NB; b++)
		printf(" %s %.1f%%", names[b], pc(t->bucket[b], t->w));
	printf("\n  confidence of the samples: high %.1f%% medium %.1f%% low %.1f%% none %.1f%%;"
	       " within 15%%: high %.1f%% medium %.1f%% low %.1f%%\n",
	       pc(t->conf_w[3], t->w), pc(t->conf_w[2], t->w), pc(t->conf_w[1], t->w), pc(t->conf_w[0], t->w),
	       pc(t->conf_within15[3], t->conf_w[3]), pc(t->conf_within15[2], t->conf_w[2]),
	       pc(t->conf_within15[1], t->conf_w[1]));
	/* the same as sample counts, for calc-accuracy.sh's table of levels */
	printf("  levels samples and within 15%%: high %.0f %.0f medium %.0f %.0f low %.0f %.0f none %.0f %.0f\n",
	       t->conf_w[3], t->conf_within15[3], t->conf_w[2], t->conf_within15[2], t->conf_w[1],
	       t->conf_within15[1], t->conf_w[0], t->conf_within15[0]);
}

/* True if name is one of the comma-separated names of list. */
static bool name_listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; *p;) {
		size_t k = strcspn(p, ",");

		if (k == n && !strncmp(p, name, n))
			return true;
		p += k + (p[k] == ',');
	}
	return false;
}

/*
 * --calibrate NAME[,NAME...]=CYCLES: each procedure NAME ran CYCLES cycles
 * per run (calc-calib: 4 per iteration; a run bracketed by the loop before
 * and after its workload names both, calib_loop,calib_loop_after); cycles
 * per sample = CYCLES x names x runs / their samples.
 */
static double calibrated_period(struct epoch_view *v, const char *spec, double runs)
{
	char names[256];
	double cycles, s = 0;
	size_t n_names = 1;
	struct procprof_opts po = PROCPROF_OPTS_INIT;
	struct procprof pp;

	if (sscanf(spec, "%255[^=]=%lf", names, &cycles) != 2 || !names[0])
		die("bad --calibrate '%s' (want NAME[,NAME...]=CYCLES)", spec);
	for (const char *p = names; *p; p++)
		n_names += *p == ',';
	po.quiet = true;
	if (procprof_build(&pp, v, &po))
		die("cannot read the epoch");
	for (size_t r = 0; r < pp.n_rows; r++)
		if (pp.rows[r].proc && name_listed(names, procprof_name(&pp, r)))
			s += (double)(procprof_event_samples(&pp, r, EVENT_CYCLES) +
				      procprof_event_samples(&pp, r, EVENT_CLOCK));
	procprof_release(&pp);
	if (!(s > 0))
		die("no samples of '%s' to calibrate with", names);
	printf("calibration: %.0f samples of %s: %.0f cycles per sample\n", s, names,
	       cycles * (double)n_names * runs / s);
	return cycles * (double)n_names * runs / s;
}

/* --counted NAME=INSNS: the windows' instructions per sample in NAME against INSNS x runs. */
static void counted_rate(struct epoch_view *v, const char *spec, double runs, const struct calc_opts *co)
{
	char name[128];
	double insns;
	struct procprof_opts po = PROCPROF_OPTS_INIT;
	struct procprof pp;

	if (sscanf(spec, "%127[^=]=%lf", name, &insns) != 2)
		die("bad --counted '%s' (want NAME=INSTRUCTIONS)", spec);
	po.quiet = true;
	if (procprof_build(&pp, v, &po))
		die("cannot read the epoch");
	for (size_t r = 0; r < pp.n_rows; r++) {
		struct proc_ref ref = { pp.rows[r].image, pp.rows[r].proc };
		struct calc c;
		double s;

		if (!pp.rows[r].proc || strcmp(procprof_name(&pp, r), name) || calc_build(&c, v, &ref, co))
			continue;
		s = (double)c.list.totals[c.time_event];
		double w = c.pscale.cand[CALC_PSCALE_WINDOWS] / s;

		if (w > 0)
			printf("  rate %-22.22s %6.1f windows (%s): %9.0f instructions a sample, counted %9.0f:"
			       " %+6.1f%%\n", name, c.pscale.windows, c.pscale.own ? "own" : "image's",
			       w, insns * runs / s, 100 * (w / (insns * runs / s) - 1));
		else
			printf("  rate %-22.22s no window\n", name);
		calc_release(&c);
	}
	procprof_release(&pp);
}

static const char usage[] =
	"usage: calc-accuracy -d DB [-E EPOCH] --callgrind FILE... [--scale X]\n"
	"                     [--period-cycles P | --mhz M] [--schedule MODE] [--flow] [--model NAME]\n"
	"                     [--min-samples N] [--label NAME] [--csv FILE] [--procs] [--rates]\n"
	"                     [--calibrate NAME[,NAME...]=CYCLES] [--counted NAME=INSTRUCTIONS]\n";

static void parse_sched(const char *s, struct calc_opts *co)
{
	co->sched = !strcmp(s, "cold") ? CALC_SCHED_COLD : !strcmp(s, "pred") ? CALC_SCHED_PRED
		  : !strcmp(s, "loop") ? CALC_SCHED_LOOP : CALC_SCHED_AUTO;
}

static void parse_est(const char *s, struct est_params *p)
{
	double v;
	char k[32];

	if (sscanf(s, "%31[a-z_]=%lf", k, &v) != 2)
		die("bad --est '%s'", s);
	if (!strcmp(k, "cluster")) p->cluster = v;
	else if (!strcmp(k, "support")) p->min_support = v;
	else if (!strcmp(k, "sparse")) p->sparse = v;
	else if (!strcmp(k, "window")) p->window = (size_t)v;
	else if (!strcmp(k, "trim")) p->trim = v;
	else if (!strcmp(k, "pairs")) p->pairs = v != 0;
	else if (!strcmp(k, "dep")) p->dep_windows = v != 0;
	else if (!strcmp(k, "repair")) p->repair = v;
	else if (!strcmp(k, "burst")) p->burst = v != 0;
	else if (!strcmp(k, "measure")) p->measure = v != 0;
	else if (!strcmp(k, "paths")) p->paths = v != 0;
	else if (!strcmp(k, "paths_fallback")) p->paths_fallback = (int)v;
	else if (!strcmp(k, "paths_kappa")) p->paths_kappa = v;
	else die("unknown --est knob '%s'", k);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "epoch", required_argument, NULL, 'E' },
		{ "callgrind", required_argument, NULL, 'c' },
		{ "scale", required_argument, NULL, 'x' },
		{ "period-cycles", required_argument, NULL, 'P' },
		{ "mhz", required_argument, NULL, 'M' },
		{ "schedule", required_argument, NULL, 's' },
		{ "no-flow", no_argument, NULL, 'F' },
		{ "flow", no_argument, NULL, 'W' },
		{ "min-samples", required_argument, NULL, 'n' },
		{ "label", required_argument, NULL, 'l' },
		{ "csv", required_argument, NULL, 'C' },
		{ "procs", no_argument, NULL, 'p' },
		{ "rates", no_argument, NULL, 'R' },
		{ "est", required_argument, NULL, 'e' },
		{ "dump", required_argument, NULL, 'D' },
		{ "calibrate", required_argument, NULL, 'K' },
		{ "counted", required_argument, NULL, 'N' },
		{ "model", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 }
	};
	struct est_params ep = EST_PARAMS_INIT;
	struct args a = { NULL, NULL, NULL, NULL, 1, 20, false, false, CALC_OPTS_INIT, ep };
	struct tally t = { 0 }, e = { 0 };
	struct epoch_view view;
	struct db *db;
	const char *calibrate = NULL, *counted = NULL;
	int c;

	cli_init(argc, argv);
	while ((c = getopt_long(argc, argv, "d:E:", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': a.db = optarg; break;
		case 'E': a.epoch = optarg; break;
		case 'c': read_callgrind(optarg); break;
		case 'x': a.scale = strtod(optarg, NULL); break;
		case 'P': a.co.period_cycles = strtod(optarg, NULL); break;
		case 'M': a.co.mhz = strtod(optarg, NULL); break;
		case 's': parse_sched(optarg, &a.co); break;
		case 'F': a.co.flow = false; break;
		case 'W': a.co.flow = true; break;
		case 'n': a.min_samples = strtoull(optarg, NULL, 0); break;
		case 'l': a.label = optarg; break;
		case 'C': a.csv = optarg; break;
		case 'p': a.procs = true; break;
		case 'R': a.rates = true; break;
		case 'e': parse_est(optarg, &a.est); break;
		case 'K':
			calibrate = optarg;
			break;
		case 'N':
			counted = optarg;
			break;
		case 'm':
			if (!(a.co.model = cpu_model_by_name(optarg)))
				die("no processor model '%s'", optarg);
			break;
		case 'D':
			if (!(dump = fopen(optarg, "w")))
				die_errno("cannot open '%s'", optarg);
			break;
		default: cli_usage(usage, 1);
		}
	}
	if (!n_objects)
		cli_usage(usage, 1);
	a.co.est = &a.est;
	if (a.csv && !(csv = fopen(a.csv, "a")))
		die_errno("cannot open '%s'", a.csv);
	if (!(db = db_open(db_default_path(a.db), DB_READ)))
		return 1;
	if (epoch_view_open(&view, db, a.epoch, NULL))
		return 1;
	if (calibrate)
		a.co.period_cycles = calibrated_period(&view, calibrate, a.scale);
	if (counted)
		counted_rate(&view, counted, a.scale, &a.co);
	for (size_t i = 0; i < view.n_images; i++) {
		const struct object *ob = object_for(view.images[i].rec->path);

		if (ob && (view.images[i].samples[EVENT_CYCLES] || view.images[i].samples[EVENT_CLOCK]))
			run_image(&view, i, ob, &a, &t, &e);
	}
	tally_print(a.label ? a.label : "all", &t, &e);
	print_buckets(&t);
	if (not_comparable > 0)
		printf("  not compared: %.0f samples in procedures callgrind never ran (its CPU picks other"
		       " ifunc variants)\n", not_comparable);
	if (csv)
		fclose(csv);
	if (dump)
		fclose(dump);
	epoch_view_release(&view);
	db_close(db);
	return 0;
}
