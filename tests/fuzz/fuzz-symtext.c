/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: the parsers of symbol text and unwind tables.  Byte 0
 * picks one: 0 kallsyms, 1 a perf map, 2 .eh_frame (64-bit,
 * little-endian, loaded at 0x1000) (all modulo 3), or 254 the collector's
 * kallsyms subset (collect/kallsyms.h, read from a memfd); the rest is its
 * input.  The procedure table built from it must be sorted and
 * non-overlapping; the subset's ranges sorted, disjoint and not empty.
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "disasm/ehframe.h"
#include "disasm/proctab.h"
#include "disasm/textsyms.h"
#include "collect/kallsyms.h"
#include "core/strbuf.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static void check(const struct proctab *t)
{
	for (size_t i = 0; i < t->n; i++) {
		if (t->v[i].end <= t->v[i].start || !t->v[i].name)
			abort();
		if (i && t->v[i].start < t->v[i - 1].end)
			abort();
		if (proctab_find(t, t->v[i].start) != &t->v[i])
			abort();
	}
}

static void kallsyms_subset_case(const uint8_t *data, size_t size)
{
	static const uint64_t addrs[] = { 0, 0x1000, 0xffffffff81000000ull, 0xffffffff81000100ull,
					  0xffffffff81001000ull, 0xffffffffc0000000ull, UINT64_MAX };
	struct strbuf out = STRBUF_INIT;
	struct kallsyms_range *r = NULL;
	size_t nr = 0;
	int fd = memfd_create("kallsyms", MFD_CLOEXEC), ret;

	if (fd < 0)
		return;
	if (write(fd, data, size) != (ssize_t)size || lseek(fd, 0, SEEK_SET)) {
		close(fd);
		return;
	}
	ret = kallsyms_subset_fd(fd, addrs, sizeof(addrs) / sizeof(*addrs), &out, &r, &nr);
	if (ret < -1 || ret > 1 || (ret && (out.len || r || nr)))
		abort();
	for (size_t i = 0; i < nr; i++)
		if (r[i].end <= r[i].start || (i && r[i].start < r[i - 1].end))
			abort();
	free(r);
	strbuf_release(&out);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proctab t;
	struct fde_range *v = NULL;
	size_t n = 0, alloc = 0;

	if (size < 1)
		return 0;
	if (data[0] == 254) {
		kallsyms_subset_case(data + 1, size - 1);
		return 0;
	}
	proctab_init(&t);
	switch (data[0] % 3) {
	case 0:
		kallsyms_load(&t, (const char *)data + 1, size - 1);
		break;
	case 1:
		perfmap_load(&t, (const char *)data + 1, size - 1);
		break;
	default:
		ehframe_parse(data + 1, size - 1, 0x1000, true, true, &v, &n, &alloc);
		for (size_t i = 0; i < n; i++) {
			if (v[i].end <= v[i].start)
				abort();
			proctab_add(&t, v[i].start, v[i].end - v[i].start, "f", PROC_FDE);
		}
		free(v);
		proctab_finish(&t, NULL, NULL);
	}
	check(&t);
	proctab_release(&t);
	return 0;
}
