/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of call stacks: the CFI interpreter and unwind tables on real
 * binaries (this test and its libc), the stack walk against glibc's
 * backtrace() on this very process, the sample's optional fields, the
 * stack table (interning, canonical encoding, strict decoding, merging),
 * and the call graph (gprof's numbers, cycles, delayed ticks) on a
 * synthetic epoch whose kernel symbols name the frames.
 */
#include "config.h"

#include <execinfo.h>
#include <fcntl.h>
#include <ftw.h>
#include <gnu/libc-version.h>
#include <linux/perf_event.h>
#include <asm/perf_regs.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "analysis/callgraph.h"
#include "collect/callchain.h"
#include "collect/order.h"
#include "collect/perf.h"
#include "collect/perfsample.h"
#include "core/endian.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "db/auxfile.h"
#include "db/db.h"
#include "db/stacks.h"
#include "present/draw.h"
#include "unwind/elfcfi.h"
#include "unwind/unwind.h"
#include "unwind/utable.h"

/* ---- this process's binaries ----------------------------------------------------- */

struct map {
	uint64_t start, end, pgoff;
	char path[512];
};

struct self {
	struct map maps[256];
	size_t n;
	struct utable tables[256];
	bool built[256];
};

static void read_maps(struct self *s)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];

	assert_non_null(f);
	s->n = 0;
	while (fgets(line, sizeof(line), f) && s->n < 256) {
		struct map *m = &s->maps[s->n];
		char perm[8];
		int off = 0;

		m->path[0] = '\0';
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &m->start, &m->end, perm, &m->pgoff,
			   &off) < 4 || perm[2] != 'x')
			continue;
		snprintf(m->path, sizeof(m->path), "%s", line + off);
		m->path[strcspn(m->path, "\n")] = '\0';
		s->n++;
	}
	fclose(f);
}

static int build_table(const char *path, struct utable *t)
{
	struct stat st;
	const char *why;
	void *p;
	int fd = open(path, O_RDONLY), r;

	if (fd < 0 || fstat(fd, &st))
		return -1;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	r = utable_build(p, (size_t)st.st_size, t, &why);
	munmap(p, (size_t)st.st_size);
	return r;
}

static const struct utable *self_find(void *ctx, uint64_t pc, uint64_t *offset, bool *mapped)
{
	struct self *s = ctx;

	for (size_t i = 0; i < s->n; i++) {
		struct map *m = &s->maps[i];

		if (pc < m->start || pc >= m->end)
			continue;
		*mapped = true;
		*offset = pc - m->start + m->pgoff;
		if (m->path[0] != '/')
			return NULL;
		if (!s->built[i]) {
			s->built[i] = true;
			if (build_table(m->path, &s->tables[i]))
				memset(&s->tables[i], 0, sizeof(s->tables[i]));
		}
		return s->tables[i].n ? &s->tables[i] : NULL;
	}
	*mapped = false;
	return NULL;
}

static void self_release(struct self *s)
{
	for (size_t i = 0; i < s->n; i++)
		utable_release(&s->tables[i]);
}

/* ---- unwind tables -------------------------------------------------------------------- */

static void table_of_self_and_libc(void **state)
{
	struct self *s = XNEW(struct self);
	const struct utable_row *row;
	struct utable t;
	uint64_t off = 0;
	bool mapped = false;
	const struct utable *tt;

	(void)state;
	read_maps(s);
	/* read_maps itself: at its first instruction the CFA is rsp + 8. */
	tt = self_find(s, (uint64_t)(uintptr_t)read_maps, &off, &mapped);
	assert_true(mapped);
	assert_non_null(tt);
	assert_true(tt->n > 10);
	assert_true(tt->fdes > 10);
	row = utable_find(tt, off);
	assert_non_null(row);
	assert_int_equal(row->cfa, CFI_CFA_RSP);
	assert_int_equal(row->cfa_off, 8);
	for (size_t i = 1; i < tt->n; i++)
		assert_true(tt->rows[i].start > tt->rows[i - 1].start);
	/* libc: thousands of functions, the outermost frame (clone3) marked. */
	/* (a function no sanitizer intercepts: memcpy's address is libasan's under ASan) */
	tt = self_find(s, (uint64_t)(uintptr_t)gnu_get_libc_version, &off, &mapped);
	assert_non_null(tt);
	assert_true(tt->fdes > 1000);
	/* and its signal trampoline (__restore_rt, an FDE with 'S') */
	{
		size_t n_signal = 0;

		for (size_t i = 0; i < tt->n; i++)
			n_signal += tt->rows[i].cfa == CFI_CFA_SIGNAL;
		assert_int_equal(n_signal, 1);
	}
	/* not ELF, truncated ELF */
	assert_int_equal(utable_build((const uint8_t *)"hello", 5, &t, &(const char *){ NULL }), -1);
	self_release(s);
	free(s);
}

