/* SPDX-License-Identifier: GPL-2.0-or-later */
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

/*
 * The sample formats the collector opens events with: dcpi's fixed fields;
 * with --values the user registers; with every optional field dcpi parses
 * (call chains and user stacks too, as a collector taking stacks asks).
 */
static const struct perf_rec_format formats[] = {
	{ PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
	  PERF_SAMPLE_PERIOD, 0 },
	{ PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
	  PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER, 0xff02ff },
	{ PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
	  PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
	  PERF_SAMPLE_STACK_USER, 0xff0fff },
};

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
	for (size_t f = 0; f < sizeof(formats) / sizeof(formats[0]); f++) {
		if (perf_rec_parse_fmt(copy, size, &formats[f], &r, &why))
			continue;
		if (r.kind == PERF_REC_SAMPLE &&
		    (r.u.sample.n_regs > PERF_REC_REGS_MAX ||
		     (r.u.sample.n_regs && r.u.sample.n_regs !=
		      (unsigned)__builtin_popcountll(formats[f].regs_user)) ||
		     8 * (size_t)r.u.sample.n_regs > size))
			abort();
	}
	free(copy);
	return 0;
}
