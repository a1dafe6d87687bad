/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * unwind/elfcfi.c - the ELF64 headers an unwinder needs, bounds-checked.
 */
#include "config.h"

#include "unwind/elfcfi.h"

#include <string.h>

#include "core/endian.h"

enum {
	EHDR_SIZE = 64, PHDR_SIZE = 56, SHDR_SIZE = 64,
	PT_LOAD = 1, PT_NOTE = 4, PT_GNU_EH_FRAME = 0x6474e550,
	SHT_NOTE = 7, SHT_NOBITS = 8, SHF_COMPRESSED = 0x800, PF_X = 1, NT_GNU_BUILD_ID = 3,
	EM_X86_64 = 62,
};

/* True if [off, off + size) lies inside a buffer of len bytes. */
static bool inside(size_t len, uint64_t off, uint64_t size)
{
	return off <= len && size <= len - off;
}

static int read_loads(const uint8_t *buf, size_t len, struct elfcfi *e, uint64_t phoff,
		      unsigned phnum, uint64_t *eh_hdr_off, uint64_t *eh_hdr_vaddr, const char **why)
{
	if (!inside(len, phoff, (uint64_t)phnum * PHDR_SIZE)) {
		*why = "truncated program headers";
		return -1;
	}
	for (unsigned i = 0; i < phnum; i++) {
		const uint8_t *ph = buf + phoff + (size_t)i * PHDR_SIZE;
		uint32_t type = get_le32(ph);

		if (type == PT_GNU_EH_FRAME) {
			*eh_hdr_off = get_le64(ph + 8);
			*eh_hdr_vaddr = get_le64(ph + 16);
		}
		if (type != PT_LOAD || e->n_loads >= ELFCFI_MAX_LOADS)
			continue;
		e->loads[e->n_loads].offset = get_le64(ph + 8);
		e->loads[e->n_loads].vaddr = get_le64(ph + 16);
		e->loads[e->n_loads].filesz = get_le64(ph + 32);
		e->loads[e->n_loads].exec = get_le32(ph + 4) & PF_X;
		e->n_loads++;
	}
	return 0;
}

/* Looks for NT_GNU_BUILD_ID in the notes at [off, off + size). */
static void scan_notes(const uint8_t *buf, size_t len, uint64_t off, uint64_t size,
		       struct elfcfi *e)
{
	uint64_t end;

	if (!inside(len, off, size))
		return;
	end = off + size;
	while (end - off >= 12 && !e->build_id_len) {
		uint32_t namesz = get_le32(buf + off), descsz = get_le32(buf + off + 4);
		uint32_t type = get_le32(buf + off + 8);
		uint64_t name = off + 12, desc = name + (((uint64_t)namesz + 3) & ~3ull);
		uint64_t next = desc + (((uint64_t)descsz + 3) & ~3ull);

		if (next > end)
			return;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(buf + name, "GNU", 4) &&
		    descsz && descsz <= ELFCFI_BUILD_ID_MAX) {
			memcpy(e->build_id, buf + desc, descsz);
			e->build_id_len = descsz;
		}
		off = next;
	}
}

/* Finds .eh_frame (and notes) through the section headers. */
static void read_sections(const uint8_t *buf, size_t len, struct elfcfi *e, uint64_t shoff,
			  unsigned shnum, unsigned shstrndx)
{
	const uint8_t *names;
	uint64_t names_off, names_size;

	if (!shoff || !shnum || shstrndx >= shnum ||
	    !inside(len, shoff, (uint64_t)shnum * SHDR_SIZE))
		return;
	names_off = get_le64(buf + shoff + (size_t)shstrndx * SHDR_SIZE + 24);
	names_size = get_le64(buf + shoff + (size_t)shstrndx * SHDR_SIZE + 32);
	if (!inside(len, names_off, names_size))
		return;
	names = buf + names_off;
	for (unsigned i = 0; i < shnum; i++) {
		const uint8_t *sh = buf + shoff + (size_t)i * SHDR_SIZE;
		uint32_t name = get_le32(sh), type = get_le32(sh + 4);
		uint64_t addr = get_le64(sh + 16), off = get_le64(sh + 24), size = get_le64(sh + 32);

		if (type == SHT_NOTE)
			scan_notes(buf, len, off, size, e);
		if (type == SHT_NOBITS || name >= names_size ||
		    strnlen((const char *)names + name, names_size - name) == names_size - name)
			continue;
		if (!strcmp((const char *)names + name, ".eh_frame") && inside(len, off, size) &&
		    !e->eh_frame.buf) {
			e->eh_frame.buf = buf + off;
			e->eh_frame.len = (size_t)size;
			e->eh_frame.addr = addr;
		}
		if (!strcmp((const char *)names + name, ".debug_frame") && inside(len, off, size) &&
		    !e->debug_frame.buf) {
			e->debug_frame.buf = buf + off;
			e->debug_frame.len = (size_t)size;
			e->debug_frame.addr = addr;
			e->debug_frame_zlib = get_le64(sh + 8) & SHF_COMPRESSED;
		}
	}
}

