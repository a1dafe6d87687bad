/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model/sched-memo.c - schedules already made, by what they are made of
 * (model/sched-int.h): a schedule depends on the model, the entry, and the
 * stream's instructions as the machine sees them, not on their addresses
 * nor on the procedure they are in, so a block (with its context) made of
 * the same instructions as one scheduled before, in this procedure or any
 * other, gets that schedule back instead of running the machine again.
 *
 * What the machine sees of an instruction is its prepared form (struct
 * proto) less the pointer to it: each distinct one is numbered once, here,
 * for the whole process (sched_memo_proto_id()).  A stream is then a list
 * of words, an element each: its number, whether it is fused with the
 * element before and whether a taken branch ends it (both read from
 * addresses when the slots are made), and which earlier element of the
 * stream, if any, names the same memory (the machine compares memory
 * operands, and RIP-relative addresses, with each other only).  Those
 * words, with the model and the entry, are the key; the value is what the
 * run gave each instruction of the body.  Keys are compared whole, never
 * by their digest alone.
 *
 * The memo is process-wide, shared by the threads (in shards, each with
 * its lock), and bounded (sched_memo_limit()): a shard over its share is
 * emptied.  The numbering of instructions is bounded too: past
 * PROTO_IDS_MAX distinct ones, new ones get no number and their schedules
 * are made, not remembered.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/idmap.h"
#include "core/xalloc.h"
#include "model/sched-int.h"

/* ---- instructions, numbered by content --------------------------------------------- */

#define PROTO_WORDS (10 + MODEL_MAX_GROUPS)
#define PROTO_IDS_MAX (1u << 18)

struct proto_content {
	uint64_t w[PROTO_WORDS];
};

static struct {
	pthread_mutex_t lock;
	struct idmap index;
	struct proto_content *v;     /* id - 1 */
	size_t n, alloc;
} protos = { PTHREAD_MUTEX_INITIALIZER, IDMAP_INIT, NULL, 0, 0 };

/* What a schedule reads of p, as words (no padding, no pointers). */
static void proto_content_of(const struct proto *p, struct proto_content *c)
{
	const struct model_timing *t = &p->t;
	uint64_t rt;

	memset(c, 0, sizeof(*c));
	memcpy(&rt, &t->rthroughput, sizeof(rt));
	c->w[0] = (uint64_t)t->latency << 32 | t->flags;
	c->w[1] = (uint64_t)t->uops << 32 | (uint64_t)(t->fu & 0xff) << 24 |
		  (uint64_t)(t->match & 0xff) << 16 | (uint64_t)(t->n_groups & 0xff) << 8 |
		  t->eliminated;
	c->w[2] = rt;
	for (unsigned g = 0; g < MODEL_MAX_GROUPS && g < t->n_groups; g++)
		c->w[3 + g] = (uint64_t)t->groups[g].mask << 8 | t->groups[g].cycles;
	c->w[3 + MODEL_MAX_GROUPS] = p->addr.w[0];
	c->w[4 + MODEL_MAX_GROUPS] = p->addr.w[1];
	c->w[5 + MODEL_MAX_GROUPS] = p->data.w[0];
	c->w[6 + MODEL_MAX_GROUPS] = p->data.w[1];
	c->w[7 + MODEL_MAX_GROUPS] = p->writes.w[0];
	c->w[8 + MODEL_MAX_GROUPS] = p->writes.w[1];
	c->w[9 + MODEL_MAX_GROUPS] =
		(uint64_t)p->load_lat << 40 | (uint64_t)p->loop_extra << 16 |
		(uint64_t)p->serial << 0 | (uint64_t)p->call << 1 | (uint64_t)p->uncertain << 2 |
		(uint64_t)p->renamed << 3 | (uint64_t)p->store << 4 | (uint64_t)!!p->mem << 5 |
		(uint64_t)!!(p->in->flags & INSN_F_RIP_REL) << 6 | (uint64_t)p->stack_op << 7;
}

static uint64_t words_hash(uint64_t h, const uint64_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ w[i]) * 0x9e3779b97f4a7c15ull ^ (h >> 29);
	return hash_u64(h);
}