static void table_encoding(void **state)
{
	struct self *s = XNEW(struct self);
	struct strbuf sb = STRBUF_INIT;
	const struct utable *tt;
	struct utable t;
	const char *why;
	uint64_t off;
	bool mapped;

	(void)state;
	read_maps(s);
	tt = self_find(s, (uint64_t)(uintptr_t)read_maps, &off, &mapped);
	assert_non_null(tt);
	utable_encode(tt, &sb);
	assert_int_equal(utable_decode((const uint8_t *)sb.buf, sb.len, &t, &why), 0);
	assert_int_equal(t.n, tt->n);
	assert_memory_equal(t.rows, tt->rows, t.n * sizeof(*t.rows));
	assert_int_equal(t.build_id_len, tt->build_id_len);
	utable_release(&t);
	/* a table of the older format is refused as such (to be made again) */
	memcpy(sb.buf, "UTB1", 4);
	assert_int_equal(utable_decode((const uint8_t *)sb.buf, sb.len, &t, &why), -2);
	memcpy(sb.buf, "UTB2", 4);
	/* every truncation and a shuffled row are refused */
	for (size_t cut = 0; cut < sb.len; cut += 1 + cut / 3)
		assert_int_equal(utable_decode((const uint8_t *)sb.buf, cut, &t, &why), -1);
	if (tt->n > 2) {
		uint8_t *rows = (uint8_t *)sb.buf + sb.len - 12 * tt->n;

		memcpy(rows, rows + 12, 4);
		assert_int_equal(utable_decode((const uint8_t *)sb.buf, sb.len, &t, &why), -1);
	}
	strbuf_release(&sb);
	self_release(s);
	free(s);
}

/* ---- the stack walk, against backtrace() ------------------------------------------------ */

struct snap {
	struct unwind_regs regs;
	uint8_t *stack;
	size_t size;
	void *bt[64];
	int n_bt;
};

/*
 * The raw stack as the kernel would copy it: ASan's red zones between the
 * frames' variables included, so not through the checked (intercepted)
 * memcpy.
 */
static __attribute__((noinline, no_sanitize_address)) void copy_stack(uint8_t *dst,
									 const uint8_t *src,
									 size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = ((const volatile uint8_t *)src)[i];
}

static __attribute__((noinline, noclone)) int capture(struct snap *s)
{
	pthread_attr_t a;
	void *lo;
	size_t len;
	uint64_t rsp, rbp, rip;

	__asm__ volatile("mov %%rsp, %0\n\tmov %%rbp, %1\n\tlea 0(%%rip), %2"
			 : "=r"(rsp), "=r"(rbp), "=r"(rip));
	s->regs.ip = rip;
	s->regs.sp = rsp;
	s->regs.bp = rbp;
	assert_int_equal(pthread_getattr_np(pthread_self(), &a), 0);
	assert_int_equal(pthread_attr_getstack(&a, &lo, &len), 0);
	pthread_attr_destroy(&a);
	s->size = (uint64_t)(uintptr_t)lo + len - rsp;
	if (s->size > 65536)
		s->size = 65536;
	s->stack = xmalloc(s->size);
	copy_stack(s->stack, (const uint8_t *)(uintptr_t)rsp, s->size);
	s->n_bt = backtrace(s->bt, 64);
	return s->n_bt;
}

static __attribute__((noinline, noclone)) int middle(struct snap *s, int k)
{
	int r = k ? middle(s, k - 1) : capture(s);

	__asm__ volatile("" ::: "memory");
	return r + 1;
}

static void unwind_matches_backtrace(void **state)
{
	struct self *s = XNEW(struct self);
	struct snap sn;
	struct unwind_stack stk;
	struct unwind_result *res = XNEW(struct unwind_result);
	int j;

	(void)state;
	read_maps(s);
	assert_true(middle(&sn, 5) > 5);
	stk.base = sn.regs.sp;
	stk.data = sn.stack;
	stk.size = sn.size;
	unwind_stack(&sn.regs, &stk, self_find, s, false, res);
	/*
	 * backtrace()'s frames from capture's caller on are ours from 1 on.
	 * Its first frame is in capture, or one more is first where a
	 * sanitizer intercepts backtrace() (ASan: the interceptor's).
	 */
	assert_true(res->n >= 8);
	for (j = 1; j < sn.n_bt && (uint64_t)(uintptr_t)sn.bt[j] != res->pcs[1]; j++)
		;
	assert_true(j <= 2 && j < sn.n_bt);
	assert_true((int)res->n >= sn.n_bt - j);
	for (int i = 1; i + j - 1 < sn.n_bt && i < (int)res->n; i++)
		assert_int_equal(res->pcs[i], (uint64_t)(uintptr_t)sn.bt[i + j - 1]);
	assert_int_equal(res->end, UNWIND_COMPLETE);
	/* a copy cut short: the walk says so, and keeps what it found */
	stk.size = 64;
	unwind_stack(&sn.regs, &stk, self_find, s, false, res);
	assert_int_equal(res->end, UNWIND_TRUNCATED);
	assert_true(res->n >= 1 && res->n < 8);
	/* garbage registers: a bounded, failed walk */
	sn.regs.sp += 8;
	sn.regs.ip = 0x1234;
	stk.base = sn.regs.sp;
	stk.size = sn.size - 8;
	unwind_stack(&sn.regs, &stk, self_find, s, true, res);
	assert_int_not_equal(res->end, UNWIND_COMPLETE);
	free(sn.stack);
	free(res);
	self_release(s);
	free(s);
}

