/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/callchain.h - call stacks at collection time (dcpirun -g, dcpid
 * -g): what the events must record, unwinding each sample's stack as it is
 * handled, and the epoch's stack table (db/stacks.h).
 *
 *   --call-graph fp     the kernel walks the frame-pointer chain
 *                       (PERF_SAMPLE_CALLCHAIN, kernel and user)
 *   --call-graph dwarf  the kernel gives its own frames (CALLCHAIN), the
 *                       user registers (REGS_USER: ip, sp, bp) and a copy
 *                       of the top of the user stack (STACK_USER, 12 KiB by
 *                       default); the collector unwinds it at once with the
 *                       binaries' .eh_frame, through unwind tables an
 *                       unprivileged worker builds (collect/unwind-worker.h),
 *                       and keeps the frames, never the copy.  Frames
 *                       without CFI (JIT code) fall back to the frame pointer.
 *
 * Samples are handled in time order (collect/order.h), so every frame
 * resolves against the mappings of the sample's own time.  The stack table
 * collects every sample of the epoch with its thread (tgid, tid, process
 * name): that is also what per-process reports (dcpiprof --by) read.  It
 * is merged into the epoch's `stacks` blob at each write and then emptied.
 */
#ifndef DCPI_COLLECT_CALLCHAIN_H
#define DCPI_COLLECT_CALLCHAIN_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/procs.h"
#include "db/stacks.h"
#include "unwind/utable.h"
#include "unwind/unwind.h"

struct store;
struct perf_rec;
struct epoch_meta;
struct strbuf;
struct order_queue;
struct perf_event_header;

/*
 * CALLGRAPH_THREADS records no stack, only each sample's thread with its
 * pc (--threads: per-process reports without the cost of stacks).
 */
enum callgraph_mode { CALLGRAPH_NONE, CALLGRAPH_THREADS, CALLGRAPH_FP, CALLGRAPH_DWARF };

/*
 * 12 KiB: perf's 8 KiB default leaves 3-5% of python3's stacks truncated
 * (its evaluation loop's frames are large); 12 KiB, 1%; 16 KiB, 0.3%.
 */
#define CALLGRAPH_DEFAULT_STACK 12288
#define CALLGRAPH_MAX_STACK 65528
/*
 * Ring pages per CPU when stacks are copied (unless --ring-pages says):
 * ~12.5 KiB a sample, so 4 MiB hold ~330 samples, 160 ms at 2000
 * samples/s: while a table is made for a process tree, or the daemon
 * competes with everything for the CPU.
 */
#define CALLGRAPH_DWARF_RING_PAGES 1024
#define CALLGRAPH_DWARF_RING_PAGES_SYSTEM 1024
/* Unwind tables kept in memory, at most (least recently used go first). */
#define CALLGRAPH_TABLE_BYTES ((size_t)64 << 20)

struct callchain_opts {
	enum callgraph_mode mode;
	uint32_t stack_size;        /* bytes of user stack copied per sample (dwarf) */
};

/*
 * Parses --call-graph's argument: "fp", "dwarf" or "dwarf,SIZE" (bytes, a
 * multiple of 8, 64 to 65528).  -1 with a message if bad.
 */
int callgraph_parse(struct callchain_opts *o, const char *arg);

struct callchain_stats {
	uint64_t samples;               /* samples with a stack recorded */
	uint64_t ends[STACK_END__COUNT];/* user stacks by how their walk ended */
	uint64_t frames;                /* frames recorded */
	uint64_t fp_steps;              /* user frames found by the frame-pointer fallback */
	uint64_t early;                 /* samples unwound as they were read (no stack copy kept) */
	uint64_t stale;                 /* of those, dropped to their pc: a frame's mapping changed */
	uint64_t tables, table_failures, table_evictions;
	uint64_t tables_cached;         /* of tables: read from the database (db_unwind_load) */
	uint64_t table_waits_expired;   /* samples that went on without a table being made */
	uint64_t dropped;               /* samples not recorded (too many threads) */
	int64_t unwind_ns;              /* time spent unwinding and recording */
	int64_t table_ns;               /* time the collector waited for tables */
};

