/*
 * tui-bench - how fast dcpi-tui shows its first screen and answers keys,
 * measured headless (--script, drawing to /dev/null through ncurses).
 *
 *   tui-bench [DCPI-TUI [DIR]]     (default tui/dcpi-tui, tui-bench.d)
 *
 * Builds databases of 10 and 1,000 images (one epoch, 64 sampled offsets
 * an image) and runs dcpi-tui on each several times with $DCPI_TUI_TIMING,
 * which records:
 *   first screen   from the start of the session to the first screen with
 *                  every view loaded (the images of the latest epoch:
 *                  index, profile totals, a stat() of every binary)
 *   key            from taking a key to the redrawn screen, for a mix of
 *                  cursor, page, sort, search-next and view-switch keys
 * and reports medians and tails, the 1,000/10 ratio, and the targets
 * (first screen < 200 ms, keys < 20 ms).  Wall time of the whole process
 * (exec to exit) is shown too.
 */
#include "config.h"
#include "core/cli.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/timeutil.h"
#include "core/xalloc.h"
#include "db/db.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define RUNS 7

static int build_db(const char *dir, int n_images)
{
	struct db *db = db_open(dir, DB_CREATE | DB_NOSYNC);
	struct image_index idx = IMAGE_INDEX_INIT;
	struct epoch_meta m;

	if (!db)
		return -1;
	epoch_meta_init(&m);
	epoch_meta_fill_host(&m);
	epoch_meta_set_label(&m, "bench");
	if (db_epoch_create(db, &m))
		return -1;
	for (int i = 0; i < n_images; i++) {
		struct db_image img = { .kind = IMAGE_FILE, .size = 4096 };
		struct profile p = PROFILE_INIT;
		struct db_profile_id id;

		img.path = xasprintf("/usr/lib/dcpi-bench/lib%04d.so", i);
		image_key_from_path(img.key, img.path, 1, (uint64_t)i);
		image_index_put(&idx, &img);
		for (uint64_t off = 0; off < 64; off++)
			profile_add(&p, 0x1000 + off * 4, 1 + (uint64_t)((i * 7 + (int)off) % 13));
		db_profile_id_set(&id, img.key, EVENT_CYCLES, false, 0);
		if (db_profile_store(db, m.seq, &id, &p))
			return -1;
		epoch_meta_add_event(&m, EVENT_CYCLES)->samples += profile_total(&p);
		profile_release(&p);
		free(img.path);
	}
	if (db_images_store(db, m.seq, &idx) || db_meta_store(db, &m))
		return -1;
	image_index_release(&idx);
	epoch_meta_release(&m);
	db_close(db);
	return 0;
}

/* The keys of a session: moves, pages, sorts, searches, views. */
static void write_keys_script(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		die_errno("cannot write '%s'", path);
	for (int i = 0; i < 100; i++)
		fputs("j\n", f);
	for (int i = 0; i < 20; i++)
		fputs("<PgDown>\n<PgUp>\n", f);
	fputs("G\ng\n<gt>\n<lt>\nS\nS\n", f);
	fputs(":search lib0999\n", f);
	for (int i = 0; i < 10; i++)
		fputs("n\n", f);
	for (int i = 0; i < 5; i++)
		fputs("q\nI\n?\nq\n", f);
	fclose(f);
}

struct run {
	int64_t wall_ns, first_screen_ns;
	int64_t *keys;
	size_t n_keys;
};

static void read_timing(const char *path, struct run *r)
{
	FILE *f = fopen(path, "r");
	char name[32];
	long long v;
	size_t alloc = 0;

	if (!f)
		die_errno("no timing file '%s'", path);
	while (fscanf(f, "%31s %lld", name, &v) == 2) {
		if (!strcmp(name, "first_screen_ns")) {
			r->first_screen_ns = v;
		} else if (!strcmp(name, "key_ns")) {
			ALLOC_GROW(r->keys, r->n_keys + 1, alloc);
			r->keys[r->n_keys++] = v;
		}
	}
	fclose(f);
}

