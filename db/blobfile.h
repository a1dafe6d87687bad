/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/blobfile.h - an epoch's blob files: auxiliary files (db/auxfile.h)
 * holding a blob (db/blob.h's checksummed container).  Through the
 * database: atomic durable replacement, the writer lock, and the
 * quarantine of a file that fails validation when a writer merges into it
 * (NAME.corrupt, as for profiles).
 */
#ifndef DCPI_DB_BLOBFILE_H
#define DCPI_DB_BLOBFILE_H

#include <stddef.h>
#include <stdint.h>

#include "db/blob.h"

struct db;
struct strbuf;

/*
 * Writer: stores a blob as epoch file `name` (a valid auxiliary file name,
 * db_aux_name_valid) atomically and durably.
 */
int db_blob_store(struct db *db, uint32_t seq, const char *name, const char *magic,
		  uint16_t version, uint16_t flags, uint32_t count, const void *payload,
		  size_t len);

/*
 * Reads and validates epoch file `name` into buf (replaced); on success h
 * describes it and the payload is buf->buf + BLOB_HEADER_SIZE.  Returns 0;
 * 1 if the file does not exist (no message); -1 on an I/O error; -2 if the
 * file is invalid ("PATH: corrupt WHAT: WHY", what NULL saying "blob").
 * Both failures are reported and recorded as damaged (db/damage.h).
 */
int db_blob_load(struct db *db, uint32_t seq, const char *name, const char *magic,
		 uint16_t max_version, const char *what, struct strbuf *buf,
		 struct blob_header *h);

/*
 * Writer: moves an invalid epoch file aside (NAME.corrupt) with a warning,
 * so that a merge can start afresh; what it held is lost, and said so.
 */
int db_blob_quarantine(struct db *db, uint32_t seq, const char *name);

/*
 * Writer: read-modify-write of a blob under the writer lock.  Loads `name`
 * (an invalid file is quarantined and treated as absent), calls
 * merge(ctx, old_payload, old_len, old_header, out) with old_payload NULL
 * when there was none; merge appends the new payload to out, sets *count,
 * and returns 0 (or -1 with a message, which aborts and leaves the file
 * untouched).  The result is stored atomically with the given version and
 * flags.
 */
typedef int (*blob_merge_fn)(void *ctx, const void *old_payload, size_t old_len,
			     const struct blob_header *old, struct strbuf *out, uint32_t *count);
int db_blob_merge(struct db *db, uint32_t seq, const char *name, const char *magic,
		  uint16_t version, uint16_t flags, blob_merge_fn merge, void *ctx);

/* ---- a kind decoded whole --------------------------------------------------- */

/* A kind of blob file whose payload its decoder reads whole (value profiles, bursts). */
struct blob_kind {
	const char *magic;
	uint16_t version;       /* written, and the highest read */
	const char *what;       /* for messages: "value profile" */
	bool values;            /* holds register values: stored with the values mode (db.h) */
};

/*
 * The kind's decoder: fills out from a payload of count records; on
 * failure returns -1 with *why.
 */
typedef int (*blob_decode_fn)(void *out, const void *payload, size_t len, uint32_t count,
			      const char **why);

/*
 * db_blob_load, then decode into out.  Returns 0; 1 if the file does not
 * exist; -1 if it cannot be read or is invalid (reported and recorded as
 * damaged; a payload the decoder refuses as "DIR/000001/NAME: invalid
 * WHAT: WHY").
 */
int db_blob_read(struct db *db, uint32_t seq, const char *name, const struct blob_kind *k,
		 blob_decode_fn decode, void *out);

/*
 * Writer: db_blob_merge into a file of kind k whose payload merge decodes:
 * when the decoder refuses it, merge sets *invalid to why and fails; the
 * file is then set aside (db_blob_quarantine, with a warning "WHAT 'PATH':
 * WHY" unless k->what is NULL) and the merge starts afresh.
 */
int db_blob_update(struct db *db, uint32_t seq, const char *name, const struct blob_kind *k,
		   uint16_t flags, blob_merge_fn merge, void *ctx, const char **invalid);

/* ---- a kind decoded whole and merged with a seeded resampler ---------------- */

struct hotlist_rng;

/*
 * A decoded type of such a kind (value profiles, path profiles, bursts):
 * its operations on objects of size bytes.  decode replaces out (empty on
 * failure); merge adds src into dst (both in the kind's normal form),
 * drawing from rng; encode appends the payload and returns its count.
 */
struct blob_type {
	struct blob_kind kind;
	size_t size;
	void (*init)(void *p);
	void (*release)(void *p);
	blob_decode_fn decode;
	void (*merge)(void *dst, const void *src, struct hotlist_rng *rng);
	uint32_t (*encode)(const void *p, struct strbuf *out);
};

/* t->release(out), then db_blob_read of file `name` into out. */
int db_blob_type_load(struct db *db, uint32_t seq, const char *name, const struct blob_type *t,
		      void *out);

/*
 * Writer: merges add into file `name` of type t (db_blob_update, flags 0):
 * the old payload decoded, add merged in with an rng seeded with seed,
 * the result encoded.  Returns 0, or -1 after reporting.
 */
int db_blob_type_merge(struct db *db, uint32_t seq, const char *name, const struct blob_type *t,
		       const void *add, uint64_t seed);

#endif
