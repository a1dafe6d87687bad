/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: dcpid's control-protocol parser, with a format -> parse round
 * trip of every request it accepts. */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "collect/ctl.h"
#include "db/meta.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_request req, again;
	char line[CTL_REQUEST_MAX + 1];
	const char *why;
	int n;

	if (ctl_parse((const char *)data, size, &req, &why))
		return 0;
	/* Accepted: printable, bounded, and a label the database accepts. */
	if (size > CTL_REQUEST_MAX || (req.label[0] && !epoch_label_valid(req.label)))
		abort();
	n = ctl_format(&req, line, sizeof(line));
	if (n < 0 || ctl_parse(line, (size_t)n, &again, &why) || memcmp(&req, &again, sizeof(req)))
		abort();
	return 0;
}
