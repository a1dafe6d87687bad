/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tools/tool.h - what every report tool shares: the options that name the
 * database, the epoch, the events, the binaries and the output, the
 * opening of the database and the epoch, where text reports go, and the
 * exit status.  A report tool's main is its option table, tool_start()
 * (which parses it, and with TOOL_EPOCH opens the database and epoch), the
 * report (built by analysis/, drawn into t.out or written as JSON) and
 * tool_finish():
 *
 *   static struct tool t;
 *   int main(int argc, char **argv)
 *   {
 *           bool by_image = false;
 *           const struct cli_option options[] = {
 *                   TOOL_OPTS_EPOCH(&t),          // -d, -E, --force, --debug-dir
 *                   OPT_EVENTS(&t.events, "the events to show (default: all)"),
 *                   OPT_BOOL('i', "images", &by_image, "one row per image"),
 *                   TOOL_OPTS_OUTPUT(&t),         // --json, --color
 *                   OPT_END()
 *           };
 *           const struct cli_command cmd = { .usage = "dcpiprof [options]",
 *                   .options = options, .max_args = -1 };
 *           int first = tool_start(&t, argc, argv, &cmd, TOOL_EPOCH);
 *
 *           ... build from &t.view; NAME_draw(&x, &t.out), or if t.json
 *               NAME_json(&x, &t.jw) and r = json_finish(&t.jw) ...
 *           return tool_finish(&t, r);
 *   }
 *
 * Tools that compare sets of samples (dcpistats, dcpidiff) open them with
 * tool_open_sets() instead (t.sets gets -d, --force and --debug-dir).  New report tools (a call graph, an export) start the same
 * way; docs/architecture.md says where the rest goes.
 */
#ifndef DCPI_TOOLS_TOOL_H
#define DCPI_TOOLS_TOOL_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/epochview.h"
#include "analysis/pset.h"
#include "core/cli.h"
#include "core/json.h"
#include "disasm/srcfile.h"
#include "present/draw.h"

struct tool {
	/* options */
	const char *db_path;            /* -d (NULL: $DCPI_DB, else ./dcpi.db) */
	const char *epoch;              /* -E (NULL: latest) */
	struct epoch_view_opts binaries; /* --force, --debug-dir */
	struct cli_events events;       /* -e (n 0: the report's default) */
	bool json;                      /* --json */
	enum cli_color color;           /* --color */
	struct srcfiles src;            /* --substitute-path, and the source files read */
	struct pset_ctx sets;           /* sets are named in -d, with --force, --debug-dir */
	/* tool_open() */
	struct db *db;                  /* the -d database */
	struct epoch_view view;         /* the -E epoch of it */
	bool view_open;
	/* tool_open_sets() */
	struct pset *setv;              /* the sets opened, in argument order */
	struct pset **sets_of;          /* pointers to them (what analysis/ takes) */
	size_t n_sets;
	/* text output: stdout, coloured as --color says (tool_start()) */
	struct draw out;
	/* JSON output (--json): stdout, indented; the tool ends its document with json_finish() */
	struct json_writer jw;
	/*
	 * How tool_finish() says what a text report was made without: NULL,
	 * lines after the report; a prefix, each line starting with it (the
	 * comments of a data format: "// " for DOT); "" nowhere (a format
	 * without comments: the exit status and the messages say it).
	 */
	const char *note_prefix;
};

/* -d DIR, -E EPOCH, --force, --debug-dir DIR */
#define TOOL_OPTS_EPOCH(t) TOOL_OPT_DB(t), OPT_EPOCH(&(t)->epoch), TOOL_OPTS_BINARIES(t)
/* -d DIR: the database sets are named in (dcpistats, dcpidiff). */
#define TOOL_OPT_DB(t) OPT_DB(&(t)->db_path)
/* --force, --debug-dir DIR */
#define TOOL_OPTS_BINARIES(t) \
	OPT_FORCE(&(t)->binaries.force), OPT_DEBUG_DIR(&(t)->binaries.debug_dir)
/* --substitute-path FROM=TO (repeatable) */
#define TOOL_OPT_SUBST(t) \
	OPT_CALLBACK(0, "substitute-path", &(t)->src, "FROM=TO", \
		     "look for sources under FROM in TO (repeatable)", tool_subst_option)
/* --json, --color[=WHEN] */
#define TOOL_OPTS_OUTPUT(t) OPT_JSON(&(t)->json), OPT_COLOR(&(t)->color)

int tool_subst_option(const struct cli_option *opt, const char *arg);

/*
 * -N, --normalize MODE into an enum pset_norm: total or period, and none
 * too when allowed is 1.
 */
int tool_norm_option(const struct cli_option *opt, const char *arg);
#define TOOL_OPT_NORM(v, allow_none, h) \
	OPT_CALLBACK_F('N', "normalize", (v), "MODE", (h), tool_norm_option, 0, (allow_none))

enum tool_flags {
	TOOL_EPOCH = (1 << 0),  /* tool_start() opens the database and epoch (tool_open()) */
};

/*
 * Sets t up without a command line (what tool_start does first): text
 * output on stdout, colour as t->color says, no sets.  For a tool run
 * from another command (dcpidb complete), which then calls tool_open and
 * tool_finish.
 */
void tool_init(struct tool *t);

/*
 * Sets t up and parses the command line with cmd (core/cli.h: --help,
 * --version and bad usage exit there); with TOOL_EPOCH, opens the database
 * and the epoch too, and exits 1 if they cannot be.  Returns the index of
 * the first argument.
 */
int tool_start(struct tool *t, int argc, char **argv, const struct cli_command *cmd,
	       unsigned flags);

/*
 * Opens the -d database and its -E epoch as t->view (analysis/epochview.h:
 * every profile is read and checked now).  Returns 0, or -1 after
 * reporting.
 */
int tool_open(struct tool *t);

/*
 * Opens the sets specs names (analysis/pset.h: an epoch of -d, a
 * database, DIR:EPOCH) as t->setv, in order, and returns t->sets_of (NULL
 * after reporting the first that cannot be opened).
 */
struct pset **tool_open_sets(struct tool *t, char *const *specs, size_t n);

/*
 * The exit status of every report tool (docs/dcpi.7, "EXIT STATUS"): 0, a
 * report made from complete data; 1, a failure (bad usage, nothing to
 * report, an error that is not a damaged or missing file of the database);
 * 2, a report printed, made from partial data (a damaged or missing file:
 * db/damage.h), as grep and diff tell "not found" from "trouble".
 */
enum {
	TOOL_EXIT_OK = 0,
	TOOL_EXIT_FAILURE = 1,
	TOOL_EXIT_PARTIAL = 2,
};

/*
 * Draws what the text report was made without (analysis/incomplete.h) when
 * status is 0 and the report is text, flushes the output (a write error is
 * reported), closes what t opened and returns the exit status:
 * tool_exit_status(status, whether a database t read has a damaged or
 * missing file).  JSON reports carry the same list themselves
 * (db_damage_json()).
 */
int tool_finish(struct tool *t, int status);

/*
 * The rule: TOOL_EXIT_FAILURE if status is not 0 or an error other than a
 * damaged or missing file was reported (error_count() beyond
 * db_damage_errors()), else TOOL_EXIT_PARTIAL if partial, else
 * TOOL_EXIT_OK.  For commands that do not end with tool_finish().
 */
int tool_exit_status(int status, bool partial);

#endif
