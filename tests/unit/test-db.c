/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of db/: profile encoding, text records, meta, image index, and
 * the database operations (epochs, merge-add, corruption, faults). */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fcntl.h>
#include <cmocka.h>

#include "core/crc32c.h"
#include "core/die.h"
#include "core/endian.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "db/auxfile.h"
#include "db/blob.h"
#include "db/blobfile.h"
#include "db/bursts.h"
#include "db/damage.h"
#include "db/db.h"
#include "db/fsio.h"
#include "db/meta.h"
#include "db/paths.h"
#include "db/symfile.h"
#include "db/textrec.h"
#include "db/values.h"

/* Silence expected error messages, but count them. */
static unsigned reported;
static void quiet(enum report_level level, const char *msg)
{
	(void)level;
	(void)msg;
	reported++;
}

static void make_profile(struct profile *p, size_t n, uint64_t step)
{
	profile_init(p);
	for (size_t i = 0; i < n; i++)
		profile_add(p, 0x1000 + i * step, 1 + i % 7);
}

static void encode(const struct profile *p, const char *key, enum dcpi_event ev,
		   struct strbuf *out)
{
	struct profile_header h;

	memset(&h, 0, sizeof(h));
	strcpy(h.key, key);
	h.event = ev;
	profile_encode(p, &h, out);
}

static void profile_normalize_and_merge(void **state)
{
	struct profile a = PROFILE_INIT, b = PROFILE_INIT;

	profile_add(&a, 30, 1);
	profile_add(&a, 10, 2);
	profile_add(&a, 30, 4);
	profile_add(&a, 20, 0);
	assert_false(profile_is_normalized(&a));
	profile_normalize(&a);
	assert_true(profile_is_normalized(&a));
	assert_int_equal(a.n, 2);
	assert_true(profile_get(&a, 30) == 5 && profile_get(&a, 10) == 2);
	profile_add(&b, 5, 1);
	profile_add(&b, 10, 1);
	profile_add(&b, 40, 9);
	assert_int_equal(profile_merge(&a, &b), 0);
	assert_int_equal(a.n, 4);
	assert_true(profile_total(&a) == 18);
	assert_true(profile_get(&a, 10) == 3);
	/* Overflow is refused and leaves dst alone. */
	profile_release(&b);
	profile_add(&b, 40, UINT64_MAX);
	assert_int_equal(profile_merge(&a, &b), -1);
	assert_true(profile_get(&a, 40) == 9);
	profile_release(&a);
	profile_release(&b);
}

static void profile_encode_round_trip(void **state)
{
	static const size_t sizes[] = { 0, 1, 2, 100, 5000 };

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		struct profile p, q = PROFILE_INIT;
		struct profile_header h;
		struct strbuf sb = STRBUF_INIT;
		const char *why;

		make_profile(&p, sizes[s], 3);
		profile_add(&p, UINT64_MAX, 1);
		profile_normalize(&p);
		encode(&p, "abc123", EVENT_IMISS, &sb);
		assert_int_equal(profile_decode(sb.buf, sb.len, &h, &q, &why), 0);
		assert_int_equal(q.n, p.n);
		assert_memory_equal(q.v, p.v, p.n * sizeof(*p.v));
		assert_string_equal(h.key, "abc123");
		assert_int_equal(h.event, EVENT_IMISS);
		assert_true(h.total == profile_total(&p));
		profile_release(&p);
		profile_release(&q);
		strbuf_release(&sb);
	}
}

static void profile_is_compact(void **state)
{
	struct profile p;
	struct strbuf sb = STRBUF_INIT;

	/* 10000 offsets 4 bytes apart with small counts: 2 bytes each. */
	make_profile(&p, 10000, 4);
	encode(&p, "k", EVENT_CYCLES, &sb);
	assert_true(sb.len <= PROFILE_HEADER_SIZE + 2 * 10000 + 8);
	profile_release(&p);
	strbuf_release(&sb);
}

static void profile_rejects_every_truncation_and_flip(void **state)
{
	struct profile p, q = PROFILE_INIT;
	struct profile_header h;
	struct strbuf sb = STRBUF_INIT;
	const char *why;

	make_profile(&p, 50, 5);
	encode(&p, "deadbeef", EVENT_CYCLES, &sb);
	for (size_t len = 0; len < sb.len; len++)
		assert_int_equal(profile_decode(sb.buf, len, &h, &q, &why), -1);
	for (size_t i = 0; i < sb.len; i++) {
		for (int bit = 0; bit < 8; bit++) {
			sb.buf[i] ^= (char)(1 << bit);
			assert_int_equal(profile_decode(sb.buf, sb.len, &h, &q, &why), -1);
			assert_int_equal(q.n, 0);
			sb.buf[i] ^= (char)(1 << bit);
		}
	}
	strbuf_addch(&sb, 0);
	assert_int_equal(profile_decode(sb.buf, sb.len, &h, &q, &why), -1);
	assert_string_equal(why, "trailing bytes after payload");
	profile_release(&p);
	profile_release(&q);
	strbuf_release(&sb);
}

static void textrec_round_trip_and_damage(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct textrec rec;
	const char *why;

	textrec_begin(&sb, "dcpi-test", 1);
	textrec_line(&sb, "path", "/a b/c\nd", "x", NULL);
	textrec_finish(&sb);
	assert_int_equal(textrec_parse(sb.buf, sb.len, "dcpi-test", 1, &rec, &why), 0);
	assert_int_equal(rec.n, 1);
	assert_int_equal(rec.lines[0].ntok, 3);
	assert_string_equal(rec.lines[0].tok[1], "/a b/c\nd");
	textrec_release(&rec);
	assert_int_equal(textrec_parse(sb.buf, sb.len, "dcpi-other", 1, &rec, &why), -1);
	for (size_t len = 0; len < sb.len; len++)
		assert_int_equal(textrec_parse(sb.buf, len, "dcpi-test", 1, &rec, &why), -1);
	sb.buf[12] ^= 1;
	assert_int_equal(textrec_parse(sb.buf, sb.len, "dcpi-test", 1, &rec, &why), -1);
	assert_string_equal(why, "bad checksum");
	strbuf_release(&sb);
}

static void meta_round_trip(void **state)
{
	struct epoch_meta m, n;
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	struct epoch_event *e;
	const char *why;
	char *argv[] = { "./prog", "arg with space", "", "x\ny", NULL };

	epoch_meta_init(&m);
	m.seq = 7;
	m.start_ns = 1795329060123000000ll;
	m.end_ns = m.start_ns + 5000000000ll;
	epoch_meta_set_label(&m, "before");
	epoch_meta_fill_host(&m);
	m.command = argv;
	e = epoch_meta_add_event(&m, EVENT_CYCLES);
	e->used = EVENT_CLOCK;
	e->period = 1000000;
	e->period_in_ns = true;
	e->samples = 12345;
	m.cpu_mhz = 2000;
	epoch_meta_set_counter(&m, "lost", 3);
	epoch_meta_format(&m, &a);
	m.command = NULL;
	/* A line from a newer version survives a parse/format cycle. */
	strbuf_setlen(&a, a.len - 16);
	strbuf_addstr(&a, "future_key some\\x20value 1\n");
	textrec_finish(&a);
	assert_int_equal(epoch_meta_parse(a.buf, a.len, &n, &why), 0);
	assert_int_equal(n.seq, 7);
	assert_string_equal(n.label, "before");
	assert_string_equal(n.command[1], "arg with space");
	assert_string_equal(n.command[2], "");
	assert_string_equal(n.command[3], "x\ny");
	assert_null(n.command[4]);
	assert_true(epoch_meta_counter(&n, "lost") == 3);
	assert_true(epoch_meta_event(&n, EVENT_CYCLES)->used == EVENT_CLOCK);
	assert_true(epoch_meta_period_cycles(&n, EVENT_CYCLES) == 2000000.0);
	assert_int_equal(n.n_extra, 1);
	epoch_meta_format(&n, &b);
	assert_non_null(strstr(b.buf, "future_key some\\x20value 1\n"));
	epoch_meta_release(&m);
	epoch_meta_release(&n);
	strbuf_release(&a);
	strbuf_release(&b);
}

