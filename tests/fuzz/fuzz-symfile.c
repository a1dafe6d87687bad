/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: an epoch's symbol files in their container (db/symfile.h):
 * kallsyms and perf-PID.map.  Byte 0 picks the kind (even: kallsyms, odd:
 * a JIT map), the rest is the file.  Whatever the container and the kind's
 * check accept must encode back to the same bytes and decode again; each
 * input is also tried with its checksums and line count repaired, to reach
 * the line checks behind them.
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "core/crc32c.h"
#include "core/endian.h"
#include "core/strbuf.h"
#include "db/blob.h"
#include "db/symfile.h"

#include <stdlib.h>
#include <string.h>

static void check(int kind, const uint8_t *data, size_t size)
{
	const char *magic = kind == SYMFILE_KALLSYMS ? KSYMS_MAGIC : JITMAP_MAGIC;
	struct strbuf sb = STRBUF_INIT;
	struct blob_header h, h2;
	const void *payload, *p2;
	const char *why;

	if (blob_decode(data, size, magic, SYMFILE_VERSION, &h, &payload, &why) || h.flags ||
	    symfile_check(kind, payload, h.payload_size, h.count, &why))
		return;
	if (h.count != symfile_count_lines(payload, h.payload_size))
		abort();
	blob_encode(magic, h.version, 0, symfile_count_lines(payload, h.payload_size), payload,
		    h.payload_size, &sb);
	if (sb.len != size || memcmp(sb.buf, data, size))
		abort();
	if (blob_decode(sb.buf, sb.len, magic, SYMFILE_VERSION, &h2, &p2, &why) ||
	    symfile_check(kind, p2, h2.payload_size, h2.count, &why))
		abort();
	strbuf_release(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int kind;

	if (size < 1)
		return 0;
	kind = data[0] % 2 ? SYMFILE_JITMAP : SYMFILE_KALLSYMS;
	data++;
	size--;
	check(kind, data, size);
	/* the same text in a sound container */
	if (size >= BLOB_HEADER_SIZE) {
		uint8_t *fixed = malloc(size);

		memcpy(fixed, data, size);
		memcpy(fixed, kind == SYMFILE_KALLSYMS ? KSYMS_MAGIC : JITMAP_MAGIC, 8);
		put_le16(fixed + 8, SYMFILE_VERSION);
		put_le16(fixed + 10, 0);
		put_le32(fixed + 12, symfile_count_lines(fixed + BLOB_HEADER_SIZE,
							 size - BLOB_HEADER_SIZE));
		put_le64(fixed + 16, size - BLOB_HEADER_SIZE);
		put_le32(fixed + 24, crc32c(0, fixed + BLOB_HEADER_SIZE, size - BLOB_HEADER_SIZE));
		put_le32(fixed + 28, crc32c(0, fixed, 28));
		check(kind, fixed, size);
		free(fixed);
	}
	return 0;
}
