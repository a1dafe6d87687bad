/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/db-int.h - what the files of the database (db.c, auxfile.c, binaries.c,
 * damage.c, damage-log.c, and the checker and upkeep) share, and nothing
 * outside db/ uses: the names in its directories, and the helpers that
 * every access goes through.
 */
#ifndef DCPI_DB_DB_INT_H
#define DCPI_DB_DB_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/db.h"

struct db;
struct strbuf;

/* Files of an epoch directory (docs/db-format.md). */
#define META_NAME "meta"
#define IMAGES_NAME "images"
#define PROFILE_SUFFIX ".prof"
#define CORRUPT_SUFFIX ".corrupt"

/* The folders of the database directory that hold files by build-id (db/binaries.h). */
#define DB_BINARIES_DIR "binaries"
#define DB_UNWIND_DIR "unwind"
#define DB_CALC_DIR "calc"

/* BUG() unless db was opened for writing. */
void db_need_writer(struct db *db);

/* True unless db was opened DB_NOSYNC: writes are made durable (fsync). */
bool db_sync_enabled(const struct db *db);

/* A read-only fd of epoch seq's directory; -1 (reported) if it cannot be opened. */
int db_open_epoch(struct db *db, uint32_t seq);

/*
 * The same kept open for a second, for the reads that follow (the 10,000
 * profiles of an epoch read one after another, on several threads): an fd
 * borrowed until db_dir_put().  db_epoch_dir(): -1 (reported) as
 * db_open_epoch(); db_subdir(): a folder of the database (binaries/...),
 * -1 (with errno, no message) if there is none, what is believed for a
 * second too.
 */
int db_epoch_dir(struct db *db, uint32_t seq);
int db_subdir(struct db *db, const char *name);
void db_dir_put(struct db *db, int fd);
/* Forgets the directories kept (every one closed): for a writer that changed them. */
void db_dirs_forget(struct db *db);
/* Closes them for good (db_close()). */
void db_dirs_release(struct db *db);

/*
 * Reads epoch file name (at most max bytes) into out: 0; 1 if it does not
 * exist; -1 if it cannot be read (reported and recorded as damaged,
 * db/damage.h).
 */
int db_epoch_read(struct db *db, uint32_t seq, const char *name, size_t max, struct strbuf *out);

/*
 * The names in epoch seq's directory that keep(name, ctx) accepts, in the
 * directory's order (allocated: free each and *names); -1 (reported) if
 * the epoch cannot be read.
 */
int db_epoch_names(struct db *db, uint32_t seq, bool (*keep)(const char *name, const void *ctx),
		   const void *ctx, char ***names, size_t *n);

/*
 * The log of what readers found damaged (db_damage(), db/db.h), one per
 * handle, made when first asked for; db/damage.c reads it under its lock.
 */
struct db_damage_entry {
	struct db_damage d;
	bool forgotten;         /* db_damage_forget(): no longer listed */
};

struct db_damage_log {
	pthread_mutex_t lock;
	struct db_damage_entry **v;   /* pointers: entries never move */
	size_t n, alloc;
};

/* The handle's log (made if it has none yet). */
struct db_damage_log *db_damage_log(struct db *db);

/* Frees the handle's log (db_close()). */
void db_damage_release(struct db *db);

#endif
