/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/profile.h - sample counts by file offset, and their compact on-disk
 * encoding (docs/db-format.md, "Profiles").
 *
 * A struct profile is an array of (offset, count) entries.  It is
 * "normalised" when the offsets are strictly increasing and no count is
 * zero; everything stored or returned by the database is normalised.
 * Builders may append entries in any order with profile_add() and call
 * profile_normalize() once.
 *
 * The encode/decode functions are pure (no I/O) so that they can be fuzzed
 * and used on any buffer.
 */
#ifndef DCPI_DB_PROFILE_H
#define DCPI_DB_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/event.h"

struct strbuf;

struct profile_entry {
	uint64_t offset;
	uint64_t count;
};

struct profile {
	struct profile_entry *v;
	size_t n;
	size_t alloc;
};

#define PROFILE_INIT { NULL, 0, 0 }

void profile_init(struct profile *p);
void profile_release(struct profile *p);
/* Appends an entry (any order, duplicates allowed until normalised). */
void profile_add(struct profile *p, uint64_t offset, uint64_t count);
/* Sorts by offset, adds up duplicates and drops zero counts. */
void profile_normalize(struct profile *p);
/* True if p is normalised. */
bool profile_is_normalized(const struct profile *p);
/* Sum of the counts (saturates at UINT64_MAX). */
uint64_t profile_total(const struct profile *p);
/*
 * dst += add, both normalised; dst stays normalised.  Returns -1 (and
 * leaves dst unchanged) if a count would overflow 64 bits.
 */
int profile_merge(struct profile *dst, const struct profile *add);
/* The count at offset (binary search), 0 if absent. */
uint64_t profile_get(const struct profile *p, uint64_t offset);
/* Index of the first entry with offset >= off (binary search). */
size_t profile_lower_bound(const struct profile *p, uint64_t off);

/* Image keys are at most this long (docs/db-format.md "Image keys"). */
#define PROFILE_KEY_MAX 55
#define PROFILE_HEADER_SIZE 128
#define PROFILE_MAGIC "DCPIPROF"
#define PROFILE_VERSION 1

/* What a profile file says about itself. */
struct profile_header {
	char key[PROFILE_KEY_MAX + 1];
	enum dcpi_event event;
	bool per_pid;
	uint32_t pid;
	uint64_t payload_size;
	uint64_t n_entries;
	uint64_t total;
	uint64_t last_offset;
};

/*
 * Encodes p (normalised) as a complete profile file into out (appended).
 * hdr supplies key, event, per_pid and pid; the other fields are computed.
 */
void profile_encode(const struct profile *p, const struct profile_header *hdr,
		    struct strbuf *out);

/*
 * Validates and decodes the 128-byte header at buf.  On failure returns -1
 * and points *why at a static description ("bad magic", ...).
 */
int profile_decode_header(const void *buf, size_t len, struct profile_header *hdr,
			  const char **why);

/*
 * Validates and decodes a whole profile file (header and payload).  On
 * success fills hdr and p (p must be initialised; its contents are
 * replaced).  On failure returns -1, sets *why, and leaves p empty.
 */
int profile_decode(const void *buf, size_t len, struct profile_header *hdr,
		   struct profile *p, const char **why);

#endif
