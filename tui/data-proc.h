/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/data-proc.h - what the procedure views show, built on worker threads
 * with the same library calls as dcpiprof, dcpilist and dcpicalc
 * (analysis/procprof.h, lookup.h, listing.h, calc.h), so that
 * dcpi-tui and the tools never disagree.
 *
 * Sources (tui/source.h) and their keys (tui/job.h caches each result for
 * the session):
 *   procs_source       "procs/SEQ/F/IMAGE/BY"   struct procs_data  (data_procs())
 *   procs_calc_source  "calc/SEQ/F/IMAGE/BY"    struct procs_calc  (data_procs_calc(), a
 *                      background job: every procedure of a procs_data analysed)
 *   proc_source        "proc/SEQ/F/IMAGE/SPEC"  struct proc_data   (data_proc())
 * F is 1 when binaries that changed since profiling are used anyway (the
 * tools' --force, dcpi-tui's :force), else 0; IMAGE is an image key or "*"
 * for every image; BY the grouping by process (enum procprof_by, 0: none);
 * SPEC is what analysis/lookup.h takes (a name or 0xADDRESS).
 *
 * Sharing and threads.  Both results are built on one struct epoch_view
 * per (database, epoch, force), opened by the first job that needs it and
 * shared by every later one (images, symbols and DWARF are read once).  An
 * epoch view changes as it is used (images open lazily), so only the
 * worker thread ever calls into it; results keep what the views read in
 * their own memory, or in memory the epoch view never changes again
 * (procedure names, image records, a listing's CFG), and hold a reference
 * that keeps the epoch view alive.  The main thread only drops references;
 * epoch views are closed by the worker (when a job finds them unused and
 * stale) or by data_ctx_free().
 */
#ifndef DCPI_TUI_DATA_PROC_H
#define DCPI_TUI_DATA_PROC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/calc.h"
#include "analysis/calc-draw.h"
#include "analysis/epochview.h"
#include "analysis/listing.h"
#include "analysis/lookup.h"
#include "analysis/procprof.h"
#include "tui/source.h"

struct candidates;
struct job;
struct data_ctx;

/* One epoch opened for the analysis views, shared (see above). */
struct shared_epoch {
	atomic_int refs;
	struct db *db;
	uint32_t seq;
	bool force;
	bool stale;              /* after data_ctx_invalidate(): not handed out again */
	int status;              /* epoch_view_open(): 0, or -1 (reported) */
	char *error;             /* what it reported, or NULL */
	struct epoch_view view;
};

struct data_ctx_opts {
	const char *debug_dir;            /* NULL: $DCPI_DEBUG_DIR, else /usr/lib/debug */
	const char *const *substitutions; /* "FROM=TO" source path substitutions */
	size_t n_substitutions;
};

/* The analysis context of a session; -1-free: bad substitutions are reported and skipped. */
struct data_ctx *data_ctx_new(const struct data_ctx_opts *opts);
/* Closes every epoch view; call when no job runs any more (after jobs_release()). */
void data_ctx_free(struct data_ctx *ctx);
/* Main thread (reload): epoch views opened so far are not reused. */
void data_ctx_invalidate(struct data_ctx *ctx);

/* Drops a reference (any thread). */
void shared_epoch_put(struct shared_epoch *se);

/*
 * Worker thread: the epoch view of (db, seq, force), shared, with a
 * reference for the caller (status and error say if it could not be opened).
 */
struct shared_epoch *data_epoch_get(struct data_ctx *ctx, struct job *job, struct db *db,
				    uint32_t seq, bool force);

/* ---- procedures ---------------------------------------------------------- */

/* What an image of the epoch is like for the analysis (copied from disasm). */
struct procs_image {
	enum image_state state;
	bool opened;              /* state and why are known (the image has rows) */
	bool forced;              /* a changed binary used anyway */
	char *path;               /* terminal-safe */
	const char *base;         /* last component of path */
	char *why;                /* why names or code are missing (terminal-safe), or NULL */
};

/*
 * The analysis columns of the procedures view (calc_procrow(): CPI,
 * best-case CPI, dominant culprit, share of high-confidence estimates),
 * from struct procs_calc.  The view copies them into the rows (main
 * thread) when the analysis is complete, for sorting.
 */
struct proc_analysis {
	bool valid;               /* analysed: a procedure with time samples */
	double cpi, best_cpi;     /* < 0 unknown */
	const char *culprit;      /* the dominant culprit, in a word of at most 7 letters, or NULL */
	const char *name;         /* ... its name (calc_culprit_name) */
	char letter;              /* its letter (calc_culprit_letter), or 0 */
	double culprit_share;     /* its upper bound, share of the samples */
	double high_conf;         /* share of the samples in high-confidence estimates, 0..1 */
};

struct proc_row {
	const struct procprof_row *pr; /* samples, image, proc (NULL: unnamed samples) */
	char *name;               /* terminal-safe (borrowed when the name needs no escaping) */
	bool owned;               /* name was allocated for the row */
	struct proc_analysis an;  /* valid when procs_data.analysed */
};

struct procs_data {
	struct shared_epoch *se;
	uint32_t seq;
	bool force;
	char *image;              /* the image key asked for, NULL: all */
	struct procprof pp;
	struct proc_row *rows;
	size_t n;
	struct procs_image *images;  /* one per image of the epoch view */
	size_t n_images;
	bool events[EVENT__COUNT];   /* events with samples in the epoch */
	bool analysed;
	int by;                      /* enum procprof_by: rows per process too */
	int status;                  /* 0, or -1: the epoch or the image cannot be read */
	char *error;                 /* then: what was reported (terminal-safe) */
};

/* What a view asks procs_source for. */
struct procs_req {
	uint32_t seq;
	const char *image;        /* an image key, NULL: every image */
	int by;                   /* enum procprof_by: grouped by process too (the stack table) */
};

/* The job's argument: the request (image owned) and the session's state. */
struct procs_arg {
	struct tui_env env;
	struct procs_req req;
};

/* Job: the procedures of an epoch (arg: struct procs_arg *, freed by procs_arg_free). */
void data_load_procs(struct job *job);
void procs_arg_free(void *arg);
void procs_data_free(void *data);

extern const struct tui_source procs_source;
/*
 * The procedures of epoch seq, of one image (its key) or all (NULL), or
 * NULL while loading (waiter waits).  Honours the session's :force.
 */
const struct procs_data *data_procs(struct tui *t, uint32_t seq, const char *image,
				    struct view *waiter);
/* The same grouped by process (by: enum procprof_by; PROCPROF_BY_IMAGE: as data_procs). */
const struct procs_data *data_procs_by(struct tui *t, uint32_t seq, const char *image, int by,
				       struct view *waiter);
/*
 * Adds the procedure names of epoch seq the session has loaded (every
 * image's, or any one image's) to completion candidates.
 */
void procs_complete_names(struct tui *t, uint32_t seq, struct candidates *c);

/* ---- every procedure analysed (background) ------------------------------- */

/*
 * The analysis of the rows of a procs_data, in row order (hottest first),
 * readable while the job runs: rows below `done` are final.
 */
struct procs_calc {
	size_t n;                    /* rows */
	struct proc_analysis *an;    /* per row */
	atomic_size_t done;          /* rows [0, done) are final */
	size_t n_todo;               /* rows with a procedure and time samples */
	atomic_size_t n_analysed;    /* ... analysed so far */
	size_t n_failed;             /* ... that could not be (reported once) */
};

struct procs_calc_arg {
	struct shared_epoch *se;     /* a reference: the procedures' epoch view */
	struct proc_ref *refs;       /* per row (proc NULL: nothing to analyse) */
	size_t n, next;              /* rows, and where to resume after a yield */
	struct procs_calc *res;      /* owned; the job's result once done */
	char *first_error;
};

/*
 * The argument of the analysis of pd's rows (main thread, pd collected):
 * takes a reference on pd's epoch view.  Free with procs_calc_arg_free().
 */
struct procs_calc_arg *procs_calc_arg_new(const struct procs_data *pd);
void procs_calc_arg_free(void *arg);
/* Background job: analyses every row (arg: struct procs_calc_arg *). */
void data_calc_procs(struct job *job);
/* The result of a job of data_calc_procs, complete or not. */
const struct procs_calc *procs_calc_of(const struct job *job);

extern const struct tui_source procs_calc_source;  /* req: the struct procs_data */
/*
 * The analysis of every procedure of pd (as data_procs() gave it),
 * computed by a background job: returned while it runs too (rows below
 * its `done` are final), and *complete says whether it has finished.
 * waiter is reloaded when it has.  NULL if pd cannot be analysed.
 */
const struct procs_calc *data_procs_calc(struct tui *t, const struct procs_data *pd,
					 struct view *waiter, bool *complete);

/* The image path and key of a row. */
const struct procs_image *procs_row_image(const struct procs_data *pd, const struct proc_row *r);
const char *procs_row_key(const struct procs_data *pd, const struct proc_row *r);

/* ---- one procedure ----------------------------------------------------------- */

/* What a branch or call of an instruction goes to, outside the procedure. */
struct proc_target {
	char *name;               /* "memcpy@plt", "main+0x12" (terminal-safe), or NULL */
};

/*
 * A procedure as dcpicalc analyses it: c.list is its listing (what dcpilist
 * shows), c.blocks, c.insns and c.summary the analysis (calc.h), render
 * the lines dcpicalc prints (calc_render), whose stall bubbles the view
 * draws with calc_draw_bubble(), so that they are exactly dcpicalc's.
 */
struct proc_data {
	struct shared_epoch *se;
	int status;               /* 0, or -1: not found or refused (error says why) */
	char *error;              /* the message reported, terminal-safe */
	struct lookup_failure lookup; /* why it was not found, in parts (kind LOOKUP_FOUND: it was) */
	bool need_force;          /* refused because a binary changed: :force would help */
	struct calc c;            /* valid when status is 0 (c.list: the listing) */
	struct calc_lines render; /* dcpicalc's lines of c (CALC_RENDER_NO_HEADER) */
	uint32_t *bubble_first;   /* per instruction: its first CALC_LINE_BUBBLE in render */
	uint32_t *bubble_n;       /* ... and how many */
	char image_key[PROFILE_KEY_MAX + 1];
	char *name;               /* terminal-safe */
	char *image_path;         /* terminal-safe */
	char *warning;            /* a changed binary used anyway (terminal-safe), or NULL */
	char *src_file;           /* the source file found for the first line, or NULL */
	struct proc_target *targets;  /* per instruction (l.insns) */
	const char **names;       /* every procedure name of the image (completion) */
	size_t n_names;
	uint64_t epoch_totals[EVENT__COUNT];
};

/* What a view asks proc_source for. */
struct proc_req {
	uint32_t seq;
	const char *image;        /* an image key, NULL: any image of the epoch */
	const char *spec;         /* as analysis/lookup.h takes it: NAME, NAME@IMAGE, 0xADDRESS */
};

/* The job's argument: the request (strings owned) and the session's state. */
struct proc_arg {
	struct tui_env env;
	struct proc_req req;
};

/* Job: one procedure's listing (arg: struct proc_arg *, freed by proc_arg_free). */
void data_load_proc(struct job *job);
void proc_arg_free(void *arg);
void proc_data_free(void *data);

extern const struct tui_source proc_source;
/* One procedure of epoch seq, or NULL while loading (waiter waits).  Honours :force. */
const struct proc_data *data_proc(struct tui *t, uint32_t seq, const char *image,
				  const char *spec, struct view *waiter);

#endif
