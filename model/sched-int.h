/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model/sched-int.h - inside the static scheduler (sched.h is its API):
 * the prepared instructions, the machine the stream runs through, and the
 * pieces, a file each:
 *
 *   sched-prep.c    registers, fusion, each instruction prepared once per
 *                   procedure (struct proto, struct sched_prep)
 *   sched-sim.c     the machine: dispatch, execute, writeback, retire of
 *                   one stream element at a time, the units' ring
 *   sched-steady.c  a loop's steady state: once a pass repeats, the rest
 *                   of the stream is written, not run
 *   sched-ctx.c     the machine after a predecessor's code, kept for every
 *                   block it leads to
 *   sched-memo.c    schedules made before, by what they are made of, for
 *                   the process (any procedure's block of the same code)
 *   sched.c         one schedule run and its results (the API)
 *
 * Nothing here is for code outside model/sched*.c.
 */
#ifndef DCPI_MODEL_SCHED_INT_H
#define DCPI_MODEL_SCHED_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/idmap.h"
#include "model/sched.h"

/* What the scheduler needs of one instruction, computed once per procedure. */
struct proto {
	const struct insn *in;
	struct model_timing t;      /* outside a loop's steady state */
	struct regset addr, data;   /* registers needed for the address / the rest */
	uint32_t mem;               /* memory operand text, interned (0: none) */
	uint32_t rip;               /* a RIP-relative operand's address, interned (0: none) */
	uint32_t gid;               /* what a schedule reads of it, numbered for the
				       process (sched_memo_proto_id(); 0: none) ... */
	bool gid_known;             /* ... once a memo key needed it */
	unsigned load_lat;          /* the load part of the latency (0 if no load) */
	unsigned loop_extra;        /* added to the latency and its load part in a loop */
	bool stack_op;              /* push/pop/call/ret: rsp from the stack engine */
	bool serial;                /* waits for all older instructions */
	bool call;                  /* the callee runs after it: what follows starts afresh */
	bool uncertain;
	bool bad;                   /* an id out of the model's range: cannot be scheduled */
	bool renamed;               /* an eliminated move: its result is its source's */
	bool store;                 /* a store to an address loads can be told to read */
	struct regset writes;       /* registers whose timing it sets (not rip, nor rsp
				       through the stack engine) */
};

#define MEM_TEXT 64                 /* memory operand texts are compared up to this */

/* A machine's state as numbers (the steady state of a loop, sched-steady.c). */
struct state_vec {
	int *v;
	size_t n, alloc;
};

struct ctx_snap;

/*
 * Element sizes of the stream and the results are known before a
 * schedule runs, so its buffers are kept here from one schedule to the
 * next (a prepared procedure is used by one thread at a time).
 */
struct sim_buffers {
	struct elem *e;
	size_t e_alloc;
	const struct proto **seq;
	size_t seq_alloc;
	struct slot *slots;
	size_t slots_alloc;
	uint64_t *busy;             /* the units' ring: a bit per unit busy in a cycle */
	int *holder;                /* ... and the stream element holding it */
	size_t cap;                 /* cycles in the ring (a power of two) */
	unsigned stride;            /* holders per cycle: the model's units and ports */
	struct state_vec snap, now; /* a loop's states (sched_sim_run_loop) */
	uint64_t *dig;              /* ... and its passes' digests */
	size_t dig_alloc;
	struct ctx_snap *ctx[2];    /* the machine after recent contexts (sched_ctx_find) */
	unsigned ctx_next;          /* the entry to replace next */
	uint64_t *key;              /* a schedule's memo key (sched_memo_key) */
	size_t key_alloc;
	uint32_t *mem_seen, *mem_first; /* ... where each memory operand was first seen */
	size_t mem_seen_alloc, mem_first_alloc, mem_seen_len;
	uint32_t stamp;             /* ... mem_seen[m] == stamp: seen in this key */
};

/* The instructions of a procedure, prepared (sched_prep_new()). */
struct sched_prep {
	const struct cpu_model *m;
	struct proto *p;
	size_t n, alloc;
	struct idmap mems;          /* memory operand texts: id - 1 indexes mem_text */
	char (*mem_text)[MEM_TEXT];
	size_t n_mem, mem_alloc;
	struct u64map rips;         /* RIP-relative addresses -> their id */
	size_t n_rip;
	struct sim_buffers buf;
	bool full_runs;             /* no shortcut (tests) */
};

/* A constraint on when something can happen, and what imposed it. */
struct bind {
	int t;
	enum sched_reason why;
	unsigned reg, unit;
	int producer;     /* stream index, -1 */
};

/*
 * What an instruction is at one place of the stream: the context's, the
 * body's first pass, the body's later passes (whose first instruction
 * follows the body's last, not the context's).
 */
struct slot {
	const struct proto *p;
	unsigned latency, load_lat; /* the proto's, in a loop with its loop_extra */
	bool fused;       /* one macro-op with the element before it */
	bool taken;       /* a control transfer not followed by its fall-through */
};

/* One instruction of the stream, as it ran. */
struct elem {
	const struct proto *p;
	int D, S, C, R;
	bool d_limited;   /* D was pushed by width, a taken branch or the ROB */
	bool d_serial;    /* D was pushed by a serialising instruction */
	struct bind why;
};

#define STORE_WINDOW 32
#define MAX_UNITS 64

/*
 * The execution units and ports are a ring of cycles, from the dispatch
 * cycle of the instruction being executed (nothing is reserved before it
 * any more) on: per cycle, a bit for each unit busy, and which stream
 * element holds it.  Cycles at or past `hi` are free.
 */
struct sim {
	const struct cpu_model *m;
	int reg_ready[DREG__COUNT];
	int reg_writer[DREG__COUNT];
	int disp_cycle;               /* the rest is cleared at the start */
	unsigned disp_used;
	int taken_cycle;              /* the cycle the last taken branch dispatched in */
	unsigned taken_used;          /* taken branches dispatched in it */
	int last_r;
	unsigned retired_last;
	int serial_until;
	int call_until;               /* after a call: dispatch resumes when it retired */
	unsigned n_exec, n_units;     /* table units, then load ports, then store ports */
	int stores[STORE_WINDOW];     /* recent store stream indices, ring */
	unsigned n_stores;
	struct elem *e;               /* the context's n_ctx, then passes of n_body */
	size_t n, n_ctx, n_body;
	const struct slot *slots;     /* n_ctx, n_body of the first pass, n_body of the others */
	struct sim_buffers *buf;      /* the ring's storage */
	int floor, hi;                /* the ring holds cycles [floor, hi) */
};

static inline uint64_t ring_busy(const struct sim *s, int c)
{
	if (c >= s->hi)
		return 0;
	return s->buf->busy[(size_t)c & (s->buf->cap - 1)];
}

static inline int ring_holder(const struct sim *s, int c, unsigned u)
{
	return s->buf->holder[((size_t)c & (s->buf->cap - 1)) * s->buf->stride + u];
}

/* The longest period a loop's steady state is looked for with (sched-steady.c). */
#define STEADY_MAX_PERIOD 16        /* passes */

/* The longest context whose machine is kept (sched-ctx.c). */
#define CTX_SNAP_MAX 64

/* sched-prep.c */

/* True if `jcc` right after `first` forms one macro-op on model m. */
bool sched_macro_fused(const struct cpu_model *m, const struct insn *first,
		       const struct insn *jcc);
/* Prepares insns[0..n) after the instructions sp has. */
void sched_prep_add(struct sched_prep *sp, const struct insn *insns, size_t n);

/* sched-sim.c */

/* A machine for model m, its ring in buf (allocated on first use). */
void sched_sim_init(struct sim *s, const struct cpu_model *m, struct sim_buffers *buf);
/* Clears the ring's cycles for the next schedule. */
void sched_sim_finish(struct sim *s);
/* Makes room in the ring up to cycle c (exclusive). */
void sched_ring_reach(struct sim *s, int c);
/* Runs stream elements [from, to). */
void sched_sim_steps(struct sim *s, size_t from, size_t to);
/* Runs stream elements [0, to). */
void sched_sim_run_to(struct sim *s, size_t to);
/* Runs stream elements [from, s->n). */
void sched_sim_run(struct sim *s, size_t from);

/* sched-steady.c */

/*
 * Runs the stream of a loop, passes of n elements: like sched_sim_run(),
 * but once the state repeats, the rest is written from the passes before.
 * `needed`: the first element whose timing is read.
 */
void sched_sim_run_loop(struct sim *s, size_t needed, struct sched_prep *sp);

/* sched-memo.c */

/* p's number by what a schedule reads of it (the same for the same), or 0 if it has none. */
uint32_t sched_memo_proto_id(const struct proto *p);
/*
 * The memo key of a schedule of the stream whose places are sl[0..n_ctx
 * + n) (for a loop, also the places of the passes after the first, as
 * run_schedule() makes them), in sp's buffers (*out); its length in
 * words, or 0 if it has none (no memo, full runs, an instruction without
 * a number).
 */
size_t sched_memo_key(struct sched_prep *sp, const struct slot *sl, size_t n_ctx, size_t n,
		      enum sched_entry_kind kind, uint64_t **out);
/*
 * Fills out's out->n instructions and out->iterations from the schedule
 * remembered for key (the run that made it set their timing and flags as
 * this one does); false if there is none.
 */
bool sched_memo_get(const uint64_t *key, size_t n_key, struct block_schedule *out);
/* Remembers schedule s (as finished) for key. */
void sched_memo_put(const uint64_t *key, size_t n_key, const struct block_schedule *s);

/* sched-ctx.c */

/* The machine kept after context idx[0..n), or NULL. */
struct ctx_snap *sched_ctx_find(const struct sim_buffers *b, const uint32_t *idx, size_t n);
/* Keeps the machine s, after all of context idx[0..n) but its last. */
void sched_ctx_save(struct sim_buffers *b, const struct sim *s, const uint32_t *idx, size_t n);
/* Puts the machine (a new stream's, ring clear) in the state c kept. */
void sched_ctx_restore(struct sim *s, const struct ctx_snap *c);
void sched_ctx_free(struct ctx_snap *c);

#endif
