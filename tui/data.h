/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/data.h - the epochs and images views' data, read from the database
 * by jobs (tui/job.h) through their data sources (tui/source.h) and cached
 * for the session.  The analysis views have theirs in tui/data-proc.h and
 * tui/data-diff.h.
 *
 * Each loader is a job run function: it reads the database through db/db.h
 * on the worker thread and leaves a result the views only read.  Keys:
 *   "epochs/"        struct epochs_data     (data_load_epochs, arg: struct db *)
 *   "counts/"        struct epoch_counts    (a background job: the images of every epoch)
 *   "images/SEQ"     struct images_data     (data_load_images, arg: struct data_arg *)
 *   "binaries/SEQ"   struct binary_checks   (a background job: every binary of
 *                                           an images_data verified, hottest first)
 * The images come first (the index and the totals: what the first screen
 * needs); their binaries are verified in the background while keys work,
 * since that opens every one of them (10,000 ELF files on a server).
 */
#ifndef DCPI_TUI_DATA_H
#define DCPI_TUI_DATA_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/db.h"
#include "disasm/image.h"
#include "tui/source.h"

struct candidates;
struct job;
struct sources;
struct view;

/* ---- epochs ------------------------------------------------------------ */

struct epochs_data {
	struct db_epoch_list list;   /* sorted by number */
	bool events[EVENT__COUNT];   /* events some epoch sampled */
};

/* Job: lists the epochs of the database (arg: struct db *, not owned). */
void data_load_epochs(struct job *job);
void epochs_data_free(void *data);

extern const struct tui_source epochs_source;  /* req: NULL */
/* The epochs of the database, or NULL while loading (waiter waits). */
const struct epochs_data *data_epochs(struct sources *s, struct view *waiter);

/* The epoch with this number (ed may be NULL), or NULL. */
const struct db_epoch *epochs_data_find(const struct epochs_data *ed, uint32_t seq);

/*
 * The images of every epoch of ed, counted by a background job (started
 * here, the latest epoch first: a week of epochs has 2,000 image indexes):
 * as far as it got, or NULL if it has not started; *complete once it has
 * finished (waiter is reloaded then).
 */
struct epoch_counts {
	size_t n;                        /* epochs of the epochs_data */
	size_t *n_images;                /* per epoch; SIZE_MAX: its image index is unreadable */
	_Atomic unsigned char *ready;    /* per epoch: n_images[i] is final */
};
const struct epoch_counts *data_epoch_counts(struct sources *s, const struct epochs_data *ed,
					     struct view *waiter, bool *complete);
/* The images of epoch i of counts (NULL: none yet); false while not counted. */
bool epoch_counts_get(const struct epoch_counts *counts, size_t i, size_t *n_images);

/* Adds the names of epochs (ed may be NULL) to completion candidates: latest, numbers, labels, latest~N. */
void epochs_data_complete(const struct epochs_data *ed, struct candidates *c);

/* ---- images ------------------------------------------------------------ */

/*
 * Whether the binary of an image is still the one that was profiled, as
 * disasm/image.h verifies it for the report tools (build-id when the record
 * has one, else size and mtime; the database's binaries/ snapshot first).
 */
enum binary_status {
	BINARY_NA,         /* not a file (kernel, vdso, anon, unknown) */
	BINARY_OK,         /* the binary profiled (or its snapshot) */
	BINARY_MISSING,    /* gone */
	BINARY_REBUILT,    /* exists, but not the code profiled (build-id, size or mtime differ) */
	BINARY_UNREADABLE, /* cannot be read as ELF (permissions, not ELF, I/O error) */
	BINARY_CHECKING,   /* not verified yet (the background job has not reached it) */
};

const char *binary_status_name(enum binary_status s);

/* What a check of an image's binary found. */
struct binary_check {
	enum binary_status status;
	bool stat_ok;         /* size and mtime_ns are those of the file now */
	uint64_t size;
	int64_t mtime_ns;
	char *why;            /* disasm's sentence when not ok (terminal-safe), or NULL */
	char *used;           /* the file verified when not the recorded path (a snapshot), or NULL */
	/*
	 * The image opened to check it, its symbols read while its binary was
	 * open: kept, so that the epoch views that open the same file share it
	 * (disasm/image.h) instead of opening 10,000 binaries again for P.
	 */
	struct image *img;
};

/*
 * Checks an image's binary the way the report tools do (image_open() of
 * disasm/image.h with opts), filling out; release out with
 * binary_check_release().  keep: the image is kept in out, its symbols
 * read.
 */
enum binary_status image_check_binary(const struct db_image *img, const struct image_opts *opts,
				      struct binary_check *out, bool keep);
void binary_check_release(struct binary_check *c);

struct image_row {
	char key[PROFILE_KEY_MAX + 1];
	const struct db_image *img;      /* NULL: profiles without an index entry */
	uint64_t samples[EVENT__COUNT];  /* all processes */
	/* what the check of its binary found: BINARY_CHECKING until it is done */
	enum binary_status status;
	struct binary_check bin;
	bool damaged;                    /* a profile of it is unreadable: its samples are partial */
	char *path;                      /* terminal-safe (display_safe) */
	const char *base;                /* the last component of path */
};

struct images_data {
	uint32_t seq;
	bool meta_ok;
	struct epoch_meta meta;
	struct image_index index;
	struct image_row *rows;
	size_t n;
	uint64_t total[EVENT__COUNT];    /* partial if n_damaged */
	size_t n_damaged;                /* rows with a damaged profile (not counted) */
	bool events[EVENT__COUNT];       /* in the meta, or with samples */
	bool index_ok;                   /* false: the image index is unreadable */
	bool checked;                    /* the rows have their binaries' status */
};

struct data_arg {
	struct db *db;                   /* not owned */
	uint32_t seq;
	const char *debug_dir;           /* where debug files are (NULL: default); not owned */
};

/* Job: loads an epoch's images with their totals (arg: struct data_arg *). */
void data_load_images(struct job *job);
void images_data_free(void *data);

extern const struct tui_source images_source;  /* req: const uint32_t *, the epoch */
/* The images of epoch seq, or NULL while loading (waiter waits). */
const struct images_data *data_images(struct sources *s, uint32_t seq, struct view *waiter);

/* The binaries of an images_data as the background job verifies them. */
struct binary_checks {
	size_t n;                        /* rows of the images_data */
	struct binary_check *v;          /* per row */
	_Atomic unsigned char *ready;    /* per row: v[i] is final */
	atomic_size_t n_done;
};

/*
 * The binaries of id, verified by a background job (started here, the rows
 * of most samples first): as far as it got, or NULL if it has not started;
 * *complete once it has finished: then the rows have their status and bin
 * (main thread), and waiter is reloaded.
 */
const struct binary_checks *data_binaries(struct sources *s, const struct images_data *id,
					  struct view *waiter, bool *complete);

/* The status of row i of id: its own once checked, else as far as checks (may be NULL) got. */
enum binary_status binaries_status(const struct images_data *id,
				   const struct binary_checks *checks, size_t i);

/* The first event in preferred order (cycles, clock, then the others) that ed has, or -1. */
int data_default_event(const bool events[EVENT__COUNT]);

#endif
