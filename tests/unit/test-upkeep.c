/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of a database's upkeep: sizes, retention plans,
 * crash-safe epoch removal, snapshot collection, the checker (db/check.h),
 * configuration files and completion tables (core/cli.h).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>
#include <fcntl.h>
#include <cmocka.h>

#include "core/cli.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "db/binaries.h"
#include "db/blob.h"
#include "db/check.h"
#include "db/db.h"
#include "db/fsio.h"
#include "db/upkeep.h"

#define DAY_NS (86400 * (int64_t)1000000000)

static unsigned reported;
static char last_report[512];
static void quiet(enum report_level level, const char *msg)
{
	(void)level;
	snprintf(last_report, sizeof(last_report), "%s", msg);
	reported++;
}

static char *tmpdir(void)
{
	char tmpl[] = "/tmp/dcpi-unit-XXXXXX";
	char *dir = mkdtemp(tmpl);

	assert_non_null(dir);
	return xstrdup(dir);
}

/* A fake executable of 40000 bytes holding the GNU build-id note of id, stored as hex. */
static void store_elf(struct db *db, const char *hex, const uint8_t *id, uint32_t len)
{
	struct strbuf elf = STRBUF_INIT;
	uint32_t note[3] = { 4, len, 3 };

	strbuf_add(&elf, "\177ELF", 4);
	strbuf_add(&elf, note, sizeof(note));
	strbuf_add(&elf, "GNU", 4);
	strbuf_add(&elf, id, len);
	while (elf.len < 40000)
		strbuf_addch(&elf, 'x');
	assert_int_equal(db_binary_store(db, hex, elf.buf, elf.len), 0);
	strbuf_release(&elf);
}

/*
 * A database of n epochs, one a day ending now, labelled labels[i % 2],
 * each with a profile of image "5e01" and an image index naming it with a
 * build-id; the snapshot of that build-id is stored when snap is set.
 */
static struct db *make_db(char **path, size_t n, bool snap)
{
	static const char *const labels[] = { "odd", "even" };
	static const uint8_t id[4] = { 0x5e, 0x01, 0x02, 0x03 };
	char *dir = tmpdir();
	struct db *db;
	int64_t now = time(NULL) * (int64_t)1000000000;

	*path = xasprintf("%s/db", dir);
	free(dir);
	db = db_open(*path, DB_CREATE | DB_NOSYNC);
	assert_non_null(db);
	for (size_t i = 0; i < n; i++) {
		struct image_index idx = IMAGE_INDEX_INIT;
		struct profile p = PROFILE_INIT;
		struct db_profile_id pid;
		struct db_image img;
		struct epoch_meta m;

		epoch_meta_init(&m);
		m.start_ns = now - (int64_t)(n - i) * DAY_NS;
		epoch_meta_set_label(&m, labels[i % 2]);
		assert_int_equal(db_epoch_create(db, &m), 0);
		m.end_ns = m.start_ns + DAY_NS - 1;
		assert_int_equal(db_meta_store(db, &m), 0);
		memset(&img, 0, sizeof(img));
		img.kind = IMAGE_FILE;
		img.path = "/bin/x";
		memcpy(img.build_id, id, sizeof(id));
		img.build_id_len = sizeof(id);
		strcpy(img.key, "5e010203");
		image_index_put(&idx, &img);
		assert_int_equal(db_images_store(db, m.seq, &idx), 0);
		for (uint64_t o = 0; o < 100 * (i + 1); o++)
			profile_add(&p, o * 4, 1);
		profile_normalize(&p);
		assert_int_equal(db_profile_id_set(&pid, "5e010203", EVENT_CYCLES, false, 0), 0);
		assert_int_equal(db_profile_store(db, m.seq, &pid, &p), 0);
		profile_release(&p);
		image_index_release(&idx);
		epoch_meta_release(&m);
	}
	if (snap) {
		static const uint8_t other[2] = { 0xaa, 0xbb };

		store_elf(db, "5e010203", id, sizeof(id));
		/* And one that nothing names. */
		store_elf(db, "aabb", other, sizeof(other));
	}
	return db;
}

static void plan(struct db *db, const struct db_retention *r, uint32_t protect,
		 const char *expect)
{
	struct db_census c;
	struct db_prune_plan p;
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(db_census_take(db, &c), 0);
	db_prune_plan_make(&c, r, protect, time(NULL) * (int64_t)1000000000, &p);
	for (size_t i = 0; i < p.n; i++)
		strbuf_addf(&sb, "%s%u", i ? " " : "", p.seqs[i]);
	assert_string_equal(sb.buf, expect);
	strbuf_release(&sb);
	db_prune_plan_release(&p);
	db_census_release(&c);
}

