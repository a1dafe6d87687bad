/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of collect/: the sample hash tables, the control protocol,
 * the perf record parser, time ordering, address spaces, the kallsyms
 * subset, and the whole sample path fed with synthetic perf records (an
 * offline collector writing a real database).
 */
#include "config.h"
#include "collect/calib.h"
#include "collect/callchain.h"
#include "collect/collector-int.h"
#include "collect/collector.h"
#include "collect/ctl.h"
#include "collect/emdip.h"
#include "collect/emtrail.h"
#include "collect/kallsyms.h"
#include "collect/order.h"
#include "collect/perfrec.h"
#include "collect/procs.h"
#include "collect/shash.h"
#include "collect/snapshot.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "db/db.h"
#include "db/fsio.h"
#include "db/meta.h"
#include "db/textrec.h"
#include "db/values.h"
#include "unwind/utable.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

/* ---- sample hash ------------------------------------------------------------ */

/* Collects what a table hands on, in order (the first 64 entries). */
struct sink {
	uint64_t total;
	size_t batches, entries;
	struct shash_entry last[64];
	size_t nlast;
};

static void sink_consume(void *ctx, const struct shash_entry *v, size_t n)
{
	struct sink *s = ctx;

	s->batches++;
	s->entries += n;
	for (size_t i = 0; i < n; i++) {
		s->total += v[i].count;
		if (s->nlast < 64)
			s->last[s->nlast++] = v[i];
	}
}

static void test_shash_key_packing(void **state)
{
	uint64_t user = 0x00007f1234567890ull, kern = 0xffffffff81000123ull;
	uint64_t k1 = shash_key(5, 4321, user), k2 = shash_key(7, 0, kern);

	(void)state;
	assert_true(shash_pc_packable(user));
	assert_true(shash_pc_packable(kern));
	assert_false(shash_pc_packable(0x0100000000000000ull));
	assert_int_equal(shash_key_event(k1), 5);
	assert_int_equal(shash_key_slot(k1), 4321);
	assert_true(shash_key_pc(k1) == user);
	assert_int_equal(shash_key_event(k2), 7);
	assert_int_equal(shash_key_slot(k2), 0);
	assert_true(shash_key_pc(k2) == kern);
}

/* One bucket: every key lands in it, so the policies show directly. */
static void test_shash_rr4_round_robin(void **state)
{
	struct shash h;
	struct sink s = { 0 };

	(void)state;
	shash_init(&h, SHASH_RR4, 64, 2, sink_consume, &s);
	assert_int_equal(h.nbuckets, 1);
	for (uint64_t k = 1; k <= 4; k++)
		shash_count(&h, k);
	shash_count(&h, 1);     /* hit */
	assert_int_equal(h.st.hits, 1);
	shash_count(&h, 5);     /* evicts entry 0 (key 1, count 2) */
	shash_count(&h, 6);     /* evicts entry 1 (key 2): the overflow buffer (2) is full */
	assert_int_equal(h.st.evictions, 2);
	shash_flush_overflow(&h);
	assert_int_equal(s.batches, 1);
	assert_true(s.last[0].key == 1 && s.last[0].count == 2);
	assert_true(s.last[1].key == 2 && s.last[1].count == 1);
	shash_drain(&h);
	assert_true(s.total == h.st.samples);
	assert_int_equal(shash_used(&h), 0);
	shash_release(&h);
}

static void test_shash_stf6_swap_to_front(void **state)
{
	struct shash h;
	struct sink s = { 0 };

	(void)state;
	shash_init(&h, SHASH_STF6, 64, 16, sink_consume, &s);
	for (uint64_t k = 1; k <= 6; k++)
		shash_count(&h, k);     /* line: 6 5 4 3 2 1 */
	shash_count(&h, 2);             /* hit, swapped to the front: 2 5 4 3 6 1 */
	shash_count(&h, 7);             /* inserted at the front, 1 evicted */
	assert_int_equal(h.st.evictions, 1);
	shash_count(&h, 8);             /* 6 evicted: the last entry */
	assert_int_equal(h.st.evictions, 2);
	shash_drain(&h);
	assert_true(s.total == h.st.samples);
	/* Evicted first: 1 then 6; then the table in line order: 8 7 2 5 4 3. */
	assert_true(s.last[0].key == 1);
	assert_true(s.last[1].key == 6);
	assert_true(s.last[2].key == 8);
	assert_true(s.last[4].key == 2 && s.last[4].count == 2);
	shash_release(&h);
}

static void test_shash_saturation(void **state)
{
	struct shash h;
	struct sink s = { 0 };

	(void)state;
	shash_init(&h, SHASH_STF6, 4096, 8, sink_consume, &s);
	for (int i = 0; i < 200000; i++)
		shash_count(&h, 42);
	assert_int_equal(h.st.saturations, 3);
	shash_drain(&h);
	assert_true(s.total == 200000);
	shash_release(&h);
}

/* Whatever the keys and sizes, every sample comes out exactly once. */
static void test_shash_conservation(void **state)
{
	uint64_t rng = 12345;

	(void)state;
	for (int kind = 0; kind < 2; kind++) {
		for (size_t bytes = 64; bytes <= 65536; bytes *= 8) {
			struct shash h;
			struct sink s = { 0 };

			shash_init(&h, (enum shash_kind)kind, bytes, 100, sink_consume, &s);
			for (int i = 0; i < 100000; i++) {
				rng ^= rng << 13;
				rng ^= rng >> 7;
				rng ^= rng << 17;
				/* Skewed keys: a few hot ones and a long tail. */
				shash_count(&h, rng % 8 ? rng % 64 : rng % 5000);
			}
			shash_drain(&h);
			assert_true(s.total == 100000);
			assert_true(h.st.hits + h.st.evictions <= h.st.samples);
			shash_release(&h);
		}
	}
}

/* ---- control protocol ----------------------------------------------------------- */

static int parse(const char *s, struct ctl_request *r)
{
	const char *why;

	return ctl_parse(s, strlen(s), r, &why);
}

static void test_ctl_parse(void **state)
{
	struct ctl_request r;
	char big[300], line[CTL_REQUEST_MAX + 1];

	(void)state;
	assert_int_equal(parse("status\n", &r), 0);
	assert_int_equal(r.verb, CTL_STATUS);
	assert_false(r.json);
	assert_int_equal(parse("status json\n", &r), 0);
	assert_true(r.json);
	assert_int_equal(parse("flush\n", &r), 0);
	assert_int_equal(r.verb, CTL_FLUSH);
	assert_int_equal(parse("quit\n", &r), 0);
	assert_int_equal(parse("epoch\n", &r), 0);
	assert_string_equal(r.label, "");
	assert_int_equal(parse("epoch after-fix\n", &r), 0);
	assert_string_equal(r.label, "after-fix");

	assert_int_equal(parse("status", &r), -1);          /* no newline */
	assert_int_equal(parse("status\n\n", &r), -1);
	assert_int_equal(parse("status  json\n", &r), -1);
	assert_int_equal(parse(" status\n", &r), -1);
	assert_int_equal(parse("status xml\n", &r), -1);
	assert_int_equal(parse("flush now\n", &r), -1);
	assert_int_equal(parse("reboot\n", &r), -1);
	assert_int_equal(parse("epoch 42\n", &r), -1);     /* numeric label */
	assert_int_equal(parse("epoch latest\n", &r), -1);
	assert_int_equal(parse("epoch a b\n", &r), -1);
	assert_int_equal(parse("epoch \x1b[2J\n", &r), -1);
	assert_int_equal(ctl_parse("status\0\n", 8, &r, &(const char *){ NULL }), -1);
	memset(big, 'a', sizeof(big));
	memcpy(big, "epoch ", 6);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(parse(big, &r), -1);

	memset(&r, 0, sizeof(r));
	r.verb = CTL_EPOCH;
	strcpy(r.label, "before");
	assert_true(ctl_format(&r, line, sizeof(line)) > 0);
	assert_string_equal(line, "epoch before\n");
	assert_int_equal(parse(line, &r), 0);
	assert_string_equal(r.label, "before");
}

/* ---- perf records ------------------------------------------------------------- */

struct rec {
	unsigned char b[512];
	size_t n;
};

static void put(struct rec *r, const void *p, size_t n)
{
	memcpy(r->b + r->n, p, n);
	r->n += n;
}

static void put32(struct rec *r, uint32_t v)
{
	put(r, &v, 4);
}

static void put64(struct rec *r, uint64_t v)
{
	put(r, &v, 8);
}

static void begin(struct rec *r, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { type, misc, 0 };

	r->n = 0;
	put(r, &h, sizeof(h));
}

static void put_str(struct rec *r, const char *s)
{
	size_t len = strlen(s) + 1, pad = (8 - len % 8) % 8;

	put(r, s, len);
	memset(r->b + r->n, 0, pad);
	r->n += pad;
}

static void finish(struct rec *r, uint32_t pid, uint64_t time, uint64_t id, bool trailer)
{
	struct perf_event_header h;

	if (trailer) {
		put32(r, pid);
		put32(r, pid);
		put64(r, time);
		put64(r, id);
	}
	memcpy(&h, r->b, sizeof(h));
	h.size = (uint16_t)r->n;
	memcpy(r->b, &h, sizeof(h));
}