static void labels(void **state)
{
	assert_true(epoch_label_valid("before"));
	assert_true(epoch_label_valid("v1.2"));
	assert_false(epoch_label_valid(""));
	assert_false(epoch_label_valid("12"));
	assert_false(epoch_label_valid("latest"));
	assert_false(epoch_label_valid("latest~1"));
	assert_false(epoch_label_valid("a b"));
	assert_false(epoch_label_valid("a\nb"));
}

static void image_index_hostile_paths(void **state)
{
	struct image_index idx = IMAGE_INDEX_INIT, back;
	struct db_image img;
	struct strbuf sb = STRBUF_INIT;
	const char *why;
	static const char *const paths[] = { "../../etc/x", "/tmp/a\nimage b", "/x y/\x1b[1m",
					     "/usr/lib/libc.so.6" };

	for (size_t i = 0; i < 4; i++) {
		memset(&img, 0, sizeof(img));
		img.path = (char *)paths[i];
		img.dev = 1;
		img.ino = i;
		image_key_from_path(img.key, img.path, img.dev, img.ino);
		assert_true(image_key_valid(img.key));
		image_index_put(&idx, &img);
	}
	image_index_format(&idx, &sb);
	assert_int_equal(image_index_parse(sb.buf, sb.len, &back, &why), 0);
	assert_int_equal(back.n, 4);
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(image_index_find(&back, idx.v[i].key)->path, idx.v[i].path);
	assert_false(image_key_valid("../x"));
	assert_false(image_key_valid("A"));
	assert_false(image_key_valid(""));
	image_index_release(&idx);
	image_index_release(&back);
	strbuf_release(&sb);
}

static void build_id_keys(void **state)
{
	uint8_t id[20];
	char key[PROFILE_KEY_MAX + 1];
	uint8_t big[32] = { 0 };

	for (int i = 0; i < 20; i++)
		id[i] = (uint8_t)(i * 17);
	image_key_from_build_id(key, id, 20);
	assert_string_equal(key, "00112233445566778899aabbccddeeff10213243");
	image_key_from_build_id(key, big, 32);
	assert_int_equal(key[0], 'h');
	assert_true(image_key_valid(key));
}

/* ---- database operations ---------------------------------------------- */

static char *tmpdb(void)
{
	char tmpl[] = "/tmp/dcpi-unit-XXXXXX";
	char *dir = mkdtemp(tmpl);

	assert_non_null(dir);
	return xasprintf("%s/db", dir);
}

static struct db *new_db(char **path)
{
	struct db *db;

	*path = tmpdb();
	db = db_open(*path, DB_CREATE | DB_NOSYNC);
	assert_non_null(db);
	return db;
}

static uint32_t new_epoch(struct db *db, const char *label)
{
	struct epoch_meta m;
	uint32_t seq;

	epoch_meta_init(&m);
	if (label)
		epoch_meta_set_label(&m, label);
	assert_int_equal(db_epoch_create(db, &m), 0);
	seq = m.seq;
	epoch_meta_release(&m);
	return seq;
}

static void db_epochs_and_resolution(void **state)
{
	char *path;
	struct db *db = new_db(&path), *rd;
	uint32_t seq, cur;
	struct epoch_meta m;

	reported = 0;
	assert_int_equal(db_epoch_resolve(db, "latest", &seq), -1);
	assert_int_equal(new_epoch(db, "before"), 1);
	assert_int_equal(new_epoch(db, NULL), 2);
	assert_int_equal(new_epoch(db, "after"), 3);
	assert_int_equal(new_epoch(db, "before"), 4);
	assert_int_equal(db_epoch_resolve(db, NULL, &seq), 0);
	assert_int_equal(seq, 4);
	assert_int_equal(db_epoch_resolve(db, "latest~1", &seq), 0);
	assert_int_equal(seq, 3);
	assert_int_equal(db_epoch_resolve(db, "latest~3", &seq), 0);
	assert_int_equal(seq, 1);
	assert_int_equal(db_epoch_resolve(db, "latest~4", &seq), -1);
	assert_int_equal(db_epoch_resolve(db, "latest~x", &seq), -1);
	assert_int_equal(db_epoch_resolve(db, "2", &seq), 0);
	assert_int_equal(seq, 2);
	assert_int_equal(db_epoch_resolve(db, "9", &seq), -1);
	assert_int_equal(db_epoch_resolve(db, "after", &seq), 0);
	assert_int_equal(seq, 3);
	assert_int_equal(db_epoch_resolve(db, "before", &seq), 0);
	assert_int_equal(seq, 4);
	assert_int_equal(db_epoch_resolve(db, "nope", &seq), -1);
	assert_int_equal(db_epoch_current(db, &cur), 0);
	assert_int_equal(cur, 4);
	/* Creating an epoch closed the previous one. */
	assert_int_equal(db_meta_load(db, 3, &m), 0);
	assert_true(m.end_ns >= m.start_ns && m.end_ns != 0);
	epoch_meta_release(&m);
	assert_int_equal(db_meta_load(db, 4, &m), 0);
	assert_true(m.end_ns == 0);
	epoch_meta_release(&m);
	/* An invalid label is refused. */
	epoch_meta_init(&m);
	epoch_meta_set_label(&m, "latest");
	assert_int_equal(db_epoch_create(db, &m), -1);
	epoch_meta_release(&m);
	/* A second writer is refused; a reader is not. */
	assert_null(db_open(path, DB_WRITE));
	rd = db_open(path, DB_READ);
	assert_non_null(rd);
	db_close(rd);
	assert_true(reported >= 7);
	db_close(db);
	free(path);
}

/*
 * A writer killed after it renamed a new epoch into place and before it
 * moved `current` (or before the first `current` was written): the newest
 * epoch is the current one, and the next writer continues it.
 */
static void db_current_is_the_newest_epoch(void **state)
{
	char *path, *cur_path;
	struct db *db = new_db(&path);
	struct strbuf sb = STRBUF_INIT;
	uint32_t cur;
	FILE *f;

	(void)state;
	assert_int_equal(db_epoch_current(db, &cur), 0);
	assert_int_equal(cur, 0);
	assert_int_equal(new_epoch(db, NULL), 1);
	cur_path = xasprintf("%s/current", path);
	assert_int_equal(unlink(cur_path), 0);
	assert_int_equal(db_epoch_current(db, &cur), 0);
	assert_int_equal(cur, 1);
	assert_int_equal(new_epoch(db, NULL), 2);
	assert_int_equal(new_epoch(db, NULL), 3);
	/* `current` still naming epoch 2, as a kill before its rename leaves it */
	textrec_begin(&sb, "dcpi-current", 1);
	strbuf_addstr(&sb, "epoch 2\n");
	textrec_finish(&sb);
	f = fopen(cur_path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(sb.buf, 1, sb.len, f), sb.len);
	fclose(f);
	strbuf_release(&sb);
	assert_int_equal(db_epoch_current(db, &cur), 0);
	assert_int_equal(cur, 3);
	free(cur_path);
	db_close(db);
	free(path);
}

