/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/callchain.c - recording each sample's call stack.
 */
#include "config.h"

#include "collect/callchain.h"

#include <asm/perf_regs.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/order.h"
#include "collect/perf.h"
#include "collect/perfrec.h"
#include "collect/perfsample.h"
#include "collect/store.h"
#include "collect/unwind-worker.h"
#include "core/cli.h"
#include "core/die.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "core/timeutil.h"
#include "core/xalloc.h"
#include "db/binaries.h"
#include "db/db.h"
#include "db/image.h"
#include "db/meta.h"

/* perf's number of each general register by DWARF number (rbp, rsp: -1, taken apart). */
static const int8_t perf_reg_of[16] = {
	PERF_REG_X86_AX, PERF_REG_X86_DX, PERF_REG_X86_CX, PERF_REG_X86_BX,
	PERF_REG_X86_SI, PERF_REG_X86_DI, -1, -1,
	PERF_REG_X86_R8, PERF_REG_X86_R9, PERF_REG_X86_R10, PERF_REG_X86_R11,
	PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14, PERF_REG_X86_R15,
};

/*
 * The unwind registers: bp, sp, ip, and the other general registers, for
 * code that keeps its CFA in one of them (OpenSSL's assembly, ld.so's
 * lazy-binding trampoline): 112 more bytes a sample in the ring, against
 * the stack copy's 12 KiB.
 */
#define UNWIND_REGS ((1ull << PERF_REG_X86_BP) | (1ull << PERF_REG_X86_SP) | \
		     (1ull << PERF_REG_X86_IP) | (1ull << PERF_REG_X86_AX) | \
		     (1ull << PERF_REG_X86_BX) | (1ull << PERF_REG_X86_CX) | \
		     (1ull << PERF_REG_X86_DX) | (1ull << PERF_REG_X86_SI) | \
		     (1ull << PERF_REG_X86_DI) | (0xffull << PERF_REG_X86_R8))

/* The registers a walk starts from, as the sample has them. */
static void walk_regs(const struct perf_sample_ext *x, struct unwind_regs *r)
{
	memset(r, 0, sizeof(*r));
	r->ip = x->regs[PERF_REG_X86_IP];
	r->sp = x->regs[PERF_REG_X86_SP];
	r->bp = x->regs[PERF_REG_X86_BP];
	for (unsigned i = 0; i < 16; i++)
		if (perf_reg_of[i] >= 0 && (x->regs_mask >> perf_reg_of[i] & 1)) {
			r->gpr[i] = x->regs[perf_reg_of[i]];
			r->known |= (uint16_t)(1u << i);
		}
}
/* Memory the in-memory stack table may hold before samples are dropped. */
#define STACKS_MAX_BYTES ((size_t)256 << 20)

int callgraph_parse(struct callchain_opts *o, const char *arg)
{
	uint64_t v;

	if (!strcmp(arg, "fp")) {
		o->mode = CALLGRAPH_FP;
		return 0;
	}
	if (strncmp(arg, "dwarf", 5) || (arg[5] && arg[5] != ','))
		return errorf("unknown call graph mode '%s' (fp, dwarf or dwarf,SIZE)", arg);
	o->mode = CALLGRAPH_DWARF;
	if (!o->stack_size)
		o->stack_size = CALLGRAPH_DEFAULT_STACK;
	if (!arg[5])
		return 0;
	if (cli_parse_range(arg + 6, 64, CALLGRAPH_MAX_STACK, &v) || v % 8)
		return errorf("bad stack size '%s' (bytes, a multiple of 8, 64 to %u)", arg + 6,
			      CALLGRAPH_MAX_STACK);
	o->stack_size = (uint32_t)v;
	return 0;
}

/* The unwind table of one image (indexed like procs' images). */
struct ctable {
	uint8_t state;          /* enum table_state */
	uint32_t seq;           /* T_PENDING: the worker's request */
	uint32_t pid;           /* a process that maps it (its root is where to open it) */
	bool waited;            /* a sample waited for it once: the others do not */
	uint32_t misses;        /* samples that needed it before it was made */
	struct utable t;
	uint64_t last_use;
	/*
	 * Made by the worker, not kept in the database yet: it is, once its
	 * image is in an epoch's index (a table asked for ahead, of a binary
	 * that no sample lands in, would be a cache entry no epoch uses).
	 */
	bool cache_pending;
	bool cache_replace;     /* the database's table is damaged or old: replaced at once */
};

/*
 * UNKNOWN -> QUEUED (mapped: to be asked for) -> PENDING (asked) -> READY
 * or FAILED; evicted READY tables go back to UNKNOWN.
 */
enum table_state { T_UNKNOWN, T_QUEUED, T_PENDING, T_READY, T_FAILED };

/*
 * Tables asked for ahead (at mmap) that the worker may have open at once:
 * few, so that a table a sample needs now (asked for at once) waits behind
 * little.
 */
#define MAX_PREFETCH 2

struct callchain {
	struct callchain_opts opt;
	struct procs *procs;
	struct store *store;
	struct unwind_worker *worker;
	bool offline;
	int64_t max_wait_ns;            /* how long a sample may wait for a table being made */
	struct ctable *tables;
	size_t n_tables;
	size_t table_bytes;
	uint32_t *queue;                /* images to ask for, first come first */
	size_t n_queue, a_queue;
	struct u64map seq_image;        /* open request -> image + 1 */
	uint64_t clock;                 /* advances per sample: table recency */

