/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/varint.h - unsigned LEB128 variable-length integers.
 *
 * 7 bits per byte, least significant group first, high bit set on every byte
 * but the last.  Values 0..127 take one byte; a uint64_t takes at most 10.
 * The decoder is strict: it rejects truncated input, encodings longer than
 * 10 bytes, values that overflow 64 bits and non-canonical (overlong)
 * encodings, so that every value has exactly one encoding.  Decoders read
 * them through a cursor (core/cursor.h: cursor_varint(), cursor_next()).
 */
#ifndef DCPI_CORE_VARINT_H
#define DCPI_CORE_VARINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VARINT_MAX 10

/* Writes v to out (at least VARINT_MAX bytes); returns the bytes written. */
size_t varint_encode(uint64_t v, uint8_t *out);

/* The number of bytes varint_encode(v) writes. */
size_t varint_len(uint64_t v);

/*
 * Decodes one value from [*p, end); on success stores it in *v, advances *p
 * and returns 0.  Returns -1 (leaving *p unchanged) on malformed input.
 */
int varint_decode(const uint8_t **p, const uint8_t *end, uint64_t *v);

struct strbuf;

/* Appends v's encoding to sb. */
void strbuf_add_varint(struct strbuf *sb, uint64_t v);

/* Appends a string as cursor_string (core/cursor.h) reads it: len, then the bytes. */
void strbuf_add_varint_string(struct strbuf *sb, const char *s, size_t len);

/*
 * Zigzag: a difference modulo 2^64 (a signed number) as an unsigned one
 * that is small when the difference is small either way: 0, -1, 1, -2 ->
 * 0, 1, 2, 3.  Differences of values and addresses are stored so.
 */
static inline uint64_t varint_zigzag(uint64_t d)
{
	return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}

static inline uint64_t varint_unzigzag(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

#endif