/*
 * Without section headers: .eh_frame_hdr (PT_GNU_EH_FRAME) points at
 * .eh_frame, which then runs to its terminator or the end of its segment.
 */
static void eh_frame_from_hdr(const uint8_t *buf, size_t len, struct elfcfi *e,
			      uint64_t hdr_off, uint64_t hdr_vaddr)
{
	uint64_t vaddr, off;
	int32_t rel;

	/* version 1, eh_frame_ptr encoded pcrel|sdata4 (0x1b): what every linker writes */
	if (!inside(len, hdr_off, 8) || buf[hdr_off] != 1 || buf[hdr_off + 1] != 0x1b)
		return;
	rel = (int32_t)get_le32(buf + hdr_off + 4);
	vaddr = hdr_vaddr + 4 + (uint64_t)(int64_t)rel;
	if (!elfcfi_vaddr_to_offset(e, vaddr, &off))
		return;
	for (size_t i = 0; i < e->n_loads; i++) {
		const struct elfcfi_load *l = &e->loads[i];

		if (off >= l->offset && off < l->offset + l->filesz &&
		    inside(len, off, l->offset + l->filesz - off)) {
			e->eh_frame.buf = buf + off;
			e->eh_frame.len = (size_t)(l->offset + l->filesz - off);
			e->eh_frame.addr = vaddr;
			return;
		}
	}
}

int elfcfi_read(const uint8_t *buf, size_t len, struct elfcfi *e, const char **why)
{
	uint64_t phoff, shoff, hdr_off = 0, hdr_vaddr = 0;
	unsigned phnum, shnum, shstrndx;

	memset(e, 0, sizeof(*e));
	if (len < EHDR_SIZE || memcmp(buf, "\177ELF", 4)) {
		*why = "not an ELF file";
		return -1;
	}
	if (buf[4] != 2 || buf[5] != 1 || get_le16(buf + 18) != EM_X86_64) {
		*why = "not an x86-64 ELF64 file";
		return -1;
	}
	e->entry = get_le64(buf + 24);
	phoff = get_le64(buf + 32);
	shoff = get_le64(buf + 40);
	phnum = get_le16(buf + 56);
	shnum = get_le16(buf + 60);
	shstrndx = get_le16(buf + 62);
	if (get_le16(buf + 54) != PHDR_SIZE || (shnum && get_le16(buf + 58) != SHDR_SIZE)) {
		*why = "unexpected ELF header sizes";
		return -1;
	}
	if (read_loads(buf, len, e, phoff, phnum, &hdr_off, &hdr_vaddr, why))
		return -1;
	e->eh_frame.is64 = e->eh_frame.little = true;
	e->debug_frame.is64 = e->debug_frame.little = e->debug_frame.debug_frame = true;
	read_sections(buf, len, e, shoff, shnum, shstrndx);
	for (unsigned i = 0; i < phnum && !e->build_id_len; i++) {
		const uint8_t *ph = buf + phoff + (size_t)i * PHDR_SIZE;

		if (get_le32(ph) == PT_NOTE)
			scan_notes(buf, len, get_le64(ph + 8), get_le64(ph + 32), e);
	}
	if (!e->eh_frame.buf && hdr_off)
		eh_frame_from_hdr(buf, len, e, hdr_off, hdr_vaddr);
	return 0;
}

bool elfcfi_vaddr_to_offset(const struct elfcfi *e, uint64_t vaddr, uint64_t *offset)
{
	for (size_t i = 0; i < e->n_loads; i++) {
		const struct elfcfi_load *l = &e->loads[i];

		if (vaddr >= l->vaddr && vaddr - l->vaddr < l->filesz) {
			*offset = vaddr - l->vaddr + l->offset;
			return true;
		}
	}
	return false;
}
