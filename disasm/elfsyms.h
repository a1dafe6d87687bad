/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/elfsyms.h - the procedures of an ELF image, from everything it
 * has: .symtab (of the binary, or of its separate debug file), .dynsym,
 * PLT stubs (named "sym@plt" from the PLT relocations), and .eh_frame FDE
 * ranges for code no symbol covers (named "BASE+0xADDR", BASE being the
 * image's file name, ADDR the ELF virtual address, as perf names unknown
 * symbols).
 */
#ifndef DCPI_DISASM_ELFSYMS_H
#define DCPI_DISASM_ELFSYMS_H

struct elffile;
struct proctab;

/*
 * Fills tab (initialised, not finished) and finishes it.  bin is the file
 * with the code (required); dbg a separate debug file with the same
 * addresses, or NULL.  base names unnamed ranges.  Returns 0, or -1 if a
 * symbol table, the PLT relocations or .eh_frame are malformed: tab then
 * holds whatever could be read (the caller says "cannot read symbols").
 */
int elfsyms_load(struct proctab *tab, const struct elffile *bin, const struct elffile *dbg,
		 const char *base);

#endif
