/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/emu-proto.h - what the collector and its emulating worker
 * (collect/emu-worker.h) say to each other, as pure encoders and decoders.
 *
 *   collector (root, the tracer)              worker (nobody, seccomp, unicorn)
 *     BURST: a thread's state at a stop,  ---->   prepares it (its first pages)
 *            the memory copied then
 *     PAGES: the pages asked for          ---->
 *                                         <----   PAGE_REQ: pages it needs
 *     DATA: the bytes of a file read      ---->
 *                                         <----   READ_REQ: a read the thread made
 *                                         <----   PREPARED: ready for the trail
 *     TRAIL: the thread's later samples   ---->   follows it from the stop through them
 *                                         <----   RESULT: the burst's path, values,
 *                                                 conflicts, its end
 *                                         <----   TRAIL_RESULT: how far it matched, the
 *                                                 instructions between each two
 *     DROP: forget the prepared burst     ---->
 *
 * Every message is a 16-byte header (magic, type, sequence number, payload
 * length, little-endian) and a payload of varints (pages: their 4096 bytes
 * raw).  Both directions are bounded and validated: the worker runs another
 * program's code, so what it sends is untrusted input to the root
 * collector; what the collector sends is checked too.  Both decoders are
 * fuzzed (tests/fuzz/fuzz-emu-reply, fuzz-emu-request).
 */
#ifndef DCPI_COLLECT_EMU_PROTO_H
#define DCPI_COLLECT_EMU_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/paths.h"
#include "db/values.h"

struct strbuf;

#define EMU_REQ_MAGIC 0x51756d45u       /* "EmuQ": collector to worker */
#define EMU_REP_MAGIC 0x50756d45u       /* "EmuP": worker to collector */
#define EMU_HEADER_SIZE 16
#define EMU_PAGE_SIZE 4096
/* The largest payload either side accepts. */
#define EMU_MAX_PAYLOAD ((size_t)16 << 20)
/* Pages one request may ask for. */
#define EMU_MAX_PAGE_REQ 256
/* Pages of memory copied at a stop that a burst may carry (collect/stopmem.h). */
#define EMU_MAX_SNAP 64
/* Pages a result names as fetched from the live process (the next stop's copy). */
#define EMU_MAX_WORKING 64
/* Files a burst may read from (their position at the stop known), and a read's bytes at most. */
#define EMU_MAX_FILES 4
#define EMU_MAX_READ ((uint64_t)1 << 20)
/* Samples a trail may hold, and the instructions between two of them at most. */
#define EMU_MAX_TRAIL 128
#define EMU_MAX_SEGMENT ((uint64_t)1 << 36)
/* The most records of each kind a result may hold. */
#define EMU_MAX_RECORDS 65536
/* The longest burst the collector asks for; steps of a raw trace at most. */
#define EMU_MAX_LIMIT (1u << 24)
#define EMU_MAX_TRACE 4096
/* User addresses end here (x86-64, 4-level page tables... and 5-level). */
#define EMU_USER_END ((uint64_t)1 << 56)

enum emu_msg {
	EMU_MSG_BURST = 1,
	EMU_MSG_PAGES,
	EMU_MSG_TRAIL,
	EMU_MSG_DROP,
	EMU_MSG_DATA,
	EMU_MSG_PAGE_REQ = 16,
	EMU_MSG_RESULT,
	EMU_MSG_TRAIL_RESULT,
	EMU_MSG_PREPARED,
	EMU_MSG_READ_REQ,
	EMU_MSG_HELLO = 32,     /* the worker's first message: it runs, sealed, or why not */
};

struct emu_header {
	uint32_t magic, type, seq, len;
};

