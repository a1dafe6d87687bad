/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the stopwatch: statistics, the DCPIWTCH payload (round trip,
 * damage refused), merging into an epoch and the call-count read API
 * (db/watch.h), and pairing entries with returns (watch/agg.h): nesting,
 * recursion, longjmp, exits, --between, counters virtualised per thread. */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/die.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "db/db.h"
#include "db/meta.h"
#include "db/watch.h"
#include "watch/agg.h"
#include "watch/plan.h"

static void quiet(enum report_level level, const char *msg)
{
	(void)level;
	(void)msg;
}

static void stats(void **state)
{
	struct watch_stat a = { 0 }, b = { 0 }, all = { 0 };

	(void)state;
	for (uint64_t v = 1; v <= 10; v++) {
		watch_stat_add(v <= 4 ? &a : &b, v * 100);
		watch_stat_add(&all, v * 100);
	}
	watch_stat_combine(&a, &b);
	assert_int_equal(a.n, 10);
	assert_int_equal(a.min, 100);
	assert_int_equal(a.max, 1000);
	assert_true(fabs(a.mean - 550) < 1e-9);
	assert_true(fabs(a.m2 - all.m2) < 1e-6);
	assert_true(fabs(watch_stat_stddev(&a) - sqrt(82500)) < 1e-6);
	assert_int_equal(watch_hist_bucket(0), 0);
	assert_int_equal(watch_hist_bucket(1), 0);
	assert_int_equal(watch_hist_bucket(2), 1);
	assert_int_equal(watch_hist_bucket(1023), 9);
	assert_int_equal(watch_hist_bucket(1024), 10);
	assert_int_equal(watch_hist_bucket(UINT64_MAX), 63);
}

static void make_rec(struct watch_rec *r, const char *key, uint64_t off, uint32_t tid,
		     uint64_t calls)
{
	memset(r, 0, sizeof(*r));
	r->kind = WATCH_FUNC;
	strcpy(r->key, key);
	r->offset = off;
	r->pid = 100;
	r->tid = tid;
	r->name = (char *)"f";
	r->path = (char *)"/bin/x";
	r->comm = (char *)"x";
	r->calls = calls;
	r->open = calls > 2;
	r->nevents = 1;
	strcpy(r->ev[0].name, "page-faults");
	for (uint64_t i = 0; i < calls - r->open; i++) {
		watch_stat_add(&r->wall, 1000 + i);
		watch_stat_add(&r->cpu, 900 + i);
		r->hist[watch_hist_bucket(1000 + i)]++;
		watch_stat_add(&r->ev[0].st, i % 3);
	}
}

static void codec(void **state)
{
	struct watch_set s = WATCH_SET_INIT, back = WATCH_SET_INIT;
	struct watch_rec r;
	struct strbuf sb = STRBUF_INIT, again = STRBUF_INIT;
	const char *why;
	size_t bad = 0;

	(void)state;
	make_rec(&r, "abcd", 0x1130, 7, 5);
	watch_set_add(&s, &r);
	make_rec(&r, "abcd", 0x1130, 8, 2);
	watch_set_add(&s, &r);
	make_rec(&r, "abcd", 0x2000, 7, 0);
	watch_set_add(&s, &r);
	watch_encode(&s, &sb);
	assert_int_equal(watch_decode(sb.buf, sb.len, 3, &back, &why), 0);
	watch_encode(&back, &again);
	assert_int_equal(sb.len, again.len);
	assert_memory_equal(sb.buf, again.buf, sb.len);
	assert_int_equal(back.v[0].calls, 5);
	assert_string_equal(back.v[0].ev[0].name, "page-faults");
	/* Every truncation and most bit flips are refused, none crashes. */
	for (size_t len = 0; len < sb.len; len++) {
		struct watch_set t = WATCH_SET_INIT;

		assert_int_equal(watch_decode(sb.buf, len, 3, &t, &why), -1);
		watch_set_release(&t);
	}
	for (size_t i = 0; i < sb.len * 8; i++) {
		struct watch_set t = WATCH_SET_INIT;

		sb.buf[i / 8] ^= (char)(1 << (i % 8));
		bad += watch_decode(sb.buf, sb.len, 3, &t, &why) != 0;
		sb.buf[i / 8] ^= (char)(1 << (i % 8));
		watch_set_release(&t);
	}
	assert_true(bad > 0);
	strbuf_release(&sb);
	strbuf_release(&again);
	watch_set_release(&s);
	watch_set_release(&back);
}

