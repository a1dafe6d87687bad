/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of disasm/: the decoder (x86-64 and aarch64), .eh_frame
 * parsing, procedure tables, kallsyms and perf maps, ELF images (build-id,
 * offsets, symbols of stripped and unstripped builds, PLT names, debug
 * files), the vdso, DWARF lines, and the parts of an instruction's text.  The test programs are
 * tests/programs/shapes-* (built by make check with fixed flags).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/die.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "disasm/decode.h"
#include "disasm/dwarf.h"
#include "disasm/ehframe.h"
#include "disasm/elffile.h"
#include "disasm/image.h"
#include "disasm/insntext.h"
#include "disasm/proctab.h"
#include "disasm/textsyms.h"

static unsigned reported;
static void quiet(enum report_level level, const char *msg)
{
	(void)level;
	(void)msg;
	reported++;
}

static char *program(const char *name)
{
	const char *b = getenv("top_builddir");

	return xasprintf("%s/tests/programs/%s", b ? b : ".", name);
}

/* ---- decoder ------------------------------------------------------------- */

struct dcase {
	const char *hex;
	uint64_t addr;
	enum insn_kind kind;
	uint64_t target;
	const char *reads, *writes;  /* space-separated register names, exact sets */
	unsigned flags;              /* flags that must be set */
	unsigned noflags;            /* flags that must be clear */
	const char *text;            /* prefix of the text */
};

static size_t unhex(const char *hex, uint8_t *out)
{
	size_t n = 0;

	while (hex[0] && hex[1]) {
		unsigned v;

		if (hex[0] == ' ') {
			hex++;
			continue;
		}
		sscanf(hex, "%2x", &v);
		out[n++] = (uint8_t)v;
		hex += 2;
	}
	return n;
}

static void regs_str(enum insn_arch arch, const struct regset *s, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned r = 0; r < DREG__COUNT; r++)
		if (regset_has(s, r))
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? " " : "",
						dreg_name(arch, r));
}

/* Sorted-set comparison of two space-separated lists. */
static int word_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void normal_set(const char *in, char *out, size_t size)
{
	char *copy = xstrdup(in), *w[64], *save = NULL;
	size_t n = 0, len = 0;

	for (char *t = strtok_r(copy, " ", &save); t && n < 64; t = strtok_r(NULL, " ", &save))
		w[n++] = t;
	qsort(w, n, sizeof(*w), word_cmp);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%s", i ? " " : "", w[i]);
	free(copy);
}

static void check_case(struct decoder *d, enum insn_arch arch, const struct dcase *c)
{
	uint8_t bytes[32];
	size_t n = unhex(c->hex, bytes);
	struct insn in;
	char got[256], want[256], gotn[256];
	unsigned len = decode_one(d, bytes, n, c->addr, &in);

	print_message("# %s: %s\n", c->hex, in.text);
	assert_int_equal(len, in.len);
	assert_int_equal(in.addr, c->addr);
	assert_int_equal(in.kind, c->kind);
	if (c->kind != INSN_INVALID)
		assert_int_equal(len, n);
	assert_int_equal(in.target, c->target);
	if (c->reads) {
		regs_str(arch, &in.reads, got, sizeof(got));
		normal_set(got, gotn, sizeof(gotn));
		normal_set(c->reads, want, sizeof(want));
		assert_string_equal(gotn, want);
	}
	if (c->writes) {
		regs_str(arch, &in.writes, got, sizeof(got));
		normal_set(got, gotn, sizeof(gotn));
		normal_set(c->writes, want, sizeof(want));
		assert_string_equal(gotn, want);
	}
	assert_int_equal(in.flags & c->flags, c->flags);
	assert_int_equal(in.flags & c->noflags, 0);
	if (c->text)
		assert_memory_equal(in.text, c->text, strlen(c->text));
}

