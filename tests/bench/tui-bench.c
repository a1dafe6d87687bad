/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui-bench - how fast dcpi-tui shows its first screens and answers keys,
 * measured headless (--script, drawing to /dev/null through ncurses).
 *
 *   tui-bench [DCPI-TUI [DIR]]     (default tui/dcpi-tui, tui-bench.d)
 *
 * Builds real ELF shared objects from generated assembly (as and ld, in
 * parallel; kept in DIR between runs): 1,000 images of 100 procedures each
 * (100,000 procedures), every procedure sampled, plus one image with a
 * procedure of about 8,000 instructions and 2,000 basic blocks.  Databases
 * of 10 and of the 1,000 images (one epoch, build-ids recorded as the
 * collector records them) are then opened by dcpi-tui several times with
 * $DCPI_TUI_TIMING, which records:
 *   first screen   from the start of the session to the first screen with
 *                  every view loaded: the images of the latest epoch (index,
 *                  profile totals, every binary verified by its build-id)
 *   key            from taking a key to the redrawn screen, every job it
 *                  started finished (a script waits for them); for P that is
 *                  the procedures of every image: all 1,000 binaries opened,
 *                  their symbols read, 100,000 rows built, sorted and drawn
 *   settle         the same, background work included: for P, the analysis
 *                  of every procedure (dcpicalc's CPI for the columns),
 *                  which fills the columns while keys keep working
 * and reports medians and tails, the 1,000/10 ratio, the time to the
 * procedures of every image, keys in the images and procedures views, and
 * keys in the procedure view on the big procedure (moves, pages, search,
 * H, following branches and back, source and pane toggles, the stalls and
 * culprits of the analysis), and keys in the diff views: the big database
 * has two epochs of the same images with other counts, compared procedure
 * by procedure (100,000 rows) and the big procedure side by side; against
 * the targets (first screen < 200 ms, keys < 20 ms).  Opening a view that
 * needs new data (P, a procedure, a diff, x in a diff) is reported apart.
 * Wall time of the whole process (exec to exit) is shown too.  Exits 1 if
 * a target was missed.
 */
#include "config.h"
#include "core/cli.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/timeutil.h"
#include "core/xalloc.h"
#include "db/db.h"
#include "disasm/elffile.h"
#include "disasm/image.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define RUNS 7
#define N_IMAGES 1000
#define N_PROCS 100
#define GEN_VERSION 2  /* bump when the generated code changes */
#define BIG_BLOCKS 2000

/* ---- the binaries ---------------------------------------------------------- */

/*
 * A procedure with a loop, a branch and a call: a few blocks, like real
 * code.  Its constants differ from image to image so that every image has
 * a build-id of its own (ld hashes the loaded sections, not the names).
 */
static void write_proc(FILE *f, int img, int p)
{
	fprintf(f, "\t.globl lib%04d_f%03d\n\t.hidden lib%04d_f%03d\n"
		   "\t.type lib%04d_f%03d, @function\nlib%04d_f%03d:\n", img, p, img, p, img, p, img, p);
	fprintf(f, "\txor %%eax, %%eax\n\tmov $%d, %%ecx\n"
		   "1:\tadd %%ecx, %%eax\n\timul $%d, %%eax, %%eax\n\tdec %%ecx\n\tjnz 1b\n"
		   "\tcmp $%d, %%eax\n\tjle 2f\n\tadd $%d, %%eax\n\tcall lib%04d_f%03d\n"
		   "2:\tret\n", 10 + p, 3 + img % 7, p, img * N_PROCS + p, img, (p + 1) % N_PROCS);
	fprintf(f, "\t.size lib%04d_f%03d, .-lib%04d_f%03d\n", img, p, img, p);
}

/* The big procedure: a chain of compares and branches, 4 instructions a block. */
static void write_big(FILE *f)
{
	fputs("\t.globl big\n\t.type big, @function\nbig:\n\txor %eax, %eax\n", f);
	for (int b = 0; b < BIG_BLOCKS; b++)
		fprintf(f, "\tcmp $%d, %%edi\n\tje .Lb%d\n\tadd $%d, %%eax\n"
			   ".Lb%d:\timul %%esi, %%eax\n", b, b, b + 1, b);
	fputs("\tret\n\t.size big, .-big\n", f);
}

static void write_sources(const char *dir)
{
	for (int i = 0; i <= N_IMAGES; i++) {
		char *path = i < N_IMAGES ? xasprintf("%s/src/lib%04d.s", dir, i)
					  : xasprintf("%s/src/libbig.s", dir);
		FILE *f = fopen(path, "w");

		if (!f)
			die_errno("cannot write '%s'", path);
		fputs("\t.text\n", f);
		if (i < N_IMAGES)
			for (int p = 0; p < N_PROCS; p++)
				write_proc(f, i, p);
		else
			write_big(f);
		fclose(f);
		free(path);
	}
}

/* Assembles and links every source, two at a time per core; kept between runs. */
static void build_binaries(const char *dir)
{
	char *stamp = xasprintf("%s/bin/.done-%d-%d-%d", dir, N_IMAGES, N_PROCS, GEN_VERSION), *cmd;
	int64_t t0 = time_monotonic_ns();

	if (!access(stamp, F_OK)) {
		free(stamp);
		return;
	}
	cmd = xasprintf("mkdir -p '%s/src' '%s/bin'", dir, dir);
	if (system(cmd))
		die("cannot create '%s'", dir);
	free(cmd);
	write_sources(dir);
	cmd = xasprintf("cd '%s' && ls src | sed 's/\\.s$//' | xargs -P %ld -I{} sh -c "
			"'as -o src/{}.o src/{}.s && ld -shared --build-id=sha1 -o bin/{}.so src/{}.o "
			"&& rm src/{}.o' && touch '%s'",
			dir, 2 * sysconf(_SC_NPROCESSORS_ONLN), stamp);
	fprintf(stderr, "tui-bench: building %d shared objects with as and ld...\n", N_IMAGES + 1);
	if (system(cmd))
		die("cannot build the binaries (as and ld are needed)");
	fprintf(stderr, "tui-bench: built in %.1f s\n", (double)(time_monotonic_ns() - t0) / 1e9);
	free(cmd);
	free(stamp);
}

/* ---- the databases --------------------------------------------------------- */

/* An image record as the collector makes one: path and build-id. */
static int image_record(const char *path, struct db_image *img)
{
	struct elffile *ef = elffile_open(path);

	if (!ef)
		return -1;
	memset(img, 0, sizeof(*img));
	img->kind = IMAGE_FILE;
	img->path = xstrdup(path);
	memcpy(img->build_id, ef->build_id, ef->build_id_len);
	img->build_id_len = ef->build_id_len;
	image_key_from_build_id(img->key, img->build_id, img->build_id_len);
	elffile_close(ef);
	return 0;
}

/* Samples in every procedure of the image (real offsets, through disasm). */
static void sample_image(const struct db_image *rec, struct profile *p, int salt)
{
	struct image *img = image_open(rec, NULL);
	struct proctab *t = image_procs(img);

	for (size_t k = 0; k < t->n; k++) {
		uint64_t off, span = t->v[k].end - t->v[k].start;

		for (uint64_t a = t->v[k].start; a < t->v[k].end; a += span / 3 + 1)
			if (image_addr_to_offset(img, a, &off))
				profile_add(p, off, 1 + (uint64_t)((salt * 7 + (int)k + (int)a) % 13));
	}
	image_free(img);
}

static int add_image(struct db *db, struct epoch_meta *m, struct image_index *idx,
		     const char *path, int salt)
{
	struct db_image img;
	struct profile p = PROFILE_INIT;
	struct db_profile_id id;

	if (image_record(path, &img))
		return -1;
	image_index_put(idx, &img);
	sample_image(&img, &p, salt);
	db_profile_id_set(&id, img.key, EVENT_CYCLES, false, 0);
	if (db_profile_store(db, m->seq, &id, &p))
		return -1;
	epoch_meta_add_event(m, EVENT_CYCLES)->samples += profile_total(&p);
	profile_release(&p);
	free(img.path);
	return 0;
}

/* One epoch of every image, labelled label; salt varies the counts. */
static int build_epoch(struct db *db, const char *bindir, int n_images, const char *label,
		       int salt)
{
	struct image_index idx = IMAGE_INDEX_INIT;
	struct epoch_meta m;

	epoch_meta_init(&m);
	epoch_meta_fill_host(&m);
	epoch_meta_set_label(&m, label);
	if (db_epoch_create(db, &m))
		return -1;
	for (int i = 0; i <= n_images; i++) {
		char *bin = i < n_images ? xasprintf("%s/lib%04d.so", bindir, i)
					 : xasprintf("%s/libbig.so", bindir);
		int r = add_image(db, &m, &idx, bin, i + salt);

		free(bin);
		if (r)
			return -1;
	}
	if (db_images_store(db, m.seq, &idx) || db_meta_store(db, &m))
		return -1;
	image_index_release(&idx);
	epoch_meta_release(&m);
	return 0;
}

/* n_epochs epochs "bench", "bench2" ... of the same images, counts varied. */
static int build_db(const char *path, const char *bindir, int n_images, int n_epochs)
{
	struct db *db;
	char *cmd = xasprintf("rm -rf '%s'", path);

	if (system(cmd))
		die("cannot remove '%s'", path);
	free(cmd);
	if (!(db = db_open(path, DB_CREATE | DB_NOSYNC)))
		return -1;
	for (int e = 0; e < n_epochs; e++) {
		char label[16];

		snprintf(label, sizeof(label), e ? "bench%d" : "bench", e + 1);
		if (build_epoch(db, bindir, n_images, label, e * 5))
			return -1;
	}
	db_close(db);
	return 0;
}

/* ---- the scripts ----------------------------------------------------------- */

static void write_script(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) == EOF || fclose(f))
		die_errno("cannot write '%s'", path);
}

