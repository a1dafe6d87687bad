/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/emu-memory.c - the emulator engine's guest memory
 * (collect/emu-engine.h says why it is so): 2 MiB chunks mapped into both
 * unicorn engines over host memory kept inaccessible until a page is
 * touched, its pages fetched from the pager on a fault (SIGSEGV) or before
 * an access, fetched again at each burst, and code pages checked for
 * changes.
 */
#include "config.h"
#include "collect/emu-engine-int.h"
#include "core/crc32c.h"
#include "core/xalloc.h"

#include <signal.h>
#include <string.h>
#include <sys/mman.h>

/* Pages an engine keeps backed by memory between bursts at most (32 MiB). */
#define MAX_RESIDENT 8192
#define MAX_CODE_CHECK 160

/* ---- memory ------------------------------------------------------------------------- */

struct chunk *emu_chunk_of(struct emu_engine *e, uint64_t addr)
{
	uint64_t base = addr & ~(CHUNK_SIZE - 1);

	for (size_t i = 0; i < e->n_chunks; i++)
		if (e->chunks[i].guest == base)
			return &e->chunks[i];
	return NULL;
}

static struct chunk *chunk_of_host(struct emu_engine *e, const void *p)
{
	for (size_t i = 0; i < e->n_chunks; i++) {
		struct chunk *c = &e->chunks[i];

		if ((const uint8_t *)p >= c->host && (const uint8_t *)p < c->host + CHUNK_SIZE)
			return c;
	}
	return NULL;
}

/* Maps the chunk holding addr into the engine, its pages inaccessible; NULL if it cannot. */
struct chunk *emu_map_chunk(struct emu_engine *e, uint64_t addr)
{
	uint64_t base = addr & ~(CHUNK_SIZE - 1);
	struct chunk *c;
	void *host;

