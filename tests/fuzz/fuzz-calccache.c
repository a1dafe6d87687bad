/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the payload of a cached analysis (analysis/calc-cache.h),
 * as a reader decodes it once the blob's checksums passed: the first 4
 * bytes are the record count the blob's header gives (little-endian), the
 * rest the payload. */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "analysis/calc-cache.h"
#include "core/endian.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *why;

	if (size < 4)
		return 0;
	calc_cache_check_payload(data + 4, size - 4, get_le32(data), &why);
	return 0;
}
