/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/emu-engine.c - the emulator side of bursts and windows
 * (collect/emu-engine.h): unicorn's engine, guest memory in chunks filled
 * on a fault, the hooks that count blocks, edges, values and conflicts.
 */
#include "config.h"
#include "collect/emu-engine.h"
#include "collect/emu-avx.h"
#include "core/crc32c.h"
#include "core/hash.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unicorn/unicorn.h>

#define CHUNK_SHIFT 21
#define CHUNK_SIZE ((uint64_t)1 << CHUNK_SHIFT)
#define CHUNK_PAGES (CHUNK_SIZE / EMU_PAGE_SIZE)
#define MAX_CHUNKS 512
#define WORDS (CHUNK_PAGES / 64)
/* Pages asked for again at the start of each burst: the last one's, and code pages. */
#define MAX_WORKING 64
/* Pages an engine keeps backed by memory between bursts at most (32 MiB). */
#define MAX_RESIDENT 8192
#define MAX_CODE_CHECK 160
/* Block cache and per-burst tables (powers of two). */
#define BLOCKS_CAP (1u << 17)
#define INSNS_CAP (1u << 16)
#define EDGES_CAP (1u << 15)
#define VALUES_TAB_CAP (1u << 14)
#define CONFLICTS_CAP (1u << 12)
#define VALUE_SLOTS 8
/* Instructions that must stop the emulation (collect/emu-avx.h), at most. */
#define MAX_TRAPS 4096
#define STORE_RING 64
/* The arithmetic flags compared at a window's samples: CF PF AF ZF SF DF OF. */
#define FLAGS_COMPARED 0ull

struct chunk {
	uint64_t guest;
	uint8_t *host;
	uint64_t filled[WORDS], unreadable[WORDS], code[WORDS];
	uint64_t open[WORDS];           /* read-write already (filled, or about to be) */
	uint64_t resident[WORDS];       /* backed by memory since the last release */
	uint64_t keep[WORDS];           /* forget_pages(): stay read-write (refilled at once) */
	uint32_t *crc;                  /* per code page, its contents when marked */
};

struct blk {
	uint64_t pc;
	uint32_t size, insns;
	uint64_t last;                  /* pc of its last instruction */
	uint32_t gen, wgen;
	uint64_t count, wcount;
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
	uc_engine *fast;                /* a hook per block: paths, windows */
	uc_engine *slow;                /* and per instruction and memory access: detail */
	uc_context *ctx;                /* the state moved from slow to fast */
	uint64_t space;
	struct emu_pager pager;
	csh cs;
	struct chunk chunks[MAX_CHUNKS];
	size_t n_chunks;
	struct chunk *last_chunk;       /* refresh()'s last, looked at first */
	uint64_t working[MAX_WORKING];  /* the last burst's pages */
	size_t n_working, next_working;
	size_t pages;                   /* filled since the run began */
	size_t resident;                /* pages backed by memory */
	size_t faults;                  /* page faults this run (readahead grows with them) */
	uint64_t last_fault;
	bool taint;                     /* an unreadable page was touched: stop at the next block */
	bool late;                      /* pages refused past the time cap: stop at the next block */
	bool code_changed;              /* a code page came back different */
	uint64_t stop_rip;              /* where it stopped */
	/*
	 * A burst kept for a window: its state where it stopped, and the pages
	 * it had (as the thread saw them, and as its stores left them); later
	 * bursts use the engine meanwhile.
	 */
	bool kept;
	uc_context *kept_ctx;
	uint64_t *kept_addr;
	uint8_t *kept_data;             /* EMU_PAGE_SIZE a page; unreadable ones are not kept */
	size_t n_kept;

	struct blk *blocks;
	size_t n_blocks;
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
	/* windows */
	bool windowing, matched_b1, matched;
	const struct emu_window_req *win;
	int key_reg;                    /* compared first at a window's sample, -1: none */
	struct emu_vregs vregs;         /* AVX state beyond unicorn's (collect/emu-avx.h) */
	uint64_t traps[MAX_TRAPS];      /* instructions unicorn would do wrong: exits */
	size_t n_traps;
	bool new_traps;                 /* found in the block whose hook runs: translate it again */
	struct blk *retranslate;        /* that block */
	uint64_t missing_done;          /* instructions done by collect/emu-avx.c */
	uint64_t at_b1, at_b2;
};

/* ---- time, and the engine that a fault belongs to ------------------------------------- */

static struct emu_engine *active;

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int64_t cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/*
 * Whether the run is past its time: the worker's CPU time, not the
 * clock's, so that a loaded host, where the worker waits for a CPU most of
 * the time, does not end bursts early (measured: 15 of 41 bursts of xz
 * ended by a 50 ms clock on a host with 14 runnable threads a CPU, their
 * 9 ms of work spread over it); the clock's own cap, four times as long,
 * keeps the collector's wait bounded.  The CPU clock is a system call, so
 * it is read only once the wall clock says the cap may have been reached.
 */
static bool over_time(struct emu_engine *e)
{
	int64_t now = now_ns(), used;

	if (now <= e->deadline)
		return false;
	if (now >= e->wall_end)
		return true;
	used = cpu_ns() - e->cpu_start;
	if (used >= e->cpu_cap)
		return true;
	e->deadline = now + (e->cpu_cap - used);
	if (e->deadline > e->wall_end)
		e->deadline = e->wall_end;
	return false;
}

/* ---- registers ---------------------------------------------------------------------- */

static const int uc_gpr[VALUES_NREGS] = {
	UC_X86_REG_RAX, UC_X86_REG_RBX, UC_X86_REG_RCX, UC_X86_REG_RDX, UC_X86_REG_RSI,
	UC_X86_REG_RDI, UC_X86_REG_RBP, UC_X86_REG_RSP, UC_X86_REG_R8, UC_X86_REG_R9,
	UC_X86_REG_R10, UC_X86_REG_R11, UC_X86_REG_R12, UC_X86_REG_R13, UC_X86_REG_R14,
	UC_X86_REG_R15, UC_X86_REG_EFLAGS,
};

static void read_regs(uc_engine *uc, uint64_t *r)
{
	void *p[VALUES_NREGS];

	for (unsigned k = 0; k < VALUES_NREGS; k++)
		p[k] = &r[k];
	uc_reg_read_batch(uc, (int *)uc_gpr, p, VALUES_NREGS);
}

static uint64_t read_rip(uc_engine *uc)
{
	uint64_t rip = 0;

	uc_reg_read(uc, UC_X86_REG_RIP, &rip);
	return rip;
}

