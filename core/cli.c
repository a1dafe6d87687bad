#include "config.h"
#include "core/cli.h"
#include "core/die.h"

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>

void cli_init(int argc, char **argv)
{
	set_progname(argc > 0 ? argv[0] : NULL);
	setlocale(LC_CTYPE, "");
}

void cli_version(void)
{
	printf("%s (%s) %s\n", progname(), PACKAGE_NAME, PACKAGE_VERSION);
	exit(0);
}

void cli_usage(const char *usage, int status)
{
	FILE *f = status ? stderr : stdout;

	fputs(usage, f);
	exit(status);
}

int cli_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int cli_parse_range(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v;

	if (cli_parse_u64(s, &v) || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}
