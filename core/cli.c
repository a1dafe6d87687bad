/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "core/cli.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cli_init(int argc, char **argv)
{
	set_progname(argc > 0 ? argv[0] : NULL);
	setlocale(LC_CTYPE, "");
}

const char *cli_license = "GPL-2.0-or-later: GNU GPL version 2 or later";

void cli_version(void)
{
	printf("%s (%s) %s\n"
	       "License %s <https://gnu.org/licenses/gpl.html>.\n"
	       "This is free software: you are free to change and redistribute it.\n"
	       "There is NO WARRANTY, to the extent permitted by law.\n",
	       progname(), PACKAGE_NAME, PACKAGE_VERSION, cli_license);
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

int cli_parse_size(const char *s, uint64_t *out)
{
	static const struct { const char *unit; double mult; } units[] = {
		{ "", 1 }, { "B", 1 },
		{ "K", 1024.0 }, { "KiB", 1024.0 }, { "KB", 1e3 },
		{ "M", 1048576.0 }, { "MiB", 1048576.0 }, { "MB", 1e6 },
		{ "G", 1073741824.0 }, { "GiB", 1073741824.0 }, { "GB", 1e9 },
		{ "T", 1099511627776.0 }, { "TiB", 1099511627776.0 }, { "TB", 1e12 },
	};
	char *end;
	double v;

	if (!s || !*s || !strchr("0123456789.", *s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		double b = v * units[i].mult;

		if (strcmp(end, units[i].unit))
			continue;
		if (b >= 18446744073709551615.0)
			return -1;
		*out = (uint64_t)(b + 0.5);
		return 0;
	}
	return -1;
}

int cli_size_option(const struct cli_option *opt, const char *arg)
{
	if (cli_parse_size(arg, opt->value)) {
		char *safe = display_safe(arg);

		errorf("bad size '%s' for --%s (a number of bytes, or with K, M, G or T)", safe,
		       opt->long_name ? opt->long_name : "?");
		free(safe);
		return -1;
	}
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

enum { CODE_HELP = 0x1000, CODE_VERSION, CODE_LIST_OPTIONS, CODE_FIRST };

/* The words an option's argument can be, for completion ("" if open). */
static void option_values(const struct cli_option *o, FILE *f)
{
	if (o->type == CLI_CHOICE) {
		for (int k = 0; o->choices[k]; k++)
			fprintf(f, " %s", o->choices[k]);
	} else if (o->type == CLI_CALLBACK && o->cb == cli_color_option) {
		fputs(" auto always never", f);
	} else if (o->argh && o->long_name &&
		   (!strcmp(o->long_name, "event") || !strcmp(o->long_name, "events"))) {
		for (int ev = 0; ev < EVENT__COUNT; ev++)
			fprintf(f, " %s", event_name((enum dcpi_event)ev));
	}
}

void cli_list_options(const struct cli_command *cmd, FILE *f)
{
	for (const struct cli_option *o = cmd->options; o && o->type != CLI_END; o++) {
		if ((o->flags & CLI_HIDDEN) || o->type == CLI_GROUP)
			continue;
		if (o->type == CLI_ARGUMENT) {
			fprintf(f, "argument %s\n", o->argh);
			continue;
		}
		fprintf(f, "option ");
		if (o->short_name)
			fprintf(f, "-%c ", o->short_name);
		else
			fputs("- ", f);
		fprintf(f, "%s%s ", o->long_name ? "--" : "-", o->long_name ? o->long_name : "");
		if (!o->argh)
			fputc('-', f);
		else
			fprintf(f, (o->flags & CLI_OPTARG) ? "[%s]" : "%s", o->argh);
		option_values(o, f);
		fputc('\n', f);
	}
	fputs("option - --help -\noption - --version -\n", f);
	if (cmd->flags & CLI_STOP_AT_ARG)
		fputs("flags stop-at-arg\n", f);
}

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

static int bad_value(const struct cli_option *o, const char *arg)
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
	strbuf_release(&hint);
	return -1;
}

static int choice_of(const struct cli_option *o, const char *arg)
{
	for (int k = 0; o->choices[k]; k++)
		if (!strcmp(o->choices[k], arg))
			return k;
	return -1;
}

static int set_value(const struct cli_option *o, const char *arg)
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
			return bad_value(o, arg);
		*(uint64_t *)o->value = u;
		break;
	case CLI_DOUBLE:
		d = strtod(arg, &end);
		if (end == arg || *end || !isfinite(d) || d < (double)o->min)
			return bad_value(o, arg);
		*(double *)o->value = d;
		break;
	case CLI_CHOICE:
		if ((k = choice_of(o, arg)) < 0)
			return bad_value(o, arg);
		*(int *)o->value = k;
		break;
	case CLI_CALLBACK:
		if (o->cb(o, arg))
			return -1;
		break;
	default:
		BUG("option type %d cannot be set", (int)o->type);
	}
	return 0;
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
	*longopts = xcalloc(n + 4, sizeof(**longopts));
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
	(*longopts)[k++] = (struct option){ "list-options", no_argument, NULL, CODE_LIST_OPTIONS };
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
	if (c == CODE_LIST_OPTIONS) {
		cli_list_options(cmd, stdout);
		exit(0);
	}
	if (!(o = option_of(cmd, c)))
		cli_usage_error(cmd, NULL);  /* getopt said why */
	if (set_value(o, optarg))
		exit(1);
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

/* ---- configuration files ------------------------------------------------------------ */

#define CONFIG_MAX_SIZE (64 * 1024)

/* Nobody but root (or us) may change what st is (a sticky directory protects its files). */
static int trusted(const struct stat *st, const char *what, const char *path)
{
	uid_t me = geteuid();

	if (st->st_uid != 0 && st->st_uid != me)
		return errorf("refusing configuration %s '%s': owned by uid %ld, not root", what,
			      path, (long)st->st_uid);
	if (S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX))
		return 0;
	if ((st->st_mode & S_IWOTH) || ((st->st_mode & S_IWGRP) && st->st_gid != 0))
		return errorf("refusing configuration %s '%s': others can write to it (mode %04o)",
			      what, path, (unsigned)(st->st_mode & 07777));
	return 0;
}

