/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the stack table decoder (db/stacks.h), the canonical
 * re-encoding of whatever it accepts, and merging it into itself.  The
 * input is a payload; its first four bytes are the header's record count. */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "core/endian.h"
#include "core/strbuf.h"
#include "db/stacks.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stack_table t, u;
	struct strbuf sb = STRBUF_INIT, sb2 = STRBUF_INIT;
	const char *why;
	uint32_t count, count2;
	uint64_t total;

	if (size < 4)
		return 0;
	count = get_le32(data);
	if (stack_table_decode(&t, data + 4, size - 4, count, &why))
		return 0;
	/* canonical: what decodes re-encodes to the same bytes */
	stack_table_encode(&t, &sb, &count2);
	if (count2 != count || sb.len != size - 4 || memcmp(sb.buf, data + 4, sb.len))
		abort();
	/* merging a table into a copy of itself doubles every count */
	if (stack_table_decode(&u, sb.buf, sb.len, count2, &why))
		abort();
	total = t.total;
	stack_table_merge(&u, &t);
	if (total < UINT64_MAX / 2 && u.total != 2 * total)
		abort();
	stack_table_encode(&u, &sb2, &count2);
	if (count2 != count)
		abort();
	stack_table_release(&u);
	stack_table_release(&t);
	strbuf_release(&sb);
	strbuf_release(&sb2);
	return 0;
}