/* Appends a header to out; its length is fixed up by emu_msg_finish(). */
void emu_msg_begin(struct strbuf *out, uint32_t magic, enum emu_msg type, uint32_t seq);
/* Sets the length of the message that starts at out->buf + start. */
void emu_msg_finish(struct strbuf *out, size_t start);
/*
 * Reads a header from buf (at least EMU_HEADER_SIZE bytes): 0, or -1 if its
 * magic is not magic or its length is over EMU_MAX_PAYLOAD.
 */
int emu_header_decode(const void *buf, uint32_t magic, struct emu_header *h);

/* A thread's user state, as ptrace gives it. */
struct emu_state {
	uint64_t rip;
	uint64_t regs[VALUES_NREGS];    /* db/values.h order: 16 general registers, rflags */
	uint64_t fs_base, gs_base;
	uint8_t xmm[16][16];
	uint32_t mxcsr;
	uint16_t fcw, fsw;
	uint8_t ftw;                    /* the abridged tag byte (FXSAVE's): bit i, st(i) in use */
	uint8_t st[8][10];              /* x87 registers, 80 bits each */
};

/* ---- collector to worker ------------------------------------------------------------ */

struct emu_page {
	uint64_t addr;          /* page-aligned */
	bool ok;                /* readable: data holds its bytes */
	const uint8_t *data;    /* EMU_PAGE_SIZE bytes (into the message), NULL if !ok */
};

/* A file the thread has open (a regular one), and its position at the stop. */
struct emu_file {
	uint32_t fd;
	uint64_t pos;
};

struct emu_burst_req {
	uint64_t space;         /* the address space's identity: the worker's caches follow it */
	struct emu_state st;
	uint32_t limit;         /* instructions to follow at most (1..EMU_MAX_LIMIT) */
	uint32_t detail;        /* of them, followed in detail (values, addresses) */
	uint32_t trace;         /* raw steps wanted back (<= detail, <= EMU_MAX_TRACE) */
	uint32_t time_us;       /* the time cap: the worker's CPU (EMU_WALL_FACTOR times on the clock) */
	bool keep;              /* a trail follows (else the burst is followed at once) */
	/*
	 * Memory as it was at the stop (distinct pages, in order of address;
	 * readable ones only): the worker uses these before asking for any
	 * page of the process, which has run on since.  Decoded, data points
	 * into the payload.
	 */
	size_t n_snap;
	const struct emu_page *snap;
	/*
	 * Files whose reads the emulation may pass: a read(2) of fd in the
	 * trail asks the collector for the bytes at the position it tracks
	 * from pos (READ_REQ), which reads them from the same file.
	 */
	size_t n_files;
	struct emu_file files[EMU_MAX_FILES];
};

/* A sample's user state: where it was and its registers (values order). */
struct emu_point {
	uint64_t rip;
	uint64_t regs[VALUES_NREGS];
};

/*
 * A sample of a trail: its state, the code it is in ([lo, hi): its image's
 * mapping), and flags: it came one sampling period of the thread after the
 * one before (EMU_POINT_PERIOD: the emulation may run ahead to near it);
 * it was taken in the kernel (EMU_POINT_KERNEL: its registers as at the
 * kernel's entry, rax not compared).
 */
struct emu_trail_point {
	struct emu_point p;
	uint64_t lo, hi;
	uint32_t flags;
};
#define EMU_POINT_PERIOD 1u
#define EMU_POINT_KERNEL 2u
#define EMU_NOT_PASSED 255

/*
 * The samples of a stopped thread after it went on, in order: the
 * emulation goes from the prepared burst's stop through each in turn
 * (every general register and rip equal where it passes its rip).  Block
 * executions are counted from point count_from to the last one matched.
 */
struct emu_trail_req {
	uint32_t n;             /* 0..EMU_MAX_TRAIL (0: the burst alone) */
	struct emu_trail_point *pt;     /* decoded: allocated (emu_trail_req_release) */
	uint32_t count_from;    /* < n, or 0 */
	uint64_t limit;         /* instructions from the stop to the last point at most */
	uint64_t segment;       /* ...from one point to the next (and to the first) at most */
	uint32_t time_us;       /* as a burst's */
};

