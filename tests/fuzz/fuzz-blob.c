/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the blob container decoder (db/blob.h), and the encode ->
 * decode round trip of whatever it accepts. */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "core/crc32c.h"
#include "core/endian.h"
#include "core/strbuf.h"
#include "db/blob.h"

#include <stdlib.h>
#include <string.h>

static void check(const uint8_t *data, size_t size)
{
	struct strbuf sb = STRBUF_INIT;
	struct blob_header h, h2;
	const void *payload, *p2;
	const char *why;

	if (blob_decode(data, size, NULL, 0, &h, &payload, &why))
		return;
	if (!blob_sniff(data, size))
		abort();
	blob_encode(h.magic, h.version, h.flags, h.count, payload, h.payload_size, &sb);
	if (sb.len != size || memcmp(sb.buf, data, size))
		abort();
	if (blob_decode(sb.buf, sb.len, h.magic, h.version, &h2, &p2, &why))
		abort();
	strbuf_release(&sb);
}

/* Each input is also tried with its checksums repaired, to reach past them. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *fixed;

	check(data, size);
	if (size < BLOB_HEADER_SIZE || memcmp(data, "DCPI", 4))
		return 0;
	fixed = malloc(size);
	memcpy(fixed, data, size);
	put_le32(fixed + 24, crc32c(0, fixed + BLOB_HEADER_SIZE, size - BLOB_HEADER_SIZE));
	put_le32(fixed + 28, crc32c(0, fixed, 28));
	check(fixed, size);
	free(fixed);
	return 0;
}
