/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "core/cursor.h"
#include "core/endian.h"
#include "core/varint.h"

int cursor_le64(struct cursor *c, uint64_t *v)
{
	if (c->why)
		return -1;
	if (cursor_left(c) < 8)
		return cursor_fail(c, "truncated number");
	*v = get_le64(c->p);
	c->p += 8;
	return 0;
}

int cursor_varint(struct cursor *c, uint64_t *v)
{
	if (c->why)
		return -1;
	if (varint_decode(&c->p, c->end, v))
		return cursor_fail(c, "truncated or malformed number");
	return 0;
}

int cursor_varint_max(struct cursor *c, uint64_t *v, uint64_t max, const char *what)
{
	const uint8_t *at = c->p;

	if (cursor_varint(c, v))
		return -1;
	if (*v > max) {
		c->p = at;
		return cursor_fail(c, what);
	}
	return 0;
}

int cursor_count(struct cursor *c, uint64_t *n, uint64_t max, size_t min_bytes)
{
	struct varint_reader r = VARINT_READER(c->p, cursor_left(c));

	if (c->why)
		return -1;
	*n = varint_count(&r, max, min_bytes);
	if (r.bad)
		return cursor_fail(c, "count larger than the payload");
	c->p = r.p;
	return 0;
}

const char *cursor_string(struct cursor *c, size_t max, size_t *len)
{
	const uint8_t *at = c->p;
	const char *s;
	uint64_t n;

	if (cursor_varint_max(c, &n, max, "string too long"))
		return NULL;
	if (n > cursor_left(c)) {
		c->p = at;
		cursor_fail(c, "truncated string");
		return NULL;
	}
	if (memchr(c->p, 0, (size_t)n)) {
		c->p = at;
		cursor_fail(c, "NUL in a string");
		return NULL;
	}
	s = (const char *)c->p;
	c->p += n;
	*len = (size_t)n;
	return s;
}
