/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/pathview.h - what the epoch's path profiles (db/paths.h: the
 * paths emulated bursts followed, and the matched windows between two
 * ordinary samples) say about one procedure, mapped onto its CFG
 * (disasm/cfg.h): the input of the estimates from paths (calc-paths.c).
 *
 * The emulator's blocks are QEMU translation blocks, not basic blocks: a
 * translation block ends at every branch and call, but also where the
 * emulator chose to cut (a page boundary, its instruction limit), and it
 * runs through the join points of the CFG, which are no branch.  So the
 * view works per instruction: every instruction a translation block spans
 * ran as often as the block (its coverage), and a CFG edge's transitions
 * are the recorded edges from its block's last instruction to its target,
 * plus the translation blocks that run across the join (a fall-through
 * the emulator did not cut).  Recorded edges from an instruction that ends
 * no CFG block (a call's callee, a cut at no branch) are not CFG edges.
 *
 * Windows: a matched window is the path between two consecutive ordinary
 * samples of a thread, B1 and B2, one sampling period apart.  The view
 * keeps the instructions the procedure ran in all matched windows of the
 * epoch (`wfollowed`, per instruction `wcount`), and how many of the
 * windows began (B1) in the procedure: the number in the image's uniform
 * sample of windows scaled to all of the image's matched windows
 * (`win_b1`; exact while the image has at most PATHS_KEEP_WINDOWS).
 *
 * An epoch recorded with single-step bursts (dcpirun --bursts=step) has
 * no path profiles; epoch_view_paths() then makes one from the raw traces
 * (burstview.h), without windows.
 */
#ifndef DCPI_ANALYSIS_PATHVIEW_H
#define DCPI_ANALYSIS_PATHVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/listing.h"
#include "db/paths.h"

/* A memory-ordering conflict at a load of the procedure. */
struct pathview_conflict {
	size_t load;              /* listing index of the load */
	uint64_t store;           /* the store's address (ELF virtual address, same image) */
	enum paths_conflict_kind kind;
	uint64_t count;           /* times seen in detail */
};

/* Bursts that ended at an instruction of the procedure, and why. */
struct pathview_stop {
	size_t insn;              /* listing index */
	enum paths_end reason;
	uint64_t count;
};

struct pathview {
	bool present;             /* the image has a path profile in this epoch */
	uint64_t img_bursts;      /* bursts that followed code of the image */
	uint64_t img_insns;       /* instructions they followed there */
	uint64_t *count;          /* per listing instruction: executions in bursts */
	uint64_t *wcount;         /* per listing instruction: executions in matched windows */
	uint64_t *ecount;         /* per CFG edge: transitions seen in bursts (-: none) */
	uint64_t followed;        /* instructions followed in the procedure by bursts */
	uint64_t wfollowed;       /* ... in matched windows */
	uint64_t calls;           /* calls seen leaving the procedure's code */
	/* windows */
	uint64_t img_windows;     /* matched windows whose B1 is in the image */
	size_t img_kept;          /* ... of them in the image's uniform sample */
	double win_b1;            /* matched windows whose B1 is in the procedure (estimated) */
	size_t kept_b1;           /* ... of them in the sample */
	double win_here_mean;     /* those kept: mean instructions in the image, B1 to B2 */
	double win_here_cv;       /* ... their coefficient of variation */
	double win_b1_here;       /* instructions in the image of all windows that began in the
				     procedure (estimated: the kept ones' scaled) */
	double img_here_mean;     /* mean instructions in the image of the kept windows */
	uint64_t img_wfollowed;   /* instructions of the image in all matched windows */
	struct pathview_conflict *conflicts;
	size_t n_conflicts;
	struct pathview_stop *stops;
	size_t n_stops;
};

/*
 * Builds the view of listing l from prof (the image's path profile,
 * normalized; may be NULL or empty: nothing present).  Offsets are mapped
 * to addresses with the listing's image.
 */
void pathview_build(struct pathview *pv, const struct listing *l, const struct paths_profile *prof);
void pathview_release(struct pathview *pv);

/*
 * Executions of CFG block b in bursts (windows: in matched windows): the
 * mean coverage of its instructions (a burst that began or ended inside it
 * covered part of it).  -1 for the EXIT block or a block without
 * instructions.
 */
double pathview_block_count(const struct pathview *pv, const struct cfg *cfg, size_t b, bool windows);

#endif