uint32_t sched_memo_proto_id(const struct proto *p)
{
	struct proto_content c;
	uint64_t h;
	uint32_t id;

	if (p->bad)
		return 0;
	/* the fields must fit their bits exactly, or two could share one */
	if (p->t.n_groups > MODEL_MAX_GROUPS || p->load_lat >> 24 || p->loop_extra >> 24)
		return 0;
	proto_content_of(p, &c);
	h = words_hash(0, c.w, PROTO_WORDS);
	pthread_mutex_lock(&protos.lock);
	for (id = idmap_first(&protos.index, h); id != IDMAP_NONE; id = idmap_next(&protos.index, id))
		if (!memcmp(&protos.v[id], &c, sizeof(c)))
			break;
	if (id == IDMAP_NONE && protos.n < PROTO_IDS_MAX) {
		ALLOC_GROW(protos.v, protos.n + 1, protos.alloc);
		protos.v[protos.n] = c;
		id = (uint32_t)protos.n++;
		idmap_add(&protos.index, h, id);
	}
	pthread_mutex_unlock(&protos.lock);
	return id == IDMAP_NONE ? 0 : id + 1;
}

/* ---- the memo ----------------------------------------------------------------------- */

#define SHARDS 16
#define KEY_HEAD 3            /* the model, the entry and lengths, the digest's seed */
#define MEMO_LIMIT_DEFAULT (16u << 20)

struct memo_entry {
	uint64_t hash;
	size_t n_key, n;             /* key words, body instructions */
	unsigned iterations;
	uint64_t *key;               /* n_key words, then the results */
	struct sched_insn *insn;     /* what the run gave the body (timing and flags are
					set again from the instructions) */
};

struct memo_shard {
	pthread_mutex_t lock;
	struct idmap index;
	struct memo_entry *v;
	size_t n, alloc, bytes;
};

static struct memo_shard shards[SHARDS];
static pthread_once_t shards_once = PTHREAD_ONCE_INIT;
static size_t memo_limit = MEMO_LIMIT_DEFAULT;
static unsigned memo_kinds = 1u << SCHED_ENTRY_LOOP;
static uint64_t memo_hits, memo_misses, memo_dropped;

static void shards_init(void)
{
	for (unsigned k = 0; k < SHARDS; k++) {
		pthread_mutex_init(&shards[k].lock, NULL);
		shards[k].index = (struct idmap)IDMAP_INIT;
	}
}

static void shard_empty(struct memo_shard *sh)
{
	for (size_t k = 0; k < sh->n; k++)
		free(sh->v[k].key);
	sh->n = 0;
	sh->bytes = 0;
	idmap_clear(&sh->index);
}

size_t sched_memo_key(struct sched_prep *sp, const struct slot *sl, size_t n_ctx, size_t n,
		      enum sched_entry_kind kind, uint64_t **out)
{
	struct sim_buffers *b = &sp->buf;
	size_t total = n_ctx + n, len = KEY_HEAD + total;
	uint32_t stamp;
	uint64_t *k;

	if (!__atomic_load_n(&memo_limit, __ATOMIC_RELAXED) || sp->full_runs || total > UINT16_MAX ||
	    !(__atomic_load_n(&memo_kinds, __ATOMIC_RELAXED) >> kind & 1))
		return 0;
	ALLOC_GROW(b->key, len, b->key_alloc);
	k = b->key;
	/* where each memory operand (interned) and RIP-relative address was first seen */
	ALLOC_GROW(b->mem_seen, sp->n_mem + sp->n_rip + 1, b->mem_seen_alloc);
	ALLOC_GROW(b->mem_first, sp->n_mem + sp->n_rip + 1, b->mem_first_alloc);
	if (b->mem_seen_len < sp->n_mem + sp->n_rip + 1) {
		memset(b->mem_seen + b->mem_seen_len, 0,
		       (sp->n_mem + sp->n_rip + 1 - b->mem_seen_len) * sizeof(*b->mem_seen));
		b->mem_seen_len = sp->n_mem + sp->n_rip + 1;
	}
	if (!++b->stamp) {
		memset(b->mem_seen, 0, b->mem_seen_len * sizeof(*b->mem_seen));
		b->stamp = 1;
	}
	stamp = b->stamp;
	k[0] = (uint64_t)(uintptr_t)sp->m;
	k[1] = (uint64_t)kind << 48 | (uint64_t)n_ctx << 24 | n;
	k[2] = 0;
	for (size_t i = 0; i < total; i++) {
		struct proto *p = &sp->p[sl[i].p - sp->p];  /* the places point into sp->p */
		uint64_t ref = 0;
		size_t m;

		if (!p->gid_known) {
			p->gid = sched_memo_proto_id(p);
			p->gid_known = true;
		}
		if (!p->gid)
			return 0;
		m = p->rip ? sp->n_mem + p->rip : p->mem;
		if (m) {
			if (b->mem_seen[m] != stamp) {
				b->mem_seen[m] = stamp;
				b->mem_first[m] = (uint32_t)i;
			}
			ref = b->mem_first[m] + 1;
		}
		k[KEY_HEAD + i] = (uint64_t)p->gid << 32 | ref << 2 | (uint64_t)sl[i].fused << 1 |
				  sl[i].taken;
	}
	/* the loop's wrap: what the passes after the first have that the first has not */
	if (kind == SCHED_ENTRY_LOOP)
		k[2] = (uint64_t)sl[n_ctx + n].fused << 1 | sl[n_ctx + 2 * n - 1].taken;
	*out = k;
	return len;
}

