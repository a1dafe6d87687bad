/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/valprof.h - a procedure's value profile, instruction by
 * instruction (analysis/valinsn.h: as the reports show it; seed 004,
 * slide 15), built from its listing:
 *
 *   ldq ra, -16(t12)        ra:(98.94% 0xff...ff) (0.53% ...)
 *
 * For each instruction: the most common values of the registers it writes
 * and, for a load or a store, of the address it accesses, with their
 * shares of the instruction's value samples.  The collector records the
 * registers at each sample as they were before the sampled instruction
 * ran (db/values.h), so
 *
 *  - what instruction i wrote is read at the instruction that follows it
 *    in execution: the next one of its block, or the head of the block it
 *    falls into when that block has no other predecessor (else unknown);
 *  - the address i accesses is computed from its own samples: base +
 *    index x scale + displacement.  With a base register alone (or an index
 *    alone) the address takes that register's values and shares exactly;
 *    with both, only the most common pair is shown, its share a lower bound
 *    (at least share(base) + share(index) - 1: the lists are per register,
 *    not joint).  RIP-relative addresses are constants and not shown.
 *
 * Values come from hot lists (core/hotlist.h): only values whose counts
 * mean something are shown, largest first, at most VALPROF_SHOW of them.
 *
 *   struct valprof vp;
 *   valprof_build(&vp, &listing, epoch_view_values(view, ref.image));
 *   for (i ...) if (vp.insns[i].n) valprof_format(&vp.insns[i], &sb);
 *   valprof_release(&vp);
 */
#ifndef DCPI_ANALYSIS_VALPROF_H
#define DCPI_ANALYSIS_VALPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/listing.h"
#include "analysis/valinsn.h"
#include "db/values.h"

/* Fewer value samples than this at an instruction: its values are not shown. */
#define VALPROF_MIN_SAMPLES 8

/*
 * Builds the values of listing l's instructions from prof (the image's
 * value profile; may be NULL or empty: every instruction without values).
 * Instructions are decoded again for their memory operands.
 */
void valprof_build(struct valprof *vp, const struct listing *l, const struct values_profile *prof);

/*
 * The value profile's register (enum values_reg) of a general-purpose
 * register in disasm's numbering (disasm/insn.h DREG_RAX...), or -1.
 */
int valprof_vreg(unsigned dreg);

/* The record of the instruction at address addr of l's image, or NULL. */
const struct values_rec *valprof_rec_at(const struct listing *l, const struct values_profile *prof,
					uint64_t addr);

#endif
