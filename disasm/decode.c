/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/decode.c - capstone 4 -> struct insn.  See decode.h for what is
 * filled and where capstone's own answers are completed or corrected.
 */
#include "config.h"

#include "disasm/decode.h"

#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "core/xalloc.h"

#define NOREG 0xff

struct decoder {
	csh cs;
	enum insn_arch arch;
	cs_insn *ci;
	uint8_t regmap[512];   /* capstone register -> normalised register or NOREG */
	unsigned nregs;        /* entries of regmap in use */
};

/* ---- register normalisation ------------------------------------------- */

static const char *const x86_gpr_names[16][5] = {
	{ "rax", "eax", "ax", "al", "ah" }, { "rcx", "ecx", "cx", "cl", "ch" },
	{ "rdx", "edx", "dx", "dl", "dh" }, { "rbx", "ebx", "bx", "bl", "bh" },
	{ "rsp", "esp", "sp", "spl", NULL }, { "rbp", "ebp", "bp", "bpl", NULL },
	{ "rsi", "esi", "si", "sil", NULL }, { "rdi", "edi", "di", "dil", NULL },
};

/* Parses "PREFIXN" (N decimal, in range) into N; -1 otherwise. */
static int numbered(const char *name, const char *prefix, int max)
{
	size_t len = strlen(prefix);
	int v = 0;

	if (strncmp(name, prefix, len) || !name[len])
		return -1;
	for (const char *p = name + len; *p; p++) {
		if (*p < '0' || *p > '9' || v > 100)
			return -1;
		v = v * 10 + (*p - '0');
	}
	return v <= max ? v : -1;
}

static unsigned x86_normalise(const char *name)
{
	static const char *const seg[] = { "cs", "ds", "es", "fs", "gs", "ss" };
	int n;

	for (int r = 0; r < 8; r++)
		for (int k = 0; k < 5; k++)
			if (x86_gpr_names[r][k] && !strcmp(name, x86_gpr_names[r][k]))
				return (unsigned)r;
	if (name[0] == 'r' && (n = atoi(name + 1)) >= 8 && n <= 15) {
		char buf[8];
		static const char *const sfx[] = { "", "d", "w", "b" };

		for (int k = 0; k < 4; k++) {
			snprintf(buf, sizeof(buf), "r%d%s", n, sfx[k]);
			if (!strcmp(name, buf))
				return (unsigned)n;
		}
	}
	if (!strcmp(name, "rip") || !strcmp(name, "eip") || !strcmp(name, "ip"))
		return DREG_PC;
	if (!strcmp(name, "rflags") || !strcmp(name, "eflags") || !strcmp(name, "flags"))
		return DREG_FLAGS;
	if (!strcmp(name, "fpsw") || !strncmp(name, "st(", 3) || numbered(name, "fp", 7) >= 0 ||
	    numbered(name, "mm", 7) >= 0)
		return DREG_X87;
	if ((n = numbered(name, "xmm", 31)) >= 0 || (n = numbered(name, "ymm", 31)) >= 0 ||
	    (n = numbered(name, "zmm", 31)) >= 0)
		return DREG_V0 + (unsigned)n;
	if ((n = numbered(name, "k", 7)) >= 0)
		return DREG_K0 + (unsigned)n;
	for (size_t i = 0; i < ARRAY_SIZE(seg); i++)
		if (!strcmp(name, seg[i]))
			return DREG_SEG;
	return NOREG;
}

static unsigned a64_normalise(const char *name)
{
	static const char *const vpfx[] = { "b", "h", "s", "d", "q", "v" };
	int n;

	if ((n = numbered(name, "x", 30)) >= 0 || (n = numbered(name, "w", 30)) >= 0)
		return (unsigned)n;
	if (!strcmp(name, "sp") || !strcmp(name, "wsp"))
		return 31;
	if (!strcmp(name, "nzcv"))
		return DREG_FLAGS;
	if (!strcmp(name, "fpcr") || !strcmp(name, "fpsr"))
		return DREG_MXCSR;
	for (size_t i = 0; i < ARRAY_SIZE(vpfx); i++)
		if ((n = numbered(name, vpfx[i], 31)) >= 0)
			return DREG_V0 + (unsigned)n;
	return NOREG;  /* xzr, wzr, system registers */
}

