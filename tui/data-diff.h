/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/data-diff.h - what the diff views show: two epochs compared by
 * analysis/diff.h, the engine of dcpidiff, so that the rows, numbers
 * and verdicts are dcpidiff's.
 *
 * The source is diff_source (tui/source.h, data_diff()); its keys (tui/job.h
 * caches each result for the session):
 *   "diff/A/B/F/E/N"          struct diff_data: procedures (dcpidiff A B)
 *   "diff/A/B/F/E/N/SPEC"     struct diff_data: one procedure's instructions
 *                             (dcpidiff A B SPEC), in address order
 * A and B are epoch numbers in that order (swapping sides is another key),
 * F is 1 with :force, E the event asked for (-1: dcpidiff's default), N
 * the normalisation: t (total, the default) or p (period, dcpidiff -N period).
 *
 * A result compares the session's shared epoch views (tui/data-epoch.h:
 * a diff after P reads neither epoch again, and the diff of one procedure
 * side by side neither), each held by a reference; the views only read
 * it, a row at a time (diff_row_get(): a million rows are kept as their
 * order and verdicts, not as rows of numbers).
 */
#ifndef DCPI_TUI_DATA_DIFF_H
#define DCPI_TUI_DATA_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/diff.h"
#include "tui/source.h"

struct job;
struct shared_epoch;

struct diff_data {
	int status;              /* 0, or -1 (error says why) */
	char *error;             /* terminal-safe */
	uint32_t a, b;           /* the epochs, as asked */
	struct shared_epoch *se[2]; /* the epochs compared (A's, B's as first asked), or NULL */
	struct diff_epochs de;   /* valid when status is 0: sets on se's views */
	char label[40];          /* the event's column label: "cycles(clock)" */
	size_t n;                /* rows: de.diff.n_rows, read with diff_row_get() */
	size_t n_shown;          /* rows diff_row_shown() */
	uint32_t *path_rank;     /* per path of the rows (pset_row.path): by file name, then path */
	char *proc_name;         /* with a procedure: its name, terminal-safe */
	char *desc_a, *desc_b;   /* the sets' descriptions, terminal-safe */
	char **notes;            /* de.diff.rows_src.notes, terminal-safe */
	size_t n_notes;
	char *unaligned;         /* why instructions are not compared (terminal-safe), or NULL */
	unsigned generation;     /* bumped when x or % remake the rows where they are */
};

/* The last component of an image path. */
const char *diff_data_base(const char *path);


/* Job: the diff of arg's epochs (arg: struct diff_arg *, freed by diff_arg_free). */
void data_load_diff(struct job *job);
void diff_arg_free(void *arg);
void diff_data_free(void *data);

/* What a view asks diff_source for. */
struct diff_req {
	uint32_t a, b;           /* the epochs, in that order */
	const char *procedure;   /* NULL: every procedure; else a spec as lookup.h takes it */
};

/* The job's argument: the request (procedure owned) and the session's state. */
struct diff_arg {
	struct source_env env;
	struct diff_req req;
};
extern const struct tui_source diff_source;
/*
 * Epochs a and b compared as dcpidiff compares them, for the session's
 * event, :force and :normalize; NULL while loading (waiter waits).  A
 * diff of every procedure of the same two epochs already loaded, the
 * other way round (x) or normalised otherwise (%), is made into this one
 * where it is (diff_swap(), diff_renorm(): every number and verdict
 * computed again, the rows not built again; the views showing it reload),
 * not compared again.
 */
const struct diff_data *data_diff(struct sources *s, uint32_t a, uint32_t b, const char *procedure,
				  struct view *waiter);


#endif