/*
 * A handler's stack: the walk goes through the kernel's signal frame
 * (glibc's __restore_rt) into the code the signal interrupted, raise()'s,
 * and on to main, as libgcc's unwinder (backtrace()) does; through the
 * signal frame its pcs are one more than backtrace()'s (pcs[i] - 1 is
 * where they are).
 */
static struct snap in_handler;

static void capture_in_handler(int sig)
{
	(void)sig;
	middle(&in_handler, 2);
}

static void unwind_through_signal_frame(void **state)
{
	struct self *s = XNEW(struct self);
	struct unwind_stack stk;
	struct unwind_result *res = XNEW(struct unwind_result);
	struct sigaction sa, old;
	int j, matched = 0;

	(void)state;
	read_maps(s);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = capture_in_handler;
	assert_int_equal(sigaction(SIGUSR2, &sa, &old), 0);
	assert_int_equal(raise(SIGUSR2), 0);
	assert_int_equal(sigaction(SIGUSR2, &old, NULL), 0);
	stk.base = in_handler.regs.sp;
	stk.data = in_handler.stack;
	stk.size = in_handler.size;
	unwind_stack(&in_handler.regs, &stk, self_find, s, false, res);
	assert_int_equal(res->end, UNWIND_COMPLETE);
	/* every frame of backtrace()'s after capture's, in order, is ours (or one less) */
	for (j = 1; j < in_handler.n_bt && (uint64_t)(uintptr_t)in_handler.bt[j] != res->pcs[1]; j++)
		;
	assert_true(j <= 2 && j < in_handler.n_bt);
	for (size_t i = 1; i < res->n && j < in_handler.n_bt; i++, j++) {
		uint64_t b = (uint64_t)(uintptr_t)in_handler.bt[j];

		assert_true(res->pcs[i] == b || res->pcs[i] == b + 1);
		matched++;
	}
	assert_int_equal(j, in_handler.n_bt);
	/* capture, 3 of middle, the handler, __restore_rt, raise's and this test's frames */
	assert_true(matched >= 8);
	free(in_handler.stack);
	free(res);
	self_release(s);
	free(s);
}

/*
 * CFAs kept elsewhere than in rsp or rbp, as OpenSSL's assembly keeps them:
 * in another register (rax here), and as the entry's rsp saved in a stack
 * slot (DW_OP_breg7 N; DW_OP_deref; DW_OP_plus_uconst 8).
 */
struct walk_table {
	const struct utable *t;
};

/* A synthetic table's lookup: pcs below 0x100000 map, at their own offset. */
static const struct utable *table_find(void *ctx, uint64_t pc, uint64_t *offset, bool *mapped)
{
	const struct walk_table *w = ctx;

	*mapped = pc < 0x100000;
	*offset = pc;
	return *mapped ? w->t : NULL;
}

static void collect_row(void *ctx, const struct cfi_row *row)
{
	struct cfi_row *rows = ctx;

	for (int i = 0; i < 8; i++)
		if (!rows[i].start && !rows[i].cfa) {
			rows[i] = *row;
			return;
		}
}