	if (e->n_chunks >= MAX_CHUNKS || base >= EMU_USER_END)
		return NULL;
	host = mmap(NULL, CHUNK_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (host == MAP_FAILED)
		return NULL;
	/* The same host memory in both engines: one copy, whichever runs. */
	if (uc_mem_map_ptr(e->fast, base, CHUNK_SIZE, UC_PROT_ALL, host)) {
		munmap(host, CHUNK_SIZE);
		return NULL;
	}
	if (uc_mem_map_ptr(e->slow, base, CHUNK_SIZE, UC_PROT_ALL, host)) {
		uc_mem_unmap(e->fast, base, CHUNK_SIZE);
		munmap(host, CHUNK_SIZE);
		return NULL;
	}
	c = &e->chunks[e->n_chunks++];
	memset(c, 0, sizeof(*c));
	c->guest = base;
	c->host = host;
	return c;
}

void emu_engine_fill(struct emu_engine *e, uint64_t addr, const uint8_t *data)
{
	struct chunk *c = emu_chunk_of(e, addr);
	size_t i;
	uint8_t *page;

	/* A new chunk can be mapped outside the emulation only (not in a fault). */
	if (!c && (emu_active == e || !(c = emu_map_chunk(e, addr))))
		return;
	i = (size_t)((addr - c->guest) / EMU_PAGE_SIZE);
	if (bit(c->filled, i))
		return;         /* the emulator's copy, stores and all, stays */
	page = c->host + i * EMU_PAGE_SIZE;
	if (!bit(c->open, i) && mprotect(page, EMU_PAGE_SIZE, PROT_READ | PROT_WRITE))
		return;
	set_bit(c->open, i);
	if (!bit(c->resident, i)) {
		set_bit(c->resident, i);
		e->resident++;
	}
	if (data) {
		memcpy(page, data, EMU_PAGE_SIZE);
		if (bit(c->code, i) && c->crc && c->crc[i] != crc32c(0, page, EMU_PAGE_SIZE))
			e->code_changed = true;
	} else {
		memset(page, 0, EMU_PAGE_SIZE);
		set_bit(c->unreadable, i);
	}
	set_bit(c->filled, i);
	e->pages++;
}

/*
 * The pages asked for at a burst's start: the last ones faulted in, a ring
 * of distinct pages (a page stops being asked for once MAX_WORKING others
 * came after it).
 */
static void remember(struct emu_engine *e, uint64_t page)
{
	for (size_t i = 0; i < e->n_working; i++)
		if (e->working[i] == page)
			return;
	if (e->n_working < MAX_WORKING)
		e->n_working++;
	e->working[e->next_working] = page;
	e->next_working = (e->next_working + 1) % MAX_WORKING;
}

/*
 * A new burst sees the process as it is now: every page is fetched again
 * before it is used (the pages in want at once; the others by their faults
 * once emu_protect_unfilled() has made them inaccessible, or, in detail,
 * by emu_refresh() from the hook on every memory access).  Unless the
 * engine holds too much memory, its pages stay backed: it is given back,
 * and they are found again by their faults.
 */
void emu_forget_pages(struct emu_engine *e, const uint64_t *want, size_t n)
{
	bool release = e->resident > MAX_RESIDENT;

	(void)want, (void)n;
	for (size_t i = 0; i < e->n_chunks; i++) {
		struct chunk *c = &e->chunks[i];

		if (release) {
			mprotect(c->host, CHUNK_SIZE, PROT_NONE);
			madvise(c->host, CHUNK_SIZE, MADV_DONTNEED);
			memset(c->resident, 0, sizeof(c->resident));
			memset(c->open, 0, sizeof(c->open));
		}
		memset(c->filled, 0, sizeof(c->filled));
		memset(c->unreadable, 0, sizeof(c->unreadable));
		memset(c->snapped, 0, sizeof(c->snapped));
	}
	if (release)
		e->resident = 0;
	e->pages = 0;
	e->faults = 0;
	e->taint = e->late = false;
}

/*
 * Pages about to be filled made read-write at once, a run of them a call
 * (one system call a page costs what the burst's emulation does).
 */
static void open_pages(struct emu_engine *e, const uint64_t *addr, size_t n)
{
	for (size_t k = 0; k < n;) {
		struct chunk *c = emu_chunk_of(e, addr[k]);
		size_t i, run = 1;
		bool fresh = false;

		if (!c || bit(c->open, (size_t)((addr[k] - c->guest) / EMU_PAGE_SIZE))) {
			k++;
			continue;
		}
		i = (size_t)((addr[k] - c->guest) / EMU_PAGE_SIZE);
		while (k + run < n && addr[k + run] == addr[k] + run * EMU_PAGE_SIZE &&
		       i + run < CHUNK_PAGES && !bit(c->open, i + run))
			run++;
		k += run;
		if (mprotect(c->host + i * EMU_PAGE_SIZE, run * EMU_PAGE_SIZE, PROT_READ | PROT_WRITE))
			continue;
		for (size_t j = i; j < i + run; j++) {
			set_bit(c->open, j);
			fresh |= !bit(c->resident, j);
		}
		/* Memory for them in one call: each first touch of a fresh page is a fault of its own. */
		if (fresh && !madvise(c->host + i * EMU_PAGE_SIZE, run * EMU_PAGE_SIZE, MADV_POPULATE_WRITE))
			for (size_t j = i; j < i + run; j++)
				if (!bit(c->resident, j)) {
					set_bit(c->resident, j);
					e->resident++;
				}
	}
}


/* Where page is in the copy made at the stop, or -1. */
static long stash_index(const struct emu_engine *e, uint64_t page)
{
	size_t lo = 0, hi = e->n_stash;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->stash_addr[mid] < page)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < e->n_stash && e->stash_addr[lo] == page ? (long)lo : -1;
}

/*
 * Asks the pager for n pages, those of the copy made at the stop taken
 * from it instead; those the pager did not give read as nothing
 * (unreadable).
 */
int emu_fetch_pages(struct emu_engine *e, const uint64_t *addr, size_t n)
{
	uint64_t rest[EMU_MAX_PAGE_REQ + EMU_MAX_SNAP];
	size_t m = 0;
	int r = 0;

	open_pages(e, addr, n);
	for (size_t k = 0; k < n; k++) {
		long s = e->n_stash ? stash_index(e, addr[k]) : -1;
		struct chunk *c;

		if (s < 0) {
			if (m < sizeof(rest) / sizeof(rest[0]))
				rest[m++] = addr[k];
			continue;
		}
		emu_engine_fill(e, addr[k], e->stash + (size_t)s * EMU_PAGE_SIZE);
		if ((c = emu_chunk_of(e, addr[k])))
			set_bit(c->snapped, (size_t)((addr[k] - c->guest) / EMU_PAGE_SIZE));
	}
	if (m)
		r = e->pager.fetch(e->pager.ctx, e, rest, m);
	for (size_t k = 0; k < n; k++) {
		struct chunk *c = emu_chunk_of(e, addr[k]);

		if (c && !bit(c->filled, (size_t)((addr[k] - c->guest) / EMU_PAGE_SIZE)))
			emu_engine_fill(e, addr[k], NULL);
	}
	return r;
}