static void db_refuses_non_database(void **state)
{
	char *path = tmpdb();
	char *file;
	int fd;

	reported = 0;
	assert_null(db_open(path, DB_READ)); /* missing */
	assert_int_equal(mkdir(path, 0755), 0);
	file = xasprintf("%s/precious", path);
	fd = open(file, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_null(db_open(path, DB_CREATE)); /* non-empty, not a database */
	assert_int_equal(access(file, F_OK), 0);
	assert_int_equal(reported, 2);
	free(file);
	free(path);
}

static void db_merge_add(void **state)
{
	char *path;
	struct db *db = new_db(&path);
	struct db_profile_id id, *ids;
	struct profile a, b = PROFILE_INIT, got = PROFILE_INIT;
	struct db_image_totals *tot;
	size_t n;
	uint32_t seq = new_epoch(db, NULL);

	make_profile(&a, 100, 4);
	profile_normalize(&a);
	assert_int_equal(db_profile_id_set(&id, "cafe", EVENT_CYCLES, false, 0), 0);
	assert_int_equal(db_profile_load(db, seq, &id, &got), 1);
	assert_int_equal(db_profile_merge(db, seq, &id, &a), 0);
	assert_int_equal(db_profile_merge(db, seq, &id, &a), 0);
	assert_int_equal(db_profile_load(db, seq, &id, &got), 0);
	assert_int_equal(got.n, 100);
	assert_true(profile_total(&got) == 2 * profile_total(&a));
	profile_add(&b, 1, 10);
	db_profile_id_set(&id, "cafe", EVENT_IMISS, false, 0);
	assert_int_equal(db_profile_merge(db, seq, &id, &b), 0);
	db_profile_id_set(&id, "cafe", EVENT_CYCLES, true, 77);
	assert_int_equal(db_profile_merge(db, seq, &id, &b), 0);
	assert_int_equal(db_profiles_list(db, seq, &ids, &n), 0);
	assert_int_equal(n, 3);
	assert_true(ids[1].per_pid && ids[1].pid == 77 && ids[2].event == EVENT_IMISS);
	free(ids);
	assert_int_equal(db_image_totals(db, seq, &tot, &n), 0);
	assert_int_equal(n, 1);
	assert_true(tot[0].samples[EVENT_CYCLES] == 2 * profile_total(&a));
	assert_true(tot[0].samples[EVENT_IMISS] == 10);
	free(tot);
	profile_release(&a);
	profile_release(&b);
	profile_release(&got);
	db_close(db);
	free(path);
}

static void db_corrupt_profile_is_reported_and_quarantined(void **state)
{
	char *path;
	struct db *db = new_db(&path);
	struct db_profile_id id;
	struct profile a, got = PROFILE_INIT;
	struct profile_header h;
	uint32_t seq = new_epoch(db, NULL);
	char *file, *bad;

	make_profile(&a, 10, 4);
	db_profile_id_set(&id, "beef", EVENT_CYCLES, false, 0);
	assert_int_equal(db_profile_merge(db, seq, &id, &a), 0);
	file = xasprintf("%s/000001/beef.cycles.prof", path);
	bad = xasprintf("%s.corrupt", file);
	assert_int_equal(truncate(file, 140), 0);
	reported = 0;
	assert_int_equal(db_profile_load(db, seq, &id, &got), -1);
	assert_int_equal(db_profile_stat(db, seq, &id, &h), -1);
	/* the same damage found twice is said once, and recorded for the reports */
	assert_int_equal(reported, 1);
	{
		const struct db_damage **v;
		const struct db_damage *d;

		assert_int_equal(db_damage_list(db, 0, 0, &v), 1);
		assert_int_equal(v[0]->kind, DB_DAMAGED);
		assert_int_equal(v[0]->seq, seq);
		assert_string_equal(v[0]->name, "beef.cycles.prof");
		assert_string_equal(v[0]->key, "beef");
		assert_string_equal(v[0]->why, "corrupt profile: truncated payload");
		free(v);
		assert_true(db_damage_partial(db, seq));
		assert_false(db_damage_partial(db, seq + 1));
		d = db_damage_of_image(db, seq, "beef");
		assert_non_null(d);
		assert_null(db_damage_of_image(db, seq, "feed"));
	}
	/* A merge keeps the bad file aside and goes on. */
	assert_int_equal(db_profile_merge(db, seq, &id, &a), 0);
	assert_int_equal(access(bad, F_OK), 0);
	assert_int_equal(db_profile_load(db, seq, &id, &got), 0);
	assert_true(profile_total(&got) == profile_total(&a));
	/* A valid file under another key's name is caught by the header check. */
	free(bad);
	bad = xasprintf("%s/000001/feed.cycles.prof", path);
	assert_int_equal(link(file, bad), 0);
	db_profile_id_set(&id, "feed", EVENT_CYCLES, false, 0);
	reported = 0;
	assert_int_equal(db_profile_load(db, seq, &id, &got), -1);
	assert_int_equal(reported, 1);
	free(file);
	free(bad);
	profile_release(&a);
	profile_release(&got);
	db_close(db);
	free(path);
}

static void db_fsync_failure_keeps_old_file(void **state)
{
	char *path = tmpdb();
	struct db *db = db_open(path, DB_CREATE);
	struct db_profile_id id;
	struct profile a, got = PROFILE_INIT;
	uint32_t seq;

	assert_non_null(db);
	seq = new_epoch(db, NULL);
	make_profile(&a, 10, 4);
	db_profile_id_set(&id, "f00d", EVENT_CYCLES, false, 0);
	assert_int_equal(db_profile_merge(db, seq, &id, &a), 0);
	for (int kind = FSIO_FAULT_WRITE; kind <= FSIO_FAULT_SHORT; kind++) {
		fsio_inject_fault((enum fsio_fault)kind, 1);
		reported = 0;
		assert_int_equal(db_profile_merge(db, seq, &id, &a), -1);
		assert_int_equal(reported, 1);
		assert_int_equal(db_profile_load(db, seq, &id, &got), 0);
		assert_true(profile_total(&got) == profile_total(&a));
	}
	/* Retrying from memory succeeds. */
	assert_int_equal(db_profile_merge(db, seq, &id, &a), 0);
	assert_int_equal(db_profile_load(db, seq, &id, &got), 0);
	assert_true(profile_total(&got) == 2 * profile_total(&a));
	profile_release(&a);
	profile_release(&got);
	db_close(db);
	free(path);
}

static void db_cleans_orphaned_temps(void **state)
{
	char *path;
	struct db *db = new_db(&path);
	char *tmp1, *tmp2;
	int fd;

	new_epoch(db, NULL);
	db_close(db);
	tmp1 = xasprintf("%s/.tmp.current.1234", path);
	tmp2 = xasprintf("%s/000001/.tmp.x.cycles.prof.99", path);
	fd = open(tmp1, O_CREAT | O_WRONLY, 0600);
	close(fd);
	fd = open(tmp2, O_CREAT | O_WRONLY, 0600);
	close(fd);
	db = db_open(path, DB_READ);
	db_close(db);
	assert_int_equal(access(tmp1, F_OK), 0); /* readers leave them */
	db = db_open(path, DB_WRITE);
	assert_non_null(db);
	assert_int_equal(access(tmp1, F_OK), -1);
	assert_int_equal(access(tmp2, F_OK), -1);
	db_close(db);
	free(tmp1);
	free(tmp2);
	free(path);
}

static void db_aux_files(void **state)
{
	char *path;
	struct db *db = new_db(&path);
	struct strbuf sb = STRBUF_INIT;
	uint32_t seq = new_epoch(db, NULL);

	assert_true(db_aux_name_valid("kallsyms"));
	assert_true(db_aux_name_valid("perf-123.map"));
	assert_false(db_aux_name_valid("../x"));
	assert_false(db_aux_name_valid(".tmp.x"));
	assert_false(db_aux_name_valid("meta"));
	assert_false(db_aux_name_valid("a.cycles.prof"));
	assert_int_equal(db_aux_store(db, seq, "kallsyms", "ffff t x\n", 9), 0);
	assert_int_equal(db_aux_load(db, seq, "kallsyms", 100, &sb), 0);
	assert_string_equal(sb.buf, "ffff t x\n");
	assert_int_equal(db_aux_load(db, seq, "perf-1.map", 100, &sb), 1);
	strbuf_release(&sb);
	db_close(db);
	free(path);
}

/*
 * Symbol files: kept in their container, every change to them caught; an
 * older dcpi's plain copy read as unverified; a malformed kallsyms refused.
 */
static void db_symbol_files(void **state)
{
	static const char ks[] = "ffffffff81000000 T _stext\nffffffff81000100 t do_work\n";
	char *path, *file;
	struct db *db = new_db(&path);
	struct strbuf sb = STRBUF_INIT;
	uint32_t seq = new_epoch(db, NULL);
	const struct db_damage **v;
	FILE *f;

	assert_int_equal(symfile_kind_for_name("kallsyms"), SYMFILE_KALLSYMS);
	assert_int_equal(symfile_kind_for_name("perf-12.map"), SYMFILE_JITMAP);
	assert_int_equal(symfile_kind_for_name("stacks-1"), -1);
	assert_int_equal(symfile_count_lines("a\nb", 3), 2);
	assert_int_equal(symfile_count_lines("", 0), 0);
	assert_int_equal(db_symfile_load(db, seq, "kallsyms", &sb), DB_SYMFILE_ABSENT);
	assert_int_equal(db_symfile_store(db, seq, "kallsyms", ks, strlen(ks)), 0);
	assert_int_equal(db_symfile_load(db, seq, "kallsyms", &sb), 0);
	assert_string_equal(sb.buf, ks);
	assert_int_equal(db_symfile_store(db, seq, "perf-7.map", "1000 10 jit", 11), 0);
	assert_int_equal(db_symfile_load(db, seq, "perf-7.map", &sb), 0);
	assert_memory_equal(sb.buf, "1000 10 jit", 11);
	assert_int_equal(db_damage_list(db, 0, 0, &v), 0);
	free(v);
	/* a symbol renamed in place: the checksum catches it */
	file = xasprintf("%s/000001/kallsyms", path);
	f = fopen(file, "r+");
	assert_non_null(f);
	assert_int_equal(fseek(f, BLOB_HEADER_SIZE + 20, SEEK_SET), 0);
	assert_int_equal(fputc('Q', f), 'Q');
	fclose(f);
	reported = 0;
	assert_int_equal(db_symfile_load(db, seq, "kallsyms", &sb), -1);
	assert_int_equal(reported, 1);
	assert_int_equal(sb.len, 0);
	assert_non_null(db_damage_of_image(db, seq, "kernel"));
	assert_non_null(db_damage_of_image(db, seq, "mod-abc"));
	assert_true(db_damage_partial(db, seq));
	/* the plain text an older dcpi wrote: read, unverified */
	f = fopen(file, "w");
	assert_non_null(f);
	fputs(ks, f);
	fclose(f);
	db_damage_forget(db, seq);
	assert_false(db_damage_partial(db, seq));
	assert_int_equal(db_symfile_load(db, seq, "kallsyms", &sb), DB_SYMFILE_UNVERIFIED);
	assert_string_equal(sb.buf, ks);
	assert_int_equal(db_damage_list(db, seq, 1u << DB_UNVERIFIED, &v), 1);
	assert_int_equal(v[0]->kind, DB_UNVERIFIED);
	free(v);
	assert_false(db_damage_partial(db, seq));
	/* a container around lines that are not kallsyms lines */
	assert_int_equal(db_symfile_store(db, seq, "kallsyms", "garbage\n", 8), 0);
	assert_int_equal(db_symfile_load(db, seq, "kallsyms", &sb), -1);
	free(file);
	strbuf_release(&sb);
	db_close(db);
	free(path);
}

/* The blob container: round trip, every truncation and bit flip refused. */
static void blob_round_trip_and_damage(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct blob_header h;
	const void *payload;
	const char *why;
	uint8_t *copy;

	blob_encode("DCPITEST", 3, 0x5, 7, "payload!", 8, &sb);
	assert_int_equal(sb.len, BLOB_HEADER_SIZE + 8);
	assert_true(blob_sniff(sb.buf, sb.len));
	assert_int_equal(blob_decode(sb.buf, sb.len, "DCPITEST", 3, &h, &payload, &why), 0);
	assert_string_equal(h.magic, "DCPITEST");
	assert_int_equal(h.version, 3);
	assert_int_equal(h.flags, 5);
	assert_int_equal(h.count, 7);
	assert_memory_equal(payload, "payload!", 8);
	assert_int_equal(blob_decode(sb.buf, sb.len, NULL, 0, &h, &payload, &why), 0);
	assert_int_equal(blob_decode(sb.buf, sb.len, "DCPIELSE", 3, &h, &payload, &why), -1);
	assert_int_equal(blob_decode(sb.buf, sb.len, "DCPITEST", 2, &h, &payload, &why), -1);
	assert_string_equal(why, "unsupported version");
	for (size_t n = 0; n < sb.len; n++)
		assert_int_equal(blob_decode(sb.buf, n, NULL, 0, &h, &payload, &why), -1);
	copy = xmalloc(sb.len + 1);
	for (size_t i = 0; i < sb.len * 8; i++) {
		memcpy(copy, sb.buf, sb.len);
		copy[i / 8] ^= (uint8_t)(1u << (i % 8));
		assert_int_equal(blob_decode(copy, sb.len, "DCPITEST", 3, &h, &payload, &why), -1);
	}
	memcpy(copy, sb.buf, sb.len);
	copy[sb.len] = 0;
	assert_int_equal(blob_decode(copy, sb.len + 1, NULL, 0, &h, &payload, &why), -1);
	assert_string_equal(why, "trailing bytes");
	/* a magic the encoder cannot write ("DCPIS\0A\0", checksums right) is refused */
	memcpy(copy, sb.buf, sb.len);
	memcpy(copy, "DCPIS\0A\0", 8);
	put_le32(copy + 28, crc32c(0, copy, 28));
	assert_false(blob_sniff(copy, sb.len));
	assert_int_equal(blob_decode(copy, sb.len, NULL, 0, &h, &payload, &why), -1);
	assert_string_equal(why, "bad magic");
	memcpy(copy, "DCPItest", 8);
	put_le32(copy + 28, crc32c(0, copy, 28));
	assert_int_equal(blob_decode(copy, sb.len, NULL, 0, &h, &payload, &why), -1);
	free(copy);
	strbuf_release(&sb);
}

/* Appends the new bytes to what the file held. */
static int append_merge(void *ctx, const void *old, size_t old_len,
			const struct blob_header *h, struct strbuf *out, uint32_t *count)
{
	if (old)
		strbuf_add(out, old, old_len);
	strbuf_addstr(out, ctx);
	*count = (h ? h->count : 0) + 1;
	return 0;
}

static void db_blob_files(void **state)
{
	char *path, *file;
	struct db *db = new_db(&path);
	struct strbuf sb = STRBUF_INIT;
	struct blob_header h;
	uint32_t seq = new_epoch(db, NULL);

	assert_int_equal(db_blob_load(db, seq, "x.vals", "DCPITEST", 1, NULL, &sb, &h), 1);
	assert_int_equal(db_blob_merge(db, seq, "x.vals", "DCPITEST", 1, 0, append_merge, "ab"), 0);
	assert_int_equal(db_blob_merge(db, seq, "x.vals", "DCPITEST", 1, 0, append_merge, "cd"), 0);
	assert_int_equal(db_blob_load(db, seq, "x.vals", "DCPITEST", 1, NULL, &sb, &h), 0);
	assert_int_equal(h.count, 2);
	assert_int_equal(sb.len, BLOB_HEADER_SIZE + 4);
	assert_memory_equal(sb.buf + BLOB_HEADER_SIZE, "abcd", 4);
	/* A damaged file is reported, then set aside by the next merge. */
	file = xasprintf("%s/000001/x.vals", path);
	assert_int_equal(truncate(file, BLOB_HEADER_SIZE + 2), 0);
	reported = 0;
	assert_int_equal(db_blob_load(db, seq, "x.vals", "DCPITEST", 1, NULL, &sb, &h), -2);
	assert_int_equal(reported, 1);
	assert_int_equal(db_blob_merge(db, seq, "x.vals", "DCPITEST", 1, 0, append_merge, "ef"), 0);
	assert_int_equal(db_blob_load(db, seq, "x.vals", "DCPITEST", 1, NULL, &sb, &h), 0);
	assert_int_equal(h.count, 1);
	assert_memory_equal(sb.buf + BLOB_HEADER_SIZE, "ef", 2);
	free(file);
	file = xasprintf("%s/000001/x.vals.corrupt", path);
	assert_int_equal(access(file, F_OK), 0);
	free(file);
	strbuf_release(&sb);
	db_close(db);
	free(path);
}

/* ---- value profiles ------------------------------------------------------------------- */

/* A profile of n records: rsp and rbx invariant, rax a counter, pairs on every third. */
static void make_values(struct values_profile *p, size_t n, uint64_t base)
{
	struct hotlist_rng rng = HOTLIST_RNG_INIT(11);

	values_profile_init(p);
	for (size_t i = 0; i < n; i++) {
		struct values_rec *r = values_profile_add(p, base + 0x40 * (n - i));
		uint64_t regs[VALUES_NREGS] = { 0 };

		for (uint64_t k = 0; k < 20 + i; k++) {
			regs[VREG_RSP] = 0x7ffc12345670ull;
			regs[VREG_RBX] = 0x5eed5eed;
			regs[VREG_RAX] = k;
			values_rec_sample(r, regs, VALUES_ALL_REGS, &rng);
		}
		if (i % 3 == 0) {
			struct values_pairs *pp = values_rec_pairs(r);

			pp->n = 5;
			pp->dt = 5000000;
			pp->mask = 1u << VREG_RAX;
			pp->d[VREG_RAX].npos = 4;
			pp->d[VREG_RAX].spos = 4000;
			pp->d[VREG_RAX].mpos = 1200;
			pp->d[VREG_RAX].mpos2 = 1100;
			pp->d[VREG_RAX].nneg = 1;
			pp->d[VREG_RAX].sneg = 7;
			pp->d[VREG_RAX].mneg = 7;
		}
	}
	values_profile_sort(p);
}

static const struct hotlist *list_of(const struct values_profile *p, size_t i, unsigned reg)
{
	return (p->v[i].mask & (1u << reg)) ? &p->v[i].h[reg] : NULL;
}

static void values_round_trip_and_damage(void **state)
{
	struct values_profile p, q = VALUES_PROFILE_INIT;
	struct strbuf sb = STRBUF_INIT, sb2 = STRBUF_INIT;
	const char *why;
	uint32_t n;

	(void)state;
	make_values(&p, 40, 0x1000);
	n = values_encode(&p, &sb);
	assert_int_equal(n, 40);
	assert_int_equal(values_decode(sb.buf, sb.len, n, &q, &why), 0);
	assert_int_equal(q.n, 40);
	for (size_t i = 0; i < q.n; i++) {
		assert_true(q.v[i].offset == p.v[i].offset && q.v[i].samples == p.v[i].samples);
		assert_int_equal(q.v[i].mask, VALUES_ALL_REGS);
		assert_true(list_of(&q, i, VREG_RBX)->e[0].value == 0x5eed5eed);
		assert_true(list_of(&q, i, VREG_RBX)->e[0].count == q.v[i].samples);
		assert_true(list_of(&q, i, VREG_RAX)->n <= VALUES_CAP && list_of(&q, i, VREG_RAX)->tau > 1);
		assert_true(!!q.v[i].pairs == !!p.v[i].pairs);
	}
	assert_true(q.v[39].pairs && q.v[39].pairs->d[VREG_RAX].spos == 4000 &&
		    q.v[39].pairs->d[VREG_RAX].mpos == 1200);
	values_encode(&q, &sb2);
	assert_int_equal(sb2.len, sb.len);
	assert_memory_equal(sb2.buf, sb.buf, sb.len);
	/* Invariant registers cost a byte or two: the whole record is small. */
	assert_true(sb.len < 40 * 120);
	/* Every truncation is refused; so is a wrong record count and a trailing byte. */
	for (size_t len = 0; len < sb.len; len++)
		assert_int_equal(values_decode(sb.buf, len, n, &q, &why), -1);
	assert_int_equal(q.n, 0);
	assert_int_equal(values_decode(sb.buf, sb.len, n + 1, &q, &why), -1);
	assert_int_equal(values_decode(sb.buf, sb.len, n - 1, &q, &why), -1);
	strbuf_addch(&sb, 0);
	assert_int_equal(values_decode(sb.buf, sb.len, n, &q, &why), -1);
	assert_string_equal(why, "trailing bytes");
	values_profile_release(&p);
	values_profile_release(&q);
	strbuf_release(&sb);
	strbuf_release(&sb2);
}

static void values_rejects_bad_records(void **state)
{
	static const struct {
		const uint8_t b[16];
		size_t len;
		const char *why;
	} bad[] = {
		{ { 0x10, 0, 0, 0 }, 4, "record without samples" },
		{ { 0x10, 1, 0x80, 0x80, 0x10, 0 }, 6, "bad register mask" },
		{ { 0x10, 1, 1, 0, 1, 0, 1, 0 }, 8, "bad hot list threshold" },
		{ { 0x10, 1, 1, 1, 0, 0 }, 6, "empty exact hot list" },
		{ { 0x10, 1, 1, 1, 1, 2, 2, 0 }, 8, "bad hot list count" },
		{ { 0x10, 2, 1, 1, 2, 2, 1, 0, 1, 0 }, 10, "value twice in a hot list" },
		{ { 0x10, 1, 0, 2, 0, 0 }, 6, "bad pair sums" },
	};
	struct values_profile q = VALUES_PROFILE_INIT;
	const char *why;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!strcmp(bad[i].why, "bad pair sums")) {
			/* pairs 2, dt 0, mask rax, npos 3 > pairs */
			static const uint8_t b[] = { 0x10, 1, 0, 2, 0, 1, 3, 1, 1, 1, 0, 0, 0, 0 };

			assert_int_equal(values_decode(b, sizeof(b), 1, &q, &why), -1);
		} else {
			assert_int_equal(values_decode(bad[i].b, bad[i].len, 1, &q, &why), -1);
		}
		assert_string_equal(why, bad[i].why);
	}
	/* Offsets must increase. */
	{
		static const uint8_t b[] = { 0x10, 1, 0, 0, 0, 1, 0, 0 };

		assert_int_equal(values_decode(b, sizeof(b), 2, &q, &why), -1);
		assert_string_equal(why, "offsets not increasing");
	}
}

