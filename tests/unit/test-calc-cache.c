/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tests/unit/test-calc-cache.c - the static part of the analysis from the
 * database's cache (analysis/calc-cache.h) and on several threads
 * (analysis/calc-each.h): the same reports as without, whatever the
 * cache holds (nothing, what this build made, damaged bytes, another
 * file's records), and a decoder that refuses what is not a cache.
 *
 * The binary analysed is this test's own, recorded in a database made in
 * a temporary directory with a few samples on every instruction.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "analysis/calc.h"
#include "analysis/calc-cache.h"
#include "analysis/calc-draw.h"
#include "analysis/calc-each.h"
#include "analysis/calc-memo.h"
#include "analysis/calc-json.h"
#include "analysis/epochview.h"
#include "core/die.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "db/binaries.h"
#include "db/blob.h"
#include "db/db.h"
#include "db/meta.h"
#include "db/profile.h"
#include "disasm/elffile.h"
#include "disasm/image.h"
#include "present/draw.h"

#define PROCS 250               /* procedures of the binary analysed */

static char dir[64];
static char hex[2 * 32 + 1];
static const char *model_name;

/* A database of this binary with samples on every instruction of its first PROCS procedures. */
static int setup(void **state)
{
	char exe[4096], *db_path;
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct image_index idx = IMAGE_INDEX_INIT;
	struct profile p = PROFILE_INIT;
	struct db_profile_id id;
	struct epoch_meta m;
	struct epoch_event *ev;
	struct db_image rec;
	struct strbuf sb = STRBUF_INIT;
	struct elffile *ef;
	struct image *img;
	struct proctab *tab;
	struct db *db;
	unsigned seed = 7;

	(void)state;
	assert_true(len > 0);
	exe[len] = 0;
	snprintf(dir, sizeof(dir), "/tmp/test-calc-cache.XXXXXX");
	assert_non_null(mkdtemp(dir));
	db_path = xasprintf("%s/db", dir);
	assert_non_null(db = db_open(db_path, DB_CREATE | DB_NOSYNC));
	assert_non_null(ef = elffile_open(exe));
	assert_true(ef->build_id_len > 0);
	memset(&rec, 0, sizeof(rec));
	rec.kind = IMAGE_FILE;
	rec.path = exe;
	memcpy(rec.build_id, ef->build_id, ef->build_id_len);
	rec.build_id_len = ef->build_id_len;
	image_key_from_build_id(rec.key, rec.build_id, rec.build_id_len);
	elffile_close(ef);
	strbuf_add_build_id(&sb, &rec);
	snprintf(hex, sizeof(hex), "%s", sb.buf);
	strbuf_release(&sb);
	img = image_open(&rec, NULL);
	tab = image_procs(img);
	for (size_t k = 0; k < tab->n && k < PROCS; k++) {
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
	model_name = cpu_model_for(&m, NULL)->name;
	ev = epoch_meta_add_event(&m, EVENT_CYCLES);
	ev->used = EVENT_CLOCK;
	ev->period = 100000;
	ev->period_in_ns = true;
	ev->samples = profile_total(&p);
	assert_int_equal(db_epoch_create(db, &m), 0);
	image_index_put(&idx, &rec);
	db_profile_id_set(&id, rec.key, EVENT_CYCLES, false, 0);
	assert_int_equal(db_profile_store(db, m.seq, &id, &p), 0);
	assert_int_equal(db_images_store(db, m.seq, &idx), 0);
	assert_int_equal(db_meta_store(db, &m), 0);
	profile_release(&p);
	image_index_release(&idx);
	epoch_meta_release(&m);
	db_close(db);
	free(db_path);
	return 0;
}

static int teardown(void **state)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);

	(void)state;
	assert_int_equal(system(cmd), 0);
	free(cmd);
	return 0;
}

/* ---- analysing ------------------------------------------------------------------------ */

/* The reports of every procedure analysed, in order: dcpicalc's text and JSON. */
struct reports {
	struct strbuf out;
	size_t procs, failed;
};

static void report(void *ctx, size_t i, struct calc *c, int r)
{
	struct reports *rp = ctx;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	struct json_writer jw;
	struct draw d;

	strbuf_addf(&rp->out, "#%zu r=%d\n", i, r);
	if (r) {
		rp->failed++;
		return;
	}
	rp->procs++;
	assert_non_null(f = open_memstream(&buf, &len));
	draw_init_file(&d, f, 0);
	calc_draw(c, &d, 0);
	draw_file_finish(&d);
	json_init(&jw, f, false);
	calc_json(c, &jw);
	json_finish(&jw);
	fclose(f);
	strbuf_add(&rp->out, buf, len);
	free(buf);
}

