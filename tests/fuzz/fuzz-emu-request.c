/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: what the collector sends its emulating worker
 * (collect/emu-proto.h): a burst with its copy of memory, pages, a trail, a read's bytes.  The worker checks it
 * too.  The input's first byte picks the message; whatever a decoder
 * accepts must encode back to the same bytes, within its bounds.
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "collect/emu-proto.h"
#include "core/strbuf.h"

#include <stdlib.h>
#include <string.h>

static void same(const struct strbuf *sb, const uint8_t *payload, size_t len)
{
	if (sb->len != EMU_HEADER_SIZE + len || memcmp(sb->buf + EMU_HEADER_SIZE, payload, len))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf sb = STRBUF_INIT;
	const uint8_t *p = data + 1;
	size_t len = size ? size - 1 : 0;
	const char *why;

	if (!size)
		return 0;
	switch (data[0] % 4) {
	case 0: {
		static struct emu_page snap[EMU_MAX_SNAP];
		struct emu_burst_req r;

		if (emu_decode_burst(p, len, &r, snap, &why))
			break;
		if (!r.limit || r.detail > r.limit || r.trace > r.detail || r.n_snap > EMU_MAX_SNAP)
			abort();
		for (size_t i = 1; i < r.n_snap; i++)
			if (r.snap[i].addr <= r.snap[i - 1].addr || !r.snap[i].data)
				abort();
		emu_encode_burst(&sb, 1, &r);
		same(&sb, p, len);
		break;
	}
	case 1: {
		struct emu_trail_req r;

		if (emu_decode_trail(p, len, &r, &why))
			break;
		/* a trail may have no points (then it counts from none) */
		if (r.n > EMU_MAX_TRAIL || (r.n ? r.count_from >= r.n : r.count_from != 0))
			abort();
		emu_encode_trail(&sb, 1, &r);
		same(&sb, p, len);
		emu_trail_req_release(&r);
		break;
	}
	case 2: {
		int64_t n;
		const uint8_t *d;

		if (emu_decode_data(p, len, EMU_MAX_READ, &n, &d, &why))
			break;
		if (n > (int64_t)EMU_MAX_READ || (n > 0 && !d))
			abort();
		emu_encode_data(&sb, 1, n, d);
		same(&sb, p, len);
		break;
	}
	default: {
		static struct emu_page pages[EMU_MAX_PAGE_REQ];
		size_t n;

		if (emu_decode_pages(p, len, pages, EMU_MAX_PAGE_REQ, &n, &why))
			break;
		for (size_t i = 0; i < n; i++)
			if (pages[i].addr % EMU_PAGE_SIZE || pages[i].ok != !!pages[i].data)
				abort();
		emu_encode_pages(&sb, 1, pages, n);
		same(&sb, p, len);
		break;
	}
	}
	strbuf_release(&sb);
	return 0;
}