/* Merging two halves: samples add up, invariant values keep their share. */
static void values_merge_halves(void **state)
{
	struct values_profile a, b;
	struct hotlist_rng rng = HOTLIST_RNG_INIT(2);

	(void)state;
	make_values(&a, 10, 0x1000);
	make_values(&b, 10, 0x1140);  /* five offsets shared */
	values_merge(&a, &b, &rng);
	assert_int_equal(a.n, 15);
	for (size_t i = 0; i < a.n; i++) {
		const struct hotlist *h = list_of(&a, i, VREG_RBX);

		if (i)
			assert_true(a.v[i].offset > a.v[i - 1].offset);
		assert_true(h->e[0].value == 0x5eed5eed);
		assert_true(hotlist_estimate(h, 0) == (double)a.v[i].samples);
	}
	values_profile_release(&a);
	values_profile_release(&b);
}

static void db_values_files(void **state)
{
	char *path, *file;
	struct db *db = new_db(&path);
	struct values_profile p, q = VALUES_PROFILE_INIT;
	uint32_t seq = new_epoch(db, NULL);
	FILE *f;

	(void)state;
	make_values(&p, 8, 0x1000);
	assert_int_equal(db_values_load(db, seq, "cafe", &q), 1);
	assert_int_equal(db_values_merge(db, seq, "cafe", &p), 0);
	assert_int_equal(db_values_merge(db, seq, "cafe", &p), 0);
	assert_int_equal(db_values_load(db, seq, "cafe", &q), 0);
	assert_int_equal(q.n, 8);
	assert_true(q.v[0].samples == 2 * p.v[0].samples);
	assert_true(q.v[7].pairs && q.v[7].pairs->n == 10 && !q.v[6].pairs);
	/* A sound container around a payload the decoder refuses: reported, then set aside. */
	{
		struct strbuf sb = STRBUF_INIT;

		values_encode(&p, &sb);
		sb.buf[1] = 0;  /* the first record's sample count */
		assert_int_equal(db_blob_store(db, seq, "cafe.values", VALUES_MAGIC, VALUES_VERSION, 0,
					       (uint32_t)p.n, sb.buf, sb.len), 0);
		strbuf_release(&sb);
	}
	reported = 0;
	assert_int_equal(db_values_load(db, seq, "cafe", &q), -1);
	assert_int_equal(reported, 1);
	assert_int_equal(db_values_merge(db, seq, "cafe", &p), 0);
	assert_int_equal(db_values_load(db, seq, "cafe", &q), 0);
	assert_true(q.v[0].samples == p.v[0].samples);
	file = xasprintf("%s/000001/cafe.values.corrupt", path);
	assert_int_equal(access(file, F_OK), 0);
	free(file);
	/* A truncated file: the container refuses it. */
	file = xasprintf("%s/000001/cafe.values", path);
	f = fopen(file, "r+");
	assert_non_null(f);
	assert_int_equal(ftruncate(fileno(f), 40), 0);
	fclose(f);
	free(file);
	reported = 0;
	assert_int_equal(db_values_load(db, seq, "cafe", &q), -1);
	assert_int_equal(reported, 1);
	values_profile_release(&p);
	values_profile_release(&q);
	db_close(db);
	free(path);
}