/*
 * The pages to fetch for a fault at addr: it, and the others of its aligned
 * group of 8 (16, then 64 as faults come by the hundreds: a pointer chase
 * over a large set, which would otherwise fault at almost every step; the
 * next ones in a scan) that are not there yet.  A round trip to the
 * collector costs far more than a few pages more in it: on a loaded host
 * both processes wait for a CPU at each turn (measured: 1-3 ms a round
 * trip, 10-30 us to read and send 32 KiB).
 */
static size_t readahead(struct emu_engine *e, struct chunk *c, uint64_t addr, uint64_t *out)
{
	uint64_t page = addr & ~(uint64_t)(EMU_PAGE_SIZE - 1);
	size_t i = (size_t)((page - c->guest) / EMU_PAGE_SIZE), n = 0;
	size_t group = e->faults > 256 ? 64 : e->faults > 64 ? 16 : 8;
	size_t from = i & ~(group - 1), to = from + group;

	/* A scan: the pages after it too. */
	if (page == e->last_fault + EMU_PAGE_SIZE)
		to = i + group;
	e->last_fault = page;
	out[n++] = page;
	/* A page of the copy made at the stop costs no round trip: it alone. */
	if (e->n_stash && stash_index(e, page) >= 0)
		return n;
	e->faults++;
	for (size_t k = from; k < to && k < CHUNK_PAGES; k++)
		if (k != i && !bit(c->filled, k))
			out[n++] = c->guest + k * EMU_PAGE_SIZE;
	return n;
}

static void on_segv(int sig, siginfo_t *si, void *uctx)
{
	struct emu_engine *e = emu_active;
	struct chunk *c = e ? chunk_of_host(e, si->si_addr) : NULL;
	uint64_t addrs[EMU_MAX_PAGE_REQ];
	size_t i, n;

	(void)uctx;
	if (!c) {
		signal(sig, SIG_DFL);   /* not ours: crash as it would have */
		return;
	}
	if (e->pages >= EMU_MAX_PAGES || emu_over_time(e)) {
		/* Out of room or time: the page reads as nothing, and the run stops. */
		i = (size_t)(((const uint8_t *)si->si_addr - c->host) / EMU_PAGE_SIZE);
		e->late = true;
		emu_engine_fill(e, c->guest + i * EMU_PAGE_SIZE, NULL);
		if (bit(c->filled, i))
			return;
		signal(sig, SIG_DFL);
		return;
	}
	i = (size_t)(((const uint8_t *)si->si_addr - c->host) / EMU_PAGE_SIZE);
	remember(e, c->guest + i * EMU_PAGE_SIZE);
	n = readahead(e, c, c->guest + i * EMU_PAGE_SIZE, addrs);
	emu_fetch_pages(e, addrs, n);
	if (bit(c->unreadable, i))
		e->taint = true;
}

/*
 * Before an access to [addr, addr + size): its pages fetched if this burst
 * has not got them yet (with the others of their group).
 */
void emu_refresh(struct emu_engine *e, uint64_t addr, size_t size)
{
	uint64_t end = addr + (size ? size : 1);

	for (uint64_t p = addr & ~(uint64_t)(EMU_PAGE_SIZE - 1); p < end; p += EMU_PAGE_SIZE) {
		struct chunk *c = e->last_chunk;
		uint64_t addrs[EMU_MAX_PAGE_REQ];
		size_t i;

		if (!c || p - c->guest >= CHUNK_SIZE) {
			if (!(c = emu_chunk_of(e, p)))
				continue;       /* not mapped: unicorn's hook maps it */
			e->last_chunk = c;
		}
		i = (size_t)((p - c->guest) / EMU_PAGE_SIZE);
		if (bit(c->filled, i))
			continue;
		/* Past the time cap (pages can take long to come): nothing more, the run stops. */
		if (e->pages >= EMU_MAX_PAGES || emu_over_time(e)) {
			e->late = true;
			emu_engine_fill(e, p, NULL);
			continue;
		}
		remember(e, p);
		emu_fetch_pages(e, addrs, readahead(e, c, p, addrs));
		if (bit(c->unreadable, i))
			e->taint = true;
	}
}

