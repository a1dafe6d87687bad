/*
 * tui/tui.h - a dcpi-tui session: the database, the view stack, the current
 * epoch and event, the marked epochs, messages, jobs, and the loop that
 * turns keys and script lines into requests.
 *
 * Views use the functions below to reach the session: to open other views
 * (tui_push, tui_open_view), to get data (tui_data), to change the
 * session's epoch or event, and to say things in the status line
 * (tui_info; errors go through errorf() like everywhere in dcpi and end up
 * in the status line and the messages view, because the session installs
 * a report routine: nothing a view reports ever kills the UI).
 */
#ifndef DCPI_TUI_TUI_H
#define DCPI_TUI_TUI_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/die.h"
#include "tui/job.h"
#include "tui/request.h"
#include "tui/view.h"

struct data_ctx;
struct diff_data;
struct display;
struct proc_data;
struct procs_data;
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

struct tui_message {
	enum report_level level;
	char *text;
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

/* ---- for views -------------------------------------------------------- */

/* The view on top of the stack, or NULL. */
struct view *tui_view(struct tui *t);

/* Opens a view of ops at loc on top of the stack; -1 if it cannot open. */
int tui_push(struct tui *t, const struct view_ops *ops, const struct view_loc *loc);

/*
 * Opens the view called name ("procedures", "diff", ...) at loc.  A view
 * that is not built yet is reported in the status line ("the procedures
 * view is not available yet") and -1 returned: the hook for later views.
 */
int tui_open_view(struct tui *t, const char *name, const struct view_loc *loc);

/* The registered view called name, or NULL. */
const struct view_ops *tui_view_ops(const char *name);

/*
 * The cached result of job key, or NULL after queuing it (run, arg,
 * free_arg, free_result as jobs_submit()) and making waiter wait for it.
 */
void *tui_data(struct tui *t, struct view *waiter, const char *key, const char *title,
	       void (*run)(struct job *), void *arg, void (*free_arg)(void *),
	       void (*free_result)(void *));

/* The epochs of the database, or NULL while loading (waiter waits). */
const struct epochs_data *tui_epochs(struct tui *t, struct view *waiter);
/* The images of epoch seq, or NULL while loading (waiter waits). */
const struct images_data *tui_images(struct tui *t, uint32_t seq, struct view *waiter);

/*
 * The procedures of epoch seq, of one image (its key) or all (NULL), or
 * NULL while loading (waiter waits).  Honours the session's :force.
 */
const struct procs_data *tui_procs(struct tui *t, uint32_t seq, const char *image,
				   struct view *waiter);
/*
 * The analysis of every procedure of pd (the procedures of epoch seq, of
 * one image or all, as tui_procs() gave them), computed by a background
 * job: returned while it runs too (rows below its `done` are final), and
 * *complete says whether it has finished.  waiter is reloaded when it has.
 * NULL if pd cannot be analysed.
 */
const struct procs_calc *tui_procs_calc(struct tui *t, const struct procs_data *pd,
					struct view *waiter, bool *complete);
/*
 * One procedure of epoch seq: spec as analysis/lookup.h takes it (a
 * name, NAME@IMAGE or 0xADDRESS), looked for in image (a key) or in every
 * image (NULL).  NULL while loading (waiter waits).
 */
const struct proc_data *tui_proc(struct tui *t, uint32_t seq, const char *image,
				 const char *spec, struct view *waiter);

/*
 * Epochs a and b compared as dcpidiff compares them (tui/data-diff.h):
 * every procedure (procedure NULL) or one procedure's instructions (a
 * spec as lookup.h takes it), for the session's event, :force and
 * :normalize.  NULL
 * while loading (waiter waits).
 */
const struct diff_data *tui_diff(struct tui *t, uint32_t a, uint32_t b, const char *procedure,
				 struct view *waiter);

/*
 * Adds the procedure names of epoch seq the session has loaded (the
 * procedures of every image, or of any one image) to completion candidates.
 */
void tui_complete_procedures(struct tui *t, uint32_t seq, struct candidates *c);

/* Uses (or stops using) binaries that changed since profiling: every view reloads. */
void tui_set_force(struct tui *t, bool force);
/* Normalises diffs by period (else by total samples, dcpidiff -N): every view reloads. */
void tui_set_norm_period(struct tui *t, bool period);

/*
 * Opens the procedure view of spec (a name or 0xADDRESS) in image (a key,
 * or NULL: any image of the epoch).
 */
int tui_open_procedure(struct tui *t, uint32_t seq, const char *image, const char *spec);

/* Makes seq the current epoch: views that follow the epoch reload. */
void tui_set_epoch(struct tui *t, uint32_t seq);
/* Makes ev the current event: every view reloads. */
void tui_set_event(struct tui *t, int ev);
/*
 * Makes sure the current event is one that events (of the data a view is
 * about to show) has: else picks the default (cycles, clock, ...), saying so
 * if the user had chosen the missing one.
 */
void tui_default_event(struct tui *t, const bool events[]);

/* Appends "3" or "3 'label'" for epoch seq. */
void tui_epoch_name(struct tui *t, uint32_t seq, struct strbuf *sb);

/* Marks or unmarks epoch seq for a diff (A is the older mark). */
void tui_toggle_mark(struct tui *t, uint32_t seq);
/* 'A', 'B' or 0. */
char tui_mark_of(const struct tui *t, uint32_t seq);

/* A status-line note (not an error); errors use errorf(). */
void tui_info(struct tui *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The draw flags for this session (DRAW_ASCII or 0). */
unsigned tui_draw_flags(const struct tui *t);

/* ---- input (tui.c, command.c) ------------------------------------------- */

/*
 * Runs request req with arg (NULL: none).  from_key: invoked by a key, so a
 * missing argument opens the prompt instead of being an error.
 */
void tui_request(struct tui *t, enum request req, const char *arg, bool from_key);
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
/* Completion candidates for arg kind (prompt). */
void tui_complete(struct tui *t, enum arg_kind kind, struct candidates *c);

/* Session requests (command.c): what neither the view nor view.c handled. */
void tui_session_request(struct tui *t, enum request req, const char *arg);

/* Pops views down to depth (>= 1). */
void tui_pop_to(struct tui *t, size_t depth);

#endif