/* The test's database and epoch, and the binary's first PROCS procedures (their number). */
static size_t open_procs(struct db **db, struct epoch_view *v, struct proc_ref **refs)
{
	char *db_path = xasprintf("%s/db", dir);
	struct proctab *tab;
	size_t n;

	assert_non_null(*db = db_open(db_path, 0));
	free(db_path);
	assert_int_equal(epoch_view_open(v, *db, NULL, NULL), 0);
	tab = image_procs(epoch_view_image(v, 0));
	n = tab->n < PROCS ? tab->n : PROCS;
	*refs = xcalloc(n + 1, sizeof(**refs));
	for (size_t k = 0; k < n; k++)
		(*refs)[k] = (struct proc_ref){ 0, &tab->v[k] };
	return n;
}

/* Analyses the binary's first PROCS procedures with cache cc on `threads` threads. */
static void analyse(struct calc_cache *cc, unsigned threads, enum calc_sched mode,
		    struct reports *rp)
{
	struct calc_opts o = CALC_OPTS_INIT;
	struct epoch_view v;
	struct proc_ref *refs;
	struct db *db;
	size_t n = open_procs(&db, &v, &refs);

	o.sched = mode;
	o.cache = cc;
	strbuf_init(&rp->out, 0);
	rp->procs = rp->failed = 0;
	calc_each(&v, refs, n, &o, threads, report, rp);
	free(refs);
	epoch_view_release(&v);
	db_close(db);
}

/* A cache over the test's database (the db stays open as long as the cache). */
static struct calc_cache *open_cache(struct db **db)
{
	char *db_path = xasprintf("%s/db", dir);

	assert_non_null(*db = db_open(db_path, 0));
	free(db_path);
	return calc_cache_new(*db);
}

static void close_cache(struct calc_cache *cc, struct db *db, struct calc_cache_stats *st)
{
	calc_cache_flush(cc);
	calc_cache_get_stats(cc, st);
	calc_cache_free(cc);
	db_close(db);
}

static char *calc_file(void)
{
	return xasprintf("%s/db/calc/%s.%s", dir, hex, model_name);
}

static void remove_calc(void)
{
	char *cmd = xasprintf("rm -rf '%s/db/calc'", dir);

	assert_int_equal(system(cmd), 0);
	free(cmd);
}

/* ---- the tests ---------------------------------------------------------------------------- */

/*
 * Without a cache, filling it, from it, from it on two threads, in each
 * schedule mode: the same reports, and the second analysis finds every
 * procedure in the cache.
 */
static void cached_reports_are_the_same(void **state)
{
	(void)state;
	for (int mode = CALC_SCHED_LOOP; mode <= CALC_SCHED_AUTO; mode++) {
		struct reports plain, fill, warm, warm2;
		struct calc_cache_stats st;
		struct calc_cache *cc;
		struct db *db;

		remove_calc();
		analyse(NULL, 1, (enum calc_sched)mode, &plain);
		assert_true(plain.procs > 100);
		cc = open_cache(&db);
		analyse(cc, 1, (enum calc_sched)mode, &fill);
		close_cache(cc, db, &st);
		assert_int_equal(st.hits, 0);
		assert_true(st.misses >= plain.procs - 10);
		assert_int_equal(st.stored, st.misses);
		cc = open_cache(&db);
		analyse(cc, 1, (enum calc_sched)mode, &warm);
		close_cache(cc, db, &st);
		assert_true(st.hits >= plain.procs - 10);
		assert_int_equal(st.stored, 0);
		cc = open_cache(&db);
		analyse(cc, 2, (enum calc_sched)mode, &warm2);
		close_cache(cc, db, &st);
		assert_true(st.hits >= plain.procs - 10);
		assert_int_equal(fill.out.len, plain.out.len);
		assert_memory_equal(fill.out.buf, plain.out.buf, plain.out.len);
		assert_int_equal(warm.out.len, plain.out.len);
		assert_memory_equal(warm.out.buf, plain.out.buf, plain.out.len);
		assert_int_equal(warm2.out.len, plain.out.len);
		assert_memory_equal(warm2.out.buf, plain.out.buf, plain.out.len);
		strbuf_release(&plain.out);
		strbuf_release(&fill.out);
		strbuf_release(&warm.out);
		strbuf_release(&warm2.out);
	}
}

static int warnings;
static char last_warning[512];

static void count_warnings(enum report_level level, const char *msg)
{
	if (level == REPORT_WARNING) {
		warnings++;
		snprintf(last_warning, sizeof(last_warning), "%s", msg);
	}
}