static void build_regmap(struct decoder *d)
{
	unsigned end = d->arch == ARCH_X86_64 ? X86_REG_ENDING : ARM64_REG_ENDING;

	if (end > ARRAY_SIZE(d->regmap))
		BUG("capstone has %u registers", end);
	d->nregs = end;
	memset(d->regmap, NOREG, sizeof(d->regmap));
	for (unsigned r = 1; r < end; r++) {
		const char *name = cs_reg_name(d->cs, r);

		if (name)
			d->regmap[r] = (uint8_t)(d->arch == ARCH_X86_64 ? x86_normalise(name)
								       : a64_normalise(name));
	}
}

static unsigned norm(const struct decoder *d, unsigned csreg)
{
	return csreg < d->nregs ? d->regmap[csreg] : NOREG;
}

static void add_reg(const struct decoder *d, struct regset *s, unsigned csreg)
{
	unsigned r = norm(d, csreg);

	if (r != NOREG)
		regset_add(s, r);
}

const char *dreg_name(enum insn_arch arch, unsigned r)
{
	static const char *const x86[16] = { "rax", "rcx", "rdx", "rbx", "rsp", "rbp",
					     "rsi", "rdi", "r8",  "r9",  "r10", "r11",
					     "r12", "r13", "r14", "r15" };
	static const char *const a64[32] = {
		"x0",  "x1",  "x2",  "x3",  "x4",  "x5",  "x6",  "x7",  "x8",  "x9",  "x10",
		"x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20", "x21",
		"x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29", "x30", "sp"
	};
	static const char *const vn[32] = {
		"v0",  "v1",  "v2",  "v3",  "v4",  "v5",  "v6",  "v7",  "v8",  "v9",  "v10",
		"v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21",
		"v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30", "v31"
	};
	static const char *const kn[8] = { "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7" };

	if (arch == ARCH_X86_64 && r < 16)
		return x86[r];
	if (arch == ARCH_AARCH64 && r < 32)
		return a64[r];
	if (r >= DREG_V0 && r < DREG_V0 + 32)
		return vn[r - DREG_V0];
	if (r >= DREG_K0 && r < DREG_K0 + 8)
		return kn[r - DREG_K0];
	switch (r) {
	case DREG_PC: return arch == ARCH_X86_64 ? "rip" : "pc";
	case DREG_FLAGS: return arch == ARCH_X86_64 ? "flags" : "nzcv";
	case DREG_X87: return "x87";
	case DREG_MXCSR: return arch == ARCH_X86_64 ? "mxcsr" : "fpcr";
	case DREG_SEG: return "seg";
	default: return "?";
	}
}

const char *insn_kind_name(enum insn_kind kind)
{
	static const char *const names[] = { "other", "jump", "cjump", "ijump", "call",
					     "icall", "ret", "syscall", "trap", "invalid" };

	return (unsigned)kind < ARRAY_SIZE(names) ? names[kind] : "?";
}

/* ---- decoder lifetime ------------------------------------------------- */

struct decoder *decoder_new(enum insn_arch arch)
{
	struct decoder *d = XNEW(struct decoder);
	cs_err err;

	d->arch = arch;
	if (arch == ARCH_X86_64)
		err = cs_open(CS_ARCH_X86, CS_MODE_64, &d->cs);
	else
		err = cs_open(CS_ARCH_ARM64, CS_MODE_ARM, &d->cs);
	if (err != CS_ERR_OK) {
		errorf("cannot open the disassembler: %s", cs_strerror(err));
		free(d);
		return NULL;
	}
	cs_option(d->cs, CS_OPT_DETAIL, CS_OPT_ON);
	d->ci = cs_malloc(d->cs);
	build_regmap(d);
	return d;
}

void decoder_free(struct decoder *d)
{
	if (!d)
		return;
	cs_free(d->ci, 1);
	cs_close(&d->cs);
	free(d);
}