static void cfa_elsewhere(void **state)
{
	/* the CIE of GCC: cfa = rsp + 8, the return address at cfa - 8 */
	static const uint8_t cie[] = { 0x0c, 0x07, 0x08, 0x90, 0x01 };
	static const uint8_t fde[] = {
		0x43,                                   /* advance 3 */
		0x0d, 0x00,                             /* def_cfa_register rax */
		0x44,                                   /* advance 4 */
		0x0f, 0x05, 0x77, 0x18, 0x06, 0x23, 0x08, /* rsp + 24; deref; + 8 */
		0x44,                                   /* advance 4 */
		0x0f, 0x03, 0x77, 0x18, 0x06,           /* no constant: not followed */
	};
	struct cfi_fde f = { 0x1000, 0x1020, fde, sizeof(fde), cie, sizeof(cie), 1, -8, 16, false };
	struct cfi_row rows[8];
	/* a walk by such rules: [leaf 0x1003 (rax)] -> 0x2004 (slot) -> 0x3000 (outermost) */
	struct utable_row trows[4] = {
		{ 0x1000, CFI_CFA_REG + 0, CFI_RBP_SAME, 0, 8 },
		{ 0x2000, CFI_CFA_DEREF_RSP, CFI_RBP_SAME, 0, 16 },
		{ 0x3000, CFI_CFA_END, CFI_RBP_SAME, 0, 0 },
	};
	struct utable t = { trows, 3, { 0 }, 0, 3, 0 };
	uint64_t stack[64] = { 0 }, base = 0x7ffd00000000ull;
	struct unwind_regs regs = { 0x1003, base, 0, { 0 }, 0 };
	struct unwind_stack stk = { base, (const uint8_t *)stack, sizeof(stack) };
	struct unwind_result *res = XNEW(struct unwind_result);
	struct walk_table wt = { &t };

	(void)state;
	memset(rows, 0, sizeof(rows));
	assert_int_equal(cfi_fde_rows(&f, collect_row, rows), 0);
	assert_int_equal(rows[0].cfa, CFI_CFA_RSP);
	assert_int_equal(rows[1].start, 0x1003);
	assert_int_equal(rows[1].cfa, CFI_CFA_REG + 0);
	assert_int_equal(rows[1].cfa_off, 8);
	assert_int_equal(rows[2].start, 0x1007);
	assert_int_equal(rows[2].cfa, CFI_CFA_DEREF_RSP);
	assert_int_equal(rows[2].cfa_off, 0x18);
	assert_int_equal(rows[3].start, 0x100b);
	assert_int_equal(rows[3].cfa, CFI_CFA_UNSUPPORTED);

	/* rax = base + 0x40: cfa = base + 0x48, the return address below it */
	regs.gpr[0] = base + 0x40;
	regs.known = 1;
	stack[0x40 / 8] = 0x2005;
	/* at sp = base + 0x48, the slot rsp + 16 holds the entry's rsp */
	stack[0x58 / 8] = base + 0x100;
	stack[0x100 / 8] = 0x3001;
	unwind_stack(&regs, &stk, table_find, &wt, false, res);
	assert_int_equal(res->end, UNWIND_COMPLETE);
	assert_int_equal(res->n, 3);
	assert_int_equal(res->pcs[1], 0x2005);
	assert_int_equal(res->pcs[2], 0x3001);
	/* rax not sampled: that rule cannot be followed */
	regs.known = 0;
	unwind_stack(&regs, &stk, table_find, &wt, false, res);
	assert_int_equal(res->end, UNWIND_UNSUPPORTED);
	assert_int_equal(res->n, 1);
	/* rbx, which a caller counts on its callees to keep, is lost past a frame */
	trows[1].cfa = CFI_CFA_REG + 3;
	trows[1].cfa_off = 8;
	regs.gpr[3] = base + 0x50;
	regs.known = 1 | 1 << 3;
	unwind_stack(&regs, &stk, table_find, &wt, false, res);
	assert_int_equal(res->end, UNWIND_UNSUPPORTED);
	assert_int_equal(res->n, 2);
	free(res);
}

/*
 * A .debug_frame as Go's linker writes it: the CIE's id all ones, the FDE's
 * CIE pointer an offset from the section's start, absolute addresses, a
 * data alignment of -4.
 */
static int take_fde(void *ctx, const struct cfi_fde *f)
{
	struct cfi_row *rows = ctx;

	assert_int_equal(f->start, 0x401000);
	assert_int_equal(f->end, 0x401059);
	assert_int_equal(cfi_fde_rows(f, collect_row, rows), 0);
	return 0;
}

static void debug_frame_walk(void **state)
{
	static const uint8_t sec[] = {
		/* CIE: length 16, id ffffffff, version 3, "", code 1, data -4, ra 16 */
		0x10, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 3, 0, 1, 0x7c, 16,
		0x0c, 0x07, 0x08,                       /* def_cfa rsp 8 */
		0x05, 0x10, 0x02, 0x00,                 /* offset_extended r16 at cfa - 8; nop */
		/* FDE: length 24, CIE at 0, start, range */
		0x18, 0, 0, 0, 0, 0, 0, 0,
		0x00, 0x10, 0x40, 0, 0, 0, 0, 0, 0x59, 0, 0, 0, 0, 0, 0, 0,
		0x4a, 0x13, 0x78,                       /* advance 10; def_cfa_offset_sf 32 (-8 * -4) */
		0x00,                                   /* nop */
		0, 0, 0, 0,                             /* terminator */
	};
	struct cfi_section s = { sec, sizeof(sec), 0, true, true, true };
	struct cfi_row rows[8];

	(void)state;
	memset(rows, 0, sizeof(rows));
	assert_int_equal(cfi_walk(&s, take_fde, rows), 0);
	assert_int_equal(rows[0].start, 0x401000);
	assert_int_equal(rows[0].cfa, CFI_CFA_RSP);
	assert_int_equal(rows[0].cfa_off, 8);
	assert_int_equal(rows[1].start, 0x40100a);
	assert_int_equal(rows[1].cfa, CFI_CFA_RSP);
	assert_int_equal(rows[1].cfa_off, 32);
	/* the same bytes read as .eh_frame: its CIE id is 0, so this is no CIE */
	s.debug_frame = false;
	assert_int_equal(cfi_walk(&s, take_fde, rows), -1);
}

