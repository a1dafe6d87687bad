/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/stackview.h - an epoch's stack table (db/stacks.h) resolved to
 * procedures: the common ground of the call graph (dcpicg), the exports
 * (dcpiexport) and per-process reports (dcpiprof --by).
 *
 *   struct stack_view sv;
 *   if (stack_view_open(&sv, &view) != 0) ...;      // 1: the epoch has no stacks
 *   for (size_t i = 0; i < sv.t.n_samples; i++) {
 *           const struct stack_sample *s = &sv.t.samples[i];
 *           uint32_t nodes[STACK_MAX_DEPTH];
 *           bool delayed;
 *           size_t n = stack_view_nodes(&sv, s->stack, true, nodes, &delayed);
 *           ... sv.nodes[nodes[0]] is the procedure charged with the sample
 *   }
 *   stack_view_release(&sv);
 *
 * A node is one procedure of one image, or an image's code that no
 * procedure holds (its image_unnamed() name).  Frames of images missing
 * from the epoch's index are given to the unknown image's node.
 *
 * Delayed ticks (seed 003): a clock sample taken while the kernel had
 * interrupts disabled is delivered when they are enabled again, so it
 * lands in the procedure that enables them (here pvm_irq_enable through
 * _raw_spin_unlock_irqrestore and the like, see stack_view_irq_enable()),
 * not where the time went.  Such a sample is "delayed", and, as SPIN's
 * profiler did, it is charged to the caller: the leading frames that
 * enable interrupts are dropped.
 */
#ifndef DCPI_ANALYSIS_STACKVIEW_H
#define DCPI_ANALYSIS_STACKVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/epochview.h"
#include "db/stacks.h"

struct sv_node {
	size_t image;                   /* index into view->images */
	const struct proc *proc;        /* NULL: code no procedure holds */
	const char *name;
	bool kernel;                    /* a kernel or module image */
	bool irq_enable;                /* a procedure that enables interrupts */
};

struct stack_view {
	struct epoch_view *view;
	struct stack_table t;
	struct sv_node *nodes;
	size_t n_nodes, a_nodes;
	uint32_t *frame_node;           /* table frame -> node */
	bool time_events[EVENT__COUNT]; /* events counted by the clock (delayed ticks apply) */
};

/*
 * Loads and resolves the stacks of v's epoch.  Returns 0; 1 if the epoch
 * has no stack table (nothing reported); -1 if it cannot be read
 * (reported).  Damaged stack files are left out (db_stacks_load()): the
 * table is what the others hold, and epoch_view_partial() says so.
 */
int stack_view_open(struct stack_view *sv, struct epoch_view *v);
/*
 * The same for a report that cannot do without stacks (dcpicg, dcpiexport,
 * the callers view): 0, or -1 after saying why (an epoch without stacks:
 * how to record them).
 */
int stack_view_need(struct stack_view *sv, struct epoch_view *v);
void stack_view_release(struct stack_view *sv);

/*
 * The nodes of stack s, the charged procedure first, each caller after its
 * callee (at most STACK_MAX_DEPTH).  With to_caller, a delayed tick is
 * charged to the caller (its leading interrupt-enabling frames dropped;
 * never the last frame).  *delayed tells whether the stack's leaf enables
 * interrupts (whether or not to_caller); the caller decides whether the
 * sample's event is a clock (sv->time_events).
 */
size_t stack_view_nodes(const struct stack_view *sv, uint32_t s, bool to_caller, uint32_t *out,
			bool *delayed);

/* The node of procedure p of view image i (p NULL: its unnamed code), or UINT32_MAX. */
uint32_t stack_view_find(const struct stack_view *sv, size_t image, const struct proc *p);

/* True if a kernel procedure of this name enables interrupts (a delayed tick lands there). */
bool stack_view_irq_enable(const char *name);

/* The image path of a node, and its last component. */
const char *stack_view_node_image(const struct stack_view *sv, uint32_t node);
const char *stack_view_node_image_base(const struct stack_view *sv, uint32_t node);

#endif