struct decoder *decoder_of_thread(enum insn_arch arch)
{
	static _Thread_local struct decoder *mine[ARCH_AARCH64 + 1];

	if ((unsigned)arch > ARCH_AARCH64)
		return NULL;
	if (!mine[arch])
		mine[arch] = decoder_new(arch);
	return mine[arch];
}

enum insn_arch decoder_arch(const struct decoder *d)
{
	return d->arch;
}

/* ---- shared helpers ---------------------------------------------------- */

/* Appends s to dst (holding *len bytes), truncating at INSN_TEXT_MAX - 1. */
static void text_append(char *dst, size_t *len, const char *s)
{
	size_t n = strlen(s);

	if (n > INSN_TEXT_MAX - 1 - *len)
		n = INSN_TEXT_MAX - 1 - *len;
	memcpy(dst + *len, s, n);
	*len += n;
	dst[*len] = '\0';
}

static void set_text(struct insn *out, const cs_insn *ci)
{
	size_t len = 0;

	text_append(out->text, &len, ci->mnemonic);
	out->mnem_len = (uint8_t)len;
	if (ci->op_str[0]) {
		text_append(out->text, &len, " ");
		text_append(out->text, &len, ci->op_str);
	}
}

static void set_invalid(struct insn *out, const uint8_t *code, uint64_t addr)
{
	memset(out, 0, sizeof(*out));
	out->addr = addr;
	out->len = 1;
	out->kind = INSN_INVALID;
	snprintf(out->text, sizeof(out->text), "(bad) .byte 0x%02x", code[0]);
	out->mnem_len = 5;
}

static void add_opkind(struct insn *out, enum insn_opkind k)
{
	if (out->nops < 4)
		out->opsig |= (uint8_t)(k << (2 * out->nops));
	out->nops++;
}

