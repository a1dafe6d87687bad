/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/ladder.h - the machine's load latencies, measured: a pointer
 * chase through a working set that fits each level of the cache hierarchy
 * (16 KiB: L1; 256 KiB: L2; 4 MiB: L3) and through lines flushed from all
 * of them (memory), in nanoseconds a load.  With --values the collector
 * records them in the epoch's meta (counters lat_l1_ps, lat_l2_ps,
 * lat_l3_ps, lat_mem_ps: picoseconds), and the analysis compares a load's
 * measured cycles an execution with them (docs/analysis.md, "Load
 * latencies").
 *
 * The chase visits the lines in a random cyclic order, so that the
 * prefetchers do not help; each load's address is the previous load's
 * value.  The memory level's lines are 512 bytes apart in one huge page
 * (no page walks: a miss's own DTLB cost is not in it) and flushed
 * (clflush) before each round.  The time per load is the least of eleven
 * rounds of 4000 loads by the thread's CPU clock (time the thread did not
 * run is not in it: other load on the machine only adds).
 * Cost: about 30 ms and 6 MiB briefly, once per run (dcpirun) or epoch
 * (dcpid); a 64 MiB working set for memory took 0.4 s of page faults in
 * this VM.
 */
#ifndef DCPI_COLLECT_LADDER_H
#define DCPI_COLLECT_LADDER_H

#include <stdint.h>

struct epoch_meta;

enum { LADDER_L1, LADDER_L2, LADDER_L3, LADDER_MEM, LADDER__COUNT };

/* Counter names in the epoch's meta ("lat_l1_ps" ...). */
extern const char *const ladder_counter[LADDER__COUNT];

struct ladder {
	double ns[LADDER__COUNT];   /* per load; 0 if not measured */
	int64_t cost_ns;            /* the caller's CPU time it took */
};

/* Measures it on the calling thread.  Returns 0, or -1 (no memory). */
int ladder_measure(struct ladder *l);

/* Records it in m (counters, replacing any). */
void ladder_to_meta(const struct ladder *l, struct epoch_meta *m);

#endif