static void decode_x86(void **state)
{
	static const struct dcase cases[] = {
		{ "4889d8", 0x1000, INSN_OTHER, 0, "rbx", "rax", 0, INSN_F_LOAD | INSN_F_STORE, "mov rax, rbx" },
		{ "89d8", 0x1000, INSN_OTHER, 0, "rbx", "rax", 0, 0, "mov eax, ebx" },
		{ "88d8", 0x1000, INSN_OTHER, 0, "rbx", "rax", 0, 0, "mov al, bl" },
		{ "48f7f1", 0x1000, INSN_OTHER, 0, "rax rdx rcx", "rax rdx flags", 0, 0, "div rcx" },
		{ "50", 0x1000, INSN_OTHER, 0, "rsp rax", "rsp", INSN_F_STORE, INSN_F_LOAD, "push rax" },
		{ "58", 0x1000, INSN_OTHER, 0, "rsp", "rsp rax", INSN_F_LOAD, INSN_F_STORE, "pop rax" },
		{ "c3", 0x1000, INSN_RET, 0, "rsp", "rsp", INSN_F_LOAD, 0, "ret" },
		{ "e800000000", 0x1000, INSN_CALL, 0x1005, NULL, NULL, INSN_F_STORE, 0, "call 0x1005" },
		{ "ffd0", 0x1000, INSN_ICALL, 0, NULL, NULL, INSN_F_STORE, 0, "call rax" },
		{ "7410", 0x1000, INSN_CJUMP, 0x1012, "flags", "", 0, 0, "je 0x1012" },
		{ "ebfe", 0x1000, INSN_JUMP, 0x1000, "", "", 0, 0, "jmp 0x1000" },
		{ "ffe0", 0x1000, INSN_IJUMP, 0, "rax", "", 0, 0, "jmp rax" },
		{ "3effe0", 0x1000, INSN_IJUMP, 0, "rax", "", 0, 0, NULL },
		{ "ff2500100000", 0x2000, INSN_IJUMP, 0, NULL, NULL, INSN_F_RIP_REL | INSN_F_LOAD, 0, "jmp qword ptr [rip + 0x1000]" },
		{ "488d0510000000", 0x1000, INSN_OTHER, 0, "rip", "rax", INSN_F_RIP_REL, INSN_F_LOAD, "lea rax, [rip + 0x10]" },
		{ "31c0", 0x1000, INSN_OTHER, 0, NULL, "rax flags", INSN_F_ZERO_IDIOM, 0, "xor eax, eax" },
		{ "31d8", 0x1000, INSN_OTHER, 0, "rax rbx", "rax flags", 0, INSN_F_ZERO_IDIOM, "xor eax, ebx" },
		{ "c5f9efc0", 0x1000, INSN_OTHER, 0, NULL, "v0", INSN_F_ZERO_IDIOM, 0, "vpxor xmm0, xmm0, xmm0" },
		{ "f0480fc107", 0x1000, INSN_OTHER, 0, "rdi rax", "rax flags", INSN_F_LOCK | INSN_F_LOAD | INSN_F_STORE, 0, "lock xadd" },
		{ "f3a4", 0x1000, INSN_OTHER, 0, NULL, NULL, INSN_F_REP | INSN_F_LOAD | INSN_F_STORE, 0, "rep movsb" },
		{ "0f0b", 0x1000, INSN_TRAP, 0, NULL, NULL, 0, 0, "ud2" },
		{ "f4", 0x1000, INSN_TRAP, 0, NULL, NULL, 0, 0, "hlt" },
		{ "cc", 0x1000, INSN_TRAP, 0, NULL, NULL, 0, 0, "int3" },
		{ "0f05", 0x1000, INSN_SYSCALL, 0, NULL, NULL, 0, 0, "syscall" },
		{ "660f1f440000", 0x1000, INSN_OTHER, 0, "", "", INSN_F_NOP, INSN_F_LOAD, "nop" },
		{ "f30f1efa", 0x1000, INSN_OTHER, 0, "", "", INSN_F_NOP, 0, "endbr64" },
		{ "0f1808", 0x1000, INSN_OTHER, 0, "rax", "", INSN_F_PREFETCH, INSN_F_LOAD, "prefetcht0" },
		{ "480fafc3", 0x1000, INSN_OTHER, 0, "rax rbx", "rax flags", 0, 0, "imul rax, rbx" },
		{ "c5fd6f07", 0x1000, INSN_OTHER, 0, "rdi", "v0", INSN_F_LOAD, INSN_F_STORE, "vmovdqa ymm0, ymmword ptr [rdi]" },
		{ "4883c408", 0x1000, INSN_OTHER, 0, "rsp", "rsp flags", 0, 0, "add rsp, 8" },
		{ "0f44c1", 0x1000, INSN_OTHER, 0, "rax rcx flags", "rax", 0, 0, "cmove eax, ecx" },
		{ "f20f5ec1", 0x1000, INSN_OTHER, 0, "v0 v1", "v0", 0, 0, "divsd xmm0, xmm1" },
		{ "06", 0x1000, INSN_INVALID, 0, "", "", 0, 0, "(bad)" },
	};
	struct decoder *d = decoder_new(ARCH_X86_64);

	assert_non_null(d);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		check_case(d, ARCH_X86_64, &cases[i]);
	decoder_free(d);
}

