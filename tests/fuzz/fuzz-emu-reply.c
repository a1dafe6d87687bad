/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: what the emulating worker sends the root collector
 * (collect/emu-proto.h): a burst's result, a trail's, a page request, a read request.  The
 * worker runs another program's code, so this is hostile input.  The
 * input's first byte picks the message; whatever a decoder accepts must
 * encode back to the same bytes and stay within the protocol's bounds.
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
		struct emu_result r;

		if (emu_decode_result(p, len, &r, &why))
			break;
		if (r.detailed > r.insns || r.n_steps > EMU_MAX_TRACE || r.end >= PATHS_END__COUNT)
			abort();
		emu_encode_result(&sb, 1, &r);
		same(&sb, p, len);
		emu_result_release(&r);
		break;
	}
	case 1: {
		struct emu_trail_result r;
		uint32_t n = len ? p[0] % (EMU_MAX_TRAIL + 1) : 0;

		/* the trail's length comes with the request: the first byte plays it */
		if (!len || emu_decode_trail_result(p + 1, len - 1, n, &r, &why))
			break;
		if (r.matched > n)
			abort();
		for (uint32_t k = 1; k < r.matched; k++)
			if (r.at[k] <= r.at[k - 1] || r.here[k] > r.at[k] - r.at[k - 1])
				abort();
		emu_encode_trail_result(&sb, 1, &r);
		same(&sb, p + 1, len - 1);
		emu_trail_result_release(&r);
		break;
	}
	case 2: {
		uint32_t fd;
		uint64_t off, count;

		if (emu_decode_read_req(p, len, &fd, &off, &count, &why))
			break;
		if (!count || count > EMU_MAX_READ || fd > INT32_MAX)
			abort();
		emu_encode_read_req(&sb, 1, fd, off, count);
		same(&sb, p, len);
		break;
	}
	default: {
		uint64_t addr[EMU_MAX_PAGE_REQ];
		size_t n;

		if (emu_decode_page_req(p, len, addr, EMU_MAX_PAGE_REQ, &n, &why))
			break;
		for (size_t i = 0; i < n; i++)
			if (addr[i] % EMU_PAGE_SIZE || addr[i] >= EMU_USER_END)
				abort();
		emu_encode_page_req(&sb, 1, addr, n);
		same(&sb, p, len);
		break;
	}
	}
	strbuf_release(&sb);
	return 0;
}
