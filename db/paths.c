/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "db/paths.h"
#include "core/cursor.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/varint.h"
#include "core/xalloc.h"
#include "db/blob.h"
#include "db/blobfile.h"
#include "db/db.h"
#include "db/meta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const end_names[PATHS_END__COUNT] = {
	"limit", "syscall", "unsupported", "unreadable", "time", "fault",
};
static const char *const miss_names[PATHS_MISS__COUNT] = {
	"no-match", "syscall", "unsupported", "unreadable", "fault", "samples", "ambiguous",
	"implausible", "lost",
};
static const char *const conflict_names[PATHS_CONFLICT__COUNT] = {
	"store-forward", "alias-4k",
};

const char *paths_end_name(unsigned reason)
{
	return reason < PATHS_END__COUNT ? end_names[reason] : NULL;
}

const char *paths_miss_name(unsigned reason)
{
	return reason < PATHS_MISS__COUNT ? miss_names[reason] : NULL;
}

const char *paths_conflict_name(unsigned kind)
{
	return kind < PATHS_CONFLICT__COUNT ? conflict_names[kind] : NULL;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* ---- building ------------------------------------------------------------------------ */

void paths_profile_init(struct paths_profile *p)
{
	memset(p, 0, sizeof(*p));
	values_profile_init(&p->values);
}

void paths_profile_release(struct paths_profile *p)
{
	free(p->blocks);
	free(p->edges);
	values_profile_release(&p->values);
	free(p->conflicts);
	free(p->stops);
	free(p->win);
	paths_profile_init(p);
}

bool paths_profile_empty(const struct paths_profile *p)
{
	return !p->bursts && !p->insns && !p->n_blocks && !p->n_edges && !p->values.n &&
	       !p->n_conflicts && !p->n_stops && !p->windows;
}

void paths_add_block(struct paths_profile *p, uint64_t offset, uint32_t bytes, uint32_t insns,
		     uint64_t count, uint64_t wcount)
{
	struct paths_block *b;

	ALLOC_GROW(p->blocks, p->n_blocks + 1, p->alloc_blocks);
	b = &p->blocks[p->n_blocks++];
	b->offset = offset;
	b->bytes = bytes;
	b->insns = insns;
	b->count = count;
	b->wcount = wcount;
}

void paths_add_edge(struct paths_profile *p, uint64_t from, uint64_t to, uint64_t count)
{
	ALLOC_GROW(p->edges, p->n_edges + 1, p->alloc_edges);
	p->edges[p->n_edges++] = (struct paths_edge){ from, to, count };
}

void paths_add_conflict(struct paths_profile *p, uint64_t load, uint64_t store,
			enum paths_conflict_kind kind, uint64_t count)
{
	ALLOC_GROW(p->conflicts, p->n_conflicts + 1, p->alloc_conflicts);
	p->conflicts[p->n_conflicts++] = (struct paths_conflict){ load, store, (uint8_t)kind, count };
}

void paths_add_stop(struct paths_profile *p, uint64_t offset, enum paths_end reason,
		    uint64_t count)
{
	ALLOC_GROW(p->stops, p->n_stops + 1, p->alloc_stops);
	p->stops[p->n_stops++] = (struct paths_stop){ offset, (uint8_t)reason, count };
}

void paths_add_window(struct paths_profile *p, const struct paths_window *w,
		      struct hotlist_rng *rng)
{
	p->windows = sat_add(p->windows, 1);
	p->window_insns = sat_add(p->window_insns, w->insns);
	if (p->n_win < PATHS_KEEP_WINDOWS) {
		ALLOC_GROW(p->win, p->n_win + 1, p->alloc_win);
		p->win[p->n_win++] = *w;
		return;
	}
	/* Reservoir sampling: the k-th window replaces one with probability KEEP/k. */
	{
		uint64_t j = hotlist_rand(rng) % p->windows;

		if (j < PATHS_KEEP_WINDOWS)
			p->win[j] = *w;
	}
}

/* ---- normalizing -------------------------------------------------------------------- */

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int block_cmp(const void *x, const void *y)
{
	const struct paths_block *a = x, *b = y;
	int c = cmp_u64(a->offset, b->offset);

	if (!c)
		c = cmp_u64(a->bytes, b->bytes);
	return c ? c : cmp_u64(a->insns, b->insns);
}

static int edge_cmp(const void *x, const void *y)
{
	const struct paths_edge *a = x, *b = y;
	int c = cmp_u64(a->from, b->from);

	return c ? c : cmp_u64(a->to, b->to);
}

static int conflict_cmp(const void *x, const void *y)
{
	const struct paths_conflict *a = x, *b = y;
	int c = cmp_u64(a->load, b->load);

	if (!c)
		c = cmp_u64(a->store, b->store);
	return c ? c : cmp_u64(a->kind, b->kind);
}

static int stop_cmp(const void *x, const void *y)
{
	const struct paths_stop *a = x, *b = y;
	int c = cmp_u64(a->offset, b->offset);

	return c ? c : cmp_u64(a->reason, b->reason);
}

/*
 * Sorts n records of size bytes with cmp and folds each run of equal keys
 * into its first record with add; returns the new count.
 */
static size_t sort_fold(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *),
			void (*add)(void *dst, const void *src))
{
	char *v = base;
	size_t out = 0;

	if (!n)
		return 0;
	qsort(base, n, size, cmp);
	for (size_t i = 1; i < n; i++) {
		if (!cmp(v + out * size, v + i * size)) {
			add(v + out * size, v + i * size);
			continue;
		}
		out++;
		if (out != i)
			memcpy(v + out * size, v + i * size, size);
	}
	return out + 1;
}

