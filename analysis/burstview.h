/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/burstview.h - what the epoch's burst traces (db/bursts.h) say
 * about one procedure: how often each instruction was stepped, the exact
 * outcomes of its conditional branches, and the memory-ordering conflicts
 * of its loads (seed 004's vreplay): a load that reads bytes an earlier
 * store wrote only in part (store-to-load forwarding fails: the load waits
 * for the store to retire), and a load whose address matches an earlier
 * store's in the low 12 bits but not in the page (4K aliasing: the core
 * takes it for a dependence and waits).
 *
 * Each step holds the registers before its instruction ran, so the
 * instruction's memory address is computed from them (decoded here, with
 * the image's decoder).  A store is looked for among the BURSTVIEW_WINDOW
 * instructions before the load in the same burst, in the same image (a
 * store in another image is not decoded).
 */
#ifndef DCPI_ANALYSIS_BURSTVIEW_H
#define DCPI_ANALYSIS_BURSTVIEW_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/listing.h"
#include "db/bursts.h"

/* Instructions back a store may still be in flight (a store queue of ~64). */
#define BURSTVIEW_WINDOW 48

enum burst_conflict_kind {
	BURST_STORE_FORWARD,    /* the load overlaps the store without being inside it */
	BURST_ALIAS_4K,         /* same offset in the page, another page */
};

struct burst_conflict {
	size_t load;            /* listing index of the load */
	uint64_t store;         /* the store's address (ELF virtual address, same image) */
	enum burst_conflict_kind kind;
	uint64_t count;         /* times seen */
};

struct burstview {
	size_t bursts;          /* bursts that stepped through the procedure */
	uint64_t steps;         /* steps inside it */
	uint64_t *stepped;      /* per listing instruction: times stepped */
	uint64_t *taken, *fallthrough;  /* per listing instruction (conditional jumps): outcomes */
	uint64_t *loads;        /* per listing instruction: loads with an address computed */
	struct burst_conflict *conflicts;
	size_t n_conflicts, alloc_conflicts;
	uint64_t seen;          /* bursts of the epoch in all (of which the traces are a sample) */
};

/* Builds the view of listing l from the epoch's bursts (set may be NULL or empty). */
void burstview_build(struct burstview *bv, const struct listing *l, const struct burst_set *set);
void burstview_release(struct burstview *bv);

#endif