static void decode_x86_details(void **state)
{
	struct decoder *d = decoder_new(ARCH_X86_64);
	uint8_t b[16];
	struct insn in;
	struct insn_ops ops;
	size_t n;

	/* jmp [rip + 0x1000] at 0x2000: the slot address */
	n = unhex("ff2500100000", b);
	decode_one(d, b, n, 0x2000, &in);
	assert_int_equal(in.mem_addr, 0x2006 + 0x1000);
	assert_int_equal(in.nops, 1);
	assert_int_equal(insn_opkind(&in, 0), OPK_MEM);
	/* mov rax, qword ptr [rbx + rcx*8 + 0x10]: operands in Intel order */
	n = unhex("488b44cb10", b);
	decode_one(d, b, n, 0x1000, &in);
	assert_true(insn_operands(&in, &ops));
	assert_int_equal(in.nops, 2);
	assert_int_equal(insn_opkind(&in, 0), OPK_REG);
	assert_int_equal(insn_opkind(&in, 1), OPK_MEM);
	assert_int_equal(in.opsize, 8);
	assert_int_equal(ops.op[1].base, DREG_RBX);
	assert_int_equal(ops.op[1].index, DREG_RCX);
	assert_int_equal(ops.op[1].scale, 8);
	assert_int_equal(ops.op[1].disp, 0x10);
	assert_true(in.flags & INSN_F_LOAD);
	/* add dword ptr [rdi], 1: memory read and written */
	n = unhex("830701", b);
	decode_one(d, b, n, 0x1000, &in);
	assert_true((in.flags & (INSN_F_LOAD | INSN_F_STORE)) == (INSN_F_LOAD | INSN_F_STORE));
	assert_int_equal(insn_opkind(&in, 1), OPK_IMM);
	/* a linear sweep over garbage always makes progress */
	{
		struct insn *v = NULL;
		size_t cnt = 0, alloc = 0;
		uint8_t junk[64];

		for (size_t i = 0; i < sizeof(junk); i++)
			junk[i] = (uint8_t)(i * 37 + 11);
		decode_range(d, junk, sizeof(junk), 0x5000, &v, &cnt, &alloc);
		assert_true(cnt > 0);
		assert_int_equal(v[cnt - 1].addr + v[cnt - 1].len, 0x5000 + sizeof(junk));
		free(v);
	}
	/* truncated instruction at the end of the bytes */
	n = unhex("e80000", b);
	assert_int_equal(decode_one(d, b, n, 0x1000, &in), 1);
	assert_int_equal(in.kind, INSN_INVALID);
	decoder_free(d);
}

/*
 * The parts of the instruction decoded from hex at addr, as "kind:text|..."
 * (M mnemonic, R register, I immediate, S size, T target, . other).
 */
static char *parts_of(struct decoder *d, const char *hex, uint64_t addr, size_t max)
{
	static const char kinds[] = { 'M', 'R', 'I', 'S', 'T', '.' };
	struct insn_part p[INSN_PARTS_MAX];
	struct strbuf sb = STRBUF_INIT;
	uint8_t b[16];
	size_t nb = unhex(hex, b), n, end = 0;
	struct insn in;

	decode_one(d, b, nb, addr, &in);
	n = insn_parts(&in, p, max);
	for (size_t k = 0; k < n; k++) {
		assert_int_equal(p[k].off, end); /* they cover the text, in order */
		end = p[k].off + p[k].len;
		strbuf_addf(&sb, "%c:%.*s|", kinds[p[k].kind], (int)p[k].len, in.text + p[k].off);
	}
	assert_int_equal(end, strlen(in.text));
	return strbuf_detach(&sb, NULL);
}

static void expect_parts(struct decoder *d, const char *hex, uint64_t addr, size_t max,
			 const char *want)
{
	char *got = parts_of(d, hex, addr, max);

	assert_string_equal(got, want);
	free(got);
}

static void insn_text_parts(void **state)
{
	struct decoder *d = decoder_new(ARCH_X86_64);

	expect_parts(d, "488b4308", 0x1000, INSN_PARTS_MAX,
		     "M:mov|.: |R:rax|.:, |S:qword|.: |S:ptr|.: [|R:rbx|.: + |I:8|.:]|");
	/* the immediate of a direct branch is its target */
	expect_parts(d, "7534", 0x401100, INSN_PARTS_MAX, "M:jne|.: |T:0x401136|");
	/* prefixes are the decoder's mnemonic */
	expect_parts(d, "f348ab", 0x1000, INSN_PARTS_MAX,
		     "M:rep stosq|.: |S:qword|.: |S:ptr|.: [|R:rdi|.:], |R:rax|");
	expect_parts(d, "f00fb10d2f000000", 0x1000, INSN_PARTS_MAX,
		     "M:lock cmpxchg|.: |S:dword|.: |S:ptr|.: [|R:rip|.: + |I:0x2f|.:], |R:ecx|");
	expect_parts(d, "c3", 0x1000, INSN_PARTS_MAX, "M:ret|");
	expect_parts(d, "c5f458448ee0", 0x1000, INSN_PARTS_MAX,
		     "M:vaddps|.: |R:ymm0|.:, |R:ymm1|.:, |S:ymmword|.: |S:ptr|.: [|R:rsi|.: + |R:rcx|"
		     ".:*|I:4|.: - |I:0x20|.:]|");
	/* a negative immediate is one */
	expect_parts(d, "4883c480", 0x1000, INSN_PARTS_MAX, "M:add|.: |R:rsp|.:, |I:-0x80|");
	/* bytes that do not decode */
	expect_parts(d, "0f0b0f", 0x1000, INSN_PARTS_MAX, "M:ud2|");
	expect_parts(d, "e80000", 0x1000, INSN_PARTS_MAX, "M:(bad)|.: .byte 0xe8|");
	/* too many parts: the last one takes the rest */
	expect_parts(d, "4801d8", 0x1000, 3, "M:add|.: |.:rax, rbx|");
	decoder_free(d);
	d = decoder_new(ARCH_AARCH64);
	expect_parts(d, "200440f9", 0x1000, INSN_PARTS_MAX, "M:ldr|.: |R:x0|.:, [|R:x1|.:, #|I:8|.:]|");
	expect_parts(d, "04000014", 0x1000, INSN_PARTS_MAX, "M:b|.: #|T:0x1010|");
	decoder_free(d);
}

