/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/tui-int.h - the state of a dcpi-tui session, shared by the files
 * that make the session and private to them; views see it through
 * tui/tui.h.  The files, each calling only those above it here:
 *
 *   tui.c       the state and what views do with it (tui/tui.h): the
 *               view stack, epoch, event, marks, messages, the status
 *               line, collecting finished jobs
 *   display.c   the screen, drawn from the state (tui/display.h)
 *   prompt.c    the ':' and '/' line (tui/prompt.h); what it runs and
 *               completes comes through its hooks
 *   command.c   keys, commands and requests (tui/command.h)
 *   session.c   setting up, the loop, scripts and timings (tui/session.h)
 */
#ifndef DCPI_TUI_TUI_INT_H
#define DCPI_TUI_TUI_INT_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/die.h"
#include "tui/request.h"
#include "tui/source.h"
#include "tui/tui.h"
#include "tui/view.h"

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
	int64_t start_cpu_ns;     /* the process's CPU time then (every thread) */
	int64_t first_paint_ns;   /* first screen drawn (maybe still loading) */
	int64_t first_screen_ns;  /* first screen with every view loaded */
	int64_t first_screen_cpu_ns; /* ... and the CPU time it took (a busy machine's measure) */
	int64_t *key_ns;          /* per script key: handling to redrawn screen */
	int64_t *settle_ns;       /* ... to the screen with the background work done too */
	size_t n_keys, alloc_keys;
	char *error;              /* why the file could not be written (said on stderr at the end) */
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
	/*
	 * The data and what it depends on: src.env.db (NULL if the database
	 * cannot be opened), .event (-1 until known), .force (:force),
	 * .norm_period (:normalize), .analysis (the shared epochs).
	 */
	struct sources src;
	char *db_path;
	struct display *disp;
	bool ascii;               /* the display shows ASCII only */
	struct script *script;    /* NULL: keys from the terminal */
	struct view *stack[TUI_STACK_MAX];
	size_t depth;
	uint32_t epoch;           /* the current epoch, 0 if none */
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

/* ---- tui.c: the state ----------------------------------------------------- */

/* Logs a message of the session: the status line and the messages view (once each). */
void tui_message(struct tui *t, enum report_level level, const char *msg);
/* Clears the status line. */
void tui_status_clear(struct tui *t);

/* Collects finished jobs and reloads the views waiting for them; returns how many. */
size_t tui_collect(struct tui *t);

/* Pops views down to depth (>= 1). */
void tui_pop_to(struct tui *t, size_t depth);

/*
 * Rereads the database (opens it if it could not be opened before): every
 * cached result and shared epoch forgotten, every view reloaded.  -1 if
 * there is still no database.
 */
int tui_reload(struct tui *t);

#endif
