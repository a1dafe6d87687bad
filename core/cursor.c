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

uint64_t cursor_next(struct cursor *c)
{
	uint64_t v;

	return cursor_varint(c, &v) ? 0 : v;
}

const uint8_t *cursor_next_bytes(struct cursor *c, uint64_t n)
{
	const uint8_t *b;

	return cursor_bytes(c, n, &b) ? NULL : b;
}

size_t cursor_next_count(struct cursor *c, uint64_t max, size_t min_bytes)
{
	const uint8_t *at = c->p;
	uint64_t n;

	if (c->why)
		return 0;
	if (varint_decode(&c->p, c->end, &n) || n > max ||
	    n > cursor_left(c) / (min_bytes ? min_bytes : 1) || n > SIZE_MAX) {
		c->p = at;
		cursor_fail(c, "count larger than the payload");
		return 0;
	}
	return (size_t)n;
}

int cursor_count(struct cursor *c, uint64_t *n, uint64_t max, size_t min_bytes)
{
	if (c->why)
		return -1;
	*n = cursor_next_count(c, max, min_bytes);
	return c->why ? -1 : 0;
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
