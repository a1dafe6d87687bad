/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tests/bench/calc-bench.c - how fast the instruction-level analysis is:
 * analyses EVERY procedure of large binaries as if each had samples (the
 * worst case of `dcpicalc --image`), and prints MB of code per second,
 * procedures and instructions per second, with the CFG (decode, jump
 * tables, classes) and the analysis (schedules, skid, estimation,
 * propagation, culprits, summary) timed apart, for the default schedule
 * and the others.
 *
 *   calc-bench [BINARY...]     (default: the C library, libstdc++ if present)
 *
 * Samples are synthetic (a few per instruction, deterministic), since the
 * work does not depend on their values beyond which classes have any.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/calc.h"
#include "core/die.h"
#include "core/xalloc.h"
#include "db/meta.h"
#include "disasm/image.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct totals {
	double cfg_s, calc_s, bytes;
	size_t procs, insns;
};

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
		struct totals *t)
{
	struct db_image rec;
	struct image *img;
	struct proctab *tab;
	struct calc_opts o = CALC_OPTS_INIT;
	unsigned seed = 1;

	memset(&rec, 0, sizeof(rec));
	rec.kind = IMAGE_FILE;
	rec.path = (char *)path;
	img = image_open(&rec, NULL);
	tab = image_procs(img);
	o.sched = mode;
	for (size_t k = 0; k < tab->n; k++) {
		const struct proc *p = &tab->v[k];
		struct calc c;
		double t0 = now(), t1;

		memset(&c, 0, sizeof(c));
		if (synth_listing(img, p, &c.list, &seed))
			continue;
		t1 = now();
		calc_from_listing(&c, meta, NULL, &o);
		t->calc_s += now() - t1;
		t->cfg_s += t1 - t0;
		t->bytes += (double)(p->end - p->start);
		t->procs++;
		t->insns += c.n_insns;
		calc_release(&c);
	}
	image_free(img);
}

static const char *mode_name(enum calc_sched m)
{
	static const char *const n[] = { "loop", "cold", "pred", "auto" };

	return n[m];
}

int main(int argc, char **argv)
{
	static const char *const defaults[] = {
		"/usr/lib/x86_64-linux-gnu/libc.so.6",
		"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
	};
	const char *const *paths = argc > 1 ? (const char *const *)argv + 1 : defaults;
	size_t n = argc > 1 ? (size_t)argc - 1 : 2;
	struct epoch_meta meta;
	struct epoch_event *ev;

	set_progname(argv[0]);
	epoch_meta_init(&meta);
	epoch_meta_fill_host(&meta);
	ev = epoch_meta_add_event(&meta, EVENT_CYCLES);
	ev->used = EVENT_CLOCK;
	ev->period = 100000;
	ev->period_in_ns = true;
	printf("%-40s %-5s %7s %9s %9s %8s %8s %9s\n", "binary", "mode", "procs", "insns", "MB code",
	       "cfg s", "calc s", "calc MB/s");
	for (size_t i = 0; i < n; i++) {
		FILE *f = fopen(paths[i], "rb");

		if (!f)
			continue;
		fclose(f);
		for (int m = CALC_SCHED_LOOP; m <= CALC_SCHED_AUTO; m++) {
			struct totals t = { 0 };

			run(paths[i], (enum calc_sched)m, &meta, &t);
			printf("%-40s %-5s %7zu %9zu %9.2f %8.2f %8.2f %9.2f\n", paths[i],
			       mode_name((enum calc_sched)m), t.procs, t.insns, t.bytes / 1e6, t.cfg_s,
			       t.calc_s, t.calc_s > 0 ? t.bytes / 1e6 / t.calc_s : 0);
			fflush(stdout);
		}
	}
	epoch_meta_release(&meta);
	return 0;
}
