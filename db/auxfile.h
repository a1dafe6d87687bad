/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/auxfile.h - an epoch's auxiliary files: whatever else a writer keeps
 * with the epoch's profiles, by name (kallsyms, perf-PID.map, value
 * profiles, stack tables...), as opaque bytes replaced atomically like
 * every file (docs/db-format.md).  The checksummed binary ones are blobs
 * (db/blobfile.h).
 */
#ifndef DCPI_DB_AUXFILE_H
#define DCPI_DB_AUXFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct db;
struct strbuf;

/* True if name is a valid auxiliary file name ([A-Za-z0-9_-][A-Za-z0-9._-]*, not .prof). */
bool db_aux_name_valid(const char *name);
/* Writer: stores an auxiliary file in an epoch. */
int db_aux_store(struct db *db, uint32_t seq, const char *name, const void *data, size_t len);
/* The same for a file holding register values: made with the database's values mode. */
int db_aux_store_values(struct db *db, uint32_t seq, const char *name, const void *data,
			size_t len);
/* Reads an auxiliary file (at most max bytes); 1 if absent. */
int db_aux_load(struct db *db, uint32_t seq, const char *name, size_t max, struct strbuf *out);
/* The names of an epoch's auxiliary files starting with prefix (allocated; free each and *names). */
int db_aux_list(struct db *db, uint32_t seq, const char *prefix, char ***names, size_t *n);
/* Writer: removes an auxiliary file of an epoch (no error if it is gone already). */
int db_aux_remove(struct db *db, uint32_t seq, const char *name);

#endif