static void write_state(uc_engine *uc, const struct emu_state *s)
{
	void *p[VALUES_NREGS];
	uint16_t tag = 0;

	for (unsigned k = 0; k < VALUES_NREGS; k++)
		p[k] = (void *)&s->regs[k];
	uc_reg_write_batch(uc, (int *)uc_gpr, p, VALUES_NREGS);
	uc_reg_write(uc, UC_X86_REG_RIP, &s->rip);
	uc_reg_write(uc, UC_X86_REG_FS_BASE, &s->fs_base);
	uc_reg_write(uc, UC_X86_REG_GS_BASE, &s->gs_base);
	/* Compiled code keeps pointers in the SSE registers. */
	for (int k = 0; k < 16; k++)
		uc_reg_write(uc, UC_X86_REG_XMM0 + k, s->xmm[k]);
	uc_reg_write(uc, UC_X86_REG_MXCSR, &s->mxcsr);
	uc_reg_write(uc, UC_X86_REG_FPCW, &s->fcw);
	uc_reg_write(uc, UC_X86_REG_FPSW, &s->fsw);
	/* The abridged tag (a bit per register in use) as the full one (11: empty). */
	for (int k = 0; k < 8; k++)
		if (!(s->ftw >> k & 1))
			tag |= (uint16_t)(3u << (2 * k));
	uc_reg_write(uc, UC_X86_REG_FPTAG, &tag);
	/* st(i) from the top, 80 bits: the mantissa, then sign and exponent. */
	for (int k = 0; k < 8; k++) {
		uint8_t f[16] = { 0 };

		memcpy(f, s->st[k], 10);
		uc_reg_write(uc, UC_X86_REG_ST0 + k, f);
	}
}

/* The part of a general register an instruction writes. */
enum width { W64, W16, W8, W8HIGH };

static uint64_t part(uint64_t v, unsigned w)
{
	return w == W16 ? v & 0xffff : w == W8 ? v & 0xff : w == W8HIGH ? (v >> 8) & 0xff : v;
}

/* Capstone's registers as the general register they are part of, and which part. */
static int8_t reg_index[X86_REG_ENDING];
static uint8_t reg_width[X86_REG_ENDING];

static void setup_reg_map(csh cs)
{
	for (unsigned r = 0; r < X86_REG_ENDING; r++) {
		const char *name = cs_reg_name(cs, r);
		int k = name ? values_reg_lookup(name) : -1;
		size_t n = name ? strlen(name) : 0;

		reg_index[r] = (int8_t)(k >= 0 && k < VREG_RFLAGS ? k : -1);
		if (reg_index[r] < 0)
			continue;
		reg_width[r] = W64;             /* 64 bits, or 32 (zero-extended) */
		if (n == 2 && name[1] == 'h')
			reg_width[r] = W8HIGH;
		else if ((n == 2 && name[1] == 'l') || name[n - 1] == 'b' || (n == 3 && name[2] == 'l'))
			reg_width[r] = W8;
		else if (n == 2 || (name[0] == 'r' && name[n - 1] == 'w'))
			reg_width[r] = W16;
	}
}

/* ---- memory ------------------------------------------------------------------------- */

static struct chunk *chunk_of(struct emu_engine *e, uint64_t addr)
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

static bool bit(const uint64_t *w, size_t i)
{
	return w[i / 64] >> (i % 64) & 1;
}

static void set_bit(uint64_t *w, size_t i)
{
	w[i / 64] |= 1ull << (i % 64);
}

/* Maps the chunk holding addr into the engine, its pages inaccessible; NULL if it cannot. */
static struct chunk *map_chunk(struct emu_engine *e, uint64_t addr)
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
	struct chunk *c = chunk_of(e, addr);
	size_t i;
	uint8_t *page;

	/* A new chunk can be mapped outside the emulation only (not in a fault). */
	if (!c && (active == e || !(c = map_chunk(e, addr))))
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
 * before it is used (refresh(), from the hook on every memory access; the
 * pages in want at once).  Pages stay mapped read-write: making a page
 * inaccessible and accessible again costs 20-30 us on these VMs (a fault at
 * its next access, measured with a loop of mprotect), the hook 20-30 ns an
 * access.  Unless the engine holds too much memory: then it is given back,
 * and its pages are found again by their faults.
 */
static void forget_pages(struct emu_engine *e, const uint64_t *want, size_t n)
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
		struct chunk *c = chunk_of(e, addr[k]);
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

