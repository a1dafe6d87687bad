/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/procprof.h - where the samples of an epoch fall: one row
 * per procedure (or per image), with samples per event, percentages and a
 * cumulative percentage, sorted like Figure 1 of the DCPI paper (Anderson
 * et al., "Continuous Profiling: Where Have All the Cycles Gone?", SOSP
 * 1997): dcpiprof.
 *
 *   struct procprof pp;
 *   struct procprof_opts o = PROCPROF_OPTS_INIT;
 *   if (procprof_build(&pp, &view, &o))
 *           ...;
 *   for (size_t r = 0, cum = 0; r < pp.n_rows; r++) {
 *           procprof_name(&pp, r), pp.rows[r].image (index into view.images),
 *           pp.rows[r].proc, procprof_start(&pp, r),
 *           procprof_samples(&pp, r, c) (column c: event pp.events[c]),
 *           procprof_percent(&pp, r, c), the cumulative % from their sum
 *   }
 *   procprof_release(&pp);
 *
 * A row is 16 bytes and its samples 8 bytes a column (a million rows of
 * every image of a server's epoch: 24 MB with one event), so the figures
 * are read through the accessors below, not from the row.
 *
 * Columns are the events in pp.events (the epoch's, or the ones asked
 * for); rows are sorted by the first column, descending, then by the
 * following columns, then by name.  Percentages are of all samples of the
 * event in the epoch (every image, filtered or not), as DCPI did.
 *
 * Samples that no procedure holds are gathered per image into one row
 * with a placeholder name and proc NULL ("[unknown]", or "[no binary]",
 * "[changed binary]", "[no symbols]", "[kernel]" when the image cannot be
 * named; see image_unnamed()).  procprof_build warns once per image that
 * cannot be named, saying why.
 */
#ifndef DCPI_CORE_ANALYSIS_PROCPROF_H
#define DCPI_CORE_ANALYSIS_PROCPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/epochview.h"
#include "present/draw.h"

/* What rows are grouped by (seed 002): images alone, or processes too. */
enum procprof_by {
	PROCPROF_BY_IMAGE,                  /* procedures of images, every process together */
	PROCPROF_BY_COMM,                   /* ... per process name */
	PROCPROF_BY_PID,                    /* ... per thread (the kernel's task id, as perf's "pid") */
	PROCPROF_BY_TGID,                   /* ... per process (thread group) */
};

/* "image", "comm", "pid", "tgid"; procprof_by_lookup returns -1 for others. */
const char *procprof_by_name(enum procprof_by by);
int procprof_by_lookup(const char *name);

struct procprof_opts {
	bool by_image;                      /* one row per image (dcpiprof -i) */
	const enum dcpi_event *events;      /* columns; NULL: every event of the epoch */
	size_t n_events;
	const char *const *images;          /* only these images (path, basename or key); NULL: all */
	size_t n_images;
	bool quiet;                         /* no warnings about images that cannot be named */
	enum procprof_by by;                /* not by image: from the epoch's stacks (-g) */
};

#define PROCPROF_OPTS_INIT { false, NULL, 0, NULL, 0, false, PROCPROF_BY_IMAGE }

struct procprof_row {
	const struct proc *proc;            /* NULL for image rows and unnamed samples */
	uint32_t image;                     /* index into view->images */
	uint32_t group;                     /* by process: index into groups[], else 0 */
};

/* By process: what a row's samples ran in. */
struct procprof_group {
	const char *comm;                   /* its name (in comms[]) */
	uint32_t id;                        /* by pid or tgid: the thread or process, else 0 */
};

struct procprof {
	struct epoch_view *view;
	bool by_image;
	enum procprof_by by;
	char **comms;                       /* by process: the names groups point to (owned) */
	size_t n_comms;
	struct procprof_group *groups;      /* by process */
	size_t n_groups;
	enum dcpi_event events[EVENT__COUNT]; /* columns */
	size_t n_events;
	/*
	 * All samples of the epoch per event (the % base): with damaged or
	 * missing files, the whole the epoch recorded (its readable samples
	 * plus view->unread[]), so that a row's share is its share of the time
	 * sampled; the rows then add up to less than 100%.
	 */
	uint64_t totals[EVENT__COUNT];
	uint64_t shown[EVENT__COUNT];       /* samples in the rows */
	struct procprof_row *rows;
	size_t n_rows;
	uint64_t *counts;                   /* row r's samples of column c: counts[r * n_events + c] */
	uint32_t *name_rank;                /* per row: its name's place in strcmp order, ties alike */
	const char **unnamed;               /* per image: the name of its samples no procedure holds */
	size_t unmatched;                   /* image filters that matched no image */
};

/*
 * Builds the rows.  Returns 0, or -1 (reported) for an unknown event or an
 * image filter that matches no image of the epoch.  Grouping by process
 * reads the epoch's stacks (each sample's thread: dcpirun -g, or
 * --threads), where a sample is charged to the procedure it was taken in;
 * an epoch without them is an error saying so.
 */
int procprof_build(struct procprof *pp, struct epoch_view *v, const struct procprof_opts *o);
void procprof_release(struct procprof *pp);

/* Row r's samples of column col. */
static inline uint64_t procprof_samples(const struct procprof *pp, size_t r, size_t col)
{
	return pp->counts[r * pp->n_events + col];
}

/* Row r's samples of event ev (0 when ev is not a column). */
uint64_t procprof_event_samples(const struct procprof *pp, size_t r, enum dcpi_event ev);

/* Percentage of row r's samples in column col of all samples of that event. */
double procprof_percent(const struct procprof *pp, size_t r, size_t col);

/* Row r's name: the procedure's, a placeholder, or (by image) the image path. */
const char *procprof_name(const struct procprof *pp, size_t r);

/* Row r's procedure's address (0 without one). */
static inline uint64_t procprof_start(const struct procprof *pp, size_t r)
{
	return pp->rows[r].proc ? pp->rows[r].proc->start : 0;
}

/* The image path of row r. */
const char *procprof_image_path(const struct procprof *pp, size_t r);

/*
 * Draws the report as dcpiprof prints it (present/draw.h, a line after
 * another): the header with the totals per event, then one line per row
 * (samples and % per event, cum% (the rows so far, this one included, of
 * all samples of the first column's event), procedure, image).  max_rows 0
 * means all.
 */
void procprof_draw(const struct procprof *pp, struct draw *d, size_t max_rows);

/* The report as JSON (dcpiprof --json): one object. */
struct json_writer;
void procprof_json(const struct procprof *pp, struct json_writer *w, size_t max_rows);

#endif