static void database(void **state)
{
	char tmpl[] = "/tmp/dcpi-unit-XXXXXX", *dir = mkdtemp(tmpl), *path;
	struct watch_set s = WATCH_SET_INIT, got = WATCH_SET_INIT;
	struct epoch_meta m;
	struct watch_rec r;
	struct db *db;
	uint64_t calls;

	(void)state;
	assert_non_null(dir);
	path = xasprintf("%s/db", dir);
	db = db_open(path, DB_CREATE | DB_NOSYNC);
	assert_non_null(db);
	epoch_meta_init(&m);
	assert_int_equal(db_epoch_create(db, &m), 0);
	assert_int_equal(watch_calls_load(db, m.seq, "abcd", 0x1130, &calls), 1);
	make_rec(&r, "abcd", 0x1130, 7, 5);
	watch_set_add(&s, &r);
	make_rec(&r, "abcd", 0x2000, 7, 0);
	watch_set_add(&s, &r);
	assert_int_equal(db_watch_merge(db, m.seq, &s), 0);
	assert_int_equal(db_watch_merge(db, m.seq, &s), 0);
	/* Merged twice: the same keys combine. */
	assert_int_equal(db_watch_load(db, m.seq, &got), 0);
	assert_int_equal(got.n, 2);
	assert_int_equal(got.v[0].calls, 10);
	assert_int_equal(got.v[0].wall.n, 8);
	assert_int_equal(watch_calls_load(db, m.seq, "abcd", 0x1130, &calls), 0);
	assert_int_equal(calls, 10);
	/* Watched and never called: 0, not "not measured". */
	assert_int_equal(watch_calls_load(db, m.seq, "abcd", 0x2000, &calls), 0);
	assert_int_equal(calls, 0);
	assert_int_equal(watch_calls_load(db, m.seq, "abcd", 0x3000, &calls), 1);
	epoch_meta_release(&m);
	db_close(db);
	free(path);
	watch_set_release(&s);
	watch_set_release(&got);
}

/* ---- pairing ---------------------------------------------------------------- */

/* Two functions f (0) and g (1) by uretprobe, h (2) by exits, --between (3). */
static void test_plan(struct watch_plan *p)
{
	static struct watch_target t[4];
	static struct watch_point pt[8] = {
		{ 0, WP_ENTRY, NULL, 0, 0, false }, { 0, WP_RETURN, NULL, 0, 0, false },
		{ 1, WP_ENTRY, NULL, 0, 0, false }, { 1, WP_RETURN, NULL, 0, 0, false },
		{ 2, WP_ENTRY, NULL, 0, 0, false }, { 2, WP_EXIT, NULL, 0, 0, false },
		{ 3, WP_FROM, NULL, 0, 0, false },  { 3, WP_TO, NULL, 0, 0, false },
	};
	static const char *names[4] = { "f", "g", "h", "a..b" };

	memset(p, 0, sizeof(*p));
	memset(t, 0, sizeof(t));
	for (int i = 0; i < 4; i++) {
		t[i].kind = i == 3 ? WATCH_BETWEEN : WATCH_FUNC;
		t[i].name = t[i].spec = t[i].path = (char *)names[i];
		strcpy(t[i].key, "k");
		t[i].offset = 0x100 * (unsigned)(i + 1);
		t[i].ret = i == 2 ? WATCH_RET_EXITS : WATCH_RET_URETPROBE;
		if (i == 3) {
			strcpy(t[i].key_b, "k");
			t[i].offset_b = 0x999;
		}
	}
	p->t = t;
	p->nt = 4;
	p->p = pt;
	p->np = 8;
}

static struct watch_sample smp(uint64_t time, uint32_t tid, uint32_t cpu, int point, uint64_t sp,
			       uint64_t cpu_ns)
{
	struct watch_sample s;

	memset(&s, 0, sizeof(s));
	s.time = time;
	s.pid = 1;
	s.tid = tid;
	s.cpu = cpu;
	s.point = point;
	s.sp = sp;
	s.vals[0] = cpu_ns;
	return s;
}

static const struct watch_rec *find(const struct watch_set *s, const char *name, uint32_t tid)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].name, name) && s->v[i].tid == tid)
			return &s->v[i];
	return NULL;
}

static void feed(struct watch_agg *a, const struct watch_sample *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		watch_agg_sample(a, &v[i]);
}

