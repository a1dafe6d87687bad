/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/dwarf.h - source lines and inlined subroutines from DWARF, with
 * libdwarf underneath (its 2021 API as in Debian 12, or the 0.x API; the
 * differences are confined to a few calls in dwarf.c).
 *
 * Lazy: opening reads only the headers; the first query builds an index of
 * compilation units by address (.debug_aranges, else the CUs' own ranges),
 * and each query loads just the line tables and DIE trees of the CUs that
 * cover the asked range (cached).
 *
 * Malformed DWARF gives an error for the query (or no DWARF at all), never
 * a crash: libdwarf reports errors through return codes here, and every
 * count it returns is bounded.
 */
#ifndef DCPI_DISASM_DWARF_H
#define DCPI_DISASM_DWARF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dwarf_info;

/* One row of a line table. */
struct src_line {
	uint64_t addr;          /* the row covers [addr, next row's addr) */
	uint32_t line;          /* 0: no source line (compiler-generated code) */
	const char *file;       /* path as recorded (absolute, or relative to the CU's directory) */
	bool stmt;              /* a recommended breakpoint location (is_stmt) */
	bool end_seq;           /* ends a sequence: covers nothing */
};

/* One inlined subroutine instance (a range of it; an instance may have several). */
struct src_inline {
	uint64_t lo, hi;        /* [lo, hi) */
	unsigned depth;         /* 1: inlined directly into the procedure, 2: into that, ... */
	const char *name;       /* the inlined function ("?" if unnamed) */
	const char *call_file;  /* where it was inlined (may be NULL) */
	uint32_t call_line;
};

/*
 * Opens the DWARF of the ELF file path.  Returns NULL if the file has no
 * DWARF (not an error: *why is NULL) or it cannot be read (*why says why,
 * a static string).
 */
struct dwarf_info *dwarf_info_open(const char *path, const char **why);
void dwarf_info_close(struct dwarf_info *dw);

/*
 * The line rows for [lo, hi): every row with lo <= addr < hi, preceded by
 * the row covering lo if it starts earlier, sorted by address.  Strings
 * belong to dw.  Caller frees *v.  Returns 0, or -1 on malformed DWARF.
 */
int dwarf_info_lines(struct dwarf_info *dw, uint64_t lo, uint64_t hi, struct src_line **v,
		     size_t *n);

/*
 * The inlined subroutines within the subprogram that contains lo, clipped
 * to [lo, hi), outer ones first.  Strings belong to dw.  Caller frees *v.
 * Returns 0, or -1 on malformed DWARF.
 */
int dwarf_info_inlines(struct dwarf_info *dw, uint64_t lo, uint64_t hi, struct src_inline **v,
		       size_t *n);

/*
 * Checks the unit headers of a .debug_rnglists or .debug_loclists section
 * (decompressed).  libdwarf 20210528 frees memory twice when one of them
 * is malformed, so a file that fails this check must not be given to it.
 */
bool dwarf_lists_sane(const uint8_t *p, size_t len);

/* The directory of the CU holding addr (DW_AT_comp_dir), or NULL. */
const char *dwarf_info_comp_dir(struct dwarf_info *dw, uint64_t addr);

#endif
