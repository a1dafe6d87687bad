/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/cli.h - what every dcpi command shares: one table of options that
 * both parses the command line and writes --help (git's parse-options),
 * --version, --color, the exit statuses, and number parsing.
 *
 *   bool json = false;
 *   uint64_t rows = 0;
 *   const char *db = NULL;
 *   const struct cli_option options[] = {
 *           OPT_DB(&db),
 *           OPT_U64('n', "rows", &rows, "N", "print the first N rows only",
 *                   1, UINT32_MAX, "number of rows"),
 *           OPT_JSON(&json),
 *           OPT_ARGUMENT("IMAGE", "only these images"),
 *           OPT_END()
 *   };
 *   const struct cli_command cmd = {
 *           .usage = "dcpiprof [options] [IMAGE...]",
 *           .about = "Samples per procedure of an epoch.",
 *           .options = options,
 *   };
 *   int first = cli_parse(argc, argv, &cmd);   // argv[first..] are the arguments
 *
 * cli_parse() adds --help (the usage, the about text and every option with
 * its help, to stdout; exit 0), --version (exit 0) and the hidden
 * --list-options (cli_list_options(), for shell completion; exit 0).  An unknown option,
 * a missing argument or a wrong number of arguments prints the usage to
 * stderr and exits 1; a bad value says which ("bad number of rows 'x'")
 * and exits 1.  Options and arguments may come in any order (GNU getopt),
 * unless the command says otherwise (cmd.flags).
 *
 * Exit status: 0 on success, 1 on bad input or failure (dcpirun exits with
 * its command's status).  Messages go to stderr; --help prints to stdout.
 */
#ifndef DCPI_CORE_CLI_H
#define DCPI_CORE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/event.h"

/* Sets the program name for messages and installs locale settings. */
void cli_init(int argc, char **argv);

/*
 * The license --version states: dcpi is GPL-2.0-or-later; a program
 * linked with a library under a later GPL (dcpi-tui: readline, GPL-3+)
 * sets its own before cli_parse().
 */
extern const char *cli_license;

/* Prints "NAME (dcpi) VERSION" and the license, and exits 0. */
_Noreturn void cli_version(void);

/*
 * Prints a usage text: to stdout and exit 0 when status is 0 (--help),
 * else to stderr and exit status (bad usage).  For commands without an
 * option table (test helpers); the others get it from cli_parse().
 */
_Noreturn void cli_usage(const char *usage, int status);

/* Parses a non-negative integer (decimal, or 0x hex); -1 on junk/overflow. */
int cli_parse_u64(const char *s, uint64_t *out);
/* Like cli_parse_u64 with an inclusive range check. */
int cli_parse_range(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/*
 * Parses a size in bytes: a number (a fraction allowed) and an optional
 * unit, K M G T or KiB MiB GiB TiB (powers of 1024), KB MB GB TB (powers
 * of 1000), B.  -1 on junk, a negative number or overflow.
 */
int cli_parse_size(const char *s, uint64_t *out);

/* ---- the option table ------------------------------------------------------ */

enum cli_type {
	CLI_END,        /* the end of the table */
	CLI_GROUP,      /* a heading in --help: help (NULL: a blank line) */
	CLI_ARGUMENT,   /* a positional argument in --help: argh ("PROCEDURE") and help */
	CLI_BOOL,       /* *(bool *)value = defval (true, or false for --no-x) */
	CLI_SET_INT,    /* *(int *)value = defval (one of several flags for one setting) */
	CLI_STRING,     /* *(const char **)value = the argument (it lives as long as argv) */
	CLI_U64,        /* *(uint64_t *)value = a number in [min, max] */
	CLI_DOUBLE,     /* *(double *)value = a finite number >= min */
	CLI_CHOICE,     /* *(int *)value = the index of the argument in choices */
	CLI_CALLBACK,   /* cb(opt, arg): 0, or -1 after reporting (exit 1) */
};

enum cli_option_flags {
	CLI_HIDDEN = (1 << 0),  /* not in --help (benchmarks' knobs) */
	CLI_OPTARG = (1 << 1),  /* the argument may be left out (--color[=WHEN]): arg NULL */
};

struct cli_option {
	enum cli_type type;
	int short_name;              /* 'd', or 0 */
	const char *long_name;       /* "db", or NULL */
	void *value;                 /* where the value goes */
	const char *argh;            /* the argument in --help ("DIR"); NULL: none */
	const char *help;            /* what it does; lines after the first with "\n" */
	unsigned flags;              /* enum cli_option_flags */
	int defval;                  /* CLI_BOOL, CLI_SET_INT: the value set; CLI_CALLBACK: its own */
	uint64_t min, max;           /* CLI_U64: the range; CLI_DOUBLE: min */
	/*
	 * How a bad value is named: "bad number of rows 'x'", with hint:
	 * "bad skid '3' (want 0 or 1)".  NULL: "bad value 'x' for --rows".
	 */
	const char *what, *hint;
	const char *const *choices;  /* CLI_CHOICE: the words, NULL-terminated */
	int (*cb)(const struct cli_option *opt, const char *arg);
};

#define OPT_END() { .type = CLI_END }
#define OPT_GROUP(h) { .type = CLI_GROUP, .help = (h) }
#define OPT_ARGUMENT(name, h) { .type = CLI_ARGUMENT, .argh = (name), .help = (h) }
#define OPT_BOOL(s, l, v, h) \
	{ .type = CLI_BOOL, .short_name = (s), .long_name = (l), .value = (v), .help = (h), .defval = 1 }
#define OPT_SET_BOOL(s, l, v, val, h) \
	{ .type = CLI_BOOL, .short_name = (s), .long_name = (l), .value = (v), .help = (h), \
	  .defval = (val) }
#define OPT_SET_INT(s, l, v, val, h) \
	{ .type = CLI_SET_INT, .short_name = (s), .long_name = (l), .value = (v), .help = (h), \
	  .defval = (val) }
#define OPT_STRING(s, l, v, a, h) \
	{ .type = CLI_STRING, .short_name = (s), .long_name = (l), .value = (v), .argh = (a), \
	  .help = (h) }
#define OPT_U64(s, l, v, a, h, lo, hi, w) \
	{ .type = CLI_U64, .short_name = (s), .long_name = (l), .value = (v), .argh = (a), \
	  .help = (h), .min = (lo), .max = (hi), .what = (w) }
#define OPT_DOUBLE(s, l, v, a, h, lo, w) \
	{ .type = CLI_DOUBLE, .short_name = (s), .long_name = (l), .value = (v), .argh = (a), \
	  .help = (h), .min = (lo), .what = (w) }
#define OPT_CHOICE(s, l, v, a, h, list, w) \
	{ .type = CLI_CHOICE, .short_name = (s), .long_name = (l), .value = (v), .argh = (a), \
	  .help = (h), .choices = (list), .what = (w) }
#define OPT_CALLBACK(s, l, v, a, h, fn) \
	{ .type = CLI_CALLBACK, .short_name = (s), .long_name = (l), .value = (v), .argh = (a), \
	  .help = (h), .cb = (fn) }
/* The same with flags and the callback's defval. */
#define OPT_CALLBACK_F(s, l, v, a, h, fn, fl, d) \
	{ .type = CLI_CALLBACK, .short_name = (s), .long_name = (l), .value = (v), .argh = (a), \
	  .help = (h), .cb = (fn), .flags = (fl), .defval = (d) }

/* ---- options every command spells the same way ------------------------------- */

/* -d, --db DIR (a string: db_default_path() gives the default). */
#define OPT_DB(v) OPT_STRING('d', "db", (v), "DIR", "the database (default: $DCPI_DB, else ./dcpi.db)")
/* --json (a bool). */
#define OPT_JSON(v) OPT_BOOL(0, "json", (v), "the same data as JSON")

/* -E, --epoch EPOCH (a string: db_epoch_resolve() takes it). */
#define OPT_EPOCH(v) \
	OPT_STRING('E', "epoch", (v), "EPOCH", "number, label, latest (default) or latest~N")
/* --force (a bool): what the report tools and dcpi-tui do with changed binaries. */
#define OPT_FORCE(v) \
	OPT_BOOL(0, "force", (v), "use binaries that changed since they were profiled")
/* --debug-dir DIR (a string). */
#define OPT_DEBUG_DIR(v) \
	OPT_STRING(0, "debug-dir", (v), "DIR", "where separate debug files are (default /usr/lib/debug)")

/* -e, --event: events by name, in the order given, without repeats. */
struct cli_events {
	enum dcpi_event v[EVENT__COUNT];
	size_t n;                    /* 0: none given */
};
int cli_events_option(const struct cli_option *opt, const char *arg);
/* -e LIST: a comma-separated list into a struct cli_events. */
#define OPT_EVENTS(v, h) OPT_CALLBACK_F('e', "event", (v), "LIST", (h), cli_events_option, 0, 0)
/* -e EVENT: one event (a struct cli_events of one). */
#define OPT_EVENT(v, h) OPT_CALLBACK_F('e', "event", (v), "EVENT", (h), cli_events_option, 0, 1)

/* A size (cli_parse_size) into a uint64_t. */
int cli_size_option(const struct cli_option *opt, const char *arg);
#define OPT_SIZE(s, l, v, a, h) OPT_CALLBACK_F((s), (l), (v), (a), (h), cli_size_option, 0, 0)

/* --color[=WHEN]: always, never or auto (the default: a terminal, and no $NO_COLOR). */
enum cli_color { CLI_COLOR_AUTO, CLI_COLOR_ALWAYS, CLI_COLOR_NEVER };
int cli_color_option(const struct cli_option *opt, const char *arg);
#define OPT_COLOR(v) \
	OPT_CALLBACK_F(0, "color", (v), "WHEN", "colours: always, never or auto (a terminal)", \
		       cli_color_option, CLI_OPTARG, 0)
/* Whether to write colours to f under c (auto: f is a terminal, $NO_COLOR unset, TERM not dumb). */
bool cli_use_color(enum cli_color c, FILE *f);

/* ---- parsing ------------------------------------------------------------------- */

enum cli_command_flags {
	/* Options end at the first argument (dcpirun: the command's own options stay its). */
	CLI_STOP_AT_ARG = (1 << 0),
	/*
	 * Arguments go to cmd.arg in order, options anywhere, and each "--" goes
	 * to cmd.arg too, after which options are parsed again (dcpidiff's
	 * "A1 A2 -- B1 B2").  cli_parse() then returns argc.
	 */
	CLI_IN_ORDER = (1 << 1),
};

struct cli_command {
	const char *usage;             /* after "usage: "; several forms one a line */
	const char *about;             /* what the command does (NULL: nothing) */
	const struct cli_option *options;
	const char *footer;            /* after the options (NULL: nothing) */
	unsigned flags;                /* enum cli_command_flags */
	int min_args, max_args;        /* how many arguments; max -1: any number */
	void (*arg)(void *ctx, const char *arg);  /* CLI_IN_ORDER */
	void *ctx;
};

/*
 * Parses argv by cmd (see the top of this file) and returns the index of
 * the first argument (argv is permuted so that the arguments come last).
 * Handles --help, --version and every error itself (exit).
 */
int cli_parse(int argc, char **argv, const struct cli_command *cmd);

/* Writes --help's text to f. */
void cli_help(const struct cli_command *cmd, FILE *f);

/*
 * Writes the option table for shell completion (the hidden --list-options
 * every command takes), so that completion is generated from the table
 * and never drifts from it.  One line per entry, fields separated by one
 * space:
 *   option SHORT LONG ARG [VALUE...]   "-" for a missing SHORT or ARG,
 *                                      ARG in brackets if optional; the
 *                                      VALUEs it takes, if a closed set
 *   argument TEXT                      a positional argument as --help
 *                                      names it ("PROCEDURE", "status")
 *   flags stop-at-arg                  options end at the first argument
 * Hidden options are left out; --help and --version are listed.
 */
void cli_list_options(const struct cli_command *cmd, FILE *f);

/*
 * Reads settings of cmd's options from a configuration file, as a root
 * daemon may (an untrusted configuration is a known way in, e.g. staprun's
 * CVE-2010-4170): path must be a regular file, not a symbolic link, owned
 * by root (or the effective user) and writable by nobody else, in
 * directories nobody else can write to (sticky ones such as /tmp are
 * fine); otherwise it is refused.  One setting a line: "NAME = VALUE",
 * "NAME VALUE", or "NAME" alone for an option without argument, where NAME
 * is a long option of cmd; '#' starts a comment.  Hidden options and those
 * listed in refused (NULL-terminated) cannot be set there.  Call it before
 * cli_parse() so that the command line wins.  Returns 0, or -1 after
 * reporting (with the file and line).
 */
int cli_config_load(const struct cli_command *cmd, const char *path, const char *const *refused);

/* Bad usage: says why (if why is not NULL), the usage on stderr, exit 1. */
_Noreturn void cli_usage_error(const struct cli_command *cmd, const char *why);

#endif
