/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/valprof.h - a procedure's value profile, instruction by
 * instruction, as the reports show it (seed 004, slide 15):
 *
 *   ldq ra, -16(t12)        ra:(98.94% 0xff...ff) (0.53% ...)
 *
 * For each instruction: the most common values of the registers it writes
 * and, for a load or a store, of the address it accesses, with their
 * shares of the instruction's value samples.
 *
 * What an instruction wrote comes first from the path profile of emulated
 * bursts (db/paths.h "values"): the emulator saw each instruction it
 * followed in detail write its registers, so those values are exactly the
 * instruction's, their shares of the executions seen (`exact`).  Where
 * bursts did not see an instruction often enough, the sample registers
 * stand in.  The collector records the registers at each sample as they
 * were before the sampled instruction ran (db/values.h), so
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
#include "db/values.h"

struct strbuf;
struct json_writer;
struct draw;

#define VALPROF_SHOW 3      /* values shown per register */
#define VALPROF_ITEMS 4     /* registers (and the address) shown per instruction */
/* A register's (or address's) most common value at least this share: semi-invariant. */
#define VALPROF_INVARIANT 0.90
/* Fewer value samples than this at an instruction: its values are not shown. */
#define VALPROF_MIN_SAMPLES 8

struct valprof_value {
	uint64_t value;
	double share;           /* of the item's value samples, 0..1 */
};

struct valprof_item {
	char name[8];           /* "rax" ... "r15", or "addr" */
	bool address;           /* the memory address the instruction accesses */
	bool lower_bound;       /* an address of two registers: shares are at least these */
	bool exact;             /* what the instruction wrote, seen by the emulator: samples
				   are its executions seen in detail */
	uint64_t samples;       /* value samples (or executions seen) the shares are of */
	unsigned n;             /* values shown, most common first */
	struct valprof_value v[VALPROF_SHOW];
};

struct valprof_insn {
	unsigned n;
	struct valprof_item it[VALPROF_ITEMS];
};

struct valprof {
	struct valprof_insn *insns;   /* one per listing instruction (same index) */
	size_t n;
	bool present;                 /* the image has a value profile (or written values of
					 bursts) in this epoch */
	uint64_t samples;             /* value samples in the procedure's range */
};

/*
 * Builds the values of listing l's instructions from written (the values
 * bursts saw instructions write: the image's path profile's `values`) and
 * prof (the image's value profile); either may be NULL or empty (every
 * instruction without values).  Instructions are decoded again for their
 * memory operands.
 */
void valprof_build(struct valprof *vp, const struct listing *l, const struct values_profile *prof,
		   const struct values_profile *written);
void valprof_release(struct valprof *vp);

/*
 * The value profile's register (enum values_reg) of a general-purpose
 * register in disasm's numbering (disasm/insn.h DREG_RAX...), or -1.
 */
int valprof_vreg(unsigned dreg);

/* The record of the instruction at address addr of l's image, or NULL. */
const struct values_rec *valprof_rec_at(const struct listing *l, const struct values_profile *prof,
					uint64_t addr);

/*
 * Draws "rax:(95.0% 0x5eed5eed) (0.4% 0x7)  addr:(>=90.0% 0x601040)" as
 * styled segments (present/draw.h): what every view of values shows.
 */
void valprof_draw(const struct valprof_insn *vi, struct draw *d);
/* The same appended to sb as plain text. */
void valprof_format(const struct valprof_insn *vi, struct strbuf *sb);

/*
 * Writes the instruction's "values" array: one object per value shown,
 * {"reg": "rax", "value": "0x5eed5eed", "share": 0.95, "samples": 120,
 * "source": "paths"} ("reg" is "addr" for the address, with "lower_bound":
 * true when it is; "source" is "paths" for values the emulator saw
 * written, "samples" for the sample registers).
 */
void valprof_json(const struct valprof_insn *vi, struct json_writer *w);

/*
 * The item of vi whose most common value has the largest share, if that
 * share is at least min_share; NULL otherwise.
 */
const struct valprof_item *valprof_invariant(const struct valprof_insn *vi, double min_share);

#endif