static struct memo_shard *shard_of(uint64_t h)
{
	pthread_once(&shards_once, shards_init);
	return &shards[h >> 60 & (SHARDS - 1)];
}

static struct memo_entry *find(struct memo_shard *sh, uint64_t h, const uint64_t *key, size_t n_key)
{
	for (uint32_t id = idmap_first(&sh->index, h); id != IDMAP_NONE; id = idmap_next(&sh->index, id)) {
		struct memo_entry *e = &sh->v[id];

		if (e->hash == h && e->n_key == n_key && !memcmp(e->key, key, n_key * sizeof(*key)))
			return e;
	}
	return NULL;
}

bool sched_memo_get(const uint64_t *key, size_t n_key, struct block_schedule *out)
{
	uint64_t h = words_hash(n_key, key, n_key);
	struct memo_shard *sh = shard_of(h);
	struct memo_entry *e;

	pthread_mutex_lock(&sh->lock);
	e = find(sh, h, key, n_key);
	if (e && e->n == out->n) {
		memcpy(out->insn, e->insn, e->n * sizeof(*e->insn));
		out->iterations = e->iterations;
	}
	__atomic_add_fetch(e && e->n == out->n ? &memo_hits : &memo_misses, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&sh->lock);
	return e && e->n == out->n;
}

void sched_memo_put(const uint64_t *key, size_t n_key, const struct block_schedule *s)
{
	uint64_t h = words_hash(n_key, key, n_key);
	struct memo_shard *sh = shard_of(h);
	size_t bytes = n_key * sizeof(*key) + s->n * sizeof(*s->insn) +
		       sizeof(struct memo_entry) + 32;
	size_t limit = __atomic_load_n(&memo_limit, __ATOMIC_RELAXED);
	struct memo_entry *e;

	if (!limit || bytes > limit / SHARDS)
		return;
	pthread_mutex_lock(&sh->lock);
	if (find(sh, h, key, n_key)) {
		pthread_mutex_unlock(&sh->lock);
		return;
	}
	if (sh->bytes + bytes > limit / SHARDS) {
		shard_empty(sh);
		__atomic_add_fetch(&memo_dropped, 1, __ATOMIC_RELAXED);
	}
	ALLOC_GROW(sh->v, sh->n + 1, sh->alloc);
	e = &sh->v[sh->n];
	e->hash = h;
	e->n_key = n_key;
	e->n = s->n;
	e->iterations = s->iterations;
	e->key = xmalloc(n_key * sizeof(*key) + s->n * sizeof(*e->insn));
	memcpy(e->key, key, n_key * sizeof(*key));
	e->insn = (struct sched_insn *)(e->key + n_key);
	memcpy(e->insn, s->insn, s->n * sizeof(*e->insn));
	idmap_add(&sh->index, h, (uint32_t)sh->n);
	sh->n++;
	sh->bytes += bytes;
	pthread_mutex_unlock(&sh->lock);
}

void sched_memo_limit(size_t bytes)
{
	pthread_once(&shards_once, shards_init);
	for (unsigned k = 0; k < SHARDS; k++) {
		pthread_mutex_lock(&shards[k].lock);
		shard_empty(&shards[k]);
		pthread_mutex_unlock(&shards[k].lock);
	}
	__atomic_store_n(&memo_limit, bytes, __ATOMIC_RELAXED);
}

void sched_memo_kinds(unsigned kinds)
{
	__atomic_store_n(&memo_kinds, kinds, __ATOMIC_RELAXED);
}

void sched_memo_get_stats(struct sched_memo_stats *st)
{
	memset(st, 0, sizeof(*st));
	pthread_once(&shards_once, shards_init);
	st->hits = __atomic_load_n(&memo_hits, __ATOMIC_RELAXED);
	st->misses = __atomic_load_n(&memo_misses, __ATOMIC_RELAXED);
	st->dropped = __atomic_load_n(&memo_dropped, __ATOMIC_RELAXED);
	st->limit = memo_limit;
	for (unsigned k = 0; k < SHARDS; k++) {
		pthread_mutex_lock(&shards[k].lock);
		st->entries += shards[k].n;
		st->bytes += shards[k].bytes;
		pthread_mutex_unlock(&shards[k].lock);
	}
	pthread_mutex_lock(&protos.lock);
	st->instructions = protos.n;
	pthread_mutex_unlock(&protos.lock);
}