static void regs_access(const struct decoder *d, const cs_insn *ci, struct insn *out)
{
	cs_regs rd, wr;
	uint8_t nrd = 0, nwr = 0;

	if (cs_regs_access(d->cs, ci, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return;
	for (unsigned i = 0; i < nrd; i++)
		add_reg(d, &out->reads, rd[i]);
	for (unsigned i = 0; i < nwr; i++)
		add_reg(d, &out->writes, wr[i]);
}

/* ---- x86-64 ------------------------------------------------------------ */

#define EFL_TEST_MASK                                                                  \
	(X86_EFLAGS_TEST_OF | X86_EFLAGS_TEST_SF | X86_EFLAGS_TEST_ZF | X86_EFLAGS_TEST_PF | \
	 X86_EFLAGS_TEST_CF | X86_EFLAGS_TEST_NT | X86_EFLAGS_TEST_DF | X86_EFLAGS_TEST_RF | \
	 X86_EFLAGS_TEST_IF | X86_EFLAGS_TEST_TF | X86_EFLAGS_TEST_AF)

static bool in_group(const cs_insn *ci, unsigned group)
{
	for (unsigned i = 0; i < ci->detail->groups_count; i++)
		if (ci->detail->groups[i] == group)
			return true;
	return false;
}

static bool x86_is_x87(const cs_insn *ci)
{
	return ci->mnemonic[0] == 'f' && strncmp(ci->mnemonic, "fx", 2) != 0;
}

static void x86_flags_access(const cs_insn *ci, struct insn *out)
{
	uint64_t e = ci->detail->x86.eflags;

	if (x86_is_x87(ci) || !e)
		return;  /* x87 instructions use the field for FPU flags */
	if (e & EFL_TEST_MASK)
		regset_add(&out->reads, DREG_FLAGS);
	if (e & ~(EFL_TEST_MASK | X86_EFLAGS_PRIOR_OF | X86_EFLAGS_PRIOR_SF | X86_EFLAGS_PRIOR_ZF |
		  X86_EFLAGS_PRIOR_AF | X86_EFLAGS_PRIOR_PF | X86_EFLAGS_PRIOR_CF |
		  X86_EFLAGS_PRIOR_TF | X86_EFLAGS_PRIOR_IF | X86_EFLAGS_PRIOR_DF |
		  X86_EFLAGS_PRIOR_NT))
		regset_add(&out->writes, DREG_FLAGS);
}

static void x86_kind(const cs_insn *ci, struct insn *out)
{
	const cs_x86 *x = &ci->detail->x86;
	bool imm = x->op_count >= 1 && x->operands[0].type == X86_OP_IMM;

	switch (ci->id) {
	case X86_INS_JMP:
	case X86_INS_LJMP:
		out->kind = imm && ci->id == X86_INS_JMP ? INSN_JUMP : INSN_IJUMP;
		break;
	case X86_INS_CALL:
	case X86_INS_LCALL:
		out->kind = imm && ci->id == X86_INS_CALL ? INSN_CALL : INSN_ICALL;
		break;
	case X86_INS_RET: case X86_INS_RETF: case X86_INS_RETFQ:
	case X86_INS_IRET: case X86_INS_IRETD: case X86_INS_IRETQ:
	case X86_INS_SYSRET: case X86_INS_SYSEXIT:
		out->kind = INSN_RET;
		break;
	case X86_INS_SYSCALL: case X86_INS_SYSENTER: case X86_INS_INT: case X86_INS_INTO:
		out->kind = INSN_SYSCALL;
		break;
	case X86_INS_UD2: case X86_INS_UD2B: case X86_INS_HLT: case X86_INS_INT3:
		out->kind = INSN_TRAP;
		break;
	default:
		if (in_group(ci, CS_GRP_JUMP))
			out->kind = imm ? INSN_CJUMP : INSN_IJUMP;
		else if (in_group(ci, CS_GRP_RET))
			out->kind = INSN_RET;
		else
			out->kind = INSN_OTHER;
	}
	if (imm && (out->kind == INSN_JUMP || out->kind == INSN_CJUMP || out->kind == INSN_CALL))
		out->target = (uint64_t)x->operands[0].imm;
}

static bool x86_is_nop(unsigned id)
{
	return id == X86_INS_NOP || id == X86_INS_FNOP || id == X86_INS_ENDBR64 ||
	       id == X86_INS_ENDBR32;
}

static bool x86_is_prefetch(unsigned id)
{
	switch (id) {
	case X86_INS_PREFETCH: case X86_INS_PREFETCHNTA: case X86_INS_PREFETCHT0:
	case X86_INS_PREFETCHT1: case X86_INS_PREFETCHT2: case X86_INS_PREFETCHW:
		return true;
	default:
		return false;
	}
}

static bool x86_zero_idiom(const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;
	static const unsigned ids[] = {
		X86_INS_XOR, X86_INS_SUB, X86_INS_PXOR, X86_INS_XORPS, X86_INS_XORPD,
		X86_INS_VPXOR, X86_INS_VXORPS, X86_INS_VXORPD, X86_INS_VPXORD, X86_INS_VPXORQ,
		X86_INS_PSUBB, X86_INS_PSUBW, X86_INS_PSUBD, X86_INS_PSUBQ,
		X86_INS_VPSUBB, X86_INS_VPSUBW, X86_INS_VPSUBD, X86_INS_VPSUBQ,
	};
	bool known = false;
	unsigned a, b;

	for (size_t i = 0; i < ARRAY_SIZE(ids); i++)
		known |= ci->id == ids[i];
	if (!known || x->op_count < 2)
		return false;
	if (x->op_count == 2) {
		a = 0;
		b = 1;
	} else if (x->op_count == 3) {
		a = 1;
		b = 2;
	} else {
		return false;
	}
	return x->operands[a].type == X86_OP_REG && x->operands[b].type == X86_OP_REG &&
	       x->operands[a].reg == x->operands[b].reg;
}

/* Memory traffic capstone does not list as operands. */
static unsigned x86_implicit_mem(unsigned id)
{
	switch (id) {
	case X86_INS_PUSH: case X86_INS_PUSHF: case X86_INS_PUSHFQ: case X86_INS_PUSHAL:
	case X86_INS_PUSHAW: case X86_INS_CALL: case X86_INS_LCALL: case X86_INS_ENTER:
		return INSN_F_STORE;
	case X86_INS_POP: case X86_INS_POPF: case X86_INS_POPFQ: case X86_INS_POPAL:
	case X86_INS_POPAW: case X86_INS_RET: case X86_INS_RETF: case X86_INS_RETFQ:
	case X86_INS_LEAVE: case X86_INS_IRET: case X86_INS_IRETD: case X86_INS_IRETQ:
		return INSN_F_LOAD;
	default:
		return 0;
	}
}

static void x86_operands(const cs_insn *ci, struct insn *out)
{
	const cs_x86 *x = &ci->detail->x86;
	bool lea = ci->id == X86_INS_LEA;

	for (unsigned i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->size > out->opsize && op->type != X86_OP_IMM)
			out->opsize = op->size;
		switch (op->type) {
		case X86_OP_REG:
			add_opkind(out, OPK_REG);
			break;
		case X86_OP_IMM:
			add_opkind(out, OPK_IMM);
			break;
		case X86_OP_MEM:
			add_opkind(out, OPK_MEM);
			if (op->mem.base == X86_REG_RIP) {
				out->flags |= INSN_F_RIP_REL;
				out->mem_addr = ci->address + ci->size + (uint64_t)op->mem.disp;
			}
			if (lea)
				break;
			if (op->access & CS_AC_READ)
				out->flags |= INSN_F_LOAD;
			if (op->access & CS_AC_WRITE)
				out->flags |= INSN_F_STORE;
			if (!op->access)  /* capstone does not know: guess by position */
				out->flags |= i == 0 && x->op_count > 1 ? INSN_F_STORE : INSN_F_LOAD;
			break;
		default:
			add_opkind(out, OPK_NONE);
		}
	}
}

static void x86_fill(struct decoder *d, const cs_insn *ci, struct insn *out)
{
	const cs_x86 *x = &ci->detail->x86;

	x86_kind(ci, out);
	x86_operands(ci, out);
	regs_access(d, ci, out);
	x86_flags_access(ci, out);
	out->flags |= x86_implicit_mem(ci->id);
	if (x->prefix[0] == X86_PREFIX_LOCK ||
	    (ci->id == X86_INS_XCHG && (out->flags & (INSN_F_LOAD | INSN_F_STORE))))
		out->flags |= INSN_F_LOCK;
	if (!strncmp(ci->mnemonic, "rep", 3))
		out->flags |= INSN_F_REP;
	if (x86_is_prefetch(ci->id)) {
		out->flags &= (uint16_t)~(INSN_F_LOAD | INSN_F_STORE);
		out->flags |= INSN_F_PREFETCH;
	}
	if (x86_zero_idiom(ci))
		out->flags |= INSN_F_ZERO_IDIOM;
	if (x86_is_nop(ci->id)) {
		out->flags &= (uint16_t)~(INSN_F_LOAD | INSN_F_STORE);
		out->flags |= INSN_F_NOP;
		memset(&out->reads, 0, sizeof(out->reads));
		memset(&out->writes, 0, sizeof(out->writes));
	}
	/* A call pushes the return address: it reads rsp too. */
	if (out->kind == INSN_CALL || out->kind == INSN_ICALL || out->kind == INSN_RET) {
		regset_add(&out->reads, DREG_RSP);
		regset_add(&out->writes, DREG_RSP);
	}
}

/* ---- aarch64 ----------------------------------------------------------- */

static void a64_kind(const cs_insn *ci, struct insn *out)
{
	const cs_arm64 *a = &ci->detail->arm64;
	const cs_arm64_op *last = a->op_count ? &a->operands[a->op_count - 1] : NULL;
	bool imm = last && last->type == ARM64_OP_IMM;

	switch (ci->id) {
	case ARM64_INS_B:
		out->kind = a->cc == ARM64_CC_INVALID || a->cc == ARM64_CC_AL || a->cc == ARM64_CC_NV
				    ? INSN_JUMP : INSN_CJUMP;
		break;
	case ARM64_INS_CBZ: case ARM64_INS_CBNZ: case ARM64_INS_TBZ: case ARM64_INS_TBNZ:
		out->kind = INSN_CJUMP;
		break;
	case ARM64_INS_BR:
		out->kind = INSN_IJUMP;
		break;
	case ARM64_INS_BL:
		out->kind = INSN_CALL;
		break;
	case ARM64_INS_BLR:
		out->kind = INSN_ICALL;
		break;
	case ARM64_INS_RET: case ARM64_INS_ERET:
		out->kind = INSN_RET;
		break;
	case ARM64_INS_SVC: case ARM64_INS_HVC: case ARM64_INS_SMC:
		out->kind = INSN_SYSCALL;
		break;
	case ARM64_INS_BRK: case ARM64_INS_HLT:
		out->kind = INSN_TRAP;
		break;
	default:
		out->kind = INSN_OTHER;
	}
	if (imm && (out->kind == INSN_JUMP || out->kind == INSN_CJUMP || out->kind == INSN_CALL))
		out->target = (uint64_t)last->imm;
}

static unsigned a64_regsize(const struct decoder *d, unsigned csreg)
{
	const char *n = cs_reg_name(d->cs, csreg);

	if (!n)
		return 0;
	switch (n[0]) {
	case 'x': return 8;
	case 'w': return 4;
	case 'b': return 1;
	case 'h': return 2;
	case 's': return n[1] == 'p' ? 8 : 4;
	case 'd': return 8;
	case 'q': case 'v': return 16;
	default: return 0;
	}
}

static unsigned a64_mem_flags(const cs_insn *ci)
{
	static const char *const atomics[] = { "ldadd", "ldclr", "ldeor", "ldset", "ldsmax",
					       "ldsmin", "ldumax", "ldumin", "stadd", "stclr",
					       "steor", "stset", "stsmax", "stsmin", "stumax",
					       "stumin", "swp", "cas" };
	const char *m = ci->mnemonic;

	for (size_t i = 0; i < ARRAY_SIZE(atomics); i++)
		if (!strncmp(m, atomics[i], strlen(atomics[i])))
			return INSN_F_LOAD | INSN_F_STORE | INSN_F_LOCK;
	if (!strncmp(m, "prfm", 4) || !strncmp(m, "prfum", 5))
		return INSN_F_PREFETCH;
	if (!strncmp(m, "ld", 2))
		return INSN_F_LOAD;
	if (!strncmp(m, "st", 2))
		return INSN_F_STORE;
	return 0;
}

static void a64_operands(struct decoder *d, const cs_insn *ci, struct insn *out)
{
	const cs_arm64 *a = &ci->detail->arm64;
	bool mem = false;

	for (unsigned i = 0; i < a->op_count; i++) {
		const cs_arm64_op *op = &a->operands[i];
		unsigned sz;

		switch (op->type) {
		case ARM64_OP_REG:
		case ARM64_OP_REG_MRS:
		case ARM64_OP_REG_MSR:
			add_opkind(out, OPK_REG);
			if (op->type == ARM64_OP_REG && (sz = a64_regsize(d, op->reg)) > out->opsize)
				out->opsize = (uint8_t)sz;
			break;
		case ARM64_OP_MEM:
			add_opkind(out, OPK_MEM);
			mem = true;
			break;
		default:
			add_opkind(out, OPK_IMM);
		}
	}
	if (mem) {
		out->flags |= a64_mem_flags(ci);
	} else if (ci->id == ARM64_INS_LDR || ci->id == ARM64_INS_LDRSW ||
		   ci->id == ARM64_INS_PRFM) {
		/* literal load: ldr x0, #addr */
		const cs_arm64_op *last = a->op_count ? &a->operands[a->op_count - 1] : NULL;

		if (last && last->type == ARM64_OP_IMM) {
			out->flags |= INSN_F_RIP_REL |
				      (ci->id == ARM64_INS_PRFM ? INSN_F_PREFETCH : INSN_F_LOAD);
			out->mem_addr = (uint64_t)last->imm;
		}
	}
}

static void a64_fixups(struct decoder *d, const cs_insn *ci, struct insn *out)
{
	const cs_arm64 *a = &ci->detail->arm64;

	switch (ci->id) {
	case ARM64_INS_CMP: case ARM64_INS_CMN: case ARM64_INS_TST: case ARM64_INS_CCMP:
	case ARM64_INS_CCMN: case ARM64_INS_FCMP: case ARM64_INS_FCMPE:
		/* capstone 4 thinks these write their first operand */
		memset(&out->writes, 0, sizeof(out->writes));
		regset_add(&out->writes, DREG_FLAGS);
		for (unsigned i = 0; i < a->op_count; i++)
			if (a->operands[i].type == ARM64_OP_REG)
				add_reg(d, &out->reads, a->operands[i].reg);
		break;
	case ARM64_INS_RET:
		if (!a->op_count)
			regset_add(&out->reads, 30);
		break;
	case ARM64_INS_SVC: case ARM64_INS_HVC: case ARM64_INS_SMC:
		memset(&out->writes, 0, sizeof(out->writes));
		regset_add(&out->writes, 0);
		regset_add(&out->reads, 8);
		break;
	case ARM64_INS_NOP: case ARM64_INS_HINT: case ARM64_INS_YIELD:
		out->flags |= INSN_F_NOP;
		break;
	default:
		break;
	}
	if (a->update_flags)
		regset_add(&out->writes, DREG_FLAGS);
	if (a->cc != ARM64_CC_INVALID && a->cc != ARM64_CC_AL && a->cc != ARM64_CC_NV)
		regset_add(&out->reads, DREG_FLAGS);
	if (out->kind == INSN_CALL || out->kind == INSN_ICALL)
		regset_add(&out->writes, 30);
}

static void a64_zero_idiom(const cs_insn *ci, struct insn *out)
{
	const cs_arm64 *a = &ci->detail->arm64;

	/* eor/sub x, y, y and movi v, #0 */
	if ((ci->id == ARM64_INS_EOR || ci->id == ARM64_INS_SUB) && a->op_count == 3 &&
	    a->operands[1].type == ARM64_OP_REG && a->operands[2].type == ARM64_OP_REG &&
	    a->operands[1].reg == a->operands[2].reg && a->operands[2].shift.value == 0)
		out->flags |= INSN_F_ZERO_IDIOM;
	if (ci->id == ARM64_INS_MOVI && a->op_count == 2 && a->operands[1].type == ARM64_OP_IMM &&
	    a->operands[1].imm == 0)
		out->flags |= INSN_F_ZERO_IDIOM;
}

static void a64_fill(struct decoder *d, const cs_insn *ci, struct insn *out)
{
	a64_kind(ci, out);
	a64_operands(d, ci, out);
	regs_access(d, ci, out);
	a64_fixups(d, ci, out);
	a64_zero_idiom(ci, out);
	if (out->flags & INSN_F_NOP) {
		memset(&out->reads, 0, sizeof(out->reads));
		memset(&out->writes, 0, sizeof(out->writes));
	}
}

/* ---- entry points ------------------------------------------------------ */

static void keep_operands(const struct decoder *d, struct insn *out);

unsigned decode_one(struct decoder *d, const uint8_t *code, size_t len, uint64_t addr,
		    struct insn *out)
{
	const uint8_t *p = code;
	size_t left = len;
	uint64_t a = addr;

	if (!len)
		BUG("decode_one: no bytes");
	if (!cs_disasm_iter(d->cs, &p, &left, &a, d->ci)) {
		set_invalid(out, code, addr);
		keep_operands(d, out);
		return 1;
	}
	memset(out, 0, sizeof(*out));
	out->addr = addr;
	out->len = (uint8_t)d->ci->size;
	out->cs_id = d->ci->id;
	set_text(out, d->ci);
	if (d->arch == ARCH_X86_64)
		x86_fill(d, d->ci, out);
	else
		a64_fill(d, d->ci, out);
	keep_operands(d, out);
	return out->len;
}

static uint8_t opreg(const struct decoder *d, unsigned csreg)
{
	unsigned r;

	if (d->arch == ARCH_X86_64 && csreg == X86_REG_RIP)
		return DREG_PC;
	r = norm(d, csreg);
	return r == NOREG ? DREG_NONE : (uint8_t)r;
}

/* The operand of out at its next place (the first INSN_MAX_OPS kept). */
static struct insn_opd *next_opd(struct insn *out)
{
	return out->n_opds < INSN_MAX_OPS ? &out->opd[out->n_opds++] : NULL;
}

static void x86_ops(const struct decoder *d, const cs_insn *ci, struct insn *out)
{
	const cs_x86 *x = &ci->detail->x86;
	struct insn_opd *o;

	for (unsigned i = 0; i < x->op_count && (o = next_opd(out)); i++) {
		const cs_x86_op *op = &x->operands[i];

		o->size = op->size;
		if (op->type == X86_OP_REG) {
			o->kind = OPK_REG;
			o->reg = opreg(d, op->reg);
		} else if (op->type == X86_OP_IMM) {
			o->kind = OPK_IMM;
			o->value = op->imm;
		} else if (op->type == X86_OP_MEM) {
			o->kind = OPK_MEM;
			o->base = op->mem.base ? opreg(d, op->mem.base) : DREG_NONE;
			o->index = op->mem.index ? opreg(d, op->mem.index) : DREG_NONE;
			o->scale = (uint8_t)op->mem.scale;
			o->value = op->mem.disp;
		}
	}
}

static void a64_ops(const struct decoder *d, const cs_insn *ci, struct insn *out)
{
	const cs_arm64 *a = &ci->detail->arm64;
	struct insn_opd *o;

	for (unsigned i = 0; i < a->op_count && (o = next_opd(out)); i++) {
		const cs_arm64_op *op = &a->operands[i];

		if (op->type == ARM64_OP_REG) {
			o->kind = OPK_REG;
			o->reg = opreg(d, op->reg);
			o->size = (uint8_t)a64_regsize(d, op->reg);
		} else if (op->type == ARM64_OP_MEM) {
			o->kind = OPK_MEM;
			o->base = op->mem.base ? opreg(d, op->mem.base) : DREG_NONE;
			o->index = op->mem.index ? opreg(d, op->mem.index) : DREG_NONE;
			o->scale = 1;
			o->value = op->mem.disp;
		} else {
			o->kind = OPK_IMM;
			o->value = op->imm;
		}
	}
}

/* The operands of the instruction just decoded into out, kept with it. */
static void keep_operands(const struct decoder *d, struct insn *out)
{
	for (unsigned i = 0; i < INSN_MAX_OPS; i++)
		out->opd[i].reg = out->opd[i].base = out->opd[i].index = DREG_NONE;
	out->opds_known = true;
	if (out->kind == INSN_INVALID)
		return;
	if (d->arch == ARCH_X86_64)
		x86_ops(d, d->ci, out);
	else
		a64_ops(d, d->ci, out);
}

bool insn_operands(const struct insn *in, struct insn_ops *ops)
{
	memset(ops, 0, sizeof(*ops));
	for (unsigned i = 0; i < DECODE_MAX_OPS; i++)
		ops->op[i].reg = ops->op[i].base = ops->op[i].index = DREG_NONE;
	if (!in->opds_known)
		return false;
	ops->n = in->n_opds < DECODE_MAX_OPS ? in->n_opds : DECODE_MAX_OPS;
	for (unsigned i = 0; i < ops->n; i++) {
		const struct insn_opd *o = &in->opd[i];
		struct insn_operand *x = &ops->op[i];

		x->kind = (enum insn_opkind)o->kind;
		x->size = o->size;
		x->reg = o->reg;
		x->base = o->base;
		x->index = o->index;
		x->scale = o->scale;
		x->disp = o->kind == OPK_MEM ? o->value : 0;
		x->imm = o->kind == OPK_IMM ? o->value : 0;
	}
	return true;
}

size_t decode_range(struct decoder *d, const uint8_t *code, size_t len, uint64_t addr,
		    struct insn **v, size_t *n, size_t *alloc)
{
	size_t off = 0, added = 0;

	while (off < len) {
		ALLOC_GROW(*v, *n + 1, *alloc);
		off += decode_one(d, code + off, len - off, addr + off, &(*v)[*n]);
		(*n)++;
		added++;
	}
	return added;
}
