/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/insn.h - one decoded machine instruction, as the rest of dcpi sees
 * it.  disasm/ produces these (capstone underneath); model/ schedules them
 * and analysis/ explains their stalls.  Nothing here depends on
 * capstone's headers: the capstone instruction id is kept as a plain number
 * so that processor models can key their tables on it.
 *
 * Registers are normalised to full architectural registers (eax, ax, al ->
 * RAX; xmm3/ymm3/zmm3 -> V3) so that dependence analysis sees one name per
 * register.  Flags are one register (DREG_FLAGS).
 */
#ifndef DCPI_DISASM_INSN_H
#define DCPI_DISASM_INSN_H

#include <stdbool.h>
#include <stdint.h>

enum insn_arch { ARCH_X86_64, ARCH_AARCH64 };

/* Normalised register numbers (both architectures share the ranges). */
enum dreg {
	DREG_GPR0 = 0,        /* x86-64: RAX RCX RDX RBX RSP RBP RSI RDI R8..R15 = 0..15
				 aarch64: X0..X30 = 0..30, SP = 31 */
	DREG_PC = 32,         /* RIP / PC */
	DREG_FLAGS = 33,      /* RFLAGS / NZCV */
	DREG_X87 = 34,        /* the x87 stack, as one register */
	DREG_MXCSR = 35,      /* MXCSR / FPCR+FPSR */
	DREG_SEG = 36,        /* segment registers (fs/gs bases), as one register */
	DREG_V0 = 64,         /* xmm/ymm/zmm0..31, aarch64 V0..V31 = 64..95 */
	DREG_K0 = 96,         /* AVX-512 mask registers k0..k7 = 96..103 */
	DREG__COUNT = 128
};

/* x86-64 GPR numbers in hardware encoding order. */
enum {
	DREG_RAX = 0, DREG_RCX, DREG_RDX, DREG_RBX, DREG_RSP, DREG_RBP, DREG_RSI, DREG_RDI,
	DREG_R8, DREG_R9, DREG_R10, DREG_R11, DREG_R12, DREG_R13, DREG_R14, DREG_R15
};

struct regset {
	uint64_t w[2];
};

static inline void regset_add(struct regset *s, unsigned r)
{
	if (r < DREG__COUNT)
		s->w[r >> 6] |= 1ull << (r & 63);
}
static inline bool regset_has(const struct regset *s, unsigned r)
{
	return r < DREG__COUNT && (s->w[r >> 6] >> (r & 63) & 1);
}
static inline bool regset_empty(const struct regset *s)
{
	return !(s->w[0] | s->w[1]);
}
static inline bool regset_intersects(const struct regset *a, const struct regset *b)
{
	return (a->w[0] & b->w[0]) | (a->w[1] & b->w[1]);
}

/* What an instruction does to control flow. */
enum insn_kind {
	INSN_OTHER,     /* falls through */
	INSN_JUMP,      /* unconditional direct jump (target set) */
	INSN_CJUMP,     /* conditional direct jump (target set; falls through otherwise) */
	INSN_IJUMP,     /* indirect jump (jmp *%rax, jmp *(%rip+x), br x0) */
	INSN_CALL,      /* direct call (target set) */
	INSN_ICALL,     /* indirect call */
	INSN_RET,       /* return */
	INSN_SYSCALL,   /* syscall/sysenter/svc: falls through */
	INSN_TRAP,      /* ud2, hlt, int3, brk: does not fall through */
	INSN_INVALID,   /* bytes that do not decode (length 1) */
};

/* Operand kinds in the operand signature (2 bits each). */
enum insn_opkind { OPK_NONE = 0, OPK_REG = 1, OPK_MEM = 2, OPK_IMM = 3 };

/* Instruction flags. */
enum insn_flags {
	INSN_F_LOAD = (1 << 0),     /* reads memory (not lea) */
	INSN_F_STORE = (1 << 1),    /* writes memory */
	INSN_F_NOP = (1 << 2),      /* nop / endbr / pause-free padding */
	INSN_F_LOCK = (1 << 3),     /* lock prefix or implicitly locked (xchg mem) */
	INSN_F_PREFETCH = (1 << 4),
	INSN_F_REP = (1 << 5),      /* rep/repne string instruction */
	INSN_F_ZERO_IDIOM = (1 << 6), /* xor r,r / sub r,r / pxor x,x: no input dependence */
	INSN_F_RIP_REL = (1 << 7),  /* has a RIP-relative memory operand (mem_addr set) */
};

#define INSN_TEXT_MAX 96
#define INSN_MAX_OPS 4

/*
 * An operand as the decoder saw it (disasm/decode.h's struct insn_operand,
 * which insn_operands() gives back): kept with the instruction, so that
 * what looks inside instructions (jump tables, value profiles, measured
 * counts) reads the decode the listing made instead of decoding again.
 */
struct insn_opd {
	int64_t value;          /* OPK_MEM: the displacement; OPK_IMM: the immediate */
	uint8_t kind, size;     /* enum insn_opkind; bytes, 0 if unknown */
	uint8_t reg;            /* OPK_REG */
	uint8_t base, index, scale; /* OPK_MEM */
};

struct insn {
	uint64_t addr;          /* ELF virtual address (as readelf shows it) */
	uint8_t len;            /* bytes */
	enum insn_kind kind;
	uint64_t target;        /* direct branch/call target; 0 if none */
	uint64_t mem_addr;      /* absolute address of a RIP-relative operand, else 0 */
	unsigned cs_id;         /* capstone instruction id (x86_insn / arm64_insn) */
	uint8_t opsig;          /* operand kinds, 2 bits each, operand 0 in bits 0-1 (Intel order) */
	uint8_t nops;           /* number of operands */
	uint8_t opsize;         /* size in bytes of the widest register/memory operand */
	uint16_t flags;         /* enum insn_flags */
	uint8_t mnem_len;       /* the mnemonic's length in text, prefixes included ("rep stosq") */
	struct regset reads;    /* registers read, including implicit ones and address registers */
	struct regset writes;   /* registers written, including implicit ones */
	bool opds_known;        /* opd[0..n_opds) set by the decoder (not kept by the
				   analysis cache: listing_operands() decodes them) */
	uint8_t n_opds;         /* operands described (the first INSN_MAX_OPS) */
	struct insn_opd opd[INSN_MAX_OPS];
	char text[INSN_TEXT_MAX]; /* "mov rax, qword ptr [rbx + 8]" (Intel syntax) */
};

/* Operand kind i (0-3) of an operand signature. */
static inline enum insn_opkind insn_opkind(const struct insn *in, unsigned i)
{
	return (enum insn_opkind)((in->opsig >> (2 * i)) & 3);
}

/* True if control can continue at the next instruction. */
static inline bool insn_falls_through(const struct insn *in)
{
	return in->kind != INSN_JUMP && in->kind != INSN_IJUMP && in->kind != INSN_RET &&
	       in->kind != INSN_TRAP;
}

/* True if the instruction is any branch, call or return. */
static inline bool insn_is_control(const struct insn *in)
{
	return in->kind != INSN_OTHER && in->kind != INSN_SYSCALL && in->kind != INSN_INVALID;
}

#endif