static void block_add(void *dst, const void *src)
{
	struct paths_block *d = dst;
	const struct paths_block *s = src;

	d->count = sat_add(d->count, s->count);
	d->wcount = sat_add(d->wcount, s->wcount);
}

static void edge_add(void *dst, const void *src)
{
	struct paths_edge *d = dst;

	d->count = sat_add(d->count, ((const struct paths_edge *)src)->count);
}

static void conflict_add(void *dst, const void *src)
{
	struct paths_conflict *d = dst;

	d->count = sat_add(d->count, ((const struct paths_conflict *)src)->count);
}

static void stop_add(void *dst, const void *src)
{
	struct paths_stop *d = dst;

	d->count = sat_add(d->count, ((const struct paths_stop *)src)->count);
}

void paths_profile_normalize(struct paths_profile *p)
{
	p->n_blocks = sort_fold(p->blocks, p->n_blocks, sizeof(*p->blocks), block_cmp, block_add);
	p->n_edges = sort_fold(p->edges, p->n_edges, sizeof(*p->edges), edge_cmp, edge_add);
	p->n_conflicts = sort_fold(p->conflicts, p->n_conflicts, sizeof(*p->conflicts),
				   conflict_cmp, conflict_add);
	p->n_stops = sort_fold(p->stops, p->n_stops, sizeof(*p->stops), stop_cmp, stop_add);
	values_profile_sort(&p->values);
}

/* ---- merging ------------------------------------------------------------------------- */

/* Appends n records of src to the array *dst of *len records (room *alloc). */
static void append(void **dst, size_t *len, size_t *alloc, const void *src, size_t n, size_t size)
{
	if (!n)
		return;
	if (*len + n > *alloc) {
		*alloc = (*len + n) * 3 / 2 + 8;
		*dst = xreallocarray(*dst, *alloc, size);
	}
	memcpy((char *)*dst + *len * size, src, n * size);
	*len += n;
}

#define APPEND(d, s, f)                                                                  \
	append((void **)&(d)->f, &(d)->n_##f, &(d)->alloc_##f, (s)->f, (s)->n_##f,        \
	       sizeof(*(s)->f))

