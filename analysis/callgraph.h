/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/callgraph.h - the call graph of an epoch from its sampled
 * stacks, in the form of gprof's (seed 003): per procedure its own samples
 * (self), the samples of the procedures it called (descendants), and for
 * each parent and child the share spent on behalf of that arc; cycles of
 * the graph (mutual recursion) as units; and the flat profile.
 *
 * Sampled stacks make the arcs exact, where gprof had to divide a child's
 * time among its parents in proportion to call counts: a sample counts
 * once for every procedure on its stack (total), once for every distinct
 * arc on it, and for its leaf's self.  What sampling cannot give is how
 * many calls there were: call counts are shown as unknown unless some
 * measurement provides them (callgraph_call_counts(), the hook for the
 * stopwatch's exact counts).
 *
 *   struct callgraph g;
 *   struct callgraph_opts o = CALLGRAPH_OPTS_INIT;
 *   o.event = EVENT_CYCLES;
 *   if (callgraph_build(&g, &sv, &o) == 0) {
 *           callgraph_draw(&g, &draw, NULL, 0);
 *           callgraph_release(&g);
 *   }
 */
#ifndef DCPI_ANALYSIS_CALLGRAPH_H
#define DCPI_ANALYSIS_CALLGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/stackview.h"

/* Which clock samples a listing counts (seed 003's three listings). */
enum cg_ticks {
	CG_TICKS_ALL,           /* every sample; delayed ticks charged to the caller */
	CG_TICKS_PROMPT,        /* samples taken where they happened */
	CG_TICKS_DELAYED,       /* delayed ticks only, charged to the caller */
};

struct callgraph_opts {
	enum dcpi_event event;
	enum cg_ticks ticks;
	/* Only samples of these threads (0: any); a comm of NULL: any. */
	uint32_t tgid, tid;
	const char *comm;
};

#define CALLGRAPH_OPTS_INIT { EVENT_CYCLES, CG_TICKS_ALL, 0, 0, NULL }

struct cg_arc {
	uint32_t parent, child;         /* nodes */
	uint64_t samples;               /* the child's samples (with descendants) on behalf of the parent */
	uint64_t self;                  /* ... of which the child's own */
	uint64_t calls;                 /* measured calls (0: unknown) */
};

struct cg_entry {
	uint32_t node;                  /* stack view node, or UINT32_MAX for a cycle as a whole */
	uint32_t cycle;                 /* its cycle's number, 0 if none */
	uint64_t self, total;           /* samples in it, and with its descendants */
	uint64_t delayed;               /* of its self: delayed ticks given to it as the caller */
	uint32_t index;                 /* gprof's [index]: 1 = the most total time */
	bool calls_measured;            /* the epoch's stopwatch results count its calls */
	uint64_t calls;                 /* ... this many (every caller, every thread) */
	uint32_t *parents, *children;   /* arcs (indexes into arcs), by samples, descending */
	size_t n_parents, n_children;
};

struct callgraph {
	const struct stack_view *sv;
	struct callgraph_opts opt;
	uint64_t samples;               /* samples counted (the % base) */
	uint64_t delayed;               /* of which delayed ticks */
	uint64_t ends[STACK_END__COUNT];/* samples by how their stack's walk ended */
	double unit;                    /* seconds a sample stands for (0: not a time event) */
	struct cg_entry *entries;       /* procedures with samples, then cycles; by index order */
	size_t n_entries;
	uint32_t *entry_of;             /* node -> entry + 1 (0: no samples) */
	struct cg_arc *arcs;
	size_t n_arcs;
	bool calls_measured;            /* some entry's calls were counted (dcpiwatch) */
	uint32_t n_cycles;
	uint32_t *cycle_members;        /* nodes of cycle k at [cycle_first[k-1], cycle_first[k]) */
	uint32_t *cycle_first;
};

/* Builds the graph.  Returns 0, or -1 (reported) for an event the epoch has no stacks of. */
int callgraph_build(struct callgraph *g, const struct stack_view *sv, const struct callgraph_opts *o);
void callgraph_release(struct callgraph *g);

/*
 * Samples with user frames, and those whose walk reached the thread's
 * entry (the outermost frame: _start, clone3; STACK_END_COMPLETE).
 */
uint64_t callgraph_user_samples(const struct callgraph *g, uint64_t *complete);

/* The entry of node, or NULL if it has no samples. */
const struct cg_entry *callgraph_entry(const struct callgraph *g, uint32_t node);

/*
 * Measured call counts (callgraph_build calls it): the calls of every
 * procedure that dcpiwatch counted in this epoch (db/watch.h, exact, from
 * uprobes) go to its entry's calls.  Returns true if any procedure was
 * counted.  The stopwatch counts a function's entries, not who called it:
 * arcs[].calls stay 0, and every count not measured is shown as unknown
 * ("-"), never a guess.
 */
bool callgraph_call_counts(struct callgraph *g);

/* The name shown for an entry: "name", "name <cycle 2>", "<cycle 2 as a whole>". */
void callgraph_entry_name(const struct callgraph *g, const struct cg_entry *e, char *buf,
			  size_t size);

/*
 * The listings of dcpicg, drawn as styled segments (present/draw.h): the
 * call graph (gprof's), the flat profile, the index.  With nodes, only the
 * entries of those nodes (and their flat rows).
 */
struct draw;
void callgraph_draw(const struct callgraph *g, struct draw *out, const uint32_t *nodes, size_t n);
/* numbering: the graph whose [index] to show (NULL: g's own), for the prompt and delayed listings. */
void callgraph_draw_flat(const struct callgraph *g, struct draw *out, const uint32_t *nodes,
			 size_t n, const char *title, const struct callgraph *numbering);
/* Every entry by name, with its image. */
void callgraph_draw_index(const struct callgraph *g, struct draw *out);

/* dcpicg --json: one object for the listing (procedures, cycles). */
struct json_writer;
void callgraph_json(const struct callgraph *g, struct json_writer *w, const uint32_t *nodes,
		    size_t n);

#endif
