/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/endian.h - little-endian loads and stores for the on-disk formats,
 * byte by byte (no alignment or host-order assumptions).
 */
#ifndef DCPI_CORE_ENDIAN_H
#define DCPI_CORE_ENDIAN_H

#include <stdint.h>

static inline void put_le16(uint8_t *b, uint16_t v)
{
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
}

static inline void put_le32(uint8_t *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static inline void put_le64(uint8_t *b, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t get_le16(const uint8_t *b)
{
	return (uint16_t)(b[0] | b[1] << 8);
}

static inline uint32_t get_le32(const uint8_t *b)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

static inline uint64_t get_le64(const uint8_t *b)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

#endif