/* Moves k random records of v[0..n) to its front (a partial Fisher-Yates shuffle). */
static void pick(struct paths_window *v, size_t n, size_t k, struct hotlist_rng *rng)
{
	for (size_t i = 0; i < k && i < n; i++) {
		size_t j = i + (size_t)(hotlist_rand(rng) % (n - i));
		struct paths_window t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
}

/*
 * dst's window sample and src's, each uniform over its own windows, into
 * one uniform over both: each contributes in proportion to the windows it
 * stands for.
 */
static void merge_windows(struct paths_profile *dst, const struct paths_profile *src,
			  struct hotlist_rng *rng)
{
	uint64_t all = dst->windows + src->windows;
	size_t n1 = dst->n_win, n2 = src->n_win, k, k1, k2;
	struct paths_window *v;

	if (n1 + n2 <= PATHS_KEEP_WINDOWS || !all) {
		APPEND(dst, src, win);
		return;
	}
	k = PATHS_KEEP_WINDOWS;
	k1 = (size_t)((double)k * (double)dst->windows / (double)all + 0.5);
	if (k1 > n1)
		k1 = n1;
	k2 = k - k1 > n2 ? n2 : k - k1;
	if (k1 + k2 < k)
		k1 = k - k2 > n1 ? n1 : k - k2;
	v = xcalloc(n1 + n2, sizeof(*v));
	memcpy(v, dst->win, n1 * sizeof(*v));
	pick(v, n1, k1, rng);
	memcpy(v + n1, src->win, n2 * sizeof(*v));
	pick(v + n1, n2, k2, rng);
	memmove(v + k1, v + n1, k2 * sizeof(*v));
	free(dst->win);
	dst->win = v;
	dst->n_win = k1 + k2;
	dst->alloc_win = n1 + n2;
}

void paths_merge(struct paths_profile *dst, const struct paths_profile *src,
		 struct hotlist_rng *rng)
{
	dst->bursts = sat_add(dst->bursts, src->bursts);
	dst->insns = sat_add(dst->insns, src->insns);
	dst->detailed = sat_add(dst->detailed, src->detailed);
	APPEND(dst, src, blocks);
	APPEND(dst, src, edges);
	APPEND(dst, src, conflicts);
	APPEND(dst, src, stops);
	merge_windows(dst, src, rng);
	dst->windows = sat_add(dst->windows, src->windows);
	dst->window_insns = sat_add(dst->window_insns, src->window_insns);
	values_merge(&dst->values, &src->values, rng);
	paths_profile_normalize(dst);
}

/* ---- lookups ------------------------------------------------------------------------ */

/* The first of n records (each starting with its uint64_t key) whose key is >= key. */
static size_t lower_bound(const void *base, size_t n, size_t size, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, (const char *)base + mid * size, sizeof(k));
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t paths_blocks_lower_bound(const struct paths_profile *p, uint64_t key)
{
	return lower_bound(p->blocks, p->n_blocks, sizeof(*p->blocks), key);
}

size_t paths_edges_lower_bound(const struct paths_profile *p, uint64_t key)
{
	return lower_bound(p->edges, p->n_edges, sizeof(*p->edges), key);
}

size_t paths_conflicts_lower_bound(const struct paths_profile *p, uint64_t key)
{
	return lower_bound(p->conflicts, p->n_conflicts, sizeof(*p->conflicts), key);
}

size_t paths_stops_lower_bound(const struct paths_profile *p, uint64_t key)
{
	return lower_bound(p->stops, p->n_stops, sizeof(*p->stops), key);
}

/* ---- encoding ---------------------------------------------------------------------------- */

/* An offset relative to a base: 0 for PATHS_ELSEWHERE, else zigzag(d) + 1. */
static uint64_t rel(uint64_t v, uint64_t base)
{
	return v == PATHS_ELSEWHERE ? 0 : varint_zigzag(v - base) + 1;
}

static void put(struct strbuf *out, uint64_t v)
{
	strbuf_add_varint(out, v);
}

/*
 * Payload: the totals; the blocks, edges, conflicts and stops (sorted, each
 * key from the previous one); the window sample; the written values (a
 * value profile's payload, its record count and length first).
 */
uint32_t paths_encode(const struct paths_profile *p, struct strbuf *out)
{
	struct strbuf vals = STRBUF_INIT;
	uint64_t prev = 0;
	uint32_t nvals;

	put(out, p->bursts), put(out, p->insns), put(out, p->detailed);
	put(out, p->n_blocks);
	for (size_t i = 0; i < p->n_blocks; i++) {
		const struct paths_block *b = &p->blocks[i];

		put(out, b->offset - prev), put(out, b->bytes), put(out, b->insns);
		put(out, b->count), put(out, b->wcount);
		prev = b->offset;
	}
	put(out, p->n_edges);
	prev = 0;
	for (size_t i = 0; i < p->n_edges; i++) {
		const struct paths_edge *e = &p->edges[i];

		put(out, e->from - prev), put(out, rel(e->to, e->from)), put(out, e->count);
		prev = e->from;
	}
	put(out, p->n_conflicts);
	prev = 0;
	for (size_t i = 0; i < p->n_conflicts; i++) {
		const struct paths_conflict *c = &p->conflicts[i];

		put(out, c->load - prev), put(out, varint_zigzag(c->store - c->load));
		put(out, c->kind), put(out, c->count);
		prev = c->load;
	}
	put(out, p->n_stops);
	prev = 0;
	for (size_t i = 0; i < p->n_stops; i++) {
		const struct paths_stop *s = &p->stops[i];

		put(out, s->offset - prev), put(out, s->reason), put(out, s->count);
		prev = s->offset;
	}
	put(out, p->windows), put(out, p->window_insns), put(out, p->n_win);
	for (size_t i = 0; i < p->n_win; i++) {
		const struct paths_window *w = &p->win[i];

		put(out, w->b1), put(out, rel(w->b2, w->b1)), put(out, w->insns);
		put(out, w->here), put(out, w->ns);
	}
	nvals = values_encode(&p->values, &vals);
	put(out, nvals), put(out, vals.len);
	strbuf_add(out, vals.buf, vals.len);
	strbuf_release(&vals);
	if (p->n_blocks > UINT32_MAX)
		BUG("path profile of %zu blocks", p->n_blocks);
	return (uint32_t)p->n_blocks;
}

static uint64_t unrel(uint64_t z, uint64_t base)
{
	return z ? base + varint_unzigzag(z - 1) : PATHS_ELSEWHERE;
}

#define FAIL(msg) do { *why = (msg); goto bad; } while (0)

static int get_blocks(struct cursor *r, struct paths_profile *out, uint32_t count,
		      const char **why)
{
	size_t n = cursor_next_count(r, SIZE_MAX, 5);
	uint64_t off = 0;

	if (r->why)
		return *why = "truncated blocks", -1;
	if (n != count)
		return *why = "block count differs from the header's", -1;
	for (size_t i = 0; i < n; i++) {
		uint64_t d = cursor_next(r), bytes = cursor_next(r), insns = cursor_next(r), c = cursor_next(r), wc = cursor_next(r);

		if (r->why)
			return *why = "truncated block", -1;
		if (i && d > UINT64_MAX - off)
			return *why = "block offsets overflow", -1;
		if (!bytes || bytes > PATHS_MAX_BLOCK_BYTES || !insns || insns > bytes)
			return *why = "bad block size", -1;
		if (!c && !wc)
			return *why = "block never executed", -1;
		off += d;
		paths_add_block(out, off, (uint32_t)bytes, (uint32_t)insns, c, wc);
		if (i && block_cmp(&out->blocks[i - 1], &out->blocks[i]) >= 0)
			return *why = "blocks not in order", -1;
	}
	return 0;
}

static int get_edges(struct cursor *r, struct paths_profile *out, const char **why)
{
	size_t n = cursor_next_count(r, SIZE_MAX, 3);
	uint64_t from = 0;

	if (r->why)
		return *why = "truncated edges", -1;
	for (size_t i = 0; i < n; i++) {
		uint64_t d = cursor_next(r), to = cursor_next(r), c = cursor_next(r);

		if (r->why)
			return *why = "truncated edge", -1;
		if (d > UINT64_MAX - from)
			return *why = "edge offsets overflow", -1;
		from += d;
		if (!c)
			return *why = "edge never taken", -1;
		if (to && unrel(to, from) == PATHS_ELSEWHERE)
			return *why = "edge target out of range", -1;
		paths_add_edge(out, from, unrel(to, from), c);
		if (i && edge_cmp(&out->edges[i - 1], &out->edges[i]) >= 0)
			return *why = "edges not in order", -1;
	}
	return 0;
}

static int get_conflicts(struct cursor *r, struct paths_profile *out, const char **why)
{
	size_t n = cursor_next_count(r, SIZE_MAX, 4);
	uint64_t load = 0;

	if (r->why)
		return *why = "truncated conflicts", -1;
	for (size_t i = 0; i < n; i++) {
		uint64_t d = cursor_next(r), z = cursor_next(r), kind = cursor_next(r), c = cursor_next(r);

		if (r->why)
			return *why = "truncated conflict", -1;
		if (d > UINT64_MAX - load)
			return *why = "conflict offsets overflow", -1;
		load += d;
		if (kind >= PATHS_CONFLICT__COUNT || !c)
			return *why = "bad conflict", -1;
		paths_add_conflict(out, load, load + varint_unzigzag(z),
				   (enum paths_conflict_kind)kind, c);
		if (i && conflict_cmp(&out->conflicts[i - 1], &out->conflicts[i]) >= 0)
			return *why = "conflicts not in order", -1;
	}
	return 0;
}

static int get_stops(struct cursor *r, struct paths_profile *out, const char **why)
{
	size_t n = cursor_next_count(r, SIZE_MAX, 3);
	uint64_t off = 0;

	if (r->why)
		return *why = "truncated stops", -1;
	for (size_t i = 0; i < n; i++) {
		uint64_t d = cursor_next(r), reason = cursor_next(r), c = cursor_next(r);

		if (r->why)
			return *why = "truncated stop", -1;
		if (d > UINT64_MAX - off)
			return *why = "stop offsets overflow", -1;
		off += d;
		if (reason >= PATHS_END__COUNT || !c)
			return *why = "bad stop", -1;
		paths_add_stop(out, off, (enum paths_end)reason, c);
		if (i && stop_cmp(&out->stops[i - 1], &out->stops[i]) >= 0)
			return *why = "stops not in order", -1;
	}
	return 0;
}

static int get_windows(struct cursor *r, struct paths_profile *out, const char **why)
{
	uint64_t sum = 0;
	size_t n;

	out->windows = cursor_next(r);
	out->window_insns = cursor_next(r);
	n = cursor_next_count(r, SIZE_MAX, 5);
	if (r->why)
		return *why = "truncated windows", -1;
	if (n > PATHS_KEEP_WINDOWS || n > out->windows)
		return *why = "more windows kept than allowed or matched", -1;
	out->win = xcalloc(n ? n : 1, sizeof(*out->win));
	out->alloc_win = n ? n : 1;
	for (size_t i = 0; i < n; i++) {
		struct paths_window *w = &out->win[i];
		uint64_t z;

		w->b1 = cursor_next(r);
		z = cursor_next(r);
		w->b2 = unrel(z, w->b1);
		w->insns = cursor_next(r);
		w->here = cursor_next(r);
		w->ns = cursor_next(r);
		if (r->why)
			return *why = "truncated window", -1;
		if (w->b1 == PATHS_ELSEWHERE || (z && w->b2 == PATHS_ELSEWHERE) || !w->insns ||
		    w->here > w->insns)
			return *why = "bad window", -1;
		sum = sat_add(sum, w->insns);
		out->n_win = i + 1;
	}
	if (sum > out->window_insns)
		return *why = "windows kept hold more instructions than all", -1;
	return 0;
}

static int get_values(struct cursor *r, struct paths_profile *out, const char **why)
{
	uint64_t n = cursor_next(r), len = cursor_next(r);

	if (r->why || len > cursor_left(r))
		return *why = "truncated values", -1;
	if (n > UINT32_MAX || values_decode(r->p, (size_t)len, (uint32_t)n, &out->values, why))
		return -1;
	for (size_t i = 0; i < out->values.n; i++)
		if (out->values.v[i].pairs || (out->values.v[i].mask & (1u << VREG_RFLAGS)))
			return *why = "written values with pairs or flags", -1;
	r->p += len;
	return 0;
}

int paths_decode(const void *payload, size_t len, uint32_t count, struct paths_profile *out,
		 const char **why)
{
	struct cursor r = CURSOR_INIT(payload, len);

	paths_profile_release(out);
	out->bursts = cursor_next(&r);
	out->insns = cursor_next(&r);
	out->detailed = cursor_next(&r);
	if (r.why)
		FAIL("truncated header");
	if (out->detailed > out->insns)
		FAIL("more instructions in detail than followed");
	if (get_blocks(&r, out, count, why) || get_edges(&r, out, why) ||
	    get_conflicts(&r, out, why) || get_stops(&r, out, why) ||
	    get_windows(&r, out, why) || get_values(&r, out, why))
		goto bad;
	if (r.p != r.end)
		FAIL("trailing bytes");
	return 0;
bad:
	paths_profile_release(out);
	return -1;
}

/* ---- the database ------------------------------------------------------------------------ */

/* The epoch file name of image key's path profile ("KEY.paths"). */
static void paths_file_name(const char *key, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s", key, PATHS_SUFFIX);
}

static void init_cb(void *p)
{
	paths_profile_init(p);
}

static void release_cb(void *p)
{
	paths_profile_release(p);
}

static int decode_cb(void *out, const void *payload, size_t len, uint32_t count, const char **why)
{
	return paths_decode(payload, len, count, out, why);
}

static void merge_cb(void *dst, const void *src, struct hotlist_rng *rng)
{
	paths_merge(dst, src, rng);
}

static uint32_t encode_cb(const void *p, struct strbuf *out)
{
	return paths_encode(p, out);
}

static const struct blob_type type = {
	{ PATHS_MAGIC, PATHS_VERSION, "path profile", true }, sizeof(struct paths_profile),
	init_cb, release_cb, decode_cb, merge_cb, encode_cb,
};

int db_paths_load(struct db *db, uint32_t seq, const char *key, struct paths_profile *out)
{
	char name[128];

	paths_file_name(key, name, sizeof(name));
	return db_blob_type_load(db, seq, name, &type, out);
}

int db_paths_merge(struct db *db, uint32_t seq, const char *key, const struct paths_profile *add)
{
	char name[128];

	paths_file_name(key, name, sizeof(name));
	return db_blob_type_merge(db, seq, name, &type, add,
				  (uint64_t)seq * 0x9E3779B97F4A7C15ull ^ add->insns ^ add->windows);
}

/* ---- the epoch's totals ------------------------------------------------------------------ */

void paths_summary_add(struct paths_summary *dst, const struct paths_summary *src)
{
	dst->bursts = sat_add(dst->bursts, src->bursts);
	dst->insns = sat_add(dst->insns, src->insns);
	for (unsigned i = 0; i < PATHS_END__COUNT; i++)
		dst->ends[i] = sat_add(dst->ends[i], src->ends[i]);
	dst->lost = sat_add(dst->lost, src->lost);
	dst->windows = sat_add(dst->windows, src->windows);
	dst->window_insns = sat_add(dst->window_insns, src->window_insns);
	for (unsigned i = 0; i < PATHS_MISS__COUNT; i++)
		dst->misses[i] = sat_add(dst->misses[i], src->misses[i]);
}

/* The counter name "paths_PREFIX_NAME" ('-' in name as '_'). */
static void counter_name(char *buf, size_t size, const char *prefix, const char *name)
{
	snprintf(buf, size, "paths_%s%s%s", prefix, *prefix ? "_" : "", name);
	for (char *p = buf; *p; p++)
		if (*p == '-')
			*p = '_';
}

/* Calls fn for every counter of s: its name and where its value is. */
static void each_counter(struct paths_summary *s, void (*fn)(void *ctx, const char *name,
							     uint64_t *v), void *ctx)
{
	char name[64];

	fn(ctx, "paths_bursts", &s->bursts);
	fn(ctx, "paths_insns", &s->insns);
	for (unsigned i = 0; i < PATHS_END__COUNT; i++) {
		counter_name(name, sizeof(name), "end", end_names[i]);
		fn(ctx, name, &s->ends[i]);
	}
	fn(ctx, "paths_lost", &s->lost);
	fn(ctx, "paths_windows", &s->windows);
	fn(ctx, "paths_window_insns", &s->window_insns);
	for (unsigned i = 0; i < PATHS_MISS__COUNT; i++) {
		counter_name(name, sizeof(name), "miss", miss_names[i]);
		fn(ctx, name, &s->misses[i]);
	}
}

static void from_meta(void *ctx, const char *name, uint64_t *v)
{
	*v = epoch_meta_counter(ctx, name);
}

static void to_meta(void *ctx, const char *name, uint64_t *v)
{
	epoch_meta_set_counter(ctx, name, *v);
}

void paths_summary_from_meta(const struct epoch_meta *m, struct paths_summary *s)
{
	memset(s, 0, sizeof(*s));
	each_counter(s, from_meta, (void *)m);
}

void paths_summary_to_meta(const struct paths_summary *s, struct epoch_meta *m)
{
	struct paths_summary copy = *s;

	each_counter(&copy, to_meta, m);
}