static void decode_aarch64(void **state)
{
	static const struct dcase cases[] = {
		{ "1f2003d5", 0x1000, INSN_OTHER, 0, "", "", INSN_F_NOP, 0, "nop" },
		{ "10000094", 0x1000, INSN_CALL, 0x1040, NULL, "x30", 0, 0, "bl" },
		{ "c0035fd6", 0x1000, INSN_RET, 0, "x30", "", 0, 0, "ret" },
		{ "200040f9", 0x1000, INSN_OTHER, 0, "x1", "x0", INSN_F_LOAD, INSN_F_STORE, "ldr x0, [x1]" },
		{ "200000f9", 0x1000, INSN_OTHER, 0, "x0 x1", "", INSN_F_STORE, INSN_F_LOAD, "str x0, [x1]" },
		{ "400000b4", 0x1000, INSN_CJUMP, 0x1008, "x0", "", 0, 0, "cbz x0" },
		{ "41000054", 0x1000, INSN_CJUMP, 0x1008, "nzcv", "", 0, 0, "b.ne" },
		{ "00001fd6", 0x1000, INSN_IJUMP, 0, "x0", "", 0, 0, "br x0" },
		{ "20003fd6", 0x1000, INSN_ICALL, 0, "x1", "x30", 0, 0, "blr x1" },
		{ "1f0001eb", 0x1000, INSN_OTHER, 0, "x0 x1", "nzcv", 0, 0, "cmp x0, x1" },
		{ "20008b8b", 0x1000, INSN_OTHER, 0, NULL, NULL, 0, 0, NULL },
		{ "40000058", 0x1000, INSN_OTHER, 0, NULL, "x0", INSN_F_LOAD | INSN_F_RIP_REL, 0, "ldr x0" },
		{ "010000d4", 0x1000, INSN_SYSCALL, 0, NULL, NULL, 0, 0, "svc" },
		{ "000020d4", 0x1000, INSN_TRAP, 0, NULL, NULL, 0, 0, "brk" },
		{ "2028601e", 0x1000, INSN_OTHER, 0, "v0 v1", "v0", 0, 0, "fadd d0, d1, d0" },
		{ "00000014", 0x1000, INSN_JUMP, 0x1000, NULL, NULL, 0, 0, "b" },
		{ "fd7bbfa9", 0x1000, INSN_OTHER, 0, "x29 x30 sp", "sp", INSN_F_STORE, 0, "stp x29, x30, [sp, #-0x10]!" },
	};
	struct decoder *d = decoder_new(ARCH_AARCH64);
	uint8_t b[4];
	struct insn in;

	assert_non_null(d);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		check_case(d, ARCH_AARCH64, &cases[i]);
	/* ldr x0, #+8 at 0x1000: the literal's address */
	unhex("40000058", b);
	decode_one(d, b, 4, 0x1000, &in);
	assert_int_equal(in.mem_addr, 0x1008);
	decoder_free(d);
}

/* ---- .eh_frame ------------------------------------------------------------ */

/* A CIE with augmentation "zR" (pcrel|sdata4) and two FDEs. */
static size_t build_ehframe(uint8_t *b)
{
	size_t n = 0, fde;
	int32_t rel;

	/* CIE: length, id 0, version 1, "zR", code align 1, data align -8, ra 16, auglen 1, enc 0x1b */
	const uint8_t cie[] = { 0x14, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b,
				0, 0, 0, 0, 0, 0, 0 };
	memcpy(b, cie, sizeof(cie));
	n = sizeof(cie);
	for (int k = 0; k < 2; k++) {
		fde = n;
		memset(b + n, 0, 20);
		b[n] = 16;                            /* length */
		rel = (int32_t)(n + 4);               /* CIE pointer: back to offset 0 */
		memcpy(b + n + 4, &rel, 4);
		rel = (int32_t)(0x1000 + 0x100 * k - (int32_t)(0x400 + fde + 8)); /* pcrel start */
		memcpy(b + n + 8, &rel, 4);
		rel = 0x40 + k;                       /* size */
		memcpy(b + n + 12, &rel, 4);
		n += 20;
	}
	memset(b + n, 0, 4);                          /* terminator */
	return n + 4;
}

static void ehframe(void **state)
{
	uint8_t b[256];
	size_t len = build_ehframe(b), n = 0, alloc = 0;
	struct fde_range *v = NULL;

	assert_int_equal(ehframe_parse(b, len, 0x400, true, true, &v, &n, &alloc), 0);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].start, 0x1000);
	assert_int_equal(v[0].end, 0x1040);
	assert_int_equal(v[1].start, 0x1100);
	assert_int_equal(v[1].end, 0x1141);
	/* every truncation is an error or a prefix, never a crash */
	for (size_t cut = 0; cut < len; cut++) {
		size_t m = 0;

		ehframe_parse(b, cut, 0x400, true, true, &v, &m, &alloc);
		assert_true(m <= 2);
	}
	/* a CIE pointer before the section */
	b[24 + 4] = 0xff;
	n = 0;
	assert_int_equal(ehframe_parse(b, len, 0x400, true, true, &v, &n, &alloc), -1);
	free(v);
}

