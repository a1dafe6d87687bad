/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: the path profile decoder (db/paths.h).  The input's first
 * four bytes are the blob's count, the rest the payload.  Whatever it
 * accepts must encode back to the same bytes, and merging it into itself
 * must give a profile that encodes and decodes again, its windows still
 * within their bound.
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "core/strbuf.h"
#include "db/paths.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct paths_profile p, q;
	struct hotlist_rng rng = HOTLIST_RNG_INIT(5);
	struct strbuf sb = STRBUF_INIT;
	uint32_t count, n;
	const char *why;

	if (size < 4)
		return 0;
	memcpy(&count, data, 4);
	paths_profile_init(&p);
	paths_profile_init(&q);
	if (paths_decode(data + 4, size - 4, count, &p, &why))
		return 0;
	n = paths_encode(&p, &sb);
	if (n != count || sb.len != size - 4 || memcmp(sb.buf, data + 4, sb.len))
		abort();
	paths_merge(&q, &p, &rng);
	paths_merge(&q, &p, &rng);
	if (q.n_win > PATHS_KEEP_WINDOWS || q.n_blocks != p.n_blocks || q.n_edges != p.n_edges)
		abort();
	strbuf_reset(&sb);
	n = paths_encode(&q, &sb);
	if (paths_decode(sb.buf, sb.len, n, &p, &why))
		abort();
	paths_profile_release(&p);
	paths_profile_release(&q);
	strbuf_release(&sb);
	return 0;
}