static void sizes_parse(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(cli_parse_size("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(cli_parse_size("512", &v), 0);
	assert_int_equal(v, 512);
	assert_int_equal(cli_parse_size("4K", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(cli_parse_size("1.5M", &v), 0);
	assert_int_equal(v, 1572864);
	assert_int_equal(cli_parse_size("2GiB", &v), 0);
	assert_int_equal(v, 2147483648u);
	assert_int_equal(cli_parse_size("3GB", &v), 0);
	assert_int_equal(v, 3000000000u);
	assert_int_equal(cli_parse_size("1T", &v), 0);
	assert_int_equal(v, 1099511627776u);
	assert_int_equal(cli_parse_size("", &v), -1);
	assert_int_equal(cli_parse_size("-1", &v), -1);
	assert_int_equal(cli_parse_size("1X", &v), -1);
	assert_int_equal(cli_parse_size("M", &v), -1);
	assert_int_equal(cli_parse_size("1e30", &v), -1);
	assert_int_equal(cli_parse_size("1 G", &v), -1);
}

static void sizes_print(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	strbuf_add_size(&sb, 512);
	strbuf_addch(&sb, '|');
	strbuf_add_size(&sb, 1536);
	strbuf_addch(&sb, '|');
	strbuf_add_size(&sb, 25 * 1048576);
	strbuf_addch(&sb, '|');
	strbuf_add_size(&sb, 300 * 1073741824ull);
	assert_string_equal(sb.buf, "512 B|1.50 KiB|25.0 MiB|300 GiB");
	strbuf_release(&sb);
}

static void census_counts_disk_use(void **state)
{
	char *path;
	struct db *db = make_db(&path, 3, true);
	struct db_census c;
	uint64_t sum = 0;

	(void)state;
	assert_int_equal(db_census_take(db, &c), 0);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.current, 3);
	assert_int_equal(c.n_binaries, 2);
	for (size_t i = 0; i < c.n; i++) {
		assert_true(c.epochs[i].meta_ok);
		assert_true(c.epochs[i].bytes > 0);
		assert_int_equal(c.epochs[i].files, 3);
		sum += c.epochs[i].bytes;
	}
	assert_string_equal(c.epochs[0].label, "odd");
	assert_string_equal(c.epochs[1].label, "even");
	/* Blocks, as du counts them: each 40000-byte snapshot takes 40 KiB or more. */
	assert_true(c.binaries_bytes >= 80000);
	assert_true(c.total_bytes > sum + c.binaries_bytes);
	assert_int_equal(c.total_bytes, db_disk_usage(db));
	db_census_release(&c);
	db_close(db);
	free(path);
}

static void plans_choose_oldest_and_protect(void **state)
{
	char *path;
	struct db *db = make_db(&path, 6, false);
	struct db_retention r = { 0 };
	struct db_census c;

	(void)state;
	assert_true(db_retention_empty(&r));
	r.keep = 2;
	plan(db, &r, 0, "1 2 3 4");
	r.keep = 6;
	plan(db, &r, 0, "");
	memset(&r, 0, sizeof(r));
	r.label = "odd";
	plan(db, &r, 0, "1 3 5");
	r.keep = 1;
	plan(db, &r, 0, "1 3");
	/* The latest (6, "even") stays even when a label alone selects it. */
	r.label = "even";
	r.keep = 0;
	plan(db, &r, 0, "2 4");
	memset(&r, 0, sizeof(r));
	/* Epoch i ended (6 - i) days ago, give or take a second. */
	r.max_age_ns = 3 * DAY_NS + DAY_NS / 2;
	plan(db, &r, 0, "1 2");
	/* Sizes: everything but the latest, then what fits. */
	r.max_age_ns = 0;
	r.max_bytes = 1;
	plan(db, &r, 0, "1 2 3 4 5");
	plan(db, &r, 4, "1 2 3 5");
	assert_int_equal(db_census_take(db, &c), 0);
	r.max_bytes = c.total_bytes - c.epochs[0].bytes;
	plan(db, &r, 0, "1");
	r.max_bytes = c.total_bytes - c.epochs[0].bytes - 1;
	plan(db, &r, 0, "1 2");
	r.max_bytes = c.total_bytes;
	plan(db, &r, 0, "");
	db_census_release(&c);
	db_close(db);
	free(path);
}

static void plans_count_the_snapshots_they_free(void **state)
{
	char *path;
	struct db *db = make_db(&path, 3, true);
	struct db_retention r = { .keep = 1 };
	struct db_census c;
	struct db_prune_plan p;

	(void)state;
	assert_int_equal(db_census_take(db, &c), 0);
	db_prune_plan_make(&c, &r, 0, 0, &p);
	assert_int_equal(p.n, 2);
	/* The unnamed snapshot goes; the one epoch 3 still names stays. */
	assert_true(p.bytes_after <= c.total_bytes - p.bytes - 40000);
	assert_true(p.bytes_after >= c.total_bytes - p.bytes - c.binaries_bytes / 2 - 4096);
	db_prune_plan_release(&p);
	db_census_release(&c);
	db_close(db);
	free(path);
}

static void removal_is_atomic_and_cleans_up(void **state)
{
	char *path;
	struct db *db = make_db(&path, 4, true);
	struct db_prune_stats st = { 0 };
	uint32_t seqs[] = { 1, 2 }, cur[] = { 4 }, *left;
	size_t n;
	int dfd;

	(void)state;
	assert_int_equal(db_epochs_remove(db, seqs, 2, &st), 0);
	assert_int_equal(st.epochs, 2);
	assert_int_equal(st.last_seq, 2);
	assert_true(st.epoch_bytes > 0);
	assert_int_equal(db_epoch_seqs(db, &left, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(left[0], 3);
	free(left);
	/* Nothing left behind: no temp, no epoch directory. */
	{
		struct db_census c;

		assert_int_equal(db_census_take(db, &c), 0);
		assert_int_equal(c.n_temps, 0);
		db_census_release(&c);
	}
	/* The current epoch is refused. */
	reported = 0;
	assert_int_equal(db_epochs_remove(db, cur, 1, &st), -1);
	assert_int_equal(reported, 1);
	assert_int_equal(st.epochs, 2);
	/* Snapshots: the unnamed one goes, the named one stays. */
	memset(&st, 0, sizeof(st));
	assert_int_equal(db_binaries_gc(db, false, &st, NULL, NULL), 0);
	assert_int_equal(st.binaries, 1);
	assert_false(db_binary_exists(db, "aabb"));
	assert_true(db_binary_exists(db, "5e010203"));
	/*
	 * A crash between the rename and the deletion leaves a temp directory:
	 * readers do not see the epoch, the checker notes the temp, and the
	 * next writer removes it.
	 */
	dfd = open(path, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	assert_int_equal(renameat(dfd, "000003", dfd, ".tmp.prune-000003.0123456789abcdef"), 0);
	close(dfd);
	assert_int_equal(db_epoch_seqs(db, &left, &n), 0);
	assert_int_equal(n, 1);
	free(left);
	db_close(db);
	db = db_open(path, DB_READ);
	{
		struct db_census c;

		assert_int_equal(db_census_take(db, &c), 0);
		assert_int_equal(c.n_temps, 1);
		db_census_release(&c);
	}
	db_close(db);
	db = db_open(path, DB_WRITE | DB_NOSYNC);
	assert_non_null(db);
	{
		struct db_census c;

		assert_int_equal(db_census_take(db, &c), 0);
		assert_int_equal(c.n_temps, 0);
		assert_int_equal(c.n, 1);
		db_census_release(&c);
	}
	db_close(db);
	free(path);
}

static void gc_keeps_everything_when_an_index_is_unreadable(void **state)
{
	char *path, *images;
	struct db *db = make_db(&path, 2, true);
	struct db_prune_stats st = { 0 };
	FILE *f;

	(void)state;
	images = xasprintf("%s/000001/images", path);
	f = fopen(images, "w");
	assert_non_null(f);
	fputs("dcpi-images 1\ngarbage\n", f);
	fclose(f);
	reported = 0;
	assert_int_equal(db_binaries_gc(db, false, &st, NULL, NULL), 1);
	assert_int_equal(st.binaries, 0);
	assert_true(db_binary_exists(db, "aabb"));
	free(images);
	db_close(db);
	free(path);
}

static void retain_applies_a_size_limit(void **state)
{
	char *path;
	struct db *db = make_db(&path, 8, true);
	struct db_retention r = { 0 };
	struct db_prune_stats st = { 0 };
	uint64_t after, before = db_disk_usage(db);

	(void)state;
	r.max_bytes = before / 2;
	assert_int_equal(db_retain(db, &r, 0, &st, &after), 0);
	assert_true(after <= r.max_bytes);
	assert_int_equal(after, db_disk_usage(db));
	assert_true(st.epochs >= 1 && st.epochs < 8);
	assert_int_equal(st.binaries, 1);
	/* Nothing more to do. */
	memset(&st, 0, sizeof(st));
	assert_int_equal(db_retain(db, &r, 0, &st, &after), 0);
	assert_int_equal(st.epochs, 0);
	assert_int_equal(st.binaries, 0);
	/*
	 * A run that died after removing epochs leaves snapshots unused; the
	 * plan counts them as gone, so the next run must collect them even
	 * when it removes no epoch.
	 */
	{
		static const uint8_t id[2] = { 0xcc, 0xdd };

		store_elf(db, "ccdd", id, sizeof(id));
	}
	r.max_bytes = db_disk_usage(db) - 1;
	assert_int_equal(db_retain(db, &r, 0, &st, &after), 0);
	assert_false(db_binary_exists(db, "ccdd"));
	assert_int_equal(st.binaries, 1);
	assert_true(after <= r.max_bytes);
	db_close(db);
	free(path);
}

/* ---- the checker ---------------------------------------------------------------------- */

struct findings {
	struct strbuf text;
};

static void collect(void *ctx, enum db_check_severity s, const char *path, const char *msg)
{
	struct findings *f = ctx;

	strbuf_addf(&f->text, "%s %s: %s\n", db_check_severity_name(s), path, msg);
}

static int check(const char *path, struct findings *f, struct db_check_stats *st)
{
	struct db *db = db_open(path, DB_READ);
	int r;

	assert_non_null(db);
	strbuf_reset(&f->text);
	r = db_check(db, 0, collect, f, st);
	db_close(db);
	return r;
}

/* dir/name in one of two static buffers (for two-path calls). */
static const char *at(const char *dir, const char *name)
{
	static char buf[2][4096];
	static int k;

	k ^= 1;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

static void write_file(const char *dir, const char *name, const void *data, size_t len)
{
	char *p = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
	free(p);
}

static void check_names_what_is_damaged(void **state)
{
	char *path, *e1, *e2, *prof;
	struct db *db = make_db(&path, 2, true);
	struct findings f = { STRBUF_INIT };
	struct db_check_stats st;
	struct strbuf blob = STRBUF_INIT;
	FILE *fp;

	(void)state;
	db_close(db);
	if (check(path, &f, &st))
		fail_msg("%s", f.text.buf);
	assert_string_equal(f.text.buf, "note binaries/aabb: no epoch uses this snapshot "
			    "(dcpidb gc removes it)\n");
	assert_int_equal(st.epochs, 2);
	assert_int_equal(st.profiles, 2);
	assert_int_equal(st.snapshots, 2);
	assert_int_equal(st.records, 5);

	e1 = xasprintf("%s/000001", path);
	e2 = xasprintf("%s/000002", path);
	/* A blob of a kind this dcpi does not know: its container is checked. */
	blob_encode("DCPIXXXX", 1, 0, 1, "payload", 7, &blob);
	write_file(e1, "future", blob.buf, blob.len);
	assert_int_equal(check(path, &f, &st), 0);
	assert_non_null(strstr(f.text.buf, "note 000001/future: a blob of a kind this dcpi "
				"does not know (DCPIXXXX)"));
	/* ... and a flipped byte is damage. */
	blob.buf[blob.len - 1] ^= 1;
	write_file(e1, "future", blob.buf, blob.len);
	assert_int_equal(check(path, &f, &st), 1);
	assert_non_null(strstr(f.text.buf, "error 000001/future: corrupt blob: bad payload checksum"));
	unlink(at(e1, "future"));

	/* A profile whose bytes changed. */
	prof = xasprintf("%s/5e010203.cycles.prof", e2);
	fp = fopen(prof, "r+");
	assert_non_null(fp);
	fseek(fp, 140, SEEK_SET);
	fputc(0x7f, fp);
	fclose(fp);
	/* A profile of an image the index does not list, a meta of another epoch. */
	rename(at(e1, "5e010203.cycles.prof"), at(e1, "5e010203.clock.prof"));
	write_file(e1, "junk", "x", 1);
	assert_int_equal(symlink("/etc/passwd", at(e1, "kallsyms")), 0);
	write_file(path, ".tmp.prune-000009.0000000000000000", "", 0);
	assert_int_equal(check(path, &f, &st), 1);
	assert_non_null(strstr(f.text.buf, "error 000002/5e010203.cycles.prof: corrupt profile: "));
	assert_non_null(strstr(f.text.buf, "error 000001/5e010203.clock.prof: corrupt profile: "
				"its header names another profile"));
	assert_non_null(strstr(f.text.buf, "warning 000001/junk: a file dcpi does not know"));
	assert_non_null(strstr(f.text.buf, "error 000001/kallsyms: is a symbolic link"));
	assert_non_null(strstr(f.text.buf, "note .tmp.prune-000009.0000000000000000: orphaned "
				"temporary file"));
	assert_int_equal(st.findings[DB_CHECK_ERROR], 3);

	/* A meta copied from another epoch. */
	rename(at(e1, "meta"), at(e2, "meta"));
	assert_int_equal(check(path, &f, &st), 1);
	assert_non_null(strstr(f.text.buf, "error 000001/meta: missing"));
	assert_non_null(strstr(f.text.buf, "error 000002/meta: belongs to epoch 1, not 2"));
	strbuf_release(&f.text);
	strbuf_release(&blob);
	free(prof);
	free(e1);
	free(e2);
	free(path);
}

static void check_reads_snapshots(void **state)
{
	char *path, *bin;
	struct db *db = make_db(&path, 1, true);
	struct findings f = { STRBUF_INIT };
	struct db_check_stats st;

	(void)state;
	db_close(db);
	/* A snapshot whose bytes do not hold its build-id: not what its name says. */
	bin = xasprintf("%s/binaries", path);
	write_file(bin, "5e010203", "\177ELF but not that one", 22);
	assert_int_equal(check(path, &f, &st), 1);
	assert_non_null(strstr(f.text.buf, "error binaries/5e010203: not an ELF file holding "
				"build-id 5e010203"));
	{
		struct db *d = db_open(path, DB_READ);

		strbuf_reset(&f.text);
		assert_int_equal(db_check(d, DB_CHECK_QUICK, collect, &f, &st), 0);
		db_close(d);
	}
	strbuf_release(&f.text);
	free(bin);
	free(path);
}

/* A snapshot copied from an open file: the same bytes; a short or failing copy leaves none. */
static void snapshots_from_a_file(void **state)
{
	char *path, *src, *bin_path;
	struct db *db = make_db(&path, 1, false);
	struct strbuf data = STRBUF_INIT, back = STRBUF_INIT;
	int fd, bfd;
	ssize_t n;

	(void)state;
	for (size_t i = 0; i < 300000; i++)
		strbuf_addch(&data, (char)(i * 7 + i / 4096));
	src = xasprintf("%s/src", path);
	write_file(path, "src", data.buf, data.len);
	fd = open(src, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(db_binary_store_fd(db, "abcd", fd, data.len), 0);
	bin_path = db_binary_path(db, "abcd");
	assert_non_null(bin_path);
	bfd = open(bin_path, O_RDONLY);
	free(bin_path);
	assert_true(bfd >= 0);
	strbuf_grow(&back, data.len + 1);
	n = read(bfd, back.buf, data.len + 1);
	close(bfd);
	assert_int_equal(n, (ssize_t)data.len);
	assert_memory_equal(back.buf, data.buf, data.len);
	/* The file is shorter than said: an error, no snapshot, no temp. */
	reported = 0;
	assert_int_equal(db_binary_store_fd(db, "abce", fd, data.len + 1), -1);
	assert_true(reported > 0);
	assert_false(db_binary_exists(db, "abce"));
	fsio_inject_fault(FSIO_FAULT_WRITE, 1);
	assert_int_equal(db_binary_store_fd(db, "abcf", fd, data.len), -1);
	fsio_inject_fault(FSIO_FAULT_WRITE, 0);
	assert_false(db_binary_exists(db, "abcf"));
	close(fd);
	db_close(db);
	{
		char *bin = xasprintf("%s/binaries", path);
		DIR *d = opendir(bin);
		struct dirent *e;
		size_t names = 0;

		assert_non_null(d);
		while ((e = readdir(d)))
			if (e->d_name[0] != '.' || strncmp(e->d_name, ".tmp", 4) == 0)
				names++;
		closedir(d);
		assert_int_equal(names, 1);     /* abcd, and no temp file */
		free(bin);
	}
	strbuf_release(&data);
	strbuf_release(&back);
	free(src);
	free(path);
}

/*
 * Cached unwind tables: stored and read back whole; a damaged one is a
 * warning (made again), not an error; gc removes those no epoch names.
 */
static void unwind_tables_are_a_cache(void **state)
{
	char *path, *dir;
	struct db *db = make_db(&path, 1, false);
	struct findings f = { STRBUF_INIT };
	struct db_prune_stats ps = { 0 };
	struct db_check_stats st;
	struct strbuf out = STRBUF_INIT;
	struct db_census c;

	(void)state;
	assert_int_equal(db_unwind_load(db, "5e010203", &out), 1);
	assert_int_equal(db_unwind_store(db, "5e010203", "UTB1 rows", 9), 0);
	assert_int_equal(db_unwind_store(db, "aabb", "UTB1 other", 10), 0);
	assert_int_equal(db_unwind_load(db, "5e010203", &out), 0);
	assert_int_equal(out.len, 9);
	assert_memory_equal(out.buf, "UTB1 rows", 9);
	assert_int_equal(db_census_take(db, &c), 0);
	assert_int_equal(c.n_unwind, 2);
	assert_int_equal(c.n_unused_unwind, 1);
	assert_true(c.unwind_bytes > 0);
	db_census_release(&c);
	db_close(db);

	/* Checked: aabb is unused (a note); damaged, 5e010203 is a warning, not an error. */
	assert_int_equal(check(path, &f, &st), 0);
	assert_non_null(strstr(f.text.buf, "note unwind/aabb: no epoch uses this cached unwind table"));
	dir = xasprintf("%s/unwind", path);
	write_file(dir, "5e010203", "DCPIUTAB but cut", 16);
	assert_int_equal(check(path, &f, &st), 0);
	assert_non_null(strstr(f.text.buf, "warning unwind/5e010203: damaged cached unwind table"));
	db = db_open(path, DB_WRITE | DB_NOSYNC);
	assert_non_null(db);
	reported = 0;
	assert_int_equal(db_unwind_load(db, "5e010203", &out), -1);
	assert_true(reported > 0);

	/* gc: the unused one goes, the one an epoch names stays. */
	assert_int_equal(db_binaries_gc(db, false, &ps, NULL, NULL), 0);
	assert_int_equal(ps.unwind_tables, 1);
	assert_int_equal(ps.binaries, 0);
	assert_int_equal(db_unwind_store(db, "5e010203", "UTB1 again", 10), 0);
	assert_int_equal(db_census_take(db, &c), 0);
	assert_int_equal(c.n_unwind, 1);
	assert_int_equal(c.n_unused_unwind, 0);
	db_census_release(&c);
	db_close(db);
	strbuf_release(&out);
	strbuf_release(&f.text);
	free(dir);
	free(path);
}

/* A memo of epoch seq (< 128) as calc/HEX.MODEL: its payload's start, the format and the epoch. */
static void store_memo(struct db *db, char digit, const char *model, uint32_t seq)
{
	const uint8_t head[2] = { DB_CALC_MEMO_FORMAT, (uint8_t)seq };
	struct db_calc_writer w;
	char hex[65];

	memset(hex, digit, 64);
	hex[64] = 0;
	assert_int_equal(db_calc_write_begin(db, hex, model, &w), 0);
	assert_int_equal(db_calc_write(&w, head, sizeof(head)), 0);
	assert_int_equal(db_calc_write_end(&w, 0, true), 0);
}

static size_t calc_files(struct db *db, size_t *unused)
{
	struct db_census c;
	size_t n;

	assert_int_equal(db_census_take(db, &c), 0);
	n = c.n_calc;
	*unused = c.n_unused_calc;
	db_census_release(&c);
	return n;
}

/*
 * Memos (calc/DIGEST.MODEL) are in use while their epoch is there: check
 * notes, and gc removes, those of epochs gone; a memo stored replaces the
 * others of its epoch and model.
 */
static void memos_live_with_their_epoch(void **state)
{
	char *path, digest[65] = { 0 };
	struct db *db = make_db(&path, 3, false);
	struct findings f = { STRBUF_INIT };
	struct db_prune_stats ps = { 0 };
	struct db_check_stats st;
	size_t unused;
	uint32_t two = 2;

	(void)state;
	store_memo(db, 'a', "generic", 2);
	store_memo(db, 'b', "generic", 9);
	assert_int_equal(db_calc_store(db, "5e010203", "generic", 0, "x", 1), 0);
	assert_int_equal(db_calc_store(db, "aabb", "generic", 0, "x", 1), 0);
	assert_int_equal(calc_files(db, &unused), 4);
	assert_int_equal(unused, 2);
	db_close(db);

	assert_int_equal(check(path, &f, &st), 0);
	memset(digest, 'b', 64);
	assert_non_null(strstr(f.text.buf, digest));
	assert_non_null(strstr(f.text.buf, ".generic: a memo of epoch 9, which does not exist"));
	assert_non_null(strstr(f.text.buf, "note calc/aabb.generic: no epoch uses"));
	assert_null(strstr(f.text.buf, "calc/aaaa"));
	assert_null(strstr(f.text.buf, "calc/5e01"));

	db = db_open(path, DB_WRITE | DB_NOSYNC);
	assert_non_null(db);
	assert_int_equal(db_binaries_gc(db, false, &ps, NULL, NULL), 0);
	assert_int_equal(ps.calc_files, 2);
	assert_int_equal(calc_files(db, &unused), 2);
	assert_int_equal(unused, 0);

	/* another memo of epoch 2 replaces the first; one on another model stays */
	store_memo(db, 'd', "other", 2);
	store_memo(db, 'c', "generic", 2);
	memset(digest, 'c', 64);
	assert_int_equal(db_calc_memo_replace(db, digest, "generic", 1), 0);
	assert_int_equal(db_calc_memo_replace(db, digest, "generic", 2), 1);
	assert_int_equal(calc_files(db, &unused), 3);

	/* epoch 2 gone, so are its memos */
	assert_int_equal(db_epochs_remove(db, &two, 1, &ps), 0);
	assert_int_equal(calc_files(db, &unused), 3);
	assert_int_equal(unused, 2);
	memset(&ps, 0, sizeof(ps));
	assert_int_equal(db_binaries_gc(db, false, &ps, NULL, NULL), 0);
	assert_int_equal(ps.calc_files, 2);
	assert_int_equal(calc_files(db, &unused), 1);
	db_close(db);
	strbuf_release(&f.text);
	free(path);
}

static void blob_kinds_are_a_table(void **state)
{
	(void)state;
	/* Every kind's entry is complete; names and magics lead to it. */
	for (const struct db_blob_kind *k = db_blob_kinds; k->magic; k++) {
		assert_int_equal(strlen(k->magic), BLOB_MAGIC_SIZE);
		assert_memory_equal(k->magic, "DCPI", 4);
		assert_non_null(k->what);
		assert_non_null(k->check);
		assert_true(k->max_version >= 1);
		assert_ptr_equal(db_blob_kind_for_magic(k->magic), k);
	}
	assert_null(db_blob_kind_for_magic("DCPIXXXX"));
	assert_null(db_blob_kind_for_name("abc.cycles.prof"));
}

/* ---- configuration files and completion tables ------------------------------------------ */

static uint64_t cfg_size;
static double cfg_days;
static bool cfg_flag;
static const char *cfg_db;
static int cfg_kind;
static const char *const kinds[] = { "a", "b", NULL };
static const struct cli_option cfg_options[] = {
	OPT_DB(&cfg_db),
	OPT_SIZE(0, "max-size", &cfg_size, "SIZE", "size"),
	OPT_DOUBLE(0, "max-age", &cfg_days, "DAYS", "days", 0, "number of days"),
	OPT_BOOL(0, "flag", &cfg_flag, "a flag"),
	OPT_CHOICE(0, "kind", &cfg_kind, "K", "kind", kinds, "kind"),
	OPT_ARGUMENT("PROCEDURE", "a procedure"),
	OPT_END()
};
static const struct cli_command cfg_cmd = { .usage = "x", .options = cfg_options };
static const char *const cfg_refused[] = { "db", NULL };

static int load(const char *dir, const char *text, mode_t mode)
{
	char *p = xasprintf("%s/c.conf", dir);
	int r;

	unlink(p);
	write_file(dir, "c.conf", text, strlen(text));
	assert_int_equal(chmod(p, mode), 0);
	reported = 0;
	r = cli_config_load(&cfg_cmd, p, cfg_refused);
	free(p);
	return r;
}

static void config_files(void **state)
{
	char *dir = tmpdir(), *p = xasprintf("%s/c.conf", dir), *l = xasprintf("%s/l.conf", dir);

	(void)state;
	assert_int_equal(load(dir, "# retention\n max-size = 2G  \nmax-age 1.5\n\nflag\n", 0600), 0);
	assert_int_equal(cfg_size, 2147483648u);
	assert_true(cfg_days == 1.5);
	assert_true(cfg_flag);
	/* Refused: writable by others, a symbolic link, owned by someone else. */
	assert_int_equal(load(dir, "max-size = 1G\n", 0666), -1);
	assert_non_null(strstr(last_report, "others can write to it"));
	/* Group-writable is fine for root's group only. */
	assert_int_equal(load(dir, "max-size = 1G\n", 0620), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(p, 0, 65534), 0);
		assert_int_equal(cli_config_load(&cfg_cmd, p, cfg_refused), -1);
		assert_non_null(strstr(last_report, "others can write to it"));
	}
	assert_int_equal(symlink(p, l), 0);
	chmod(p, 0600);
	assert_int_equal(cli_config_load(&cfg_cmd, l, cfg_refused), -1);
	assert_non_null(strstr(last_report, "symbolic link"));
	if (geteuid() == 0) {
		assert_int_equal(chown(p, 65534, 65534), 0);
		assert_int_equal(cli_config_load(&cfg_cmd, p, cfg_refused), -1);
		assert_non_null(strstr(last_report, "not root"));
		assert_int_equal(chown(p, 0, 0), 0);
		/* A directory others may write to (not sticky) taints what is in it. */
		assert_int_equal(chmod(dir, 0777), 0);
		assert_int_equal(cli_config_load(&cfg_cmd, p, cfg_refused), -1);
		assert_non_null(strstr(last_report, "configuration directory"));
		assert_int_equal(chmod(dir, 01777), 0);
		assert_int_equal(cli_config_load(&cfg_cmd, p, cfg_refused), 0);
		assert_int_equal(chmod(dir, 0700), 0);
	}
	/* Bad lines say where they are. */
	assert_int_equal(load(dir, "max-size = 1G\nnope = 1\n", 0600), -1);
	assert_non_null(strstr(last_report, "c.conf:2: 'nope' cannot be set in a configuration file"));
	assert_int_equal(load(dir, "db = /tmp\n", 0600), -1);
	assert_non_null(strstr(last_report, ":1: 'db' cannot be set"));
	assert_int_equal(load(dir, "max-size = lots\n", 0600), -1);
	assert_non_null(strstr(last_report, "line 1"));
	assert_int_equal(load(dir, "max-size\n", 0600), -1);
	assert_non_null(strstr(last_report, "needs a value"));
	assert_int_equal(load(dir, "flag = yes\n", 0600), -1);
	assert_non_null(strstr(last_report, "takes no value"));
	assert_int_equal(load(dir, "max-size: 1G\n", 0600), -1);
	assert_non_null(strstr(last_report, "cannot parse"));
	unlink(l);
	unlink(p);
	rmdir(dir);
	free(l);
	free(p);
	free(dir);
}

static void completion_tables(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	cli_list_options(&cfg_cmd, f);
	fclose(f);
	assert_string_equal(buf, "option -d --db DIR\n"
			    "option - --max-size SIZE\n"
			    "option - --max-age DAYS\n"
			    "option - --flag -\n"
			    "option - --kind K a b\n"
			    "argument PROCEDURE\n"
			    "option - --help -\n"
			    "option - --version -\n");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sizes_parse),
		cmocka_unit_test(sizes_print),
		cmocka_unit_test(census_counts_disk_use),
		cmocka_unit_test(plans_choose_oldest_and_protect),
		cmocka_unit_test(plans_count_the_snapshots_they_free),
		cmocka_unit_test(removal_is_atomic_and_cleans_up),
		cmocka_unit_test(gc_keeps_everything_when_an_index_is_unreadable),
		cmocka_unit_test(retain_applies_a_size_limit),
		cmocka_unit_test(check_names_what_is_damaged),
		cmocka_unit_test(check_reads_snapshots),
		cmocka_unit_test(snapshots_from_a_file),
		cmocka_unit_test(unwind_tables_are_a_cache),
		cmocka_unit_test(memos_live_with_their_epoch),
		cmocka_unit_test(blob_kinds_are_a_table),
		cmocka_unit_test(config_files),
		cmocka_unit_test(completion_tables),
	};

	set_report_routine(quiet);
	return cmocka_run_group_tests_name("upkeep", tests, NULL, NULL);
}
