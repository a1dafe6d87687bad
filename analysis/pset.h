/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/pset.h - profile sets, and rows matched across them: the
 * common ground of dcpistats (setstats.h) and dcpidiff (diff.h).
 *
 * A set is what one SET argument of those tools names (pset_open):
 *
 *   DIR          a directory holding a dcpi database: the whole database,
 *                every epoch summed (one machine's profile, say)
 *   DIR:EPOCH    one epoch of the database in DIR (EPOCH as below)
 *   EPOCH        an epoch of the -d database: a number, a label, latest,
 *                latest~N
 *
 * A directory wins over an epoch of the same name; DIR:EPOCH says which
 * epoch of which database when that matters.
 *
 *   struct pset_ctx ctx = PSET_CTX_INIT;   // ctx.db_path = -d, ctx.view_opts
 *   struct pset a, b;
 *   if (pset_open(&a, &ctx, "before") || pset_open(&b, &ctx, "after.db"))
 *           ...;                                  // reported
 *   struct pset *sets[] = { &a, &b };
 *   struct pset_rows t;
 *   if (pset_rows_build(&t, sets, 2, EVENT_CYCLES, PSET_PROCEDURES))
 *           ...;
 *   for (size_t r = 0; r < t.n_rows; r++)
 *           t.rows[r].name, t.rows[r].image, t.rows[r].counts[0], [1]
 *   pset_rows_release(&t);
 *   pset_release(&a); pset_release(&b); pset_ctx_release(&ctx);
 *
 * Rows are matched across sets by what they are, not by where they sit:
 * images by path (anonymous memory by command name, since pids change from
 * run to run), procedures by image and name (the Nth procedure of a name
 * in an image, by address, for the rare names that repeat), instructions
 * by image build and address.  So two builds of one program still compare
 * procedure by procedure; such images are flagged (builds_differ) and
 * listed in notes.  Instructions only align within one build.
 */
#ifndef DCPI_CORE_ANALYSIS_PSET_H
#define DCPI_CORE_ANALYSIS_PSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/epochview.h"

struct json_writer;

/* Where set arguments are resolved; shared by all sets of a command. */
struct pset_ctx {
	const char *db_path;              /* -d; NULL: $DCPI_DB, else ./dcpi.db */
	struct epoch_view_opts view_opts; /* --force, --debug-dir */
	struct db *db;                    /* the -d database, opened on first use */
};

#define PSET_CTX_INIT { NULL, { false, NULL }, NULL }

/* Closes the database the context opened. */
void pset_ctx_release(struct pset_ctx *ctx);

struct pset_epoch {
	struct db *db;                    /* borrowed: the context's or the set's */
	struct epoch_view *view;          /* the set's own, or borrowed (pset_borrow_epoch) */
	bool own;
};

struct pset {
	char *spec;                       /* the argument, display-safe */
	char *desc;                       /* "epoch 3 (before) of prof.db", "prof.db (epochs 1-4)" */
	struct db *own_db;                /* opened for DIR and DIR:EPOCH, else NULL */
	struct pset_epoch *epochs;        /* the epochs summed (one for an epoch) */
	size_t n_epochs;
};

/*
 * Opens the set spec names (see above).  Returns 0, or -1 after reporting
 * (no such epoch, not a database, a database without epochs).  An epoch of
 * a whole database that cannot be opened is reported and left out.
 */
int pset_open(struct pset *s, struct pset_ctx *ctx, const char *spec);

/* Opens epoch seq of an open database (borrowed) as a set. */
int pset_open_epoch(struct pset *s, struct db *db, uint32_t seq, const struct epoch_view_opts *o);
/*
 * An epoch view open already (borrowed: it outlives the set, and what is
 * made of the set) as a set: dcpi-tui's way, the views its other data
 * read, so that a diff of a million rows does not read the epochs again.
 */
void pset_borrow_epoch(struct pset *s, struct epoch_view *v);

void pset_release(struct pset *s);

/*
 * Writes the "incomplete" (and "unverified") lists of the databases the
 * sets read (db_damage_json()) into the JSON object being written.
 */
void pset_damage_json(struct pset *const *sets, size_t n, struct json_writer *w);

/* The samples of ev in the set (every image, every epoch). */
uint64_t pset_total(const struct pset *s, enum dcpi_event ev);

/*
 * The event reports use when none is asked for: the first event of the
 * first set (its first epoch's metadata order) with samples; cycles if no
 * set has any.
 */
enum dcpi_event pset_default_event(struct pset *const *sets, size_t n);

/*
 * The label of ev's column: "cycles", or "cycles(clock)" when the first set
 * that sampled it counted clock instead (epoch_view_event_label).
 */
const char *pset_event_label(struct pset *const *sets, size_t n, enum dcpi_event ev, char *buf,
			     size_t size);
/* The event really counted for ev by the first set that sampled it. */
enum dcpi_event pset_event_used(struct pset *const *sets, size_t n, enum dcpi_event ev);

/*
 * How per-set counts are made comparable:
 *   NONE    as counted;
 *   TOTAL   scaled by each set's total samples (to the mean total): shares;
 *   PERIOD  scaled by each set's mean sampling period (to the mean period):
 *           each sample stands for PERIOD events or ns, so this compares
 *           estimated event counts or CPU time, for runs of the same work.
 */
enum pset_norm { PSET_NORM_NONE, PSET_NORM_TOTAL, PSET_NORM_PERIOD };

const char *pset_norm_name(enum pset_norm norm);
/* "none", "total" or "period" -> norm; -1 if unknown. */
int pset_norm_lookup(const char *name);

/*
 * The factor f[i] per set such that counts[i] * f[i] are comparable under
 * norm (totals[i] are the sets' totals of ev).  For PERIOD the periods are
 * taken in ns when every set's epochs record ns (the clock event), else in
 * cycles (clock periods converted with the epoch's MHz).  A set without
 * samples gets f = 0 for TOTAL.  Returns 0, or -1 (reported) when a period
 * is unknown.
 */
int pset_norm_factors(struct pset *const *sets, size_t n, enum dcpi_event ev,
		      enum pset_norm norm, const uint64_t *totals, double *f);

/* ---- rows across sets --------------------------------------------------- */

enum pset_level { PSET_IMAGES, PSET_PROCEDURES, PSET_INSTRUCTIONS };

const char *pset_level_name(enum pset_level level);

/*
 * A row: 48 bytes, its counts in the rows' array; names are the symbol
 * tables' (the sets' epochs hold them) where they need no making up.
 */
struct pset_row {
	const char *name;     /* procedure (or placeholder), image path (images), PROC+0xOFF */
	const char *image;    /* image path (as the first set holding it has it) */
	uint64_t addr;        /* procedure start, instruction address */
	const char *text;     /* instruction text, or NULL */
	uint64_t *counts;     /* samples of the event per set */
	uint32_t path;        /* image's place among the rows' paths (the same path, the same place) */
	bool has_addr;        /* false for images, placeholders and unmappable offsets */
	bool builds_differ;   /* the image is not the same binary in every set holding it */
};

struct pset_rows {
	enum dcpi_event event;
	enum pset_level level;
	size_t n_sets;
	uint64_t *totals;         /* samples of the event per set */
	struct pset_row *rows;    /* in the order first seen (procedures: image by image) */
	size_t n_rows;
	uint64_t *counts;         /* the rows' counts, n_sets a row */
	/* notes: one line per image that differs between sets */
	char **notes;
	size_t n_notes;
	/* pset_rows_build_proc only */
	struct pset_row *proc;    /* the procedure itself: its samples per set */
	char *unaligned;          /* why the rows are not instructions (different builds), or NULL */
	bool no_code;             /* aligned, but no code to show: sampled addresses only */
	/* private */
	void *priv;
};

/*
 * Builds rows of every image, procedure or sampled instruction of the sets
 * (PROC+0xOFF names instructions).  Warns once per image that cannot be
 * named.  Returns 0 (-1 is reserved for failures; none today).  The rows
 * point into the sets' epochs (procedure names): release them first.
 */
int pset_rows_build(struct pset_rows *t, struct pset *const *sets, size_t n, enum dcpi_event ev,
		    enum pset_level level);

/*
 * Rows of the instructions of one procedure (spec as lookup.h takes it),
 * found in each epoch of each set.  When every set that has it has the
 * same build and range, rows are its instructions by address (every
 * instruction when the code can be decoded, else the sampled addresses,
 * with no_code set).  Otherwise the builds differ: instructions cannot be
 * aligned, the rows are the procedure alone and unaligned says why.  t->proc
 * is the procedure in both cases.  Returns -1 (reported) if no set has the
 * procedure or an epoch has several that match.
 */
int pset_rows_build_proc(struct pset_rows *t, struct pset *const *sets, size_t n,
			 enum dcpi_event ev, const char *spec);

void pset_rows_release(struct pset_rows *t);

/* How many image paths the rows name (pset_row.path is below it), and each. */
size_t pset_rows_n_paths(const struct pset_rows *t);
const char *pset_rows_path(const struct pset_rows *t, uint32_t path);

#endif
