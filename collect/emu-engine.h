/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/emu-engine.h - following a thread in an emulator (unicorn 2,
 * QEMU's x86-64 translator), in the unprivileged worker: a burst from a
 * stopped thread's state, and a window from where a burst ended through
 * the state of two later samples (collect/emu-proto.h says what goes in
 * and out).
 *
 * Memory comes from a pager, page by page, as the emulated code touches it
 * (the worker's pager asks the collector, which reads the stopped process;
 * a test's pager reads its own memory).  Guest memory lives in 2 MiB
 * chunks mapped into the engine from host memory kept inaccessible until
 * a page is first touched: the fault (SIGSEGV in the worker) fetches it.
 * Mapping a region in unicorn costs a re-render of its memory map (about
 * 200 us a call, measured), so a page at a time would cost more than the
 * emulation; a chunk is mapped once.  Stores change only this copy.
 *
 * An engine serves one address space (its `space` identity): translations
 * and chunks are kept from one burst to the next, the pages themselves are
 * fetched again (code pages are compared, and their translations dropped
 * if they changed).  A burst, emulated after its thread went on:
 *   - in detail for its first `detail` instructions (a hook on every
 *     instruction and memory access): the values each instruction writes,
 *     load/store conflicts, raw steps;
 *   - then by blocks only (a hook per translation block, the instructions
 *     in a block counted once with capstone, one per memory access that
 *     fetches pages not got yet): the path;
 *   - until the limit, the time cap, a system call, an instruction the
 *     emulator lacks (popcnt and pclmulqdq, which unicorn 2.0.1 refuses,
 *     are done here), a page that cannot be read, or a fault.
 */
#ifndef DCPI_COLLECT_EMU_ENGINE_H
#define DCPI_COLLECT_EMU_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collect/emu-proto.h"

struct emu_engine;

/*
 * Where pages come from: fetch(ctx, addr, n) must call emu_engine_fill()
 * for each of the n pages (data NULL: unreadable) before it returns, and
 * return 0; -1 if it cannot (the burst then ends as unreadable).  It may
 * be called from a signal handler (a fault in guest memory).
 */
struct emu_pager {
	int (*fetch)(void *ctx, struct emu_engine *e, const uint64_t *addr, size_t n);
	/*
	 * A read(2) the thread made of a file the burst knows (its position
	 * tracked from the stop): up to count bytes of fd at offset into buf;
	 * returns the bytes read (0 at the end of the file), -1 if it cannot.
	 * NULL: no reads are passed.
	 */
	int64_t (*read)(void *ctx, uint32_t fd, uint64_t offset, uint64_t count, uint8_t *buf);
	void *ctx;
};

/* Guest memory an engine holds at most (pages filled in one burst or window). */
#define EMU_MAX_PAGES 16384

/* Installs the fault handler (once per process); -1 if it cannot. */
int emu_engine_setup(void);

/* A new engine for address space `space`; NULL if unicorn cannot start. */
struct emu_engine *emu_engine_new(uint64_t space, const struct emu_pager *pager);
void emu_engine_free(struct emu_engine *e);
uint64_t emu_engine_space(const struct emu_engine *e);
/* Gives a fresh engine (never used) its address space. */
void emu_engine_bind(struct emu_engine *e, uint64_t space);

/* The pager's answer for one page. */
void emu_engine_fill(struct emu_engine *e, uint64_t addr, const uint8_t *data);

/*
 * Prepares a burst: req's state, the copy of memory made at its stop
 * (req->snap: used before any page of the process, which has run on), the
 * first pages it will want; the emulation waits for emu_engine_follow(),
 * when the thread's later samples are known.
 */
void emu_engine_prepare(struct emu_engine *e, const struct emu_burst_req *req);
/* True if a burst is prepared; forgets it. */
bool emu_engine_prepared(const struct emu_engine *e);
void emu_engine_drop_prepared(struct emu_engine *e);

/*
 * Follows the prepared burst from its stop: its part (req's limit, the
 * first `detail` instructions in detail: burst, as emu_result says) and,
 * through it and on, the trail's points in turn (every general register
 * and rip equal where it passes a point's rip), counting the instructions
 * between them, and the blocks run from point req->count_from on; ends at
 * the first point not reached (a system call, the limit, a fault...:
 * trail->miss).  Past the burst's part it runs in an engine with a hook
 * per block only: pages not filled are made inaccessible and fetched by
 * their faults.  req NULL: the burst alone.  Pages other than the copy
 * come from the pager; how many of them were data (not code) is
 * burst->live, trail->live: a burst that read none followed the thread as
 * it was, and one a later point matched followed it right.
 */
void emu_engine_follow(struct emu_engine *e, const struct emu_trail_req *req, struct emu_result *burst,
		       struct emu_trail_result *trail);

/* A burst alone, prepared and followed (emu_result_release). */
void emu_engine_burst(struct emu_engine *e, const struct emu_burst_req *req,
		      struct emu_result *out);

#endif
