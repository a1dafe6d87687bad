/* Fuzz target: the perf record parser.  Every field it returns must lie
 * inside the record; strings must be NUL-terminated inside it. */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "collect/perfrec.h"

#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

static void inside(const char *s, const uint8_t *rec, size_t len)
{
	if (s < (const char *)rec || s >= (const char *)rec + len ||
	    !memchr(s, '\0', len - (size_t)(s - (const char *)rec)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_rec r;
	const char *why;
	uint8_t *copy;

	/* Also try the input with its header's size field made consistent. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	for (int pass = 0; pass < 2; pass++) {
		if (pass && size >= sizeof(struct perf_event_header) && size <= 65535) {
			uint16_t sz = (uint16_t)size;

			memcpy(copy + 6, &sz, 2);
		}
		(void)perf_rec_time(copy, size);
		if (perf_rec_parse(copy, size, &r, &why))
			continue;
		if (r.kind == PERF_REC_MMAP)
			inside(r.u.mmap.filename, copy, size);
		if (r.kind == PERF_REC_COMM)
			inside(r.u.comm.comm, copy, size);
		if (r.kind == PERF_REC_MMAP && r.u.mmap.build_id_len > PERF_REC_BUILD_ID_MAX)
			abort();
	}
	free(copy);
	return 0;
}
