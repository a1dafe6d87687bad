#include "config.h"
#include "core/cli.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"

#include <errno.h>
#include <getopt.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* ---- events ------------------------------------------------------------------- */

static int add_event(struct cli_events *e, const char *name, bool one)
{
	int ev = event_lookup(name);

	if (ev < 0) {
		char *safe = display_safe(name);

		errorf("unknown event '%s'", safe);
		free(safe);
		return -1;
	}
	if (one && e->n)
		return errorf("-e takes one event here, not a list");
	for (size_t k = 0; k < e->n; k++)
		if (e->v[k] == (enum dcpi_event)ev)
			return 0;
	if (e->n < EVENT__COUNT)
		e->v[e->n++] = (enum dcpi_event)ev;
	return 0;
}

int cli_events_option(const struct cli_option *opt, const char *arg)
{
	struct cli_events *e = opt->value;
	char *copy = xstrdup(arg), *save = NULL;
	int r = 0;

	e->n = 0;
	for (char *t = strtok_r(copy, ",", &save); t && !r; t = strtok_r(NULL, ",", &save))
		r = add_event(e, t, opt->defval);
	if (!r && !e->n)
		r = errorf("no event given");
	free(copy);
	return r;
}

/* ---- colours ------------------------------------------------------------------- */

int cli_color_option(const struct cli_option *opt, const char *arg)
{
	static const char *const when[] = { "auto", "always", "never" };

	for (int k = 0; k < 3; k++)
		if (!arg ? k == CLI_COLOR_ALWAYS : !strcmp(arg, when[k])) {
			*(enum cli_color *)opt->value = (enum cli_color)k;
			return 0;
		}
	return errorf("bad --color '%s' (want always, never or auto)", arg);
}

bool cli_use_color(enum cli_color c, FILE *f)
{
	const char *no = getenv("NO_COLOR"), *term = getenv("TERM");

	if (c != CLI_COLOR_AUTO)
		return c == CLI_COLOR_ALWAYS;
	return isatty(fileno(f)) && !(no && *no) && term && strcmp(term, "dumb");
}

/* ---- --help ---------------------------------------------------------------------- */

#define HELP_COLUMN 26  /* where the help of an option starts */

static void option_synopsis(const struct cli_option *o, struct strbuf *sb)
{
	strbuf_addstr(sb, "  ");
	if (o->type == CLI_ARGUMENT) {
		strbuf_addstr(sb, o->argh);
		return;
	}
	if (o->short_name)
		strbuf_addf(sb, "-%c%s", o->short_name, o->long_name ? ", " : "");
	else
		strbuf_addstr(sb, "    ");
	if (o->long_name)
		strbuf_addf(sb, "--%s", o->long_name);
	if (o->argh)
		strbuf_addf(sb, (o->flags & CLI_OPTARG) ? "[=%s]" : " %s", o->argh);
}

/* Writes s indented to the help column, line by line. */
static void help_text(FILE *f, const char *s)
{
	while (*s) {
		size_t n = strcspn(s, "\n");

		fprintf(f, "%*s%.*s\n", HELP_COLUMN, "", (int)n, s);
		s += n + (s[n] == '\n');
	}
}

static void option_help(FILE *f, const struct cli_option *o)
{
	struct strbuf sb = STRBUF_INIT;
	const char *help = o->help ? o->help : "";
	size_t n = strcspn(help, "\n");

	option_synopsis(o, &sb);
	if (sb.len + 1 >= HELP_COLUMN) {
		fprintf(f, "%s\n", sb.buf);
		help_text(f, help);
	} else {
		fprintf(f, "%-*s%.*s\n", HELP_COLUMN, sb.buf, (int)n, help);
		help_text(f, help + n + (help[n] == '\n'));
	}
	strbuf_release(&sb);
}