/* Keys in the images view, then P and keys in the procedures of every image. */
static char *keys_script(void)
{
	struct strbuf sb = STRBUF_INIT;

	for (int i = 0; i < 50; i++)
		strbuf_addstr(&sb, "j\n");
	for (int i = 0; i < 10; i++)
		strbuf_addstr(&sb, "<PgDown>\n<PgUp>\n");
	strbuf_addstr(&sb, "G\ng\n:search lib0999\n");
	for (int i = 0; i < 5; i++)
		strbuf_addstr(&sb, "n\n");
	strbuf_addstr(&sb, "P\n");  /* the procedures of every image: a key timed alone */
	for (int i = 0; i < 50; i++)
		strbuf_addstr(&sb, "j\n");
	for (int i = 0; i < 10; i++)
		strbuf_addstr(&sb, "<PgDown>\n<PgUp>\n");
	strbuf_addstr(&sb, "G\ng\n:search lib0500_f050\n");
	for (int i = 0; i < 5; i++)
		strbuf_addstr(&sb, "n\n");
	strbuf_addstr(&sb, "<gt>\n<lt>\nS\nS\n");
	return strbuf_detach(&sb, NULL);
}

#define OPEN_BIG "goto big@libbig.so"

/* Keys in the procedure view of the big procedure. */
static char *proc_script(void)
{
	struct strbuf sb = STRBUF_INIT;

	/* typed at the prompt, so that opening it is timed with the ':' key */
	strbuf_addstr(&sb, "<:>" OPEN_BIG "<Enter>\n");
	for (int i = 0; i < 100; i++)
		strbuf_addstr(&sb, "j\n");
	for (int i = 0; i < 20; i++)
		strbuf_addstr(&sb, "<PgDown>\n");
	for (int i = 0; i < 20; i++)
		strbuf_addstr(&sb, "<PgUp>\n");
	strbuf_addstr(&sb, "G\ng\n");
	for (int i = 0; i < 10; i++)
		strbuf_addstr(&sb, "H\n");
	strbuf_addstr(&sb, ":search je\n");
	for (int i = 0; i < 10; i++)
		strbuf_addstr(&sb, "n\n<Enter>\nq\n");
	for (int i = 0; i < 4; i++)
		strbuf_addstr(&sb, "s\np\n");
	strbuf_addstr(&sb, "g\n");
	for (int i = 0; i < 20; i++)
		strbuf_addstr(&sb, "]\n");
	for (int i = 0; i < 10; i++)
		strbuf_addstr(&sb, "[\n");
	for (int i = 0; i < 10; i++)
		strbuf_addstr(&sb, "]\nc\nq\n");
	strbuf_addstr(&sb, "p\n");
	for (int i = 0; i < 20; i++)
		strbuf_addstr(&sb, "<PgDown>\n");
	strbuf_addstr(&sb, "p\n");
	return strbuf_detach(&sb, NULL);
}