/* ---- a sample's call chain, registers and stack ------------------------------------------ */

static void put64(struct strbuf *sb, uint64_t v)
{
	strbuf_add(sb, &v, 8);
}

static void sample_fields(void **state)
{
	uint64_t mask = (1ull << PERF_REG_X86_BP) | (1ull << PERF_REG_X86_SP) |
			(1ull << PERF_REG_X86_IP);
	uint64_t type = PERF_COLLECT_SAMPLE_TYPE | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
			PERF_SAMPLE_STACK_USER;
	struct strbuf sb = STRBUF_INIT;
	struct perf_sample_ext x;
	struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, 0 };

	(void)state;
	strbuf_add(&sb, &h, sizeof(h));
	for (int i = 0; i < 5; i++)
		put64(&sb, 0);                  /* id, ip, pid/tid, time, period */
	put64(&sb, 3);
	put64(&sb, PERF_CONTEXT_KERNEL);
	put64(&sb, 0xffffffff81000010ull);
	put64(&sb, 0xffffffff81000120ull);
	put64(&sb, PERF_SAMPLE_REGS_ABI_64);
	put64(&sb, 0x7ffd0000);                 /* bp */
	put64(&sb, 0x7ffc0000);                 /* sp */
	put64(&sb, 0x401000);                   /* ip */
	put64(&sb, 16);
	put64(&sb, 0x1111);
	put64(&sb, 0x2222);
	put64(&sb, 8);                          /* dyn_size */
	((struct perf_event_header *)(void *)sb.buf)->size = (uint16_t)sb.len;
	assert_int_equal(perf_sample_ext_parse(sb.buf, sb.len, type, mask, &x), 0);
	assert_int_equal(x.n_callchain, 3);
	assert_int_equal(x.regs_abi, PERF_SAMPLE_REGS_ABI_64);
	assert_int_equal(x.regs[PERF_REG_X86_SP], 0x7ffc0000);
	assert_int_equal(x.regs[PERF_REG_X86_IP], 0x401000);
	assert_int_equal(x.stack_size, 8);
	assert_int_equal(get_le64(x.stack), 0x1111);
	for (size_t cut = 48; cut < sb.len; cut += 8)
		assert_int_equal(perf_sample_ext_parse(sb.buf, cut, type, mask, &x), -1);
	/* a dyn_size larger than the copy */
	put_le64((uint8_t *)sb.buf + sb.len - 8, 17);
	assert_int_equal(perf_sample_ext_parse(sb.buf, sb.len, type, mask, &x), -1);
	strbuf_release(&sb);
}

/* A sample record with a stack copy of size bytes, dyn of them stack. */
static void stack_record(struct strbuf *sb, uint64_t size, uint64_t dyn)
{
	struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, 0 };

	strbuf_reset(sb);
	strbuf_add(sb, &h, sizeof(h));
	for (int i = 0; i < 5; i++)
		put64(sb, 0x100 + (uint64_t)i);  /* id, ip, pid/tid, time, period */
	put64(sb, 1);
	put64(sb, 0xffffffff81000010ull);
	put64(sb, PERF_SAMPLE_REGS_ABI_64);
	put64(sb, 0x7ffd0000);
	put64(sb, 0x7ffc0000);
	put64(sb, 0x401000);
	put64(sb, size);
	for (uint64_t i = 0; i < size; i++)
		strbuf_addch(sb, (char)(i < dyn ? 0x40 + i % 32 : 0xee));
	put64(sb, dyn);
	((struct perf_event_header *)(void *)sb->buf)->size = (uint16_t)sb->len;
}

