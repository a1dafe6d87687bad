/*
 * core/varint.h - unsigned LEB128 variable-length integers.
 *
 * 7 bits per byte, least significant group first, high bit set on every byte
 * but the last.  Values 0..127 take one byte; a uint64_t takes at most 10.
 * The decoder is strict: it rejects truncated input, encodings longer than
 * 10 bytes, values that overflow 64 bits and non-canonical (overlong)
 * encodings, so that every value has exactly one encoding.
 */
#ifndef DCPI_CORE_VARINT_H
#define DCPI_CORE_VARINT_H

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

#endif