void cli_help(const struct cli_command *cmd, FILE *f)
{
	const char *u = cmd->usage;
	bool first = true;

	while (*u) {
		size_t n = strcspn(u, "\n");

		fprintf(f, "%s%.*s\n", first ? "usage: " : "       ", (int)n, u);
		u += n + (u[n] == '\n');
		first = false;
	}
	if (cmd->about)
		fprintf(f, "\n%s\n", cmd->about);
	fputc('\n', f);
	for (const struct cli_option *o = cmd->options; o && o->type != CLI_END; o++) {
		if (o->flags & CLI_HIDDEN)
			continue;
		if (o->type == CLI_GROUP)
			fprintf(f, "\n%s%s", o->help ? o->help : "", o->help ? "\n" : "");
		else
			option_help(f, o);
	}
	fprintf(f, "%-*s%s\n", HELP_COLUMN, "      --help, --version", "this text; the version");
	if (cmd->footer)
		fprintf(f, "\n%s\n", cmd->footer);
}

void cli_usage_error(const struct cli_command *cmd, const char *why)
{
	if (why)
		errorf("%s", why);
	cli_help(cmd, stderr);
	exit(1);
}

/* ---- parsing --------------------------------------------------------------------- */

enum { CODE_HELP = 0x1000, CODE_VERSION, CODE_FIRST };

/* "--rows" or "-n", for messages. */
static void option_name(const struct cli_option *o, char *buf, size_t size)
{
	if (o->long_name)
		snprintf(buf, size, "--%s", o->long_name);
	else
		snprintf(buf, size, "-%c", o->short_name);
}

/* "want a, b or c" */
static void choices_hint(const struct cli_option *o, struct strbuf *sb)
{
	strbuf_addstr(sb, "want ");
	for (int k = 0; o->choices[k]; k++)
		strbuf_addf(sb, "%s%s", k ? (o->choices[k + 1] ? ", " : " or ") : "", o->choices[k]);
}

static _Noreturn void bad_value(const struct cli_option *o, const char *arg)
{
	char name[64], *safe = display_safe(arg);
	struct strbuf hint = STRBUF_INIT;

	if (o->hint)
		strbuf_addstr(&hint, o->hint);
	else if (o->type == CLI_CHOICE)
		choices_hint(o, &hint);
	if (!o->what) {
		option_name(o, name, sizeof(name));
		errorf("bad value '%s' for %s", safe, name);
	} else if (hint.len) {
		errorf("bad %s '%s' (%s)", o->what, safe, hint.buf);
	} else {
		errorf("bad %s '%s'", o->what, safe);
	}
	free(safe);
	exit(1);
}

static int choice_of(const struct cli_option *o, const char *arg)
{
	for (int k = 0; o->choices[k]; k++)
		if (!strcmp(o->choices[k], arg))
			return k;
	return -1;
}

static void set_value(const struct cli_option *o, const char *arg)
{
	uint64_t u;
	double d;
	char *end;
	int k;

	switch (o->type) {
	case CLI_BOOL:
		*(bool *)o->value = o->defval;
		break;
	case CLI_SET_INT:
		*(int *)o->value = o->defval;
		break;
	case CLI_STRING:
		*(const char **)o->value = arg;
		break;
	case CLI_U64:
		if (cli_parse_range(arg, o->min, o->max, &u))
			bad_value(o, arg);
		*(uint64_t *)o->value = u;
		break;
	case CLI_DOUBLE:
		d = strtod(arg, &end);
		if (end == arg || *end || !isfinite(d) || d < (double)o->min)
			bad_value(o, arg);
		*(double *)o->value = d;
		break;
	case CLI_CHOICE:
		if ((k = choice_of(o, arg)) < 0)
			bad_value(o, arg);
		*(int *)o->value = k;
		break;
	case CLI_CALLBACK:
		if (o->cb(o, arg))
			exit(1);
		break;
	default:
		BUG("option type %d cannot be set", (int)o->type);
	}
}

static bool takes_option(const struct cli_option *o)
{
	return o->type != CLI_GROUP && o->type != CLI_ARGUMENT;
}

