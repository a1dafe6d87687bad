/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/cfg.h - the control-flow graph of one procedure, and its
 * frequency-equivalence classes.
 *
 * Blocks.  A basic block is a run of instructions entered only at its first
 * and left only after its last.  Calls do not end blocks (control comes
 * back) unless the callee never returns.  blocks[cfg->entry] (always 0)
 * starts at the procedure's first address.  One extra, virtual block,
 * blocks[cfg->exit] (always the last), stands for "outside the procedure":
 * every way of leaving (return, tail call, noreturn call, trap, an indirect
 * jump that could not be resolved, falling off the end) is an edge to it.
 * When the procedure jumps to code outside it that jumps back in (the
 * .cold part GCC splits off a function), the blocks it comes back to have
 * CFG_REENTRY edges from EXIT, so that flow is conserved.
 *
 * Edges.  Each edge has a kind (enum cfg_edge_kind) and the address of the
 * instruction that makes it.  A block's successors and predecessors are
 * edge indices:
 *
 *   const struct cfg_block *b = &cfg->blocks[i];
 *   for (uint32_t k = 0; k < b->n_succ; k++) {
 *           const struct cfg_edge *e = &cfg->edges[cfg->succ[b->succ + k]];
 *           ... e->to, e->kind, e->cls ...
 *   }
 *
 * Successors are listed fall-through first, then taken/jump targets in
 * address order.  Parallel edges (a conditional branch to the next
 * instruction) are kept as two edges.
 *
 * Jump tables.  An indirect jump is resolved by looking at the
 * instructions before it: absolute tables (jmp [idx*8 + table], or the
 * table entry loaded into a register first) and PIC-relative tables
 * (lea base, [rip + table]; movsxd r, [base + idx*4]; add r, base; jmp r),
 * bounded by the cmp/ja guarding the index.  An indirect jump through a
 * pointer that is not read from a table (jmp [rip + got], or a register
 * loaded from a structure) leaves the procedure (an indirect tail call).
 * An indirect jump that reads a table we cannot resolve makes the
 * procedure "missing edges" (CFG_MISSING_EDGES), as does every indirect
 * jump on aarch64 (jump tables are resolved for x86-64 only), as do a branch into the
 * middle of an instruction and reachable bytes that do not decode (capstone
 * 4 does not know some AVX-512 instructions).
 *
 * Classes.  cfg_classify() puts blocks and edges into frequency-equivalence
 * classes by cycle equivalence (cycleq.h) on the graph prepared as section
 * 6.1.4 of the DCPI paper (Anderson et al., "Continuous Profiling: Where
 * Have All the Cycles Gone?", SOSP 1997) says: each block b
 * split into b_in -> b_out (the block's class is that edge's class), an
 * EXIT -> ENTRY edge, blocks unreachable from the entry left out (each
 * gets a class of its own), and for every region that cannot reach EXIT
 * (an infinite loop) a virtual edge to EXIT from one of its blocks.  Blocks
 * and edges in one class execute equally often (the virtual EXIT block's
 * class is the procedure's invocation count).  A procedure with missing
 * edges gets one class per block and per edge, as the paper does.  Class
 * numbers are shared by blocks and edges: 0 .. n_classes-1.
 */
#ifndef DCPI_DISASM_CFG_H
#define DCPI_DISASM_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "disasm/insn.h"

struct decoder;

enum cfg_edge_kind {
	CFG_FALLTHROUGH,   /* to the next block: straight-line code, or a conditional branch not taken */
	CFG_TAKEN,         /* a conditional branch taken */
	CFG_JUMP,          /* an unconditional direct jump */
	CFG_SWITCH,        /* an indirect jump through a resolved jump table */
	CFG_CALL_RETURN,   /* from a block ending in a call to the block where the call returns */
	CFG_REENTRY,       /* from the EXIT block: control coming back from code outside the
			      procedure that it jumped to (GCC's .cold parts) */
	/* edges to the virtual EXIT block */
	CFG_RETURN,        /* a return */
	CFG_TAIL_CALL,     /* a jump out of the procedure (direct, conditional or indirect), or falling off its end */
	CFG_NORETURN,      /* a call that never returns (exit, abort, __stack_chk_fail, ...) */
	CFG_TRAP,          /* ud2, hlt, int3, brk, or bytes that do not decode */
	CFG_UNRESOLVED,    /* an indirect jump that could not be resolved (missing edges) */
	CFG_EDGE_KIND__COUNT
};

enum cfg_block_flags {
	CFG_BLOCK_ENTRY = (1 << 0),       /* the procedure's entry block */
	CFG_BLOCK_EXIT = (1 << 1),        /* the virtual EXIT block (no instructions) */
	CFG_BLOCK_UNREACHABLE = (1 << 2), /* not reachable from the entry (padding, dead code, other entries) */
	CFG_BLOCK_NO_EXIT = (1 << 3),     /* reachable, but cannot reach EXIT (inside an infinite loop) */
	CFG_BLOCK_JUMP_TABLE = (1 << 4),  /* ends with an indirect jump resolved through a table */
};

struct cfg_block {
	uint64_t start, end;      /* [start, end) addresses; the EXIT block has start == end == cfg->end */
	uint32_t first, n_insns;  /* instructions cfg->insns[first .. first + n_insns) */
	uint32_t succ, n_succ;    /* outgoing edges: cfg->succ[succ .. succ + n_succ) */
	uint32_t pred, n_pred;    /* incoming edges: cfg->pred[pred .. pred + n_pred) */
	unsigned flags;           /* enum cfg_block_flags */
	int cls;                  /* frequency-equivalence class, -1 before cfg_classify() */
};

struct cfg_edge {
	uint32_t from, to;        /* block indices (to == cfg->exit for edges leaving) */
	enum cfg_edge_kind kind;
	uint64_t site;            /* address of the instruction making the edge (last of `from`) */
	uint64_t target;          /* where control goes: the target block's start, or the callee/outside address, 0 if unknown */
	int cls;                  /* frequency-equivalence class, -1 before cfg_classify() */
};

enum cfg_flags {
	CFG_MISSING_EDGES = (1 << 0),  /* some control flow could not be resolved */
	CFG_JUMP_TABLES = (1 << 1),    /* has resolved jump tables */
	CFG_CLASSIFIED = (1 << 2),     /* cfg_classify() has run */
	CFG_EXITLESS = (1 << 3),       /* some reachable block cannot reach EXIT */
};

struct cfg {
	uint64_t start, end;      /* the procedure's range */
	enum insn_arch arch;
	struct insn *insns;       /* owned, sorted by address */
	size_t n_insns;
	struct cfg_block *blocks; /* n_blocks, including the virtual EXIT block */
	size_t n_blocks;
	size_t entry, exit;       /* 0 and n_blocks - 1 */
	struct cfg_edge *edges;
	size_t n_edges;
	uint32_t *succ, *pred;    /* edge indices, grouped by block */
	unsigned flags;           /* enum cfg_flags */
	const char *missing_why;  /* static text when CFG_MISSING_EDGES */
	size_t n_classes;         /* after cfg_classify() */
};

/* What cfg_build() needs from the image around the procedure. */
struct cfg_env {
	/* re-decodes instructions with operands (jump tables); may be NULL */
	struct decoder *dec;
	/* reads size bytes at address addr (code and jump tables); 0 or -1 */
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t size);
	/* true if the call (direct or indirect) never returns; may be NULL */
	bool (*noreturn)(void *ctx, const struct insn *call);
	/*
	 * For a jump out of the procedure [start, end) to target: the addresses
	 * inside the procedure that the code there jumps back to (a .cold
	 * part), in *out (caller frees); returns how many.  May be NULL.
	 */
	size_t (*reentries)(void *ctx, uint64_t target, uint64_t start, uint64_t end,
			    uint64_t **out);
	void *ctx;
};

/*
 * Builds the CFG of the procedure [start, end) from its instructions
 * (decoded linearly from start; cfg takes ownership of insns, which must
 * be sorted and non-overlapping).  n may be 0 (a procedure without code:
 * one empty entry block).  Always succeeds; problems show in cfg->flags.
 */
void cfg_build(struct cfg *cfg, struct insn *insns, size_t n, uint64_t start, uint64_t end,
	       enum insn_arch arch, const struct cfg_env *env);

void cfg_release(struct cfg *cfg);

/* Computes the frequency-equivalence classes (see above).  Idempotent. */
void cfg_classify(struct cfg *cfg);

/* The block holding addr (its index), or -1. */
long cfg_block_at(const struct cfg *cfg, uint64_t addr);

/* The instruction starting at addr (its index), or -1. */
long cfg_insn_at(const struct cfg *cfg, uint64_t addr);

/*
 * The text cfg->missing_why would point to that equals text (a cfg read
 * back from a cache keeps the builder's static texts), or NULL if none does.
 */
const char *cfg_missing_why_of(const char *text);

/* A short name of an edge kind ("fallthrough", "taken", ...). */
const char *cfg_edge_kind_name(enum cfg_edge_kind kind);

/* True for kinds whose edges go to the EXIT block. */
static inline bool cfg_edge_kind_leaves(enum cfg_edge_kind kind)
{
	return kind >= CFG_RETURN;
}

#endif
