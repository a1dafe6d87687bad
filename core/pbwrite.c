/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/pbwrite.c - the protobuf wire format, writing side.
 */
#include "config.h"

#include "core/pbwrite.h"

#include <string.h>

#include "core/strbuf.h"
#include "core/varint.h"

static void put_varint(struct strbuf *out, uint64_t v)
{
	uint8_t b[VARINT_MAX];

	strbuf_add(out, b, varint_encode(v, b));
}

void pb_uint(struct strbuf *out, unsigned field, uint64_t v)
{
	put_varint(out, (uint64_t)field << 3);
	put_varint(out, v);
}

void pb_bytes(struct strbuf *out, unsigned field, const void *data, size_t len)
{
	put_varint(out, (uint64_t)field << 3 | 2);
	put_varint(out, len);
	strbuf_add(out, data, len);
}

void pb_string(struct strbuf *out, unsigned field, const char *s)
{
	pb_bytes(out, field, s, strlen(s));
}

void pb_packed(struct strbuf *out, unsigned field, const uint64_t *v, size_t n)
{
	size_t len = 0;

	for (size_t i = 0; i < n; i++)
		len += varint_len(v[i]);
	put_varint(out, (uint64_t)field << 3 | 2);
	put_varint(out, len);
	for (size_t i = 0; i < n; i++)
		put_varint(out, v[i]);
}
