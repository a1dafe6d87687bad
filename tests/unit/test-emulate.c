/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the burst emulator (collect/emu-engine.h) and its protocol
 * (collect/emu-proto.h): small pieces of code in this process's memory,
 * followed in the engine with a pager that reads this process; the paths,
 * values, conflicts and ends they give; a trail matched through later
 * states of a loop; a burst that reads the memory copied at its stop;
 * every message encoded and decoded, damage refused.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
#include <cmocka.h>

#include "collect/emu-engine.h"
#include "collect/emu-proto.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

/* The pager: this process's own memory, as the collector reads the traced one. */
static unsigned fetched;

static int self_fetch(void *ctx, struct emu_engine *e, const uint64_t *addr, size_t n)
{
	static uint8_t buf[EMU_PAGE_SIZE];

	(void)ctx;
	for (size_t i = 0; i < n; i++) {
		struct iovec l = { buf, EMU_PAGE_SIZE }, r = { (void *)addr[i], EMU_PAGE_SIZE };

		fetched++;
		if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) == EMU_PAGE_SIZE)
			emu_engine_fill(e, addr[i], buf);
		else
			emu_engine_fill(e, addr[i], NULL);
	}
	return 0;
}

/* The reader: fd 9 is a file whose bytes at 100.. are "0123456789abcdef..." */
static uint64_t read_at;

static int64_t self_read(void *ctx, uint32_t fd, uint64_t offset, uint64_t count, uint8_t *buf)
{
	static const char text[] = "0123456789abcdefghijklmnopqrstuv";

	(void)ctx;
	if (fd != 9 || offset < 100)
		return -1;
	read_at = offset;
	for (uint64_t i = 0; i < count; i++)
		buf[i] = (uint8_t)text[(offset - 100 + i) % 32];
	return (int64_t)count;
}

static const struct emu_pager pager = { self_fetch, self_read, NULL };

/* A page holding code (never run here: only the emulator reads it), then data. */
#define CODE_PAGES 4