/* Reads the cache file into sb (whole). */
static void read_calc(struct strbuf *sb)
{
	char *path = calc_file();
	FILE *f = fopen(path, "rb");
	char buf[65536];
	size_t n;

	assert_non_null(f);
	strbuf_reset(sb);
	while ((n = fread(buf, 1, sizeof(buf), f)))
		strbuf_add(sb, buf, n);
	fclose(f);
	free(path);
}

static void write_calc(const struct strbuf *sb)
{
	char *path = calc_file();
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(sb->buf, 1, sb->len, f), sb->len);
	fclose(f);
	free(path);
}

/*
 * A damaged cache (a byte changed: its checksum fails) is said once and
 * made again: the reports are the same, and the file is sound after.
 */
static void damaged_cache_is_made_again(void **state)
{
	struct reports plain, warm;
	struct calc_cache_stats st;
	struct calc_cache *cc;
	struct strbuf sb = STRBUF_INIT, buf = STRBUF_INIT;
	struct blob_header h;
	const char *why;
	struct db *db;

	(void)state;
	remove_calc();
	analyse(NULL, 1, CALC_SCHED_LOOP, &plain);
	cc = open_cache(&db);
	analyse(cc, 1, CALC_SCHED_LOOP, &warm);
	close_cache(cc, db, &st);
	strbuf_release(&warm.out);
	read_calc(&sb);
	sb.buf[sb.len / 2] ^= 0x40;
	write_calc(&sb);
	warnings = 0;
	set_report_routine(count_warnings);
	cc = open_cache(&db);
	analyse(cc, 2, CALC_SCHED_LOOP, &warm);
	close_cache(cc, db, &st);
	set_report_routine(NULL);
	assert_int_equal(warnings, 1);
	assert_non_null(strstr(last_warning, "damaged"));
	assert_int_equal(st.hits, 0);
	assert_int_equal(warm.out.len, plain.out.len);
	assert_memory_equal(warm.out.buf, plain.out.buf, plain.out.len);
	/* made again: sound, and every procedure found the next time */
	cc = open_cache(&db);
	calc_cache_free(cc);
	assert_int_equal(db_calc_load(db, hex, model_name, &buf, &h, &why), 0);
	assert_int_equal(calc_cache_check_payload(buf.buf + BLOB_HEADER_SIZE, h.payload_size,
						  h.count, &why), 0);
	db_close(db);
	strbuf_release(&plain.out);
	strbuf_release(&warm.out);
	strbuf_release(&sb);
	strbuf_release(&buf);
}

/*
 * The decoder refuses what is not what an analysis wrote, without a
 * crash: every truncation of a real file's payload, and changed bytes.
 */
static void decoder_refuses_damage(void **state)
{
	struct reports r;
	struct calc_cache_stats st;
	struct calc_cache *cc;
	struct strbuf buf = STRBUF_INIT;
	struct blob_header h;
	const char *why;
	const uint8_t *payload;
	uint8_t *copy;
	size_t len, refused = 0;
	struct db *db;
	unsigned seed = 3;

	(void)state;
	remove_calc();
	cc = open_cache(&db);
	analyse(cc, 1, CALC_SCHED_LOOP, &r);
	close_cache(cc, db, &st);
	strbuf_release(&r.out);
	cc = open_cache(&db);
	assert_int_equal(db_calc_load(db, hex, model_name, &buf, &h, &why), 0);
	payload = (const uint8_t *)buf.buf + BLOB_HEADER_SIZE;
	len = (size_t)h.payload_size;
	assert_int_equal(calc_cache_check_payload(payload, len, h.count, &why), 0);
	assert_int_equal(calc_cache_check_payload(payload, len, h.count + 1, &why), -1);
	for (size_t cut = 0; cut < len; cut += 1 + cut / 7)
		assert_int_equal(calc_cache_check_payload(payload, cut, h.count, &why), -1);
	copy = xmalloc(len);
	for (int k = 0; k < 300; k++) {
		memcpy(copy, payload, len);
		for (int j = 0; j < 1 + k % 4; j++) {
			seed = seed * 1103515245u + 12345u;
			copy[(seed >> 8) % len] ^= (uint8_t)(1u << (seed % 8));
		}
		refused += calc_cache_check_payload(copy, len, h.count, &why) != 0;
	}
	print_message("%zu of 300 changed payloads refused\n", refused);
	assert_true(refused > 100);
	free(copy);
	calc_cache_free(cc);
	db_close(db);
	strbuf_release(&buf);
}

/*
 * A view's figures kept per epoch (calc-memo.h): read back exactly as
 * found, for the same procedures only; other options are another memo; a
 * damaged one is said and made again; dcpidb check's decoder accepts it.
 */