static void mk_sample(struct rec *r, uint32_t pid, uint64_t ip, uint64_t time, uint64_t id,
		      bool kernel)
{
	begin(r, PERF_RECORD_SAMPLE, kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER);
	put64(r, id);
	put64(r, ip);
	put32(r, pid);
	put32(r, pid);
	put64(r, time);
	put64(r, 1000000);
	finish(r, pid, time, id, false);
}

/* A sample with user registers (--values): rax, rbx and rsp given, the rest 0. */
static void mk_sample_regs(struct rec *r, uint32_t tid, uint64_t ip, uint64_t time, uint64_t id,
			   bool kernel, uint64_t rax, uint64_t rbx)
{
	begin(r, PERF_RECORD_SAMPLE, kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER);
	put64(r, id);
	put64(r, ip);
	put32(r, 30);
	put32(r, tid);
	put64(r, time);
	put64(r, 1000000);
	put64(r, PERF_SAMPLE_REGS_ABI_64);
	/* ax bx cx dx si di bp sp flags r8..r15 */
	put64(r, rax);
	put64(r, rbx);
	for (int k = 2; k < 17; k++)
		put64(r, k == 7 ? 0x7ffc0000 : 0);
	finish(r, tid, time, id, false);
}

static void mk_mmap2(struct rec *r, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		     const char *path, const uint8_t *bid, unsigned bid_len, uint64_t time)
{
	unsigned char u[24] = { 0 };

	begin(r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | (bid ? PERF_RECORD_MISC_MMAP_BUILD_ID : 0));
	put32(r, pid);
	put32(r, pid);
	put64(r, start);
	put64(r, len);
	put64(r, pgoff);
	if (bid) {
		u[0] = (unsigned char)bid_len;
		memcpy(u + 4, bid, bid_len);
	} else {
		uint32_t maj = 8, min = 1;
		uint64_t ino = 4242;

		memcpy(u, &maj, 4);
		memcpy(u + 4, &min, 4);
		memcpy(u + 8, &ino, 8);
	}
	put(r, u, sizeof(u));
	put32(r, 5);    /* PROT_READ | PROT_EXEC */
	put32(r, 2);    /* MAP_PRIVATE */
	put_str(r, path);
	finish(r, pid, time, 1, true);
}

