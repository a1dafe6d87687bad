/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/damage.h - what the readers of a database found damaged, missing or
 * unverified, kept as data beside the message: a report built from what
 * was left says so in its own output (the text report's "incomplete"
 * lines, JSON's "incomplete" list, dcpi-tui's rows), and the report tools'
 * exit status says the data was partial (docs/dcpi.7, "EXIT STATUS").
 *
 * Every reader in db/ that refuses a file, or misses one the epoch needs,
 * reports it through db_damage() (db/db.h: the handle keeps the log): the
 * message (errorf for damaged and missing files, a warning for unverified
 * ones) and a record in the database handle's log.  This file reads the
 * log.  Records are kept until db_close(), never moved
 * (the pointers db_damage_list() hands out stay valid); a file found
 * damaged in the same way again is neither reported nor recorded again,
 * and lists name each file once.
 *
 *   const struct db_damage **v;
 *   size_t n = db_damage_list(db, 0, &v);          // every epoch
 *   for (size_t i = 0; i < n; i++)
 *           v[i]->path, db_damage_kind_name(v[i]->kind), v[i]->why
 *   free(v);
 *
 * The log is guarded by a lock: dcpi-tui's worker thread loads files while
 * its views ask.
 */
#ifndef DCPI_DB_DAMAGE_H
#define DCPI_DB_DAMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/db.h"

struct json_writer;

/* "damaged", "missing", "unverified". */
const char *db_damage_kind_name(enum db_damage_kind kind);

/*
 * The records of epoch seq (0: of every epoch) with the kinds in kinds
 * (a mask of 1 << kind; 0: every kind), in the order they were found:
 * *out is an allocated array of pointers that stay valid until
 * db_close() (the caller frees the array only).  Returns the number.
 */
size_t db_damage_list(struct db *db, uint32_t seq, unsigned kinds,
		      const struct db_damage ***out);
#define DB_DAMAGE_PARTIAL ((1u << DB_DAMAGED) | (1u << DB_MISSING))

/* True if epoch seq (0: any) has a damaged or missing file recorded. */
bool db_damage_partial(struct db *db, uint32_t seq);

/*
 * The worst record (damaged, then missing, then unverified) of the files
 * of image key in epoch seq, or NULL: dcpi-tui's status of an image row.
 */
const struct db_damage *db_damage_of_image(struct db *db, uint32_t seq, const char *key);

/*
 * Forgets the records of epoch seq (0: all), for a reader about to read
 * it again (dcpi-tui's refresh): they are no longer listed, but their
 * strings stay valid until db_close().
 */
void db_damage_forget(struct db *db, uint32_t seq);

/*
 * Writes `"incomplete": [{"file", "kind", "why"}...]` (the damaged and
 * missing files of the databases dbs[0..n), NULLs and repeats skipped)
 * and, if any, `"unverified": [...]` (the same fields) as keys of the
 * JSON object being written.  Every report's JSON ends with them (an
 * empty "incomplete": made from complete data).
 */
void db_damage_json(struct db *const *dbs, size_t n, struct json_writer *w);

#endif
