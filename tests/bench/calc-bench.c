/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tests/bench/calc-bench.c - how fast the instruction-level analysis is:
 * analyses EVERY procedure of large binaries, as `dcpicalc --image` does
 * (calc_each: calc_prepare and calc_compute, the threads taking the
 * procedures in turn), and prints MB of code per second, side by side:
 *
 *   cold    the whole analysis (decoding, CFGs, classes, schedules, skid,
 *           estimation, propagation, culprits, summary), no cache;
 *   cached  a second analysis of the same binary: the static part (CFGs,
 *           schedules) from the database's cache (calc-cache.h), filled
 *           by a run before it;
 *
 * each on 1 thread and on 2 (--threads), with the CPU time the process
 * used (its threads summed) next to the elapsed time.
 *
 *   calc-bench [--mode loop|cold|pred|auto|all] [--threads N] [--digest] [BINARY...]
 *
 * (default: the C library, libstdc++ if present; the default schedule.)
 * Each binary gets a database of its own in a temporary directory, one
 * epoch whose profile has a few samples on every instruction
 * (deterministic), since the work does not depend on their values beyond
 * which classes have any.  --digest prints a digest of every procedure's
 * report (dcpicalc's text and --json) per configuration: they must agree
 * (the bench fails if not), and agree with another build's for a change
 * meant only to be faster.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "analysis/calc.h"
#include "analysis/calc-cache.h"
#include "analysis/calc-draw.h"
#include "analysis/calc-each.h"
#include "analysis/calc-json.h"
#include "analysis/epochview.h"
#include "core/cli.h"
#include "core/die.h"
#include "core/json.h"
#include "core/xalloc.h"
#include "db/db.h"
#include "db/meta.h"
#include "db/profile.h"
#include "disasm/elffile.h"
#include "disasm/image.h"
#include "present/draw.h"

static double now(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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

/* ---- the database ------------------------------------------------------------------ */

/* A database at dir with one epoch: binary path, samples on every instruction. */
static int make_db(const char *dir, const char *path)
{
	struct db *db = db_open(dir, DB_CREATE | DB_NOSYNC);
	struct image_index idx = IMAGE_INDEX_INIT;
	struct profile p = PROFILE_INIT;
	struct db_profile_id id;
	struct epoch_meta m;
	struct epoch_event *ev;
	struct db_image rec;
	struct elffile *ef;
	struct image *img;
	struct proctab *tab;
	unsigned seed = 1;

	if (!db || !(ef = elffile_open(path)))
		return -1;
	memset(&rec, 0, sizeof(rec));
	rec.kind = IMAGE_FILE;
	rec.path = xstrdup(path);
	memcpy(rec.build_id, ef->build_id, ef->build_id_len);
	rec.build_id_len = ef->build_id_len;
	image_key_from_build_id(rec.key, rec.build_id, rec.build_id_len);
	elffile_close(ef);
	img = image_open(&rec, NULL);
	tab = image_procs(img);
	for (size_t k = 0; k < tab->n; k++) {
		struct insn *v = NULL;
		size_t n = 0;
		uint64_t off;

		if (image_decode(img, &tab->v[k], &v, &n))
			continue;
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			if ((seed >> 16) % 8 && image_addr_to_offset(img, v[i].addr, &off))
				profile_add(&p, off, (seed >> 16) % 8);
		}
		free(v);
	}
	image_free(img);
	epoch_meta_init(&m);
	epoch_meta_fill_host(&m);
	ev = epoch_meta_add_event(&m, EVENT_CYCLES);
	ev->used = EVENT_CLOCK;
	ev->period = 100000;
	ev->period_in_ns = true;
	if (db_epoch_create(db, &m))
		return -1;
	image_index_put(&idx, &rec);
	db_profile_id_set(&id, rec.key, EVENT_CYCLES, false, 0);
	ev->samples = profile_total(&p);
	if (db_profile_store(db, m.seq, &id, &p) || db_images_store(db, m.seq, &idx) ||
	    db_meta_store(db, &m))
		return -1;
	profile_release(&p);
	image_index_release(&idx);
	epoch_meta_release(&m);
	free(rec.path);
	db_close(db);
	return 0;
}

/* ---- a run ---------------------------------------------------------------------------- */

struct run {
	bool digest;
	uint64_t h;
	size_t procs, insns, failed;
	double bytes;
};

static void count(void *ctx, size_t i, struct calc *c, int r)
{
	struct run *run = ctx;

	(void)i;
	if (r) {
		run->failed++;
		return;
	}
	run->procs++;
	run->insns += c->n_insns;
	run->bytes += (double)(c->list.ref.proc->end - c->list.ref.proc->start);
	if (run->digest)
		digest_calc(c, &run->h);
}

struct result {
	double wall, cpu;
	struct run run;
};

/* Analyses every procedure of the database's image as dcpicalc --image would. */
static void analyse(const char *dir, enum calc_sched mode, unsigned threads, bool cache,
		    bool digest, struct result *res)
{
	struct db *db = db_open(dir, 0);
	struct epoch_view v;
	struct calc_opts o = CALC_OPTS_INIT;
	struct image *img;
	struct proctab *tab;
	struct proc_ref *refs;
	double w0, c0;

	if (!db || epoch_view_open(&v, db, NULL, NULL))
		die("cannot open '%s'", dir);
	memset(res, 0, sizeof(*res));
	res->run.digest = digest;
	res->run.h = 0xcbf29ce484222325ull;
	w0 = now(CLOCK_MONOTONIC);
	c0 = now(CLOCK_PROCESS_CPUTIME_ID);
	img = epoch_view_image(&v, 0);
	tab = image_procs(img);
	refs = xcalloc(tab->n + 1, sizeof(*refs));
	for (size_t k = 0; k < tab->n; k++)
		refs[k] = (struct proc_ref){ 0, &tab->v[k] };
	o.sched = mode;
	o.cache = cache ? calc_cache_new(db) : NULL;
	calc_each(&v, refs, tab->n, &o, threads, count, &res->run);
	calc_cache_free(o.cache);
	res->wall = now(CLOCK_MONOTONIC) - w0;
	res->cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
	free(refs);
	epoch_view_release(&v);
	db_close(db);
}

static void print_row(const char *path, const char *mode, const char *what, unsigned threads,
		      const struct result *r, bool digest)
{
	double mb = r->run.bytes / 1e6;

	printf("%-28s %-5s %-6s %2u %6zu %7zu %6.2f %7.2f %7.2f %7.2f %7.2f", path, mode, what,
	       threads, r->run.procs, r->run.insns, mb, r->wall, r->cpu,
	       r->wall > 0 ? mb / r->wall : 0, r->cpu > 0 ? mb / r->cpu : 0);
	if (digest)
		printf("  %016llx", (unsigned long long)r->run.h);
	printf("\n");
	fflush(stdout);
}

static const char *short_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

int main(int argc, char **argv)
{
	static const char *const defaults[] = {
		"/usr/lib/x86_64-linux-gnu/libc.so.6",
		"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
	};
	static const char *const modes[] = { "loop", "cold", "pred", "auto", "all", NULL };
	int mode = CALC_SCHED_LOOP, status = 0;
	uint64_t threads = 2;
	bool digest = false;
	int only = -1;
	const char *keep = NULL;
	bool no_fill = false;
	static const char *const statics[] = { "cold", "cached", NULL };
	const struct cli_option options[] = {
		OPT_CHOICE(0, "mode", &mode, "MODE", "the schedule mode (default loop), or all of them",
			   modes, "mode"),
		OPT_U64(0, "threads", &threads, "N", "the most threads to compare with one (default 2)",
			1, 64, "number of threads"),
		OPT_BOOL(0, "digest", &digest, "a digest of every procedure's text and JSON report"),
		{ .type = CLI_CHOICE, .long_name = "only", .value = &only, .argh = "WHAT",
		  .help = "cold or cached runs only (profiling)", .choices = statics,
		  .flags = CLI_HIDDEN, .what = "run" },
		{ .type = CLI_STRING, .long_name = "db", .value = &keep, .argh = "DIR",
		  .help = "keep the database there (one binary; profiling)", .flags = CLI_HIDDEN },
		{ .type = CLI_BOOL, .long_name = "no-fill", .value = &no_fill, .defval = 1,
		  .help = "use the cache the kept database has (profiling)", .flags = CLI_HIDDEN },
		OPT_ARGUMENT("BINARY", "binaries to analyse (default: libc, libstdc++)"),
		OPT_END()
	};
	const struct cli_command cmd = {
		.usage = "calc-bench [--mode MODE] [--threads N] [--digest] [BINARY...]",
		.about = "Analyses every procedure of binaries as dcpicalc --image would: cold and\n"
			 "from the cache, on one thread and on several.",
		.options = options,
		.max_args = -1,
	};
	int first = cli_parse(argc, argv, &cmd);
	const char *const *paths = first < argc ? (const char *const *)argv + first : defaults;
	size_t n = first < argc ? (size_t)(argc - first) : 2;
	char tmpl[] = "/tmp/calc-bench.XXXXXX";
	const char *tmp = mkdtemp(tmpl);

	if (!tmp)
		die_errno("cannot make a temporary directory");
	printf("%-28s %-5s %-6s %2s %6s %7s %6s %7s %7s %7s %7s%s\n", "binary", "mode", "static",
	       "th", "procs", "insns", "MB", "wall s", "cpu s", "MB/s", "MB/cpu-s",
	       digest ? "  digest" : "");
	for (size_t i = 0; i < n; i++) {
		char *dir = keep ? xstrdup(keep) : xasprintf("%s/%zu.db", tmp, i);
		FILE *f = fopen(paths[i], "rb");
		struct stat st;

		if (!f)
			continue;
		fclose(f);
		if ((!keep || stat(dir, &st)) && make_db(dir, paths[i]))
			die("cannot make a database of '%s'", paths[i]);
		for (int m = CALC_SCHED_LOOP; m <= CALC_SCHED_AUTO; m++) {
			unsigned ths[2] = { 1, (unsigned)threads };
			uint64_t want = 0;
			char *cmd_rm;

			if (mode != 4 && m != mode)
				continue;
			cmd_rm = xasprintf("rm -rf '%s/calc'", dir);
			if (!no_fill && system(cmd_rm))
				die("cannot empty '%s/calc'", dir);
			free(cmd_rm);
			for (int cached = 0; cached <= 1; cached++)
				for (int k = 0; k < (threads > 1 ? 2 : 1); k++) {
					struct result r;

					if (only >= 0 && only != cached)
						continue;
					if (cached && !k && !no_fill) {
						/* fill the cache (not timed: what a first run does) */
						analyse(dir, (enum calc_sched)m, ths[1], true, false, &r);
					}
					analyse(dir, (enum calc_sched)m, ths[k], cached, digest, &r);
					print_row(short_name(paths[i]), modes[m], cached ? "cached" : "cold",
						  ths[k], &r, digest);
					if (digest && !want)
						want = r.run.h;
					if (digest && r.run.h != want) {
						fprintf(stderr, "calc-bench: the digests differ\n");
						status = 1;
					}
				}
		}
		free(dir);
	}
	{
		char *cmd_rm = xasprintf("rm -rf '%s'", tmp);

		if (system(cmd_rm))
			warning("cannot remove '%s'", tmp);
		free(cmd_rm);
	}
	return status;
}
