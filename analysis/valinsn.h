/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/valinsn.h - a procedure's value profile, instruction by
 * instruction, as the reports show it: the most common values of each
 * instruction's registers and address with their shares, drawn, as text
 * and as JSON.  analysis/valprof.h builds it from a listing.
 */
#ifndef DCPI_ANALYSIS_VALINSN_H
#define DCPI_ANALYSIS_VALINSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct draw;
struct json_writer;
struct strbuf;

#define VALPROF_SHOW 3      /* values shown per register */
#define VALPROF_ITEMS 4     /* registers (and the address) shown per instruction */
/* A register's (or address's) most common value at least this share: semi-invariant. */
#define VALPROF_INVARIANT 0.90

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
	struct valprof_insn *insns;   /* one per listing instruction (same index); none
					 (n 0) when nothing is present */
	size_t n;
	bool present;                 /* the image has a value profile (or written values of
					 bursts) in this epoch */
	uint64_t samples;             /* value samples in the procedure's range */
};

void valprof_release(struct valprof *vp);

/* The values of listing instruction i: an empty one if vp has none for it. */
const struct valprof_insn *valprof_insn_at(const struct valprof *vp, size_t i);

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

/*
 * The value profile's register (enum values_reg) of a general-purpose
 * register in disasm's numbering (disasm/insn.h DREG_RAX...), or -1.
 */
int valprof_vreg(unsigned dreg);

#endif
