/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/emu-engine-int.h - the emulator engine's insides, shared by its
 * pieces: collect/emu-engine.c (running a burst or a window, the engine's
 * life), emu-memory.c (guest memory: chunks, the pager, faults) and
 * emu-hooks.c (unicorn's hooks and what they record).  Not for other
 * users: see collect/emu-engine.h.
 */
#ifndef DCPI_COLLECT_EMU_ENGINE_INT_H
#define DCPI_COLLECT_EMU_ENGINE_INT_H

#include "collect/emu-avx.h"
#include "collect/emu-engine.h"

#include <capstone/capstone.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unicorn/unicorn.h>

#define CHUNK_SHIFT 21
#define CHUNK_SIZE ((uint64_t)1 << CHUNK_SHIFT)
#define CHUNK_PAGES (CHUNK_SIZE / EMU_PAGE_SIZE)
#define MAX_CHUNKS 512
#define WORDS (CHUNK_PAGES / 64)
/* Pages asked for again at the start of each burst: the last one's, and code pages. */
#define MAX_WORKING 64
/* Block cache and per-burst tables (powers of two). */
#define BLOCKS_CAP (1u << 17)
#define INSNS_CAP (1u << 16)
#define EDGES_CAP (1u << 15)
#define VALUES_TAB_CAP (1u << 14)
#define CONFLICTS_CAP (1u << 12)
#define VALUE_SLOTS 8
#define RECENT_BLOCKS 1024
/* Instructions that must stop the emulation (collect/emu-avx.h), at most. */
#define MAX_TRAPS 4096
#define STORE_RING 64

struct chunk {
	uint64_t guest;
	uint8_t *host;
	uint64_t filled[WORDS], unreadable[WORDS], code[WORDS];
	uint64_t open[WORDS];           /* read-write already (filled, or about to be) */
	uint64_t resident[WORDS];       /* backed by memory since the last release */
	uint64_t keep[WORDS];           /* emu_forget_pages(): stay read-write (refilled at once) */
	uint64_t snapped[WORDS];        /* filled from the copy made at the stop */
	uint32_t *crc;                  /* per code page, its contents when marked */
};

struct blk {
	uint64_t pc;
	uint32_t size, insns;
	uint64_t last;                  /* pc of its last instruction */
	uint32_t gen, wgen, sgen;
	uint64_t count, wcount;
	uint64_t seg;                   /* executions in the trail's segment in progress */
	bool used;
};

struct insn_info {
	uint64_t pc;
	uint32_t writes;                /* general registers it writes (values order) */
	uint8_t width[VREG_RFLAGS];     /* ...which part of each (enum width) */
	uint32_t gen;
	uint64_t execs;
	bool used;
};

struct edge_ent {
	uint64_t from, to, count;
	uint32_t gen;
};

struct val_ent {
	uint64_t pc;
	uint8_t reg, n;
	uint32_t gen;
	uint64_t v[VALUE_SLOTS], c[VALUE_SLOTS];
};

struct conf_ent {
	uint64_t load, store, count;
	uint8_t kind;
	uint32_t gen;
};

struct store_rec {
	uint64_t pc, addr, index;
	int size;
};

struct emu_engine {
	uc_engine *uc;                  /* the one running: fast or slow */
	uc_engine *fast;                /* a hook per block, pages by their faults: paths, trails */
	uc_engine *slow;                /* and per instruction and memory access: detail */
	uc_context *ctx;                /* the state moved from slow to fast */
	uint64_t space;
	struct emu_pager pager;
	csh cs;
	struct chunk chunks[MAX_CHUNKS];
	size_t n_chunks;
	struct chunk *last_chunk;       /* emu_refresh()'s last, looked at first */
	uint64_t working[MAX_WORKING];  /* the last burst's pages */
	/*
	 * The copy made at the stop, installed as each page is first needed
	 * (so that the working set names the pages of the copy it used too).
	 */
	uint8_t *stash;                 /* EMU_MAX_SNAP pages */
	uint64_t stash_addr[EMU_MAX_SNAP];      /* in order of address */
	size_t n_stash;
	size_t n_working, next_working;
	size_t pages;                   /* filled since the run began */
	size_t resident;                /* pages backed by memory */
	size_t faults;                  /* page faults this run (readahead grows with them) */
	uint64_t last_fault;
	bool taint;                     /* an unreadable page was touched: stop at the next block */
	bool late;                      /* pages refused past the time cap: stop at the next block */
	bool code_changed;              /* a code page came back different */
	uint64_t stop_rip;              /* where it stopped */
	/* A burst prepared (emu_engine_prepare): where it starts, its limits, its files. */
	bool prepared;
	size_t n_files;
	struct emu_file files[EMU_MAX_FILES];   /* positions tracked as reads are passed */
	int32_t read_fd;                /* a read it could not pass (-1: none) */
	uint8_t *read_buf;              /* EMU_MAX_READ bytes, for the reads passed */
	uint64_t start_rip;
	uint64_t b_limit;
	uint32_t b_time_us;
	bool burst_on;                  /* its part: blocks, edges, values counted */
	bool burst_passes;              /* a trail follows: at its limit it ends, the run goes on */
	bool burst_passed;              /* ...and it did: what follows is the trail's */
	int b_end;                      /* its end (enum paths_end) and where, once passed */
	uint64_t b_end_pc, b_insns, b_live;
	uint64_t b_working[EMU_MAX_WORKING];
	size_t b_n_working;

	struct blk *blocks;
	size_t n_blocks;
	struct blk *recent[RECENT_BLOCKS];      /* blocks looked up last, by pc */
	struct insn_info *insns;
	size_t n_insns;
	struct edge_ent *edges;
	struct val_ent *vals;
	struct conf_ent *confs;
	uint32_t gen, wgen;
	/* Touched this run: indexes into the tables above. */
	uint32_t *t_blocks, *t_edges, *t_insns, *t_vals, *t_confs;
	size_t n_tb, n_te, n_ti, n_tv, n_tc, a_tb, a_te, a_ti, a_tv, a_tc;
	bool full;                      /* a per-run table filled up: stop */

	/* The run in progress. */
	uint64_t total;                 /* instructions so far (whole blocks) */
	uint64_t blk_start;             /* total when the current block began */
	struct blk *cur, *prev;         /* the block counted last; the one an edge leaves */
	struct blk *hooked;             /* the block whose hook ran last (counted or not) */
	bool hooked_counted;
	uint64_t hooked_start;
	uint64_t limit;
	uint64_t nblocks;
	int64_t deadline;               /* when the worker's CPU may have reached the cap */
	int64_t wall_end;               /* the wall clock's cap, whatever the CPU */
	int64_t cpu_start, cpu_cap;     /* the worker's CPU time at the start, the cap */
	uint64_t passed;                /* system calls passed on the way to B1 */
	int end;                        /* enum paths_end, -1 while running */
	int pending;                    /* a stop the block hook asked for, in detail (-1: none) */
	uint64_t pending_pc;
	uint64_t end_pc;
	char mnemonic[32];
	/* detail */
	bool detail_on;
	uint64_t detail, detailed, index;
	struct insn_info *prev_insn;
	uint64_t cur_pc;
	struct store_rec ring[STORE_RING];
	size_t ring_n, ring_at;
	struct emu_step *steps;
	size_t n_steps, max_steps;
	/* trails */
	bool windowing;                 /* blocks are counted for the trail's windows */
	const struct emu_trail_req *trail;
	uint32_t next;                  /* the trail's point looked for */
	bool matched;                   /* ...found: the run stopped there */
	uint64_t here_lo, here_hi;      /* the code of the point the segment began at */
	uint64_t seg_here;              /* the segment's instructions there */
	uint32_t sgen;                  /* the segment's generation (struct blk seg) */
	uint32_t *seg_blocks;           /* blocks counted in the segment */
	size_t n_seg, a_seg;
	uint64_t trail_pages;           /* pages filled when the trail began */
	int key_reg;                    /* compared first at a trail's sample, -1: none */
	struct emu_vregs vregs;         /* AVX state beyond unicorn's (collect/emu-avx.h) */
	uint64_t traps[MAX_TRAPS];      /* instructions unicorn would do wrong: exits */
	size_t n_traps;
	bool new_traps;                 /* found in the block whose hook runs: translate it again */
	struct blk *retranslate;        /* that block */
	uint64_t missing_done;          /* instructions done by collect/emu-avx.c */
	uint64_t at_match;              /* instructions before the point matched */
	uint64_t trail_start;           /* ...before the trail's first point */
	unsigned closest;               /* the fewest registers that differed at a pass of the point */
};

/* A page's bit in a chunk's bitmaps. */
static inline bool bit(const uint64_t *w, size_t i)
{
	return w[i / 64] >> (i % 64) & 1;
}

static inline void set_bit(uint64_t *w, size_t i)
{
	w[i / 64] |= 1ull << (i % 64);
}

/* ---- collect/emu-engine.c: time, and the engine that a fault belongs to ---------------- */

/* The engine running (NULL outside a run, and while a hook fills pages outside a fault). */
extern struct emu_engine *emu_active;
/* Whether the run is past its time (the worker's CPU time; the clock's cap). */
bool emu_over_time(struct emu_engine *e);

/* ---- collect/emu-memory.c: guest memory ------------------------------------------------ */

/* The chunk holding addr, NULL if none is mapped. */
struct chunk *emu_chunk_of(struct emu_engine *e, uint64_t addr);
/* Maps the chunk holding addr into the engine, its pages inaccessible; NULL if it cannot. */
struct chunk *emu_map_chunk(struct emu_engine *e, uint64_t addr);
/* Every page forgotten (fetched again before its next use); memory given back if too much. */
void emu_forget_pages(struct emu_engine *e, const uint64_t *want, size_t n);
/* Asks the pager for n pages; those it did not give read as nothing (unreadable). */
int emu_fetch_pages(struct emu_engine *e, const uint64_t *addr, size_t n);
/* Before an access to [addr, addr + size): its pages fetched if this burst has not got them. */
void emu_refresh(struct emu_engine *e, uint64_t addr, size_t size);
/* Marks the pages of a block as code, remembering their contents. */
void emu_mark_code(struct emu_engine *e, uint64_t pc, uint32_t size);
/*
 * At a burst's start: every page forgotten, the copy made at the stop
 * (snap, n) put in place, and the other pages worth having fetched in one
 * round trip.
 */
void emu_prefetch(struct emu_engine *e, const struct emu_state *s, const struct emu_page *snap,
		  size_t n);
/* Pages filled but neither from the copy nor code: read from the live process. */
uint64_t emu_live_pages(const struct emu_engine *e);
/* The working pages (read live, not code), at most max, into out. */
size_t emu_working_pages(const struct emu_engine *e, uint64_t *out, size_t max);
/* Every page not filled made inaccessible: the fast engine finds them by their faults. */
void emu_protect_unfilled(struct emu_engine *e);
/* Code that changed since it was translated: its translations and the caches go. */
void emu_drop_changed_code(struct emu_engine *e);
/* unicorn's hook for a fault outside every chunk. */
bool emu_on_unmapped(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value,
		     void *ud);

/* ---- collect/emu-hooks.c: registers, blocks, hooks ------------------------------------- */

/* rip where unicorn stands. */
uint64_t emu_read_rip(uc_engine *uc);
/* A stopped thread's state into unicorn: general, SSE and x87 registers. */
void emu_write_state(uc_engine *uc, const struct emu_state *s);
/* Fills the map of capstone's registers to the general register they are part of. */
void emu_setup_reg_map(csh cs);
/* An instruction unicorn would do wrong (collect/emu-avx.h): an exit of both engines. */
bool emu_is_trap(const struct emu_engine *e, uint64_t addr);
/* Instructions of block b before addr. */
uint64_t emu_index_in(struct emu_engine *e, const struct blk *b, uint64_t addr);
/* A burst followed by a trail reached its limit at pc: its part ends, the run goes on. */
void emu_burst_passes(struct emu_engine *e, uint64_t pc);
/* A block that runs: its count, and the next edge's source. */
void emu_count_block(struct emu_engine *e, struct blk *b);
/* An instruction done in software where unicorn stopped before it: a block of its own. */
void emu_count_soft(struct emu_engine *e, uint64_t pc, unsigned len);
/* An instruction unicorn refused: true if done in software (rip moved past it). */
bool emu_emulate_missing(struct emu_engine *e, uint64_t rip);
/* A trail's sample: the state compared where the emulation passes its rip (a code hook). */
void emu_on_target(uc_engine *uc, uint64_t pc, uint32_t size, void *ud);
/* A trail's segment ended at a point matched: its blocks' executions kept, or dropped. */
void emu_segment_end(struct emu_engine *e, bool keep);
enum emu_hooks { EMU_HOOKS_FAST, EMU_HOOKS_DETAIL };
/* The hooks every engine has, and those of its kind. */
void emu_add_hooks(struct emu_engine *e, uc_engine *uc, enum emu_hooks kind);

#endif
