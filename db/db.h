/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/db.h - the profile database: a directory of epochs, each holding an
 * image index and one compact profile per (image, event) or (image, event,
 * pid).  Format and guarantees: docs/db-format.md.
 *
 * Readers open with DB_READ and take no lock; writers open with DB_WRITE,
 * which takes the writer lock (one writer at a time) and deletes orphaned
 * temp files.  Every file is replaced atomically and durably, so readers
 * and restarted writers always see complete files.
 *
 * Errors are reported with errorf() naming the file ("prof.db/000002/
 * 3f1e...cycles.prof: bad payload checksum") and the function returns -1;
 * one bad file never makes the rest of the database unreadable.
 */
#ifndef DCPI_DB_DB_H
#define DCPI_DB_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/event.h"
#include "db/image.h"
#include "db/meta.h"
#include "db/profile.h"

struct strbuf;
struct db_damage_log;

enum db_open_flags {
	DB_READ = 0,
	DB_WRITE = (1 << 0),  /* take the writer lock, clean orphaned temp files */
	DB_CREATE = (1 << 1), /* create the database if it is missing (implies DB_WRITE) */
	DB_NOSYNC = (1 << 2), /* no fsync (benchmarks and tests only: not crash-safe) */
	DB_WAIT = (1 << 3),   /* wait for the writer lock instead of failing */
};

struct db {
	char *path;    /* as given, for messages */
	int dirfd;
	int lockfd;    /* -1 unless opened for writing */
	unsigned flags;
	struct db_damage_log *damage; /* what readers found damaged (db/damage.h) */
	struct db_dirs *dirs; /* directories kept open for the reads that follow (db-int.h) */
	unsigned values_mode; /* files holding register values (db_set_values_mode); 0: 0600 */
};

/* ---- what readers found damaged (db/damage.h reads the log) ------------ */

enum db_damage_kind {
	DB_DAMAGED = 1,   /* failed validation (or could not be read): what it held is not used */
	DB_MISSING,       /* a file the epoch needs is absent (meta; an index for its profiles...) */
	DB_UNVERIFIED,    /* read, but it carries no checksum (written by an older dcpi) */
};

struct db_damage {
	enum db_damage_kind kind;
	uint32_t seq;        /* the epoch the file is in; 0 for a file of the database itself */
	const char *name;    /* its name in the epoch: "KEY.cycles.prof", "meta", "stacks-2" */
	const char *path;    /* as messages name it: "DIR/000002/KEY.cycles.prof" */
	const char *key;     /* the image whose file it is (profiles, value profiles), or NULL */
	const char *why;     /* "corrupt profile: bad payload checksum", "missing" */
};

/*
 * Reports epoch file `name` of epoch seq as kind, why being a printf
 * format ("corrupt profile: %s"): the message "PATH: WHY" (an error, or
 * for DB_UNVERIFIED a warning) and a record.  A file already recorded with
 * the same kind and reason is neither reported nor recorded again.  Returns -1, so
 * that readers can `return db_damage(...)`.
 */
int db_damage(struct db *db, enum db_damage_kind kind, uint32_t seq, const char *name,
	      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * The number of errors db_damage() reported in this process (every
 * database): the report tools tell a report from partial data (exit 2)
 * from a failure (exit 1) by comparing it with error_count().
 */
unsigned db_damage_errors(void);

/* The database directory: opt if set, else $DCPI_DB, else "dcpi.db". */
const char *db_default_path(const char *opt);

/*
 * Opens (and with DB_CREATE creates) the database at path.  Refuses a
 * directory that is not a dcpi database (no FORMAT marker, unless empty and
 * DB_CREATE), an unknown format version, and, with DB_WRITE, a database
 * locked by another writer.  Returns NULL after reporting the error.
 */
struct db *db_open(const char *path, unsigned flags);
void db_close(struct db *db);

/*
 * The mode files holding processes' register values are made with (value
 * profiles, path profiles, burst traces: blob kinds marked `values`):
 * FSIO_VALUES_MODE (0600, the writer's only) unless set, or 0640 (the
 * database's group, as every other file).
 */
void db_set_values_mode(struct db *db, unsigned mode);

/* ---- epochs ---------------------------------------------------------- */

/* True if name is a canonical epoch directory name ("000042"); sets *seq. */
bool db_epoch_dirname_parse(const char *name, uint32_t *seq);

/* The epoch numbers present, sorted ascending (caller frees *seqs). */
int db_epoch_seqs(struct db *db, uint32_t **seqs, size_t *n);

struct db_epoch {
	uint32_t seq;
	bool meta_ok;           /* false: meta unreadable (already reported) */
	struct epoch_meta meta;
};

struct db_epoch_list {
	struct db_epoch *v;
	size_t n, alloc;
};

/*
 * Lists all epochs with their metadata, sorted by number.  An epoch whose
 * meta cannot be read is listed with meta_ok false (and reported).
 */
int db_epochs_list(struct db *db, struct db_epoch_list *out);
void db_epoch_list_release(struct db_epoch_list *l);

/*
 * Resolves an epoch name: a number, a label (its latest epoch), "latest" or
 * "latest~N".  NULL or "" means latest.  Reports and returns -1 if there is
 * no such epoch.
 */
int db_epoch_resolve(struct db *db, const char *name, uint32_t *seq);

/*
 * The epoch named by the `current` file, or a newer one if the database
 * has one (a writer killed after it created an epoch and before it moved
 * `current`), or 0 if there is no epoch (writer's view).
 */
int db_epoch_current(struct db *db, uint32_t *seq);

/*
 * Writer: starts a new epoch.  If the current epoch is still open, its end
 * time is set to now first.  meta supplies everything but seq (assigned and
 * stored back) and start_ns (now, if 0).  The new epoch becomes current.
 */
int db_epoch_create(struct db *db, struct epoch_meta *meta);

/* Writer: sets the end time of an epoch (end_ns 0: now). */
int db_epoch_close(struct db *db, uint32_t seq, int64_t end_ns);

int db_meta_load(struct db *db, uint32_t seq, struct epoch_meta *meta);
/* Writer: replaces the meta of epoch meta->seq. */
int db_meta_store(struct db *db, const struct epoch_meta *meta);

/* ---- images ---------------------------------------------------------- */

/* Loads an epoch's image index (empty if the file is missing). */
int db_images_load(struct db *db, uint32_t seq, struct image_index *idx);
/* Writer: replaces an epoch's image index. */
int db_images_store(struct db *db, uint32_t seq, const struct image_index *idx);

/* ---- profiles -------------------------------------------------------- */

/* Identifies one profile file of an epoch. */
struct db_profile_id {
	char key[PROFILE_KEY_MAX + 1];
	enum dcpi_event event;
	bool per_pid;
	uint32_t pid;
};

/* Fills id (validating key); -1 on an invalid key. */
int db_profile_id_set(struct db_profile_id *id, const char *key, enum dcpi_event event,
		      bool per_pid, uint32_t pid);

/* The file name of a profile (KEY.EVENT[.PID].prof), written into buf. */
void db_profile_name(const struct db_profile_id *id, char *buf, size_t size);

/* True if name is a canonical profile file name (KEY.EVENT[.PID].prof); fills id. */
bool db_profile_name_parse(const char *name, struct db_profile_id *id);

/* Lists the profiles of an epoch, sorted by key, event, pid (caller frees). */
int db_profiles_list(struct db *db, uint32_t seq, struct db_profile_id **ids, size_t *n);

/*
 * Loads and validates a profile into p (replacing its contents).  Returns 0;
 * 1 if the profile does not exist (p empty, no message); -1 if it is
 * unreadable or corrupt (reported with the file name; p empty).
 */
int db_profile_load(struct db *db, uint32_t seq, const struct db_profile_id *id,
		    struct profile *p);

/*
 * Reads a profile's file and validates it as db_profile_load() does (into
 * scratch, which it replaces): the file's bytes, whole, in file, to be
 * decoded again later with profile_decode() (a few bytes a sample, where
 * a decoded profile takes 16).  Same returns; file is empty unless 0.
 */
int db_profile_read(struct db *db, uint32_t seq, const struct db_profile_id *id,
		    struct strbuf *file, struct profile *scratch);

/* Reads and validates only a profile's header (for totals).  Same returns. */
int db_profile_stat(struct db *db, uint32_t seq, const struct db_profile_id *id,
		    struct profile_header *hdr);

/*
 * Writer: merge-add.  The stored profile becomes existing + add (add must be
 * normalised).  A corrupt existing file is renamed NAME.corrupt (reported)
 * and replaced by add.  On failure the stored profile is unchanged and the
 * caller should keep add to retry.
 */
int db_profile_merge(struct db *db, uint32_t seq, const struct db_profile_id *id,
		     const struct profile *add);

/* Writer: replaces a profile with p (normalised). */
int db_profile_store(struct db *db, uint32_t seq, const struct db_profile_id *id,
		     const struct profile *p);

/* Per-image totals of an epoch: samples per event over all processes. */
struct db_image_totals {
	char key[PROFILE_KEY_MAX + 1];
	uint64_t samples[EVENT__COUNT];
};

/*
 * Totals for every image with an aggregate profile, from profile headers
 * (cheap).  Unreadable profiles are reported and counted as 0.  Caller frees.
 */
int db_image_totals(struct db *db, uint32_t seq, struct db_image_totals **v, size_t *n);

/*
 * Like db_image_totals(), calling progress(ctx, done, total) every few
 * profiles; a nonzero return stops early (what was read so far is kept).
 */
typedef int (*db_progress_fn)(void *ctx, size_t done, size_t total);
int db_image_totals_progress(struct db *db, uint32_t seq, struct db_image_totals **v, size_t *n,
			     db_progress_fn progress, void *ctx);

/*
 * Writer: moves epoch file `name` aside as NAME.corrupt (kept for
 * inspection, ignored by readers) with a warning that what it held is lost.
 */
int db_file_quarantine(struct db *db, uint32_t seq, const char *name);

/* The display path of a file in an epoch ("DIR/000001/NAME"), for messages. */
char *db_epoch_file_path(struct db *db, uint32_t seq, const char *name);

#endif
