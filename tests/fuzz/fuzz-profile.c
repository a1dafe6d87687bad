/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the profile file decoder, and the decode -> encode -> decode
 * round trip (a decoded profile must re-encode to the same bytes). */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "core/crc32c.h"
#include "core/strbuf.h"
#include "db/profile.h"

#include <stdlib.h>
#include <string.h>

static void put32(uint8_t *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static void check(const uint8_t *data, size_t size);

/*
 * Checksums stop almost every mutation at the door, so each input is also
 * tried with its header and payload CRCs repaired: that exercises the
 * decoder behind them.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *fixed;

	check(data, size);
	if (size < PROFILE_HEADER_SIZE)
		return 0;
	fixed = malloc(size);
	memcpy(fixed, data, size);
	put32(fixed + 120, crc32c(0, fixed + PROFILE_HEADER_SIZE, size - PROFILE_HEADER_SIZE));
	put32(fixed + 124, crc32c(0, fixed, 124));
	check(fixed, size);
	free(fixed);
	return 0;
}

static void check(const uint8_t *data, size_t size)
{
	struct profile p = PROFILE_INIT, q = PROFILE_INIT;
	struct profile_header h, h2;
	struct strbuf sb = STRBUF_INIT;
	const char *why;

	profile_decode_header(data, size, &h, &why);
	if (profile_decode(data, size, &h, &p, &why) == 0) {
		if (!profile_is_normalized(&p))
			abort();
		profile_encode(&p, &h, &sb);
		if (sb.len != size || memcmp(sb.buf, data, size))
			abort();
		if (profile_decode(sb.buf, sb.len, &h2, &q, &why) || q.n != p.n)
			abort();
	}
	profile_release(&p);
	profile_release(&q);
	strbuf_release(&sb);
}
