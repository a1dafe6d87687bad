/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * unwind/cfi.h - DWARF call frame information as .eh_frame holds it (the
 * LSB "Exception Frame" format): walking its CIEs and FDEs, and running an
 * FDE's CFA program to get, for each address range of the function, how to
 * find the caller's frame (the canonical frame address, CFA) and where the
 * return address and the saved frame pointer are.
 *
 * x86-64 only for the rules (DWARF registers 6 rbp, 7 rsp, 16 the return
 * address); the walk itself is architecture-neutral.  Everything here is a
 * pure function over a byte buffer: every length, offset and count is
 * bounded, so it is fuzzed directly (tests/fuzz/fuzz-unwind.c).  It is the
 * lowest layer that reads .eh_frame: disasm/ehframe.h (procedure
 * boundaries) and unwind/utable.h (unwind tables) are both built on it.
 */
#ifndef DCPI_UNWIND_CFI_H
#define DCPI_UNWIND_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A .eh_frame section in memory, and the address it is loaded at. */
struct cfi_section {
	const uint8_t *buf;
	size_t len;
	uint64_t addr;          /* the section's address (sh_addr): pc-relative pointers */
	bool is64, little;      /* ELFCLASS64, ELFDATA2LSB */
	/*
	 * DWARF's .debug_frame rather than .eh_frame: a CIE's id is all ones,
	 * an FDE's CIE pointer is an offset from the section's start, and
	 * (without augmentation data) its addresses are absolute.  Go's
	 * linker writes only this.
	 */
	bool debug_frame;
};

/* One FDE: the function range it covers and its CFA program. */
struct cfi_fde {
	uint64_t start, end;            /* [start, end) */
	const uint8_t *insns;           /* the FDE's instructions */
	size_t n_insns;
	/* from its CIE */
	const uint8_t *cie_insns;       /* the CIE's initial instructions */
	size_t n_cie_insns;
	uint64_t code_align;
	int64_t data_align;
	unsigned ra_reg;                /* the return address column */
	bool signal_frame;              /* 'S': the frame of a signal handler's return */
};

/*
 * Calls fn for every FDE of the section whose range can be resolved from
 * the section alone (absolute and pc-relative encodings; indirect, text-
 * and data-relative ones are skipped, as are empty ranges), in section
 * order; fn returning non-zero stops the walk.  Returns 0, or -1 if the
 * section is malformed (the FDEs before the damage were passed on).
 */
typedef int (*cfi_fde_fn)(void *ctx, const struct cfi_fde *fde);
int cfi_walk(const struct cfi_section *sec, cfi_fde_fn fn, void *ctx);

/* How to find the caller's CFA, for one range of addresses. */
enum cfi_cfa {
	CFI_CFA_NONE,           /* no information (outside every FDE) */
	CFI_CFA_RSP,            /* cfa = rsp + off */
	CFI_CFA_RBP,            /* cfa = rbp + off */
	CFI_CFA_DEREF_RBP,      /* cfa = *(rbp + off): a realigned stack (DW_OP_breg6; DW_OP_deref) */
	CFI_CFA_PLT,            /* cfa = rsp + 8, + 8 more if (pc & 15) >= off: a PLT entry's expression */
	CFI_CFA_END,            /* the return address is undefined: the outermost frame */
	CFI_CFA_UNSUPPORTED,    /* a rule this unwinder does not follow */
	CFI_CFA_SIGNAL,         /* a signal trampoline ('S'): rsp points at the kernel's ucontext,
				   which holds the interrupted registers */
	CFI_CFA_DEREF_RSP,      /* cfa = *(rsp + off) + 8: the entry's rsp kept in a stack slot
				   (DW_OP_breg7 N; DW_OP_deref; DW_OP_plus_uconst 8: OpenSSL's
				   assembly) */
	/*
	 * cfa = register + off, for the other general registers: CFI_CFA_REG
	 * plus the DWARF number (0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi,
	 * 8-15 r8-r15; OpenSSL keeps the CFA in rax, rsi, r9 or r11, ld.so's
	 * lazy-binding trampoline in rbx).
	 */
	CFI_CFA_REG = 16,
	CFI_CFA_REG_END = CFI_CFA_REG + 16,
};

/* Where the caller's rbp is. */
enum cfi_rbp {
	CFI_RBP_SAME,           /* unchanged (never saved, or the same value) */
	CFI_RBP_AT_CFA,         /* rbp = *(cfa + off) */
	CFI_RBP_DEREF_RBP,      /* rbp = *(rbp + off) (DW_CFA_expression DW_OP_breg6) */
	CFI_RBP_UNKNOWN,        /* a rule this unwinder does not follow */
};

/* The rule from address start on (until the next row's start). */
struct cfi_row {
	uint64_t start;
	uint8_t cfa;            /* enum cfi_cfa */
	uint8_t rbp;            /* enum cfi_rbp */
	int32_t cfa_off;
	int32_t rbp_off;
};

/*
 * Runs fde's CIE and FDE programs and calls fn with one row per address
 * where the rule changes (x86-64 registers), starting at fde->start, then
 * a CFI_CFA_NONE row at fde->end.  A rule with a return address elsewhere
 * than at cfa - 8, or a program this interpreter cannot follow, gives
 * CFI_CFA_UNSUPPORTED rows from that point.  Returns 0, or -1 if the
 * program is malformed (rows up to that point were passed on; the range
 * is closed with a CFI_CFA_NONE row either way).
 */
typedef void (*cfi_row_fn)(void *ctx, const struct cfi_row *row);
int cfi_fde_rows(const struct cfi_fde *fde, cfi_row_fn fn, void *ctx);

#endif
