/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/paths.h - path profiles: what emulated bursts saw an image's code do,
 * aggregated per epoch and image in constant space, in a blob of kind
 * DCPIPATH named "KEY.paths" (docs/db-format.md, "Path profiles").
 *
 * A burst (collect/emulate.h) stops a sampled thread, reads its whole user
 * state and follows it in an emulator (never the real thread) for up to a
 * few thousand instructions; a window follows it further, from the stop
 * through the thread's next two ordinary samples, B1 and B2, one sampling
 * period apart.  The collector resolves every pc to (image, file offset),
 * as it does for samples, and adds what it saw to the image's profile:
 *
 *  - blocks: each block of code the emulator ran (its translation blocks:
 *    they end at a branch, but also where the emulator chose to cut, so a
 *    block may end at no branch), by (offset, bytes, instructions), with
 *    its executions in bursts (count) and between B1 and B2 of matched
 *    windows (wcount).  A block's count times its instructions are the
 *    instructions followed there; blocks with the same offset but other
 *    bytes are other records.
 *  - edges: from the last instruction of a block to where the next block
 *    began (a conditional branch's two outcomes, a jump's target, a call's
 *    callee, a return's return address, or the fall-through of a block cut
 *    at no branch), with their counts; a next block in another image (a
 *    call through the PLT) is PATHS_ELSEWHERE.
 *  - values: per instruction followed in detail (the first instructions of
 *    each burst), what it wrote: a struct values_profile (db/values.h) whose
 *    record at an offset has samples = the executions seen in detail and a
 *    hot list per general register it wrote (h[r]: the values written to r,
 *    as the instruction left them; VREG_RFLAGS is not used).  Unlike the
 *    epoch's value profiles (registers *before* a sampled instruction),
 *    these are tied to the writer exactly.
 *  - conflicts: memory-ordering conflicts seen in detail, (load offset,
 *    store offset, kind) -> count: the load overlapped a store among the
 *    PATHS_CONFLICT_WINDOW instructions before it without being inside it
 *    (store-to-load forwarding fails), or matched its offset in a 4 KiB
 *    page, in another page (4K aliasing).  Both in this image.
 *  - stops: where bursts ended and why, (offset, reason) -> count; the
 *    offset is the instruction not followed (an instruction the emulator
 *    lacks, a system call) or the one the burst stopped before.
 *  - windows: the matched windows whose B1 is in this image (their number
 *    and instructions summed, and a uniform sample of at most
 *    PATHS_KEEP_WINDOWS of them: B1, B2, the instructions from B1 to B2 in
 *    all images and in this one, the time between the two samples).  The
 *    instructions between two consecutive samples of a thread are one
 *    sampling period's: a block's wcount * insns over the epoch's matched
 *    windows (struct paths_summary) is its instructions per sample period,
 *    time-uniform (unlike burst starts, which over-sample slow code).
 *
 * The epoch's totals (bursts, how they ended, windows matched and not, and
 * why) are meta counters (paths_summary_from_meta).
 *
 * A writer builds a profile with the paths_add_* functions (any order,
 * repeats allowed), paths_profile_normalize() sorts it and adds up
 * repeated keys; encode, decode and merge work on normalized profiles.
 * Encode/decode are pure (fuzzed); db_paths_merge() adds a writer's
 * profile to the epoch's atomically; readers use db_paths_load().
 */
#ifndef DCPI_DB_PATHS_H
#define DCPI_DB_PATHS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/hotlist.h"
#include "db/values.h"

struct db;
struct epoch_meta;
struct strbuf;

#define PATHS_MAGIC "DCPIPATH"
#define PATHS_VERSION 1
/* Epoch file of image KEY: "KEY.paths". */
#define PATHS_SUFFIX ".paths"
/* An edge's target, or a window's B2, in another image (or none). */
#define PATHS_ELSEWHERE UINT64_MAX
/* Matched windows kept per image and epoch (a uniform sample of all). */
#define PATHS_KEEP_WINDOWS 256
/* Instructions back a store may still be in flight for a conflict. */
#define PATHS_CONFLICT_WINDOW 48
/*
 * The slowdown a stop may still leave in the windows the collector keeps:
 * it keeps those past the dip where the rate is within this much of the
 * rate far from the stop (collect/emdip.h), so a rate from windows may be
 * this much low whatever their spread.
 */
