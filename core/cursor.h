/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/cursor.h - a reader of a byte buffer for decoders (after git's
 * decode_varint and get_be32 on a moving pointer): where it is, where the
 * buffer ends, and why it stopped.
 *
 * The one reader of bytes every decoder uses.  Every read checks the
 * bounds.  A read that fails leaves the position where it was, records why
 * (the first reason stays: a decoder's own check may set why itself, or
 * replace it) and returns -1; once why is set, every read fails, so that
 * a decoder may chain reads and test once:
 *
 *   struct cursor c = CURSOR_INIT(payload, len);
 *
 *   if (cursor_varint(&c, &n) || cursor_varint_max(&c, &k, 15, "bad register"))
 *           return c.why;
 *   ...
 *   if (c.p != c.end) "trailing bytes"
 */
#ifndef DCPI_CORE_CURSOR_H
#define DCPI_CORE_CURSOR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct cursor {
	const uint8_t *p;       /* the next byte */
	const uint8_t *end;     /* one past the last */
	const char *why;        /* NULL until a read fails: a static description */
};

#define CURSOR_INIT(buf, len) \
	{ (const uint8_t *)(buf), (const uint8_t *)(buf) + (len), NULL }

/* The bytes left. */
static inline size_t cursor_left(const struct cursor *c)
{
	return (size_t)(c->end - c->p);
}

/* Records why (unless a reason is there already) and returns -1. */
static inline int cursor_fail(struct cursor *c, const char *why)
{
	if (!c->why)
		c->why = why;
	return -1;
}

/*
 * n bytes in place: *out points at them and the cursor moves past them.
 * -1 ("truncated") if fewer are left.
 */
static inline int cursor_bytes(struct cursor *c, uint64_t n, const uint8_t **out)
{
	if (c->why)
		return -1;
	if (n > cursor_left(c))
		return cursor_fail(c, "truncated");
	*out = c->p;
	c->p += n;
	return 0;
}

/* n bytes copied to dst (the host's order, for records in it); -1 ("truncated"). */
static inline int cursor_copy(struct cursor *c, void *dst, size_t n)
{
	const uint8_t *b;

	if (cursor_bytes(c, n, &b))
		return -1;
	memcpy(dst, b, n);
	return 0;
}

/* A little-endian 64-bit word; -1 ("truncated number"). */
int cursor_le64(struct cursor *c, uint64_t *v);

/* A varint (core/varint.h, strict); -1 ("truncated or malformed number"). */
int cursor_varint(struct cursor *c, uint64_t *v);

/* A varint of at most max; -1 with why `what` if it is larger. */
int cursor_varint_max(struct cursor *c, uint64_t *v, uint64_t max, const char *what);

/*
 * The same reads for a decoder that reads a record's fields in a row and
 * tests once: the value, or 0 (NULL) once a read failed, c->why set and
 * the position left where it was, as above:
 *
 *   uint64_t a = cursor_next(&c), b = cursor_next(&c);
 *   const uint8_t *page = cursor_next_bytes(&c, 4096);
 *   if (c.why) ...                 // truncated or malformed
 */
uint64_t cursor_next(struct cursor *c);
const uint8_t *cursor_next_bytes(struct cursor *c, uint64_t n);

/*
 * The length of a list: at most max, and no more records than the bytes
 * left after it hold at min_bytes each (0 counts as 1), so that a damaged
 * count never makes a decoder allocate more than its input backs; 0
 * ("count larger than the payload") if it is more.  The one guard of
 * every decoder's lists; cursor_count() is the same with a status.
 */
size_t cursor_next_count(struct cursor *c, uint64_t max, size_t min_bytes);
int cursor_count(struct cursor *c, uint64_t *n, uint64_t max, size_t min_bytes);

/*
 * A string: its length (a varint of at most max), then that many bytes,
 * none of them NUL.  Returns the bytes in place (not terminated) and sets
 * *len; NULL ("string too long", "truncated string", "NUL in a string").
 */
const char *cursor_string(struct cursor *c, size_t max, size_t *len);

#endif
