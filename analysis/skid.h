/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/skid.h - where a sample lands relative to the instruction
 * it measures, per event, and moving samples back before estimation.
 *
 * On an out-of-order x86 core sampled by a timer (cpu-clock) or by a
 * non-precise counter overflow, the interrupt is taken at the oldest
 * unretired instruction, which is allowed to finish: the recorded address
 * is the NEXT instruction in execution order (skid 1; measured in
 * docs/analysis.md, "Skid").  Samples at address p therefore measure
 * the instruction executed just before p:
 *
 *  - inside a block, the previous instruction;
 *  - at a block head, the last instruction of whichever predecessor ran:
 *    the samples are split over the incoming edges by their frequency;
 *  - after a call, the callee's return: they leave the procedure
 *    (moved_out) and the instruction is flagged SKID_AFTER_CALL;
 *  - at the procedure's entry, for the share of the invocations, the
 *    callers' call instructions; at a head reached from outside (CFG_REENTRY,
 *    a .cold part), the jump back: they leave too.
 *
 * Conversely an instruction whose successor in execution lies outside the
 * procedure (a call, a return, a jump out) had its time recorded elsewhere:
 * it is SKID_UNMEASURED.
 *
 * With skid 0 (precise events) samples stay where they are.
 *
 * Default skid per event (skid_default): 1 for every event dcpi samples
 * today: clock (the timer), and cycles, instructions, imiss, dmiss,
 * branchmp, dtlbmiss, itlbmiss as non-precise counter overflows.  (A
 * precise PEBS/IBS sample would be 0; dcpi does not ask for precise
 * sampling.)
 */
#ifndef DCPI_CORE_ANALYSIS_SKID_H
#define DCPI_CORE_ANALYSIS_SKID_H

#include <stddef.h>

#include "core/event.h"
#include "disasm/cfg.h"

struct epoch_meta;

enum skid_flags {
	SKID_UNMEASURED = (1 << 0), /* its time was recorded outside the procedure */
	SKID_AFTER_CALL = (1 << 1), /* its recorded samples measured a callee's return */
	SKID_ENTRY = (1 << 2),      /* the procedure's entry: recorded samples partly measured calls */
};

/* The skid of ev's samples in an epoch (instructions). */
int skid_default(const struct epoch_meta *meta, enum dcpi_event ev);

/*
 * Moves samples back by `skid` instructions in execution order (0 or 1;
 * anything larger is treated as 1).
 *
 *   recorded[i]  samples recorded at cfg->insns[i]
 *   edge_w       a weight per cfg edge for splitting block-head samples
 *                (estimated frequencies), or NULL: equal shares
 *   inv_w        the weight of the procedure's invocations (the entry
 *                block's edge from outside), used with edge_w; ignored if
 *                edge_w is NULL
 *   out[i]       samples measuring cfg->insns[i]
 *   flags[i]     enum skid_flags (may be NULL)
 *
 * Returns the samples that measured other procedures (moved out).
 * Instructions of unreachable blocks keep their own samples (nothing is
 * known about how they are entered).
 */
double skid_attribute(const struct cfg *cfg, const double *recorded, const double *edge_w,
		      double inv_w, int skid, double *out, unsigned *flags);

#endif
