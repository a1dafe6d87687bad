/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tests/bench/calc-bench.c - how fast the instruction-level analysis is:
 * analyses EVERY procedure of large binaries as if each had samples (the
 * worst case of `dcpicalc --image`), and prints MB of code per second,
 * with the CFG (decode, jump tables, classes) and the analysis (schedules,
 * skid, estimation, propagation, culprits, summary) timed apart.
 *
 *   calc-bench [--mode loop|cold|pred|auto|all] [--digest] [BINARY...]
 *
 * (default: the C library, libstdc++ if present; the default schedule.)
 * Samples are synthetic (a few per instruction, deterministic), since the
 * work does not depend on their values beyond which classes have any.
 * --digest also prints a digest of every procedure's report (dcpicalc's
 * text and --json): the same digest from two builds means the same
 * figures, which is how a change meant only to be faster is checked.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/calc.h"
#include "analysis/calc-draw.h"
#include "analysis/calc-json.h"
#include "core/cli.h"
#include "core/die.h"
#include "core/json.h"
#include "core/xalloc.h"
#include "db/meta.h"
#include "disasm/image.h"
#include "present/draw.h"

static double now(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct totals {
	double cfg_s, calc_s, wall_s, cpu_s, bytes;
	size_t procs, insns;
	uint64_t digest;
};

/* ---- digest: FNV-1a over everything written to a FILE ------------------------- */

static ssize_t digest_write(void *cookie, const char *buf, size_t size)
{
	uint64_t *h = cookie;

	for (size_t i = 0; i < size; i++) {
		*h ^= (unsigned char)buf[i];
		*h *= 0x100000001b3ull;
	}
	return (ssize_t)size;
}

/* Mixes dcpicalc's text and JSON of c into *h. */
static void digest_calc(const struct calc *c, uint64_t *h)
{
	cookie_io_functions_t io = { NULL, digest_write, NULL, NULL };
	FILE *f = fopencookie(h, "w", io);
	struct json_writer jw;
	struct draw d;

	if (!f)
		die("cannot open a digest stream");
	draw_init_file(&d, f, 0);
	calc_draw(c, &d, 0);
	draw_file_finish(&d);
	json_init(&jw, f, false);
	calc_json(c, &jw);
	json_finish(&jw);
	fclose(f);
}

/* ---- the run --------------------------------------------------------------------- */

/* A listing of p with synthetic samples, as listing_build would give it. */
static int synth_listing(struct image *img, const struct proc *p, struct listing *l, unsigned *seed)
{
	memset(l, 0, sizeof(*l));
	if (image_cfg(img, p, &l->cfg))
		return -1;
	cfg_classify(&l->cfg);
	l->img = img;
	l->ref.proc = p;
	l->events[0] = EVENT_CYCLES;
	l->n_events = 1;
	l->n_insns = l->cfg.n_insns;
	l->insns = xcalloc(l->n_insns + 1, sizeof(*l->insns));
	for (size_t i = 0; i < l->n_insns; i++) {
		*seed = *seed * 1103515245u + 12345u;
		l->insns[i].insn = &l->cfg.insns[i];
		l->insns[i].block = cfg_block_at(&l->cfg, l->cfg.insns[i].addr);
		l->insns[i].samples[EVENT_CYCLES] = (*seed >> 16) % 8;
		l->totals[EVENT_CYCLES] += l->insns[i].samples[EVENT_CYCLES];
	}
	return 0;
}

static void run(const char *path, enum calc_sched mode, const struct epoch_meta *meta,
		bool digest, struct totals *t)
{
	struct db_image rec;
	struct image *img;
	struct proctab *tab;
	struct calc_opts o = CALC_OPTS_INIT;
	unsigned seed = 1;
	double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);

	memset(&rec, 0, sizeof(rec));
	rec.kind = IMAGE_FILE;
	rec.path = (char *)path;
	img = image_open(&rec, NULL);
	tab = image_procs(img);
	o.sched = mode;
	t->digest = 0xcbf29ce484222325ull;
	for (size_t k = 0; k < tab->n; k++) {
		const struct proc *p = &tab->v[k];
		struct calc c;
		double t0 = now(CLOCK_THREAD_CPUTIME_ID), t1;

		memset(&c, 0, sizeof(c));
		if (synth_listing(img, p, &c.list, &seed))
			continue;
		t1 = now(CLOCK_THREAD_CPUTIME_ID);
		calc_from_listing(&c, meta, NULL, &o);
		t->calc_s += now(CLOCK_THREAD_CPUTIME_ID) - t1;
		t->cfg_s += t1 - t0;
		t->bytes += (double)(p->end - p->start);
		t->procs++;
		t->insns += c.n_insns;
		if (digest)
			digest_calc(&c, &t->digest);
		calc_release(&c);
	}
	image_free(img);
	t->wall_s = now(CLOCK_MONOTONIC) - w0;
	t->cpu_s = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
}

