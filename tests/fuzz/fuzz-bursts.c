/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: the burst traces decoder (db/bursts.h).  The input's first
 * four bytes are the trace count, the rest the payload.  Whatever it
 * accepts must encode back to the same bytes, and merging it into an empty
 * set (resampled to a bound) must give one that encodes and decodes again.
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "core/strbuf.h"
#include "db/bursts.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct burst_set s, t;
	struct hotlist_rng rng = HOTLIST_RNG_INIT(5);
	struct strbuf sb = STRBUF_INIT;
	uint32_t count, n;
	const char *why;

	if (size < 4)
		return 0;
	memcpy(&count, data, 4);
	count %= 1024;
	burst_set_init(&s);
	burst_set_init(&t);
	if (bursts_decode(data + 4, size - 4, count, &s, &why))
		return 0;
	n = bursts_encode(&s, &sb);
	if (n != count || sb.len != size - 4 || memcmp(sb.buf, data + 4, sb.len))
		abort();
	burst_set_merge(&t, &s, 3, &rng);
	if (t.n > 3 || t.seen != s.seen)
		abort();
	strbuf_reset(&sb);
	n = bursts_encode(&t, &sb);
	if (bursts_decode(sb.buf, sb.len, n, &s, &why))
		abort();
	burst_set_release(&s);
	burst_set_release(&t);
	strbuf_release(&sb);
	return 0;
}