/* A run's cap on the clock: this many times its cap on the worker's CPU time. */
#define EMU_WALL_FACTOR 4

void emu_encode_burst(struct strbuf *out, uint32_t seq, const struct emu_burst_req *r);
/* Pages: n of them, data of the readable ones copied in. */
void emu_encode_pages(struct strbuf *out, uint32_t seq, const struct emu_page *p, size_t n);
void emu_encode_trail(struct strbuf *out, uint32_t seq, const struct emu_trail_req *r);
void emu_encode_drop(struct strbuf *out, uint32_t seq);

/* Fills r; its snapshot's pages go into snap (room for EMU_MAX_SNAP), their data into payload. */
int emu_decode_burst(const void *payload, size_t len, struct emu_burst_req *r,
		     struct emu_page *snap, const char **why);
/* Fills p (room for max) with the pages; their data points into payload. */
int emu_decode_pages(const void *payload, size_t len, struct emu_page *p, size_t max, size_t *n,
		     const char **why);
int emu_decode_trail(const void *payload, size_t len, struct emu_trail_req *r, const char **why);
void emu_trail_req_release(struct emu_trail_req *r);

/* ---- worker to collector ------------------------------------------------------------ */

struct emu_block_rec {
	uint64_t pc;
	uint32_t bytes, insns;
	uint64_t count;
};

struct emu_edge_rec {
	uint64_t from;          /* pc of a block's last instruction */
	uint64_t to;            /* pc of the next block */
	uint64_t count;
};

struct emu_insn_rec {           /* an instruction followed in detail */
	uint64_t pc;
	uint64_t execs;
};

struct emu_value_rec {          /* a value an instruction wrote */
	uint64_t pc;
	uint8_t reg;            /* enum values_reg, a general register */
	uint64_t value;
	uint64_t count;
};

struct emu_conflict_rec {
	uint64_t load, store;   /* pcs */
	uint8_t kind;           /* enum paths_conflict_kind */
	uint64_t count;
};

struct emu_step {               /* a raw step: where, and the registers before */
	uint64_t pc;
	uint64_t regs[VALUES_NREGS];
};

struct emu_result {
	uint8_t end;            /* enum paths_end */
	uint64_t end_pc;        /* the instruction not followed, or the next one */
	char mnemonic[32];      /* of an instruction the emulator lacks ("" if none) */
	uint64_t insns;         /* instructions followed */
	uint64_t detailed;      /* of them, in detail */
	uint64_t pages;         /* pages it read */
	uint64_t live;          /* of them, data pages not in the snapshot: read after the stop */
	bool kept;              /* (unused: 0) */
	uint64_t working[EMU_MAX_WORKING];      /* pages it read after the stop (for the next copy) */
	size_t n_working;
	struct emu_block_rec *blocks;
	size_t n_blocks;
	struct emu_edge_rec *edges;
	size_t n_edges;
	struct emu_insn_rec *insn;
	size_t n_insn;
	struct emu_value_rec *values;
	size_t n_values;
	struct emu_conflict_rec *conflicts;
	size_t n_conflicts;
	struct emu_step *steps;
	size_t n_steps;
};

struct emu_trail_result {
	uint32_t matched;       /* points matched, in order: 0..n */
	uint8_t miss;           /* enum paths_miss: why not all of them */
	uint64_t to_first;      /* instructions from the stop to point 0 */
	uint64_t *at;           /* [matched]: instructions from point 0 to point k (at[0] = 0) */
	uint64_t *here;         /* [matched]: for k >= 1, of those between points k-1 and k,
				   the ones in point k-1's [lo, hi) (here[0] = 0) */
	uint64_t end_pc;
	char mnemonic[32];      /* the instruction it ended at ("syscall-0": the call's number) */
	uint8_t closest;        /* at the point missed: the fewest registers that differed at
				   a pass of its rip (EMU_NOT_PASSED: never passed) */
	int32_t read_fd;        /* the fd of a read(2) it could not pass, or -1 */
	uint64_t live;          /* data pages read from the live process during the trail */
	struct emu_block_rec *blocks;   /* executions from point count_from to the last matched */
	size_t n_blocks;
};

