/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/bursts.h - burst traces: a few hundred instructions of a sampled
 * thread followed one single step at a time (seed 004's vprof and
 * vreplay), each step's place and registers, kept per epoch in a blob of
 * kind DCPIBRST named `bursts` (docs/db-format.md, "Burst traces").
 *
 * A step is the instruction about to run (an image and file offset, or
 * none when its pc was in no known image) and the registers before it ran
 * (the format's order of db/values.h).  What an instruction wrote is in
 * the next step's registers; what it loaded or stored is where its
 * address registers point (the reader decodes it).  The collector keeps at
 * most a bounded number of bursts per epoch: a uniform sample of all it
 * took (`seen` counts them), so an epoch of any length stays small.
 *
 * Encode/decode are pure (fuzzed); db_bursts_merge() adds a writer's
 * bursts to the epoch's, resampled to the bound.
 */
#ifndef DCPI_DB_BURSTS_H
#define DCPI_DB_BURSTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/hotlist.h"
#include "db/values.h"

struct db;
struct strbuf;

#define BURSTS_MAGIC "DCPIBRST"
#define BURSTS_VERSION 1
#define BURSTS_FILE "bursts"
/* Bursts an epoch keeps at most (a uniform sample of those taken). */
#define BURSTS_KEEP 256
/* Steps a burst holds at most. */
#define BURSTS_MAX_STEPS 4096
/* An image index meaning "in no known image" (the offset is then the pc). */
#define BURSTS_NO_IMAGE UINT32_MAX

struct burst_step {
	uint32_t image;                 /* index into the set's keys, or BURSTS_NO_IMAGE */
	uint64_t offset;                /* file offset (as in profiles), or the pc */
	uint64_t regs[VALUES_NREGS];    /* before the instruction ran */
};

struct burst_trace {
	uint32_t tid;                   /* the thread followed (informative) */
	struct burst_step *steps;       /* owned */
	size_t n;
};

struct burst_set {
	char **keys;                    /* image keys (owned) */
	size_t n_keys;
	struct burst_trace *v;          /* owned */
	size_t n, alloc;
	uint64_t seen;                  /* bursts taken in all: v is a uniform sample of them */
};

void burst_set_init(struct burst_set *s);
void burst_set_release(struct burst_set *s);

/* The index of image key in s->keys, added if new. */
uint32_t burst_set_key(struct burst_set *s, const char *key);

/* Appends an empty trace for thread tid and returns it (valid until the next append). */
struct burst_trace *burst_set_add(struct burst_set *s, uint32_t tid);
/* Appends a step to t. */
void burst_trace_push(struct burst_trace *t, const struct burst_step *step);

/*
 * dst += src (their keys mapped), then a uniform sample of at most keep
 * traces kept (rng decides); dst->seen adds src->seen.
 */
void burst_set_merge(struct burst_set *dst, const struct burst_set *src, size_t keep,
		     struct hotlist_rng *rng);

/* Appends the payload of s to out; returns its trace count. */
uint32_t bursts_encode(const struct burst_set *s, struct strbuf *out);
/* Decodes a payload of count traces into out (replaced); 0, or -1 with *why. */
int bursts_decode(const void *payload, size_t len, uint32_t count, struct burst_set *out,
		  const char **why);

/* Reads epoch seq's bursts: 0; 1 if none (out empty); -1 if unreadable (reported). */
int db_bursts_load(struct db *db, uint32_t seq, struct burst_set *out);
/* Writer: merges add into epoch seq's bursts (atomically; an invalid file is set aside). */
int db_bursts_merge(struct db *db, uint32_t seq, const struct burst_set *add);

#endif