struct memo_ctx {
	struct calc_memo *m;
	struct calc_procrow rows[PROCS];
	const struct proc *procs[PROCS];
	size_t n;
	const struct proc_ref *refs;   /* this round's procedures */
	bool found[PROCS];
};

static void memo_row(void *ctx, size_t i, struct calc *c, int r)
{
	struct memo_ctx *mc = ctx;

	if (r)
		return;
	calc_procrow(c, &mc->rows[i]);
	/* what the memo keeps: the figures a view shows */
	mc->rows[i].samples = 0;
	mc->rows[i].candidates = 0;
	mc->procs[i] = c->list.ref.proc;
}

static bool memo_kept(void *ctx, size_t k, size_t *image, const struct proc **p,
		      struct calc_procrow *row)
{
	struct memo_ctx *mc = ctx;

	if (!mc->procs[k])
		return false;
	*image = 0;
	*p = mc->procs[k];
	*row = mc->rows[k];
	return true;
}

/* Item k: the procedure of this round's view (image 0). */
static bool memo_item(void *ctx, size_t k, size_t *image, const struct proc **p)
{
	struct memo_ctx *mc = ctx;

	*image = 0;
	*p = mc->refs[k].proc;
	return true;
}

/* What the memo found of item k: the figures kept, once. */
static void memo_found(void *ctx, size_t k, const struct calc_procrow *row)
{
	struct memo_ctx *mc = ctx;

	assert_non_null(mc->procs[k]);
	assert_false(mc->found[k]);
	assert_memory_equal(row, &mc->rows[k], sizeof(*row));
	mc->found[k] = true;
}

static size_t count_kept(const struct memo_ctx *mc)
{
	size_t n = 0;

	for (size_t k = 0; k < mc->n; k++)
		n += mc->procs[k] != NULL;
	return n;
}

static void memo_round(struct memo_ctx *mc, enum calc_sched mode, bool analyse_them)
{
	struct calc_opts o = CALC_OPTS_INIT;
	struct epoch_view v;
	struct proc_ref *refs;
	struct db *db;

	mc->n = open_procs(&db, &v, &refs);
	o.sched = mode;
	mc->m = calc_memo_open(db, &v, &o);
	assert_non_null(mc->m);
	/* the procedures of this round's view (the last round's are gone with it) */
	for (size_t k = 0; k < mc->n; k++)
		mc->procs[k] = mc->procs[k] ? refs[k].proc : NULL;
	mc->refs = refs;
	memset(mc->found, 0, sizeof(mc->found));
	if (analyse_them) {
		/* nothing kept yet, or a damaged memo: nothing found */
		assert_int_equal(calc_memo_find(mc->m, mc->n, memo_item, memo_found, mc), 0);
		calc_each(&v, refs, mc->n, &o, 2, memo_row, mc);
	} else {
		assert_int_equal(calc_memo_find(mc->m, mc->n, memo_item, memo_found, mc),
				 count_kept(mc));
		for (size_t k = 0; k < mc->n; k++)
			assert_int_equal(mc->found[k], mc->procs[k] != NULL);
	}
	calc_memo_close(mc->m, mc->n, memo_kept, mc);
	free(refs);
	epoch_view_release(&v);
	db_close(db);
}

static unsigned memo_warnings;

static void count_memo_warnings(enum report_level level, const char *msg)
{
	memo_warnings += level == REPORT_WARNING && strstr(msg, "damaged");
}

static void memo_of_figures(void **state)
{
	struct memo_ctx mc;
	char *cmd;

	(void)state;
	memset(&mc, 0, sizeof(mc));
	remove_calc();
	memo_round(&mc, CALC_SCHED_LOOP, true);
	memo_round(&mc, CALC_SCHED_LOOP, false);
	/* another schedule: another memo, nothing found */
	{
		struct memo_ctx other;

		memset(&other, 0, sizeof(other));
		memo_round(&other, CALC_SCHED_COLD, false);
	}
	/* every memo file decodes as dcpidb check decodes it; a damaged one is made again */
	cmd = xasprintf("for f in '%s'/db/calc/*; do dd if=/dev/zero of=\"$f\" bs=1 seek=60 count=8 "
			"conv=notrunc 2>/dev/null; done", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	set_report_routine(count_memo_warnings);
	memo_round(&mc, CALC_SCHED_LOOP, true);
	set_report_routine(NULL);
	assert_int_equal(memo_warnings, 1);
	memo_round(&mc, CALC_SCHED_LOOP, false);
	remove_calc();
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(cached_reports_are_the_same),
		cmocka_unit_test(damaged_cache_is_made_again),
		cmocka_unit_test(decoder_refuses_damage),
		cmocka_unit_test(memo_of_figures),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