/* Asks the pager for n pages; those it did not give read as nothing (unreadable). */
static int fetch_pages(struct emu_engine *e, const uint64_t *addr, size_t n)
{
	int r;

	open_pages(e, addr, n);
	r = e->pager.fetch(e->pager.ctx, e, addr, n);
	for (size_t k = 0; k < n; k++) {
		struct chunk *c = chunk_of(e, addr[k]);

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
	e->faults++;
	out[n++] = page;
	for (size_t k = from; k < to && k < CHUNK_PAGES; k++)
		if (k != i && !bit(c->filled, k))
			out[n++] = c->guest + k * EMU_PAGE_SIZE;
	return n;
}

static void on_segv(int sig, siginfo_t *si, void *uctx)
{
	struct emu_engine *e = active;
	struct chunk *c = e ? chunk_of_host(e, si->si_addr) : NULL;
	uint64_t addrs[EMU_MAX_PAGE_REQ];
	size_t i, n;

	(void)uctx;
	if (!c) {
		signal(sig, SIG_DFL);   /* not ours: crash as it would have */
		return;
	}
	if (e->pages >= EMU_MAX_PAGES || over_time(e)) {
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
	fetch_pages(e, addrs, n);
	if (bit(c->unreadable, i))
		e->taint = true;
}

/*
 * Before an access to [addr, addr + size): its pages fetched if this burst
 * has not got them yet (with the others of their group).
 */
static void refresh(struct emu_engine *e, uint64_t addr, size_t size)
{
	uint64_t end = addr + (size ? size : 1);

	for (uint64_t p = addr & ~(uint64_t)(EMU_PAGE_SIZE - 1); p < end; p += EMU_PAGE_SIZE) {
		struct chunk *c = e->last_chunk;
		uint64_t addrs[EMU_MAX_PAGE_REQ];
		size_t i;

		if (!c || p - c->guest >= CHUNK_SIZE) {
			if (!(c = chunk_of(e, p)))
				continue;       /* not mapped: unicorn's hook maps it */
			e->last_chunk = c;
		}
		i = (size_t)((p - c->guest) / EMU_PAGE_SIZE);
		if (bit(c->filled, i))
			continue;
		/* Past the time cap (pages can take long to come): nothing more, the run stops. */
		if (e->pages >= EMU_MAX_PAGES || over_time(e)) {
			e->late = true;
			emu_engine_fill(e, p, NULL);
			continue;
		}
		remember(e, p);
		fetch_pages(e, addrs, readahead(e, c, p, addrs));
		if (bit(c->unreadable, i))
			e->taint = true;
	}
}

static void on_access(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value,
		      void *ud)
{
	(void)uc, (void)type, (void)value;
	refresh(ud, addr, size > 0 ? (size_t)size : 1);
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
static bool on_unmapped(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value,
			void *ud)
{
	struct emu_engine *e = ud;
	uint64_t page = addr & ~(uint64_t)(EMU_PAGE_SIZE - 1);
	struct chunk *c;
	size_t i;

	(void)uc, (void)type, (void)size, (void)value;
	if (addr >= EMU_USER_END || e->pages >= EMU_MAX_PAGES || !(c = map_chunk(e, addr)))
		return false;
	i = (size_t)((page - c->guest) / EMU_PAGE_SIZE);
	remember(e, page);
	active = NULL;  /* filling outside a fault: mprotect, no recursion */
	fetch_pages(e, &page, 1);
	active = e;
	if (bit(c->unreadable, i)) {
		e->end = PATHS_END_UNREADABLE;
		e->end_pc = e->cur ? e->cur->pc : 0;
		return false;
	}
	return true;
}

/* Marks the pages of a block as code, remembering their contents. */
static void mark_code(struct emu_engine *e, uint64_t pc, uint32_t size)
{
	for (uint64_t p = pc & ~(uint64_t)(EMU_PAGE_SIZE - 1); p < pc + size; p += EMU_PAGE_SIZE) {
		struct chunk *c = chunk_of(e, p);
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

/*
 * At a burst's start, before it runs: every page forgotten, and those worth
 * having at once (rip's, the stack's, the last burst's, the code pages to
 * check) fetched in one round trip.
 */
static void prefetch(struct emu_engine *e, const struct emu_state *s)
{
	uint64_t want[EMU_MAX_PAGE_REQ];
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
	forget_pages(e, want, n);
	/* Their chunks first (outside the emulation, a chunk may be mapped). */
	for (size_t i = 0; i < n; i++)
		if (!chunk_of(e, want[i]))
			map_chunk(e, want[i]);
	fetch_pages(e, want, n);
}

/* Code that changed since it was translated: its translations and the caches go. */
static void drop_changed_code(struct emu_engine *e)
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
	memset(e->insns, 0, INSNS_CAP * sizeof(*e->insns));
	e->n_blocks = e->n_insns = 0;
	e->code_changed = false;
}

/* ---- decoding ---------------------------------------------------------------------- */

/* Instructions in [pc, pc + size) and the last one's pc (the bytes are the engine's). */
/*
 * An instruction unicorn would do wrong (collect/emu-avx.h): an exit of
 * both engines, where the emulation stops before it, and the block holding
 * it translated again (run() does both, outside the emulation).
 */
static void add_trap(struct emu_engine *e, uint64_t addr)
{
	for (size_t i = 0; i < e->n_traps; i++)
		if (e->traps[i] == addr)
			return;
	if (e->n_traps == MAX_TRAPS) {
		e->full = true;
		return;
	}
	e->traps[e->n_traps++] = addr;
	e->new_traps = true;
}

static bool is_trap(const struct emu_engine *e, uint64_t addr)
{
	for (size_t i = 0; i < e->n_traps; i++)
		if (e->traps[i] == addr)
			return true;
	return false;
}

static uint32_t count_insns(struct emu_engine *e, uint64_t pc, uint32_t size, uint64_t upto,
			    uint64_t *last)
{
	uint8_t buf[PATHS_MAX_BLOCK_BYTES];
	const uint8_t *p = buf;
	size_t n = size > sizeof(buf) ? sizeof(buf) : size;
	uint64_t addr = pc;
	cs_insn *in = cs_malloc(e->cs);
	uint32_t k = 0;

	*last = pc;
	if (uc_mem_read(e->uc, pc, buf, n))
		n = 0;
	while (n && addr < upto) {
		unsigned len;
		bool trap;

		*last = addr;
		if (cs_disasm_iter(e->cs, &p, &n, &addr, in)) {
			k++;
			continue;
		}
		/* AVX-512 that capstone 4 does not know, decoded by emu-avx. */
		if (emu_avx_length(p, n, &len, &trap) || len > n) {
			k++;    /* bytes nobody knows (the emulator stopped inside them): one more */
			break;
		}
		if (trap)
			add_trap(e, addr);
		p += len, n -= len, addr += len;
		k++;
	}
	cs_free(in, 1);
	return k ? k : 1;
}

static struct blk *block_get(struct emu_engine *e, uint64_t pc, uint32_t size)
{
	uint32_t h;

	if (size > PATHS_MAX_BLOCK_BYTES)
		size = PATHS_MAX_BLOCK_BYTES;
	h = (uint32_t)hash_u64(pc ^ ((uint64_t)size << 48)) & (BLOCKS_CAP - 1);

	for (;; h = (h + 1) & (BLOCKS_CAP - 1)) {
		struct blk *b = &e->blocks[h];

		if (b->used && b->pc == pc && b->size == size)
			return b;
		if (b->used)
			continue;
		if (e->n_blocks >= BLOCKS_CAP / 2) {
			e->full = true;
			return NULL;
		}
		b->used = true;
		b->pc = pc;
		b->size = size;
		b->insns = count_insns(e, pc, b->size, UINT64_MAX, &b->last);
		e->n_blocks++;
		mark_code(e, pc, size);
		return b;
	}
}

/* Instructions of block b before addr. */
static uint64_t index_in(struct emu_engine *e, const struct blk *b, uint64_t addr)
{
	uint64_t last;

	if (!b || addr <= b->pc || addr >= b->pc + b->size)
		return b && addr >= b->pc + b->size ? b->insns : 0;
	return count_insns(e, b->pc, b->size, addr, &last);
}

static struct insn_info *insn_get(struct emu_engine *e, uint64_t pc)
{
	uint32_t h = (uint32_t)hash_u64(pc) & (INSNS_CAP - 1);

	for (;; h = (h + 1) & (INSNS_CAP - 1)) {
		struct insn_info *x = &e->insns[h];
		uint8_t buf[16];
		cs_insn *in;
		cs_regs rd, wr;
		uint8_t nrd, nwr;

		if (x->used && x->pc == pc)
			return x;
		if (x->used)
			continue;
		if (e->n_insns >= INSNS_CAP / 2) {
			e->full = true;
			return NULL;
		}
		memset(x, 0, sizeof(*x));
		x->used = true;
		x->pc = pc;
		e->n_insns++;
		if (uc_mem_read(e->uc, pc, buf, sizeof(buf)) ||
		    cs_disasm(e->cs, buf, sizeof(buf), pc, 1, &in) != 1)
			return x;
		if (!cs_regs_access(e->cs, in, rd, &nrd, wr, &nwr))
			for (unsigned k = 0; k < nwr; k++) {
				int r = wr[k] < X86_REG_ENDING ? reg_index[wr[k]] : -1;

				if (r < 0)
					continue;
				x->writes |= 1u << r;
				x->width[r] = reg_width[wr[k]];
			}
		cs_free(in, 1);
		return x;
	}
}

/* ---- per-run tables ------------------------------------------------------------------- */

static void touch(uint32_t **list, size_t *n, size_t *alloc, uint32_t idx)
{
	ALLOC_GROW(*list, *n + 1, *alloc);
	(*list)[(*n)++] = idx;
}

static void edge_add(struct emu_engine *e, uint64_t from, uint64_t to)
{
	uint32_t h = (uint32_t)hash_u64(from * 31 + to) & (EDGES_CAP - 1);

	for (unsigned probe = 0; probe < EDGES_CAP; probe++, h = (h + 1) & (EDGES_CAP - 1)) {
		struct edge_ent *x = &e->edges[h];

		if (x->gen == e->gen && x->from == from && x->to == to) {
			x->count++;
			return;
		}
		if (x->gen == e->gen)
			continue;
		if (e->n_te >= EDGES_CAP / 2) {
			e->full = true;
			return;
		}
		*x = (struct edge_ent){ from, to, 1, e->gen };
		touch(&e->t_edges, &e->n_te, &e->a_te, h);
		return;
	}
}

static void value_add(struct emu_engine *e, uint64_t pc, unsigned reg, uint64_t v)
{
	uint32_t h = (uint32_t)hash_u64(pc * 17 + reg) & (VALUES_TAB_CAP - 1);

	for (unsigned probe = 0; probe < VALUES_TAB_CAP; probe++, h = (h + 1) & (VALUES_TAB_CAP - 1)) {
		struct val_ent *x = &e->vals[h];

		if (x->gen == e->gen && x->pc == pc && x->reg == reg) {
			for (unsigned k = 0; k < x->n; k++)
				if (x->v[k] == v) {
					x->c[k]++;
					return;
				}
			/* More distinct values than slots: not one worth a hot list. */
			if (x->n < VALUE_SLOTS) {
				x->v[x->n] = v;
				x->c[x->n++] = 1;
			}
			return;
		}
		if (x->gen == e->gen)
			continue;
		if (e->n_tv >= VALUES_TAB_CAP / 2) {
			e->full = true;
			return;
		}
		memset(x, 0, sizeof(*x));
		x->pc = pc, x->reg = (uint8_t)reg, x->gen = e->gen, x->n = 1;
		x->v[0] = v, x->c[0] = 1;
		touch(&e->t_vals, &e->n_tv, &e->a_tv, h);
		return;
	}
}

static void conflict_add(struct emu_engine *e, uint64_t load, uint64_t store,
			 enum paths_conflict_kind kind)
{
	uint32_t h = (uint32_t)hash_u64(load * 7 + store * 3 + kind) & (CONFLICTS_CAP - 1);

	for (unsigned probe = 0; probe < CONFLICTS_CAP; probe++, h = (h + 1) & (CONFLICTS_CAP - 1)) {
		struct conf_ent *x = &e->confs[h];

		if (x->gen == e->gen && x->load == load && x->store == store && x->kind == kind) {
			x->count++;
			return;
		}
		if (x->gen == e->gen)
			continue;
		if (e->n_tc >= CONFLICTS_CAP / 2)
			return;
		*x = (struct conf_ent){ load, store, 1, (uint8_t)kind, e->gen };
		touch(&e->t_confs, &e->n_tc, &e->a_tc, h);
		return;
	}
}

/* ---- hooks --------------------------------------------------------------------------- */

/* A stop that ends nothing: the run goes on once the block is translated again. */
#define STOP_RETRANSLATE PATHS_END__COUNT

static void stop(struct emu_engine *e, enum paths_end why, uint64_t pc)
{
	if ((int)why == STOP_RETRANSLATE) {
		uc_emu_stop(e->uc);
		return;
	}
	if (e->end < 0) {
		e->end = why;
		e->end_pc = pc;
	}
	uc_emu_stop(e->uc);
}

/*
 * A stop asked for in the block hook.  Without instruction hooks unicorn
 * stops before the block runs.  With them (in detail) it does not: it goes
 * on through the block's instruction hooks, skipping the instructions but
 * moving rip (measured: a loop ran one iteration too many after resuming
 * there).  So in detail the stop is left to the instruction hook of the
 * block's first instruction, which stops before it, rip and all.
 */
static void stop_at_block(struct emu_engine *e, enum paths_end why, uint64_t pc)
{
	if (!e->detail_on) {
		stop(e, why, pc);
		return;
	}
	if (e->pending < 0) {
		e->pending = why;
		e->pending_pc = pc;
	}
}

/* A block that runs: its count (its count between a window's samples), and the next edge's source. */
static void count_block(struct emu_engine *e, struct blk *b)
{
	/* A window counts blocks between its samples only; a burst, all. */
	if (!e->win) {
		if (b->gen != e->gen) {
			b->gen = e->gen;
			b->count = 0;
			touch(&e->t_blocks, &e->n_tb, &e->a_tb, (uint32_t)(b - e->blocks));
		}
		b->count++;
	} else if (e->windowing) {
		if (b->wgen != e->wgen) {
			b->wgen = e->wgen;
			b->wcount = 0;
			if (b->gen != e->gen)
				touch(&e->t_blocks, &e->n_tb, &e->a_tb, (uint32_t)(b - e->blocks));
		}
		b->wcount++;
	}
	e->prev = b;
	e->cur = b;
	e->blk_start = e->total;
	e->total += b->insns;
	e->hooked_counted = b == e->hooked;
}

/*
 * An instruction done in software where unicorn stopped before it (an exit):
 * a block of its own.
 */
static void count_soft(struct emu_engine *e, uint64_t pc, unsigned len)
{
	struct blk *b = block_get(e, pc, len);

	if (!b)
		return;
	if (e->prev && !e->win)
		edge_add(e, e->prev->last, pc);
	e->hooked = b;
	e->hooked_start = e->total;
	count_block(e, b);
}

/*
 * Each block, before it runs: its count, the edge that led to it.  Where a
 * run stops is settled afterwards (settle()) from rip.
 */
static void on_block(uc_engine *uc, uint64_t pc, uint32_t size, void *ud)
{
	struct emu_engine *e = ud;
	struct blk *b;

	(void)uc;
	if (e->late) {
		stop_at_block(e, PATHS_END_TIME, pc);
		return;
	}
	if (e->taint) {
		stop_at_block(e, PATHS_END_UNREADABLE, pc);
		return;
	}
	if (e->code_changed || !(b = block_get(e, pc, size)) || e->full) {
		stop_at_block(e, PATHS_END_FAULT, pc);
		return;
	}
	/* It holds an instruction unicorn would do wrong: translated again, with an exit. */
	if (e->new_traps) {
		e->retranslate = b;
		stop_at_block(e, STOP_RETRANSLATE, pc);
		return;
	}
	if (e->prev && !e->win)
		edge_add(e, e->prev->last, pc);
	e->prev = NULL;
	e->hooked = b;
	e->hooked_counted = false;
	e->hooked_start = e->total;     /* so far: the instructions before this block */
	/* The limit is never passed: a block that would pass it is not counted. */
	if (e->total + b->insns > e->limit || (e->detail_on && e->detailed >= e->detail)) {
		stop_at_block(e, PATHS_END_LIMIT, pc);
		return;
	}
	if (!(++e->nblocks & 63) && over_time(e)) {
		stop_at_block(e, PATHS_END_TIME, pc);
		return;
	}
	count_block(e, b);
}

/* Detail: before each instruction, what the one before it wrote, and a raw step. */
static void on_insn(uc_engine *uc, uint64_t pc, uint32_t size, void *ud)
{
	struct emu_engine *e = ud;
	uint64_t regs[VALUES_NREGS];
	struct insn_info *x;

	(void)size;
	if (e->pending >= 0) {
		int why = e->pending;

		e->pending = -1;
		stop(e, (enum paths_end)why, e->pending_pc);
		return;
	}
	if (!e->detail_on || e->detailed >= e->detail)
		return;
	read_regs(uc, regs);
	if (e->prev_insn)
		for (unsigned r = 0; r < VREG_RFLAGS; r++)
			if (e->prev_insn->writes >> r & 1)
				value_add(e, e->prev_insn->pc, r, part(regs[r], e->prev_insn->width[r]));
	if (e->n_steps < e->max_steps) {
		e->steps[e->n_steps].pc = pc;
		memcpy(e->steps[e->n_steps].regs, regs, sizeof(regs));
		e->n_steps++;
	}
	if (!(x = insn_get(e, pc)))
		return;
	if (x->gen != e->gen) {
		x->gen = e->gen;
		x->execs = 0;
		touch(&e->t_insns, &e->n_ti, &e->a_ti, (uint32_t)(x - e->insns));
	}
	x->execs++;
	e->prev_insn = x;
	e->cur_pc = pc;
	e->index++;
	e->detailed++;
}

/*
 * Detail: loads against the stores before them (seed 004's vreplay): the
 * latest store to any of the load's bytes decides; a load it does not
 * cover waits for it (store forwarding fails); a store at the load's
 * offset in another 4 KiB page looks like one (4K aliasing).
 */
static void on_mem(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value,
		   void *ud)
{
	struct emu_engine *e = ud;

	(void)uc, (void)value;
	refresh(e, addr, size > 0 ? (size_t)size : 1);
	if (!e->detail_on || e->detailed > e->detail || size <= 0)
		return;
	if (type == UC_MEM_WRITE) {
		e->ring[e->ring_at] = (struct store_rec){ e->cur_pc, addr, e->index, size };
		e->ring_at = (e->ring_at + 1) % STORE_RING;
		if (e->ring_n < STORE_RING)
			e->ring_n++;
		return;
	}
	if (type != UC_MEM_READ)
		return;
	for (size_t k = 0; k < e->ring_n; k++) {
		const struct store_rec *s = &e->ring[(e->ring_at + STORE_RING - 1 - k) % STORE_RING];
		bool overlap, inside;

		if (s->index >= e->index || e->index - s->index > PATHS_CONFLICT_WINDOW)
			break;
		overlap = s->addr < addr + (uint64_t)size && addr < s->addr + (uint64_t)s->size;
		inside = s->addr <= addr && addr + (uint64_t)size <= s->addr + (uint64_t)s->size;
		if (overlap) {
			if (!inside)
				conflict_add(e, e->cur_pc, s->pc, PATHS_STORE_FORWARD);
			return;
		}
		if ((s->addr & ~0xfffull) != (addr & ~0xfffull) &&
		    (s->addr & 0xfff) < (addr & 0xfff) + (uint64_t)size &&
		    (addr & 0xfff) < (s->addr & 0xfff) + (uint64_t)s->size)
			conflict_add(e, e->cur_pc, s->pc, PATHS_ALIAS_4K);
	}
}

/*
 * A window, before B1, goes past the writes to files the thread made (it
 * did them before B1, which is all the window counts from): each taken as
 * done in full, its count returned; a write changes nothing the thread
 * reads.  Not a read: by the time the window runs, the thread has read
 * later data into the same buffer (measured on gzip: windows past a read
 * never matched).  A guess that was wrong (a short write) leads to a state
 * that is not B1's: no match, never a wrong count.  Between B1 and B2 a
 * system call still ends the window: the kernel's time would be in the
 * period.
 */
#define EMU_MAX_PASSED 64

static bool pass_syscall(struct emu_engine *e, uc_engine *uc)
{
	uint64_t nr = 0, rip = 0, flags = 0, count = 0;

	if (!e->win || e->matched_b1 || e->passed >= EMU_MAX_PASSED)
		return false;
	uc_reg_read(uc, UC_X86_REG_RAX, &nr);
	if (nr != 1 && nr != 18)        /* write, pwrite64 */
		return false;
	uc_reg_read(uc, UC_X86_REG_RIP, &rip);
	uc_reg_read(uc, UC_X86_REG_RFLAGS, &flags);
	uc_reg_read(uc, UC_X86_REG_RDX, &count);
	if (count > SSIZE_MAX)
		return false;
	rip += 2;                       /* what syscall leaves in rcx and r11 */
	uc_reg_write(uc, UC_X86_REG_RCX, &rip);
	uc_reg_write(uc, UC_X86_REG_R11, &flags);
	uc_reg_write(uc, UC_X86_REG_RAX, &count);
	e->passed++;
	return true;
}

static void on_syscall(uc_engine *uc, void *ud)
{
	struct emu_engine *e = ud;

	if (pass_syscall(e, uc))
		return;
	stop(e, PATHS_END_SYSCALL, read_rip(uc));
}

static void on_intr(uc_engine *uc, uint32_t intno, void *ud)
{
	struct emu_engine *e = ud;
	uint64_t rip = read_rip(uc);

	/*
	 * int 0x80 is a system call; anything else a fault the program would
	 * take (traps, int3 and int N, leave rip after the instruction).
	 */
	if (intno == 0x80)
		stop(e, PATHS_END_SYSCALL, rip - 2);
	else
		stop(e, PATHS_END_FAULT, intno == 3 ? rip - 1 : rip);
}

/* A window's sample: the state compared where the emulation passes its rip. */
static void on_target(uc_engine *uc, uint64_t pc, uint32_t size, void *ud)
{
	struct emu_engine *e = ud;
	const struct emu_point *t;
	uint64_t regs[VALUES_NREGS];

	(void)size;
	if (!e->win || e->matched)
		return;
	t = e->matched_b1 ? &e->win->b2 : &e->win->b1;
	if (pc != t->rip)
		return;
	/*
	 * One register first, one that differs between B1 and B2 (a loop's
	 * counter, most likely): most passes are other iterations, refused
	 * for the price of reading it.
	 */
	if (e->key_reg >= 0 && (uc_reg_read(uc, uc_gpr[e->key_reg], &regs[0]) ||
				regs[0] != t->regs[e->key_reg]))
		return;
	read_regs(uc, regs);
	for (unsigned r = 0; r < VREG_RFLAGS; r++)
		if (regs[r] != t->regs[r])
			return;
	if ((regs[VREG_RFLAGS] ^ t->regs[VREG_RFLAGS]) & FLAGS_COMPARED)
		return;
	if (!e->matched_b1) {
		e->at_b1 = e->blk_start + index_in(e, e->cur, pc);
		e->matched_b1 = true;
		e->windowing = true;
		/* B2 at the same place: its hook is this one; it must not match at once. */
		return;
	}
	e->at_b2 = e->blk_start + index_in(e, e->cur, pc);
	e->matched = true;
	stop(e, PATHS_END_LIMIT, pc);
}

/* ---- instructions unicorn 2.0.1 refuses, done here (collect/emu-avx.h) ------------------ */

/* An instruction's memory: its chunks mapped and pages fetched as the emulation's would be. */
static int avx_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct emu_engine *e = ctx;

	for (uint64_t p = addr & ~(uint64_t)(EMU_PAGE_SIZE - 1); p < addr + len; p += EMU_PAGE_SIZE) {
		if (p >= EMU_USER_END)
			return -1;
		if (!chunk_of(e, p)) {
			if (!map_chunk(e, p))
				return -1;
			fetch_pages(e, &p, 1);
		}
	}
	refresh(e, addr, len);
	if (uc_mem_read(e->uc, addr, buf, len) || e->taint)
		return -1;
	return 0;
}

static int avx_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	struct emu_engine *e = ctx;
	uint8_t probe[1];

	/* Fetched first: a store changes the emulator's copy of the page. */
	if (avx_read(ctx, addr, probe, 1) || avx_read(ctx, addr + len - 1, probe, 1))
		return -1;
	return uc_mem_write(e->uc, addr, buf, len) ? -1 : 0;
}

/* An instruction unicorn refused: true if done here (rip moved past it). */
static bool emulate_missing(struct emu_engine *e, uint64_t rip)
{
	struct emu_avx_mem mem = { avx_read, avx_write, e };
	uint8_t buf[16];
	cs_insn *in = NULL;
	unsigned len = 0;
	int r;

	if (avx_read(e, rip, buf, sizeof(buf)))
		return false;
	if (cs_disasm(e->cs, buf, sizeof(buf), rip, 1, &in) != 1)
		in = NULL;
	r = emu_avx_do(e->uc, e->cs, in, buf, sizeof(buf), rip, &e->vregs, &mem, &len);
	if (r > 0) {
		uint64_t next = rip + len;

		uc_reg_write(e->uc, UC_X86_REG_RIP, &next);
		e->missing_done++;
	} else if (in) {
		snprintf(e->mnemonic, sizeof(e->mnemonic), "%s", in->mnemonic);
	} else {
		/* Not even capstone knows it: its first bytes say what it was. */
		snprintf(e->mnemonic, sizeof(e->mnemonic), "%02x.%02x.%02x.%02x.%02x", buf[0], buf[1],
			 buf[2], buf[3], buf[4]);
	}
	if (in)
		cs_free(in, 1);
	return r > 0;
}

/* ---- running -------------------------------------------------------------------------- */

static void begin_run(struct emu_engine *e, uint64_t limit, uint32_t time_us)
{
	e->gen++;
	if (!e->gen)
		e->gen = 1;
	e->n_tb = e->n_te = e->n_ti = e->n_tv = e->n_tc = 0;
	e->total = e->blk_start = e->nblocks = 0;
	e->cur = e->prev = e->hooked = NULL;
	e->limit = limit;
	e->cpu_cap = (int64_t)time_us * 1000;
	e->cpu_start = cpu_ns();
	e->deadline = now_ns() + e->cpu_cap;
	e->wall_end = e->deadline + EMU_WALL_FACTOR * e->cpu_cap - e->cpu_cap;
	e->passed = 0;
	e->end = e->pending = -1;
	e->end_pc = 0;
	e->mnemonic[0] = '\0';
	e->full = false;
	e->windowing = e->matched_b1 = e->matched = false;
	e->win = NULL;
}

static bool inside(const struct blk *b, uint64_t pc)
{
	return b && pc >= b->pc && pc < b->pc + b->size;
}

/*
 * The instructions that ran, from where the run ended: the instruction
 * not followed (a system call, an instruction the emulator lacks, a trap),
 * else where the emulator stopped.  Blocks are counted whole when they
 * begin; one the run ended inside counts only up to there, and one whose
 * hook asked to stop counts what ran of it anyway.
 */
static void settle(struct emu_engine *e)
{
	uint64_t at = e->stop_rip;


	if (e->end == PATHS_END_LIMIT || e->end == PATHS_END_TIME)
		e->end_pc = at;
	else if (inside(e->hooked, e->end_pc))
		at = e->end_pc;
	/*
	 * The block whose hook stopped the run ran all the same (without code
	 * hooks unicorn looks for a stop only between blocks; measured: bursts
	 * 2 to 16 instructions past their limit): it counts, as it does in the
	 * state the run ends with.
	 */
	if (e->hooked && !e->hooked_counted && at != e->hooked->pc)
		count_block(e, e->hooked);
	if (e->hooked && at >= e->hooked->pc && at <= e->hooked->pc + e->hooked->size)
		e->total = e->hooked_start + index_in(e, e->hooked, at);
	/*
	 * A run resumed from here begins a block that no branch led to (the
	 * edge into a block whose hook stopped the run is counted already).
	 */
	e->prev = e->hooked = e->cur = NULL;
}

/*
 * The instructions found that unicorn would do wrong become exits of both
 * engines, and the block that held them is translated again (with them).
 */
static void set_exits(struct emu_engine *e)
{
	struct blk *b = e->retranslate;

	uc_ctl_set_exits(e->fast, e->traps, e->n_traps);
	uc_ctl_set_exits(e->slow, e->traps, e->n_traps);
	if (b) {
		uc_ctl_remove_cache(e->fast, b->pc, b->pc + b->size);
		uc_ctl_remove_cache(e->slow, b->pc, b->pc + b->size);
	}
	e->retranslate = NULL;
	e->new_traps = false;
}

/*
 * Runs from rip until a hook or an error ends it; instructions the
 * emulator lacks but this file does are done and the run goes on.
 */
static void run(struct emu_engine *e, uint64_t rip)
{
	active = e;
	while (e->end < 0) {
		uc_err err = uc_emu_start(e->uc, rip, 0, 0, 0);

		rip = read_rip(e->uc);
		if (e->end >= 0)
			break;
		if (e->retranslate) {
			set_exits(e);
			continue;
		}
		if (err == UC_ERR_OK && is_trap(e, rip)) {
			/* An exit: unicorn would do it wrong; done here, a block of its own. */
			uint64_t at = rip;

			if (emulate_missing(e, rip)) {
				rip = read_rip(e->uc);
				count_soft(e, at, (unsigned)(rip - at));
				continue;
			}
			e->end = PATHS_END_UNSUPPORTED;
			e->end_pc = rip;
			break;
		}
		if (err == UC_ERR_INSN_INVALID && emulate_missing(e, rip)) {
			/* The block went to the instruction: the next starts after it. */
			rip = read_rip(e->uc);
			continue;
		}
		if (err == UC_ERR_INSN_INVALID) {
			e->end = strcmp(e->mnemonic, "ud2") ? PATHS_END_UNSUPPORTED : PATHS_END_FAULT;
			e->end_pc = rip;
		} else if (err == UC_ERR_READ_UNMAPPED || err == UC_ERR_WRITE_UNMAPPED ||
			   err == UC_ERR_FETCH_UNMAPPED) {
			e->end = PATHS_END_UNREADABLE;
			e->end_pc = e->cur ? e->cur->pc : rip;
		} else {
			/* Stopped by nothing this file asked for: a fault, or an emulator error. */
			e->end = PATHS_END_FAULT;
			e->end_pc = rip;
		}
	}
	active = NULL;
	e->stop_rip = read_rip(e->uc);
	settle(e);
}

/*
 * Detail runs in the slow engine, the rest in the fast one: hooks on every
 * instruction cost about 30 times a block hook (measured: 18 ns against
 * 0.6 ns an instruction on a loop), and unicorn puts them in a block's
 * translation, so switching them on and off in one engine would mean
 * translating the code again at every switch.  Two engines over the same
 * memory keep their translations; the state moves with a context.
 */
static void set_detail(struct emu_engine *e, bool on)
{
	uc_engine *to = on ? e->slow : e->fast;

	if (e->uc != to) {
		uc_context_save(e->uc, e->ctx);
		uc_context_restore(to, e->ctx);
		e->uc = to;
	}
	e->detail_on = on;
}

static void fill_blocks(struct emu_engine *e, struct emu_block_rec **out, size_t *n, bool window)
{
	*out = xcalloc(e->n_tb ? e->n_tb : 1, sizeof(**out));
	*n = 0;
	for (size_t i = 0; i < e->n_tb; i++) {
		const struct blk *b = &e->blocks[e->t_blocks[i]];
		uint64_t c = window ? (b->wgen == e->wgen ? b->wcount : 0) :
				      (b->gen == e->gen ? b->count : 0);

		if (c)
			(*out)[(*n)++] = (struct emu_block_rec){ b->pc, b->size, b->insns, c };
	}
}

static void fill_result(struct emu_engine *e, struct emu_result *out)
{
	fill_blocks(e, &out->blocks, &out->n_blocks, false);
	out->edges = xcalloc(e->n_te ? e->n_te : 1, sizeof(*out->edges));
	for (size_t i = 0; i < e->n_te; i++) {
		const struct edge_ent *x = &e->edges[e->t_edges[i]];

		out->edges[out->n_edges++] = (struct emu_edge_rec){ x->from, x->to, x->count };
	}
	out->insn = xcalloc(e->n_ti ? e->n_ti : 1, sizeof(*out->insn));
	for (size_t i = 0; i < e->n_ti; i++) {
		const struct insn_info *x = &e->insns[e->t_insns[i]];

		out->insn[out->n_insn++] = (struct emu_insn_rec){ x->pc, x->execs };
	}
	out->values = xcalloc(e->n_tv * VALUE_SLOTS + 1, sizeof(*out->values));
	for (size_t i = 0; i < e->n_tv; i++) {
		const struct val_ent *x = &e->vals[e->t_vals[i]];

		for (unsigned k = 0; k < x->n; k++)
			out->values[out->n_values++] = (struct emu_value_rec){ x->pc, x->reg, x->v[k], x->c[k] };
	}
	out->conflicts = xcalloc(e->n_tc ? e->n_tc : 1, sizeof(*out->conflicts));
	for (size_t i = 0; i < e->n_tc; i++) {
		const struct conf_ent *x = &e->confs[e->t_confs[i]];

		out->conflicts[out->n_conflicts++] =
			(struct emu_conflict_rec){ x->load, x->store, x->kind, x->count };
	}
	out->steps = e->steps;
	out->n_steps = e->n_steps;
	e->steps = NULL;
}

void emu_engine_drop_kept(struct emu_engine *e);

/* The state and pages of a burst that stopped at its limit, for a window. */
static void keep(struct emu_engine *e)
{
	size_t n = 0;

	uc_context_save(e->fast, e->kept_ctx);
	free(e->kept_addr);
	free(e->kept_data);
	e->kept_addr = xcalloc(e->pages ? e->pages : 1, sizeof(*e->kept_addr));
	e->kept_data = xmalloc((e->pages ? e->pages : 1) * EMU_PAGE_SIZE);
	for (size_t i = 0; i < e->n_chunks; i++) {
		const struct chunk *c = &e->chunks[i];

		for (size_t k = 0; k < CHUNK_PAGES && n < e->pages; k++) {
			if (!bit(c->filled, k) || bit(c->unreadable, k))
				continue;
			e->kept_addr[n] = c->guest + k * EMU_PAGE_SIZE;
			memcpy(e->kept_data + n * EMU_PAGE_SIZE, c->host + k * EMU_PAGE_SIZE, EMU_PAGE_SIZE);
			n++;
		}
	}
	e->n_kept = n;
}

/* The kept burst back in place: its pages, then its state. */
static void unkeep(struct emu_engine *e)
{
	forget_pages(e, e->kept_addr, e->n_kept);
	for (size_t i = 0; i < e->n_kept; i++)
		emu_engine_fill(e, e->kept_addr[i], e->kept_data + i * EMU_PAGE_SIZE);
	uc_context_restore(e->fast, e->kept_ctx);
	e->uc = e->fast;
	e->stop_rip = read_rip(e->fast);
	emu_engine_drop_kept(e);
}

bool emu_engine_kept(const struct emu_engine *e)
{
	return e->kept;
}

void emu_engine_drop_kept(struct emu_engine *e)
{
	free(e->kept_addr);
	free(e->kept_data);
	e->kept_addr = NULL;
	e->kept_data = NULL;
	e->n_kept = 0;
	e->kept = false;
}

void emu_engine_burst(struct emu_engine *e, const struct emu_burst_req *req,
		      struct emu_result *out)
{
	memset(out, 0, sizeof(*out));
	begin_run(e, req->limit, req->time_us);
	e->uc = req->detail ? e->slow : e->fast;
	write_state(e->uc, &req->st);
	memset(&e->vregs, 0, sizeof(e->vregs));
	prefetch(e, &req->st);
	drop_changed_code(e);
	e->detail = req->detail;
	e->detailed = e->index = 0;
	e->prev_insn = NULL;
	e->ring_n = e->ring_at = 0;
	e->max_steps = req->trace;
	e->n_steps = 0;
	e->steps = xcalloc(req->trace ? req->trace : 1, sizeof(*e->steps));
	if (req->detail) {
		e->detail_on = true;
		run(e, req->st.rip);
		/* The detail ended at a block's start: the rest by blocks only. */
		if (e->end == PATHS_END_LIMIT && e->detailed >= e->detail && e->total < e->limit) {
			e->end = e->pending = -1;
			set_detail(e, false);
			run(e, e->stop_rip);
		}
		/* A window goes on in the fast engine. */
		set_detail(e, false);
	} else {
		e->detail_on = false;
		run(e, req->st.rip);
	}
	out->end = (uint8_t)e->end;
	out->end_pc = e->end_pc < EMU_USER_END ? e->end_pc : 0;
	memcpy(out->mnemonic, e->mnemonic, sizeof(out->mnemonic));
	if (e->end != PATHS_END_UNSUPPORTED)
		out->mnemonic[0] = '\0';
	out->insns = e->total;
	out->detailed = e->detailed;
	out->pages = e->pages;
	fill_result(e, out);
	/* A burst that ended in detail ran fewer instructions than their hooks saw. */
	if (out->detailed > out->insns)
		out->detailed = out->insns;
	if (out->n_steps > out->detailed)
		out->n_steps = (size_t)out->detailed;
	/* A burst kept replaces the one kept before; others leave it be. */
	out->kept = req->keep && (e->end == PATHS_END_LIMIT || e->end == PATHS_END_TIME) && !e->taint &&
		    !e->late;
	if (out->kept) {
		keep(e);
		e->kept = true;
	}
}

void emu_engine_window(struct emu_engine *e, const struct emu_window_req *req,
		       struct emu_window_result *out)
{
	uc_hook h1 = 0, h2 = 0;

	memset(out, 0, sizeof(*out));
	if (!e->kept) {
		out->miss = PATHS_MISS_LOST;
		return;
	}
	unkeep(e);
	begin_run(e, req->limit, req->time_us);
	e->wgen++;
	e->win = req;
	e->uc = e->fast;
	e->detail_on = false;
	e->key_reg = -1;
	for (int r = 0; r < VREG_RFLAGS && e->key_reg < 0; r++)
		if (req->b1.regs[r] != req->b2.regs[r])
			e->key_reg = r;
	uc_hook_add(e->uc, &h1, UC_HOOK_CODE, on_target, e, req->b1.rip, req->b1.rip);
	uc_ctl_remove_cache(e->uc, req->b1.rip, req->b1.rip + 1);
	if (req->b2.rip != req->b1.rip) {
		uc_hook_add(e->uc, &h2, UC_HOOK_CODE, on_target, e, req->b2.rip, req->b2.rip);
		uc_ctl_remove_cache(e->uc, req->b2.rip, req->b2.rip + 1);
	}
	run(e, e->stop_rip);
	uc_hook_del(e->uc, h1);
	if (h2)
		uc_hook_del(e->uc, h2);
	uc_ctl_remove_cache(e->uc, req->b1.rip, req->b1.rip + 1);
	uc_ctl_remove_cache(e->uc, req->b2.rip, req->b2.rip + 1);
	out->end_pc = e->end_pc < EMU_USER_END ? e->end_pc : 0;
	if (e->matched) {
		out->matched = true;
		out->to_b1 = e->at_b1;
		out->insns = e->at_b2 - e->at_b1;
		fill_blocks(e, &out->blocks, &out->n_blocks, true);
		if (!out->insns) {
			out->matched = false;
			out->miss = PATHS_MISS_AMBIGUOUS;
		}
		return;
	}
	switch (e->end) {
	case PATHS_END_SYSCALL: out->miss = PATHS_MISS_SYSCALL; break;
	case PATHS_END_UNSUPPORTED:
		out->miss = PATHS_MISS_UNSUPPORTED;
		memcpy(out->mnemonic, e->mnemonic, sizeof(out->mnemonic));
		break;
	case PATHS_END_UNREADABLE: out->miss = PATHS_MISS_UNREADABLE; break;
	case PATHS_END_LIMIT: out->miss = PATHS_MISS_NO_MATCH; break;
	default: out->miss = PATHS_MISS_FAULT; break;
	}
}

/* ---- life ------------------------------------------------------------------------------ */

/* The hooks both engines have; the slow one has those of detail too. */
static void add_hooks(struct emu_engine *e, uc_engine *uc, bool detail)
{
	uc_hook h;

	uc_hook_add(uc, &h, UC_HOOK_BLOCK, on_block, e, 1, 0);
	uc_hook_add(uc, &h, UC_HOOK_MEM_UNMAPPED, on_unmapped, e, 1, 0);
	uc_hook_add(uc, &h, UC_HOOK_INSN, on_syscall, e, 1, 0, UC_X86_INS_SYSCALL);
	uc_hook_add(uc, &h, UC_HOOK_INSN, on_syscall, e, 1, 0, UC_X86_INS_SYSENTER);
	uc_hook_add(uc, &h, UC_HOOK_INTR, on_intr, e, 1, 0);
	if (detail) {
		uc_hook_add(uc, &h, UC_HOOK_CODE, on_insn, e, 1, 0);
		uc_hook_add(uc, &h, UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE, on_mem, e, 1, 0);
	} else {
		uc_hook_add(uc, &h, UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE, on_access, e, 1, 0);
	}
}

struct emu_engine *emu_engine_new(uint64_t space, const struct emu_pager *pager)
{
	struct emu_engine *e = XNEW(struct emu_engine);

	e->space = space;
	e->pager = *pager;
	if (uc_open(UC_ARCH_X86, UC_MODE_64, &e->fast) || uc_open(UC_ARCH_X86, UC_MODE_64, &e->slow) ||
	    uc_context_alloc(e->fast, &e->ctx) || uc_context_alloc(e->fast, &e->kept_ctx) ||
	    cs_open(CS_ARCH_X86, CS_MODE_64, &e->cs)) {
		emu_engine_free(e);
		return NULL;
	}
	e->uc = e->fast;
	cs_option(e->cs, CS_OPT_DETAIL, CS_OPT_ON);
	setup_reg_map(e->cs);
	e->blocks = xcalloc(BLOCKS_CAP, sizeof(*e->blocks));
	e->insns = xcalloc(INSNS_CAP, sizeof(*e->insns));
	e->edges = xcalloc(EDGES_CAP, sizeof(*e->edges));
	e->vals = xcalloc(VALUES_TAB_CAP, sizeof(*e->vals));
	e->confs = xcalloc(CONFLICTS_CAP, sizeof(*e->confs));
	add_hooks(e, e->fast, false);
	add_hooks(e, e->slow, true);
	/* The instructions unicorn would do wrong stop it (none yet). */
	uc_ctl_exits_enable(e->fast);
	uc_ctl_exits_enable(e->slow);
	return e;
}

void emu_engine_free(struct emu_engine *e)
{
	if (!e)
		return;
	if (e->ctx)
		uc_context_free(e->ctx);
	if (e->kept_ctx)
		uc_context_free(e->kept_ctx);
	free(e->kept_addr);
	free(e->kept_data);
	if (e->fast)
		uc_close(e->fast);
	if (e->slow)
		uc_close(e->slow);
	if (e->cs)
		cs_close(&e->cs);
	for (size_t i = 0; i < e->n_chunks; i++) {
		munmap(e->chunks[i].host, CHUNK_SIZE);
		free(e->chunks[i].crc);
	}
	free(e->blocks);
	free(e->insns);
	free(e->edges);
	free(e->vals);
	free(e->confs);
	free(e->t_blocks);
	free(e->t_edges);
	free(e->t_insns);
	free(e->t_vals);
	free(e->t_confs);
	free(e->steps);
	free(e);
}

uint64_t emu_engine_space(const struct emu_engine *e)
{
	return e->space;
}

void emu_engine_bind(struct emu_engine *e, uint64_t space)
{
	e->space = space;
}
