/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/hash.h - non-cryptographic hashing.
 *
 * hash_u64() is a fast integer mixer (the splitmix64 finaliser) for hash
 * tables.  hash_bytes() is 64-bit FNV-1a: stable across versions and
 * machines, so it can name things on disk (image keys of images without a
 * build-id); never rely on it against an adversary.
 */
#ifndef DCPI_CORE_HASH_H
#define DCPI_CORE_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

#define HASH_FNV_INIT 0xcbf29ce484222325ull

static inline uint64_t hash_bytes(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	while (len--) {
		h ^= *p++;
		h *= 0x100000001b3ull;
	}
	return h;
}

#endif
