/*
 * core/cli.h - what every dcpi command shares: --help and --version, the
 * exit statuses, and number parsing for options.
 *
 * Exit status: 0 on success, 1 on bad input or failure (dcpirun exits with
 * its command's status).  Messages go to stderr; --help prints to stdout.
 */
#ifndef DCPI_CORE_CLI_H
#define DCPI_CORE_CLI_H

#include <stdint.h>

/* Sets the program name for messages and installs locale settings. */
void cli_init(int argc, char **argv);

/* Prints "NAME (dcpi) VERSION" and exits 0. */
_Noreturn void cli_version(void);

/*
 * Prints usage: to stdout and exit 0 when status is 0 (--help), else to
 * stderr and exit status (bad usage).
 */
_Noreturn void cli_usage(const char *usage, int status);

/* Parses a non-negative integer (decimal, or 0x hex); -1 on junk/overflow. */
int cli_parse_u64(const char *s, uint64_t *out);
/* Like cli_parse_u64 with an inclusive range check. */
int cli_parse_range(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Long options every tool accepts; values are the returned getopt codes. */
enum { CLI_OPT_HELP = 0x1000, CLI_OPT_VERSION, CLI_OPT_JSON, CLI_OPT__FIRST_FREE };
#define CLI_LONGOPTS_COMMON                                   \
	{ "help", no_argument, NULL, CLI_OPT_HELP },          \
	{ "version", no_argument, NULL, CLI_OPT_VERSION }

#endif