/* ---- burst traces ------------------------------------------------------------------- */

/* n traces of 1..40 steps through two images, registers changing a little each step. */
static void make_bursts(struct burst_set *s, size_t n, uint32_t tid)
{
	burst_set_init(s);
	for (size_t i = 0; i < n; i++) {
		struct burst_trace *t = burst_set_add(s, tid + (uint32_t)i);

		for (size_t k = 0; k < 1 + (i * 7) % 40; k++) {
			struct burst_step st;

			memset(&st, 0, sizeof(st));
			st.image = burst_set_key(s, k % 5 ? "cafe" : "beef");
			st.offset = 0x1000 + 4 * k;
			st.regs[VREG_RAX] = k;
			st.regs[VREG_RSP] = 0x7ffc00001000ull;
			st.regs[VREG_RDI] = 0x5555000000ull + 8 * k * i;
			burst_trace_push(t, &st);
		}
		if (i == 2)
			t->steps[0].image = BURSTS_NO_IMAGE;
	}
	s->seen = n;
}

static void bursts_round_trip_and_damage(void **state)
{
	struct burst_set s, q, m;
	struct strbuf sb = STRBUF_INIT, sb2 = STRBUF_INIT;
	struct hotlist_rng rng = HOTLIST_RNG_INIT(1);
	const char *why;
	uint32_t n;

	(void)state;
	make_bursts(&s, 12, 100);
	burst_set_init(&q);
	burst_set_init(&m);
	n = bursts_encode(&s, &sb);
	assert_int_equal(n, 12);
	assert_int_equal(bursts_decode(sb.buf, sb.len, n, &q, &why), 0);
	assert_int_equal(q.n, 12);
	assert_int_equal(q.n_keys, 2);
	for (size_t i = 0; i < q.n; i++) {
		assert_int_equal(q.v[i].n, s.v[i].n);
		assert_memory_equal(q.v[i].steps, s.v[i].steps, s.v[i].n * sizeof(*s.v[i].steps));
	}
	bursts_encode(&q, &sb2);
	assert_int_equal(sb2.len, sb.len);
	assert_memory_equal(sb2.buf, sb.buf, sb.len);
	for (size_t len = 0; len < sb.len; len++)
		assert_int_equal(bursts_decode(sb.buf, len, n, &q, &why), -1);
	assert_int_equal(bursts_decode(sb.buf, sb.len, n + 1, &q, &why), -1);
	/* More traces than were taken. */
	s.seen = 3;
	strbuf_reset(&sb);
	n = bursts_encode(&s, &sb);
	assert_int_equal(bursts_decode(sb.buf, sb.len, n, &q, &why), -1);
	assert_string_equal(why, "more bursts than taken");
	/* Merging resamples to the bound and adds up what was taken. */
	s.seen = 12;
	burst_set_merge(&m, &s, 5, &rng);
	burst_set_merge(&m, &s, 5, &rng);
	assert_int_equal(m.n, 5);
	assert_true(m.seen == 24);
	assert_int_equal(m.n_keys, 2);
	burst_set_release(&s);
	burst_set_release(&q);
	burst_set_release(&m);
	strbuf_release(&sb);
	strbuf_release(&sb2);
}

