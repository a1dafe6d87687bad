/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/session.h - a dcpi-tui session: the database, the view stack, the
 * current epoch and event, the marked epochs, messages, jobs, and the loop
 * that turns keys and script lines into requests.  Private to the files
 * that make the session (tui.c: views, data and the loop; command.c: its
 * requests and commands; prompt.c: the command line; display.c: the
 * screen) and to dcpi-tui.c; views see it through tui/tui.h.
 */
#ifndef DCPI_TUI_SESSION_H
#define DCPI_TUI_SESSION_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/die.h"
#include "tui/job.h"
#include "tui/request.h"
#include "tui/tui.h"
#include "tui/view.h"

struct data_ctx;
struct display;
struct script;
struct strbuf;

struct tui_options {
	const char *db_path;   /* -d DIR or the argument, else $DCPI_DB, else dcpi.db */
	const char *epoch;     /* -E: the first epoch (default latest) */
	int event;             /* -e: the first event (-1: cycles, else clock, ...) */
	const char *script;    /* --script FILE / $DCPI_TUI_SCRIPT: keys and commands */
	bool headless;         /* draw to /dev/null (implied by a script) */
	bool ascii;            /* --ascii: no UTF-8 even in a UTF-8 locale */
	bool no_color;         /* --no-color or $NO_COLOR */
	bool sync_jobs;        /* $DCPI_TUI_THREADS=0: no worker thread */
	const char *timing;    /* $DCPI_TUI_TIMING: write timings to this file */
	bool force;            /* --force: use binaries that changed since profiling */
	const char *debug_dir; /* --debug-dir: where separate debug files are */
	const char *const *substitutions; /* --substitute-path FROM=TO, in order */
	size_t n_substitutions;
};

/* Timings for benchmarks ($DCPI_TUI_TIMING). */
struct tui_timing {
	int64_t start_ns;         /* tui_init */
	int64_t first_paint_ns;   /* first screen drawn (maybe still loading) */
	int64_t first_screen_ns;  /* first screen with every view loaded */
	int64_t *key_ns;          /* per script key: handling to redrawn screen */
	int64_t *settle_ns;       /* ... to the screen with the background work done too */
	size_t n_keys, alloc_keys;
};

#define TUI_STACK_MAX 32
#define TUI_MESSAGES_MAX 1000

/* The prompt while it is open (drawn by the display). */
struct tui_prompt {
	bool active;
	const char *prompt;       /* ":" or "/" */
	const char *line;         /* readline's buffer */
	int point;                /* cursor, in bytes */
	char **matches;           /* completion list shown above it, or NULL */
	size_t n_matches;
};

struct tui {
	struct tui_options opt;
	struct db *db;            /* NULL if the database cannot be opened */
	char *db_path;
	struct jobs jobs;
	struct data_ctx *data;    /* the analysis views' shared epochs (tui/data-proc.h) */
	bool force;               /* use binaries that changed since profiling (:force) */
	bool norm_period;         /* diffs normalised by period, not total (:normalize) */
	struct display *disp;
	struct script *script;    /* NULL: keys from the terminal */
	struct view *stack[TUI_STACK_MAX];
	size_t depth;
	uint32_t epoch;           /* the current epoch, 0 if none */
	int event;                /* the current event, -1 until known */
	bool event_chosen;        /* by -e or :event (else follows the data) */
	uint32_t marks[2];        /* epochs marked for a diff (A, B), 0: none */
	char *search;             /* the last search pattern */
	struct view_pattern search_pat;
	bool search_ok;
	struct tui_message *msgs; /* the warnings and errors of the session */
	size_t n_msgs, alloc_msgs;
	size_t msgs_dropped;      /* more than TUI_MESSAGES_MAX: counted only */
	char *status;             /* the status line */
	enum report_level status_level;
	bool status_is_info;
	size_t status_more;       /* messages since the one shown */
	struct tui_prompt prompt;
	bool quit;
	bool dirty_views;         /* views must be re-laid out */
	struct tui_timing timing;
};

/* Sets up a session (display, database, first views); -1 if the terminal cannot be used. */
int tui_init(struct tui *t, const struct tui_options *opt);
/* Runs until quit; returns the exit status. */
int tui_run(struct tui *t);
void tui_release(struct tui *t);

/* ---- input (tui.c, command.c) ------------------------------------------- */

/* Runs a command line ("sort cycles"), as typed after ':'. */
void tui_command(struct tui *t, const char *line);
/*
 * The next key from the keyboard, or ERR when something else needs the
 * loop (a job finished, progress to show).  Never blocks past a finished job.
 */
int tui_next_key(struct tui *t);
/* Handles one key. */
void tui_key(struct tui *t, int key);
/* Collects finished jobs and reloads the views waiting for them; returns how many. */
size_t tui_collect(struct tui *t);

/* Session requests (command.c): what neither the view nor view.c handled. */
void tui_session_request(struct tui *t, enum request req, const char *arg);

/* Pops views down to depth (>= 1). */
void tui_pop_to(struct tui *t, size_t depth);

#endif