/* getopt's tables from ours: long options coded CODE_FIRST + index. */
static void getopt_tables(const struct cli_command *cmd, struct option **longopts,
			  struct strbuf *shortopts)
{
	size_t n = 0, k = 0;

	for (const struct cli_option *o = cmd->options; o && o->type != CLI_END; o++)
		n++;
	*longopts = xcalloc(n + 3, sizeof(**longopts));
	if (cmd->flags & CLI_IN_ORDER)
		strbuf_addch(shortopts, '-');
	else if (cmd->flags & CLI_STOP_AT_ARG)
		strbuf_addch(shortopts, '+');
	for (size_t i = 0; i < n; i++) {
		const struct cli_option *o = &cmd->options[i];
		int has_arg = !o->argh ? no_argument
			      : (o->flags & CLI_OPTARG) ? optional_argument : required_argument;

		if (!takes_option(o))
			continue;
		if (o->short_name)
			strbuf_addf(shortopts, "%c%s", o->short_name,
				    has_arg == required_argument ? ":" : has_arg ? "::" : "");
		if (o->long_name)
			(*longopts)[k++] = (struct option){ o->long_name, has_arg, NULL, CODE_FIRST + (int)i };
	}
	(*longopts)[k++] = (struct option){ "help", no_argument, NULL, CODE_HELP };
	(*longopts)[k++] = (struct option){ "version", no_argument, NULL, CODE_VERSION };
}

static const struct cli_option *option_of(const struct cli_command *cmd, int c)
{
	if (c >= CODE_FIRST)
		return &cmd->options[c - CODE_FIRST];
	for (const struct cli_option *o = cmd->options; o && o->type != CLI_END; o++)
		if (takes_option(o) && o->short_name == c)
			return o;
	return NULL;
}

/* One getopt result; false at the end of a run of options. */
static bool handle(const struct cli_command *cmd, int c)
{
	const struct cli_option *o;

	if (c == -1)
		return false;
	if (c == 1) {
		cmd->arg(cmd->ctx, optarg);
		return true;
	}
	if (c == CODE_HELP) {
		cli_help(cmd, stdout);
		exit(0);
	}
	if (c == CODE_VERSION)
		cli_version();
	if (!(o = option_of(cmd, c)))
		cli_usage_error(cmd, NULL);  /* getopt said why */
	set_value(o, optarg);
	return true;
}

/*
 * CLI_IN_ORDER: after each "--" getopt stops; options after it are parsed
 * again, and the "--" is an argument of its own.
 */
static void parse_in_order(int argc, char **argv, const struct cli_command *cmd,
			   const struct option *longopts, const char *shortopts)
{
	for (;;) {
		while (handle(cmd, getopt_long(argc, argv, shortopts, longopts, NULL)))
			;
		if (optind > argc || optind < 1 || strcmp(argv[optind - 1], "--"))
			break;
		cmd->arg(cmd->ctx, "--");
		if (optind >= argc)
			break;
	}
	for (; optind < argc; optind++)
		cmd->arg(cmd->ctx, argv[optind]);
}

int cli_parse(int argc, char **argv, const struct cli_command *cmd)
{
	struct strbuf shortopts = STRBUF_INIT;
	struct option *longopts;
	int n;

	getopt_tables(cmd, &longopts, &shortopts);
	optind = 0;  /* glibc: start afresh, also after an earlier parse */
	if (cmd->flags & CLI_IN_ORDER)
		parse_in_order(argc, argv, cmd, longopts, shortopts.buf);
	else
		while (handle(cmd, getopt_long(argc, argv, shortopts.buf, longopts, NULL)))
			;
	free(longopts);
	strbuf_release(&shortopts);
	n = argc - optind;
	if (!(cmd->flags & CLI_IN_ORDER) &&
	    (n < cmd->min_args || (cmd->max_args >= 0 && n > cmd->max_args)))
		cli_usage_error(cmd, NULL);
	return optind;
}