void emu_encode_page_req(struct strbuf *out, uint32_t seq, const uint64_t *addr, size_t n);
/* A message with no payload (DROP, PREPARED). */
void emu_encode_empty(struct strbuf *out, uint32_t magic, enum emu_msg type, uint32_t seq);
/* A read the thread made: count bytes of fd at offset. */
void emu_encode_read_req(struct strbuf *out, uint32_t seq, uint32_t fd, uint64_t offset,
			 uint64_t count);
int emu_decode_read_req(const void *payload, size_t len, uint32_t *fd, uint64_t *offset,
			uint64_t *count, const char **why);
/* What it read: n bytes (0: the end of the file; -1: none could be read), data into payload. */
void emu_encode_data(struct strbuf *out, uint32_t seq, int64_t n, const void *data);
int emu_decode_data(const void *payload, size_t len, uint64_t max, int64_t *n, const uint8_t **data,
		    const char **why);
void emu_encode_result(struct strbuf *out, uint32_t seq, const struct emu_result *r);
void emu_encode_trail_result(struct strbuf *out, uint32_t seq, const struct emu_trail_result *r);

int emu_decode_page_req(const void *payload, size_t len, uint64_t *addr, size_t max, size_t *n,
			const char **why);
/* Fills r (its lists allocated: emu_result_release); 0, or -1 with *why (r then empty). */
int emu_decode_result(const void *payload, size_t len, struct emu_result *r, const char **why);
/* n: the trail's points (matched and the arrays are bounded by it). */
int emu_decode_trail_result(const void *payload, size_t len, uint32_t n,
			    struct emu_trail_result *r, const char **why);

void emu_result_release(struct emu_result *r);
void emu_trail_result_release(struct emu_trail_result *r);

/*
 * Every count of an answer bounded by the request it answers (the decoders
 * bound them by the protocol's maxima only): a burst's result by its
 * limits (instructions, detail, trace: the executions, values, conflicts
 * and edges it counts add up to no more than the instructions asked for
 * in detail, or at all, times what one instruction can do), a trail's by
 * its instructions.  Loops in the
 * collector that a count drives stay within what was asked for.  0, or -1
 * with *why.
 */
int emu_result_check(const struct emu_result *r, const struct emu_burst_req *asked,
		     const char **why);
/* The memory accesses of one instruction that conflicts are counted for, at most (the bound's). */
#define EMU_MAX_ACCESSES 8
int emu_trail_result_check(const struct emu_trail_result *r, const struct emu_trail_req *asked,
			   const char **why);

/* ---- the worker's hello ------------------------------------------------------------- */

/*
 * The worker's first message, before it reads anything: its protocol
 * version and whether it can emulate.  Under a unit with
 * MemoryDenyWriteExecute= (a seccomp filter refusing writable and
 * executable memory, inherited by a forked worker) unicorn cannot make its
 * code buffer: EMU_HELLO_NO_EXEC.  The collector takes the sender's pid
 * from the kernel (SO_PASSCRED), not from the payload.
 */
#define EMU_PROTO_VERSION 1
enum emu_hello_status {
	EMU_HELLO_OK,
	EMU_HELLO_NO_EXEC,              /* no writable and executable memory */
	EMU_HELLO_NO_ENGINE,            /* the emulator would not start */
	EMU_HELLO__COUNT,
};

void emu_encode_hello(struct strbuf *out, enum emu_hello_status status);
int emu_decode_hello(const void *payload, size_t len, enum emu_hello_status *status,
		     const char **why);

#endif