/* ---- procedure tables ------------------------------------------------------- */

static void proctab_rules(void **state)
{
	struct proctab t;
	const struct proc *out[4];

	proctab_init(&t);
	proctab_add(&t, 0x1000, 0x20, "__foo_internal", PROC_WEAK);
	proctab_add(&t, 0x1000, 0x20, "foo", PROC_GLOBAL);
	proctab_add(&t, 0x1000, 0x20, "_foo", PROC_GLOBAL);
	proctab_add(&t, 0x1030, 0, "nosize", PROC_GLOBAL);
	proctab_add(&t, 0x1050, 0x100, "big", PROC_GLOBAL);   /* overlaps the next: clipped */
	proctab_add(&t, 0x1080, 0x10, "inner", PROC_GLOBAL);
	proctab_add(&t, 0x1000, 0x40, "x+0x1000", PROC_FDE);  /* covered by foo: dropped */
	proctab_add(&t, 0x2000, 0x30, "x+0x2000", PROC_FDE);  /* uncovered: kept */
	proctab_add(&t, 0x3000, 0x10, "_ZN2ns3barEi", PROC_GLOBAL);
	proctab_finish(&t, NULL, NULL);

	assert_int_equal(t.n, 6);
	assert_string_equal(t.v[0].name, "foo");  /* global, fewest underscores */
	assert_int_equal(t.v[0].n_aliases, 2);
	assert_int_equal(t.v[0].end, 0x1020);
	assert_string_equal(proctab_find(&t, 0x1035)->name, "nosize");
	assert_int_equal(proctab_find(&t, 0x1035)->end, 0x1050);  /* up to the next one */
	assert_int_equal(proctab_find(&t, 0x1060)->end, 0x1080);
	assert_string_equal(proctab_find(&t, 0x1080)->name, "inner");
	assert_null(proctab_find(&t, 0x1090));
	assert_string_equal(proctab_find(&t, 0x2010)->name, "x+0x2000");
	assert_true(proctab_find(&t, 0x2010)->flags & PROC_FDE);
	assert_null(proctab_find(&t, 0x1025));
	/* names, aliases, demangled names */
	assert_int_equal(proctab_by_name(&t, "__foo_internal", out, 4), 1);
	assert_ptr_equal(out[0], &t.v[0]);
	assert_int_equal(proctab_by_name(&t, "nope", out, 4), 0);
	if (strcmp(proctab_find(&t, 0x3000)->name, "_ZN2ns3barEi")) {  /* libstdc++ present */
		assert_string_equal(proctab_find(&t, 0x3000)->name, "ns::bar(int)");
		assert_int_equal(proctab_by_name(&t, "ns::bar(int)", out, 4), 1);
	}
	assert_int_equal(proctab_by_name(&t, "_ZN2ns3barEi", out, 4), 1);
	proctab_release(&t);
}

