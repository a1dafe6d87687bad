/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/elffile.h - one ELF file (libelf underneath): its loadable
 * segments, sections, build-id and .gnu_debuglink, and raw access to its
 * bytes.  Opening reads only the headers and the notes; symbols, unwind
 * tables and DWARF are read by their own modules when someone asks.
 *
 * Addresses are ELF virtual addresses as readelf shows them; offsets are
 * file offsets.  Every count and offset read from the file is checked
 * against the file size, so a truncated or corrupted file gives an error
 * (or an empty answer), never a crash.
 */
#ifndef DCPI_DISASM_ELFFILE_H
#define DCPI_DISASM_ELFFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "disasm/insn.h"

#define ELF_BUILD_ID_MAX 32

struct elf_segment {        /* a PT_LOAD program header */
	uint64_t vaddr, memsz;
	uint64_t offset, filesz;
	unsigned flags;         /* PF_X, PF_W, PF_R */
};

struct elf_section {
	const char *name;       /* "" if unnamed; points into the file's string table */
	unsigned type;          /* SHT_* */
	uint64_t flags;         /* SHF_* */
	uint64_t addr, size, offset, entsize;
	unsigned link, info;
	size_t index;           /* section header index */
};

struct elffile {
	char *path;             /* for messages */
	unsigned machine;       /* EM_* */
	unsigned type;          /* ET_EXEC, ET_DYN, ET_REL, ... */
	bool is64, little;
	bool arch_known;        /* machine is x86-64 or aarch64 (decodable) */
	bool sections_bad;      /* the section headers are damaged (only segments are usable) */
	enum insn_arch arch;
	uint64_t entry;
	uint64_t file_size;

	struct elf_segment *loads;
	size_t n_loads;
	struct elf_section *secs;
	size_t n_secs;

	uint8_t build_id[ELF_BUILD_ID_MAX];
	unsigned build_id_len;  /* 0: none */
	char *debuglink;        /* .gnu_debuglink file name, or NULL */
	uint32_t debuglink_crc;

	/* private */
	void *elf;              /* Elf * */
	int fd;                 /* -1 once libelf has the file: it is not kept open */
	const uint8_t *raw;     /* the whole file (mmap by libelf, or the memory image) */
	void *mem;              /* owned copy for in-memory images */
};

/*
 * Opens path.  Fails (reporting "cannot read 'PATH': WHY") if the file
 * cannot be opened or is not a well-formed ELF file.
 */
struct elffile *elffile_open(const char *path);

/* Like elffile_open() without reporting: on failure *why is the message (caller frees). */
struct elffile *elffile_open_why(const char *path, char **why);

/* Opens an ELF image held in memory (copied) without reporting; name is used in *why. */
struct elffile *elffile_open_mem(const void *buf, size_t len, const char *name, char **why);

void elffile_close(struct elffile *ef);

/* Profile offset <-> ELF vaddr through the PT_LOAD segment holding it; -1 if none. */
int elffile_off_to_vaddr(const struct elffile *ef, uint64_t off, uint64_t *vaddr);
int elffile_vaddr_to_off(const struct elffile *ef, uint64_t vaddr, uint64_t *off);

/* The section called name, or NULL. */
const struct elf_section *elffile_section(const struct elffile *ef, const char *name);

/* The allocated section holding vaddr (SHF_ALLOC), or NULL. */
const struct elf_section *elffile_section_at(const struct elffile *ef, uint64_t vaddr);

/* True if vaddr lies in an executable section (or segment if there are no sections). */
bool elffile_is_code(const struct elffile *ef, uint64_t vaddr);

/*
 * The bytes of a section as stored in the file (NULL with *len 0 for
 * SHT_NOBITS or a section that lies outside the file).
 */
const uint8_t *elffile_section_bytes(const struct elffile *ef, const struct elf_section *sec,
				     size_t *len);

/*
 * The contents of a section, decompressed if it is SHF_COMPRESSED (as
 * debug sections of Debian's debug packages are); valid until the file is
 * closed.  NULL (with *len 0) for SHT_NOBITS or on a damaged section.
 */
const uint8_t *elffile_section_data(struct elffile *ef, const struct elf_section *sec,
				    size_t *len);

/*
 * The file bytes at vaddr: a pointer and, in *avail, how many bytes follow
 * within the same file-backed segment.  NULL if vaddr is not backed by file
 * contents (bss, out of range, a debug file whose .text is NOBITS).
 */
const uint8_t *elffile_bytes_at(const struct elffile *ef, uint64_t vaddr, size_t *avail);

/* True if ef has file-backed bytes for its executable sections (not a debug-only file). */
bool elffile_has_code(const struct elffile *ef);

/* Appends the build-id as lowercase hex to a buffer of at least 2*ELF_BUILD_ID_MAX+1. */
void elffile_build_id_hex(const struct elffile *ef, char *buf);

/* The standard CRC-32 (as .gnu_debuglink uses) of a whole file; -1 if unreadable. */
int elffile_crc32_path(const char *path, uint32_t *crc);

/* One symbol table entry, as elffile_symbols() reports it. */
struct elf_sym {
	const char *name;       /* never NULL ("" if unnamed or out of range) */
	uint64_t value, size;
	unsigned type, bind;    /* STT_*, STB_* */
	unsigned shndx;
	size_t index;
};

/*
 * Calls fn for every entry of the symbol table sec (SHT_SYMTAB or
 * SHT_DYNSYM).  Returns 0, or -1 if the table is malformed (entries read
 * before the damage were reported).
 */
int elffile_symbols(const struct elffile *ef, const struct elf_section *sec,
		    void (*fn)(void *ctx, const struct elf_sym *sym), void *ctx);

/* The name of symbol idx of the symbol table with section index symsec (NULL if none). */
const char *elffile_symbol_name(const struct elffile *ef, size_t symsec, size_t idx);

/* One relocation (REL or RELA). */
struct elf_rel {
	uint64_t offset;
	unsigned type;
	size_t sym;
	int64_t addend;
};

/* Calls fn for every relocation of sec (SHT_RELA or SHT_REL); -1 if malformed. */
int elffile_relocs(const struct elffile *ef, const struct elf_section *sec,
		   void (*fn)(void *ctx, const struct elf_rel *rel), void *ctx);

/* libelf's reason for the last failure (for messages). */
const char *elffile_errmsg(void);

#endif
