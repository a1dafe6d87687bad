/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: image index parser, with a parse -> format -> parse round trip. */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "core/crc32c.h"
#include "core/strbuf.h"
#include "db/image.h"

#include <stdlib.h>
#include <string.h>

static void check(const uint8_t *data, size_t size)
{
	struct image_index idx, back;
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	const char *why;

	if (image_index_parse((const char *)data, size, &idx, &why) == 0) {
		image_index_format(&idx, &a);
		if (image_index_parse(a.buf, a.len, &back, &why) || back.n != idx.n)
			abort();
		image_index_format(&back, &b);
		if (a.len != b.len || memcmp(a.buf, b.buf, a.len))
			abort();
		image_index_release(&back);
		image_index_release(&idx);
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
