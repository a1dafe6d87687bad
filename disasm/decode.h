/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/decode.h - turns machine code into struct insn (disasm/insn.h),
 * with capstone underneath (x86-64 and aarch64).
 *
 * A decoder is cheap to keep and not thread-safe: one per thread.  Every
 * field of struct insn is filled as insn.h documents it:
 *
 *   - registers normalised to full architectural registers (eax -> RAX,
 *     ymm3 -> V3, w5 -> X5), implicit reads and writes included (from
 *     capstone's cs_regs_access, completed where capstone 4 is silent: the
 *     x86 flags from its eflags masks, push/pop/call/ret stack traffic,
 *     aarch64 ret reading x30, cmp/tst writing only the flags);
 *   - kind, direct target, RIP-relative (or aarch64 literal) address;
 *   - operand signature (Intel operand order), operand count and size;
 *   - flags: load/store (push, pop, call, ret, leave and string
 *     instructions included; lea and nops never), lock, rep, prefetch, nop,
 *     zero idioms;
 *   - Intel-syntax text.
 *
 * Bytes that do not decode give an INSN_INVALID instruction of length 1, so
 * a linear sweep always makes progress.
 */
#ifndef DCPI_DISASM_DECODE_H
#define DCPI_DISASM_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "disasm/insn.h"

struct decoder;

/* Opens a decoder for arch; NULL (after reporting) if capstone fails. */
struct decoder *decoder_new(enum insn_arch arch);
void decoder_free(struct decoder *d);
/*
 * This thread's decoder for arch, opened on first use and kept for the
 * thread's life (one per thread and architecture, whatever the number of
 * images); NULL (after reporting) if capstone fails.
 */
struct decoder *decoder_of_thread(enum insn_arch arch);
enum insn_arch decoder_arch(const struct decoder *d);

/*
 * Decodes the one instruction at code[0..len) whose address is addr into
 * *out.  Returns its length (>= 1; 1 with kind INSN_INVALID when the bytes
 * do not decode or are truncated).  len 0 is a BUG.
 */
unsigned decode_one(struct decoder *d, const uint8_t *code, size_t len, uint64_t addr,
		    struct insn *out);

/*
 * Linear sweep: decodes code[0..len) starting at address addr, appending to
 * *v (grown with ALLOC_GROW; *n and *alloc updated).  Returns the number of
 * instructions appended.
 */
size_t decode_range(struct decoder *d, const uint8_t *code, size_t len, uint64_t addr,
		    struct insn **v, size_t *n, size_t *alloc);

/*
 * Operand details, for analyses that look inside instructions (jump-table
 * resolution in cfg.c, value profiles, measured counts).  Registers are
 * normalised; DREG_NONE when absent.  Only the first DECODE_MAX_OPS
 * operands are described.  Every decode keeps them with the instruction
 * (struct insn's opd); insn_operands() gives them in this form.
 */
#define DREG_NONE 0xff
#define DECODE_MAX_OPS INSN_MAX_OPS

struct insn_operand {
	enum insn_opkind kind;
	uint8_t size;           /* bytes, 0 if unknown */
	uint8_t reg;            /* OPK_REG */
	uint8_t base, index;    /* OPK_MEM: base is DREG_PC when RIP/PC-relative */
	uint8_t scale;          /* OPK_MEM: 1, 2, 4, 8 */
	int64_t disp;           /* OPK_MEM */
	int64_t imm;            /* OPK_IMM */
};

struct insn_ops {
	unsigned n;
	struct insn_operand op[DECODE_MAX_OPS];
};

/*
 * The operands of a decoded instruction (no decoding: what decode_one()
 * kept); false, with none, if it has none kept (an instruction made by
 * hand, or read back from the analysis cache).
 */
bool insn_operands(const struct insn *in, struct insn_ops *ops);

/* The name of a normalised register ("rax", "flags", "v3", "x30"), for debugging and tests. */
const char *dreg_name(enum insn_arch arch, unsigned r);

/* A short name of an instruction kind ("jump", "cjump", ...). */
const char *insn_kind_name(enum insn_kind kind);

#endif
