/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * unwind/utable.h - a compact unwind table for one binary: for every range
 * of file offsets of its code, how to find the caller's frame (x86-64).
 *
 * Built from the binary's .eh_frame by running every FDE's CFA program
 * once (unwind/cfi.h), so that unwinding a sample is a binary search and a
 * few loads instead of a DWARF interpretation per frame, which is what lets
 * the collector unwind at sampling time (the approach of the BPF-based
 * continuous profilers).  Rows are keyed by file offset, not address: a
 * profile's offsets and a process's mappings (pc - start + pgoff) give
 * file offsets directly, whatever the load address.
 *
 * The unprivileged worker builds tables (collect/unwind-worker.h) and
 * sends them encoded; the collector decodes and validates them before use
 * (utable_decode is a fuzz target): the encoding is all the root process
 * ever reads of a binary.
 */
#ifndef DCPI_UNWIND_UTABLE_H
#define DCPI_UNWIND_UTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/cfi.h"

struct strbuf;

/* One row: the rule from file offset start on.  12 bytes. */
struct utable_row {
	uint32_t start;
	uint8_t cfa;            /* enum cfi_cfa */
	uint8_t rbp;            /* enum cfi_rbp */
	int16_t rbp_off;
	int32_t cfa_off;
};

#define UTABLE_BUILD_ID_MAX 64
/* Tables larger than this are refused (a binary with ~1.5M distinct rules). */
#define UTABLE_MAX_ROWS (16u << 20)

struct utable {
	struct utable_row *rows;        /* sorted by start, strictly increasing */
	size_t n;
	uint8_t build_id[UTABLE_BUILD_ID_MAX];
	size_t build_id_len;            /* the binary's GNU build-id; 0 if none */
	uint32_t fdes;                  /* FDEs read */
	uint32_t unsupported;           /* rows with rules this unwinder cannot follow */
};

void utable_release(struct utable *t);

/*
 * Builds the table of the ELF file in elf[0..len).  Returns 0, or -1 with
 * *why a static reason (not ELF, not x86-64, no .eh_frame, malformed
 * .eh_frame before any FDE).  A .eh_frame damaged part-way keeps the rows
 * read before the damage.
 */
int utable_build(const uint8_t *elf, size_t len, struct utable *t, const char **why);

/* The row holding file offset off, or NULL (no CFI there). */
const struct utable_row *utable_find(const struct utable *t, uint64_t off);

/*
 * The wire form: "UTB2", u32 rows, u8 build-id length, the build-id,
 * u32 FDEs, u32 unsupported, then the rows (start u32, cfa u8, rbp u8,
 * rbp_off i16, cfa_off i32), all little-endian.
 */
void utable_encode(const struct utable *t, struct strbuf *out);

/*
 * Decodes and validates an encoded table: exact length, known rule kinds,
 * strictly increasing starts.  Returns 0, or -1 with *why set; -2 for a
 * table of the older format ("UTB1", before CFI_CFA_SIGNAL, _DEREF_RSP
 * and _REG: it marked those rules unsupported), which is to be made again.
 */
int utable_decode(const uint8_t *buf, size_t len, struct utable *t, const char **why);

/* Bytes of memory a decoded table holds. */
size_t utable_bytes(const struct utable *t);

#endif
