/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/jumptab.h - what an x86-64 indirect jump jumps through (internal
 * to cfg.c; exposed for tests).
 *
 * The instructions on the straight-line path before the jump are
 * evaluated forwards over a small symbolic domain: every value is either
 * k + s * v (v a symbolic variable: a register's value at the start of the
 * window, a value loaded from memory, or an entry loaded from a table) or
 * unknown.  Stores to memory are remembered by address form, so indexes
 * spilled to the stack (-O0) are followed.  A table load is a load from
 * T + size * v with T a known address; the jump's target must come out as
 * an entry of such a table (absolute, 8 bytes) or an entry (int32) plus a
 * known address (PIC-relative).  The bounds of v come from unsigned
 * compares of k + v with a constant followed by ja/jae/jb/jbe; an index
 * itself loaded from a byte table (two-level switch tables) is bounded by
 * the largest byte in that table's range.
 */
#ifndef DCPI_DISASM_JUMPTAB_H
#define DCPI_DISASM_JUMPTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "disasm/decode.h"
#include "disasm/insn.h"

enum jumptab_result {
	JT_TABLE,       /* a table: see struct jumptab */
	JT_TAIL,        /* a jump through a pointer that is not read from a table: leaves */
	JT_UNRESOLVED,  /* looks like a table, but it could not be resolved */
	JT_NEED_BASE,   /* a table whose base is in register need_reg at the window's start */
	JT_CONST,       /* a jump to one known address (computed goto): in table */
};

struct jumptab {
	uint64_t table;         /* address of entry 0 */
	unsigned entsize;       /* 4 (int32, relative to rel_base) or 8 (absolute) */
	bool relative;
	uint64_t rel_base;
	uint64_t lo, hi;        /* index range [lo, hi]; hi < lo: unknown */
	unsigned need_reg;      /* JT_NEED_BASE: the register holding the base ... */
	enum jumptab_result fallback; /* ... and what the jump is if that cannot be found */
};

/* A register's known value at the start of the window (a table base found earlier). */
struct jumptab_hint {
	unsigned reg;
	uint64_t value;
};

/*
 * Analyses the jump `jmp` (with its operands) after the window w[0..n)
 * (instructions in address order, each with its operands).  hints give
 * registers known at the window's start.  read (may be NULL) reads bytes
 * of the image for two-level tables.
 */
enum jumptab_result jumptab_analyse(const struct insn *w, const struct insn_ops *wops, size_t n,
				    const struct insn *jmp, const struct insn_ops *jops,
				    const struct jumptab_hint *hints, size_t n_hints,
				    int (*read)(void *ctx, uint64_t addr, void *buf, size_t size),
				    void *ctx, struct jumptab *out);

#endif