static void kallsyms_and_perfmap(void **state)
{
	static const char ks[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000010 t helper\n"
		"ffffffff81000020 D some_data\n"
		"ffffffff81000040 W weak_fn\n"
		"ffffffffc0001000 t mod_fn\t[ext4]\n"
		"garbage line\n";
	static const char zero[] = "0000000000000000 T _stext\n0000000000000000 t helper\n";
	static const char map[] = "7f0000001000 40 jit_fn_one\n7f0000001040 20 LazyCompile:*foo bar.js:3\n";
	struct proctab t;

	proctab_init(&t);
	assert_int_equal(kallsyms_load(&t, ks, strlen(ks)), 4);
	assert_string_equal(proctab_find(&t, 0xffffffff81000018)->name, "helper");
	assert_int_equal(proctab_find(&t, 0xffffffff81000018)->end, 0xffffffff81000020);
	assert_null(proctab_find(&t, 0xffffffff81000028));  /* data */
	assert_string_equal(proctab_find(&t, 0xffffffff81000048)->name, "weak_fn");
	assert_string_equal(proctab_find(&t, 0xffffffffc0001004)->name, "mod_fn");
	proctab_release(&t);
	proctab_init(&t);
	assert_int_equal(kallsyms_load(&t, zero, strlen(zero)), -1);
	proctab_release(&t);
	proctab_init(&t);
	assert_int_equal(perfmap_load(&t, map, strlen(map)), 2);
	assert_string_equal(proctab_find(&t, 0x7f0000001050)->name, "LazyCompile:*foo bar.js:3");
	assert_null(proctab_find(&t, 0x7f0000001060));
	proctab_release(&t);
	proctab_init(&t);
	assert_int_equal(perfmap_load(&t, "zz 10 x\n", 8), -1);
	proctab_release(&t);
}

/* ---- ELF images ------------------------------------------------------------ */

static struct image *open_path(const char *path, bool force)
{
	struct db_image rec;
	struct image_opts o;

	memset(&rec, 0, sizeof(rec));
	memset(&o, 0, sizeof(o));
	rec.kind = IMAGE_FILE;
	rec.path = (char *)path;
	o.force = force;
	o.debug_dir = "/nonexistent";
	return image_open(&rec, &o);
}

static const struct proc *by_name(struct image *img, const char *name)
{
	const struct proc *p[4];

	return image_procs_by_name(img, name, p, 4) == 1 ? p[0] : NULL;
}

static void build_id_and_offsets(void **state)
{
	char *a = program("shapes-O2"), *s = program("shapes-O2-strip"),
	     *np = program("shapes-O2-nopie"), *dbg = program("shapes-O2.debug");
	struct elffile *ea = elffile_open(a), *es = elffile_open(s), *en = elffile_open(np),
		       *ed = elffile_open(dbg);
	uint64_t v, o;

	assert_non_null(ea);
	assert_non_null(es);
	assert_non_null(en);
	assert_non_null(ed);
	/* GNU build-ids are 20 bytes (sha1); strip and objcopy keep them */
	assert_int_equal(ea->build_id_len, 20);
	assert_memory_equal(ea->build_id, es->build_id, 20);
	assert_memory_equal(ea->build_id, ed->build_id, 20);
	assert_true(memcmp(ea->build_id, en->build_id, 20) != 0);
	/* PIE: text vaddr == file offset here; non-PIE: vaddr = offset + 0x400000 */
	assert_int_equal(ea->type, 3 /* ET_DYN */);
	assert_int_equal(en->type, 2 /* ET_EXEC */);
	assert_int_equal(elffile_vaddr_to_off(en, en->entry, &o), 0);
	assert_int_equal(o + 0x400000, en->entry);
	assert_int_equal(elffile_off_to_vaddr(en, o, &v), 0);
	assert_int_equal(v, en->entry);
	assert_int_equal(elffile_off_to_vaddr(en, 1ull << 40, &v), -1);
	/* the debug file has no code, the binaries do */
	assert_true(elffile_has_code(ea));
	assert_false(elffile_has_code(ed));
	elffile_close(ea);
	elffile_close(es);
	elffile_close(en);
	elffile_close(ed);
	free(a);
	free(s);
	free(np);
	free(dbg);
}

static void stripped_same_boundaries(void **state)
{
	static const char *const fns[] = { "if_else", "nested_loops", "switch_table", "checked",
					   "tail_caller", "spin", "main" };
	char *a = program("shapes-O2"), *s = program("shapes-O2-strip");
	struct image *ia = open_path(a, false), *is = open_path(s, false);

	assert_int_equal(ia->state, IMAGE_OK);
	assert_int_equal(is->state, IMAGE_OK);
	for (size_t i = 0; i < ARRAY_SIZE(fns); i++) {
		const struct proc *pa = by_name(ia, fns[i]), *ps;

		assert_non_null(pa);
		ps = image_proc_at(is, pa->start);
		assert_non_null(ps);
		print_message("# %s [%#lx,%#lx) stripped: %s [%#lx,%#lx)\n", fns[i],
			      (unsigned long)pa->start, (unsigned long)pa->end, ps->name,
			      (unsigned long)ps->start, (unsigned long)ps->end);
		assert_int_equal(ps->start, pa->start);
		assert_int_equal(ps->end, pa->end);
		assert_true(ps->flags & PROC_FDE);
		assert_true(!strncmp(ps->name, "shapes-O2-strip+0x", 18));
		/* the FDE name finds it again */
		assert_ptr_equal(by_name(is, ps->name), ps);
	}
	image_free(ia);
	image_free(is);
	free(a);
	free(s);
}

static void plt_names(void **state)
{
	static const char *const bins[] = { "shapes-O2", "shapes-O2-strip", "shapes-O2-nopie",
					    "shapes-O0" };

	for (size_t b = 0; b < ARRAY_SIZE(bins); b++) {
		char *path = program(bins[b]);
		struct image *img = open_path(path, false);
		const struct proc *p = by_name(img, "exit@plt");

		assert_non_null(p);
		assert_true(p->flags & PROC_PLT);
		assert_non_null(by_name(img, "abort@plt"));
		assert_non_null(by_name(img, "fwrite@plt"));
		/* a call to exit@plt never returns; one to fwrite@plt does */
		assert_true(image_noreturn(img, p->start));
		assert_true(image_noreturn(img, by_name(img, "abort@plt")->start));
		assert_false(image_noreturn(img, by_name(img, "fwrite@plt")->start));
		image_free(img);
		free(path);
	}
}

static void debug_files(void **state)
{
	char *s = program("shapes-O2-dbglink"), *nog = program("shapes-O2-nog");
	struct image *img = open_path(s, false), *ng;
	struct dwarf_info *dw;
	struct src_line *lines;
	size_t n;
	const struct proc *p;

	/* .gnu_debuglink next to the binary: names from the debug file's .symtab */
	p = by_name(img, "nested_loops");
	assert_non_null(p);
	assert_non_null(img->dbg_path);
	assert_non_null(strstr(img->dbg_path, "shapes-O2.debug"));
	/* and its DWARF */
	dw = image_dwarf(img, NULL);
	assert_non_null(dw);
	assert_int_equal(dwarf_info_lines(dw, p->start, p->end, &lines, &n), 0);
	assert_true(n > 3);
	for (size_t i = 0; i < n; i++)
		assert_non_null(strstr(lines[i].file, "shapes.c"));
	free(lines);
	image_free(img);
	/* no -g: symbols but no DWARF */
	ng = open_path(nog, false);
	assert_non_null(by_name(ng, "nested_loops"));
	assert_null(image_dwarf(ng, NULL));
	image_free(ng);
	free(s);
	free(nog);
}

static void missing_and_changed(void **state)
{
	char *a = program("shapes-O2"), *np = program("shapes-O2-nopie");
	struct elffile *en = elffile_open(np);
	struct db_image rec;
	struct image_opts o;
	struct image *img;
	const char *why;
	struct insn *v;
	size_t n;

	/* missing: image-level only */
	img = open_path("/nonexistent/dcpi-test", false);
	assert_int_equal(img->state, IMAGE_MISSING);
	assert_string_equal(image_unnamed(img), "[no binary]");
	assert_false(image_has_code(img, &why));
	assert_null(image_proc_at(img, 0x1000));
	image_free(img);
	/* changed: the record's build-id is another binary's */
	memset(&rec, 0, sizeof(rec));
	memset(&o, 0, sizeof(o));
	rec.kind = IMAGE_FILE;
	rec.path = a;
	rec.build_id_len = en->build_id_len;
	memcpy(rec.build_id, en->build_id, en->build_id_len);
	img = image_open(&rec, &o);
	assert_int_equal(img->state, IMAGE_CHANGED);
	assert_non_null(strstr(img->why, "build-id"));
	assert_string_equal(image_unnamed(img), "[changed binary]");
	assert_false(image_has_code(img, &why));
	assert_null(image_proc_at(img, 0x1450));
	image_free(img);
	/* forced: usable */
	o.force = true;
	img = image_open(&rec, &o);
	assert_true(img->forced);
	assert_true(image_has_code(img, NULL));
	assert_non_null(by_name(img, "main"));
	assert_int_equal(image_decode(img, by_name(img, "main"), &v, &n), 0);
	assert_true(n > 5);
	free(v);
	image_free(img);
	/* size and mtime when there is no build-id */
	rec.build_id_len = 0;
	rec.size = 1;
	rec.mtime_ns = 1;
	o.force = false;
	img = image_open(&rec, &o);
	assert_int_equal(img->state, IMAGE_CHANGED);
	image_free(img);
	elffile_close(en);
	free(a);
	free(np);
}

/*
 * More images than binaries kept open: each is closed and opened again as
 * it is needed, with the same code; one replaced on disk meanwhile is not
 * used as if it were the binary profiled.
 */
#define MANY_IMAGES 40

static void binaries_closed_and_opened_again(void **state)
{
	char *a = program("shapes-O2"), *np = program("shapes-O2-nopie");
	char dir[] = "/tmp/dcpi-test-disasm.XXXXXX", *copy, *cmd;
	struct image *img[MANY_IMAGES];
	uint8_t first[4];
	size_t n0 = 0;

	assert_non_null(mkdtemp(dir));
	copy = xasprintf("%s/shapes", dir);
	cmd = xasprintf("cp '%s' '%s'", a, copy);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	for (int round = 0; round < 2; round++)
		for (int k = 0; k < MANY_IMAGES; k++) {
			struct insn *v;
			size_t n;
			uint8_t b[4];

			if (!round) {
				/* images of the same file are one: other debug directories make others */
				struct db_image rec = { .kind = IMAGE_FILE, .path = k ? a : copy };
				char dd[32];
				struct image_opts o = { .debug_dir = dd };

				snprintf(dd, sizeof(dd), "/nonexistent/%d", k);
				img[k] = image_open(&rec, &o);
			}
			assert_int_equal(image_decode(img[k], by_name(img[k], "main"), &v, &n), 0);
			assert_int_equal(image_read(img[k], v[0].addr, b, sizeof(b)), 0);
			if (!n0) {
				n0 = n;
				memcpy(first, b, sizeof(b));
			}
			assert_int_equal(n, n0);
			assert_memory_equal(b, first, sizeof(b));
			free(v);
		}
	/* the first was closed long ago: replaced now, it cannot be opened again as itself */
	for (int k = 1; k < MANY_IMAGES; k++)
		assert_non_null(by_name(img[k], "main"));
	cmd = xasprintf("cp '%s' '%s'", np, copy);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	for (int k = 1; k < MANY_IMAGES; k++)
		image_free(img[k]);
	{
		struct insn *v = NULL;
		size_t n;
		uint8_t b[4];

		set_report_routine(quiet);
		assert_int_equal(image_decode(img[0], by_name(img[0], "main"), &v, &n), -1);
		assert_int_equal(image_read(img[0], by_name(img[0], "main")->start, b, sizeof(b)), -1);
		set_report_routine(NULL);
		free(v);
	}
	image_free(img[0]);
	unlink(copy);
	rmdir(dir);
	free(copy);
	free(a);
	free(np);
}

/* The images of one file opened twice (two epochs of it) are one, until both are freed. */
static void images_of_a_file_shared(void **state)
{
	char *a = program("shapes-O2");
	struct image *x = open_path(a, false), *y = open_path(a, false), *z = open_path(a, true);

	assert_ptr_equal(x, y);
	assert_true(x != z);     /* forced: opened otherwise */
	assert_non_null(by_name(x, "main"));
	image_free(x);
	assert_non_null(by_name(y, "main"));
	image_free(y);
	y = open_path(a, false);
	assert_non_null(by_name(y, "main"));
	image_free(y);
	image_free(z);
	free(a);
}

static void malformed_elf(void **state)
{
	char *a = program("shapes-O2"), path[] = "/tmp/dcpi-test-elf-XXXXXX";
	FILE *f = fopen(a, "rb");
	uint8_t *buf = xmalloc(1 << 20);
	size_t len = fread(buf, 1, 1 << 20, f);
	int fd = mkstemp(path);
	struct image *img;
	const struct elf_section *sh;
	struct elffile *ef;

	fclose(f);
	assert_true(fd >= 0);
	/* symbol tables pointing far outside the file */
	ef = elffile_open(a);
	sh = elffile_section(ef, ".symtab");
	assert_non_null(sh);
	{
		/* corrupt the section header's size (64-bit ELF: sh_size at +32) */
		uint64_t shoff;

		memcpy(&shoff, buf + 0x28, 8);
		uint64_t big = 1ull << 40;

		memcpy(buf + shoff + 64 * sh->index + 32, &big, 8);
	}
	elffile_close(ef);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
	img = open_path(path, false);
	/* the rest still works: .dynsym, PLT, FDE ranges */
	image_load_procs(img);
	assert_true(img->syms_bad);
	assert_non_null(strstr(img->syms_why, "cannot read symbols"));
	assert_non_null(by_name(img, "exit@plt"));
	image_free(img);
	/* truncated files: never a crash */
	for (size_t cut = 0; cut < len; cut += len / 37 + 1) {
		fd = open(path, O_WRONLY | O_TRUNC);
		assert_int_equal(write(fd, buf, cut), (ssize_t)cut);
		close(fd);
		img = open_path(path, false);
		image_load_procs(img);
		image_free(img);
	}
	unlink(path);
	free(buf);
	free(a);
}

static void vdso(void **state)
{
	struct db_image rec;
	struct image *img;
	const struct proc *p[4];
	size_t n;
	uint64_t off, addr;

	if (!getauxval(AT_SYSINFO_EHDR)) {
		print_message("# SKIP: no vDSO in this process (AT_SYSINFO_EHDR)\n");
		skip();
	}
	memset(&rec, 0, sizeof(rec));
	rec.kind = IMAGE_VDSO;
	rec.path = (char *)"[vdso]";
	img = image_open(&rec, NULL);
	assert_int_equal(img->state, IMAGE_OK);
	n = image_procs_by_name(img, "__vdso_clock_gettime", p, 4);
	if (!n)
		n = image_procs_by_name(img, "__kernel_clock_gettime", p, 4);
	assert_int_equal(n, 1);
	/* offsets are from the start of the mapping */
	assert_true(image_addr_to_offset(img, p[0]->start + 1, &off));
	assert_true(image_offset_to_addr(img, off, &addr));
	assert_ptr_equal(image_proc_at(img, addr), p[0]);
	assert_true(image_has_code(img, NULL));
	image_free(img);
}

static void dwarf_lines_and_inlines(void **state)
{
	char *a = program("shapes-O0");
	struct image *img = open_path(a, false);
	const struct proc *p = by_name(img, "if_else");
	struct dwarf_info *dw = image_dwarf(img, NULL);
	struct src_line *lines;
	struct src_inline *inl;
	size_t n;
	uint32_t min = UINT32_MAX, max = 0;

	assert_non_null(p);
	assert_non_null(dw);
	assert_int_equal(dwarf_info_lines(dw, p->start, p->end, &lines, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (lines[i].line && !lines[i].end_seq) {
			min = lines[i].line < min ? lines[i].line : min;
			max = lines[i].line > max ? lines[i].line : max;
		}
	/* if_else is lines 20-29 of shapes.c */
	assert_in_range(min, 19, 22);
	assert_in_range(max, 26, 30);
	free(lines);
	assert_int_equal(dwarf_info_inlines(dw, p->start, p->end, &inl, &n), 0);
	assert_int_equal(n, 0);  /* -O0 inlines nothing */
	free(inl);
	assert_non_null(dwarf_info_comp_dir(dw, p->start));
	image_free(img);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decode_x86),
		cmocka_unit_test(decode_x86_details),
		cmocka_unit_test(decode_aarch64),
		cmocka_unit_test(insn_text_parts),
		cmocka_unit_test(ehframe),
		cmocka_unit_test(proctab_rules),
		cmocka_unit_test(kallsyms_and_perfmap),
		cmocka_unit_test(build_id_and_offsets),
		cmocka_unit_test(stripped_same_boundaries),
		cmocka_unit_test(plt_names),
		cmocka_unit_test(debug_files),
		cmocka_unit_test(missing_and_changed),
		cmocka_unit_test(binaries_closed_and_opened_again),
		cmocka_unit_test(images_of_a_file_shared),
		cmocka_unit_test(malformed_elf),
		cmocka_unit_test(vdso),
		cmocka_unit_test(dwarf_lines_and_inlines),
	};

	set_report_routine(quiet);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
