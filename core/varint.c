/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "core/varint.h"
#include "core/strbuf.h"

size_t varint_encode(uint64_t v, uint8_t *out)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

int varint_decode(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *q = *p;
	uint64_t result = 0;
	unsigned shift = 0;

	for (;;) {
		uint8_t b;

		if (q >= end || shift >= 64)
			return -1;
		b = *q++;
		if (shift == 63 && (b & 0x7e))
			return -1; /* overflows 64 bits */
		result |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (b == 0 && shift)
				return -1; /* overlong: a trailing zero group */
			break;
		}
		shift += 7;
	}
	*v = result;
	*p = q;
	return 0;
}

void strbuf_add_varint(struct strbuf *sb, uint64_t v)
{
	uint8_t b[VARINT_MAX];

	strbuf_add(sb, b, varint_encode(v, b));
}

void strbuf_add_varint_string(struct strbuf *sb, const char *s, size_t len)
{
	strbuf_add_varint(sb, len);
	strbuf_add(sb, s, len);
}