int emu_engine_setup(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	return sigaction(SIGSEGV, &sa, NULL);
}

/* A fault outside every chunk: the page decides whether its chunk is mapped. */
bool emu_on_unmapped(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value,
		     void *ud)
{
	struct emu_engine *e = ud;
	uint64_t page = addr & ~(uint64_t)(EMU_PAGE_SIZE - 1);
	struct chunk *c;
	size_t i;

	(void)uc, (void)type, (void)size, (void)value;
	if (addr >= EMU_USER_END || e->pages >= EMU_MAX_PAGES || !(c = emu_map_chunk(e, addr)))
		return false;
	i = (size_t)((page - c->guest) / EMU_PAGE_SIZE);
	remember(e, page);
	emu_active = NULL;  /* filling outside a fault: mprotect, no recursion */
	emu_fetch_pages(e, &page, 1);
	emu_active = e;
	if (bit(c->unreadable, i)) {
		e->end = PATHS_END_UNREADABLE;
		e->end_pc = e->cur ? e->cur->pc : 0;
		return false;
	}
	return true;
}

/* Marks the pages of a block as code, remembering their contents. */
void emu_mark_code(struct emu_engine *e, uint64_t pc, uint32_t size)
{
	for (uint64_t p = pc & ~(uint64_t)(EMU_PAGE_SIZE - 1); p < pc + size; p += EMU_PAGE_SIZE) {
		struct chunk *c = emu_chunk_of(e, p);
		size_t i;

		if (!c)
			continue;
		i = (size_t)((p - c->guest) / EMU_PAGE_SIZE);
		if (bit(c->code, i) || !bit(c->filled, i))
			continue;
		if (!c->crc)
			c->crc = xcalloc(CHUNK_PAGES, sizeof(*c->crc));
		c->crc[i] = crc32c(0, c->host + i * EMU_PAGE_SIZE, EMU_PAGE_SIZE);
		set_bit(c->code, i);
	}
}

/* True if the distinct, sorted pages of snap hold page. */
static bool in_snap(const struct emu_page *snap, size_t n, uint64_t page)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (snap[mid].addr < page)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && snap[lo].addr == page;
}

/*
 * At a burst's start, before it runs: every page forgotten; the copy made
 * at the stop put in place (memory as the thread had it); and the others
 * worth having at once (rip's, the stack's, the last burst's, the code
 * pages to check) fetched in one round trip, unless the copy has them.
 */
void emu_prefetch(struct emu_engine *e, const struct emu_state *s, const struct emu_page *snap,
		  size_t n_snap)
{
	uint64_t want[EMU_MAX_PAGE_REQ + EMU_MAX_SNAP];
	size_t n = 0;
	uint64_t sp = s->regs[VREG_RSP] & ~(uint64_t)(EMU_PAGE_SIZE - 1);

	want[n++] = s->rip & ~(uint64_t)(EMU_PAGE_SIZE - 1);
	want[n++] = sp;
	want[n++] = sp + EMU_PAGE_SIZE;
	for (size_t i = 0; i < e->n_working && n < EMU_MAX_PAGE_REQ; i++)
		want[n++] = e->working[i];
	for (size_t i = 0; i < e->n_chunks && n < MAX_CODE_CHECK + MAX_WORKING; i++)
		for (size_t k = 0; k < CHUNK_PAGES && n < MAX_CODE_CHECK + MAX_WORKING; k++)
			if (bit(e->chunks[i].code, k))
				want[n++] = e->chunks[i].guest + k * EMU_PAGE_SIZE;
	for (size_t i = 0; i < n_snap; i++)
		want[n++] = snap[i].addr;
	/* Distinct, in order (the same page twice is harmless, but costs a copy). */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && want[j - 1] > want[j]; j--) {
			uint64_t t = want[j];

			want[j] = want[j - 1];
			want[j - 1] = t;
		}
	{
		size_t m = 0;

		for (size_t i = 0; i < n; i++)
			if (!m || want[m - 1] != want[i])
				want[m++] = want[i];
		n = m;
	}
	e->code_changed = false;
	emu_forget_pages(e, want, n);
	/* Their chunks first (outside the emulation, a chunk may be mapped). */
	for (size_t i = 0; i < n; i++)
		if (!emu_chunk_of(e, want[i]))
			emu_map_chunk(e, want[i]);
	/*
	 * The copy kept aside, each page installed at its first use
	 * (emu_fetch_pages): what the burst used of it is then known.
	 */
	if (!e->stash && n_snap)
		e->stash = xmalloc((size_t)EMU_MAX_SNAP * EMU_PAGE_SIZE);
	e->n_stash = 0;
	for (size_t i = 0; i < n_snap && i < EMU_MAX_SNAP; i++) {
		if (e->n_stash && snap[i].addr <= e->stash_addr[e->n_stash - 1])
			continue;       /* the copy comes in order of address, distinct */
		e->stash_addr[e->n_stash] = snap[i].addr;
		memcpy(e->stash + e->n_stash * EMU_PAGE_SIZE, snap[i].data, EMU_PAGE_SIZE);
		e->n_stash++;
	}
	/* The rest from the process as it is now. */
	{
		size_t m = 0;

		for (size_t i = 0; i < n; i++)
			if (!in_snap(snap, n_snap, want[i]))
				want[m++] = want[i];
		if (m)
			emu_fetch_pages(e, want, m);
	}
}

