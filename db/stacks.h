/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/stacks.h - an epoch's call stacks: a deduplicated stack table and the
 * samples per (stack, thread, event), stored as the blob `stacks`
 * (docs/db-format.md, "Stacks").
 *
 * A frame is (image, offset), as in profiles: a file offset for files, the
 * address for the kernel.  A stack is a list of frames, the sampled one
 * first, each caller after its callee; callers' frames hold the return
 * address minus one (an address inside the call instruction), so that a
 * frame always falls in the procedure that was executing.  Kernel frames
 * come first when the sample was taken in the kernel, then the user frames
 * of the same thread.  A thread is (tgid, tid, comm): process, thread,
 * process name.
 *
 *   struct stack_table t;
 *   stack_table_init(&t);
 *   uint32_t f[2] = { stack_table_frame(&t, stack_table_image(&t, "kernel"), 0xffff...),
 *                     stack_table_frame(&t, stack_table_image(&t, key), 0x1234) };
 *   uint32_t s = stack_table_stack(&t, f, 2, STACK_END_COMPLETE);
 *   stack_table_add(&t, s, stack_table_thread(&t, 42, 43, "gzip"), EVENT_CYCLES, 1);
 *   db_stacks_merge(db, seq, &t);            // read-merge-write, atomically
 *   stack_table_release(&t);
 *
 * Everything is interned: adding the same frame, stack or thread twice
 * gives the same number.  The table owns its strings.
 */
#ifndef DCPI_DB_STACKS_H
#define DCPI_DB_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/event.h"
#include "core/idmap.h"
#include "core/u64map.h"

struct db;
struct strbuf;

/* Epoch files: a base "stacks-G" and deltas "stacks-G-N" (db_stacks_merge). */
#define STACKS_NAME "stacks"
/* Deltas written before they are merged into a new base. */
#define STACKS_SEGMENTS 8
#define STACKS_MAGIC "DCPISTAK"
#define STACKS_VERSION 1
/* Frames of one stack: the kernel's 127 and the unwinder's 128, with room. */
#define STACK_MAX_DEPTH 512
#define STACK_COMM_MAX 16
/* Threads of one table (the sample key has 28 bits for them). */
#define STACK_MAX_THREADS (1u << 28)

/* How the walk of a stack ended: whether it reached the thread's entry. */
enum stack_end {
	STACK_END_COMPLETE,     /* the outermost frame (its CFI says so, or a 0 return address) */
	STACK_END_TRUNCATED,    /* the copy of the stack ended, or the depth limit */
	STACK_END_NO_CFI,       /* a frame without unwind information (and no frame pointer) */
	STACK_END_BAD,          /* a rule the unwinder does not follow, or no progress */
	STACK_END_KERNEL,       /* a kernel thread: kernel frames only */
	STACK_END_FP,           /* walked by frame pointers: whether it is whole is unknown */
	STACK_END_NONE,         /* no stack came with the sample: its pc only */
	STACK_END_NO_TABLE,     /* a frame in a binary without an unwind table (yet: dcpid makes them as it goes) */
	STACK_END__COUNT
};

/* "complete", "truncated", "no-cfi", "bad", "kernel", "fp", "none", "no-table". */
const char *stack_end_name(enum stack_end e);

struct stack_frame {
	uint32_t image;         /* index into images */
	uint64_t offset;
};

struct stack_rec {
	uint32_t first;         /* its frames are ids[first .. first + depth) */
	uint32_t depth;
	uint8_t end;            /* enum stack_end */
};

struct stack_thread {
	uint32_t tgid, tid;
	uint32_t comm;          /* index into comms */
};

struct stack_sample {
	uint32_t stack, thread;
	uint8_t event;          /* enum dcpi_event */
	uint64_t count;
};

struct stack_table {
	char **images;                  /* image keys */
	size_t n_images, a_images;
	char **comms;
	size_t n_comms, a_comms;
	struct stack_frame *frames;
	size_t n_frames, a_frames;
	uint32_t *ids;                  /* the frames of every stack, one after the other */
	size_t n_ids, a_ids;
	struct stack_rec *stacks;
	size_t n_stacks, a_stacks;
	struct stack_thread *threads;
	size_t n_threads, a_threads;
	struct stack_sample *samples;
	size_t n_samples, a_samples;
	uint64_t total;                 /* samples of every event */
	/* private: the indexes */
	struct idmap image_ix, comm_ix, frame_ix, stack_ix, thread_ix;
	struct u64map sample_ix;
};

void stack_table_init(struct stack_table *t);
void stack_table_release(struct stack_table *t);
/* Empties the table, keeping its storage. */
void stack_table_clear(struct stack_table *t);

uint32_t stack_table_image(struct stack_table *t, const char *key);
uint32_t stack_table_comm(struct stack_table *t, const char *comm);
uint32_t stack_table_frame(struct stack_table *t, uint32_t image, uint64_t offset);
/* frames: n (1..STACK_MAX_DEPTH) frame numbers, the sampled frame first. */
uint32_t stack_table_stack(struct stack_table *t, const uint32_t *frames, size_t n,
			   enum stack_end end);
/* The thread (tgid, tid, comm); UINT32_MAX once STACK_MAX_THREADS exist. */
uint32_t stack_table_thread(struct stack_table *t, uint32_t tgid, uint32_t tid, const char *comm);
void stack_table_add(struct stack_table *t, uint32_t stack, uint32_t thread, enum dcpi_event ev,
		     uint64_t count);

/* The frame numbers of stack s. */
static inline const uint32_t *stack_table_frames(const struct stack_table *t, uint32_t s)
{
	return t->ids + t->stacks[s].first;
}

/* Adds every sample of src to dst. */
void stack_table_merge(struct stack_table *dst, const struct stack_table *src);

/*
 * The blob payload (docs/db-format.md, "Stacks"), in its canonical order
 * (sorted, so that equal tables encode to equal bytes); *count is the
 * number of samples records.
 */
void stack_table_encode(const struct stack_table *t, struct strbuf *out, uint32_t *count);

/*
 * Decodes and validates a payload into t (initialised here).  Returns 0,
 * or -1 with *why set (t is then empty).
 */
int stack_table_decode(struct stack_table *t, const void *payload, size_t len, uint32_t count,
		       const char **why);

/*
 * Reads the epoch's stacks (its base and deltas, merged).  Returns 0; 1 if
 * the epoch has none (t is empty); -1 if the epoch cannot be read
 * (reported).  A file that is unreadable or invalid is reported and
 * recorded (db/damage.h) and the table is what the others hold (empty if
 * none could be read): 0 still, the report then says it is partial.
 */
int db_stacks_load(struct db *db, uint32_t seq, struct stack_table *t);

/*
 * Writer: adds t's samples to the epoch's stacks as a new delta file
 * (atomic and durable; a write costs what it adds).  Every STACKS_SEGMENTS
 * deltas, and with final (the epoch ends), the base and its deltas are
 * merged into a new base; an invalid file met then is quarantined.
 */
int db_stacks_merge(struct db *db, uint32_t seq, const struct stack_table *t, bool final);

/* Approximate bytes of memory held. */
size_t stack_table_bytes(const struct stack_table *t);

#endif