/*
 * Keys in the diff view of the two epochs (100,000 procedures), then in the
 * side-by-side view of the big procedure; *marks gets the index of the
 * keys timed apart: [0] opening the diff, [1] x (the sides exchanged: a
 * new comparison), [2] x back, [3] Enter on big (both epochs analysed),
 * [4] the number of keys.
 */
static char *diff_script(size_t marks[5])
{
	struct strbuf sb = STRBUF_INIT;
	size_t n = 0;

#define KEY(k) (strbuf_addstr(&sb, k "\n"), n++)
	marks[0] = n;
	KEY("<:>diff bench bench2<Enter>");
	KEY("a"); /* every row: 100,000 of them */
	for (int i = 0; i < 50; i++)
		KEY("j");
	for (int i = 0; i < 10; i++) {
		KEY("<PgDown>");
		KEY("<PgUp>");
	}
	KEY("G");
	KEY("g");
	strbuf_addstr(&sb, ":search lib0999\n");
	for (int i = 0; i < 5; i++)
		KEY("n");
	KEY("<gt>");
	KEY("<lt>");
	KEY("S");
	KEY("S");
	KEY("a"); /* the notable rows, and back to every row */
	KEY("a");
	KEY("p");
	KEY("p");
	marks[1] = n;
	KEY("x");
	marks[2] = n;
	KEY("x");
	strbuf_addstr(&sb, ":goto big\n");
	marks[3] = n;
	KEY("<Enter>");
	for (int i = 0; i < 50; i++)
		KEY("j");
	for (int i = 0; i < 20; i++)
		KEY("<PgDown>");
	for (int i = 0; i < 20; i++)
		KEY("<PgUp>");
	KEY("G");
	KEY("g");
	strbuf_addstr(&sb, ":search je\n");
	for (int i = 0; i < 10; i++)
		KEY("n");
	KEY("a");
	KEY("a");
	KEY("p");
	KEY("p");
	marks[4] = n;
#undef KEY
	return strbuf_detach(&sb, NULL);
}