/* The time queue holds a sample without the unused part of its stack copy. */
static void queue_trims_stack(void **state)
{
	uint64_t mask = (1ull << PERF_REG_X86_BP) | (1ull << PERF_REG_X86_SP) |
			(1ull << PERF_REG_X86_IP);
	uint64_t type = PERF_COLLECT_SAMPLE_TYPE | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
			PERF_SAMPLE_STACK_USER;
	struct callchain_opts o = { .mode = CALLGRAPH_DWARF, .stack_size = 8192 };
	struct callchain *cg = callchain_new(&o, NULL, NULL, true, 0);
	struct perf_sample_ext a, b;
	struct order_queue q;
	struct strbuf sb = STRBUF_INIT;
	const struct perf_event_header *h;
	const uint8_t *rec;

	(void)state;
	order_init(&q);
	stack_record(&sb, 8192, 1001);
	h = (const void *)sb.buf;
	assert_true(callchain_queue(cg, &q, 0, 7, h, type, mask));
	assert_int_equal(q.n, 1);
	rec = q.arena + q.v[0].off;
	assert_int_equal(q.v[0].len, sb.len - 8192 + 1008);
	assert_int_equal(((const struct perf_event_header *)(const void *)rec)->size, q.v[0].len);
	assert_int_equal(perf_sample_ext_parse(sb.buf, sb.len, type, mask, &a), 0);
	assert_int_equal(perf_sample_ext_parse(rec, q.v[0].len, type, mask, &b), 0);
	assert_int_equal(b.stack_size, 1001);
	assert_memory_equal(a.stack, b.stack, 1001);
	assert_int_equal(b.regs[PERF_REG_X86_SP], 0x7ffc0000);
	assert_int_equal(b.n_callchain, 1);
	assert_memory_equal(sb.buf, rec, 6);      /* the header's type and misc */
	assert_memory_equal(sb.buf + 8, rec + 8, 40);

	/* Little to drop, no stack, not a sample: the caller queues them as they are. */
	stack_record(&sb, 8192, 8192 - 512);
	assert_false(callchain_queue(cg, &q, 0, 7, (const void *)sb.buf, type, mask));
	stack_record(&sb, 0, 0);
	sb.len -= 8;                            /* no dyn_size after an empty copy */
	((struct perf_event_header *)(void *)sb.buf)->size = (uint16_t)sb.len;
	assert_false(callchain_queue(cg, &q, 0, 7, (const void *)sb.buf, type, mask));
	stack_record(&sb, 8192, 10);
	((struct perf_event_header *)(void *)sb.buf)->type = PERF_RECORD_MMAP2;
	assert_false(callchain_queue(cg, &q, 0, 7, (const void *)sb.buf, type, mask));
	assert_int_equal(q.n, 1);
	order_release(&q);
	callchain_free(cg);
	strbuf_release(&sb);
}

/* ---- the stack table ---------------------------------------------------------------------- */

static uint32_t add_stack(struct stack_table *t, const char *const *keys, const uint64_t *offs,
			  size_t n, enum stack_end end)
{
	uint32_t f[16];

	for (size_t i = 0; i < n; i++)
		f[i] = stack_table_frame(t, stack_table_image(t, keys[i]), offs[i]);
	return stack_table_stack(t, f, n, end);
}

static void fill_table(struct stack_table *t, unsigned seed)
{
	static const char *const keys[] = { "kernel", "abcdef", "abcdef", "h0123456789abcdef" };
	uint64_t offs[4] = { 0xffffffff81000010ull + seed, 0x1234, 0x2000 + seed, 77 };
	uint32_t th = stack_table_thread(t, 100, 101 + seed % 2, seed % 3 ? "gzip" : "xz");

	stack_table_add(t, add_stack(t, keys, offs, 4, STACK_END_COMPLETE), th, EVENT_CYCLES, 3);
	stack_table_add(t, add_stack(t, keys + 1, offs + 1, 3, STACK_END_TRUNCATED), th,
			EVENT_CYCLES, 1 + seed);
	stack_table_add(t, add_stack(t, keys + 1, offs + 1, 1, STACK_END_NONE), th, EVENT_IMISS, 2);
}

static void stacks_roundtrip(void **state)
{
	struct stack_table a, b, c;
	struct strbuf x = STRBUF_INIT, y = STRBUF_INIT;
	uint32_t count, count2;
	const char *why;

	(void)state;
	stack_table_init(&a);
	fill_table(&a, 0);
	fill_table(&a, 0);          /* interned: the same samples again */
	assert_int_equal(a.n_stacks, 3);
	assert_int_equal(a.n_frames, 4);
	assert_int_equal(a.n_samples, 3);
	assert_int_equal(a.total, 12);
	stack_table_encode(&a, &x, &count);
	assert_int_equal(count, 3);
	assert_int_equal(stack_table_decode(&b, x.buf, x.len, count, &why), 0);
	assert_int_equal(b.total, 12);
	stack_table_encode(&b, &y, &count2);
	assert_int_equal(x.len, y.len);
	assert_memory_equal(x.buf, y.buf, x.len);
	/* merging another table: interned again, counts added */
	stack_table_init(&c);
	fill_table(&c, 1);
	stack_table_merge(&b, &c);
	assert_int_equal(b.total, 12 + 7);
	assert_int_equal(b.n_threads, 2);
	stack_table_release(&c);
	/* every truncation, a wrong count and trailing bytes are refused */
	for (size_t cut = 0; cut < x.len; cut++)
		assert_int_equal(stack_table_decode(&c, x.buf, cut, count, &why), -1);
	assert_int_equal(stack_table_decode(&c, x.buf, x.len, count + 1, &why), -1);
	strbuf_addch(&x, 0);
	assert_int_equal(stack_table_decode(&c, x.buf, x.len, count, &why), -1);
	stack_table_release(&a);
	stack_table_release(&b);
	stack_table_release(&c);
	strbuf_release(&x);
	strbuf_release(&y);
}

/* ---- the call graph on a synthetic epoch ----------------------------------------------------- */

static char *root;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	char tmpl[] = "/tmp/dcpi-unit-cg-XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	root = xstrdup(tmpl);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(root);
	return 0;
}

