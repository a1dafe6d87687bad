/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "db/blob.h"
#include "core/crc32c.h"
#include "core/die.h"
#include "core/endian.h"
#include "core/strbuf.h"

#include <string.h>

enum {
	B_MAGIC = 0, B_VERSION = 8, B_FLAGS = 10, B_COUNT = 12, B_PAYLOAD = 16,
	B_PAYLOAD_CRC = 24, B_HEADER_CRC = 28,
};

/*
 * A magic is "DCPI" and four capital letters or digits naming the kind: the
 * encoder writes nothing else, so the decoder accepts nothing else (a NUL
 * inside it, for one, would not survive being copied as a string).
 */
static bool magic_ok(const uint8_t *m)
{
	if (memcmp(m, "DCPI", 4))
		return false;
	for (int i = 4; i < BLOB_MAGIC_SIZE; i++)
		if (!((m[i] >= 'A' && m[i] <= 'Z') || (m[i] >= '0' && m[i] <= '9')))
			return false;
	return true;
}

void blob_encode_header(const char *magic, uint16_t version, uint16_t flags, uint32_t count,
			uint64_t payload_size, uint32_t payload_crc, uint8_t out[BLOB_HEADER_SIZE])
{
	if (strlen(magic) != BLOB_MAGIC_SIZE || !magic_ok((const uint8_t *)magic))
		BUG("blob magic '%s' is not \"DCPI\" and four capitals or digits", magic);
	memcpy(out + B_MAGIC, magic, BLOB_MAGIC_SIZE);
	put_le16(out + B_VERSION, version);
	put_le16(out + B_FLAGS, flags);
	put_le32(out + B_COUNT, count);
	put_le64(out + B_PAYLOAD, payload_size);
	put_le32(out + B_PAYLOAD_CRC, payload_crc);
	put_le32(out + B_HEADER_CRC, crc32c(0, out, B_HEADER_CRC));
}

void blob_encode(const char *magic, uint16_t version, uint16_t flags, uint32_t count,
		 const void *payload, size_t len, struct strbuf *out)
{
	uint8_t h[BLOB_HEADER_SIZE];

	blob_encode_header(magic, version, flags, count, len, crc32c(0, payload, len), h);
	strbuf_add(out, h, sizeof(h));
	strbuf_add(out, payload, len);
}

static bool header_ok(const uint8_t *b, size_t len)
{
	return len >= BLOB_HEADER_SIZE && magic_ok(b) &&
	       get_le32(b + B_HEADER_CRC) == crc32c(0, b, B_HEADER_CRC);
}

bool blob_sniff(const void *buf, size_t len)
{
	return header_ok(buf, len);
}

int blob_decode_header(const void *buf, uint64_t file_len, const char *magic,
		       uint16_t max_version, struct blob_header *h, uint32_t *payload_crc,
		       const char **why)
{
	const uint8_t *b = buf;

	if (file_len < BLOB_HEADER_SIZE)
		return *why = "truncated header", -1;
	if (!magic_ok(b) || (magic && memcmp(b, magic, BLOB_MAGIC_SIZE)))
		return *why = "bad magic", -1;
	if (get_le32(b + B_HEADER_CRC) != crc32c(0, b, B_HEADER_CRC))
		return *why = "bad header checksum", -1;
	memcpy(h->magic, b, BLOB_MAGIC_SIZE);
	h->magic[BLOB_MAGIC_SIZE] = '\0';
	h->version = get_le16(b + B_VERSION);
	h->flags = get_le16(b + B_FLAGS);
	h->count = get_le32(b + B_COUNT);
	h->payload_size = get_le64(b + B_PAYLOAD);
	if (h->version == 0 || (max_version && h->version > max_version))
		return *why = "unsupported version", -1;
	if (h->payload_size != file_len - BLOB_HEADER_SIZE)
		return *why = h->payload_size > file_len - BLOB_HEADER_SIZE ? "truncated"
									   : "trailing bytes", -1;
	*payload_crc = get_le32(b + B_PAYLOAD_CRC);
	return 0;
}

int blob_decode(const void *buf, size_t len, const char *magic, uint16_t max_version,
		struct blob_header *h, const void **payload, const char **why)
{
	const uint8_t *b = buf;
	uint32_t crc;

	if (blob_decode_header(buf, len, magic, max_version, h, &crc, why))
		return -1;
	if (crc != crc32c(0, b + BLOB_HEADER_SIZE, len - BLOB_HEADER_SIZE))
		return *why = "bad payload checksum", -1;
	*payload = b + BLOB_HEADER_SIZE;
	return 0;
}