static uint8_t *code_page(const uint8_t *code, size_t len)
{
	uint8_t *p = mmap(NULL, CODE_PAGES * EMU_PAGE_SIZE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	memset(p, 0xcc, EMU_PAGE_SIZE);        /* int3: a fault past the end */
	memcpy(p, code, len);
	return p;
}

static void burst_at(struct emu_burst_req *req, const uint8_t *code, uint32_t limit)
{
	/* page-aligned, whole pages on each side of rsp: a test may copy them */
	static uint64_t stack[3 * EMU_PAGE_SIZE / 8] __attribute__((aligned(EMU_PAGE_SIZE)));

	memset(req, 0, sizeof(*req));
	req->space = 1;
	req->st.rip = (uint64_t)code;
	req->st.regs[VREG_RSP] = (uint64_t)&stack[512];
	req->st.regs[VREG_RDI] = (uint64_t)code + EMU_PAGE_SIZE;
	req->st.regs[VREG_RFLAGS] = 0x202;
	req->st.mxcsr = 0x1f80;
	req->st.fcw = 0x37f;
	req->limit = limit;
	req->time_us = 2000000;
}

static const struct emu_block_rec *block_at(const struct emu_result *r, uint64_t pc)
{
	for (size_t i = 0; i < r->n_blocks; i++)
		if (r->blocks[i].pc == pc)
			return &r->blocks[i];
	return NULL;
}

static uint64_t edge(const struct emu_result *r, uint64_t from, uint64_t to)
{
	for (size_t i = 0; i < r->n_edges; i++)
		if (r->edges[i].from == from && r->edges[i].to == to)
			return r->edges[i].count;
	return 0;
}

/* xor eax,eax; 1: add rax,1; cmp rax,1000; jne 1b; syscall */
static const uint8_t counted_loop[] = {
	0x31, 0xc0, 0x48, 0x83, 0xc0, 0x01, 0x48, 0x3d, 0xe8, 0x03, 0x00, 0x00, 0x75, 0xf4,
	0x0f, 0x05,
};

static void a_counted_loop_to_its_system_call(void **state)
{
	uint8_t *code = code_page(counted_loop, sizeof(counted_loop));
	uint64_t base = (uint64_t)code;
	struct emu_engine *e;
	struct emu_burst_req req;
	struct emu_result r;
	const struct emu_block_rec *loop;
	bool wrote_one = false;

	(void)state;
	assert_int_equal(emu_engine_setup(), 0);
	e = emu_engine_new(1, &pager);
	assert_non_null(e);
	burst_at(&req, code, 100000);
	req.detail = 64;
	req.trace = 16;
	emu_engine_burst(e, &req, &r);
	assert_int_equal(r.end, PATHS_END_SYSCALL);
	assert_true(r.end_pc == base + 14);
	/* 1 xor, 1000 x (add, cmp, jne); the system call is not followed. */
	assert_int_equal(r.insns, 3001);
	loop = block_at(&r, base + 2);
	assert_non_null(loop);
	assert_true(loop->insns == 3 && loop->bytes == 12 && loop->count == 999);
	assert_int_equal(edge(&r, base + 12, base + 2), 999);
	assert_int_equal(edge(&r, base + 12, base + 14), 1);
	/* In detail: the first 64 instructions and what they wrote. */
	assert_int_equal(r.detailed, 64);
	assert_int_equal(r.n_steps, 16);
	assert_true(r.steps[0].pc == base && r.steps[1].pc == base + 2 && r.steps[2].regs[VREG_RAX] == 1);
	for (size_t i = 0; i < r.n_values; i++) {
		assert_true(r.values[i].reg == VREG_RAX);
		if (r.values[i].pc == base + 2 && r.values[i].value == 1)
			wrote_one = true;
		if (r.values[i].pc == base)
			assert_true(r.values[i].value == 0 && r.values[i].count == 1);
	}
	assert_true(wrote_one);
	emu_result_release(&r);
	/* The same again, up to a limit: a block that would pass it is not run. */
	burst_at(&req, code, 1000);
	emu_engine_burst(e, &req, &r);
	assert_int_equal(r.end, PATHS_END_LIMIT);
	assert_true(r.insns <= 1000 && r.insns > 990);
	assert_int_equal(r.detailed, 0);
	emu_result_release(&r);
	emu_engine_free(e);
	munmap(code, CODE_PAGES * EMU_PAGE_SIZE);
}

/*
 * 1: mov [rdi],eax; mov rcx,[rdi]; mov [rdi+8],ecx; mov rdx,[rdi+0x1008]; inc eax;
 *    cmp eax,200; jne 1b; int3
 */
static const uint8_t conflicts[] = {
	0x89, 0x07, 0x48, 0x8b, 0x0f, 0x89, 0x4f, 0x08, 0x48, 0x8b, 0x97, 0x08, 0x10, 0x00,
	0x00, 0xff, 0xc0, 0x3d, 0xc8, 0x00, 0x00, 0x00, 0x75, 0xe8, 0xcc,
};

static void memory_ordering_conflicts_in_detail(void **state)
{
	uint8_t *code = code_page(conflicts, sizeof(conflicts));
	uint64_t base = (uint64_t)code, forward = 0, alias = 0;
	struct emu_engine *e;
	struct emu_burst_req req;
	struct emu_result r;

	(void)state;
	assert_int_equal(emu_engine_setup(), 0);
	e = emu_engine_new(2, &pager);
	burst_at(&req, code, 100000);
	/* The load 4096 bytes after a store needs its page: the data page's neighbour. */
	req.st.regs[VREG_RDI] = (uint64_t)code + EMU_PAGE_SIZE + 0x800;
	req.detail = 1000;
	emu_engine_burst(e, &req, &r);
	assert_int_equal(r.end, PATHS_END_FAULT);       /* the int3 */
	for (size_t i = 0; i < r.n_conflicts; i++) {
		const struct emu_conflict_rec *c = &r.conflicts[i];

		if (c->kind == PATHS_STORE_FORWARD && c->load == base + 2 && c->store == base)
			forward = c->count;
		if (c->kind == PATHS_ALIAS_4K && c->load == base + 8 && c->store == base + 5)
			alias = c->count;
	}
	/* 4-byte store, 8-byte load of it: each of the iterations in detail. */
	assert_true(forward >= 100);
	assert_true(alias >= 100);
	emu_result_release(&r);
	emu_engine_free(e);
	munmap(code, CODE_PAGES * EMU_PAGE_SIZE);
}

/*
 * mov ecx,0xff0f; popcnt rax,rcx; mov rbx,rax; vmovdqu ymm0,[rdi];
 * vpcmpeqb ymm1,ymm0,ymm0; vpmovmskb edx,ymm1; mov rsi,rdx; vaddps ymm0,ymm1,ymm2
 */
static const uint8_t missing[] = {
	0xb9, 0x0f, 0xff, 0x00, 0x00, 0xf3, 0x48, 0x0f, 0xb8, 0xc1, 0x48, 0x89, 0xc3,
	0xc5, 0xfe, 0x6f, 0x07, 0xc5, 0xfd, 0x74, 0xc8, 0xc5, 0xfd, 0xd7, 0xd1, 0x48, 0x89, 0xd6,
	0xc5, 0xf4, 0x58, 0xc2,
};

/* The value instruction pc wrote to register reg in a burst's detail, or -1. */
static int64_t written(const struct emu_result *r, uint64_t pc, unsigned reg)
{
	for (size_t i = 0; i < r->n_values; i++)
		if (r->values[i].pc == pc && r->values[i].reg == reg)
			return (int64_t)r->values[i].value;
	return -1;
}

static void instructions_the_emulator_lacks(void **state)
{
	uint8_t *code = code_page(missing, sizeof(missing));
	uint64_t base = (uint64_t)code;
	struct emu_engine *e;
	struct emu_burst_req req;
	struct emu_result r;

	(void)state;
	assert_int_equal(emu_engine_setup(), 0);
	e = emu_engine_new(3, &pager);
	burst_at(&req, code, 1000);
	req.detail = 100;
	emu_engine_burst(e, &req, &r);
	/* popcnt and the AVX2 ones are done in software; vaddps is not: named. */
	assert_int_equal(r.end, PATHS_END_UNSUPPORTED);
	assert_true(r.end_pc == base + 28);
	assert_string_equal(r.mnemonic, "vaddps");
	assert_int_equal(r.insns, 7);
	assert_true(written(&r, base + 10, VREG_RBX) == 12);
	assert_true(written(&r, base + 25, VREG_RSI) == 0xffffffff);
	emu_result_release(&r);
	emu_engine_free(e);
	munmap(code, CODE_PAGES * EMU_PAGE_SIZE);
}

/*
 * glibc's AVX-512 memcmp for short strings (its bytes, from libc.so.6):
 * mov ecx,-1; mov edx,10; bzhi ecx,ecx,edx; kmovd k2,ecx;
 * vmovdqu8 ymm18{k2},[rsi]; vpcmpnequb k1{k2},ymm18,[rdi]; kmovd eax,k1;
 * mov rbx,rax; int3.  The masked load reads the 10 bytes selected only:
 * those are the last of the mapping, the next page is nobody's.
 */
static const uint8_t memcmp_evex[] = {
	0xb9, 0xff, 0xff, 0xff, 0xff, 0xba, 0x0a, 0x00, 0x00, 0x00, 0xc4, 0xe2, 0x68, 0xf5, 0xc9,
	0xc5, 0xfb, 0x92, 0xd1, 0x62, 0xe1, 0x7f, 0x2a, 0x6f, 0x16, 0x62, 0xf3, 0x6d, 0x22, 0x3e,
	0x0f, 0x04, 0xc5, 0xfb, 0x93, 0xc1, 0x48, 0x89, 0xc3, 0xcc,
};

static void glibc_memcmp_in_avx512(void **state)
{
	uint8_t *code = code_page(memcmp_evex, sizeof(memcmp_evex));
	uint64_t base = (uint64_t)code;
	uint8_t *s1 = code + 2 * EMU_PAGE_SIZE, *s2 = code + CODE_PAGES * EMU_PAGE_SIZE - 10;
	struct emu_engine *e;
	struct emu_burst_req req;
	struct emu_result r;

	(void)state;
	memcpy(s1, "abcdefgXij", 10);
	memcpy(s2, "abcdefghij", 10);
	assert_int_equal(emu_engine_setup(), 0);
	e = emu_engine_new(6, &pager);
	burst_at(&req, code, 1000);
	req.st.regs[VREG_RSI] = (uint64_t)s2;
	req.st.regs[VREG_RDI] = (uint64_t)s1;
	req.detail = 100;
	emu_engine_burst(e, &req, &r);
	assert_int_equal(r.end, PATHS_END_FAULT);
	assert_int_equal(r.insns, 8);
	/* The first difference is byte 7. */
	assert_true(written(&r, base + 36, VREG_RBX) == 0x80);
	emu_result_release(&r);
	emu_engine_free(e);
	munmap(code, CODE_PAGES * EMU_PAGE_SIZE);
}

/* mov rax,[rsi]; nop (rsi: an address nobody maps) */
static const uint8_t unreadable[] = { 0x48, 0x8b, 0x06, 0x90, 0xcc };

static void an_unreadable_page_ends_the_burst(void **state)
{
	uint8_t *code = code_page(unreadable, sizeof(unreadable));
	struct emu_engine *e;
	struct emu_burst_req req;
	struct emu_result r;

	(void)state;
	assert_int_equal(emu_engine_setup(), 0);
	e = emu_engine_new(4, &pager);
	burst_at(&req, code, 1000);
	req.st.regs[VREG_RSI] = 0x10;
	emu_engine_burst(e, &req, &r);
	assert_int_equal(r.end, PATHS_END_UNREADABLE);
	assert_int_equal(r.insns, 0);
	emu_result_release(&r);
	/* And the engine goes on with the next burst as usual. */
	burst_at(&req, code, 1000);
	req.st.regs[VREG_RSI] = (uint64_t)code;
	emu_engine_burst(e, &req, &r);
	assert_int_equal(r.end, PATHS_END_FAULT);
	assert_int_equal(r.insns, 2);
	emu_result_release(&r);
	emu_engine_free(e);
	munmap(code, CODE_PAGES * EMU_PAGE_SIZE);
}

/* The trail's point k from a raw step, in code [lo, hi). */
static void point_from(struct emu_trail_point *p, const struct emu_step *s, uint64_t lo, uint64_t hi)
{
	memset(p, 0, sizeof(*p));
	p->p.rip = s->pc;
	memcpy(p->p.regs, s->regs, sizeof(p->p.regs));
	p->lo = lo;
	p->hi = hi;
}

/*
 * A trail: a burst prepared at its stop, then followed through later
 * states of the loop in turn, the instructions between each two counted
 * exactly, the blocks from the point asked for on; points within the
 * burst's own part are passed too.
 */
static void a_trail_through_later_states(void **state)
{
	uint8_t *code = code_page(counted_loop, sizeof(counted_loop));
	uint64_t base = (uint64_t)code;
	struct emu_engine *e;
	struct emu_burst_req req;
	struct emu_trail_point pts[4];
	struct emu_trail_req t;
	struct emu_trail_result tr;
	struct emu_result r, trace;

	(void)state;
	assert_int_equal(emu_engine_setup(), 0);
	e = emu_engine_new(5, &pager);
	/* The states along the way (the raw steps of a burst in detail). */
	burst_at(&req, code, 100000);
	req.detail = 3001;
	req.trace = 3001;
	emu_engine_burst(e, &req, &trace);
	assert_int_equal(trace.n_steps, 3001);
	point_from(&pts[0], &trace.steps[400], base, base + 2);     /* "here": the first two bytes only */
	point_from(&pts[1], &trace.steps[1000], base, base + 16);
	point_from(&pts[2], &trace.steps[1900], base, base + 16);
	point_from(&pts[3], &trace.steps[2500], base, base + 16);
	memset(&t, 0, sizeof(t));
	t.n = 4;
	t.pt = pts;
	t.count_from = 1;
	t.limit = 100000;
	t.segment = 100000;
	t.time_us = 2000000;
	/* A burst of 100 instructions, in detail for 10, prepared; then followed with its trail. */
	burst_at(&req, code, 100);
	req.detail = 10;
	req.keep = true;
	emu_engine_prepare(e, &req);
	assert_true(emu_engine_prepared(e));
	emu_engine_follow(e, &t, &r, &tr);
	assert_false(emu_engine_prepared(e));
	assert_int_equal(r.end, PATHS_END_LIMIT);
	assert_int_equal(r.insns, 100);
	assert_int_equal(r.detailed, 10);
	emu_result_release(&r);
	assert_int_equal(tr.matched, 4);
	assert_int_equal(tr.to_first, 400);
	assert_true(tr.at[1] == 600 && tr.at[2] == 1500 && tr.at[3] == 2100);
	/* nothing of the loop is in [base, base + 2) but xor's block: none of window 0 */
	assert_true(tr.here[1] <= 3 && tr.here[2] == 900 && tr.here[3] == 600);
	/* the blocks counted from point 1 on: 1500 instructions, 500 iterations */
	assert_true(tr.n_blocks >= 1);
	{
		uint64_t held = 0;

		for (size_t i = 0; i < tr.n_blocks; i++)
			held += tr.blocks[i].count * tr.blocks[i].insns;
		/* a block a point is in counts whole in the segment it began in: 3 more a point at most */
		assert_true(held >= 1500 && held <= 1509);
	}
	emu_trail_result_release(&tr);
	/* Points within the burst's part: passed on the way, the burst goes on to its limit. */
	burst_at(&req, code, 1200);
	req.keep = true;
	emu_engine_prepare(e, &req);
	emu_engine_follow(e, &t, &r, &tr);
	/* its limit at a block's end, whose boundaries the points moved */
	assert_true(r.insns >= 1197 && r.insns <= 1200);
	{
		uint64_t held = 0;

		for (size_t i = 0; i < r.n_blocks; i++)
			held += r.blocks[i].count * r.blocks[i].insns;
		assert_true(held >= r.insns && held <= r.insns + 6);
	}
	assert_int_equal(tr.matched, 4);
	assert_true(tr.to_first == 400 && tr.at[3] == 2100);
	emu_result_release(&r);
	emu_trail_result_release(&tr);
	/* Nothing prepared: the trail is lost; a state never reached: the points before it. */
	emu_engine_follow(e, &t, &r, &tr);
	assert_int_equal(tr.matched, 0);
	assert_int_equal(tr.miss, PATHS_MISS_LOST);
	emu_result_release(&r);
	emu_trail_result_release(&tr);
	burst_at(&req, code, 100);
	req.keep = true;
	emu_engine_prepare(e, &req);
	pts[2].p.regs[VREG_RBX] = 42;
	emu_engine_follow(e, &t, &r, &tr);
	emu_result_release(&r);
	assert_int_equal(tr.matched, 2);
	assert_int_equal(tr.miss, PATHS_MISS_SYSCALL);
	assert_true(tr.at[1] == 600);
	emu_trail_result_release(&tr);
	/*
	 * Points a sampling period apart: the emulation runs to near the next
	 * one without its hook (3/4 of the shortest period yet); a period much
	 * shorter than the others misses its point, and the trail ends there.
	 */
	point_from(&pts[0], &trace.steps[400], base, base + 16);
	point_from(&pts[1], &trace.steps[1000], base, base + 16);
	point_from(&pts[2], &trace.steps[1600], base, base + 16);
	point_from(&pts[3], &trace.steps[2200], base, base + 16);
	pts[2].flags = pts[3].flags = EMU_POINT_PERIOD;
	burst_at(&req, code, 100);
	req.keep = true;
	emu_engine_prepare(e, &req);
	emu_engine_follow(e, &t, &r, &tr);
	emu_result_release(&r);
	assert_int_equal(tr.matched, 4);
	assert_true(tr.at[3] == 1800);
	emu_trail_result_release(&tr);
	point_from(&pts[3], &trace.steps[1900], base, base + 16);
	pts[3].flags = EMU_POINT_PERIOD;
	emu_engine_prepare(e, &req);
	emu_engine_follow(e, &t, &r, &tr);
	emu_result_release(&r);
	assert_int_equal(tr.matched, 3);
	emu_trail_result_release(&tr);
	/* A first point where the thread stood at the stop (a sample due as it was let go): there. */
	point_from(&pts[0], &trace.steps[0], base, base + 16);
	point_from(&pts[1], &trace.steps[1000], base, base + 16);
	point_from(&pts[2], &trace.steps[1600], base, base + 16);
	point_from(&pts[3], &trace.steps[2200], base, base + 16);
	emu_engine_prepare(e, &req);
	emu_engine_follow(e, &t, &r, &tr);
	emu_result_release(&r);
	assert_int_equal(tr.matched, 4);
	assert_true(tr.to_first == 0 && tr.at[1] == 1000 && tr.at[3] == 2200);
	emu_trail_result_release(&tr);
	/*
	 * A second point in that same state: which pass is meant cannot be
	 * told, and nothing ran; the burst's end is still one the protocol
	 * carries (it was -1, and its answer refused as garbage).
	 */
	point_from(&pts[1], &trace.steps[0], base, base + 16);
	emu_engine_prepare(e, &req);
	emu_engine_follow(e, &t, &r, &tr);
	assert_int_equal(tr.matched, 1);
	assert_int_equal(tr.miss, PATHS_MISS_AMBIGUOUS);
	assert_true(r.end < PATHS_END__COUNT);
	emu_result_release(&r);
	emu_trail_result_release(&tr);
	emu_result_release(&trace);
	emu_engine_free(e);
	munmap(code, CODE_PAGES * EMU_PAGE_SIZE);
}

/*
 * A trail passes a read of a file it knows: the bytes the thread read
 * (the file at its position), where it read them; a read of a file it does
 * not know ends it and names the descriptor.
 */
static void a_trail_passes_a_read(void **state)
{
	/* mov edi,9; lea rsi,[rip+0xff4]; mov edx,16; xor eax,eax; syscall; mov rax,[rsi]; nop; syscall */
	static const uint8_t prog[] = {
		0xbf, 0x09, 0x00, 0x00, 0x00, 0x48, 0x8d, 0x35, 0xf4, 0x0f, 0x00, 0x00,
		0xba, 0x10, 0x00, 0x00, 0x00, 0x31, 0xc0, 0x0f, 0x05, 0x48, 0x8b, 0x06,
		0x90, 0x0f, 0x05,
	};
	uint8_t *code = code_page(prog, sizeof(prog));
	uint64_t base = (uint64_t)code;
	struct emu_engine *e;
	struct emu_burst_req req;
	struct emu_trail_point pt;
	struct emu_trail_req t;
	struct emu_trail_result tr;
	struct emu_result r;

	(void)state;
	assert_int_equal(emu_engine_setup(), 0);
	e = emu_engine_new(11, &pager);
	burst_at(&req, code, 1000);
	req.keep = true;
	req.n_files = 1;
	req.files[0] = (struct emu_file){ 9, 100 };
	memset(&pt, 0, sizeof(pt));
	pt.p.rip = base + 0x18;
	memcpy(pt.p.regs, req.st.regs, sizeof(pt.p.regs));
	pt.p.regs[VREG_RDI] = 9;
	pt.p.regs[VREG_RSI] = base + 0x1000;
	pt.p.regs[VREG_RDX] = 16;
	memcpy(&pt.p.regs[VREG_RAX], "01234567", 8);
	pt.p.regs[VREG_RCX] = base + 0x15;
	pt.p.regs[VREG_R11] = 0x246;
	pt.lo = base, pt.hi = base + 64;
	memset(&t, 0, sizeof(t));
	t.n = 1, t.pt = &pt, t.limit = 10000, t.segment = 10000, t.time_us = 2000000;
	emu_engine_prepare(e, &req);
	read_at = 0;
	emu_engine_follow(e, &t, &r, &tr);
	assert_int_equal(read_at, 100);
	assert_int_equal(tr.matched, 1);
	assert_int_equal(tr.read_fd, -1);
	emu_result_release(&r);
	emu_trail_result_release(&tr);
	/* the file unknown: the trail ends at the read, which says its fd */
	req.n_files = 0;
	emu_engine_prepare(e, &req);
	emu_engine_follow(e, &t, &r, &tr);
	assert_int_equal(tr.matched, 0);
	assert_int_equal(tr.miss, PATHS_MISS_SYSCALL);
	assert_int_equal(tr.read_fd, 9);
	assert_string_equal(tr.mnemonic, "syscall-0");
	emu_result_release(&r);
	emu_trail_result_release(&tr);
	emu_engine_free(e);
	munmap(code, CODE_PAGES * EMU_PAGE_SIZE);
}

/*
 * Memory as it was at the stop: a burst given a copy of a page reads the
 * copy, not the page as the process has it now, and says it read nothing
 * live; without the copy it reads the page now, and says so.
 */
static void a_burst_reads_the_copy_made_at_the_stop(void **state)
{
	/* mov rax, [rdi]; syscall */
	static const uint8_t load[] = { 0x48, 0x8b, 0x07, 0x0f, 0x05 };
	uint8_t *code = code_page(load, sizeof(load));
	uint8_t copy[EMU_PAGE_SIZE];
	struct emu_page snap[3];
	struct emu_engine *e;
	struct emu_burst_req req;
	struct emu_result r;
	uint64_t sp;

	(void)state;
	assert_int_equal(emu_engine_setup(), 0);
	e = emu_engine_new(9, &pager);
	*(uint64_t *)(code + EMU_PAGE_SIZE) = 1111;     /* the page "now" */
	memset(copy, 0, sizeof(copy));
	*(uint64_t *)copy = 2222;                       /* the page "at the stop" */
	burst_at(&req, code, 100);
	req.detail = 10;
	req.trace = 10;
	sp = req.st.regs[VREG_RSP] & ~(uint64_t)(EMU_PAGE_SIZE - 1);
	/* the copy holds the data page and the stack's two pages */
	snap[0] = (struct emu_page){ (uint64_t)code + EMU_PAGE_SIZE, true, copy };
	snap[1] = (struct emu_page){ sp, true, (const uint8_t *)sp };
	snap[2] = (struct emu_page){ sp + EMU_PAGE_SIZE, true, (const uint8_t *)(sp + EMU_PAGE_SIZE) };
	if (snap[0].addr > snap[1].addr) {
		struct emu_page t = snap[0];

		snap[0] = snap[1], snap[1] = snap[2], snap[2] = t;
	}
	req.snap = snap;
	req.n_snap = 3;
	emu_engine_burst(e, &req, &r);
	assert_int_equal(r.end, PATHS_END_SYSCALL);
	/* what the load wrote */
	assert_int_equal(r.n_values, 1);
	assert_int_equal(r.values[0].value, 2222);
	assert_int_equal(r.live, 0);
	/* the page of the copy it used is in its working set: the next stop copies it again */
	{
		bool named = false;

		for (size_t i = 0; i < r.n_working; i++)
			named |= r.working[i] == (uint64_t)code + EMU_PAGE_SIZE;
		assert_true(named);
	}
	emu_result_release(&r);
	/* without it: the page as it is now, read live */
	req.snap = NULL;
	req.n_snap = 0;
	emu_engine_burst(e, &req, &r);
	assert_int_equal(r.n_values, 1);
	assert_int_equal(r.values[0].value, 1111);
	assert_true(r.live >= 1);
	assert_true(r.n_working >= 1);
	emu_result_release(&r);
	emu_engine_free(e);
	munmap(code, CODE_PAGES * EMU_PAGE_SIZE);
}

/* ---- the protocol ------------------------------------------------------------------ */

static void messages_round_trip_and_damage(void **state)
{
	struct strbuf sb = STRBUF_INIT, sb2 = STRBUF_INIT;
	struct emu_burst_req req, req2;
	struct emu_result r, r2;
	struct emu_header h;
	struct emu_block_rec blocks[2] = { { 0x401000, 12, 3, 999 }, { 0x401010, 2, 1, 1 } };
	struct emu_edge_rec edges[1] = { { 0x40100c, 0x401000, 998 } };
	struct emu_value_rec values[1] = { { 0x401002, VREG_RAX, 7, 3 } };
	struct emu_step steps[1] = { { 0x401000, { 1, 2, 3 } } };
	uint8_t page[EMU_PAGE_SIZE];
	struct emu_page pages[2] = { { 0x7000, true, page }, { 0x8000, false, NULL } }, got[EMU_MAX_SNAP];
	struct emu_page snaps[2] = { { 0x7000, true, page }, { 0x9000, true, page } };
	uint64_t addrs[3] = { 0x1000, 0x7fff0000, 0x2000 }, back[4];
	const char *why;
	size_t n;

	(void)state;
	burst_at(&req, (const uint8_t *)0x401000, 10000);
	req.detail = 256, req.trace = 100, req.keep = true, req.st.xmm[3][5] = 9;
	emu_encode_burst(&sb, 7, &req);
	assert_int_equal(emu_header_decode(sb.buf, EMU_REQ_MAGIC, &h), 0);
	assert_true(h.type == EMU_MSG_BURST && h.seq == 7 && h.len == sb.len - EMU_HEADER_SIZE);
	assert_int_equal(emu_decode_burst(sb.buf + EMU_HEADER_SIZE, h.len, &req2, got, &why), 0);
	assert_memory_equal(&req, &req2, sizeof(req));
	for (size_t len = 0; len < h.len; len++)
		assert_int_equal(emu_decode_burst(sb.buf + EMU_HEADER_SIZE, len, &req2, got, &why), -1);
	/* with its copy of memory: pages in order, each once */
	memset(page, 0x5a, sizeof(page));
	req.snap = snaps, req.n_snap = 2;
	strbuf_reset(&sb);
	emu_encode_burst(&sb, 7, &req);
	assert_int_equal(emu_decode_burst(sb.buf + EMU_HEADER_SIZE, sb.len - EMU_HEADER_SIZE, &req2,
					  got, &why), 0);
	assert_true(req2.n_snap == 2 && req2.snap[1].addr == 0x9000 && req2.snap[1].data[7] == 0x5a);
	snaps[1].addr = 0x7000;
	strbuf_reset(&sb);
	emu_encode_burst(&sb, 7, &req);
	assert_int_equal(emu_decode_burst(sb.buf + EMU_HEADER_SIZE, sb.len - EMU_HEADER_SIZE, &req2,
					  got, &why), -1);
	assert_string_equal(why, "bad snapshot page");
	req.snap = NULL, req.n_snap = 0;
	assert_int_equal(emu_header_decode(sb.buf, EMU_REP_MAGIC, &h), -1);
	req.trace = req.detail + 1;
	strbuf_reset(&sb);
	emu_encode_burst(&sb, 7, &req);
	assert_int_equal(emu_decode_burst(sb.buf + EMU_HEADER_SIZE, sb.len - EMU_HEADER_SIZE, &req2,
					  got, &why), -1);
	assert_string_equal(why, "bad burst limits");

	memset(page, 0x5a, sizeof(page));
	strbuf_reset(&sb);
	emu_encode_pages(&sb, 1, pages, 2);
	assert_int_equal(emu_decode_pages(sb.buf + EMU_HEADER_SIZE, sb.len - EMU_HEADER_SIZE, got, 4,
					  &n, &why), 0);
	assert_true(n == 2 && got[0].ok && got[0].data[100] == 0x5a && !got[1].ok && !got[1].data);
	assert_int_equal(emu_decode_pages(sb.buf + EMU_HEADER_SIZE, sb.len - EMU_HEADER_SIZE, got, 1,
					  &n, &why), -1);

	strbuf_reset(&sb);
	emu_encode_page_req(&sb, 2, addrs, 3);
	assert_int_equal(emu_decode_page_req(sb.buf + EMU_HEADER_SIZE, sb.len - EMU_HEADER_SIZE, back,
					     4, &n, &why), 0);
	assert_true(n == 3 && back[1] == 0x7fff0000);

	memset(&r, 0, sizeof(r));
	r.end = PATHS_END_UNSUPPORTED, r.end_pc = 0x401010, r.insns = 2998, r.detailed = 10;
	strcpy(r.mnemonic, "vmovdqu64");
	r.blocks = blocks, r.n_blocks = 2, r.edges = edges, r.n_edges = 1;
	r.values = values, r.n_values = 1, r.steps = steps, r.n_steps = 1;
	strbuf_reset(&sb);
	emu_encode_result(&sb, 3, &r);
	assert_int_equal(emu_decode_result(sb.buf + EMU_HEADER_SIZE, sb.len - EMU_HEADER_SIZE, &r2,
					   &why), 0);
	assert_string_equal(r2.mnemonic, "vmovdqu64");
	assert_true(r2.n_blocks == 2 && r2.blocks[0].count == 999 && r2.steps[0].regs[2] == 3);
	emu_encode_result(&sb2, 3, &r2);
	assert_int_equal(sb2.len, sb.len);
	assert_memory_equal(sb2.buf, sb.buf, sb.len);
	emu_result_release(&r2);
	for (size_t len = 0; len + EMU_HEADER_SIZE < sb.len; len++)
		assert_int_equal(emu_decode_result(sb.buf + EMU_HEADER_SIZE, len, &r2, &why), -1);
	/* More instructions than the blocks hold: a worker that lies is refused. */
	r.insns = 4000;
	strbuf_reset(&sb);
	emu_encode_result(&sb, 3, &r);
	assert_int_equal(emu_decode_result(sb.buf + EMU_HEADER_SIZE, sb.len - EMU_HEADER_SIZE, &r2,
					   &why), -1);
	assert_string_equal(why, "more instructions than its blocks hold");
	/* A mnemonic with a control character. */
	r.insns = 10;
	strcpy(r.mnemonic, "mov\x1b");
	strbuf_reset(&sb);
	emu_encode_result(&sb, 3, &r);
	assert_int_equal(emu_decode_result(sb.buf + EMU_HEADER_SIZE, sb.len - EMU_HEADER_SIZE, &r2,
					   &why), -1);
	assert_string_equal(why, "bad mnemonic");
	/* a trail and its result */
	{
		struct emu_trail_point tp[3];
		struct emu_trail_req t = { 3, tp, 1, 1000000, 100000, 500000 }, t2;
		uint64_t at[3] = { 0, 5000, 12000 }, here[3] = { 0, 4000, 7000 };
		struct emu_trail_result tr, tr2;

		memset(tp, 0, sizeof(tp));
		for (int k = 0; k < 3; k++)
			tp[k].p.rip = 0x401000 + (uint64_t)k, tp[k].p.regs[1] = (uint64_t)k,
			tp[k].lo = 0x400000, tp[k].hi = 0x402000;
		strbuf_reset(&sb);
		emu_encode_trail(&sb, 4, &t);
		assert_int_equal(emu_decode_trail(sb.buf + EMU_HEADER_SIZE, sb.len - EMU_HEADER_SIZE,
						  &t2, &why), 0);
		assert_true(t2.n == 3 && t2.count_from == 1 && t2.pt[2].p.regs[1] == 2 &&
			    t2.pt[1].hi == 0x402000);
		emu_trail_req_release(&t2);
		for (size_t len = 0; len + EMU_HEADER_SIZE < sb.len; len++)
			assert_int_equal(emu_decode_trail(sb.buf + EMU_HEADER_SIZE, len, &t2, &why), -1);
		t.count_from = 3;               /* past its points */
		strbuf_reset(&sb);
		emu_encode_trail(&sb, 4, &t);
		assert_int_equal(emu_decode_trail(sb.buf + EMU_HEADER_SIZE, sb.len - EMU_HEADER_SIZE,
						  &t2, &why), -1);
		memset(&tr, 0, sizeof(tr));
		tr.matched = 3, tr.at = at, tr.here = here, tr.live = 2;
		tr.blocks = blocks, tr.n_blocks = 1;
		blocks[0].count = 100;
		strbuf_reset(&sb);
		emu_encode_trail_result(&sb, 5, &tr);
		assert_int_equal(emu_decode_trail_result(sb.buf + EMU_HEADER_SIZE,
							 sb.len - EMU_HEADER_SIZE, 3, &tr2, &why), 0);
		assert_true(tr2.matched == 3 && tr2.at[2] == 12000 && tr2.here[1] == 4000 &&
			    tr2.live == 2 && tr2.n_blocks == 1);
		emu_trail_result_release(&tr2);
		/* more points matched than the trail had; a segment's part bigger than it */
		assert_int_equal(emu_decode_trail_result(sb.buf + EMU_HEADER_SIZE,
							 sb.len - EMU_HEADER_SIZE, 2, &tr2, &why), -1);
		here[2] = 8000;
		strbuf_reset(&sb);
		emu_encode_trail_result(&sb, 5, &tr);
		assert_int_equal(emu_decode_trail_result(sb.buf + EMU_HEADER_SIZE,
							 sb.len - EMU_HEADER_SIZE, 3, &tr2, &why), -1);
		assert_string_equal(why, "bad segment");
		/* its blocks ran more than its segments: a forged count */
		here[2] = 7000;
		blocks[0].count = 100000;
		strbuf_reset(&sb);
		emu_encode_trail_result(&sb, 5, &tr);
		assert_int_equal(emu_decode_trail_result(sb.buf + EMU_HEADER_SIZE,
							 sb.len - EMU_HEADER_SIZE, 3, &tr2, &why), -1);
	}
	strbuf_release(&sb);
	strbuf_release(&sb2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_counted_loop_to_its_system_call),
		cmocka_unit_test(memory_ordering_conflicts_in_detail),
		cmocka_unit_test(instructions_the_emulator_lacks),
		cmocka_unit_test(glibc_memcmp_in_avx512),
		cmocka_unit_test(an_unreadable_page_ends_the_burst),
		cmocka_unit_test(a_trail_through_later_states),
		cmocka_unit_test(a_burst_reads_the_copy_made_at_the_stop),
		cmocka_unit_test(a_trail_passes_a_read),
		cmocka_unit_test(messages_round_trip_and_damage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