uint64_t emu_live_pages(const struct emu_engine *e)
{
	uint64_t n = 0;

	for (size_t i = 0; i < e->n_chunks; i++) {
		const struct chunk *c = &e->chunks[i];

		for (size_t w = 0; w < WORDS; w++)
			n += (uint64_t)__builtin_popcountll(c->filled[w] & ~c->snapped[w] & ~c->code[w] &
							    ~c->unreadable[w]);
	}
	return n;
}

size_t emu_working_pages(const struct emu_engine *e, uint64_t *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < e->n_working && n < max; i++) {
		uint64_t p = e->working[(e->next_working + MAX_WORKING - 1 - i) % MAX_WORKING];
		const struct chunk *c = emu_chunk_of((struct emu_engine *)e, p);
		size_t k;

		if (!c)
			continue;
		k = (size_t)((p - c->guest) / EMU_PAGE_SIZE);
		if (bit(c->filled, k) && !bit(c->code, k) && !bit(c->unreadable, k))
			out[n++] = p;
	}
	return n;
}

void emu_protect_unfilled(struct emu_engine *e)
{
	for (size_t i = 0; i < e->n_chunks; i++) {
		struct chunk *c = &e->chunks[i];

		for (size_t k = 0; k < CHUNK_PAGES;) {
			size_t run = 0;

			if (!bit(c->open, k) || bit(c->filled, k)) {
				k++;
				continue;
			}
			while (k + run < CHUNK_PAGES && bit(c->open, k + run) && !bit(c->filled, k + run))
				run++;
			if (!mprotect(c->host + k * EMU_PAGE_SIZE, run * EMU_PAGE_SIZE, PROT_NONE))
				for (size_t j = k; j < k + run; j++)
					c->open[j / 64] &= ~(1ull << (j % 64));
			k += run;
		}
	}
}

/* Code that changed since it was translated: its translations and the caches go. */
void emu_drop_changed_code(struct emu_engine *e)
{
	if (!e->code_changed)
		return;
	for (size_t i = 0; i < e->n_chunks; i++) {
		struct chunk *c = &e->chunks[i];

		for (size_t k = 0; k < CHUNK_PAGES; k++) {
			uint64_t p = c->guest + k * EMU_PAGE_SIZE;

			if (!bit(c->code, k) || !bit(c->filled, k) ||
			    c->crc[k] == crc32c(0, c->host + k * EMU_PAGE_SIZE, EMU_PAGE_SIZE))
				continue;
			uc_ctl_remove_cache(e->fast, p, p + EMU_PAGE_SIZE);
			uc_ctl_remove_cache(e->slow, p, p + EMU_PAGE_SIZE);
			c->crc[k] = crc32c(0, c->host + k * EMU_PAGE_SIZE, EMU_PAGE_SIZE);
		}
	}
	memset(e->blocks, 0, BLOCKS_CAP * sizeof(*e->blocks));
	memset(e->recent, 0, sizeof(e->recent));
	memset(e->insns, 0, INSNS_CAP * sizeof(*e->insns));
	e->n_blocks = e->n_insns = 0;
	e->code_changed = false;
}