static void db_bursts_files(void **state)
{
	char *path;
	struct db *db = new_db(&path);
	struct burst_set s, q;
	uint32_t seq = new_epoch(db, NULL);

	(void)state;
	make_bursts(&s, 4, 7);
	burst_set_init(&q);
	assert_int_equal(db_bursts_load(db, seq, &q), 1);
	assert_int_equal(db_bursts_merge(db, seq, &s), 0);
	assert_int_equal(db_bursts_merge(db, seq, &s), 0);
	assert_int_equal(db_bursts_load(db, seq, &q), 0);
	assert_int_equal(q.n, 8);
	assert_true(q.seen == 8);
	burst_set_release(&s);
	burst_set_release(&q);
	db_close(db);
	free(path);
}

/* ---- path profiles ------------------------------------------------------------------- */

/* A profile with every kind of record, some of them repeated. */
static void make_paths(struct paths_profile *p, uint64_t base, unsigned windows)
{
	struct hotlist_rng rng = HOTLIST_RNG_INIT(3);

	paths_profile_init(p);
	p->bursts = 3;
	p->insns = 3000;
	p->detailed = 300;
	for (unsigned rep = 0; rep < 2; rep++) {
		paths_add_block(p, base + 0x40, 17, 6, 100, 7);
		paths_add_block(p, base, 9, 3, 50, 0);
		paths_add_block(p, base, 12, 4, 1, 0);      /* the same start, cut elsewhere */
		paths_add_block(p, base + 0x80, 4, 1, 0, 3);
		paths_add_edge(p, base + 0x4c, base + 0x40, 90);
		paths_add_edge(p, base + 0x4c, base + 0x51, 10);
		paths_add_edge(p, base + 0x6, PATHS_ELSEWHERE, 1);
		paths_add_conflict(p, base + 0x44, base + 0x40, PATHS_STORE_FORWARD, 25);
		paths_add_conflict(p, base + 0x44, base + 0x1040, PATHS_ALIAS_4K, 2);
		paths_add_stop(p, base + 0x80, PATHS_END_UNSUPPORTED, 2);
		paths_add_stop(p, base + 0x40, PATHS_END_LIMIT, 1);
	}
	for (unsigned i = 0; i < 3; i++) {
		struct values_rec *r = values_profile_add(&p->values, base + 0x44 + 4 * (2 - i));
		uint64_t regs[VALUES_NREGS] = { 0 };

		for (uint64_t k = 0; k < 10; k++) {
			regs[VREG_RCX] = k < 9 ? 0x5eed : k;
			values_rec_sample(r, regs, 1u << VREG_RCX, &rng);
		}
	}
	for (unsigned i = 0; i < windows; i++) {
		struct paths_window w = { base + 0x44, i % 2 ? PATHS_ELSEWHERE : base + 0x48,
					  1000 + i, 900 + i, 100000 };

		paths_add_window(p, &w, &rng);
	}
	paths_profile_normalize(p);
}

