/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/proctab.h - the procedures of one image: non-overlapping address
 * ranges, sorted, each with a display name, its symbol-table name and its
 * aliases.
 *
 * Builders add candidates in any order (proctab_add), then call
 * proctab_finish() once, which
 *   - collapses aliases (symbols at the same address become one procedure;
 *     the primary name is the global one, else the weak one, else the one
 *     with the fewest leading underscores, else the shortest),
 *   - gives symbols without a size the range up to the next procedure (or
 *     the end of the code range holding them),
 *   - clips overlapping ranges at the next procedure's start,
 *   - adds unwind-table ranges (PROC_FDE) only where no symbol covers them,
 *   - demangles C++ names for display.
 * After finish the table is read-only and its pointers are stable until
 * proctab_release(); the names it keeps are copied end to end into one
 * block (the candidates' chunks let go: 10,000 tables of 100 names took
 * 4 KB each where their names take 1.3).
 *
 * Addresses are those of the image's address space: ELF virtual addresses
 * for files and the vdso, kernel virtual addresses for the kernel and its
 * modules, process virtual addresses for JIT code.
 */
#ifndef DCPI_DISASM_PROCTAB_H
#define DCPI_DISASM_PROCTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum proc_flags {
	PROC_GLOBAL = (1 << 0),   /* STB_GLOBAL symbol */
	PROC_WEAK = (1 << 1),     /* STB_WEAK symbol */
	PROC_PLT = (1 << 2),      /* a PLT stub, named "sym@plt" */
	PROC_FDE = (1 << 3),      /* no symbol: range from an .eh_frame FDE, named IMAGE+0xADDR */
	PROC_GAP = (1 << 4),      /* no symbol, no FDE: code between procedures, IMAGE+0xADDR */
	PROC_NOSIZE = (1 << 5),   /* the symbol had no size: it extends to the next procedure */
	PROC_KSYM = (1 << 6),     /* from the kernel's kallsyms */
	PROC_JIT = (1 << 7),      /* from a perf-PID.map (JIT code) */
	PROC_DYNSYM = (1 << 8),   /* name from .dynsym (not .symtab) */
};

struct proc {
	uint64_t start, end;      /* [start, end) */
	const char *name;         /* for display: demangled C++, else the symbol name */
	const char *sym;          /* as in the symbol table (== name unless demangled) */
	unsigned flags;           /* enum proc_flags */
	uint32_t alias_first;     /* other names at this address: aliases[alias_first..+n_aliases) */
	uint32_t n_aliases;
};

struct proc_cand;
struct name_ref;
struct arena;

struct proctab {
	struct proc *v;           /* sorted by start, non-overlapping */
	size_t n;
	const char **aliases;     /* symbol names of aliases */
	size_t n_aliases;

	/* private */
	struct proc_cand *cand;
	size_t n_cand, alloc_cand;
	struct arena *pool;       /* names (core/arena.h): the candidates', those made later */
	char *names_block;        /* after finish: every name the procedures keep, end to end */
	struct name_ref *names;   /* name index, built on first lookup by name */
	size_t n_names;
	bool finished;
};

void proctab_init(struct proctab *t);
void proctab_release(struct proctab *t);

/*
 * Adds a candidate procedure.  size 0 means unknown (PROC_NOSIZE is set);
 * name is copied.  Candidates with PROC_FDE are used only where no other
 * candidate covers their start.
 */
void proctab_add(struct proctab *t, uint64_t start, uint64_t size, const char *name,
		 unsigned flags);

/*
 * Builds the table.  limit(ctx, addr), if given, returns the end of the
 * code range holding addr (e.g. its section's end) and bounds procedures
 * without a size; without it they end at the next procedure (the last one
 * gets a size of 1).
 */
void proctab_finish(struct proctab *t, uint64_t (*limit)(void *ctx, uint64_t addr), void *ctx);

/* The procedure holding addr, or NULL. */
const struct proc *proctab_find(const struct proctab *t, uint64_t addr);

/* Index of the first procedure with end > addr (n if none): to walk ranges. */
size_t proctab_lower_bound(const struct proctab *t, uint64_t addr);

/*
 * Procedures called name: their display name, symbol name or an alias.
 * Fills up to max pointers into out and returns how many match (which may
 * exceed max).
 */
size_t proctab_by_name(struct proctab *t, const char *name, const struct proc **out,
		       size_t max);

/* Copies a string into the table's pool (lives until release). */
const char *proctab_strdup(struct proctab *t, const char *s);

#endif