#define K(n) (0xffffffff81000000ull + 0x100 * (n))
enum { P_MAIN, P_A, P_B, P_LEAF, P_X, P_Y, P_IRQ, P_IRQ2, P_F, N_P };
static const char *const pnames[N_P] = { "main", "caller_a", "caller_b", "leaf", "ping", "pong",
					  "pvm_irq_enable", "_raw_spin_unlock_irqrestore", "work" };

/* A kernel stack of procedures (leaf first), count samples. */
static void kstack(struct stack_table *t, uint32_t th, const int *p, size_t n, uint64_t count)
{
	uint32_t f[16], img = stack_table_image(t, "kernel");

	for (size_t i = 0; i < n; i++)
		f[i] = stack_table_frame(t, img, K(p[i]) + 4 + i);
	stack_table_add(t, stack_table_stack(t, f, n, STACK_END_KERNEL), th, EVENT_CYCLES, count);
}

static struct db *synthetic_epoch(uint32_t *seq)
{
	char *path = xasprintf("%s/cg", root);
	struct db *db = db_open(path, DB_CREATE | DB_NOSYNC);
	struct image_index idx = IMAGE_INDEX_INIT;
	struct strbuf ks = STRBUF_INIT;
	struct stack_table t;
	struct epoch_meta m;
	struct epoch_event *e;
	struct db_image img;
	uint32_t th;

	assert_non_null(db);
	free(path);
	epoch_meta_init(&m);
	e = epoch_meta_add_event(&m, EVENT_CYCLES);
	e->used = EVENT_CLOCK;
	e->period = 1000000;
	e->period_in_ns = true;
	assert_int_equal(db_epoch_create(db, &m), 0);
	*seq = m.seq;
	memset(&img, 0, sizeof(img));
	strcpy(img.key, "kernel");
	img.kind = IMAGE_KERNEL;
	img.path = (char *)"[kernel.kallsyms]";
	image_index_put(&idx, &img);
	assert_int_equal(db_images_store(db, *seq, &idx), 0);
	for (int i = 0; i < N_P; i++)
		strbuf_addf(&ks, "%016llx T %s\n", (unsigned long long)K(i), pnames[i]);
	strbuf_addf(&ks, "%016llx T _etext\n", (unsigned long long)K(N_P));
	assert_int_equal(db_aux_store(db, *seq, "kallsyms", ks.buf, ks.len), 0);
	stack_table_init(&t);
	th = stack_table_thread(&t, 0, 0, "swapper");
	/* leaf: 3 from caller_a, 1 from caller_b; caller_a 2 of its own */
	kstack(&t, th, (const int[]){ P_LEAF, P_A, P_MAIN }, 3, 30);
	kstack(&t, th, (const int[]){ P_LEAF, P_B, P_MAIN }, 3, 10);
	kstack(&t, th, (const int[]){ P_A, P_MAIN }, 2, 20);
	/* mutual recursion: ping -> pong -> ping -> leaf */
	kstack(&t, th, (const int[]){ P_LEAF, P_X, P_Y, P_X, P_MAIN }, 5, 8);
	/* delayed ticks: landed in the irq enabling, charged to work */
	kstack(&t, th, (const int[]){ P_IRQ, P_IRQ2, P_F, P_MAIN }, 4, 6);
	kstack(&t, th, (const int[]){ P_F, P_MAIN }, 4 - 2, 4);
	assert_int_equal(db_stacks_merge(db, *seq, &t, false), 0);
	assert_int_equal(db_epoch_close(db, *seq, 0), 0);
	stack_table_release(&t);
	strbuf_release(&ks);
	image_index_release(&idx);
	epoch_meta_release(&m);
	return db;
}

static const struct cg_entry *named(const struct callgraph *g, const char *name)
{
	for (size_t i = 0; i < g->n_entries; i++)
		if (g->entries[i].node != UINT32_MAX && !strcmp(g->sv->nodes[g->entries[i].node].name, name))
			return &g->entries[i];
	fail_msg("no entry '%s'", name);
	return NULL;
}

static const struct cg_arc *arc(const struct callgraph *g, const char *parent, const char *child)
{
	for (size_t i = 0; i < g->n_arcs; i++)
		if (!strcmp(g->sv->nodes[g->arcs[i].parent].name, parent) &&
		    !strcmp(g->sv->nodes[g->arcs[i].child].name, child))
			return &g->arcs[i];
	fail_msg("no arc %s -> %s", parent, child);
	return NULL;
}

