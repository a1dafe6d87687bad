/*
 * Fuzz target: the parsers of symbol text and unwind tables.  Byte 0
 * picks one: 0 kallsyms, 1 a perf map, 2 .eh_frame (64-bit,
 * little-endian, loaded at 0x1000); the rest is its input.  The procedure
 * table built from it must be sorted and non-overlapping.
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "disasm/ehframe.h"
#include "disasm/proctab.h"
#include "disasm/textsyms.h"

#include <stdlib.h>

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proctab t;
	struct fde_range *v = NULL;
	size_t n = 0, alloc = 0;

	if (size < 1)
		return 0;
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