struct callchain;

/*
 * A call-graph recorder for the collector.  In dwarf mode it starts the
 * unwinding worker (if it cannot, user stacks fall back to the frame
 * pointer and a warning says so); offline (tests) it starts none and takes
 * tables from callchain_set_table().  The first sample that needs a table
 * still being made waits for it at most max_wait_ns (dcpirun: seconds, its
 * samples wait in the rings; dcpid: milliseconds, the whole machine's do);
 * samples that come meanwhile go on without it (frame pointers, else their
 * walk stops there).
 */
struct callchain *callchain_new(const struct callchain_opts *o, struct procs *procs,
				struct store *store, bool offline, int64_t max_wait_ns);
void callchain_free(struct callchain *cg);

/*
 * Unwind tables are made ahead, as binaries are mapped (callchain_mapped()
 * for an MMAP2 record of pid at start), else when a sample first needs
 * them.  callchain_poll() takes the answers that arrived (call it each
 * round; callchain_pollfd() is the descriptor to wait on, -1 when none is
 * awaited).
 */
void callchain_mapped(struct callchain *cg, uint32_t pid, uint64_t start);
void callchain_poll(struct callchain *cg);
int callchain_pollfd(const struct callchain *cg);

/* Adds what the events must record to attr (sample_type, registers, stack size). */
void callchain_attr(const struct callchain *cg, struct perf_event_attr *attr);

/*
 * Queues a sample record for the time order (collect/order.h).  Its user
 * stack is unwound at once, from the ring, with the address spaces as they
 * are: if the walk reaches the thread's entry, the record is queued with
 * the frames in place of the stack copy, and callchain_sample takes them
 * if every frame still maps to the same image and offset (else the stack
 * is bad: a mapping changed between the read and the record's turn).
 * Otherwise the record is queued without the part of its stack copy the
 * kernel left unused (the copy has the size asked for, its dyn_size says
 * how much of it is stack), and unwound in its turn.  Returns false for a
 * record it leaves to the caller (not a sample, no stack copy, or little
 * to drop).
 */
bool callchain_queue(struct callchain *cg, struct order_queue *q, int cpu, uint64_t time,
		     const struct perf_event_header *h, uint64_t sample_type, uint64_t regs_mask);

/*
 * Records one sample (rec, len: the raw record, r: its parse) of event
 * ev.  sample_type and regs_mask are those of the events (the attr).
 */
void callchain_sample(struct callchain *cg, const struct perf_rec *r, const void *rec, size_t len,
		      uint64_t sample_type, uint64_t regs_mask, unsigned ev);

/*
 * A new or continued epoch begins: counters restart, and the kernel
 * addresses of a continued epoch's stacks are noted for its kallsyms
 * subset.
 */
void callchain_begin(struct callchain *cg);

/* True if samples wait to be written and have waited at least interval_ns. */
bool callchain_due(const struct callchain *cg, int64_t now, int64_t interval_ns);

/*
 * Adds the stacks recorded since the last write to the epoch's stack table
 * (after storing the image index they need) and empties the table; final
 * (the epoch ends) merges the epoch's files into one.  Returns 0, or -1
 * (reported; the stacks are kept for the next try).
 */
int callchain_write(struct callchain *cg, bool final);

/* Sets the epoch's stack counters (stacks, stacks_complete, ...) in m. */
void callchain_fill_meta(struct callchain *cg, struct epoch_meta *m);

const struct callchain_stats *callchain_stats(const struct callchain *cg);
size_t callchain_bytes(const struct callchain *cg);

/* dcpictl status: a line of text, or a "stacks" member of its JSON object. */
struct json_writer;
void callchain_status(const struct callchain *cg, struct strbuf *out);
/* The unwinding worker's pid (0 if none runs): dcpictl status counts its CPU apart. */
pid_t callchain_worker_pid(const struct callchain *cg);
void callchain_status_json(const struct callchain *cg, struct json_writer *w);

/* Tests: the table of image (a procs image number), instead of the worker's. */
void callchain_set_table(struct callchain *cg, uint32_t image, const struct utable *t);

#endif