static void pairing(void **state)
{
	struct watch_plan plan;
	struct watch_agg_opts o = { &plan, 1, NULL, false, NULL, NULL };
	struct watch_set out = WATCH_SET_INIT;
	struct watch_agg *a;
	const struct watch_rec *r;

	(void)state;
	test_plan(&plan);
	a = watch_agg_new(&o);
	const struct watch_sample v[] = {
		/* f calls g, which recurses once: returns are 8 above the entry's sp */
		smp(1000, 5, 0, 0, 0x8000, 0),
		smp(1100, 5, 0, 2, 0x7f00, 50),
		smp(1200, 5, 1, 2, 0x7e00, 100),   /* migrated to CPU 1: its counter there starts at 0 */
		smp(1300, 5, 1, 3, 0x7e08, 150),
		smp(1500, 5, 1, 3, 0x7f08, 350),
		smp(2000, 5, 1, 1, 0x8008, 600),
		/* h by exits: the exit's sp is the entry's; a longjmp leaves g and f open */
		smp(3000, 5, 1, 0, 0x8000, 700),
		smp(3100, 5, 1, 2, 0x7f00, 700),
		smp(3200, 5, 1, 4, 0x8100, 800),   /* h entered above both: they were unwound */
		smp(3300, 5, 1, 5, 0x8100, 850),
		/* between: a, a again (restart), b */
		smp(4000, 6, 0, 6, 0x9000, 0),
		smp(4100, 6, 0, 6, 0x9000, 10),
		smp(4500, 6, 0, 7, 0x9000, 90),
		/* a thread that ends inside f */
		smp(5000, 7, 0, 0, 0x6000, 0),
		/* an exit never entered (probes began inside h) */
		smp(6000, 8, 0, 5, 0x5000, 0),
	};
	feed(a, v, sizeof(v) / sizeof(v[0]));
	watch_agg_exit(a, 1, 7, 5500);
	watch_agg_finish(a, 10000, &out);
	assert_non_null(r = find(&out, "f", 5));
	assert_int_equal(r->calls, 2);
	assert_int_equal(r->wall.n, 1);
	assert_int_equal(r->wall.min, 1000);
	/* on-CPU: CPU 0 reached 50 before the migration, CPU 1 600: 650 */
	assert_int_equal(r->cpu.min, 650);
	assert_int_equal(r->unwound, 1);
	assert_non_null(r = find(&out, "g", 5));
	assert_int_equal(r->calls, 3);
	assert_int_equal(r->wall.n, 2);
	assert_int_equal(r->wall.min, 100);
	assert_int_equal(r->wall.max, 400);
	assert_int_equal(r->unwound, 1);
	assert_non_null(r = find(&out, "h", 5));
	assert_int_equal(r->calls, 1);
	assert_int_equal(r->wall.n, 1);
	assert_int_equal(r->wall.min, 100);
	assert_non_null(r = find(&out, "a..b", 6));
	assert_int_equal(r->calls, 2);
	assert_int_equal(r->unwound, 1);
	assert_int_equal(r->wall.min, 400);
	assert_int_equal(r->cpu.min, 80);
	assert_non_null(r = find(&out, "f", 7));
	assert_int_equal(r->calls, 1);
	assert_int_equal(r->open, 1);
	watch_set_release(&out);
	watch_agg_free(a);
}

/* System-wide, the counters are the CPU's: a thread's share is what it ran. */
static void system_wide_counters(void **state)
{
	struct watch_plan plan;
	struct watch_agg_opts o = { &plan, 1, NULL, true, NULL, NULL };
	struct watch_set out = WATCH_SET_INIT;
	struct watch_agg *a;
	const struct watch_rec *r;

	(void)state;
	test_plan(&plan);
	a = watch_agg_new(&o);
	const struct watch_sample v[] = {
		smp(1000, 5, 0, 0, 0x8000, 10000),   /* f enters on CPU 0 at its counter 10000 */
		smp(1100, 5, 0, -1, 0x7000, 10100),  /* switched out */
		smp(1500, 9, 0, -1, 0x7000, 10500),  /* another thread ran 400 */
		smp(2000, 5, 0, 1, 0x8008, 11000),   /* back: 500 more */
	};
	feed(a, v, sizeof(v) / sizeof(v[0]));
	watch_agg_finish(a, 10000, &out);
	assert_non_null(r = find(&out, "f", 5));
	assert_int_equal(r->cpu.min, 600);
	assert_int_equal(r->wall.min, 1000);
	/* g, h were never called: a record with 0 calls each */
	assert_non_null(r = find(&out, "g", 0));
	assert_int_equal(r->calls, 0);
	watch_set_release(&out);
	watch_agg_free(a);
}

/* The probes' cost is taken off each call, never below zero. */
static void bias(void **state)
{
	struct watch_plan plan;
	struct watch_bias b = { { { 300, 0 }, { 0, 0 } }, { { 200, 0 }, { 0, 0 } } };
	struct watch_agg_opts o = { &plan, 1, NULL, false, &b, NULL };
	struct watch_set out = WATCH_SET_INIT;
	struct watch_agg *a;
	const struct watch_rec *r;

	(void)state;
	test_plan(&plan);
	a = watch_agg_new(&o);
	const struct watch_sample v[] = {
		smp(1000, 5, 0, 0, 0x8000, 0),
		smp(2000, 5, 0, 1, 0x8008, 900),
		smp(3000, 5, 0, 0, 0x8000, 900),
		smp(3100, 5, 0, 1, 0x8008, 950),
	};
	feed(a, v, sizeof(v) / sizeof(v[0]));
	watch_agg_finish(a, 10000, &out);
	assert_non_null(r = find(&out, "f", 5));
	assert_int_equal(r->wall.max, 700);
	assert_int_equal(r->cpu.max, 700);
	assert_int_equal(r->wall.min, 0);
	assert_int_equal(r->hist[0], 1);
	watch_set_release(&out);
	watch_agg_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stats),
		cmocka_unit_test(codec),
		cmocka_unit_test(database),
		cmocka_unit_test(pairing),
		cmocka_unit_test(system_wide_counters),
		cmocka_unit_test(bias),
	};

	set_report_routine(quiet);
	return cmocka_run_group_tests_name("watch", tests, NULL, NULL);
}