/* ---- running --------------------------------------------------------------- */

struct run {
	int64_t wall_ns, first_screen_ns;
	int64_t *keys, *settle;
	size_t n_keys, n_settle;
};

static void read_timing(const char *path, struct run *r)
{
	FILE *f = fopen(path, "r");
	char name[32];
	long long v;
	size_t alloc = 0, alloc_settle = 0;

	if (!f)
		die_errno("no timing file '%s'", path);
	while (fscanf(f, "%31s %lld", name, &v) == 2) {
		if (!strcmp(name, "first_screen_ns")) {
			r->first_screen_ns = v;
		} else if (!strcmp(name, "key_ns")) {
			ALLOC_GROW(r->keys, r->n_keys + 1, alloc);
			r->keys[r->n_keys++] = v;
		} else if (!strcmp(name, "settle_ns")) {
			ALLOC_GROW(r->settle, r->n_settle + 1, alloc_settle);
			r->settle[r->n_settle++] = v;
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

static double pct_ms(const int64_t *v, size_t n, double p)
{
	int64_t *c = xcalloc(n ? n : 1, sizeof(*c));
	double r;

	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_i64);
	r = n ? (double)c[(size_t)((double)(n - 1) * p)] / 1e6 : 0;
	free(c);
	return r;
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
		free(r.settle);
	}
	*screen_ms = pct_ms(s, RUNS, 0.5);
	*wall_ms = pct_ms(w, RUNS, 0.5);
}

/* Targets missed in this run: the exit status says so (a benchmark that
 * misses its target must not look like one that met it). */
static int missed;

/* "met", or "MISSED" and counted. */
static const char *target(bool met)
{
	missed += !met;
	return met ? "met" : "MISSED";
}

static void report_keys(const char *what, const int64_t *keys, size_t n)
{
	printf("keystroke to redrawn screen, %s (%zu keys): median %.2f ms, p95 %.2f ms,"
	       " max %.2f ms   target < 20 ms: %s\n",
	       what, n, pct_ms(keys, n, 0.5), pct_ms(keys, n, 0.95), pct_ms(keys, n, 1.0),
	       target(pct_ms(keys, n, 0.95) < 20));
}

/* The keys script: images keys, P, procedures keys (see keys_script). */
static void measure_keys(const char *tui, const char *dir, const char *db, const char *script)
{
	size_t n_img = 50 + 20 + 2 + 5, n_procs = 50 + 20 + 2 + 5 + 4;
	int64_t p[RUNS], a[RUNS];
	struct run r;

	for (int i = 0; i < RUNS; i++) {
		run_tui(tui, dir, db, script, &r);
		if (r.n_keys != n_img + 1 + n_procs || r.n_settle != r.n_keys)
			die("expected %zu keys, got %zu", n_img + 1 + n_procs, r.n_keys);
		p[i] = r.keys[n_img];
		a[i] = r.settle[n_img];
		if (i < RUNS - 1) {
			free(r.keys);
			free(r.settle);
		}
	}
	printf("P: the procedures of every image (1000 images, %d procedures; median of %d):"
	       " %.1f ms, min %.1f ms\n", N_IMAGES * N_PROCS, RUNS, pct_ms(p, RUNS, 0.5),
	       pct_ms(p, RUNS, 0));
	printf("   then every procedure analysed in the background (CPI columns): %.1f s\n",
	       pct_ms(a, RUNS, 0.5) / 1000);
	report_keys("images view, 1000 images", r.keys, n_img);
	report_keys("procedures view, 100,000 rows", r.keys + n_img + 1, n_procs);
	free(r.keys);
	free(r.settle);
}

/*
 * The proc script: ':' (the prompt reads the command and its Enter itself,
 * so the first key timed is the whole of opening the procedure), then keys.
 */
static void measure_proc(const char *tui, const char *dir, const char *db, const char *script)
{
	size_t enter = 0;
	int64_t open[RUNS];
	struct run r;

	for (int i = 0; i < RUNS; i++) {
		run_tui(tui, dir, db, script, &r);
		if (r.n_keys <= enter + 1)
			die("expected more than %zu keys, got %zu", enter + 1, r.n_keys);
		open[i] = r.keys[enter];
		if (i < RUNS - 1) {
			free(r.keys);
			free(r.settle);
		}
	}
	printf("opening the procedure of 8,000 instructions, analysed (Enter at the prompt;"
	       " median of %d): %.1f ms\n", RUNS, pct_ms(open, RUNS, 0.5));
	report_keys("procedure view with analysis, 8,000 instructions", r.keys + enter + 1,
		    r.n_keys - enter - 1);
	free(r.keys);
	free(r.settle);
}

/* Keys of a run between two marks, without the keys timed apart. */
static void diff_keys(const struct run *r, const size_t *marks, int64_t **out, size_t *n_out)
{
	*n_out = 0;
	*out = xcalloc(r->n_keys, sizeof(**out));
	for (size_t i = 0; i < r->n_keys; i++)
		if (i != marks[0] && i != marks[1] && i != marks[2] && i != marks[3])
			(*out)[(*n_out)++] = r->keys[i];
}

static void measure_diff(const char *tui, const char *dir, const char *db, const char *script,
			 const size_t marks[5])
{
	int64_t open[RUNS], swap[RUNS], side[RUNS], *keys;
	size_t n_keys, n_diff = marks[3] - 3;
	struct run r;

	for (int i = 0; i < RUNS; i++) {
		run_tui(tui, dir, db, script, &r);
		if (r.n_keys != marks[4])
			die("expected %zu keys, got %zu", marks[4], r.n_keys);
		open[i] = r.keys[marks[0]];
		swap[i] = r.keys[marks[1]];
		side[i] = r.keys[marks[3]];
		if (i < RUNS - 1) {
			free(r.keys);
			free(r.settle);
		}
	}
	printf("diff of two epochs of 1000 images, 100,000 procedures (median of %d): %.1f ms;"
	       " x (sides exchanged, compared again): %.1f ms\n", RUNS, pct_ms(open, RUNS, 0.5),
	       pct_ms(swap, RUNS, 0.5));
	printf("side by side, 8,000 instructions, both epochs analysed (median of %d): %.1f ms\n",
	       RUNS, pct_ms(side, RUNS, 0.5));
	diff_keys(&r, marks, &keys, &n_keys);
	report_keys("diff view, 100,000 procedures", keys, n_diff);
	report_keys("side-by-side view, 8,000 instructions", keys + n_diff, n_keys - n_diff);
	free(keys);
	free(r.keys);
	free(r.settle);
}

int main(int argc, char **argv)
{
	const char *tui = argc > 1 ? argv[1] : "tui/dcpi-tui";
	const char *dir = argc > 2 ? argv[2] : "tui-bench.d";
	char *bindir = xasprintf("%s/bin", dir), *quit = xasprintf("%s/quit.script", dir);
	char *keys = xasprintf("%s/keys.script", dir), *proc = xasprintf("%s/proc.script", dir);
	char *diff = xasprintf("%s/diff.script", dir);
	size_t marks[5];
	char *small = xasprintf("%s/small.db", dir), *big = xasprintf("%s/big.db", dir);
	char *text;
	double s_small, w_small, s_big, w_big;

	cli_init(argc, argv);
	if (access(tui, X_OK))
		die("no dcpi-tui at '%s' (give its path)", tui);
	build_binaries(dir);
	if (build_db(small, bindir, 10, 1) || build_db(big, bindir, N_IMAGES, 2))
		return 1;
	write_script(quit, ":quit\n");
	write_script(keys, text = keys_script());
	free(text);
	write_script(proc, text = proc_script());
	free(text);
	write_script(diff, text = diff_script(marks));
	free(text);

	first_screen(tui, dir, small, quit, &s_small, &w_small);
	first_screen(tui, dir, big, quit, &s_big, &w_big);
	printf("first screen (median of %d)   11 images: %6.1f ms   1001 images: %6.1f ms"
	       "   ratio %.1f   target < 200 ms: %s\n",
	       RUNS, s_small, s_big, s_small > 0 ? s_big / s_small : 0,
	       target(s_big < 200));
	printf("whole run, exec to exit       11 images: %6.1f ms   1001 images: %6.1f ms\n",
	       w_small, w_big);
	measure_keys(tui, dir, big, keys);
	measure_proc(tui, dir, big, proc);
	measure_diff(tui, dir, big, diff, marks);
	free(bindir);
	free(quit);
	free(keys);
	free(proc);
	free(diff);
	free(small);
	free(big);
	if (missed)
		fprintf(stderr, "tui-bench: %d target%s missed\n", missed, missed > 1 ? "s" : "");
	return missed ? 1 : 0;
}