	struct stack_table st;          /* since the last write */
	struct u64map image_map;        /* procs image -> st image + 1 */
	int64_t dirty_since;
	struct callchain_stats pend;    /* the samples in st */
	struct callchain_stats stats;   /* this epoch, written (and the table counters) */

	bool cache_failed;              /* a table could not be kept in the database: no more tries */

	struct u64map comm_of;          /* kernel threads: pid -> index + 1 into comms */
	char (*comms)[STACK_COMM_MAX + 1];
	size_t n_comms, a_comms;
};

struct callchain *callchain_new(const struct callchain_opts *o, struct procs *procs,
				struct store *store, bool offline, int64_t max_wait_ns)
{
	struct callchain *cg = XNEW(struct callchain);

	cg->opt = *o;
	cg->max_wait_ns = max_wait_ns;
	cg->procs = procs;
	cg->store = store;
	cg->offline = offline;
	stack_table_init(&cg->st);
	if (o->mode == CALLGRAPH_DWARF && !offline && !(cg->worker = unwind_worker_start()))
		warning("user stacks will be walked by frame pointers only");
	return cg;
}

void callchain_free(struct callchain *cg)
{
	if (!cg)
		return;
	unwind_worker_stop(cg->worker);
	for (size_t i = 0; i < cg->n_tables; i++)
		utable_release(&cg->tables[i].t);
	free(cg->tables);
	free(cg->queue);
	u64map_release(&cg->seq_image);
	stack_table_release(&cg->st);
	u64map_release(&cg->image_map);
	u64map_release(&cg->comm_of);
	free(cg->comms);
	free(cg);
}

void callchain_attr(const struct callchain *cg, struct perf_event_attr *attr)
{
	if (cg->opt.mode == CALLGRAPH_NONE || cg->opt.mode == CALLGRAPH_THREADS)
		return;
	attr->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (cg->opt.mode != CALLGRAPH_DWARF)
		return;
	/* The kernel's own frames only: the user part is unwound here. */
	attr->exclude_callchain_user = 1;
	attr->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	attr->sample_regs_user |= UNWIND_REGS;
	attr->sample_stack_user = cg->opt.stack_size;
}

/* ---- unwind tables ------------------------------------------------------------------- */

