/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/flow.h - the global flow correction: the block and edge
 * frequencies closest to the estimates that conserve flow everywhere.
 *
 * Local propagation (freq.h) only fills unknown classes and leaves
 * contradictions between estimates alone.  This step, which the DCPI
 * paper (Anderson et al., "Continuous Profiling: Where Have All the Cycles
 * Gone?", SOSP 1997, 6.1.4) mentions as future work and LLVM's profile inference ("profi",
 * He et al., POPL 2022) does for sampled profiles, solves
 *
 *	minimise   sum over arcs a of  w_a x |x_a - e_a|
 *	subject to x >= 0 and, at every node, inflow = outflow
 *
 * on the graph where every block is split into an arc (in -> out) that
 * carries its frequency, every CFG edge is an arc, and an arc from EXIT
 * back to the entry carries the invocations.  e_a is the estimate (after
 * propagation) and w_a its weight (1 / its expected error; about 0 for
 * unknown values).  The absolute-value costs are linear pieces, so this is
 * a min-cost flow problem: starting from x = e, the excess of each node is
 * routed to the nodes in deficit along shortest paths of the residual
 * network (raising x_a costs w_a, lowering it costs w_a down to 0), by
 * successive shortest paths with Dijkstra and node potentials.  Every
 * circulation keeps cycle-equivalent arcs equal, so the classes stay
 * consistent.
 */
#ifndef DCPI_CORE_ANALYSIS_FLOW_H
#define DCPI_CORE_ANALYSIS_FLOW_H

#include <stddef.h>
#include <stdint.h>

/* A flow network: n nodes, arcs from[k] -> to[k]. */
struct flow_net {
	size_t n_nodes, n_arcs;
	const uint32_t *from, *to;
	const double *est;     /* per arc: the estimate (>= 0) */
	const double *w;       /* per arc: the cost of a unit of change (>= 0) */
	double bound;          /* > 1: a known estimate (w > 1e-6) may only move within
				  [est / bound, est x bound]; 0: unbounded */
};

/*
 * Writes the corrected values of every arc to x (n_arcs).  Returns 0, or -1
 * if the excess cannot be routed (a node not connected by arcs both ways:
 * x then holds the best partial solution, not conserving flow).
 */
int flow_correct(const struct flow_net *net, double *x);

#endif
