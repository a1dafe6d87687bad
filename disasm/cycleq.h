/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/cycleq.h - cycle equivalence of the edges of a graph (Johnson,
 * Pearson and Pingali, "The Program Structure Tree", PLDI 1994), the
 * engine behind frequency-equivalence classes (cfg_classify in cfg.h).
 *
 * Two edges are cycle equivalent when every cycle through one goes through
 * the other.  In a strongly connected directed graph (a control-flow graph
 * with an EXIT->ENTRY edge) this is the same as in the undirected graph,
 * and cycle-equivalent edges execute equally often on every run.
 *
 * The algorithm works on the undirected multigraph: a DFS from root
 * numbers the nodes; every non-tree edge is then a backedge between a node
 * and one of its ancestors; walking the nodes in reverse DFS order with
 * bracket lists (the backedges spanning a tree edge) gives each edge its
 * class in O(E) time.  Parallel edges are distinct (edges are ids, not node
 * pairs); the graph must not have self-loops.
 */
#ifndef DCPI_DISASM_CYCLEQ_H
#define DCPI_DISASM_CYCLEQ_H

#include <stddef.h>
#include <stdint.h>

/*
 * Computes the cycle-equivalence class of every edge i = (from[i], to[i])
 * of a graph with n_nodes nodes.  The graph (as an undirected graph) must
 * be connected from root and have no bridge, which holds for a strongly
 * connected directed graph.  Writes cls[i] in [0, classes) and returns the
 * number of classes; returns -1 (cls unspecified) if the graph breaks
 * these preconditions (a node not connected to root, a self-loop, an
 * edge with no bracket).
 */
int cycleq_classes(size_t n_nodes, size_t n_edges, const uint32_t *from, const uint32_t *to,
		   uint32_t root, int *cls);

#endif
