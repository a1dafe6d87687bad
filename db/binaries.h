/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/binaries.h - what the database keeps by build-id, shared by all epochs:
 *
 * - snapshots of profiled executables (DIR/binaries/HEX), named by their
 *   build-id in lowercase hex, so that a rebuild does not orphan an old
 *   profile (dcpirun stores them; readers use them when the file at an
 *   image's path has another build-id);
 * - the collector's cached unwind tables (DIR/unwind/HEX).
 *
 * docs/db-format.md, "Binary snapshots" and "Cached unwind tables".
 */
#ifndef DCPI_DB_BINARIES_H
#define DCPI_DB_BINARIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct db;
struct strbuf;

/* True if hex is a valid snapshot name (2-64 lowercase hex digits, even). */
bool db_binary_name_valid(const char *hex);
/* True if the database holds a snapshot of this build-id. */
bool db_binary_exists(struct db *db, const char *hex);
/*
 * Writer: stores data as the snapshot of build-id hex (atomically, like
 * every file).  An existing snapshot is kept: same build-id, same code.
 */
int db_binary_store(struct db *db, const char *hex, const void *data, size_t len);
/* The same with the first len bytes of the open file fd (copied in the kernel). */
int db_binary_store_fd(struct db *db, const char *hex, int fd, uint64_t len);
/*
 * The path of the snapshot of build-id hex ("DIR/binaries/HEX", newly
 * allocated) for libraries that open files by name (libelf, libdwarf), or
 * NULL if the database holds none.
 */
char *db_binary_path(struct db *db, const char *hex);

/*
 * Cached unwind tables (DIR/unwind/HEX): the collector's table of the
 * binary with build-id hex (unwind/utable.h's wire form) in a blob, so that
 * the next run, or dcpid after a restart, need not make it again.  A cache:
 * a missing or damaged one is made again; `dcpidb gc` removes those no
 * epoch uses.  The database never reads the wire form itself.
 */
#define DB_UNWIND_MAGIC "DCPIUTAB"
#define DB_UNWIND_VERSION 1
/* Writer: stores the table of build-id hex (atomically, like every file). */
int db_unwind_store(struct db *db, const char *hex, const void *data, size_t len);
/*
 * Reads the table of build-id hex into out (replaced).  Returns 0; 1 if
 * there is none (no message); -1 if it cannot be read or is damaged
 * (reported, as a warning).
 */
int db_unwind_load(struct db *db, const char *hex, struct strbuf *out);

#endif