/* Every directory from path's up to / must be trusted. */
static int trusted_dirs(const char *path)
{
	char dir[PATH_MAX], *slash;
	struct stat st;

	if (!realpath(path, dir))
		return errorf_errno("cannot resolve '%s'", path);
	while ((slash = strrchr(dir, '/'))) {
		slash[slash == dir] = '\0';
		if (stat(dir, &st))
			return errorf_errno("cannot stat '%s'", dir);
		if (trusted(&st, "directory", dir))
			return -1;
		if (slash == dir)
			break;
	}
	return 0;
}

static int read_config(const char *path, struct strbuf *out)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	int r = -1;

	if (fd < 0) {
		if (errno == ELOOP)
			return errorf("refusing configuration file '%s': a symbolic link", path);
		return errorf_errno("cannot open configuration file '%s'", path);
	}
	if (fstat(fd, &st))
		errorf_errno("cannot stat '%s'", path);
	else if (!S_ISREG(st.st_mode))
		errorf("configuration file '%s' is not a regular file", path);
	else if (st.st_size > CONFIG_MAX_SIZE)
		errorf("configuration file '%s' is too large", path);
	else if (!trusted(&st, "file", path) && !trusted_dirs(path))
		r = 0;
	if (!r && strbuf_read_fd(out, fd, CONFIG_MAX_SIZE))
		r = errno == EFBIG ? errorf("configuration file '%s' is too large", path)
				   : errorf_errno("cannot read '%s'", path);
	close(fd);
	return r;
}

static const struct cli_option *long_option(const struct cli_command *cmd, const char *name)
{
	for (const struct cli_option *o = cmd->options; o && o->type != CLI_END; o++)
		if (takes_option(o) && o->long_name && !strcmp(o->long_name, name))
			return o;
	return NULL;
}

static bool listed(const char *const *list, const char *name)
{
	for (; list && *list; list++)
		if (!strcmp(*list, name))
			return true;
	return false;
}

/*
 * Option values from a file live as long as the program (as argv's do):
 * kept on a list, so that they stay reachable (a leak checker sees a value
 * that an option parsed and dropped as still owned).
 */
struct kept_value {
	struct kept_value *next;
	char s[];
};
static struct kept_value *kept_values;

static char *kept_value(const char *value)
{
	size_t n = strlen(value) + 1;
	struct kept_value *k = xmalloc(sizeof(*k) + n);

	memcpy(k->s, value, n);
	k->next = kept_values;
	kept_values = k;
	return k->s;
}

/* One line "NAME [=] [VALUE]" (trimmed, not a comment). */
static int config_line(const struct cli_command *cmd, const char *const *refused, char *line,
		       const char *path, int lineno)
{
	size_t n = strspn(line, "abcdefghijklmnopqrstuvwxyz0123456789-");
	char *value = line + n, *end;
	const struct cli_option *o;
	char *safe;

	if (*value && *value != ' ' && *value != '\t' && *value != '=')
		return errorf("%s:%d: cannot parse '%s'", path, lineno, line);
	if (*value) {
		*value++ = '\0';
		value += strspn(value, " \t");
		if (*value == '=')
			value += 1 + strspn(value + 1, " \t");
	}
	for (end = value + strlen(value); end > value && (end[-1] == ' ' || end[-1] == '\t');)
		*--end = '\0';
	o = long_option(cmd, line);
	safe = display_safe(line);
	if (!o || (o->flags & CLI_HIDDEN) || listed(refused, line)) {
		errorf("%s:%d: '%s' cannot be set in a configuration file", path, lineno, safe);
		free(safe);
		return -1;
	}
	free(safe);
	if (o->argh && !(o->flags & CLI_OPTARG) && !*value)
		return errorf("%s:%d: '%s' needs a value", path, lineno, line);
	if (!o->argh && *value)
		return errorf("%s:%d: '%s' takes no value", path, lineno, line);
	if (set_value(o, *value ? kept_value(value) : NULL))
		return errorf("in '%s', line %d", path, lineno);
	return 0;
}

int cli_config_load(const struct cli_command *cmd, const char *path, const char *const *refused)
{
	struct strbuf sb = STRBUF_INIT;
	int lineno = 0, r;

	if ((r = read_config(path, &sb)))
		goto out;
	for (char *line = sb.buf, *next; line && !r; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		line[strcspn(line, "#")] = '\0';
		line += strspn(line, " \t\r");
		line[strcspn(line, "\r")] = '\0';
		if (*line)
			r = config_line(cmd, refused, line, path, lineno);
	}
out:
	strbuf_release(&sb);
	return r;
}