#define PATHS_WINDOW_BIAS 0.03
/* The longest block a profile accepts (the emulator's are one or two pages at most). */
#define PATHS_MAX_BLOCK_BYTES 8192

/* Why a burst ended. */
enum paths_end {
	PATHS_END_LIMIT,        /* followed as far as asked */
	PATHS_END_SYSCALL,      /* at a system call (syscall, sysenter, int): not followed */
	PATHS_END_UNSUPPORTED,  /* at an instruction the emulator lacks (AVX, AVX-512...) */
	PATHS_END_UNREADABLE,   /* at a page of the program that could not be read */
	PATHS_END_TIME,         /* the time cap passed */
	PATHS_END_FAULT,        /* a fault the program would take (a bad address, #DE, ud2) */
	PATHS_END__COUNT
};

/* Why a window matched no pair of samples (or was not tried). */
enum paths_miss {
	PATHS_MISS_NO_MATCH,    /* the limit passed before the state of B1 or B2 came */
	PATHS_MISS_SYSCALL,     /* a system call on the way */
	PATHS_MISS_UNSUPPORTED, /* an instruction the emulator lacks on the way */
	PATHS_MISS_UNREADABLE,  /* a page that could not be read (the process exited) */
	PATHS_MISS_FAULT,       /* a fault, or the time cap */
	PATHS_MISS_SAMPLES,     /* the next two samples were not one period apart on one CPU */
	PATHS_MISS_AMBIGUOUS,   /* B1 and B2 had the same state: no telling iterations apart */
	PATHS_MISS_IMPLAUSIBLE, /* more instructions than the core could retire in a period */
	PATHS_MISS_LOST,        /* the worker failed, or the budget ran out before the samples */
	PATHS_MISS__COUNT
};

enum paths_conflict_kind {
	PATHS_STORE_FORWARD,    /* the load overlaps the store without being inside it */
	PATHS_ALIAS_4K,         /* same offset in a 4 KiB page, another page */
	PATHS_CONFLICT__COUNT
};

/* "limit", "syscall", ...; NULL out of range. */
const char *paths_end_name(unsigned reason);
/* "no-match", "syscall", ...; NULL out of range. */
const char *paths_miss_name(unsigned reason);
/* "store-forward", "alias-4k"; NULL out of range. */
const char *paths_conflict_name(unsigned kind);

struct paths_block {
	uint64_t offset;        /* file offset of its first instruction */
	uint32_t bytes;         /* its length, 1..PATHS_MAX_BLOCK_BYTES */
	uint32_t insns;         /* instructions in it, 1..bytes */
	uint64_t count;         /* executions in bursts */
	uint64_t wcount;        /* executions between B1 and B2 of matched windows */
};

struct paths_edge {
	uint64_t from;          /* offset of the last instruction of a block */
	uint64_t to;            /* offset of the next block's first, or PATHS_ELSEWHERE */
	uint64_t count;
};

struct paths_conflict {
	uint64_t load;          /* offset of the load */
	uint64_t store;         /* offset of the store before it */
	uint8_t kind;           /* enum paths_conflict_kind */
	uint64_t count;
};

struct paths_stop {
	uint64_t offset;        /* where bursts ended */
	uint8_t reason;         /* enum paths_end */
	uint64_t count;
};

struct paths_window {
	uint64_t b1;            /* offset of B1 (in this image) */
	uint64_t b2;            /* offset of B2, or PATHS_ELSEWHERE */
	uint64_t insns;         /* instructions from B1 to B2, all images */
	uint64_t here;          /* of them, in this image */
	uint64_t ns;            /* B2's time less B1's */
};

struct paths_profile {
	uint64_t bursts;        /* bursts that followed code here */
	uint64_t insns;         /* instructions followed here */
	uint64_t detailed;      /* of them, followed in detail (values, addresses) */
	struct paths_block *blocks;
	size_t n_blocks, alloc_blocks;
	struct paths_edge *edges;
	size_t n_edges, alloc_edges;
	struct values_profile values;   /* written values by offset (sorted once normalized) */
	struct paths_conflict *conflicts;
	size_t n_conflicts, alloc_conflicts;
	struct paths_stop *stops;
	size_t n_stops, alloc_stops;
	uint64_t windows;       /* matched windows with B1 here */
	uint64_t window_insns;  /* their instructions from B1 to B2, summed */
	struct paths_window *win;       /* a uniform sample of them */
	size_t n_win, alloc_win;
};

