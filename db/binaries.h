/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/binaries.h - what the database keeps by build-id, shared by all epochs:
 *
 * - snapshots of profiled executables (DIR/binaries/HEX), named by their
 *   build-id in lowercase hex, so that a rebuild does not orphan an old
 *   profile (dcpirun stores them; readers use them when the file at an
 *   image's path has another build-id);
 * - the collector's cached unwind tables (DIR/unwind/HEX);
 * - the analysis' cached static parts (DIR/calc/HEX.MODEL).
 *
 * docs/db-format.md, "Binary snapshots", "Cached unwind tables" and
 * "Cached analyses".
 */
#ifndef DCPI_DB_BINARIES_H
#define DCPI_DB_BINARIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "db/blob.h"
#include "db/fsio.h"

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

/*
 * Cached analyses (DIR/calc/BUILD-ID.MODEL): what the instruction-level
 * analysis of a binary's procedures found that depends only on the binary
 * and the processor model (analysis/calc-cache.h holds the payload's
 * format), so that the next analysis of the same binary need not find it
 * again.  A cache: any process that can write the database directory
 * stores one, reader or writer, without the lock; a missing, stale or
 * damaged one is made again; `dcpidb gc` removes those no epoch uses.
 */
#define DB_CALC_MAGIC "DCPICALC"
#define DB_CALC_VERSION 1
#define DB_CALC_MODEL_MAX 32
/* True if model can name a cached analysis: 1-32 of [a-z0-9-]. */
bool db_calc_model_valid(const char *model);
/*
 * True if name is a cached analysis' file name, "HEX.MODEL"; its build-id
 * is then the first *hex_len bytes (hex_len may be NULL).
 */
bool db_calc_name_valid(const char *name, size_t *hex_len);
/*
 * Stores the analysis of build-id hex on model (a blob's payload, count and
 * flags) as calc/HEX.MODEL, replaced atomically, not fsynced.  Returns 0,
 * or -1 with errno set and no message: a cache that cannot be stored (a
 * database the process cannot write) is only not stored.
 */
int db_calc_store(struct db *db, const char *hex, const char *model, uint32_t count,
		  const void *payload, size_t len);
/*
 * Reads it into buf (replaced): 0, with h describing the blob and the
 * payload at buf->buf + BLOB_HEADER_SIZE; 1 if there is none (no message);
 * -1 if it cannot be read or is damaged, with *why saying why (static or
 * strerror's text; no message).
 */
struct blob_header;
int db_calc_load(struct db *db, const char *hex, const char *model, struct strbuf *buf,
		 struct blob_header *h, const char **why);

/*
 * The same written and read piece by piece, for a payload too big to hold
 * whole (the figures of a million procedures: tens of MB).  Writing: begin,
 * write the payload's pieces, end (the header once the checksum is known,
 * then the file renamed into place); every call -1 with errno and no
 * message, after which end stores nothing.  Reading: begin verifies the
 * file whole (its header, then its payload's checksum, read through once)
 * before a piece of it is believed: 0 (h: the blob), 1 if there is none,
 * -1 with *why; then read the payload's pieces.
 */
struct db_calc_writer {
	struct fsio_cache_file f;
	char name[128];
	uint32_t crc;               /* of the payload so far */
	uint64_t size;
	bool failed;
};

int db_calc_write_begin(struct db *db, const char *hex, const char *model,
			struct db_calc_writer *w);
int db_calc_write(struct db_calc_writer *w, const void *data, size_t len);
/* Ends the writer: stores it (count records) if keep and nothing failed; 0 if it did. */
int db_calc_write_end(struct db_calc_writer *w, uint32_t count, bool keep);

struct db_calc_reader {
	int fd;
	struct blob_header h;
};

int db_calc_read_begin(struct db *db, const char *hex, const char *model,
		       struct db_calc_reader *r, const char **why);
/* Up to len bytes of the payload from its byte at: how many (0 past its end), -1 with *why. */
ssize_t db_calc_read(struct db_calc_reader *r, void *buf, size_t len, uint64_t at,
		     const char **why);
void db_calc_read_end(struct db_calc_reader *r);

/*
 * Memos (analysis/calc-memo.h): files of calc/ named DIGEST.MODEL (64 hex
 * digits) whose payload starts with the varint DB_CALC_MEMO_FORMAT, then
 * the varint sequence number of the epoch whose figures they keep.  A
 * memo is in use while its epoch exists (dcpidb check, gc and retention
 * see to that); each replaces the others of its epoch and model.
 */
#define DB_CALC_MEMO_FORMAT 64
/*
 * Whether calc/NAME (under dirfd, the calc directory) is a memo: 1 with
 * *seq its epoch, 0 if it is not one, -1 if its header cannot be read or
 * is damaged (no message).
 */
int db_calc_memo_epoch(int dirfd, const char *name, uint32_t *seq);
/*
 * Removes the memos of epoch seq on model other than calc/HEX.MODEL (the
 * one just stored): how many.  A memo that cannot be removed stays, without
 * a word (the next store or gc tries again).
 */
size_t db_calc_memo_replace(struct db *db, const char *hex, const char *model, uint32_t seq);


#endif