int main(int argc, char **argv)
{
	static const char *const defaults[] = {
		"/usr/lib/x86_64-linux-gnu/libc.so.6",
		"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
	};
	static const char *const modes[] = { "loop", "cold", "pred", "auto", "all", NULL };
	int mode = CALC_SCHED_LOOP;
	bool digest = false;
	const struct cli_option options[] = {
		OPT_CHOICE(0, "mode", &mode, "MODE", "the schedule mode (default loop), or all of them",
			   modes, "mode"),
		OPT_BOOL(0, "digest", &digest, "a digest of every procedure's text and JSON report"),
		OPT_ARGUMENT("BINARY", "binaries to analyse (default: libc, libstdc++)"),
		OPT_END()
	};
	const struct cli_command cmd = {
		.usage = "calc-bench [--mode MODE] [--digest] [BINARY...]",
		.about = "Analyses every procedure of binaries, as dcpicalc --image would.",
		.options = options,
		.max_args = -1,
	};
	int first = cli_parse(argc, argv, &cmd);
	const char *const *paths = first < argc ? (const char *const *)argv + first : defaults;
	size_t n = first < argc ? (size_t)(argc - first) : 2;
	struct epoch_meta meta;
	struct epoch_event *ev;

	epoch_meta_init(&meta);
	epoch_meta_fill_host(&meta);
	ev = epoch_meta_add_event(&meta, EVENT_CYCLES);
	ev->used = EVENT_CLOCK;
	ev->period = 100000;
	ev->period_in_ns = true;
	printf("%-40s %-5s %6s %7s %6s %6s %6s %7s %7s %6s%s\n", "binary", "mode", "procs", "insns",
	       "MB", "cfg s", "calc s", "calc", "total", "cpu s", digest ? "  digest" : "");
	printf("%-40s %-5s %6s %7s %6s %6s %6s %7s %7s %6s\n", "", "", "", "", "", "", "", "MB/s",
	       "MB/s", "");
	for (size_t i = 0; i < n; i++) {
		FILE *f = fopen(paths[i], "rb");

		if (!f)
			continue;
		fclose(f);
		for (int m = CALC_SCHED_LOOP; m <= CALC_SCHED_AUTO; m++) {
			struct totals t = { 0 };

			if (mode != 4 && m != mode)
				continue;
			run(paths[i], (enum calc_sched)m, &meta, digest, &t);
			printf("%-40s %-5s %6zu %7zu %6.2f %6.2f %6.2f %7.2f %7.2f %6.2f", paths[i],
			       modes[m], t.procs, t.insns, t.bytes / 1e6, t.cfg_s, t.calc_s,
			       t.calc_s > 0 ? t.bytes / 1e6 / t.calc_s : 0,
			       t.cfg_s + t.calc_s > 0 ? t.bytes / 1e6 / (t.cfg_s + t.calc_s) : 0, t.cpu_s);
			if (digest)
				printf("  %016llx", (unsigned long long)t.digest);
			printf("\n");
			fflush(stdout);
		}
	}
	epoch_meta_release(&meta);
	return 0;
}