static void run_tui(const char *tui, const char *dir, const char *db, const char *script,
		    struct run *r)
{
	char *timing = xasprintf("%s/timing", dir), *home = xasprintf("HOME=%s", dir);
	char *tenv = xasprintf("DCPI_TUI_TIMING=%s", timing);
	char *const envp[] = { "TERM=xterm-256color", "LINES=50", "COLUMNS=160", "TZ=UTC",
			       "LC_ALL=C.UTF-8", home, tenv, NULL };
	int64_t t0 = time_monotonic_ns();
	int status;
	pid_t pid = fork();

	if (pid < 0)
		die_errno("fork");
	if (!pid) {
		execle(tui, tui, "--script", script, db, (char *)NULL, envp);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		die("'%s' failed", tui);
	memset(r, 0, sizeof(*r));
	r->wall_ns = time_monotonic_ns() - t0;
	read_timing(timing, r);
	free(timing);
	free(home);
	free(tenv);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static double pct_ms(int64_t *v, size_t n, double p)
{
	qsort(v, n, sizeof(*v), cmp_i64);
	return n ? (double)v[(size_t)((double)(n - 1) * p)] / 1e6 : 0;
}

/* Median first screen and wall time over RUNS, in ms. */
static void first_screen(const char *tui, const char *dir, const char *db, const char *script,
			 double *screen_ms, double *wall_ms)
{
	int64_t s[RUNS], w[RUNS];

	for (int i = 0; i < RUNS; i++) {
		struct run r;

		run_tui(tui, dir, db, script, &r);
		s[i] = r.first_screen_ns;
		w[i] = r.wall_ns;
		free(r.keys);
	}
	*screen_ms = pct_ms(s, RUNS, 0.5);
	*wall_ms = pct_ms(w, RUNS, 0.5);
}

int main(int argc, char **argv)
{
	const char *tui = argc > 1 ? argv[1] : "tui/dcpi-tui";
	const char *dir = argc > 2 ? argv[2] : "tui-bench.d";
	char *rm = xasprintf("rm -rf '%s' && mkdir -p '%s'", dir, dir);
	char *quit = xasprintf("%s/quit.script", dir), *keys = xasprintf("%s/keys.script", dir);
	char *small = xasprintf("%s/small.db", dir), *big = xasprintf("%s/big.db", dir);
	double s_small, w_small, s_big, w_big;
	struct run r;
	FILE *f;

	cli_init(argc, argv);
	if (access(tui, X_OK))
		die("no dcpi-tui at '%s' (give its path)", tui);
	if (system(rm))
		die("cannot prepare '%s'", dir);
	if (build_db(small, 10) || build_db(big, 1000))
		return 1;
	if (!(f = fopen(quit, "w")))
		die_errno("cannot write '%s'", quit);
	fputs(":quit\n", f);
	fclose(f);
	write_keys_script(keys);

	first_screen(tui, dir, small, quit, &s_small, &w_small);
	first_screen(tui, dir, big, quit, &s_big, &w_big);
	printf("first screen (median of %d)   10 images: %6.1f ms   1000 images: %6.1f ms"
	       "   ratio %.1f   target < 200 ms: %s\n",
	       RUNS, s_small, s_big, s_small > 0 ? s_big / s_small : 0,
	       s_big < 200 ? "met" : "MISSED");
	printf("whole run, exec to exit       10 images: %6.1f ms   1000 images: %6.1f ms\n",
	       w_small, w_big);

	run_tui(tui, dir, big, keys, &r);
	printf("keystroke to redrawn screen (1000 images, %zu keys): median %.2f ms, p95 %.2f ms,"
	       " max %.2f ms   target < 20 ms: %s\n",
	       r.n_keys, pct_ms(r.keys, r.n_keys, 0.5), pct_ms(r.keys, r.n_keys, 0.95),
	       pct_ms(r.keys, r.n_keys, 1.0), pct_ms(r.keys, r.n_keys, 0.95) < 20 ? "met" : "MISSED");
	free(r.keys);
	free(rm);
	free(quit);
	free(keys);
	free(small);
	free(big);
	return 0;
}