static void mk_comm(struct rec *r, uint32_t pid, const char *comm, bool exec, uint64_t time)
{
	begin(r, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
	put32(r, pid);
	put32(r, pid);
	put_str(r, comm);
	finish(r, pid, time, 1, true);
}

static void mk_task(struct rec *r, uint32_t type, uint32_t pid, uint32_t ppid, uint64_t time)
{
	begin(r, type, 0);
	put32(r, pid);
	put32(r, ppid);
	put32(r, pid);
	put32(r, ppid);
	put64(r, time);
	finish(r, pid, time, 1, true);
}

static void mk_lost(struct rec *r, uint64_t lost, uint64_t time)
{
	begin(r, PERF_RECORD_LOST, 0);
	put64(r, 1);
	put64(r, lost);
	finish(r, 0, time, 1, true);
}

static void mk_throttle(struct rec *r, uint64_t time)
{
	begin(r, PERF_RECORD_THROTTLE, 0);
	put64(r, time);
	put64(r, 1);
	put64(r, 1);
	finish(r, 0, time, 1, true);
}

static const uint8_t build_id[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
				      7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

static void test_perfrec_parse(void **state)
{
	struct perf_rec p;
	struct rec r;
	const char *why;

	(void)state;
	mk_sample(&r, 77, 0x401234, 1000, 9, false);
	assert_int_equal(perf_rec_parse(r.b, r.n, &p, &why), 0);
	assert_int_equal(p.kind, PERF_REC_SAMPLE);
	assert_int_equal(p.pid, 77);
	assert_true(p.u.sample.ip == 0x401234 && p.u.sample.user && !p.u.sample.kernel);
	assert_true(p.time == 1000 && p.id == 9);
	assert_true(perf_rec_time(r.b, r.n) == 1000);

	mk_mmap2(&r, 77, 0x400000, 0x2000, 0x1000, "/usr/bin/x", build_id, 20, 500);
	assert_int_equal(perf_rec_parse(r.b, r.n, &p, &why), 0);
	assert_int_equal(p.kind, PERF_REC_MMAP);
	assert_true(p.u.mmap.has_build_id && p.u.mmap.build_id_len == 20);
	assert_memory_equal(p.u.mmap.build_id, build_id, 20);
	assert_string_equal(p.u.mmap.filename, "/usr/bin/x");
	assert_true(p.time == 500 && perf_rec_time(r.b, r.n) == 500);
	assert_true(p.u.mmap.pgoff == 0x1000 && p.u.mmap.len == 0x2000);

	mk_mmap2(&r, 77, 0x400000, 0x2000, 0, "/lib/y.so", NULL, 0, 501);
	assert_int_equal(perf_rec_parse(r.b, r.n, &p, &why), 0);
	assert_true(p.u.mmap.has_inode && p.u.mmap.ino == 4242 && p.u.mmap.maj == 8);

	mk_comm(&r, 78, "worker", true, 600);
	assert_int_equal(perf_rec_parse(r.b, r.n, &p, &why), 0);
	assert_true(p.kind == PERF_REC_COMM && p.u.comm.exec);
	assert_string_equal(p.u.comm.comm, "worker");

	mk_task(&r, PERF_RECORD_FORK, 78, 77, 700);
	assert_int_equal(perf_rec_parse(r.b, r.n, &p, &why), 0);
	assert_true(p.kind == PERF_REC_FORK && p.u.task.pid == 78 && p.u.task.ppid == 77);

	mk_lost(&r, 33, 800);
	assert_int_equal(perf_rec_parse(r.b, r.n, &p, &why), 0);
	assert_true(p.kind == PERF_REC_LOST && p.u.lost.lost == 33);

	mk_throttle(&r, 900);
	assert_int_equal(perf_rec_parse(r.b, r.n, &p, &why), 0);
	assert_int_equal(p.kind, PERF_REC_THROTTLE);

	/* Every truncation of a valid record is refused, never read past. */
	mk_mmap2(&r, 77, 0x400000, 0x2000, 0, "/lib/y.so", NULL, 0, 501);
	for (size_t len = 0; len < r.n; len += 8) {
		struct perf_event_header h;
		unsigned char *copy = xmemdup(r.b, len ? len : 1);

		if (len >= sizeof(h)) {
			memcpy(&h, copy, sizeof(h));
			h.size = (uint16_t)len;
			memcpy(copy, &h, sizeof(h));
		}
		assert_int_equal(perf_rec_parse(copy, len, &p, &why), -1);
		free(copy);
	}
	/* A file name without its NUL. */
	memset(r.b + r.n - 24 - 16, 'x', 16);
	assert_int_equal(perf_rec_parse(r.b, r.n, &p, &why), -1);
}

/* ---- time order ------------------------------------------------------------------ */

static uint64_t seen[16];
static size_t nseen;

static void note(void *ctx, int cpu, const void *rec, size_t len)
{
	(void)ctx, (void)cpu;
	seen[nseen++] = perf_rec_time(rec, len);
}

static void test_order(void **state)
{
	struct order_queue q;
	struct rec r;
	uint64_t times[] = { 30, 10, 50, 20, 40 };

	(void)state;
	order_init(&q);
	for (size_t i = 0; i < 5; i++) {
		mk_sample(&r, 1, 0x1000, times[i], 1, false);
		order_push(&q, (int)(i % 2), times[i], r.b, r.n);
	}
	nseen = 0;
	assert_int_equal(order_flush(&q, 35, note, NULL), 3);
	assert_true(seen[0] == 10 && seen[1] == 20 && seen[2] == 30);
	mk_sample(&r, 1, 0x1000, 45, 1, false);
	order_push(&q, 0, 45, r.b, r.n);
	assert_int_equal(order_flush(&q, UINT64_MAX, note, NULL), 3);
	assert_true(seen[3] == 40 && seen[4] == 45 && seen[5] == 50);
	assert_true(q.late == 0);
	mk_sample(&r, 1, 0x1000, 5, 1, false);  /* older than what was handed on */
	order_push(&q, 0, 5, r.b, r.n);
	order_flush(&q, UINT64_MAX, note, NULL);
	assert_true(q.late == 1);
	order_release(&q);
}

/* ---- address spaces --------------------------------------------------------------- */

static void map(struct procs *p, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		const char *path)
{
	struct map_info mi;

	memset(&mi, 0, sizeof(mi));
	mi.start = start;
	mi.len = len;
	mi.pgoff = pgoff;
	mi.path = path;
	mi.has_inode = true;
	mi.dev = 1;
	mi.ino = strlen(path);
	procs_mmap(p, pid, &mi);
}

static const char *resolve(struct procs *p, uint32_t pid, uint64_t pc, uint64_t *off)
{
	uint32_t img;

	procs_resolve(p, procs_lookup(p, pid), pc, &img, off);
	return procs_cimage(p, img)->img.path;
}

static void test_procs_resolve(void **state)
{
	struct procs p;
	uint64_t off;

	(void)state;
	procs_init(&p);
	procs_exec(&p, 10, "a");
	map(&p, 10, 0x400000, 0x1000, 0x2000, "/bin/a");
	map(&p, 10, 0x7f0000000000, 0x10000, 0, "/lib/libc.so");
	map(&p, 10, 0x7fff0000, 0x2000, 0, "[vdso]");
	map(&p, 10, 0x10000000, 0x1000, 0, "//anon");
	assert_string_equal(resolve(&p, 10, 0x400123, &off), "/bin/a");
	assert_true(off == 0x2123);     /* pc - start + pgoff */
	assert_string_equal(resolve(&p, 10, 0x7f0000000042, &off), "/lib/libc.so");
	assert_true(off == 0x42);
	assert_string_equal(resolve(&p, 10, 0x7fff0010, &off), "[vdso]");
	assert_true(off == 0x10);       /* from the start of the mapping */
	assert_string_equal(resolve(&p, 10, 0x10000008, &off), "[anon:10] a");
	assert_true(off == 0x10000008); /* the address itself */
	assert_string_equal(resolve(&p, 10, 0x500000, &off), "[unknown]");
	assert_true(off == 0x500000);

	/* A child shares the mappings; its exec starts afresh. */
	procs_fork(&p, 11, 10);
	assert_string_equal(resolve(&p, 11, 0x400123, &off), "/bin/a");
	procs_exec(&p, 11, "b");
	map(&p, 11, 0x400000, 0x1000, 0, "/bin/b");
	assert_string_equal(resolve(&p, 11, 0x400123, &off), "/bin/b");
	assert_string_equal(resolve(&p, 10, 0x400123, &off), "/bin/a");
	procs_exit(&p, 11);
	assert_null(procs_lookup(&p, 11));
	procs_release(&p);
}

/* A replacing mmap copies a space the hash may still refer to. */
static void test_procs_copy_on_write(void **state)
{
	struct procs p;
	struct addr_space *old, *cur;
	uint32_t img;
	uint64_t off;
	unsigned slot;

	(void)state;
	procs_init(&p);
	procs_exec(&p, 20, "jit");
	map(&p, 20, 0x1000000, 0x10000, 0, "/lib/plugin-1.so");
	old = procs_lookup(&p, 20);
	slot = procs_slot(&p, old);
	assert_true(slot >= SLOT_FIRST);
	/* dlclose + dlopen of another library at the same place. */
	map(&p, 20, 0x1004000, 0x4000, 0, "/lib/plugin-2.so");
	cur = procs_lookup(&p, 20);
	assert_ptr_not_equal(cur, old);
	assert_int_equal(p.st.cow_copies, 1);
	/* Old samples (by slot) still resolve to the old library... */
	procs_resolve(&p, procs_slot_space(&p, slot), 0x1004100, &img, &off);
	assert_string_equal(procs_cimage(&p, img)->img.path, "/lib/plugin-1.so");
	assert_true(off == 0x4100);
	/* ...new ones to the new, and the rest of the old mapping is kept. */
	assert_string_equal(resolve(&p, 20, 0x1004100, &off), "/lib/plugin-2.so");
	assert_true(off == 0x100);
	assert_string_equal(resolve(&p, 20, 0x1009000, &off), "/lib/plugin-1.so");
	assert_true(off == 0x9000);
	assert_string_equal(resolve(&p, 20, 0x1002000, &off), "/lib/plugin-1.so");
	/* The retired space keeps its slot until the tables are drained. */
	assert_ptr_equal(procs_slot_space(&p, slot), old);
	procs_drained(&p);
	assert_null(procs_slot_space(&p, slot));
	procs_release(&p);
}

static void test_procs_slots_recycled(void **state)
{
	struct procs p;
	size_t free0;

	(void)state;
	procs_init(&p);
	free0 = p.n_free;
	for (uint32_t pid = 100; pid < 100 + 3 * SHASH_SLOTS; pid++) {
		procs_exec(&p, pid, "short");
		map(&p, pid, 0x400000, 0x1000, 0, "/bin/short");
		if (!procs_slot(&p, procs_lookup(&p, pid)))
			procs_drained(&p);  /* what the collector does when slots run low */
		procs_exit(&p, pid);
	}
	procs_drained(&p);
	assert_int_equal(p.n_free, free0);
	procs_release(&p);
}

/* ---- kallsyms subset ------------------------------------------------------------------ */

static int cmp_u64_test(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_kallsyms_subset(void **state)
{
	char path[] = "/tmp/dcpi-kallsyms-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	uint64_t addrs[] = { 0xffffffff81000010ull, 0xffffffff81000310ull };
	struct strbuf sb = STRBUF_INIT;
	struct kallsyms_range *r;
	size_t nr;

	(void)state;
	fputs("ffffffff81000000 T _text\n"
	      "ffffffff81000000 T startup_64\n"
	      "ffffffff81000100 t secondary\n"
	      "ffffffff81000200 d some_data\n"
	      "ffffffff81000300 T do_work\n"
	      "ffffffff81000400 T after_work\n"
	      "ffffffff81000500 T far_away\n"
	      "ffffffffc0000000 t mod_fn\t[mymod]\n", f);
	fclose(f);
	assert_int_equal(kallsyms_subset(path, addrs, 2, &sb, &r, &nr), 0);
	assert_string_equal(sb.buf, "ffffffff81000000 T _text\n"
				    "ffffffff81000000 T startup_64\n"
				    "ffffffff81000100 t secondary\n"
				    "ffffffff81000300 T do_work\n"
				    "ffffffff81000400 T after_work\n");
	/* The symbols named: [_text, secondary) and [do_work, after_work). */
	assert_int_equal(nr, 2);
	assert_true(kallsyms_covered(r, nr, 0xffffffff810000ffull));
	assert_false(kallsyms_covered(r, nr, 0xffffffff81000100ull));
	assert_true(kallsyms_covered(r, nr, 0xffffffff81000300ull));
	assert_false(kallsyms_covered(r, nr, 0xffffffff81000400ull));
	assert_false(kallsyms_covered(r, nr, 0xffffffff80000000ull));
	free(r);
	f = fopen(path, "w");
	fputs("0000000000000000 T _text\n0000000000000000 T other\n", f);
	fclose(f);
	strbuf_reset(&sb);
	assert_int_equal(kallsyms_subset(path, addrs, 2, &sb, NULL, NULL), 1);
	unlink(path);
	strbuf_release(&sb);
}

/* The name of addr among the lines of text (a subset or the whole file). */
static bool name_of(const char *text, uint64_t addr, uint64_t *start, uint64_t *end, bool *has_end)
{
	bool found = false;

	*has_end = false;
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		unsigned long long a;
		char type;

		if (sscanf(p, "%llx %c", &a, &type) == 2 && strchr("tTwW", type) && a <= addr &&
		    (!found || a > *start)) {
			*start = a;
			found = true;
		}
		p = nl ? nl + 1 : p + strlen(p);
	}
	for (const char *p = text; found && *p;) {
		const char *nl = strchr(p, '\n');
		unsigned long long a;
		char type;

		if (sscanf(p, "%llx %c", &a, &type) == 2 && strchr("tTwW", type) && a > *start &&
		    (!*has_end || a < *end)) {
			*end = a;
			*has_end = true;
		}
		p = nl ? nl + 1 : p + strlen(p);
	}
	return found;
}

/*
 * Random files: a sorted part, then (sometimes) an unsorted tail, aliases,
 * data symbols; the subset must name every address as the whole file does,
 * and its ranges must be exactly the named symbols'.
 */
static void test_kallsyms_random(void **state)
{
	char path[] = "/tmp/dcpi-kallsyms-XXXXXX";
	struct strbuf file = STRBUF_INIT, sb = STRBUF_INIT;

	(void)state;
	srandom(42);
	for (int round = 0; round < 200; round++) {
		int fd = (strcpy(path + strlen(path) - 6, "XXXXXX"), mkstemp(path));
		size_t nsorted = (size_t)(random() % 40), ntail = random() % 3 ? 0 : (size_t)(random() % 20);
		uint64_t a = 0xffffffff81000000ull, addrs[32];
		size_t naddrs = (size_t)(random() % 32);
		struct kallsyms_range *r;
		size_t nr;
		int ret;

		strbuf_reset(&file);
		for (size_t i = 0; i < nsorted; i++) {
			a += random() % 4 ? (uint64_t)(random() % 0x100) : 0;   /* aliases */
			strbuf_addf(&file, "%016llx %c s%zu\n", (unsigned long long)a,
				    "TtWwdDr"[random() % 7], i);
		}
		for (size_t i = 0; i < ntail; i++)
			strbuf_addf(&file, "%016llx %c m%zu\t[mod]\n",
				    (unsigned long long)(0xffffffff80ff0000ull + (uint64_t)(random() % 0x20000)),
				    "tTd"[random() % 3], i);
		if (file.len && random() % 4 == 0)
			strbuf_setlen(&file, file.len - 1);     /* no newline at the end */
		assert_int_equal(write(fd, file.buf, file.len), (ssize_t)file.len);
		close(fd);
		for (size_t i = 0; i < naddrs; i++)
			addrs[i] = 0xffffffff80ff0000ull + (uint64_t)(random() % 0x30000);
		qsort(addrs, naddrs, sizeof(*addrs), cmp_u64_test);
		strbuf_reset(&sb);
		strbuf_addstr(&sb, "kept\n");
		ret = kallsyms_subset(path, addrs, naddrs, &sb, &r, &nr);
		if (ret == 1) {
			/* no text symbol, or all at 0: nothing added */
			assert_string_equal(sb.buf, "kept\n");
			assert_null(r);
			unlink(path);
			continue;
		}
		assert_int_equal(ret, 0);
		for (size_t i = 0; i < naddrs; i++) {
			uint64_t s1, e1, s2, e2;
			bool h1, h2, f1 = name_of(file.buf, addrs[i], &s1, &e1, &h1);
			bool f2 = name_of(sb.buf, addrs[i], &s2, &e2, &h2);

			assert_int_equal(f1, f2);
			if (!f1)
				continue;
			assert_int_equal(s1, s2);
			assert_int_equal(h1, h2);
			if (h1) {
				assert_int_equal(e1, e2);
				assert_true(kallsyms_covered(r, nr, addrs[i]));
			}
		}
		for (size_t k = 0; k < nr; k++) {
			bool named = false;

			assert_true(r[k].start < r[k].end);
			if (k)
				assert_true(r[k].start >= r[k - 1].end);
			for (size_t i = 0; i < naddrs; i++) {
				uint64_t s1, e1;
				bool h1;

				if (name_of(file.buf, addrs[i], &s1, &e1, &h1) && h1 && s1 == r[k].start &&
				    e1 == r[k].end)
					named = true;
			}
			assert_true(named);
		}
		free(r);
		unlink(path);
	}
	strbuf_release(&file);
	strbuf_release(&sb);
}

static void test_snapshot_build_id(void **state)
{
	unsigned char file[256] = { 0 };
	uint32_t namesz = 4, descsz = 20, type = 3;

	(void)state;
	memcpy(file + 100, &namesz, 4);
	memcpy(file + 104, &descsz, 4);
	memcpy(file + 108, &type, 4);
	memcpy(file + 112, "GNU", 4);
	memcpy(file + 116, build_id, 20);
	assert_true(snapshot_has_build_id(file, sizeof(file), build_id, 20));
	file[130] ^= 1;
	assert_false(snapshot_has_build_id(file, sizeof(file), build_id, 20));
	assert_false(snapshot_has_build_id(file, sizeof(file), build_id, 0));
}

/* ---- the whole sample path, offline ---------------------------------------------------- */

struct fixture {
	char dir[64];
	char db[96];
};

static int setup_db(void **state)
{
	struct fixture *f = XNEW(struct fixture);

	strcpy(f->dir, "/tmp/dcpi-test-collect-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->db, sizeof(f->db), "%s/db", f->dir);
	*state = f;
	return 0;
}

static int teardown_db(void **state)
{
	struct fixture *f = *state;
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

static struct collector *offline(struct db *db, size_t ncpu)
{
	struct collect_options o;

	collect_options_init(&o);
	o.n_events = 1;
	o.events[0] = EVENT_CYCLES;
	o.store.write_interval_ns = 0;
	o.store.kallsyms = false;
	o.store.perf_maps = false;
	return collector_new_offline(&o, db, ncpu);
}

/* Sums one image's counts from a dump of the epoch: offset -> count. */
static uint64_t count_at(struct db *db, uint32_t seq, const char *path, uint64_t offset)
{
	struct image_index idx;
	struct db_image *img = NULL;
	struct db_profile_id id;
	struct profile p = PROFILE_INIT;
	uint64_t n;

	assert_int_equal(db_images_load(db, seq, &idx), 0);
	for (size_t i = 0; i < idx.n; i++)
		if (!strcmp(idx.v[i].path, path))
			img = &idx.v[i];
	if (!img) {
		image_index_release(&idx);
		return 0;
	}
	db_profile_id_set(&id, img->key, EVENT_CYCLES, false, 0);
	if (db_profile_load(db, seq, &id, &p))
		n = 0;
	else
		n = profile_get(&p, offset);
	profile_release(&p);
	image_index_release(&idx);
	return n;
}

static void feed(struct collector *c, size_t k, const struct rec *r)
{
	collector_feed(c, k, r->b, r->n);
}

/* Process pid execs comm at t, maps path (build_id) at 0x400000 and is sampled at pc. */
static void feed_process(struct collector *c, uint32_t pid, const char *comm, const char *path,
			 uint64_t pc, uint64_t t)
{
	struct rec r;

	mk_comm(&r, pid, comm, true, t);
	feed(c, 0, &r);
	mk_mmap2(&r, pid, 0x400000, 0x1000, 0, path, build_id, 20, t + 1);
	feed(c, 0, &r);
	mk_sample(&r, pid, pc, t + 2, 1, false);
	feed(c, 0, &r);
}

/*
 * Two CPUs; records arrive out of order across them; pid 30 runs /bin/a,
 * exits, and its pid is reused for /bin/b while /bin/a's samples are still
 * in the hash.  Every sample must land on the right image and offset.
 */
static void test_offline_attribution(void **state)
{
	struct fixture *f = *state;
	struct db *db = db_open(f->db, DB_CREATE | DB_NOSYNC);
	struct store_epoch_opts eo = { 0, "t", NULL };
	struct collector *c;
	struct collect_summary s;
	struct epoch_meta m;
	struct rec r;
	uint8_t bid_b[20];

	assert_non_null(db);
	memcpy(bid_b, build_id, 20);
	bid_b[0] = 0x11;
	c = offline(db, 2);
	assert_non_null(c);
	assert_int_equal(collector_begin(c, &eo), 0);

	/* CPU 1's ring is read first but its records are later in time. */
	mk_sample(&r, 31, 0x400010, 2500, 1, false);   /* the child, after its exec */
	feed(c, 1, &r);
	mk_comm(&r, 31, "b-child", true, 2100);
	feed(c, 1, &r);
	mk_mmap2(&r, 31, 0x400000, 0x1000, 0, "/bin/b", bid_b, 20, 2200);
	feed(c, 1, &r);
	/* CPU 0: pid 30 runs /bin/a, forks 31, exits; pid 30 comes back as /bin/b. */
	mk_comm(&r, 30, "a", true, 1000);
	feed(c, 0, &r);
	mk_mmap2(&r, 30, 0x400000, 0x1000, 0x3000, "/bin/a", build_id, 20, 1100);
	feed(c, 0, &r);
	for (int i = 0; i < 5; i++) {
		mk_sample(&r, 30, 0x400100, 1200 + (uint64_t)i, 1, false);
		feed(c, 0, &r);
	}
	mk_sample(&r, 30, 0xffffffff81000123ull, 1300, 1, true);
	feed(c, 0, &r);
	mk_task(&r, PERF_RECORD_FORK, 31, 30, 2000);
	feed(c, 0, &r);
	mk_task(&r, PERF_RECORD_EXIT, 30, 1, 3000);
	feed(c, 0, &r);
	mk_task(&r, PERF_RECORD_FORK, 30, 1, 3100);
	feed(c, 0, &r);
	mk_comm(&r, 30, "b", true, 3200);
	feed(c, 0, &r);
	mk_mmap2(&r, 30, 0x400000, 0x1000, 0, "/bin/b", bid_b, 20, 3300);
	feed(c, 0, &r);
	for (int i = 0; i < 3; i++) {
		mk_sample(&r, 30, 0x400100, 3400 + (uint64_t)i, 1, false);
		feed(c, 0, &r);
	}
	mk_sample(&r, 999, 0x400100, 3500, 1, false);  /* nobody knows pid 999 */
	feed(c, 0, &r);
	mk_lost(&r, 7, 3600);
	feed(c, 0, &r);
	mk_throttle(&r, 3700);
	feed(c, 1, &r);
	mk_throttle(&r, 3800);
	feed(c, 1, &r);

	assert_int_equal(collector_finish(c), 0);
	collector_summary(c, &s);
	assert_true(s.samples == 11 && s.lost == 7 && s.throttled == 2);
	assert_true(s.kernel == 1);
	/* pid 999 may still exist on this machine (the lazy /proc scan). */
	assert_true(s.unknown <= 1);

	assert_true(count_at(db, s.epoch, "/bin/a", 0x3100) == 5);
	assert_true(count_at(db, s.epoch, "/bin/b", 0x100) == 3);
	assert_true(count_at(db, s.epoch, "/bin/b", 0x10) == 1);
	assert_true(count_at(db, s.epoch, "[kernel.kallsyms]", 0xffffffff81000123ull) == 1);

	assert_int_equal(db_meta_load(db, s.epoch, &m), 0);
	assert_true(epoch_meta_counter(&m, "lost") == 7);
	assert_true(epoch_meta_counter(&m, "throttled") == 2);
	assert_true(epoch_meta_counter(&m, "kernel") == 1);
	assert_true(epoch_meta_event(&m, EVENT_CYCLES)->samples == 11);
	assert_true(m.end_ns != 0);
	assert_string_equal(m.label, "t");
	epoch_meta_release(&m);
	collector_free(c);
	db_close(db);
}

/* A write that fails keeps its counts and lands on the next try. */
static void test_offline_write_failure(void **state)
{
	struct fixture *f = *state;
	struct db *db = db_open(f->db, DB_CREATE);
	struct store_epoch_opts eo = { 0, NULL, NULL };
	struct collector *c = offline(db, 1);
	struct collect_summary s;
	struct rec r;

	assert_int_equal(collector_begin(c, &eo), 0);
	mk_comm(&r, 40, "x", true, 10);
	feed(c, 0, &r);
	mk_mmap2(&r, 40, 0x400000, 0x1000, 0, "/bin/x", build_id, 20, 11);
	feed(c, 0, &r);
	for (int i = 0; i < 4; i++) {
		mk_sample(&r, 40, 0x400040, 20 + (uint64_t)i, 1, false);
		feed(c, 0, &r);
	}
	fsio_inject_fault(FSIO_FAULT_FSYNC, 2);  /* images, then the profile's fsync */
	assert_int_equal(collector_flush(c), -1);
	fsio_inject_fault(FSIO_FAULT_FSYNC, 0);
	collector_summary(c, &s);
	assert_true(count_at(db, s.epoch, "/bin/x", 0x40) == 0);
	assert_int_equal(collector_flush(c), 0);
	assert_true(count_at(db, s.epoch, "/bin/x", 0x40) == 4);
	assert_int_equal(collector_finish(c), 0);
	assert_true(count_at(db, s.epoch, "/bin/x", 0x40) == 4);
	collector_free(c);
	db_close(db);
}

/* Continuing an epoch recounts what is on disk; new epochs start from zero. */
static void test_offline_continue_and_new_epoch(void **state)
{
	struct fixture *f = *state;
	struct db *db = db_open(f->db, DB_CREATE | DB_NOSYNC);
	struct store_epoch_opts eo = { 0, NULL, NULL };
	struct collector *c = offline(db, 1);
	struct collect_summary s;
	struct epoch_meta m;
	struct rec r;
	uint32_t first;

	assert_int_equal(collector_begin(c, &eo), 0);
	mk_comm(&r, 50, "y", true, 10);
	feed(c, 0, &r);
	mk_mmap2(&r, 50, 0x400000, 0x1000, 0, "/bin/y", build_id, 20, 11);
	feed(c, 0, &r);
	mk_sample(&r, 50, 0x400200, 20, 1, false);
	feed(c, 0, &r);
	assert_int_equal(collector_finish(c), 0);
	collector_summary(c, &s);
	first = s.epoch;
	collector_free(c);

	/* A restarted writer continues the epoch. */
	c = offline(db, 1);
	eo.continue_seq = first;
	assert_int_equal(collector_begin(c, &eo), 0);
	mk_comm(&r, 51, "y", true, 30);
	feed(c, 0, &r);
	mk_mmap2(&r, 51, 0x400000, 0x1000, 0, "/bin/y", build_id, 20, 31);
	feed(c, 0, &r);
	mk_sample(&r, 51, 0x400200, 40, 1, false);
	feed(c, 0, &r);
	assert_int_equal(collector_flush(c), 0);
	assert_true(count_at(db, first, "/bin/y", 0x200) == 2);
	assert_int_equal(db_meta_load(db, first, &m), 0);
	assert_true(epoch_meta_event(&m, EVENT_CYCLES)->samples == 2);
	epoch_meta_release(&m);

	assert_int_equal(collector_new_epoch(c, "next"), 0);
	mk_sample(&r, 51, 0x400200, 50, 1, false);
	feed(c, 0, &r);
	assert_int_equal(collector_finish(c), 0);
	collector_summary(c, &s);
	assert_true(s.epoch == first + 1);
	assert_true(count_at(db, first + 1, "/bin/y", 0x200) == 1);
	assert_true(count_at(db, first, "/bin/y", 0x200) == 2);
	assert_int_equal(db_meta_load(db, first, &m), 0);
	assert_true(m.end_ns != 0);
	epoch_meta_release(&m);
	assert_int_equal(db_meta_load(db, first + 1, &m), 0);
	assert_true(epoch_meta_event(&m, EVENT_CYCLES)->samples == 1);
	assert_string_equal(m.label, "next");
	epoch_meta_release(&m);
	collector_free(c);
	db_close(db);
}

/*
 * --values: the registers of user samples reach the image's value profile
 * at the sample's offset; consecutive user samples of a thread close in
 * code are paired (a counter's progress between them), across kernel
 * samples; a sample outside any image and another thread's break the chain.
 */
/*
 * A -g sample with its user registers (bp, sp = 0x7ffc0000, ip) and a stack
 * copy of 64 zero bytes, in the collector's sample format.
 */
static void mk_stack_sample(struct collector *c, struct rec *r, uint32_t pid, uint64_t ip,
			    uint64_t bp, uint64_t time)
{
	begin(r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	put64(r, 1);
	put64(r, ip);
	put32(r, pid);
	put32(r, pid);
	put64(r, time);
	put64(r, 1000000);
	if (c->fmt.sample_type & PERF_SAMPLE_CALLCHAIN)
		put64(r, 0);
	put64(r, PERF_SAMPLE_REGS_ABI_64);
	for (unsigned k = 0; k < 64; k++)
		if (c->fmt.regs_user >> k & 1)
			put64(r, k == 7 ? 0x7ffc0000 : k == 8 ? ip : k == 6 ? bp : 0);
	put64(r, 64);
	for (int k = 0; k < 8; k++)
		put64(r, 0);
	put64(r, 64);
	finish(r, pid, time, 1, false);
}

/*
 * callchain_queue unwinds a sample as it is read and keeps only its frames;
 * in its turn they are taken if the address space still maps them where it
 * did, else the stack is bad (a mapping changed in between).
 */
static void test_unwound_at_read(void **state)
{
	struct fixture *f = *state;
	struct db *db = db_open(f->db, DB_CREATE | DB_NOSYNC);
	struct store_epoch_opts eo = { 0, NULL, NULL };
	static const uint8_t id_a[20] = { 0xaa }, id_b[20] = { 0xbb };
	/* callchain_set_table copies a row past the last, as utable_build leaves one */
	struct utable_row rows[2] = { { 0, CFI_CFA_END, CFI_RBP_SAME, 0, 0 } };
	struct utable t = { rows, 1, { 0xaa }, 20, 1, 0 };
	struct collect_options o;
	struct collect_summary s;
	const struct callchain_stats *st;
	struct collector *c;
	struct rec r;
	uint32_t image;
	uint64_t off;

	assert_non_null(db);
	collect_options_init(&o);
	o.n_events = 1;
	o.events[0] = EVENT_CYCLES;
	o.store.write_interval_ns = 0;
	o.store.kallsyms = false;
	o.store.perf_maps = false;
	o.callgraph.mode = CALLGRAPH_DWARF;
	o.callgraph.stack_size = 64;
	c = collector_new_offline(&o, db, 1);
	assert_non_null(c);
	assert_int_equal(collector_begin(c, &eo), 0);
	mk_comm(&r, 30, "a", true, 1000);
	feed(c, 0, &r);
	mk_mmap2(&r, 30, 0x400000, 0x1000, 0, "/bin/a", id_a, 20, 1100);
	feed(c, 0, &r);
	collector_read(c, true);
	assert_true(procs_resolve(&c->procs, procs_lookup(&c->procs, 30), 0x400100, &image, &off));
	/* /bin/a's table: its code is all the outermost frame. */
	callchain_set_table(c->cg, image, &t);

	/* Unwound as read: queued with its frame instead of the stack copy. */
	mk_stack_sample(c, &r, 30, 0x400100, 0, 2000);
	assert_true(callchain_queue(c->cg, &c->order, 0, 2000, (const void *)r.b, c->fmt.sample_type,
				    c->fmt.regs_user));
	assert_true(((const struct perf_event_header *)(const void *)
		     (c->order.arena + c->order.v[c->order.n - 1].off))->misc & (1u << 13));
	assert_true(c->order.v[c->order.n - 1].len < r.n);
	collector_read(c, true);

	/* /bin/b replaces /bin/a before the next sample's turn: its frame is stale. */
	mk_stack_sample(c, &r, 30, 0x400100, 0, 3000);
	assert_true(callchain_queue(c->cg, &c->order, 0, 3000, (const void *)r.b, c->fmt.sample_type,
				    c->fmt.regs_user));
	mk_mmap2(&r, 30, 0x400000, 0x1000, 0, "/bin/b", id_b, 20, 2500);
	feed(c, 0, &r);
	collector_read(c, true);

	/* A sample in no mapping is not unwound as read: it goes whole, in its turn. */
	mk_stack_sample(c, &r, 30, 0x900000, 0, 4000);
	assert_false(callchain_queue(c->cg, &c->order, 0, 4000, (const void *)r.b,
				     c->fmt.sample_type, c->fmt.regs_user));
	/*
	 * Nor one whose frame pointer leads to a 0 return address: the walk
	 * ends as if whole, but by chance (a process that has just exec'd,
	 * its new mappings still queued, its stack still zeros).
	 */
	mk_stack_sample(c, &r, 30, 0x900000, 0x7ffc0000, 4100);
	assert_false(callchain_queue(c->cg, &c->order, 0, 4100, (const void *)r.b,
				     c->fmt.sample_type, c->fmt.regs_user));
	assert_int_equal(collector_finish(c), 0);
	collector_summary(c, &s);
	st = callchain_stats(c->cg);
	assert_int_equal(st->early, 2);
	assert_int_equal(st->stale, 1);
	assert_int_equal(st->ends[STACK_END_COMPLETE], 1);
	assert_int_equal(st->ends[STACK_END_BAD], 1);
	collector_free(c);
	db_close(db);
}

static void test_offline_values(void **state)
{
	struct fixture *f = *state;
	struct db *db = db_open(f->db, DB_CREATE | DB_NOSYNC);
	struct store_epoch_opts eo = { 0, NULL, NULL };
	struct collect_options o;
	struct values_profile vp = VALUES_PROFILE_INIT;
	const struct values_rec *vr;
	struct collect_summary s;
	struct image_index idx;
	struct collector *c;
	struct rec r;
	uint64_t t = 1000000;

	assert_non_null(db);
	collect_options_init(&o);
	o.n_events = 1;
	o.events[0] = EVENT_CYCLES;
	o.store.write_interval_ns = 0;
	o.store.kallsyms = false;
	o.store.perf_maps = false;
	o.values = true;
	c = collector_new_offline(&o, db, 1);
	assert_non_null(c);
	assert_int_equal(collector_begin(c, &eo), 0);
	mk_comm(&r, 30, "a", true, 1000);
	feed(c, 0, &r);
	mk_mmap2(&r, 30, 0x400000, 0x1000, 0x3000, "/bin/a", build_id, 20, 1100);
	feed(c, 0, &r);
	/* 20 samples 1 ms apart, rax +1000 each; rbx 0x5eed5eed but once. */
	for (int i = 0; i < 20; i++, t += 1000000) {
		mk_sample_regs(&r, 30, i % 2 ? 0x400100 : 0x400108, t, 1, false, 1000 * (uint64_t)i,
			       i == 7 ? 1 : 0x5eed5eed);
		feed(c, 0, &r);
	}
	/* A kernel sample leaves the user registers alone: the next one pairs (-19000 + 20000). */
	mk_sample_regs(&r, 30, 0xffffffff81000000ull, t, 1, true, 0, 0);
	feed(c, 0, &r);
	t += 1000000;
	mk_sample_regs(&r, 30, 0x400100, t, 1, false, 20000, 0x5eed5eed);
	feed(c, 0, &r);
	/* A sample in no image breaks the chain; another thread starts its own. */
	mk_sample_regs(&r, 30, 0x900000, t + 1000, 1, false, 0, 0);
	feed(c, 0, &r);
	mk_sample_regs(&r, 30, 0x400100, t + 2000, 1, false, 99, 0x5eed5eed);
	feed(c, 0, &r);
	mk_sample_regs(&r, 31, 0x400100, t + 3000, 1, false, 5, 0x5eed5eed);
	feed(c, 0, &r);
	assert_int_equal(collector_finish(c), 0);
	collector_summary(c, &s);
	assert_true(s.value_samples == 23 && s.value_pairs == 20 && s.value_dropped == 0);

	assert_int_equal(db_images_load(db, s.epoch, &idx), 0);
	assert_true(idx.n >= 1);
	for (size_t i = 0; i < idx.n; i++)
		if (!strcmp(idx.v[i].path, "/bin/a"))
			assert_int_equal(db_values_load(db, s.epoch, idx.v[i].key, &vp), 0);
	image_index_release(&idx);
	assert_int_equal(vp.n, 2);
	vr = values_profile_find(&vp, 0x3100);
	assert_non_null(vr);
	assert_true(vr->samples == 13);
	assert_true(vr->h[VREG_RBX].n == 2 && vr->h[VREG_RBX].e[0].value == 0x5eed5eed &&
		    vr->h[VREG_RBX].e[0].count == 12 && vr->h[VREG_RBX].e[1].value == 1);
	assert_true(vr->h[VREG_RSP].e[0].value == 0x7ffc0000);
	/* Eleven pairs end at 0x3100 (samples 1, 3, ... 19 and the one after the kernel's),
	 * each rax +1000, rsp unchanged. */
	assert_non_null(vr->pairs);
	assert_true(vr->pairs->n == 11 && vr->pairs->dt == 12 * 1000000ull);
	assert_true(vr->pairs->d[VREG_RAX].npos == 11 && vr->pairs->d[VREG_RAX].spos == 11000 &&
		    vr->pairs->d[VREG_RAX].mpos == 1000);
	assert_true(!(vr->pairs->mask & (1u << VREG_RSP)));
	/* rbx went 0x5eed5eed -> 1 -> 0x5eed5eed at samples 7 and 8 */
	assert_true(vr->pairs->d[VREG_RBX].nneg == 1 && vr->pairs->d[VREG_RBX].sneg == 0x5eed5eed - 1);
	vr = values_profile_find(&vp, 0x3108);
	assert_true(vr && vr->samples == 10 && vr->pairs && vr->pairs->n == 9);
	assert_true(vr->pairs->d[VREG_RBX].npos == 1 && vr->pairs->d[VREG_RBX].spos == 0x5eed5eed - 1);
	values_profile_release(&vp);
	collector_free(c);
	db_close(db);
}

/* Per-process profiles for a named image, aggregate ones for the rest. */
static void test_offline_per_process(void **state)
{
	struct fixture *f = *state;
	struct db *db = db_open(f->db, DB_CREATE | DB_NOSYNC);
	struct store_epoch_opts eo = { 0, NULL, NULL };
	struct collect_options o;
	struct collector *c;
	struct db_profile_id *ids;
	char *pp[] = { (char *)"/bin/z" };
	size_t n, per_pid = 0;

	collect_options_init(&o);
	o.n_events = 1;
	o.events[0] = EVENT_CLOCK;
	o.per_process = pp;
	o.n_per_process = 1;
	o.store.kallsyms = false;
	c = collector_new_offline(&o, db, 1);
	assert_int_equal(collector_begin(c, &eo), 0);
	/* A copy of /bin/z elsewhere (the same build ID) is seen first: the
	 * image is /bin/z's all the same, and the copy's process is one of its
	 * processes. */
	feed_process(c, 59, "z", "/tmp/copy-of-z", 0x400300, 500);
	for (uint32_t pid = 60; pid < 62; pid++)
		feed_process(c, pid, "z", "/bin/z", 0x400300, pid * 10);
	assert_int_equal(collector_finish(c), 0);
	assert_int_equal(db_profiles_list(db, 1, &ids, &n), 0);
	for (size_t i = 0; i < n; i++)
		per_pid += ids[i].per_pid;
	assert_int_equal(per_pid, 3);
	free(ids);
	collector_free(c);
	db_close(db);
}

static void test_options(void **state)
{
	struct collect_options o;

	(void)state;
	collect_options_init(&o);
	/* DCPI's cycles and imiss, and the retired instructions (a PMU's) */
	assert_int_equal(o.n_events, 3);
	assert_int_equal(o.events[0], EVENT_CYCLES);
	assert_int_equal(o.events[1], EVENT_INSTRUCTIONS);
	assert_int_equal(o.events[2], EVENT_IMISS);
	assert_int_equal(collect_parse_events(&o, "clock,cycles,clock"), 0);
	assert_int_equal(o.n_events, 2);
	assert_int_equal(collect_parse_events(&o, "cycles,bogus"), -1);
	assert_int_equal(collect_option(&o, 'F', "5000"), 1);
	assert_true(o.freq_hz == 5000 && !o.period);
	assert_int_equal(collect_option(&o, 'F', "200000"), -1);
	assert_int_equal(collect_option(&o, 'c', "100000"), 1);
	assert_true(o.period == 100000 && !o.freq_hz);
	assert_int_equal(collect_option(&o, COLLECT_OPT_HASH, "rr4"), 1);
	assert_int_equal(o.hash, SHASH_RR4);
	assert_int_equal(collect_option(&o, COLLECT_OPT_HASH, "lru"), -1);
	assert_int_equal(collect_option(&o, 'x', "1"), 0);
}

static void test_random_period(void **state)
{
	uint64_t top = 1032258, lo = UINT64_MAX, hi = 0;
	double sum = 0;
	uint64_t r = 1;

	(void)state;
	for (int i = 0; i < 100000; i++) {
		uint64_t p;

		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		p = collect_random_period(top, r);
		lo = p < lo ? p : lo;
		hi = p > hi ? p : hi;
		sum += (double)p;
	}
	/* Uniform over the top sixteenth: [top - top/16, top], mean top * 31/32. */
	assert_true(lo >= top - top / 16 && hi <= top);
	assert_true(lo < top - top / 16 + 100 && hi > top - 100);
	assert_true(sum / 100000 > 999000 && sum / 100000 < 1001000);
}

/* ---- calibration ------------------------------------------------------------ */

/* The meta's calib line: format, parse, merge, and what readers make of it. */
static void test_calib_meta(void **state)
{
	struct epoch_meta m, n;
	struct epoch_calib c = { .event = EVENT_CYCLES, .cycles = 300000.0, .period = 100000,
				 .intervals = 100, .mhz = 3600.0 };
	struct calib_result r = { .cycles = 330000.0, .intervals = 300, .mhz = 3600.0 };
	struct strbuf sb = STRBUF_INIT;
	enum epoch_period_source src;
	struct epoch_event *e;
	const char *why;
	(void)state;

	epoch_meta_init(&m);
	m.seq = 1;
	m.start_ns = 1795329060123000000ll;
	m.cpu_mhz = 2600;
	e = epoch_meta_add_event(&m, EVENT_CYCLES);
	e->used = EVENT_CLOCK;
	e->period = 100000;
	e->period_in_ns = true;
	e->freq_hz = 10000;
	/* no calibration: period x cpu MHz */
	assert_true(epoch_meta_time_cycles(&m, EVENT_CYCLES, &src) == 260000.0);
	assert_int_equal(src, EPOCH_PERIOD_MHZ);
	assert_true(epoch_meta_clock_mhz(&m, EVENT_CYCLES, &src) == 2600.0);
	assert_int_equal(src, EPOCH_PERIOD_MHZ);
	/* runs merge weighted by their intervals; the checks too, the worst error kept */
	c.intervals = 100;
	strcpy(c.how, "regadd");
	c.imul_mhz = 3500, c.tsc_mhz = 2600, c.error = 0.01;
	r.imul_mhz = 3700, r.tsc_mhz = 2600, r.error = 0.02;
	strcpy(r.how, "regadd");
	calib_accumulate(&c, &r);
	assert_true(c.cycles == 322500.0 && c.intervals == 400);
	assert_true(c.imul_mhz == 3650 && c.tsc_mhz == 2600 && c.error == 0.02);
	assert_string_equal(c.how, "regadd");
	epoch_meta_set_calib(&m, &c);
	m.core_sig = (struct epoch_core_sig){ true, 3.85, 4.9, 5, 13.5 };
	m.cpu_flags = xcalloc(3, sizeof(char *));
	m.cpu_flags[0] = xstrdup("fpu");
	m.cpu_flags[1] = xstrdup("avx512fp16");
	epoch_meta_format(&m, &sb);
	assert_non_null(strstr(sb.buf, "\ncalib cycles 322500.0 100000 400 3600.0 regadd\n"
				       "calib_check cycles 3650.0 2600.0 0.0200\n"));
	assert_non_null(strstr(sb.buf, "\ncore_sig 3.850 4.900 5.000 13.500\n"));
	assert_non_null(strstr(sb.buf, "\ncpu_flags fpu avx512fp16\n"));
	assert_int_equal(epoch_meta_parse(sb.buf, sb.len, &n, &why), 0);
	assert_int_equal(n.n_extra, 0);
	assert_true(epoch_meta_calib(&n, EVENT_CYCLES)->cycles == 322500.0);
	assert_true(epoch_meta_calib(&n, EVENT_CYCLES)->imul_mhz == 3650.0);
	assert_true(epoch_meta_calib(&n, EVENT_CYCLES)->error == 0.02);
	assert_true(n.core_sig.have && n.core_sig.addimm_per_cycle == 3.85 && n.core_sig.div_lat == 13.5);
	assert_true(epoch_meta_cpu_flag(&n, "avx512fp16") && !epoch_meta_cpu_flag(&n, "avx"));
	{
		char why2[160];

		/* 2%: the clocks agree; 6%: the calibration says so; add-immediates: suspect */
		assert_null(epoch_calib_problem(epoch_meta_calib(&n, EVENT_CYCLES), why2, sizeof(why2)));
		c.error = 0.061;
		assert_non_null(epoch_calib_problem(&c, why2, sizeof(why2)));
		assert_string_equal(why2, "the clocks disagree by 6.1% (register adds 3600 MHz, "
				    "imul 3650 MHz, TSC 2600 MHz)");
		strcpy(c.how, "imul");
		assert_non_null(epoch_calib_problem(&c, why2, sizeof(why2)));
		assert_string_equal(why2, "the register adds and the imul chain disagree by 6.1%: "
				    "the imul clock, 3650 MHz; TSC 2600 MHz");
		strcpy(c.how, "addloop");
		assert_non_null(epoch_calib_problem(&c, why2, sizeof(why2)));
		/* an old run merged with a new one: the new method's name */
		r.error = 0.01;
		calib_accumulate(&c, &r);
		assert_string_equal(c.how, "regadd");
	}
	assert_null(epoch_meta_calib(&n, EVENT_CLOCK));
	assert_true(epoch_meta_time_cycles(&n, EVENT_CYCLES, &src) == 322500.0);
	assert_int_equal(src, EPOCH_PERIOD_CALIBRATED);
	assert_string_equal(epoch_period_source_name(src), "calibrated");
	/* an epoch of before the check (no calib_check line) reads as before */
	{
		struct epoch_meta o;
		struct strbuf t = STRBUF_INIT;

		epoch_meta_init(&o);
		o.seq = 1;
		o.start_ns = m.start_ns;
		c.imul_mhz = c.tsc_mhz = c.error = 0;
		strcpy(c.how, "addloop");
		epoch_meta_set_calib(&o, &c);
		epoch_meta_format(&o, &t);
		assert_null(strstr(t.buf, "calib_check"));
		epoch_meta_release(&o);
		assert_int_equal(epoch_meta_parse(t.buf, t.len, &o, &why), 0);
		assert_string_equal(epoch_meta_calib(&o, EVENT_CYCLES)->how, "addloop");
		assert_false(o.core_sig.have);
		epoch_meta_release(&o);
		strbuf_release(&t);
	}
	/* the clock dcpi uses: the calibration's (3225 MHz), not cpuinfo's 2600 */
	assert_true(fabs(epoch_meta_clock_mhz(&n, EVENT_CYCLES, &src) - 3225.0) < 1e-9);
	assert_int_equal(src, EPOCH_PERIOD_CALIBRATED);
	/* a draw 2% longer: moved by 2 us at 3600 MHz, still "calibrated" */
	epoch_meta_event(&n, EVENT_CYCLES)->period = 102000;
	assert_true(fabs(epoch_meta_time_cycles(&n, EVENT_CYCLES, &src) - 329700.0) < 0.01);
	assert_int_equal(src, EPOCH_PERIOD_CALIBRATED);
	/* idle CPUs made the measured period long: the requested one holds */
	epoch_meta_event(&n, EVENT_CYCLES)->period = 2000000;
	assert_true(epoch_meta_time_cycles(&n, EVENT_CYCLES, &src) == 322500.0);
	/* another rate (an appended run at -F 5000): cost 10.42 us, moved */
	epoch_meta_event(&n, EVENT_CYCLES)->period = 200000;
	epoch_meta_event(&n, EVENT_CYCLES)->freq_hz = 5000;
	assert_true(fabs(epoch_meta_time_cycles(&n, EVENT_CYCLES, &src) - 682500.0) < 0.01);
	assert_int_equal(src, EPOCH_PERIOD_SCALED);
	epoch_meta_release(&n);
	/* malformed lines are refused */
	for (int k = 0; k < 8; k++) {
		static const char *const bad[] = {
			"calib cycles -1 100000 4 3600.0 addloop\n",
			"calib nosuch 1.0 100000 4 3600.0 addloop\n",
			"calib cycles 1.0 100000 4 3600.0 Add\\x20loop\n",
			"calib cycles 1.0 100000 4\n",
			"calib_check clock 3600.0 2600.0 0.01\n",      /* no calib of clock */
			"calib_check cycles 3600.0 2600.0\n",
			"core_sig 1 2 3\n",
			"core_sig 1 2 3 -4\n",
		};
		struct strbuf t = STRBUF_INIT;

		strbuf_add(&t, sb.buf, sb.len);
		strbuf_setlen(&t, t.len - 16);
		strbuf_addstr(&t, bad[k]);
		textrec_finish(&t);
		assert_int_equal(epoch_meta_parse(t.buf, t.len, &n, &why), -1);
		strbuf_release(&t);
	}
	strbuf_release(&sb);
	epoch_meta_release(&m);
}

/* The loop's pc range and arithmetic (its timing: test-model.c). */
static void test_calib_loop(void **state)
{
	uintptr_t body = (uintptr_t)calib_loop_body, end = (uintptr_t)calib_loop_end;

	(void)state;
	if (!calib_supported()) {
		print_message("# SKIP: the calibration loop is x86-64 only\n");
		skip();
	}
	assert_true(end > body && end - body < 64);
	assert_true(calib_loop(1000, 7) == 8007);
}

/*
 * Whether the kernel lets this process sample itself with a cpu-clock event
 * (user space only is enough), asked directly: not through collect/, which
 * is what the test checks.  NULL if it does, else the reason.
 */
static const char *kernel_cannot_sample(void)
{
	static char why[160];
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = 1000000;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		snprintf(why, sizeof(why), "perf_event_open(cpu-clock): %s", strerror(errno));
		return why;
	}
	close(fd);
	return NULL;
}

/*
 * A real measurement, where the kernel lets this process sample itself:
 * then it must succeed.  What it gives depends on the machine (the clock, what
 * a sample costs it: t0410 compares it with a loop of known cycles); here,
 * what holds anywhere: a plausible clock, no more of the loop's cycles in a
 * sample than the period holds at that clock (5% for a clock that boosts
 * between the two), 16 intervals or more, and the cost of its fixed budget
 * (30 ms of sampled loop: tens of ms of CPU).
 */
static void test_calib_measure(void **state)
{
	struct perf_evspec spec;
	struct calib_result r;
	const char *cannot;
	char why[160] = "";
	(void)state;

	if (!calib_supported()) {
		print_message("# SKIP: the calibration loop is x86-64 only\n");
		skip();
	}
	if ((cannot = kernel_cannot_sample())) {
		print_message("# SKIP: this machine cannot sample: %s\n", cannot);
		skip();
	}
	if (perf_evspec_probe(EVENT_CLOCK, &spec, why, sizeof(why)))
		fail_msg("the kernel samples cpu-clock, but collect/ cannot: %s", why);
	if (calib_measure(&spec, 1000000, true, &r, why, sizeof(why)))
		fail_msg("the kernel samples cpu-clock, but the calibration fails: %s", why);
	print_message("%.0f cycles per 1 ms sample, %llu intervals, clock %.0f MHz (%s; imul %.0f, "
		      "TSC %.0f, error %.1f%%), %.1f ms; core: %.2f add-immediates a cycle, %.2f adds "
		      "a cycle, load %.2f, divide %.2f cycles\n",
		      r.cycles, (unsigned long long)r.intervals, r.mhz, r.how, r.imul_mhz, r.tsc_mhz,
		      100 * r.error, (double)r.cost_ns / 1e6, r.sig.addimm_per_cycle,
		      r.sig.alu_per_cycle, r.sig.load_lat, r.sig.div_lat);
	assert_true(r.mhz > 200 && r.mhz < 10000);
	assert_true(r.imul_mhz > 200 && r.imul_mhz < 10000);
	assert_true(r.intervals >= 16);
	/*
	 * In the imul chain's clock, which no core shortens: at most the
	 * period's cycles (10% for a clock that boosts between the two: 8%
	 * seen on a host at load 7, its other core busy, then idle), at
	 * least what is left when a sample costs 30% of a period (a few
	 * percent at 1 ms on every host seen).
	 */
	assert_true(r.cycles <= 1000 * r.imul_mhz * 1.10 && r.cycles >= 1000 * r.imul_mhz * 0.7);
	assert_true(r.cost_ns > 0 && r.cost_ns < 400 * 1000000ll);
	assert_true(r.sig.have);
	assert_true(r.sig.addimm_per_cycle > 0.5 && r.sig.addimm_per_cycle < 16);
	assert_true(r.sig.alu_per_cycle > 1 && r.sig.alu_per_cycle < 12);
	assert_true(r.sig.load_lat > 1 && r.sig.load_lat < 20);
	assert_true(r.sig.div_lat > 1 && r.sig.div_lat < 200);
	/* not a time event */
	spec.time = false;
	assert_int_equal(calib_measure(&spec, 200000, false, &r, why, sizeof(why)), -1);
}

/* ---- trails and the dip -------------------------------------------------------- */

/*
 * The dip, measured: trails whose first windows run at 0.6, 0.8, 0.9 of
 * the rest, with a 2% jitter, give the skip 3 once enough of them say so;
 * before that, and with windows too noisy to tell, the reference's index.
 */
static void test_dip_measured(void **state)
{
	struct emdip d;
	struct hotlist_rng rng = HOTLIST_RNG_INIT(7);
	uint64_t insns[EMU_MAX_TRAIL];
	bool ok[EMU_MAX_TRAIL];
	double se;
	(void)state;

	emdip_init(&d, 100000);         /* 10 kHz: the reference from 2 ms on, window 20 */
	assert_int_equal(d.reach, 20);
	assert_int_equal(emdip_skip(&d), 20);
	for (int t = 0; t < 40; t++) {
		for (unsigned j = 0; j < 40; j++) {
			double r = j == 0 ? 0.6 : j == 1 ? 0.8 : j == 2 ? 0.9 : 1;
			double jitter = 1 + 0.02 * ((double)(hotlist_rand(&rng) % 2001) / 1000 - 1);

			insns[j] = (uint64_t)(400000 * r * jitter);
			ok[j] = true;
		}
		ok[7] = t % 2;          /* not one period: left out */
		emdip_add(&d, insns, ok, 40);
		if (t == 3)             /* too few trails yet */
			assert_int_equal(emdip_skip(&d), 20);
	}
	assert_int_equal(d.trails, 40);
	assert_int_equal(emdip_skip(&d), 3);
	assert_true(fabs(emdip_ratio(&d, 0, &se) - 0.6) < 0.01 && se < 0.01);
	assert_int_equal(d.acc[7].n, 20);              /* half the trails: not one period */
	/* windows too noisy to tell (30% apart): the skip stays at the reference */
	emdip_init(&d, 100000);
	for (int t = 0; t < 40; t++) {
		for (unsigned j = 0; j < 40; j++) {
			insns[j] = 400000 + (hotlist_rand(&rng) % 240000);
			ok[j] = true;
		}
		emdip_add(&d, insns, ok, 40);
	}
	assert_true(emdip_skip(&d) > 3);
	/* a dip longer than the reference's start: the reference moves out */
	emdip_init(&d, 100000);
	for (int t = 0; t < 20; t++) {
		for (unsigned j = 0; j < 60; j++) {
			insns[j] = j < 30 ? 200000 : 400000;
			ok[j] = true;
		}
		emdip_add(&d, insns, ok, 60);
	}
	assert_int_equal(d.reach, 40);
}

/* A trail's points: its thread's samples after the stop, the windows among them. */
static void test_trail_points(void **state)
{
	struct emtrail t;
	uint64_t regs[VALUES_NREGS] = { 1, 2, 3 };
	(void)state;

	emtrail_init(&t);
	emtrail_start(&t, 42, 1000, 4);
	/* before the stop's release, another thread, another CPU's: counted, not points */
	assert_false(emtrail_sample(&t, 0, 42, 900, true, 0x401000, regs));
	assert_false(emtrail_sample(&t, 0, 7, 1100, true, 0x401000, regs));
	assert_true(emtrail_sample(&t, 0, 42, 1200, true, 0x401000, regs));
	assert_true(emtrail_sample(&t, 0, 42, 1300, true, 0x401004, regs));
	/* in the kernel: a point, flagged */
	assert_true(emtrail_sample(&t, 1, 42, 1400, false, 0x401008, regs));
	assert_int_equal(t.pt[2].flags, EMU_POINT_KERNEL);
	assert_false(emtrail_complete(&t));
	assert_true(emtrail_sample(&t, 1, 42, 1500, true, 0x40100c, regs));
	assert_true(emtrail_complete(&t));
	assert_false(emtrail_sample(&t, 1, 42, 1600, true, 0x40100c, regs));   /* full */
	/* windows: one period (100) on one CPU with no other sample of it between */
	assert_true(emtrail_window_ok(&t, 0, 100));
	emtrail_start(&t, 42, 2000, 4);
	assert_true(emtrail_sample(&t, 0, 42, 2100, true, 0x401000, regs));
	assert_false(emtrail_sample(&t, 0, 7, 2150, true, 0x401000, regs));
	assert_true(emtrail_sample(&t, 0, 42, 2200, true, 0x401004, regs));
	assert_true(emtrail_sample(&t, 1, 42, 2300, true, 0x401008, regs));
	assert_false(emtrail_window_ok(&t, 0, 100));            /* 7's sample came between */
	assert_false(emtrail_window_ok(&t, 1, 100));            /* it moved to CPU 1 */
	/* a sample without user registers ends it */
	assert_false(emtrail_sample(&t, 1, 42, 2400, true, 0x40100c, NULL));
	assert_true(t.ended && emtrail_complete(&t));
	emtrail_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shash_key_packing),
		cmocka_unit_test(test_shash_rr4_round_robin),
		cmocka_unit_test(test_shash_stf6_swap_to_front),
		cmocka_unit_test(test_shash_saturation),
		cmocka_unit_test(test_shash_conservation),
		cmocka_unit_test(test_ctl_parse),
		cmocka_unit_test(test_perfrec_parse),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_procs_resolve),
		cmocka_unit_test(test_procs_copy_on_write),
		cmocka_unit_test(test_procs_slots_recycled),
		cmocka_unit_test(test_kallsyms_subset),
		cmocka_unit_test(test_kallsyms_random),
		cmocka_unit_test(test_snapshot_build_id),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_random_period),
		cmocka_unit_test(test_calib_meta),
		cmocka_unit_test(test_calib_loop),
		cmocka_unit_test(test_calib_measure),
		cmocka_unit_test(test_dip_measured),
		cmocka_unit_test(test_trail_points),
		cmocka_unit_test_setup_teardown(test_offline_attribution, setup_db, teardown_db),
		cmocka_unit_test_setup_teardown(test_offline_write_failure, setup_db, teardown_db),
		cmocka_unit_test_setup_teardown(test_offline_continue_and_new_epoch, setup_db,
						teardown_db),
		cmocka_unit_test_setup_teardown(test_offline_per_process, setup_db, teardown_db),
		cmocka_unit_test_setup_teardown(test_unwound_at_read, setup_db, teardown_db),
		cmocka_unit_test_setup_teardown(test_offline_values, setup_db, teardown_db),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
