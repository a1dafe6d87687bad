/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * unwind/elfcfi.h - where an ELF file keeps what an unwinder needs: its
 * .eh_frame section, its loadable segments (file offsets <-> addresses)
 * and its GNU build-id.
 *
 * A deliberately small reader of ELF64 little-endian x86-64 files held in
 * memory: the file header, the program headers, the section headers and
 * their names, and note headers; nothing else.  It is what the unwinding
 * worker (collect/unwind-worker.h) runs on binaries it is handed, so it is
 * bounded everywhere and fuzzed (tests/fuzz/fuzz-unwind.c); the readers'
 * full ELF layer (disasm/elffile.h, libelf) is not available to the
 * collector, which depends on core, db and unwind only.
 */
#ifndef DCPI_UNWIND_ELFCFI_H
#define DCPI_UNWIND_ELFCFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/cfi.h"

#define ELFCFI_MAX_LOADS 16
#define ELFCFI_BUILD_ID_MAX 64

struct elfcfi_load {
	uint64_t offset, vaddr, filesz;
	bool exec;
};

struct elfcfi {
	struct cfi_section eh_frame;    /* buf NULL if the file has none */
	struct cfi_section debug_frame; /* .debug_frame (Go's only CFI); buf NULL if none */
	bool debug_frame_zlib;          /* SHF_COMPRESSED (Go's linker's default): an Elf64_Chdr,
					   then the compressed bytes */
	struct elfcfi_load loads[ELFCFI_MAX_LOADS];
	size_t n_loads;
	uint8_t build_id[ELFCFI_BUILD_ID_MAX];
	size_t build_id_len;            /* 0: none */
	uint64_t entry;                 /* e_entry: where the first thread starts (0: none) */
};

/*
 * Reads the ELF file in buf[0..len).  Returns 0, or -1 with *why set to a
 * static reason ("not an ELF file", "not an x86-64 ELF64 file",
 * "truncated program headers", ...).  A file without .eh_frame is not an
 * error (e->eh_frame.buf is NULL), nor one without .debug_frame.
 */
int elfcfi_read(const uint8_t *buf, size_t len, struct elfcfi *e, const char **why);

/*
 * The file offset of address vaddr, through the loadable segment holding
 * it; false if none does.
 */
bool elfcfi_vaddr_to_offset(const struct elfcfi *e, uint64_t vaddr, uint64_t *offset);

#endif