static void paths_normalize_round_trip_and_damage(void **state)
{
	struct paths_profile p, q;
	struct strbuf sb = STRBUF_INIT, sb2 = STRBUF_INIT;
	const char *why;
	uint32_t n;

	(void)state;
	make_paths(&p, 0x1000, 5);
	/* Repeats were added up, lists sorted by key. */
	assert_int_equal(p.n_blocks, 4);
	assert_true(p.blocks[0].offset == 0x1000 && p.blocks[0].bytes == 9 && p.blocks[0].count == 100);
	assert_true(p.blocks[1].offset == 0x1000 && p.blocks[1].bytes == 12);
	assert_true(p.blocks[2].count == 200 && p.blocks[2].wcount == 14);
	assert_int_equal(p.n_edges, 3);
	assert_true(p.edges[0].to == PATHS_ELSEWHERE && p.edges[1].to == 0x1040 &&
		    p.edges[1].count == 180);
	assert_int_equal(p.n_conflicts, 2);
	assert_true(p.conflicts[0].kind == PATHS_STORE_FORWARD && p.conflicts[0].count == 50);
	assert_int_equal(p.n_stops, 2);
	assert_true(p.stops[0].offset == 0x1040 && p.stops[1].reason == PATHS_END_UNSUPPORTED);
	assert_true(p.values.v[0].offset == 0x1044 && p.windows == 5 && p.n_win == 5);
	/* Lookups. */
	assert_int_equal(paths_blocks_lower_bound(&p, 0x1001), 2);
	assert_int_equal(paths_edges_lower_bound(&p, 0x104c), 1);
	assert_int_equal(paths_conflicts_lower_bound(&p, 0x1045), 2);
	assert_int_equal(paths_stops_lower_bound(&p, 0), 0);
	/* Round trip. */
	n = paths_encode(&p, &sb);
	assert_int_equal(n, 4);
	paths_profile_init(&q);
	assert_int_equal(paths_decode(sb.buf, sb.len, n, &q, &why), 0);
	assert_int_equal(q.n_blocks, 4);
	assert_true(q.edges[0].to == PATHS_ELSEWHERE && q.win[1].b2 == PATHS_ELSEWHERE);
	paths_encode(&q, &sb2);
	assert_int_equal(sb2.len, sb.len);
	assert_memory_equal(sb2.buf, sb.buf, sb.len);
	/* Every truncation is refused; so is a wrong count and a trailing byte. */
	for (size_t len = 0; len < sb.len; len++)
		assert_int_equal(paths_decode(sb.buf, len, n, &q, &why), -1);
	assert_int_equal(q.n_blocks, 0);
	assert_int_equal(paths_decode(sb.buf, sb.len, n + 1, &q, &why), -1);
	assert_string_equal(why, "block count differs from the header's");
	strbuf_addch(&sb, 0);
	assert_int_equal(paths_decode(sb.buf, sb.len, n, &q, &why), -1);
	assert_string_equal(why, "trailing bytes");
	/* More in detail than followed. */
	strbuf_reset(&sb);
	p.detailed = p.insns + 1;
	paths_encode(&p, &sb);
	assert_int_equal(paths_decode(sb.buf, sb.len, n, &q, &why), -1);
	assert_string_equal(why, "more instructions in detail than followed");
	paths_profile_release(&p);
	paths_profile_release(&q);
	strbuf_release(&sb);
	strbuf_release(&sb2);
}

