/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dcpictl - control a running dcpid.
 *
 *   dcpictl [--socket PATH] [--json] status|flush|epoch [LABEL]|quit
 */
#include "config.h"
#include "collect/collector.h"
#include "collect/ctl.h"
#include "core/cli.h"
#include "core/die.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	const char *socket = CTL_DEFAULT_SOCKET, *verb;
	struct ctl_request req;
	bool json = false;
	int first, nargs;
	const struct cli_option options[] = {
		OPT_STRING(0, "socket", &socket, "PATH",
			   "dcpid's control socket (default: " CTL_DEFAULT_SOCKET ")"),
		OPT_BOOL(0, "json", &json, "status as JSON"),
		OPT_GROUP("Commands:"),
		OPT_ARGUMENT("status", "sample rates per CPU and event, losses, unknown fraction,\n"
			     "hash hit rate, daemon CPU per sample, memory, database size"),
		OPT_ARGUMENT("flush", "write every profile held in memory to the database"),
		OPT_ARGUMENT("epoch [LABEL]", "flush and start a new epoch"),
		OPT_ARGUMENT("quit", "flush and stop dcpid"),
		OPT_END()
	};
	const struct cli_command cmd = {
		.usage = "dcpictl [--socket PATH] [--json] status|flush|epoch [LABEL]|quit",
		.about = "Controls a running dcpid.",
		.options = options,
		.min_args = 1,
		.max_args = 2,
	};

	cli_init(argc, argv);
	first = cli_parse(argc, argv, &cmd);
	nargs = argc - first;
	verb = argv[first];
	memset(&req, 0, sizeof(req));
	if (!strcmp(verb, "status") && nargs == 1) {
		req.verb = CTL_STATUS;
		req.json = json;
	} else if (!strcmp(verb, "flush") && nargs == 1) {
		req.verb = CTL_FLUSH;
	} else if (!strcmp(verb, "quit") && nargs == 1) {
		req.verb = CTL_QUIT;
	} else if (!strcmp(verb, "epoch") && nargs <= 2) {
		req.verb = CTL_EPOCH;
		if (nargs == 2) {
			if (collect_check_label(argv[first + 1]))
				return 1;
			/* The control protocol is printable ASCII. */
			for (const char *p = argv[first + 1]; *p; p++)
				if (*p < 0x21 || *p > 0x7e)
					die("dcpid takes labels in printable ASCII only");
			strcpy(req.label, argv[first + 1]);
		}
	} else {
		cli_usage_error(&cmd, NULL);
	}
	/* Flushes and epochs may write for a while; status answers at once. */
	return ctl_call(socket, &req, stdout, req.verb == CTL_STATUS ? 30000 : 0) ? 1 : 0;
}
