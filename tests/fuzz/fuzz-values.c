/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: the value profile decoder (db/values.h).  The input's
 * first four bytes are the record count, the rest the payload.  Whatever
 * it accepts must encode back to the same bytes, and merging it with
 * itself must give a profile that encodes and decodes again.
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "core/strbuf.h"
#include "db/values.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct values_profile p = VALUES_PROFILE_INIT, q = VALUES_PROFILE_INIT;
	struct hotlist_rng rng = HOTLIST_RNG_INIT(7);
	struct strbuf sb = STRBUF_INIT;
	uint32_t count, n;
	const char *why;

	if (size < 4)
		return 0;
	memcpy(&count, data, 4);
	count %= 4096;
	if (values_decode(data + 4, size - 4, count, &p, &why))
		return 0;
	n = values_encode(&p, &sb);
	if (n != count || sb.len != size - 4 || memcmp(sb.buf, data + 4, sb.len))
		abort();
	strbuf_reset(&sb);
	if (values_decode(data + 4, size - 4, count, &q, &why))
		abort();
	values_merge(&q, &p, &rng);
	n = values_encode(&q, &sb);
	if (n != count || values_decode(sb.buf, sb.len, n, &p, &why))
		abort();
	for (size_t i = 0; i < p.n; i++)
		for (unsigned k = 0; k < VALUES_NREGS; k++)
			if ((p.v[i].mask & (1u << k)) && p.v[i].h[k].n > VALUES_CAP)
				abort();
	values_profile_release(&p);
	values_profile_release(&q);
	strbuf_release(&sb);
	return 0;
}
