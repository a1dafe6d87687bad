/*
 * dcpictl - control a running dcpid.
 *
 *   dcpictl [--socket PATH] [--json] status|flush|epoch [LABEL]|quit
 */
#include "config.h"
#include "collect/ctl.h"
#include "core/cli.h"
#include "core/die.h"
#include "db/meta.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: dcpictl [--socket PATH] [--json] status|flush|epoch [LABEL]|quit\n"
	"\n"
	"  status         sample rates per CPU and event, losses, unknown fraction, hash\n"
	"                 hit rate, daemon CPU per sample, memory, database size\n"
	"  flush          write every profile held in memory to the database\n"
	"  epoch [LABEL]  flush and start a new epoch\n"
	"  quit           flush and stop dcpid\n"
	"\n"
	"      --socket PATH  dcpid's control socket (default: " CTL_DEFAULT_SOCKET ")\n"
	"      --json         status as JSON\n"
	"      --help, --version\n";

enum { OPT_SOCKET = CLI_OPT__FIRST_FREE };

static const struct option longopts[] = {
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "json", no_argument, NULL, CLI_OPT_JSON },
	CLI_LONGOPTS_COMMON,
	{ NULL, 0, NULL, 0 }
};

int main(int argc, char **argv)
{
	const char *socket = CTL_DEFAULT_SOCKET, *verb;
	struct ctl_request req;
	bool json = false;
	int c, nargs;

	cli_init(argc, argv);
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SOCKET:
			socket = optarg;
			break;
		case CLI_OPT_JSON:
			json = true;
			break;
		case CLI_OPT_HELP:
			cli_usage(usage, 0);
		case CLI_OPT_VERSION:
			cli_version();
		default:
			cli_usage(usage, 1);
		}
	}
	nargs = argc - optind;
	if (nargs < 1)
		cli_usage(usage, 1);
	verb = argv[optind];
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
			if (!epoch_label_valid(argv[optind + 1]))
				die("invalid epoch label '%s' (1-64 characters, no spaces, not a "
				    "number, not starting with 'latest')", argv[optind + 1]);
			/* The control protocol is printable ASCII. */
			for (const char *p = argv[optind + 1]; *p; p++)
				if (*p < 0x21 || *p > 0x7e)
					die("dcpid takes labels in printable ASCII only");
			strcpy(req.label, argv[optind + 1]);
		}
	} else {
		cli_usage(usage, 1);
	}
	/* Flushes and epochs may write for a while; status answers at once. */
	return ctl_call(socket, &req, stdout, req.verb == CTL_STATUS ? 30000 : 0) ? 1 : 0;
}