void paths_profile_init(struct paths_profile *p);
void paths_profile_release(struct paths_profile *p);
/* True if p holds nothing at all. */
bool paths_profile_empty(const struct paths_profile *p);

/* Builders: records in any order, repeats added up by paths_profile_normalize(). */
void paths_add_block(struct paths_profile *p, uint64_t offset, uint32_t bytes, uint32_t insns,
		     uint64_t count, uint64_t wcount);
void paths_add_edge(struct paths_profile *p, uint64_t from, uint64_t to, uint64_t count);
void paths_add_conflict(struct paths_profile *p, uint64_t load, uint64_t store,
			enum paths_conflict_kind kind, uint64_t count);
void paths_add_stop(struct paths_profile *p, uint64_t offset, enum paths_end reason,
		    uint64_t count);
/*
 * A matched window with B1 here: counted, and kept in the uniform sample
 * (reservoir sampling with rng).
 */
void paths_add_window(struct paths_profile *p, const struct paths_window *w,
		      struct hotlist_rng *rng);

/*
 * Sorts every list by its key (blocks by offset, bytes and instructions;
 * edges by from, to; conflicts by load, store, kind; stops by offset,
 * reason), adds up records with equal keys (counts saturate), and sorts
 * the values (their offsets must be distinct already).
 */
void paths_profile_normalize(struct paths_profile *p);

/*
 * dst += src, both normalized: counts added, value hot lists merged
 * (values_merge), windows resampled to PATHS_KEEP_WINDOWS.
 */
void paths_merge(struct paths_profile *dst, const struct paths_profile *src,
		 struct hotlist_rng *rng);

/*
 * Lookups on a normalized profile: the index of the first record whose key
 * (block offset, edge from, conflict load, stop offset) is at least key;
 * records [i, j) of a procedure [lo, hi) are lower_bound(lo)..lower_bound(hi).
 */
size_t paths_blocks_lower_bound(const struct paths_profile *p, uint64_t key);
size_t paths_edges_lower_bound(const struct paths_profile *p, uint64_t key);
size_t paths_conflicts_lower_bound(const struct paths_profile *p, uint64_t key);
size_t paths_stops_lower_bound(const struct paths_profile *p, uint64_t key);

/* Appends the payload of a normalized profile to out; returns the blob's count (blocks). */
uint32_t paths_encode(const struct paths_profile *p, struct strbuf *out);
/* Decodes a payload into out (replaced); 0, or -1 with *why set (out then empty). */
int paths_decode(const void *payload, size_t len, uint32_t count, struct paths_profile *out,
		 const char **why);

/*
 * Reads image key's path profile of epoch seq into out: 0; 1 if there is
 * none (out empty, no message); -1 on an error (reported, the file named).
 */
int db_paths_load(struct db *db, uint32_t seq, const char *key, struct paths_profile *out);
/*
 * Writer: merges add (normalized) into image key's path profile of epoch
 * seq, atomically (an invalid file is quarantined and replaced).  Returns
 * 0, or -1 after reporting (the caller keeps add and retries).
 */
int db_paths_merge(struct db *db, uint32_t seq, const char *key, const struct paths_profile *add);

/* ---- the epoch's totals (meta counters "paths_...", docs/db-format.md) ---- */

struct paths_summary {
	uint64_t bursts;                        /* emulated bursts */
	uint64_t insns;                         /* instructions they followed */
	uint64_t ends[PATHS_END__COUNT];        /* bursts by why they ended */
	uint64_t lost;                          /* bursts lost: the worker failed or hung */
	uint64_t windows;                       /* windows matched */
	uint64_t window_insns;                  /* their instructions from B1 to B2 */
	uint64_t misses[PATHS_MISS__COUNT];     /* windows not matched, by why */
};

/* dst += src (saturating). */
void paths_summary_add(struct paths_summary *dst, const struct paths_summary *src);
/* The summary an epoch's meta records (zeros where it has none). */
void paths_summary_from_meta(const struct epoch_meta *m, struct paths_summary *s);
/* Records s in m's counters (replacing them). */
void paths_summary_to_meta(const struct paths_summary *s, struct epoch_meta *m);

#endif
