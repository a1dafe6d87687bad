/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/data-proc.h - what the procedure views show, built on worker threads
 * with the same library calls as dcpiprof, dcpilist and dcpicalc
 * (analysis/procprof.h, lookup.h, listing.h, calc.h), so that
 * dcpi-tui and the tools never disagree, on the epoch views the analysis
 * sources share (tui/data-epoch.h).
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
 */
#ifndef DCPI_TUI_DATA_PROC_H
#define DCPI_TUI_DATA_PROC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/calc.h"
#include "analysis/calc-each.h"
#include "analysis/calc-draw.h"
#include "analysis/epochview.h"
#include "analysis/listing.h"
#include "analysis/lookup.h"
#include "analysis/procprof.h"
#include "tui/data-epoch.h"
#include "tui/source.h"

struct candidates;
struct strbuf;
struct job;

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
 * one per row of struct procs_calc, kept there only (a million rows: no
 * copy in the rows; the culprit's words come from its index).
 */
struct proc_analysis {
	double cpi, best_cpi;     /* < 0 unknown */
	double culprit_share;     /* the dominant culprit's upper bound, share of the samples */
	double high_conf;         /* share of the samples in high-confidence estimates, 0..1 */
	int8_t dominant;          /* enum calc_culprit, or -1: none */
	bool valid;               /* analysed: a procedure with time samples */
};

/* The dominant culprit in a word of at most 7 letters, or NULL. */
const char *proc_analysis_culprit(const struct proc_analysis *an);

/*
 * The rows are procprof's (pp.rows[i], its samples procprof_samples(&pp,
 * i, c)): 16 bytes a row and 8 a column, the image's figures in images[].
 */
struct procs_data {
	atomic_int refs;          /* the job's (procs_data_free() drops it), the analysis' */
	struct shared_epoch *se;
	uint32_t seq;
	bool force;
	char *image;              /* the image key asked for, NULL: all */
	struct procprof pp;
	size_t n;                 /* rows: pp.n_rows */
	struct procs_image *images;  /* one per image of the epoch view */
	size_t n_images;
	bool events[EVENT__COUNT];   /* events with samples in the epoch */
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
	struct source_env env;
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
const struct procs_data *data_procs(struct sources *s, uint32_t seq, const char *image,
				    struct view *waiter);
/* The same grouped by process (by: enum procprof_by; PROCPROF_BY_IMAGE: as data_procs). */
const struct procs_data *data_procs_by(struct sources *s, uint32_t seq, const char *image, int by,
				       struct view *waiter);
/*
 * Adds the procedure names of epoch seq the session has loaded (every
 * image's, or any one image's) to completion candidates.
 */
void procs_complete_names(struct sources *s, uint32_t seq, struct candidates *c);

/* ---- every procedure analysed (background) ------------------------------- */

/*
 * The analysis of the rows of a procs_data, readable while the job runs:
 * row i is final once procs_calc_ready(), and read with procs_calc_get().
 * Rows are analysed on the engine's threads (analysis/calc-each.h
 * calc_rows) image after image, hottest image first, except that the rows
 * a view asks for (procs_calc_want(): those on its screen) go before the
 * others; with the session's analysis cache (analysis/calc-cache.h), as
 * dcpicalc analyses them.  An image's decoded profile goes once its rows
 * are analysed.  33 bytes a row: the figures, and a byte that says whether
 * the row is final, whether it has figures, and its culprit.
 */
struct proc_figures {
	double cpi, best_cpi, culprit_share, high_conf;
};

struct procs_calc {
	size_t n;                    /* rows */
	struct proc_figures *fig;    /* per row */
	_Atomic unsigned char *state; /* per row: PROCS_CALC_READY, _VALID, the culprit + 1 above */
	size_t n_todo;               /* rows with a procedure and time samples */
	atomic_size_t n_analysed;    /* ... analysed so far */
	atomic_size_t n_failed;      /* ... that could not be (reported once) */
	/* the analysis under way, for the rows a view wants first */
	pthread_mutex_t want_lock;
	struct calc_rows *rows;
	uint32_t *item_of;           /* per row: its place in the analysis' order */
};

enum { PROCS_CALC_READY = 1, PROCS_CALC_VALID = 2, PROCS_CALC_CULPRIT_SHIFT = 2 };

/* True if row i of calc is final (procs_calc_get() may read it). */
static inline bool procs_calc_ready(const struct procs_calc *calc, size_t i)
{
	return i < calc->n && atomic_load_explicit(&calc->state[i], memory_order_acquire) &
			      PROCS_CALC_READY;
}

/* Row i's analysis (final: procs_calc_ready()) in *buf, or NULL when it has none. */
const struct proc_analysis *procs_calc_get(const struct procs_calc *calc, size_t i,
					   struct proc_analysis *buf);

/* Asks for row i before the rows in order (a row being drawn). */
void procs_calc_want(const struct procs_calc *calc, size_t i);

struct procs_calc_arg {
	struct shared_epoch *se;     /* a reference: the procedures' epoch view */
	struct calc_cache *cache;    /* the session's, or NULL */
	struct procs_data *pd;       /* a reference: the rows analysed */
	uint32_t *row_of;            /* per item, in the order analysed: its row */
	atomic_uint *left;           /* per image: its rows still to analyse */
	size_t n;                    /* rows */
	struct procs_calc *res;      /* owned; the job's result once done */
	char *first_error;           /* the message of the first row that failed ... */
	size_t first_error_row;      /* ... that row */
	pthread_mutex_t lock;        /* first_error */
};

/*
 * The argument of the analysis of pd's rows (main thread, pd collected):
 * takes a reference on pd and on its epoch view.  Free with
 * procs_calc_arg_free().
 */
struct procs_calc_arg *procs_calc_arg_new(const struct procs_data *pd, struct calc_cache *cache);
void procs_calc_arg_free(void *arg);
/* Background job: analyses every row (arg: struct procs_calc_arg *). */
void data_calc_procs(struct job *job);
/* The result of a job of data_calc_procs, complete or not. */
const struct procs_calc *procs_calc_of(const struct job *job);

extern const struct tui_source procs_calc_source;  /* req: the struct procs_data */
/*
 * The analysis of every procedure of pd (as data_procs() gave it),
 * computed by a background job: returned while it runs too (a row is
 * final once procs_calc_ready()), and *complete says whether it has finished.
 * waiter is reloaded when it has.  NULL if pd cannot be analysed.
 */
const struct procs_calc *data_procs_calc(struct sources *s, const struct procs_data *pd,
					 struct view *waiter, bool *complete);

/* The image path and key of a row. */
const struct procs_image *procs_row_image(const struct procs_data *pd, const struct procprof_row *r);
const char *procs_row_key(const struct procs_data *pd, const struct procprof_row *r);
/* A row's name as drawn: terminal-safe, in buf when it needs escaping (else borrowed). */
const char *procs_row_name(const struct procs_data *pd, size_t i, struct strbuf *buf);

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
	struct source_env env;
	struct proc_req req;
};

/* Job: one procedure's listing (arg: struct proc_arg *, freed by proc_arg_free). */
void data_load_proc(struct job *job);
void proc_arg_free(void *arg);
void proc_data_free(void *data);

extern const struct tui_source proc_source;
/* One procedure of epoch seq, or NULL while loading (waiter waits).  Honours :force. */
const struct proc_data *data_proc(struct sources *s, uint32_t seq, const char *image,
				  const char *spec, struct view *waiter);

#endif