/* Opens a mapped file for the worker: never a device or a FIFO, never parsed here. */
static int open_binary(const struct db_image *img, uint32_t pid)
{
	char path[4200], self[64];
	struct stat st;
	int fd = -1, rfd;

	if (strstr(img->path, " (deleted)") || img->path[0] != '/')
		return -1;
	/* A process in another mount namespace sees its own files. */
	if (pid && snprintf(path, sizeof(path), "/proc/%" PRIu32 "/root%s", pid, img->path) <
			   (int)sizeof(path))
		fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		fd = open(img->path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (img->ino && (st.st_ino != img->ino || st.st_dev != img->dev))) {
		close(fd);
		return -1;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	rfd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	close(fd);
	return rfd;
}

static void evict(struct callchain *cg, uint32_t keep)
{
	while (cg->table_bytes > CALLGRAPH_TABLE_BYTES) {
		struct ctable *old = NULL;

		for (size_t i = 0; i < cg->n_tables; i++) {
			struct ctable *t = &cg->tables[i];

			if (t->state == T_READY && i != keep && (!old || t->last_use < old->last_use))
				old = t;
		}
		if (!old)
			return;
		cg->table_bytes -= utable_bytes(&old->t);
		utable_release(&old->t);
		old->state = T_UNKNOWN;
		old->waited = false;
		cg->stats.table_evictions++;
	}
}

static struct ctable *ctable(struct callchain *cg, uint32_t image)
{
	if (image >= cg->n_tables) {
		size_t n = cg->procs->n_images > image ? cg->procs->n_images : image + 1;

		cg->tables = xreallocarray(cg->tables, n, sizeof(*cg->tables));
		memset(cg->tables + cg->n_tables, 0, (n - cg->n_tables) * sizeof(*cg->tables));
		cg->n_tables = n;
	}
	return &cg->tables[image];
}

/* Tables kept in the database: of files with a build-id, by a live collector. */
static bool cacheable(const struct callchain *cg, const struct db_image *img)
{
	return !cg->offline && cg->store && img->kind == IMAGE_FILE && img->build_id_len;
}

static void cache_table(struct callchain *cg, const struct db_image *img, const struct utable *t);

/* An answer of the worker. */
static void on_reply(void *ctx, uint32_t seq, struct utable *t, const char *why)
{
	struct callchain *cg = ctx;
	uint64_t v;
	struct ctable *ct;
	const struct db_image *img;

	(void)why;
	if (!u64map_get(&cg->seq_image, seq, &v) || !v) {
		if (t)
			utable_release(t);
		return;
	}
	*u64map_slot(&cg->seq_image, seq) = 0;
	ct = ctable(cg, (uint32_t)(v - 1));
	img = &procs_cimage(cg->procs, (uint32_t)(v - 1))->img;
	ct->state = T_FAILED;
	if (!t) {
		cg->stats.table_failures++;
	} else if (img->build_id_len && (t->build_id_len != img->build_id_len ||
					 memcmp(t->build_id, img->build_id, img->build_id_len))) {
		/* Not the binary that was mapped (replaced since). */
		utable_release(t);
		cg->stats.table_failures++;
	} else {
		ct->t = *t;
		ct->state = T_READY;
		cg->table_bytes += utable_bytes(&ct->t);
		cg->stats.tables++;
		if (ct->cache_replace)
			cache_table(cg, img, &ct->t);
		else
			ct->cache_pending = cacheable(cg, img);
		ct->cache_replace = false;
		evict(cg, (uint32_t)(v - 1));
	}
}

/* A table the database keeps from an earlier run (db_unwind_load), if it is img's. */
static bool cached_table(struct callchain *cg, uint32_t image, const struct db_image *img)
{
	struct strbuf hex = STRBUF_INIT, wire = STRBUF_INIT;
	struct ctable *ct = ctable(cg, image);
	struct utable t;
	const char *why;
	bool ok = false;
	int rc;

	if (!cacheable(cg, img))
		return false;
	strbuf_add_build_id(&hex, img);
	rc = db_unwind_load(cg->store->db, hex.buf, &wire);
	if (rc < 0)
		ct->cache_replace = true;  /* damaged (a warning): replaced once made */
	if (rc == 0) {
		rc = utable_decode((const uint8_t *)wire.buf, wire.len, &t, &why);
		if (rc == -2) {
			/* an older dcpi's table: made again, and replaced, without a word */
			ct->cache_replace = true;
		} else if (rc) {
			warning("%s/unwind/%s: %s (the table is made again)", cg->store->db->path,
				hex.buf, why);
			ct->cache_replace = true;
		} else if (t.build_id_len != img->build_id_len ||
			   memcmp(t.build_id, img->build_id, img->build_id_len)) {
			warning("%s/unwind/%s: the table of another binary (it is made again)",
				cg->store->db->path, hex.buf);
			utable_release(&t);
			ct->cache_replace = true;
		} else {
			ct->t = t;
			ct->state = T_READY;
			cg->table_bytes += utable_bytes(&ct->t);
			cg->stats.tables++;
			cg->stats.tables_cached++;
			evict(cg, image);
			ok = true;
		}
	}
	strbuf_release(&hex);
	strbuf_release(&wire);
	return ok;
}

/* Keeps a table the worker made in the database, for the next run (a cache: failures only warn). */
static void cache_table(struct callchain *cg, const struct db_image *img, const struct utable *t)
{
	struct strbuf hex = STRBUF_INIT, wire = STRBUF_INIT;

	if (!cacheable(cg, img) || !t->build_id_len || cg->cache_failed)
		return;
	strbuf_add_build_id(&hex, img);
	utable_encode(t, &wire);
	if (db_unwind_store(cg->store->db, hex.buf, wire.buf, wire.len)) {
		warning("unwind tables are not kept in the database for the next run");
		cg->cache_failed = true;
	}
	strbuf_release(&hex);
	strbuf_release(&wire);
}

/* Sends the request for image's table (QUEUED or UNKNOWN -> PENDING or FAILED). */
static void ask_table(struct callchain *cg, uint32_t image)
{
	struct ctable *ct = ctable(cg, image);
	const struct db_image *img = &procs_cimage(cg->procs, image)->img;
	int fd = -1;

	if (cached_table(cg, image, img))
		return;
	ct->state = T_FAILED;
	if (!cg->worker || (img->kind == IMAGE_FILE && (fd = open_binary(img, ct->pid)) < 0) ||
	    unwind_worker_request(cg->worker, fd, &ct->seq)) {
		cg->stats.table_failures++;
	} else {
		ct->state = T_PENDING;
		*u64map_slot(&cg->seq_image, ct->seq) = (uint64_t)image + 1;
	}
	if (fd >= 0)
		close(fd);
}

/*
 * Asks for queued tables while the worker has room: first those that the
 * most samples needed (the hot binaries), then those asked for ahead.
 */
static void pump(struct callchain *cg)
{
	while (cg->n_queue && unwind_worker_pending(cg->worker) < MAX_PREFETCH) {
		size_t best = 0;

		for (size_t k = 1; k < cg->n_queue; k++)
			if (ctable(cg, cg->queue[k])->misses > ctable(cg, cg->queue[best])->misses)
				best = k;
		if (ctable(cg, cg->queue[best])->state == T_QUEUED)
			ask_table(cg, cg->queue[best]);
		cg->queue[best] = cg->queue[--cg->n_queue];
	}
}

static bool wants_table(const struct callchain *cg, uint32_t image)
{
	enum image_kind kind = procs_cimage(cg->procs, image)->img.kind;

	return cg->worker && (kind == IMAGE_FILE || kind == IMAGE_VDSO);
}

/* Queues image's table to be made, if it is not known yet. */
static void prefetch(struct callchain *cg, uint32_t image, uint32_t pid)
{
	struct ctable *ct;

	if (!wants_table(cg, image))
		return;
	ct = ctable(cg, image);
	if (ct->state != T_UNKNOWN)
		return;
	ct->state = T_QUEUED;
	ct->pid = pid;
	ALLOC_GROW(cg->queue, cg->n_queue + 1, cg->a_queue);
	cg->queue[cg->n_queue++] = image;
	pump(cg);
	ct = ctable(cg, image);
}

void callchain_mapped(struct callchain *cg, uint32_t pid, uint64_t start)
{
	struct addr_space *as;
	uint32_t image;
	uint64_t off;

	/*
	 * Only a process tree's: a machine maps many binaries it rarely runs,
	 * and a big one (a compiler's) would keep the worker from the hot ones.
	 */
	if (!cg->max_wait_ns)
		return;
	as = procs_lookup(cg->procs, pid);
	if (as && procs_resolve(cg->procs, as, start, &image, &off))
		prefetch(cg, image, pid);
}

void callchain_poll(struct callchain *cg)
{
	if (!cg->worker || !unwind_worker_pending(cg->worker))
		return;
	unwind_worker_poll(cg->worker, 0, 0, on_reply, cg);
	pump(cg);
}

int callchain_pollfd(const struct callchain *cg)
{
	return unwind_worker_fd(cg->worker);
}

/*
 * The table of image.  A process tree's collector asks for a missing one at
 * once and waits for it (at most max_wait_ns); the daemon queues it, hotter
 * binaries first, and goes on.
 */
static struct ctable *table_of(struct callchain *cg, uint32_t image, uint32_t pid)
{
	struct ctable *ct = ctable(cg, image);

	if ((ct->state == T_UNKNOWN || ct->state == T_QUEUED) && wants_table(cg, image)) {
		if (!ct->pid)
			ct->pid = pid;
		if (cg->max_wait_ns) {
			ask_table(cg, image);
		} else {
			ct->misses++;
			prefetch(cg, image, pid);
		}
		ct = ctable(cg, image);
	}
	/* One sample waits; later ones go on meanwhile. */
	if (ct->state == T_PENDING && !ct->waited && cg->max_wait_ns) {
		int64_t t0 = time_monotonic_ns();

		ct->waited = true;
		if (unwind_worker_poll(cg->worker, ct->seq, t0 + cg->max_wait_ns, on_reply, cg) == 1)
			cg->stats.table_waits_expired++;
		cg->stats.table_ns += time_monotonic_ns() - t0;
		pump(cg);
		ct = ctable(cg, image);
	} else if (ct->state == T_QUEUED) {
		ct->misses++;
	}
	ct->last_use = ++cg->clock;
	return ct;
}

void callchain_set_table(struct callchain *cg, uint32_t image, const struct utable *t)
{
	struct ctable *ct = ctable(cg, image);

	utable_release(&ct->t);
	ct->t = *t;
	ct->t.rows = xmemdup(t->rows, (t->n + 1) * sizeof(*t->rows));
	ct->state = T_READY;
}

struct find_ctx {
	struct callchain *cg;
	struct addr_space *as;
	bool unmapped;          /* some lookup found no mapping */
};

static const struct utable *find_table(void *ctx, uint64_t pc, uint64_t *offset, bool *mapped)
{
	struct find_ctx *f = ctx;
	enum image_kind kind;
	struct ctable *ct;
	uint32_t image;

	*mapped = procs_resolve(f->cg->procs, f->as, pc, &image, offset);
	f->unmapped |= !*mapped;
	if (!*mapped)
		return NULL;
	kind = procs_cimage(f->cg->procs, image)->img.kind;
	if (kind != IMAGE_FILE && kind != IMAGE_VDSO)
		return NULL;
	ct = table_of(f->cg, image, f->as->pid);
	return ct->state == T_READY ? &ct->t : NULL;
}

/* ---- recording ----------------------------------------------------------------------- */

/*
 * A sample unwound as it was read (queue_unwound) carries this header bit,
 * which the kernel never sets on a sample, and in place of its stack copy:
 * the magic, u32 frames, u32 frame-pointer steps, then per frame its pc,
 * file offset (u64 each) and image (u32, and 4 bytes of padding), in the
 * collector's own byte order: the record never leaves the process.
 */
#define MISC_UNWOUND (1u << 13)
#define UNWOUND_MAGIC 0x31574e5549504344ull    /* "DCPIUNW1" */
#define UNWOUND_HEAD 16
#define UNWOUND_FRAME 24

struct frames {
	uint32_t id[STACK_MAX_DEPTH];
	size_t n;
};

/* The stack table's number of a procs image. */
static uint32_t st_image(struct callchain *cg, uint32_t image)
{
	uint64_t *slot = u64map_slot(&cg->image_map, image);

	if (!*slot)
		*slot = (uint64_t)stack_table_image(&cg->st, procs_cimage(cg->procs, image)->img.key) + 1;
	return (uint32_t)(*slot - 1);
}

static void add_frame(struct callchain *cg, struct frames *f, uint32_t image, uint64_t offset)
{
	if (f->n >= STACK_MAX_DEPTH)
		return;
	store_note_frame(cg->store, image, offset);
	f->id[f->n++] = stack_table_frame(&cg->st, st_image(cg, image), offset);
}

/* A user pc (frame i of the user part): callers are looked up at the call. */
static void add_user_frame(struct callchain *cg, struct frames *f, struct addr_space *as,
			   uint64_t pc, size_t i)
{
	uint32_t image;
	uint64_t off;

	if (i && pc)
		pc--;
	procs_resolve(cg->procs, as, pc, &image, &off);
	add_frame(cg, f, image, off);
}

/* The kernel's part of the chain, and in fp mode the user part (its pcs). */
static void chain_frames(struct callchain *cg, const struct perf_sample_ext *x, struct frames *f,
			 uint64_t *user, size_t *n_user)
{
	uint64_t ctx = 0;
	size_t k = 0;

	*n_user = 0;
	for (size_t i = 0; i < x->n_callchain; i++) {
		uint64_t e;

		memcpy(&e, x->callchain + i, sizeof(e));
		if (e >= PERF_CONTEXT_MAX) {
			ctx = e;
			continue;
		}
		if (ctx == PERF_CONTEXT_KERNEL)
			add_frame(cg, f, cg->procs->kernel_image, k++ && e ? e - 1 : e);
		else if (ctx == PERF_CONTEXT_USER && *n_user < UNWIND_MAX_FRAMES)
			user[(*n_user)++] = e;
	}
}

static enum stack_end end_of(enum unwind_end e)
{
	switch (e) {
	case UNWIND_COMPLETE: return STACK_END_COMPLETE;
	case UNWIND_NO_TABLE: return STACK_END_NO_TABLE;
	case UNWIND_NO_CFI: return STACK_END_NO_CFI;
	case UNWIND_TRUNCATED:
	case UNWIND_DEPTH: return STACK_END_TRUNCATED;
	default: return STACK_END_BAD;
	}
}

/* The user part by the stack copy. */
static enum stack_end dwarf_frames(struct callchain *cg, const struct perf_sample_ext *x,
				   struct addr_space *as, struct frames *f)
{
	struct unwind_regs regs;
	struct unwind_stack stk = { x->regs[PERF_REG_X86_SP], x->stack, (size_t)x->stack_size };
	struct find_ctx fc = { cg, as, false };
	struct unwind_result res;

	walk_regs(x, &regs);
	unwind_stack(&regs, &stk, find_table, &fc, true, &res);
	for (size_t i = 0; i < res.n; i++)
		add_user_frame(cg, f, as, res.pcs[i], i);
	cg->pend.fp_steps += res.fp_steps;
	return end_of(res.end);
}

/* A name for a thread without an address space (a kernel thread). */
static const char *kernel_comm(struct callchain *cg, uint32_t pid)
{
	uint64_t *slot;
	char path[64];
	ssize_t n = 0;
	int fd;

	if (!pid)
		return "swapper";
	slot = u64map_slot(&cg->comm_of, pid);
	if (*slot)
		return cg->comms[*slot - 1];
	ALLOC_GROW(cg->comms, cg->n_comms + 1, cg->a_comms);
	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/comm", pid);
	if (!cg->offline && (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, cg->comms[cg->n_comms], STACK_COMM_MAX);
		close(fd);
	}
	if (n <= 0)
		n = snprintf(cg->comms[cg->n_comms], STACK_COMM_MAX + 1, "[%" PRIu32 "]", pid);
	cg->comms[cg->n_comms][n > STACK_COMM_MAX ? STACK_COMM_MAX : n] = '\0';
	cg->comms[cg->n_comms][strcspn(cg->comms[cg->n_comms], "\n")] = '\0';
	*slot = ++cg->n_comms;
	return cg->comms[*slot - 1];
}

/*
 * The frames of a sample unwound as it was read (callchain_queue), if the
 * address space still maps every one of them where it did then: otherwise
 * (a mapping changed in between, which the read could not see) only the
 * sampled pc stays, and the stack is bad.
 */
static enum stack_end replay_frames(struct callchain *cg, const struct perf_sample_ext *x,
				    struct addr_space *as, struct frames *f)
{
	const uint8_t *p = x->stack;
	uint64_t magic, pc, off, off_now;
	uint32_t n, fp_steps, image, image_now;

	if (x->stack_size < UNWOUND_HEAD)
		return STACK_END_BAD;
	memcpy(&magic, p, 8);
	memcpy(&n, p + 8, 4);
	memcpy(&fp_steps, p + 12, 4);
	if (magic != UNWOUND_MAGIC || !n || n > UNWIND_MAX_FRAMES ||
	    x->stack_size < UNWOUND_HEAD + (uint64_t)n * UNWOUND_FRAME)
		return STACK_END_BAD;
	p += UNWOUND_HEAD;
	for (uint32_t i = 0; i < n; i++) {
		memcpy(&pc, p + i * UNWOUND_FRAME, 8);
		memcpy(&off, p + i * UNWOUND_FRAME + 8, 8);
		memcpy(&image, p + i * UNWOUND_FRAME + 16, 4);
		procs_resolve(cg->procs, as, i && pc ? pc - 1 : pc, &image_now, &off_now);
		if (image_now != image || off_now != off) {
			memcpy(&pc, p, 8);
			add_user_frame(cg, f, as, pc, 0);
			cg->pend.stale++;
			return STACK_END_BAD;
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		memcpy(&off, p + i * UNWOUND_FRAME + 8, 8);
		memcpy(&image, p + i * UNWOUND_FRAME + 16, 4);
		add_frame(cg, f, image, off);
	}
	cg->pend.fp_steps += fp_steps;
	return STACK_END_COMPLETE;
}

static enum stack_end user_part(struct callchain *cg, const struct perf_rec *r,
				const struct perf_sample_ext *x, struct addr_space *as,
				const uint64_t *user, size_t n_user, bool unwound, struct frames *f)
{
	bool kernel_sample = !r->u.sample.user;

	if (!as)
		return kernel_sample && !x->regs_abi ? STACK_END_KERNEL : STACK_END_NONE;
	if (cg->opt.mode == CALLGRAPH_DWARF && x->regs_abi && x->stack && x->stack_size)
		return unwound ? replay_frames(cg, x, as, f) : dwarf_frames(cg, x, as, f);
	if (cg->opt.mode == CALLGRAPH_FP && n_user) {
		for (size_t i = 0; i < n_user; i++)
			add_user_frame(cg, f, as, user[i], i);
		return STACK_END_FP;
	}
	if (kernel_sample)
		return x->regs_abi ? STACK_END_NONE : STACK_END_KERNEL;
	add_user_frame(cg, f, as, r->u.sample.ip, 0);
	return STACK_END_NONE;
}

/* Less than this to drop: the record is queued as it is. */
#define QUEUE_TRIM_MIN 1024

/*
 * Unwinds a sample's user stack straight from the ring, with the address
 * spaces as they are when it is read, and queues the record with the
 * frames found in place of its stack copy.  Only a walk that reached the
 * thread's entry is kept so; dispatch checks that every frame still maps
 * where it did (replay_frames).  This reads the few words of the stack the
 * walk needs instead of copying the whole stack twice (out of the ring,
 * and through the time queue): most of a sample's cost.
 */
static bool queue_unwound(struct callchain *cg, struct order_queue *q, int cpu, uint64_t time,
			  const struct perf_event_header *h, const struct perf_sample_ext *x,
			  size_t head)
{
	int64_t t0 = time_monotonic_ns();
	uint32_t pid, n32;
	uint64_t v;
	struct unwind_regs regs;
	struct unwind_stack stk = { x->regs[PERF_REG_X86_SP], x->stack, (size_t)x->stack_size };
	struct find_ctx fc = { cg, NULL, false };
	struct unwind_result res;
	size_t payload, len;
	uint8_t *out, *p;

	/* pid follows the header, the identifier and the ip (PERF_COLLECT_SAMPLE_TYPE). */
	if (!x->regs_abi || !x->stack_size || head < sizeof(*h) + 24 + 8)
		return false;
	memcpy(&pid, (const uint8_t *)h + sizeof(*h) + 16, 4);
	if (!pid || !(fc.as = procs_lookup(cg->procs, pid)))
		return false;
	walk_regs(x, &regs);
	unwind_stack(&regs, &stk, find_table, &fc, true, &res);
	/*
	 * A pc outside every mapping known yet (the process has just exec'd,
	 * and its mappings are still in the time queue) was walked by frame
	 * pointers, which can end at a 0 word by chance: that is no proof of
	 * a whole stack, and the mappings are about to change.
	 */
	if (res.end != UNWIND_COMPLETE || !res.n || fc.unmapped)
		return false;
	payload = UNWOUND_HEAD + res.n * UNWOUND_FRAME;
	len = head + payload + 8;
	if (len > UINT16_MAX)
		return false;
	out = order_push_space(q, cpu, time, len);
	memcpy(out, h, head - 8);
	((struct perf_event_header *)(void *)out)->size = (uint16_t)len;
	((struct perf_event_header *)(void *)out)->misc |= MISC_UNWOUND;
	v = payload;
	memcpy(out + head - 8, &v, 8);
	p = out + head;
	v = UNWOUND_MAGIC;
	memcpy(p, &v, 8);
	n32 = (uint32_t)res.n;
	memcpy(p + 8, &n32, 4);
	memcpy(p + 12, &res.fp_steps, 4);
	for (size_t i = 0; i < res.n; i++) {
		uint8_t *fr = p + UNWOUND_HEAD + i * UNWOUND_FRAME;
		uint64_t off = 0;
		uint32_t image = 0;

		/* as replay_frames resolves them (a return address at its call) */
		procs_resolve(cg->procs, fc.as, i && res.pcs[i] ? res.pcs[i] - 1 : res.pcs[i], &image,
			      &off);
		memcpy(fr, &res.pcs[i], 8);
		memcpy(fr + 8, &off, 8);
		memcpy(fr + 16, &image, 4);
		memset(fr + 20, 0, 4);
	}
	v = payload;
	memcpy(p + payload, &v, 8);
	cg->pend.early++;
	cg->pend.unwind_ns += time_monotonic_ns() - t0;
	return true;
}

bool callchain_queue(struct callchain *cg, struct order_queue *q, int cpu, uint64_t time,
		     const struct perf_event_header *h, uint64_t sample_type, uint64_t regs_mask)
{
	struct perf_sample_ext x;
	size_t head, keep, len;
	uint64_t v;
	uint8_t *out;

	if (cg->opt.mode != CALLGRAPH_DWARF || h->type != PERF_RECORD_SAMPLE ||
	    perf_sample_ext_parse(h, h->size, sample_type, regs_mask, &x) || !x.stack)
		return false;
	/* The stack copy is the last field: size, the bytes, dyn_size. */
	head = (size_t)(x.stack - (const uint8_t *)h);
	if (cg->procs && queue_unwound(cg, q, cpu, time, h, &x, head))
		return true;
	keep = (size_t)((x.stack_size + 7) & ~(uint64_t)7);
	if (head + keep + 8 + QUEUE_TRIM_MIN > h->size)
		return false;
	len = head + keep + 8;
	out = order_push_space(q, cpu, time, len);
	memcpy(out, h, head - 8);
	((struct perf_event_header *)(void *)out)->size = (uint16_t)len;
	v = keep;
	memcpy(out + head - 8, &v, 8);
	memcpy(out + head, x.stack, (size_t)x.stack_size);
	memset(out + head + x.stack_size, 0, keep - (size_t)x.stack_size);
	memcpy(out + head + keep, &x.stack_size, 8);
	return true;
}

void callchain_sample(struct callchain *cg, const struct perf_rec *r, const void *rec, size_t len,
		      uint64_t sample_type, uint64_t regs_mask, unsigned ev)
{
	int64_t t0 = time_monotonic_ns();
	struct perf_sample_ext x;
	uint64_t user[UNWIND_MAX_FRAMES];
	size_t n_user = 0;
	struct frames f;
	struct addr_space *as = r->pid ? procs_lookup(cg->procs, r->pid) : NULL;
	enum stack_end end;
	uint32_t thread;

	f.n = 0;
	cg->clock++;
	if (stack_table_bytes(&cg->st) > STACKS_MAX_BYTES) {
		cg->pend.dropped++;
		return;
	}
	if (cg->opt.mode == CALLGRAPH_THREADS || perf_sample_ext_parse(rec, len, sample_type,
								      regs_mask, &x)) {
		memset(&x, 0, sizeof(x));
		end = STACK_END_NONE;
	} else {
		bool unwound = ((const struct perf_event_header *)rec)->misc & MISC_UNWOUND;

		chain_frames(cg, &x, &f, user, &n_user);
		end = user_part(cg, r, &x, as, user, n_user, unwound, &f);
	}
	if (!f.n && r->u.sample.user && as)     /* nothing came: the sampled pc alone */
		add_user_frame(cg, &f, as, r->u.sample.ip, 0);
	else if (!f.n)
		add_frame(cg, &f, r->u.sample.user ? cg->procs->unknown_image : cg->procs->kernel_image,
			  r->u.sample.ip);
	thread = stack_table_thread(&cg->st, r->pid, r->tid, as ? as->comm : kernel_comm(cg, r->pid));
	if (thread == UINT32_MAX) {
		cg->pend.dropped++;
		return;
	}
	stack_table_add(&cg->st, stack_table_stack(&cg->st, f.id, f.n, end), thread,
			(enum dcpi_event)ev, 1);
	cg->pend.samples++;
	cg->pend.ends[end]++;
	cg->pend.frames += f.n;
	if (!cg->dirty_since)
		cg->dirty_since = t0;
	cg->pend.unwind_ns += time_monotonic_ns() - t0;
}

/* ---- epochs and writing ------------------------------------------------------------------ */

void callchain_begin(struct callchain *cg)
{
	struct stack_table old;
	uint64_t tables = cg->stats.tables, failures = cg->stats.table_failures;
	uint64_t evictions = cg->stats.table_evictions, expired = cg->stats.table_waits_expired;
	uint64_t cached = cg->stats.tables_cached;
	int64_t table_ns = cg->stats.table_ns;

	memset(&cg->stats, 0, sizeof(cg->stats));
	cg->stats.tables = tables;
	cg->stats.table_failures = failures;
	cg->stats.table_evictions = evictions;
	cg->stats.table_waits_expired = expired;
	cg->stats.tables_cached = cached;
	cg->stats.table_ns = table_ns;
	/* A continued epoch: its kallsyms subset must keep covering its stacks. */
	if (db_stacks_load(cg->store->db, cg->store->seq, &old))
		return;
	for (size_t i = 0; i < old.n_frames; i++)
		if (!strcmp(old.images[old.frames[i].image], "kernel"))
			store_note_frame(cg->store, cg->procs->kernel_image, old.frames[i].offset);
	stack_table_release(&old);
}

bool callchain_due(const struct callchain *cg, int64_t now, int64_t interval_ns)
{
	return cg->dirty_since && now - cg->dirty_since >= interval_ns;
}

static void add_stats(struct callchain_stats *to, const struct callchain_stats *s)
{
	to->samples += s->samples;
	for (int i = 0; i < STACK_END__COUNT; i++)
		to->ends[i] += s->ends[i];
	to->frames += s->frames;
	to->fp_steps += s->fp_steps;
	to->early += s->early;
	to->stale += s->stale;
	to->dropped += s->dropped;
	to->unwind_ns += s->unwind_ns;
}

/* Keeps the tables made since the last write whose images the epoch's index now names. */
static void cache_tables(struct callchain *cg)
{
	for (uint32_t i = 0; i < cg->n_tables; i++) {
		struct ctable *ct = &cg->tables[i];
		const struct db_image *img;

		if (!ct->cache_pending || ct->state != T_READY)
			continue;
		img = &procs_cimage(cg->procs, i)->img;
		if (!image_index_find(&cg->store->index, img->key))
			continue;
		ct->cache_pending = false;
		cache_table(cg, img, &ct->t);
	}
}

int callchain_write(struct callchain *cg, bool final)
{
	if (!cg->store->seq || (!cg->st.n_samples && !cg->pend.dropped && !final))
		return 0;
	if ((cg->st.n_samples || final) &&
	    (store_sync_aux(cg->store) ||
	     db_stacks_merge(cg->store->db, cg->store->seq, &cg->st, final)))
		return -1;
	cache_tables(cg);
	add_stats(&cg->stats, &cg->pend);
	memset(&cg->pend, 0, sizeof(cg->pend));
	stack_table_clear(&cg->st);
	u64map_clear(&cg->image_map);
	cg->dirty_since = 0;
	return 0;
}

void callchain_fill_meta(struct callchain *cg, struct epoch_meta *m)
{
	char name[40];

	epoch_meta_set_counter(m, "stacks",
			       store_base_counter(cg->store, "stacks") + cg->stats.samples);
	for (int i = 0; i < STACK_END__COUNT; i++) {
		snprintf(name, sizeof(name), "stacks_%s", stack_end_name((enum stack_end)i));
		for (char *p = name; *p; p++)
			if (*p == '-')
				*p = '_';
		epoch_meta_set_counter(m, name, store_base_counter(cg->store, name) + cg->stats.ends[i]);
	}
	epoch_meta_set_counter(m, "stacks_dropped",
			       store_base_counter(cg->store, "stacks_dropped") + cg->stats.dropped);
}

const struct callchain_stats *callchain_stats(const struct callchain *cg)
{
	return &cg->stats;
}

size_t callchain_bytes(const struct callchain *cg)
{
	return sizeof(*cg) + cg->table_bytes + stack_table_bytes(&cg->st) +
	       cg->n_tables * sizeof(*cg->tables) + cg->a_comms * sizeof(*cg->comms);
}

static const char *mode_name(enum callgraph_mode m)
{
	return m == CALLGRAPH_FP ? "fp" : m == CALLGRAPH_DWARF ? "dwarf" : "threads";
}

/* Figures of this epoch so far (written and pending). */
static void status_figures(const struct callchain *cg, struct callchain_stats *s, uint64_t *user)
{
	*s = cg->stats;
	add_stats(s, &cg->pend);
	*user = 0;
	for (int i = 0; i < STACK_END__COUNT; i++)
		if (i != STACK_END_KERNEL)
			*user += s->ends[i];
}

pid_t callchain_worker_pid(const struct callchain *cg)
{
	return cg->worker ? unwind_worker_pid(cg->worker) : 0;
}

void callchain_status(const struct callchain *cg, struct strbuf *out)
{
	struct callchain_stats s;
	uint64_t user;

	status_figures(cg, &s, &user);
	strbuf_addf(out, "stacks: %s, %" PRIu64 " samples, %.1f%% of user stacks complete, %.2f us "
		    "each; %" PRIu64 " unwind tables (%zu KiB, %zu being made, %.0f ms waited), %"
		    PRIu64 " binaries without\n",
		    mode_name(cg->opt.mode), s.samples,
		    user ? 100.0 * (double)s.ends[STACK_END_COMPLETE] / (double)user : 0.0,
		    s.samples ? (double)s.unwind_ns / 1e3 / (double)s.samples : 0.0, s.tables,
		    cg->table_bytes >> 10, cg->n_queue + unwind_worker_pending(cg->worker),
		    (double)s.table_ns / 1e6, s.table_failures);
}

void callchain_status_json(const struct callchain *cg, struct json_writer *w)
{
	struct callchain_stats s;
	uint64_t user;

	status_figures(cg, &s, &user);
	json_key(w, "stacks"), json_object_begin(w);
	json_key(w, "mode"), json_string(w, mode_name(cg->opt.mode));
	json_key(w, "samples"), json_u64(w, s.samples);
	json_key(w, "user"), json_u64(w, user);
	json_key(w, "complete"), json_u64(w, s.ends[STACK_END_COMPLETE]);
	json_key(w, "us_per_sample"),
		json_double(w, s.samples ? (double)s.unwind_ns / 1e3 / (double)s.samples : 0.0, 3);
	json_key(w, "unwind_tables"), json_u64(w, s.tables);
	json_key(w, "unwind_tables_cached"), json_u64(w, s.tables_cached);
	json_key(w, "unwind_table_bytes"), json_u64(w, cg->table_bytes);
	json_key(w, "binaries_without_tables"), json_u64(w, s.table_failures);
	json_key(w, "unwind_tables_pending"),
		json_u64(w, cg->n_queue + unwind_worker_pending(cg->worker));
	json_key(w, "table_wait_ms"), json_double(w, (double)s.table_ns / 1e6, 3);
	json_key(w, "table_waits_expired"), json_u64(w, s.table_waits_expired);
	json_key(w, "unwound_at_read"), json_u64(w, s.early);
	json_key(w, "stale"), json_u64(w, s.stale);
	json_key(w, "dropped"), json_u64(w, s.dropped);
	json_object_end(w);
}
