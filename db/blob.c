/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "db/blob.h"
#include "core/crc32c.h"
#include "core/die.h"
#include "core/endian.h"
#include "core/strbuf.h"
#include "db/check.h"
#include "db/damage.h"
#include "db/db.h"

#include <stdlib.h>
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

void blob_encode(const char *magic, uint16_t version, uint16_t flags, uint32_t count,
		 const void *payload, size_t len, struct strbuf *out)
{
	uint8_t h[BLOB_HEADER_SIZE];

	if (strlen(magic) != BLOB_MAGIC_SIZE || !magic_ok((const uint8_t *)magic))
		BUG("blob magic '%s' is not \"DCPI\" and four capitals or digits", magic);
	memcpy(h + B_MAGIC, magic, BLOB_MAGIC_SIZE);
	put_le16(h + B_VERSION, version);
	put_le16(h + B_FLAGS, flags);
	put_le32(h + B_COUNT, count);
	put_le64(h + B_PAYLOAD, len);
	put_le32(h + B_PAYLOAD_CRC, crc32c(0, payload, len));
	put_le32(h + B_HEADER_CRC, crc32c(0, h, B_HEADER_CRC));
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

int blob_decode(const void *buf, size_t len, const char *magic, uint16_t max_version,
		struct blob_header *h, const void **payload, const char **why)
{
	const uint8_t *b = buf;

	if (len < BLOB_HEADER_SIZE)
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
	if (h->payload_size != len - BLOB_HEADER_SIZE)
		return *why = h->payload_size > len - BLOB_HEADER_SIZE ? "truncated"
								      : "trailing bytes", -1;
	if (get_le32(b + B_PAYLOAD_CRC) != crc32c(0, b + BLOB_HEADER_SIZE, len - BLOB_HEADER_SIZE))
		return *why = "bad payload checksum", -1;
	*payload = b + BLOB_HEADER_SIZE;
	return 0;
}

int db_blob_store(struct db *db, uint32_t seq, const char *name, const char *magic,
		  uint16_t version, uint16_t flags, uint32_t count, const void *payload,
		  size_t len)
{
	struct strbuf sb = STRBUF_INIT;
	int r;

	blob_encode(magic, version, flags, count, payload, len, &sb);
	r = db_aux_store(db, seq, name, sb.buf, sb.len);
	strbuf_release(&sb);
	return r;
}

int db_blob_load(struct db *db, uint32_t seq, const char *name, const char *magic,
		 uint16_t max_version, struct strbuf *buf, struct blob_header *h)
{
	const struct db_blob_kind *kind;
	const void *payload;
	const char *why;
	int r;

	strbuf_reset(buf);
	r = db_aux_load(db, seq, name, BLOB_MAX_SIZE, buf);
	if (r)
		return r;
	if (!blob_decode(buf->buf, buf->len, magic, max_version, h, &payload, &why))
		return 0;
	kind = magic ? db_blob_kind_for_magic(magic) : NULL;
	db_damage(db, DB_DAMAGED, seq, name, "corrupt %s: %s", kind ? kind->what : "blob", why);
	return -2;
}

int db_blob_quarantine(struct db *db, uint32_t seq, const char *name)
{
	return db_file_quarantine(db, seq, name);
}

int db_blob_merge(struct db *db, uint32_t seq, const char *name, const char *magic,
		  uint16_t version, uint16_t flags, blob_merge_fn merge, void *ctx)
{
	struct strbuf old = STRBUF_INIT, out = STRBUF_INIT;
	struct blob_header h;
	uint32_t count = 0;
	int r;

	r = db_blob_load(db, seq, name, magic, version, &old, &h);
	if (r == -2)
		r = db_blob_quarantine(db, seq, name) ? -1 : 1;
	if (r < 0)
		goto out;
	if (r == 1)
		r = merge(ctx, NULL, 0, NULL, &out, &count);
	else
		r = merge(ctx, old.buf + BLOB_HEADER_SIZE, old.len - BLOB_HEADER_SIZE, &h, &out,
			  &count);
	if (!r)
		r = db_blob_store(db, seq, name, magic, version, flags, count, out.buf, out.len);
out:
	strbuf_release(&old);
	strbuf_release(&out);
	return r;
}
