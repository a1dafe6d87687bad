/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: epoch metadata parser (and the text-record layer), with a
 * parse -> format -> parse round trip. */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "core/crc32c.h"
#include "core/strbuf.h"
#include "db/meta.h"

#include <stdlib.h>
#include <string.h>

static void check(const uint8_t *data, size_t size)
{
	struct epoch_meta m, n;
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	const char *why;

	if (epoch_meta_parse((const char *)data, size, &m, &why) == 0) {
		epoch_meta_format(&m, &a);
		if (epoch_meta_parse(a.buf, a.len, &n, &why))
			abort();
		epoch_meta_format(&n, &b);
		if (a.len != b.len || memcmp(a.buf, b.buf, a.len))
			abort();
		epoch_meta_release(&n);
		epoch_meta_release(&m);
	}
	strbuf_release(&a);
	strbuf_release(&b);
}

/*
 * The checksum line stops almost every mutation, so each input is also tried
 * with its last line replaced by the right checksum.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf sb = STRBUF_INIT;
	size_t body = size;

	check(data, size);
	while (body > 0 && data[body - 1] != '\n')
		body--;
	if (body > 0) {
		size_t prev = body - 1;

		while (prev > 0 && data[prev - 1] != '\n')
			prev--;
		body = prev;
	}
	strbuf_add(&sb, data, body);
	strbuf_addf(&sb, "crc32c %08x\n", crc32c(0, sb.buf, sb.len));
	check((const uint8_t *)sb.buf, sb.len);
	strbuf_release(&sb);
	return 0;
}
