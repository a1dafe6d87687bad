/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the burst emulator (collect/emu-engine.h) and its protocol
 * (collect/emu-proto.h): small pieces of code in this process's memory,
 * followed in the engine with a pager that reads this process; the paths,
 * values, conflicts and ends they give; a window matched between two
 * states of a loop; every message encoded and decoded, damage refused.
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

static const struct emu_pager pager = { self_fetch, NULL };

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
	static uint64_t stack[1024];

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

/*
 * A window: from where a burst stopped through two later states of the
 * loop, the instructions between them counted exactly.
 */
static void a_window_between_two_states(void **state)
{
	uint8_t *code = code_page(counted_loop, sizeof(counted_loop));
	struct emu_engine *e;
	struct emu_burst_req req;
	struct emu_window_req w;
	struct emu_window_result wr;
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
	/* A burst stopped at 100 instructions, kept; then the window. */
	burst_at(&req, code, 100);
	req.keep = true;
	emu_engine_burst(e, &req, &r);
	assert_true(r.kept);
	emu_result_release(&r);
	/* Another burst meanwhile: the kept one's state and pages come back for the window. */
	burst_at(&req, code, 50);
	req.st.regs[VREG_RAX] = 77;
	emu_engine_burst(e, &req, &r);
	assert_false(r.kept);
	emu_result_release(&r);
	memset(&w, 0, sizeof(w));
	w.b1.rip = trace.steps[400].pc;
	memcpy(w.b1.regs, trace.steps[400].regs, sizeof(w.b1.regs));
	w.b2.rip = trace.steps[1900].pc;
	memcpy(w.b2.regs, trace.steps[1900].regs, sizeof(w.b2.regs));
	w.limit = 100000;
	w.time_us = 2000000;
	emu_engine_window(e, &w, &wr);
	assert_true(wr.matched);
	assert_int_equal(wr.insns, 1500);
	assert_true(wr.to_b1 >= 298 && wr.to_b1 <= 302);
	assert_true(wr.n_blocks >= 1 && wr.blocks[0].count >= 499);
	emu_window_result_release(&wr);
	/* No kept burst: the window is lost; a state never reached: no match. */
	emu_engine_window(e, &w, &wr);
	assert_false(wr.matched);
	assert_int_equal(wr.miss, PATHS_MISS_LOST);
	burst_at(&req, code, 100);
	req.keep = true;
	emu_engine_burst(e, &req, &r);
	emu_result_release(&r);
	w.b2.regs[VREG_RBX] = 42;
	emu_engine_window(e, &w, &wr);
	assert_false(wr.matched);
	assert_int_equal(wr.miss, PATHS_MISS_SYSCALL);
	emu_window_result_release(&wr);
	emu_result_release(&trace);
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
	struct emu_page pages[2] = { { 0x7000, true, page }, { 0x8000, false, NULL } }, got[4];
	uint64_t addrs[3] = { 0x1000, 0x7fff0000, 0x2000 }, back[4];
	const char *why;
	size_t n;

	(void)state;
	burst_at(&req, (const uint8_t *)0x401000, 10000);
	req.detail = 256, req.trace = 100, req.keep = true, req.st.xmm[3][5] = 9;
	emu_encode_burst(&sb, 7, &req);
	assert_int_equal(emu_header_decode(sb.buf, EMU_REQ_MAGIC, &h), 0);
	assert_true(h.type == EMU_MSG_BURST && h.seq == 7 && h.len == sb.len - EMU_HEADER_SIZE);
	assert_int_equal(emu_decode_burst(sb.buf + EMU_HEADER_SIZE, h.len, &req2, &why), 0);
	assert_memory_equal(&req, &req2, sizeof(req));
	for (size_t len = 0; len < h.len; len++)
		assert_int_equal(emu_decode_burst(sb.buf + EMU_HEADER_SIZE, len, &req2, &why), -1);
	assert_int_equal(emu_header_decode(sb.buf, EMU_REP_MAGIC, &h), -1);
	req.trace = req.detail + 1;
	strbuf_reset(&sb);
	emu_encode_burst(&sb, 7, &req);
	assert_int_equal(emu_decode_burst(sb.buf + EMU_HEADER_SIZE, sb.len - EMU_HEADER_SIZE, &req2,
					  &why), -1);
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
		cmocka_unit_test(a_window_between_two_states),
		cmocka_unit_test(messages_round_trip_and_damage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
