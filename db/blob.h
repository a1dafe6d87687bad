/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/blob.h - the checksummed binary container that every binary epoch file
 * other than a profile uses (value profiles, stack tables, stopwatch
 * results...): a 32-byte header naming the kind of file, its version and
 * payload size, with a CRC-32C over the payload and one over the header
 * (docs/db-format.md, "Blobs").
 *
 * What the payload holds is the kind's business: its own decoder validates
 * it (and has a fuzz target); this layer guarantees that what the decoder
 * sees is exactly what a writer wrote, whole.  A checker that does not know
 * a kind can still verify the container (blob_decode with magic NULL).
 *
 * The codec is pure (no I/O): the database's files of this form are
 * db/blobfile.h's.
 */
#ifndef DCPI_DB_BLOB_H
#define DCPI_DB_BLOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf;

#define BLOB_HEADER_SIZE 32
#define BLOB_MAGIC_SIZE 8
/* Blobs are read whole; none may be larger. */
#define BLOB_MAX_SIZE (256u << 20)

/*
 * Header, little-endian:
 *   0  8  magic (8 bytes, e.g. "DCPIVALS"; "DCPI" then the kind: [A-Z0-9]{4})
 *   8  2  version of the kind's payload format (>= 1)
 *  10  2  flags (the kind's; unknown bits are the kind's decoder's to refuse)
 *  12  4  count: the number of records in the payload (the kind's meaning)
 *  16  8  payload size in bytes; the file is exactly 32 + this long
 *  24  4  CRC-32C of the payload
 *  28  4  CRC-32C of bytes 0..27
 */
struct blob_header {
	char magic[BLOB_MAGIC_SIZE + 1]; /* NUL-terminated copy */
	uint16_t version;
	uint16_t flags;
	uint32_t count;
	uint64_t payload_size;
};

/* Appends a whole blob file (header + payload) to out. */
void blob_encode(const char *magic, uint16_t version, uint16_t flags, uint32_t count,
		 const void *payload, size_t len, struct strbuf *out);

/*
 * Validates a whole blob file: size, header CRC, payload CRC; with magic
 * non-NULL also the magic, and with max_version non-zero a version in
 * 1..max_version.  On success fills h and points *payload into buf.  On
 * failure returns -1 and sets *why to a static description ("bad magic",
 * "truncated", "bad payload checksum", "unsupported version", ...).
 */
int blob_decode(const void *buf, size_t len, const char *magic, uint16_t max_version,
		struct blob_header *h, const void **payload, const char **why);

/*
 * The header alone, for a blob written or read piece by piece: encoded
 * from the payload's size and CRC-32C (crc32c(0, ...) over it), or
 * validated (as blob_decode() does, the file file_len bytes long) with the
 * CRC the payload must have in *payload_crc.
 */
void blob_encode_header(const char *magic, uint16_t version, uint16_t flags, uint32_t count,
			uint64_t payload_size, uint32_t payload_crc, uint8_t out[BLOB_HEADER_SIZE]);
int blob_decode_header(const void *buf, uint64_t file_len, const char *magic,
		       uint16_t max_version, struct blob_header *h, uint32_t *payload_crc,
		       const char **why);

/* True if buf starts like a blob of any kind ("DCPI" and a valid header CRC). */
bool blob_sniff(const void *buf, size_t len);

#endif