static void callgraph_numbers(void **state)
{
	struct callgraph_opts o = CALLGRAPH_OPTS_INIT;
	struct epoch_view v;
	struct stack_view sv;
	struct callgraph g;
	uint32_t seq;
	struct db *db = synthetic_epoch(&seq);
	const struct cg_entry *e;

	(void)state;
	assert_int_equal(epoch_view_open(&v, db, NULL, NULL), 0);
	assert_int_equal(stack_view_open(&sv, &v), 0);
	assert_int_equal(callgraph_build(&g, &sv, &o), 0);
	assert_int_equal(g.samples, 78);
	assert_int_equal(g.delayed, 6);
	e = named(&g, "main");
	assert_int_equal(e->total, 78);
	assert_int_equal(e->self, 0);
	assert_int_equal(e->index, 1);
	e = named(&g, "leaf");
	assert_int_equal(e->self, 48);
	assert_int_equal(e->total, 48);
	/* the 3:1 split of the leaf between its callers, exact */
	assert_int_equal(arc(&g, "caller_a", "leaf")->samples, 30);
	assert_int_equal(arc(&g, "caller_b", "leaf")->samples, 10);
	assert_int_equal(arc(&g, "main", "caller_a")->samples, 50);
	assert_int_equal(arc(&g, "main", "caller_a")->self, 20);
	/* the delayed ticks went to work, not to the irq enabling procedures */
	e = named(&g, "work");
	assert_int_equal(e->self, 10);
	assert_int_equal(e->delayed, 6);
	for (size_t i = 0; i < g.n_entries; i++)
		assert_true(g.entries[i].node == UINT32_MAX ||
			    !sv.nodes[g.entries[i].node].irq_enable);
	/* ping and pong form a cycle; its total counts each sample once */
	assert_int_equal(g.n_cycles, 1);
	assert_int_equal(named(&g, "ping")->cycle, 1);
	assert_int_equal(named(&g, "pong")->cycle, 1);
	assert_int_equal(named(&g, "ping")->total, 8);
	for (size_t i = 0; i < g.n_entries; i++)
		if (g.entries[i].node == UINT32_MAX)
			assert_int_equal(g.entries[i].total, 8);
	assert_false(callgraph_call_counts(&g));
	callgraph_release(&g);
	/* the prompt and delayed listings */
	o.ticks = CG_TICKS_PROMPT;
	assert_int_equal(callgraph_build(&g, &sv, &o), 0);
	assert_int_equal(g.samples, 72);
	assert_int_equal(named(&g, "work")->self, 4);
	callgraph_release(&g);
	o.ticks = CG_TICKS_DELAYED;
	assert_int_equal(callgraph_build(&g, &sv, &o), 0);
	assert_int_equal(g.samples, 6);
	assert_int_equal(named(&g, "work")->self, 6);
	callgraph_release(&g);
	stack_view_release(&sv);
	epoch_view_release(&v);
	db_close(db);
}

static void callgraph_listing(void **state)
{
	struct callgraph_opts o = CALLGRAPH_OPTS_INIT;
	struct epoch_view v;
	struct stack_view sv;
	struct callgraph g;
	struct json_writer w;
	struct draw d;
	char *buf = NULL;
	size_t len = 0;
	uint32_t seq;
	struct db *db = synthetic_epoch(&seq);
	FILE *f;

	(void)state;
	assert_int_equal(epoch_view_open(&v, db, NULL, NULL), 0);
	assert_int_equal(stack_view_open(&sv, &v), 0);
	assert_int_equal(callgraph_build(&g, &sv, &o), 0);
	f = open_memstream(&buf, &len);
	draw_init_file(&d, f, 0);
	callgraph_draw(&g, &d, NULL, 0);
	callgraph_draw_flat(&g, &d, NULL, 0, "Flat:", NULL);
	callgraph_draw_index(&g, &d);
	assert_int_equal(draw_file_finish(&d), 0);
	json_init(&w, f, false);
	callgraph_json(&g, &w, NULL, 0);
	assert_int_equal(json_finish(&w), 0);
	fclose(f);
	assert_non_null(strstr(buf, "<cycle 1 as a whole>"));
	assert_non_null(strstr(buf, "ping <cycle 1>"));
	assert_non_null(strstr(buf, "<spontaneous>"));
	assert_non_null(strstr(buf, "Index by procedure name:"));
	assert_non_null(strstr(buf, "[1] main"));
	assert_non_null(strstr(buf, "\"procedure\":\"leaf\""));
	assert_non_null(strstr(buf, "\"parents\":[{\"procedure\":\"caller_a\""));
	assert_non_null(strstr(buf, "\"called\":null"));
	free(buf);
	callgraph_release(&g);
	stack_view_release(&sv);
	epoch_view_release(&v);
	db_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table_of_self_and_libc),
		cmocka_unit_test(table_encoding),
		cmocka_unit_test(unwind_matches_backtrace),
		cmocka_unit_test(unwind_through_signal_frame),
		cmocka_unit_test(cfa_elsewhere),
		cmocka_unit_test(debug_frame_walk),
		cmocka_unit_test(sample_fields),
		cmocka_unit_test(queue_trims_stack),
		cmocka_unit_test(stacks_roundtrip),
		cmocka_unit_test(callgraph_numbers),
		cmocka_unit_test(callgraph_listing),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