static void paths_rejects_bad_records(void **state)
{
	static const struct {
		uint8_t b[24];
		size_t len;
		uint32_t count;
		const char *why;
	} bad[] = {
		/* header; 1 block: offset, bytes, insns, count, wcount */
		{ { 0, 0, 0, 1, 0x10, 0, 1, 1, 0 }, 9, 1, "bad block size" },
		{ { 0, 0, 0, 1, 0x10, 2, 3, 1, 0 }, 9, 1, "bad block size" },
		{ { 0, 0, 0, 1, 0x10, 2, 1, 0, 0 }, 9, 1, "block never executed" },
		{ { 0, 0, 0, 2, 0x10, 2, 1, 1, 0, 0, 2, 1, 1, 0 }, 14, 2, "blocks not in order" },
		/* no blocks; 1 edge never taken */
		{ { 0, 0, 0, 0, 1, 0x10, 0, 0 }, 8, 0, "edge never taken" },
		/* no blocks, edges; a conflict of kind 2 */
		{ { 0, 0, 0, 0, 0, 1, 0x10, 0, 2, 1 }, 10, 0, "bad conflict" },
		/* a stop for reason 6 */
		{ { 0, 0, 0, 0, 0, 0, 1, 0x10, 6, 1 }, 10, 0, "bad stop" },
		/* 1 window matched, 2 kept */
		{ { 0, 0, 0, 0, 0, 0, 0, 1, 5, 2, 1, 0, 5, 1, 0, 1, 0, 5, 1, 0 }, 20, 0,
		  "more windows kept than allowed or matched" },
		/* a window with more here than in all */
		{ { 0, 0, 0, 0, 0, 0, 0, 1, 5, 1, 1, 0, 5, 6, 0 }, 15, 0, "bad window" },
		/* a window kept with more instructions than all matched */
		{ { 0, 0, 0, 0, 0, 0, 0, 1, 4, 1, 1, 0, 5, 1, 0, 0, 0 }, 17, 0,
		  "windows kept hold more instructions than all" },
	};
	struct paths_profile q;
	const char *why;

	(void)state;
	paths_profile_init(&q);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(paths_decode(bad[i].b, bad[i].len, bad[i].count, &q, &why), -1);
		assert_string_equal(why, bad[i].why);
	}
}

/* Merging: counts add up; windows stay a bounded sample, their totals exact. */
static void paths_merge_bounds_windows(void **state)
{
	struct paths_profile a, b;
	struct hotlist_rng rng = HOTLIST_RNG_INIT(9);
	uint64_t insns;

	(void)state;
	make_paths(&a, 0x1000, PATHS_KEEP_WINDOWS + 100);
	make_paths(&b, 0x1000, 3 * PATHS_KEEP_WINDOWS);
	assert_true(a.n_win == PATHS_KEEP_WINDOWS && a.windows == PATHS_KEEP_WINDOWS + 100);
	insns = a.window_insns + b.window_insns;
	paths_merge(&a, &b, &rng);
	assert_int_equal(a.n_win, PATHS_KEEP_WINDOWS);
	assert_true(a.windows == 4 * PATHS_KEEP_WINDOWS + 100 && a.window_insns == insns);
	assert_true(a.bursts == 6 && a.insns == 6000);
	assert_int_equal(a.n_blocks, 4);
	assert_true(a.blocks[2].count == 400);
	assert_int_equal(a.values.n, 3);
	assert_true(a.values.v[0].samples == 20 && a.values.v[0].h[VREG_RCX].e[0].count == 18);
	paths_merge(&a, &b, &rng);  /* again: still normalized and bounded */
	assert_int_equal(a.n_edges, 3);
	assert_int_equal(a.n_win, PATHS_KEEP_WINDOWS);
	paths_profile_release(&a);
	paths_profile_release(&b);
}

static void db_paths_files_and_summary(void **state)
{
	char *path, *file;
	struct db *db = new_db(&path);
	struct paths_profile p, q;
	struct paths_summary s, t;
	struct epoch_meta m;
	uint32_t seq = new_epoch(db, NULL);

	(void)state;
	make_paths(&p, 0x2000, 2);
	paths_profile_init(&q);
	assert_int_equal(db_paths_load(db, seq, "cafe", &q), 1);
	assert_int_equal(db_paths_merge(db, seq, "cafe", &p), 0);
	assert_int_equal(db_paths_merge(db, seq, "cafe", &p), 0);
	assert_int_equal(db_paths_load(db, seq, "cafe", &q), 0);
	assert_true(q.blocks[0].count == 200 && q.windows == 4 && q.n_win == 4);
	/* A payload the decoder refuses: reported, then set aside by the next writer. */
	{
		struct strbuf sb = STRBUF_INIT;

		paths_encode(&p, &sb);
		assert_int_equal(db_blob_store(db, seq, "cafe.paths", PATHS_MAGIC, PATHS_VERSION, 0,
					       (uint32_t)p.n_blocks + 1, sb.buf, sb.len), 0);
		strbuf_release(&sb);
	}
	reported = 0;
	assert_int_equal(db_paths_load(db, seq, "cafe", &q), -1);
	assert_int_equal(reported, 1);
	assert_int_equal(db_paths_merge(db, seq, "cafe", &p), 0);
	assert_int_equal(db_paths_load(db, seq, "cafe", &q), 0);
	assert_true(q.blocks[0].count == 100);
	file = xasprintf("%s/000001/cafe.paths.corrupt", path);
	assert_int_equal(access(file, F_OK), 0);
	free(file);
	/* The epoch's totals go through the meta's counters. */
	memset(&s, 0, sizeof(s));
	s.bursts = 7, s.insns = 70000, s.ends[PATHS_END_UNSUPPORTED] = 2, s.lost = 1;
	s.windows = 3, s.window_insns = 3e6, s.misses[PATHS_MISS_NO_MATCH] = 4;
	epoch_meta_init(&m);
	paths_summary_to_meta(&s, &m);
	assert_true(epoch_meta_counter(&m, "paths_end_unsupported") == 2);
	assert_true(epoch_meta_counter(&m, "paths_miss_no_match") == 4);
	paths_summary_add(&s, &s);
	paths_summary_to_meta(&s, &m);
	paths_summary_from_meta(&m, &t);
	assert_memory_equal(&s, &t, sizeof(s));
	assert_string_equal(paths_end_name(PATHS_END_SYSCALL), "syscall");
	assert_string_equal(paths_miss_name(PATHS_MISS_SAMPLES), "samples");
	assert_null(paths_end_name(PATHS_END__COUNT));
	epoch_meta_release(&m);
	paths_profile_release(&p);
	paths_profile_release(&q);
	db_close(db);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(profile_normalize_and_merge),
		cmocka_unit_test(profile_encode_round_trip),
		cmocka_unit_test(profile_is_compact),
		cmocka_unit_test(profile_rejects_every_truncation_and_flip),
		cmocka_unit_test(textrec_round_trip_and_damage),
		cmocka_unit_test(meta_round_trip),
		cmocka_unit_test(labels),
		cmocka_unit_test(image_index_hostile_paths),
		cmocka_unit_test(build_id_keys),
		cmocka_unit_test(db_epochs_and_resolution),
		cmocka_unit_test(db_current_is_the_newest_epoch),
		cmocka_unit_test(db_refuses_non_database),
		cmocka_unit_test(db_merge_add),
		cmocka_unit_test(db_corrupt_profile_is_reported_and_quarantined),
		cmocka_unit_test(db_fsync_failure_keeps_old_file),
		cmocka_unit_test(db_cleans_orphaned_temps),
		cmocka_unit_test(db_aux_files),
		cmocka_unit_test(db_symbol_files),
		cmocka_unit_test(blob_round_trip_and_damage),
		cmocka_unit_test(db_blob_files),
		cmocka_unit_test(values_round_trip_and_damage),
		cmocka_unit_test(values_rejects_bad_records),
		cmocka_unit_test(values_merge_halves),
		cmocka_unit_test(db_values_files),
		cmocka_unit_test(bursts_round_trip_and_damage),
		cmocka_unit_test(db_bursts_files),
		cmocka_unit_test(paths_normalize_round_trip_and_damage),
		cmocka_unit_test(paths_rejects_bad_records),
		cmocka_unit_test(paths_merge_bounds_windows),
		cmocka_unit_test(db_paths_files_and_summary),
	};

	set_report_routine(quiet);
	return cmocka_run_group_tests_name("db", tests, NULL, NULL);
}
