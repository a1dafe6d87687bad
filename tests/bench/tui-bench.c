/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui-bench - how fast dcpi-tui shows its first screens and answers keys,
 * and how much memory it takes, measured headless (--script, drawing to
 * /dev/null through ncurses).
 *
 *   tui-bench [--images N] [--procs M] [--epochs E] [--runs R] [--reuse]
 *             [--only first,keys,proc,diff,epochs] [DCPI-TUI [DIR]]
 *
 * (default 1,000 images of 100 procedures, 2,000 epochs, 7 runs;
 * tui/dcpi-tui, tui-bench.d; `make bench-tui-big` runs 10,000 x 100.)
 *
 * Builds real ELF shared objects from generated assembly (as and ld, in
 * parallel; kept in DIR between runs and sizes): N images of M procedures
 * each, every procedure sampled, plus one image with a procedure of about
 * 8,000 instructions and 2,000 basic blocks.  Databases of 10 and of the N
 * images (two epochs of the same images with other counts, build-ids
 * recorded as the collector records them), and one of E small epochs (a
 * week of the daemon's rotation, synthetic as db-bench's), are then opened
 * by dcpi-tui R times each with $DCPI_TUI_TIMING, which records:
 *   first screen   from the start of the session to the first screen with
 *                  every view loaded (the images of the latest epoch: index
 *                  and totals; binaries are verified in the background)
 *   key            from taking a key to the redrawn screen, every job it
 *                  started finished (a script waits for them); for P that is
 *                  the procedures of every image: all N binaries opened,
 *                  their symbols read, N x M rows built, sorted and drawn
 *   settle         the same, background work included: for P, the analysis
 *                  of every procedure (dcpicalc's CPI for the columns),
 *                  which fills the columns while keys keep working
 * and reports medians and tails (p99, max) of keys in every view: images,
 * procedures of every image, the big procedure (moves, pages, search, H,
 * following branches and back, source and pane toggles, the stalls and
 * culprits of the analysis), the diff of the two epochs procedure by
 * procedure and the big procedure side by side, the epochs view of E
 * epochs and a diff of two of them; the time to open what needs new data
 * (P, a procedure, a diff, x in a diff) apart; the resident size at its
 * peak (the largest of the runs, from wait4); and the whole process (exec
 * to exit).  Against the targets: first screen < 150 ms, every key p99
 * < 20 ms and max < 50 ms, P drawn < 800 ms, RSS < 300 MB, the background
 * analysis of every procedure < 15 s, the epochs view of E epochs < 200 ms.
 * Exits 1 if a target was missed.  Every check holds at any size.
 *
 * --reuse keeps the databases of an earlier run with the same sizes (their
 * analysis caches emptied, so that the first opening is one), and --only
 * measures some of the above: a run of a part at 10,000 images takes
 * minutes instead of a quarter of an hour.
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

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define GEN_VERSION 3  /* bump when the generated code changes */
#define BIG_BLOCKS 2000
#define EPOCH_IMAGES 10 /* images in each epoch of the epochs database */

/* The targets of a server-scale workbench. */
#define FIRST_SCREEN_MS 150.0
#define KEY_P99_MS 20.0
#define KEY_MAX_MS 50.0
#define P_DRAWN_MS 800.0
#define RSS_MB 300.0
#define ANALYSIS_S 15.0
#define EPOCHS_VIEW_MS 200.0

static uint64_t n_images = 1000, n_procs = 100, n_epochs = 2000, runs = 7;
static bool reuse;
static const char *only;

/* True if the part called name is measured (--only). */
static bool measured(const char *name)
{
	size_t n = strlen(name);

	for (const char *p = only; p && *p; p += strcspn(p, ","), p += *p == ',')
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
	return !only;
}

/* ---- the binaries ---------------------------------------------------------- */

/*
 * A procedure with a loop, a branch and a call: a few blocks, like real
 * code.  Its constants differ from image to image so that every image has
 * a build-id of its own (ld hashes the loaded sections, not the names).
 */
static void write_proc(FILE *f, int img, int p)
{
	int np = (int)n_procs;

	fprintf(f, "\t.globl lib%04d_f%03d\n\t.hidden lib%04d_f%03d\n"
		   "\t.type lib%04d_f%03d, @function\nlib%04d_f%03d:\n", img, p, img, p, img, p, img, p);
	fprintf(f, "\txor %%eax, %%eax\n\tmov $%d, %%ecx\n"
		   "1:\tadd %%ecx, %%eax\n\timul $%d, %%eax, %%eax\n\tdec %%ecx\n\tjnz 1b\n"
		   "\tcmp $%d, %%eax\n\tjle 2f\n\tadd $%d, %%eax\n\tcall lib%04d_f%03d\n"
		   "2:\tret\n", 10 + p, 3 + img % 7, p, img * np + p, img, (p + 1) % np);
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

/* Sources of images [from, n_images), and of the big one if from is 0. */
static void write_sources(const char *bindir, uint64_t from)
{
	for (uint64_t i = from; i <= n_images; i++) {
		char *path;
		FILE *f;

		if (i == n_images && from)
			break;
		path = i < n_images ? xasprintf("%s/src/lib%04d.s", bindir, (int)i)
				    : xasprintf("%s/src/libbig.s", bindir);
		if (!(f = fopen(path, "w")))
			die_errno("cannot write '%s'", path);
		fputs("\t.text\n", f);
		if (i < n_images)
			for (int p = 0; p < (int)n_procs; p++)
				write_proc(f, (int)i, p);
		else
			write_big(f);
		if (fclose(f))
			die_errno("cannot write '%s'", path);
		free(path);
	}
}

/* How many images of bindir are built (its stamp), 0: none. */
static uint64_t built(const char *bindir)
{
	char *stamp = xasprintf("%s/.built", bindir);
	FILE *f = fopen(stamp, "r");
	unsigned long long n = 0;

	if (f && fscanf(f, "%llu", &n) != 1)
		n = 0;
	if (f)
		fclose(f);
	free(stamp);
	return n;
}

/*
 * Assembles and links the images bindir lacks, two at a time per core;
 * kept between runs (images of the same procedure count are the same
 * whatever the number of images: a bigger run adds to a smaller one's).
 */
static void build_binaries(const char *bindir)
{
	uint64_t have = built(bindir);
	int64_t t0 = time_monotonic_ns();
	char *cmd;

	if (have >= n_images)
		return;
	cmd = xasprintf("mkdir -p '%s/src'", bindir);
	if (system(cmd))
		die("cannot create '%s'", bindir);
	free(cmd);
	write_sources(bindir, have);
	cmd = xasprintf("cd '%s' && ls src | sed -n 's/\\.s$//p' | xargs -P %ld -I{} sh -c "
			"'as -o src/{}.o src/{}.s && ld -shared --build-id=sha1 -o {}.so src/{}.o "
			"&& rm src/{}.o src/{}.s' && echo %" PRIu64 " >.built",
			bindir, 2 * sysconf(_SC_NPROCESSORS_ONLN), n_images);
	fprintf(stderr, "tui-bench: building %" PRIu64 " shared objects with as and ld...\n",
		n_images - have + !have);
	if (system(cmd))
		die("cannot build the binaries (as and ld are needed)");
	fprintf(stderr, "tui-bench: built in %.1f s\n", (double)(time_monotonic_ns() - t0) / 1e9);
	free(cmd);
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

static int store_profile(struct db *db, struct epoch_meta *m, const struct db_image *img,
			 const struct profile *p)
{
	struct db_profile_id id;

	db_profile_id_set(&id, img->key, EVENT_CYCLES, false, 0);
	if (db_profile_store(db, m->seq, &id, p))
		return -1;
	epoch_meta_add_event(m, EVENT_CYCLES)->samples += profile_total(p);
	return 0;
}

static int add_image(struct db *db, struct epoch_meta *m, struct image_index *idx,
		     const char *path, int salt)
{
	struct db_image img;
	struct profile p = PROFILE_INIT;
	int r;

	if (image_record(path, &img))
		return -1;
	image_index_put(idx, &img);
	sample_image(&img, &p, salt);
	r = store_profile(db, m, &img, &p);
	profile_release(&p);
	free(img.path);
	return r;
}

static char *image_path(const char *bindir, uint64_t i, uint64_t n)
{
	return i < n ? xasprintf("%s/lib%04d.so", bindir, (int)i) : xasprintf("%s/libbig.so", bindir);
}

static struct db *new_db(const char *path)
{
	char *cmd = xasprintf("rm -rf '%s'", path);

	if (system(cmd))
		die("cannot remove '%s'", path);
	free(cmd);
	return db_open(path, DB_CREATE | DB_NOSYNC);
}

/*
 * With --reuse, true if path holds the database an earlier run built for
 * these sizes (its stamp), its cached analyses removed; else the stamp is
 * removed, to be written once the database is built (reused_stamp()).
 */
static bool reused(const char *path, const char *sizes)
{
	char *stamp = xasprintf("%s.built", path), *cmd;
	char have[128] = "";
	FILE *f = fopen(stamp, "r");
	bool same;

	if (f && !fgets(have, sizeof(have), f))
		have[0] = '\0';
	if (f)
		fclose(f);
	same = reuse && !strcmp(have, sizes);
	if (!same)
		unlink(stamp);
	free(stamp);
	if (!same)
		return false;
	cmd = xasprintf("rm -rf '%s/calc'", path);
	if (system(cmd))
		die("cannot remove '%s/calc'", path);
	free(cmd);
	return true;
}

static void reused_stamp(const char *path, const char *sizes)
{
	char *stamp = xasprintf("%s.built", path);
	FILE *f = fopen(stamp, "w");

	if (!f || fputs(sizes, f) == EOF || fclose(f))
		die_errno("cannot write '%s'", stamp);
	free(stamp);
}

static int finish_epoch(struct db *db, struct epoch_meta *m, struct image_index *idx)
{
	int r = db_images_store(db, m->seq, idx) || db_meta_store(db, m) ? -1 : 0;

	image_index_release(idx);
	epoch_meta_release(m);
	return r;
}

static int start_epoch(struct db *db, struct epoch_meta *m, const char *label, int64_t start_ns)
{
	epoch_meta_init(m);
	epoch_meta_fill_host(m);
	epoch_meta_set_label(m, label);
	if (start_ns) {
		m->start_ns = start_ns;
		m->end_ns = start_ns + 300 * (int64_t)1000000000;
	}
	return db_epoch_create(db, m);
}

/* Epochs "bench", "bench2" ... of n images and the big one, counts varied. */
static int build_db(const char *path, const char *bindir, uint64_t n, int epochs)
{
	char sizes[96];
	struct db *db;

	snprintf(sizes, sizeof(sizes), "%s %" PRIu64 " %" PRIu64 " %d v%d", bindir, n, n_procs,
		 epochs, GEN_VERSION);
	if (reused(path, sizes))
		return 0;
	if (!(db = new_db(path)))
		return -1;
	for (int e = 0; e < epochs; e++) {
		struct image_index idx = IMAGE_INDEX_INIT;
		struct epoch_meta m;
		char label[16];

		snprintf(label, sizeof(label), e ? "bench%d" : "bench", e + 1);
		if (start_epoch(db, &m, label, 0))
			return -1;
		for (uint64_t i = 0; i <= n; i++) {
			char *bin = image_path(bindir, i, n);
			int r = add_image(db, &m, &idx, bin, (int)i + e * 5);

			free(bin);
			if (r)
				return -1;
		}
		if (finish_epoch(db, &m, &idx))
			return -1;
	}
	db_close(db);
	reused_stamp(path, sizes);
	return 0;
}

/*
 * A week of the daemon's rotation, synthetic (as db-bench's): n_epochs
 * epochs of five minutes, each of the same EPOCH_IMAGES images with their
 * counts varied (the images are sampled once and the profiles rescaled).
 */
static int build_epochs_db(const char *path, const char *bindir)
{
	struct db_image recs[EPOCH_IMAGES];
	struct profile base[EPOCH_IMAGES];
	int64_t t0 = 1780000000 * (int64_t)1000000000;
	char sizes[96];
	struct db *db;

	snprintf(sizes, sizeof(sizes), "%s %" PRIu64 " v%d", bindir, n_epochs, GEN_VERSION);
	if (reused(path, sizes))
		return 0;
	if (!(db = new_db(path)))
		return -1;
	for (int i = 0; i < EPOCH_IMAGES; i++) {
		char *bin = image_path(bindir, (uint64_t)i, n_images);

		profile_init(&base[i]);
		if (image_record(bin, &recs[i]))
			return -1;
		sample_image(&recs[i], &base[i], i);
		free(bin);
	}
	for (uint64_t e = 0; e < n_epochs; e++) {
		struct image_index idx = IMAGE_INDEX_INIT;
		struct epoch_meta m;
		char label[24];

		snprintf(label, sizeof(label), "e%" PRIu64, e + 1);
		if (start_epoch(db, &m, label, t0 + (int64_t)e * 300 * 1000000000))
			return -1;
		for (int i = 0; i < EPOCH_IMAGES; i++) {
			struct profile p = PROFILE_INIT;

			image_index_put(&idx, &recs[i]);
			for (size_t k = 0; k < base[i].n; k++)
				profile_add(&p, base[i].v[k].offset,
					    base[i].v[k].count * (1 + (e + (uint64_t)i + k) % 5));
			if (store_profile(db, &m, &recs[i], &p))
				return -1;
			profile_release(&p);
		}
		if (finish_epoch(db, &m, &idx))
			return -1;
	}
	for (int i = 0; i < EPOCH_IMAGES; i++) {
		profile_release(&base[i]);
		free(recs[i].path);
	}
	db_close(db);
	reused_stamp(path, sizes);
	return 0;
}

/* ---- the scripts ----------------------------------------------------------- */

/*
 * A script and its keys: keys are counted as they are added, and marks
 * name the keys timed apart (opening what needs new data).
 */
struct script {
	struct strbuf text;
	size_t n_keys;
};

#define SCRIPT_INIT { STRBUF_INIT, 0 }

/* A key (or a command typed at the prompt, timed with its ':'). */
static size_t key(struct script *s, const char *k)
{
	strbuf_addf(&s->text, "%s\n", k);
	return s->n_keys++;
}

static void keys(struct script *s, const char *k, int times)
{
	for (int i = 0; i < times; i++)
		key(s, k);
}

/* A command (not timed: it is not a key). */
static void command(struct script *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void command(struct script *s, const char *fmt, ...)
{
	va_list ap;

	strbuf_addch(&s->text, ':');
	va_start(ap, fmt);
	strbuf_vaddf(&s->text, fmt, ap);
	va_end(ap);
	strbuf_addch(&s->text, '\n');
}

/* Moves, pages, the ends: what a user does in any list. */
static void browse(struct script *s, int pages)
{
	keys(s, "j", 50);
	for (int i = 0; i < pages; i++) {
		key(s, "<PgDown>");
		key(s, "<PgUp>");
	}
	key(s, "G");
	key(s, "g");
}

static void write_script(const char *dir, const char *name, struct script *s, char **path)
{
	FILE *f;

	*path = xasprintf("%s/%s.script", dir, name);
	if (!(f = fopen(*path, "w")) || fputs(s->text.buf, f) == EOF || fclose(f))
		die_errno("cannot write '%s'", *path);
}

/* Keys in the images view, then P and keys in the procedures of every image; *p: P. */
static void keys_script(struct script *s, size_t *p)
{
	browse(s, 10);
	command(s, "search lib%04d", (int)n_images - 1);
	keys(s, "n", 5);
	key(s, "<gt>");
	key(s, "S");
	key(s, "S");
	key(s, "<lt>");
	*p = key(s, "P"); /* the procedures of every image: timed alone */
	browse(s, 10);
	command(s, "search lib%04d_f%03d", (int)(n_images / 2), (int)(n_procs / 2));
	keys(s, "n", 5);
	key(s, "<gt>");
	key(s, "<lt>");
	key(s, "S");
	key(s, "S");
	key(s, "p");
	key(s, "j");
	key(s, "p");
}

#define OPEN_BIG "<:>goto big@libbig.so<Enter>"

/* Keys in the procedure view of the big procedure; *open: opening it. */
static void proc_script(struct script *s, size_t *open)
{
	/* typed at the prompt, so that opening it is timed with the ':' key */
	*open = key(s, OPEN_BIG);
	keys(s, "j", 100);
	keys(s, "<PgDown>", 20);
	keys(s, "<PgUp>", 20);
	key(s, "G");
	key(s, "g");
	keys(s, "H", 10);
	command(s, "search je");
	for (int i = 0; i < 10; i++) {
		key(s, "n");
		key(s, "<Enter>");
		key(s, "q");
	}
	for (int i = 0; i < 4; i++) {
		key(s, "s");
		key(s, "p");
	}
	key(s, "g");
	keys(s, "]", 20);
	keys(s, "[", 10);
	for (int i = 0; i < 10; i++) {
		key(s, "]");
		key(s, "c");
		key(s, "q");
	}
	key(s, "p");
	keys(s, "<PgDown>", 20);
	key(s, "p");
}

/*
 * Keys in the diff view of the two epochs (every procedure), then in the
 * side-by-side view of the big procedure; marks: [0] opening the diff, [1]
 * x (the sides exchanged: a new comparison), [2] x back, [3] Enter on big
 * (both epochs analysed), [4] the first key of the side-by-side view.
 */
static void diff_script(struct script *s, size_t marks[5])
{
	marks[0] = key(s, "<:>diff bench bench2<Enter>");
	key(s, "a"); /* every row */
	browse(s, 10);
	command(s, "search lib%04d", (int)n_images - 1);
	keys(s, "n", 5);
	key(s, "<gt>");
	key(s, "<lt>");
	key(s, "S");
	key(s, "S");
	key(s, "a"); /* the notable rows, and back to every row */
	key(s, "a");
	key(s, "%"); /* time instead of shares, and back */
	key(s, "%");
	key(s, "p");
	key(s, "p");
	marks[1] = key(s, "x");
	marks[2] = key(s, "x");
	command(s, "goto big");
	marks[3] = key(s, "<Enter>");
	marks[4] = s->n_keys;
	browse(s, 20);
	command(s, "search je");
	keys(s, "n", 10);
	key(s, "a");
	key(s, "a");
	key(s, "p");
	key(s, "p");
}

/*
 * In the database of many epochs: back to the epochs view, keys there, two
 * epochs marked and compared, keys in the diff; marks: [0] E, [1] d (the
 * diff), [2] the first key in the diff.
 */
static void epochs_script(struct script *s, size_t marks[3])
{
	marks[0] = key(s, "E");
	browse(s, 20);
	command(s, "search e%" PRIu64, n_epochs / 2);
	keys(s, "n", 5);
	key(s, "<gt>");
	key(s, "<lt>");
	key(s, "S");
	key(s, "S");
	key(s, "p");
	key(s, "j");
	key(s, "p");
	key(s, "g");
	key(s, "m");
	key(s, "G");
	key(s, "m");
	marks[1] = key(s, "d");
	marks[2] = s->n_keys;
	browse(s, 5);
	key(s, "a");
	key(s, "a");
	key(s, "x");
	key(s, "x");
	key(s, "q");
}

/* ---- running --------------------------------------------------------------- */

struct run {
	int64_t wall_ns, first_screen_ns;
	int64_t *keys, *settle;
	size_t n_keys, n_settle;
	long rss_kb;
};

static void read_timing(const char *path, const char *script, struct run *r)
{
	FILE *f = fopen(path, "r");
	char name[32];
	long long v;
	size_t alloc = 0, alloc_settle = 0;

	if (!f)
		die_errno("%s: dcpi-tui wrote no timing file '%s'", script, path);
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

static void run_release(struct run *r)
{
	free(r->keys);
	free(r->settle);
	memset(r, 0, sizeof(*r));
}

static const char *tui_path;
static const char *work_dir;

/* Runs dcpi-tui on db with script; n_keys: the keys the script must time. */
static void run_tui(const char *db, const char *script, size_t n_keys, struct run *r)
{
	char *timing = xasprintf("%s/timing", work_dir), *home = xasprintf("HOME=%s", work_dir);
	char *tenv = xasprintf("DCPI_TUI_TIMING=%s", timing);
	char *const envp[] = { "TERM=xterm-256color", "LINES=50", "COLUMNS=160", "TZ=UTC",
			       "LC_ALL=C.UTF-8", home, tenv, NULL };
	int64_t t0;
	struct rusage ru;
	int status;
	pid_t pid;

	/* a timing file left by an earlier run must not stand for this one's */
	if (unlink(timing) && errno != ENOENT)
		die_errno("cannot remove '%s'", timing);
	t0 = time_monotonic_ns();
	if ((pid = fork()) < 0)
		die_errno("fork");
	if (!pid) {
		execle(tui_path, tui_path, "--script", script, db, (char *)NULL, envp);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		die("'%s --script %s %s' failed", tui_path, script, db);
	memset(r, 0, sizeof(*r));
	r->wall_ns = time_monotonic_ns() - t0;
	r->rss_kb = ru.ru_maxrss;
	read_timing(timing, script, r);
	if (r->n_keys != n_keys || r->n_settle != r->n_keys)
		die("%s: expected %zu keys timed, got %zu", script, n_keys, r->n_keys);
	free(timing);
	free(home);
	free(tenv);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The p-quantile (0..1, nearest rank) of v in ms. */
static double pct_ms(const int64_t *v, size_t n, double p)
{
	int64_t *c;
	double r;
	size_t k;

	if (!n)
		return 0;
	c = xmemdup(v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_i64);
	k = (size_t)((double)n * p + 0.999999);
	k = k < 1 ? 1 : k > n ? n : k;
	r = (double)c[k - 1] / 1e6;
	free(c);
	return r;
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

/* Samples of a measure over the runs (keys of every run together). */
struct series {
	int64_t *v;
	size_t n, alloc;
};

static void series_add(struct series *s, int64_t x)
{
	ALLOC_GROW(s->v, s->n + 1, s->alloc);
	s->v[s->n++] = x;
}

static void series_add_range(struct series *s, const int64_t *v, size_t from, size_t to,
			     const size_t *skip, size_t n_skip)
{
	for (size_t i = from; i < to; i++) {
		bool timed_apart = false;

		for (size_t k = 0; k < n_skip; k++)
			timed_apart |= skip[k] == i;
		if (!timed_apart)
			series_add(s, v[i]);
	}
}

static void report_keys(const char *what, struct series *s)
{
	double p99 = pct_ms(s->v, s->n, 0.99), max = pct_ms(s->v, s->n, 1.0);

	printf("keys, %-44s %5zu keys: median %6.2f  p95 %6.2f  p99 %6.2f  max %6.2f ms"
	       "   p99 < %.0f, max < %.0f: %s\n", what, s->n, pct_ms(s->v, s->n, 0.5),
	       pct_ms(s->v, s->n, 0.95), p99, max, KEY_P99_MS, KEY_MAX_MS,
	       target(p99 < KEY_P99_MS && max < KEY_MAX_MS));
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* "median M ms (min, max)" of a series in ms, freed. */
static double report_once(const char *what, struct series *s, double limit_ms)
{
	double med = pct_ms(s->v, s->n, 0.5);

	printf("%-62s median %8.1f ms  min %8.1f  max %8.1f", what, med, pct_ms(s->v, s->n, 0),
	       pct_ms(s->v, s->n, 1.0));
	if (limit_ms > 0)
		printf("   < %.0f ms: %s", limit_ms, target(med < limit_ms));
	putchar('\n');
	free(s->v);
	memset(s, 0, sizeof(*s));
	return med;
}

static long peak_rss_kb;

static void note_rss(const struct run *r)
{
	if (r->rss_kb > peak_rss_kb)
		peak_rss_kb = r->rss_kb;
}

/* First screens of db (runs times): the medians, and the peak RSS. */
static void first_screen(const char *db, const char *quit, struct series *screen,
			 struct series *wall)
{
	for (uint64_t i = 0; i < runs; i++) {
		struct run r;

		run_tui(db, quit, 0, &r);
		series_add(screen, r.first_screen_ns);
		series_add(wall, r.wall_ns);
		note_rss(&r);
		run_release(&r);
	}
}

/* The keys script: images keys, P, procedures keys. */
static void measure_keys(const char *db, const char *script, size_t n_keys, size_t p)
{
	struct series img = { 0 }, procs = { 0 }, open = { 0 }, cold = { 0 }, warm = { 0 };
	char what[96];

	for (uint64_t i = 0; i < runs; i++) {
		struct run r;

		run_tui(db, script, n_keys, &r);
		series_add_range(&img, r.keys, 0, p, NULL, 0);
		series_add(&open, r.keys[p]);
		series_add(i ? &warm : &cold, r.settle[p]);
		series_add_range(&procs, r.keys, p + 1, r.n_keys, NULL, 0);
		note_rss(&r);
		run_release(&r);
	}
	snprintf(what, sizeof(what), "P: the procedures of every image (%" PRIu64 " rows) drawn",
		 n_images * n_procs + 1);
	report_once(what, &open, P_DRAWN_MS);
	printf("   then every procedure analysed in the background, first opening: %.1f s"
	       "   < %.0f s: %s\n", pct_ms(cold.v, cold.n, 0.5) / 1000, ANALYSIS_S,
	       target(pct_ms(cold.v, cold.n, 0.5) / 1000 < ANALYSIS_S));
	if (warm.n)
		printf("   again in a new session (median of %zu): %.1f s\n", warm.n,
		       pct_ms(warm.v, warm.n, 0.5) / 1000);
	free(cold.v);
	free(warm.v);
	snprintf(what, sizeof(what), "images view, %" PRIu64 " images", n_images + 1);
	report_keys(what, &img);
	snprintf(what, sizeof(what), "procedures view, %" PRIu64 " rows", n_images * n_procs + 1);
	report_keys(what, &procs);
}

/* The proc script: ':' opens the procedure (the prompt reads the rest itself), then keys. */
static void measure_proc(const char *db, const char *script, size_t n_keys, size_t open_key)
{
	struct series open = { 0 }, k = { 0 };

	for (uint64_t i = 0; i < runs; i++) {
		struct run r;

		run_tui(db, script, n_keys, &r);
		series_add(&open, r.keys[open_key]);
		series_add_range(&k, r.keys, open_key + 1, r.n_keys, NULL, 0);
		note_rss(&r);
		run_release(&r);
	}
	report_once("opening the procedure of 8,000 instructions, analysed", &open, 0);
	report_keys("procedure view, 8,000 instructions", &k);
}

static void measure_diff(const char *db, const char *script, size_t n_keys, const size_t marks[5])
{
	struct series open = { 0 }, swap = { 0 }, side = { 0 }, diff = { 0 }, sbs = { 0 };
	char what[96];

	for (uint64_t i = 0; i < runs; i++) {
		struct run r;

		run_tui(db, script, n_keys, &r);
		series_add(&open, r.keys[marks[0]]);
		series_add(&swap, r.keys[marks[1]]);
		series_add(&side, r.keys[marks[3]]);
		series_add_range(&diff, r.keys, 0, marks[4], marks, 4);
		series_add_range(&sbs, r.keys, marks[4], r.n_keys, NULL, 0);
		note_rss(&r);
		run_release(&r);
	}
	snprintf(what, sizeof(what), "diff of two epochs of %" PRIu64 " images", n_images + 1);
	report_once(what, &open, 0);
	report_once("x: the sides exchanged, compared again", &swap, 0);
	report_once("side by side, 8,000 instructions, both epochs analysed", &side, 0);
	snprintf(what, sizeof(what), "diff view, %" PRIu64 " procedures", n_images * n_procs + 1);
	report_keys(what, &diff);
	report_keys("side-by-side view, 8,000 instructions", &sbs);
}

static void measure_epochs(const char *db, const char *quit, const char *script, size_t n_keys,
			   const size_t marks[3])
{
	struct series screen = { 0 }, wall = { 0 }, e = { 0 }, d = { 0 }, k = { 0 }, dk = { 0 };
	char what[96];

	first_screen(db, quit, &screen, &wall);
	for (uint64_t i = 0; i < runs; i++) {
		struct run r;

		run_tui(db, script, n_keys, &r);
		series_add(&e, r.keys[marks[0]]);
		series_add(&d, r.keys[marks[1]]);
		series_add_range(&k, r.keys, marks[0] + 1, marks[1], NULL, 0);
		series_add_range(&dk, r.keys, marks[2], r.n_keys, NULL, 0);
		note_rss(&r);
		run_release(&r);
	}
	snprintf(what, sizeof(what), "first screen, %" PRIu64 " epochs (the epochs view loaded)",
		 n_epochs);
	report_once(what, &screen, EPOCHS_VIEW_MS);
	free(wall.v);
	report_once("E: back to the epochs view", &e, 0);
	report_once("d: a diff of two of them", &d, 0);
	snprintf(what, sizeof(what), "epochs view, %" PRIu64 " epochs", n_epochs);
	report_keys(what, &k);
	report_keys("diff of two of them", &dk);
}

int main(int argc, char **argv)
{
	char *bindir, *small, *big, *many, *quit, *kpath, *ppath, *dpath, *epath;
	struct script ks = SCRIPT_INIT, ps = SCRIPT_INIT, ds = SCRIPT_INIT, es = SCRIPT_INIT;
	struct script qs = SCRIPT_INIT;
	struct series s_small = { 0 }, w_small = { 0 }, s_big = { 0 }, w_big = { 0 };
	size_t p_key, open_key, dmarks[5], emarks[3];
	double small_ms, big_ms;
	char what[96];
	int first;
	const struct cli_option options[] = {
		OPT_U64(0, "images", &n_images, "N", "images in the big database (default 1000)",
			10, 10000, "number of images"),
		OPT_U64(0, "procs", &n_procs, "M", "procedures in each image (default 100)", 2, 999,
			"number of procedures"),
		OPT_U64(0, "epochs", &n_epochs, "E", "epochs in the database of many (default 2000)",
			2, 100000, "number of epochs"),
		OPT_U64(0, "runs", &runs, "R", "runs of each measure (default 7)", 1, 100,
			"number of runs"),
		OPT_BOOL(0, "reuse", &reuse, "the databases of an earlier run of the same sizes"),
		OPT_STRING(0, "only", &only, "LIST", "these measures only: first, keys, proc, diff, epochs"),
		OPT_ARGUMENT("DCPI-TUI", "the dcpi-tui to measure (default tui/dcpi-tui)"),
		OPT_ARGUMENT("DIR", "where the binaries and databases go (default tui-bench.d)"),
		OPT_END()
	};
	const struct cli_command cmd = {
		.usage = "tui-bench [--images N] [--procs M] [--epochs E] [--runs R] [--reuse]\n"
			 "          [--only first,keys,proc,diff,epochs] [DCPI-TUI [DIR]]",
		.about = "How fast dcpi-tui answers, and its size, at any scale.",
		.options = options, .max_args = 2,
	};

	cli_init(argc, argv);
	first = cli_parse(argc, argv, &cmd);
	tui_path = first < argc ? argv[first] : "tui/dcpi-tui";
	work_dir = first + 1 < argc ? argv[first + 1] : "tui-bench.d";
	if (access(tui_path, X_OK))
		die("no dcpi-tui at '%s' (give its path)", tui_path);
	if (mkdir(work_dir, 0777) && access(work_dir, W_OK))
		die_errno("cannot use '%s'", work_dir);
	bindir = xasprintf("%s/bin-%" PRIu64, work_dir, n_procs);
	small = xasprintf("%s/small.db", work_dir);
	big = xasprintf("%s/big.db", work_dir);
	many = xasprintf("%s/epochs.db", work_dir);
	build_binaries(bindir);
	fprintf(stderr, "tui-bench: building the databases...\n");
	if (build_db(small, bindir, 10, 1) || build_db(big, bindir, n_images, 2) ||
	    build_epochs_db(many, bindir))
		return 1;
	command(&qs, "quit");
	write_script(work_dir, "quit", &qs, &quit);
	keys_script(&ks, &p_key);
	write_script(work_dir, "keys", &ks, &kpath);
	proc_script(&ps, &open_key);
	write_script(work_dir, "proc", &ps, &ppath);
	diff_script(&ds, dmarks);
	write_script(work_dir, "diff", &ds, &dpath);
	epochs_script(&es, emarks);
	write_script(work_dir, "epochs", &es, &epath);

	printf("tui-bench: %" PRIu64 " images of %" PRIu64 " procedures, %" PRIu64
	       " epochs, %" PRIu64 " runs each (%s)\n", n_images, n_procs, n_epochs, runs, tui_path);
	if (measured("first")) {
		first_screen(small, quit, &s_small, &w_small);
		first_screen(big, quit, &s_big, &w_big);
		small_ms = pct_ms(s_small.v, s_small.n, 0.5);
		report_once("first screen, 11 images", &s_small, 0);
		snprintf(what, sizeof(what), "first screen, %" PRIu64 " images", n_images + 1);
		big_ms = report_once(what, &s_big, FIRST_SCREEN_MS);
		printf("   ratio %.1f\n", small_ms > 0 ? big_ms / small_ms : 0);
		report_once("whole run (exec to exit), 11 images", &w_small, 0);
		snprintf(what, sizeof(what), "whole run (exec to exit), %" PRIu64 " images",
			 n_images + 1);
		report_once(what, &w_big, 0);
	}
	if (measured("keys"))
		measure_keys(big, kpath, ks.n_keys, p_key);
	if (measured("proc"))
		measure_proc(big, ppath, ps.n_keys, open_key);
	if (measured("diff"))
		measure_diff(big, dpath, ds.n_keys, dmarks);
	if (measured("epochs"))
		measure_epochs(many, quit, epath, es.n_keys, emarks);
	printf("peak resident size of dcpi-tui (largest of the runs): %.1f MB   < %.0f MB: %s\n",
	       (double)peak_rss_kb / 1024, RSS_MB, target((double)peak_rss_kb / 1024 < RSS_MB));

	strbuf_release(&ks.text);
	strbuf_release(&ps.text);
	strbuf_release(&ds.text);
	strbuf_release(&es.text);
	strbuf_release(&qs.text);
	free(bindir);
	free(small);
	free(big);
	free(many);
	free(quit);
	free(kpath);
	free(ppath);
	free(dpath);
	free(epath);
	if (missed)
		fprintf(stderr, "tui-bench: %d target%s missed\n", missed, missed > 1 ? "s" : "");
	return missed ? 1 : 0;
}
