/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the stopwatch results decoder (db/watch.h).  The input is a
 * record count (4 bytes, little-endian) and a payload.  Whatever decodes
 * must encode back to the same bytes, and survive grouping and merging. */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "core/endian.h"
#include "core/strbuf.h"
#include "db/watch.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct watch_set s = WATCH_SET_INIT, g = WATCH_SET_INIT, back = WATCH_SET_INIT;
	struct strbuf sb = STRBUF_INIT;
	const char *why;
	uint32_t count;
	uint64_t calls;

	if (size < 4)
		return 0;
	count = get_le32(data) % 1024;
	if (!watch_decode(data + 4, size - 4, count, &s, &why)) {
		watch_encode(&s, &sb);
		if (sb.len != size - 4 || memcmp(sb.buf, data + 4, sb.len))
			abort();
		if (watch_decode(sb.buf, sb.len, count, &back, &why))
			abort();
		watch_set_group(&s, WATCH_BY_FUNCTION, &g);
		for (size_t i = 0; i < s.n; i++)
			watch_set_calls(&g, s.v[i].key, s.v[i].offset, &calls);
		watch_set_sort(&s);
	}
	strbuf_release(&sb);
	watch_set_release(&s);
	watch_set_release(&g);
	watch_set_release(&back);
	return 0;
}
