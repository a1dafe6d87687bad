/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/watch.c - stopwatch results: statistics, the DCPIWTCH payload, merging
 * into an epoch and the call-count read API (db/watch.h).
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/cursor.h"
#include "core/die.h"
#include "core/endian.h"
#include "core/strbuf.h"
#include "core/varint.h"
#include "core/xalloc.h"
#include "db/blob.h"
#include "db/blobfile.h"
#include "db/damage.h"
#include "db/db.h"
#include "db/image.h"
#include "db/watch.h"

/* ---- statistics ----------------------------------------------------------- */

void watch_stat_add(struct watch_stat *s, uint64_t v)
{
	double d;

	if (!s->n || v < s->min)
		s->min = v;
	if (!s->n || v > s->max)
		s->max = v;
	s->n++;
	d = (double)v - s->mean;
	s->mean += d / (double)s->n;
	s->m2 += d * ((double)v - s->mean);
}

void watch_stat_combine(struct watch_stat *a, const struct watch_stat *b)
{
	double n, d;

	if (!b->n)
		return;
	if (!a->n) {
		*a = *b;
		return;
	}
	n = (double)a->n + (double)b->n;
	d = b->mean - a->mean;
	a->mean += d * (double)b->n / n;
	a->m2 += b->m2 + d * d * (double)a->n * (double)b->n / n;
	a->n += b->n;
	if (b->min < a->min)
		a->min = b->min;
	if (b->max > a->max)
		a->max = b->max;
}

double watch_stat_stddev(const struct watch_stat *s)
{
	return s->n < 2 ? 0.0 : sqrt(s->m2 / (double)s->n);
}

unsigned watch_hist_bucket(uint64_t ns)
{
	return ns < 2 ? 0 : 63 - (unsigned)__builtin_clzll(ns);
}

/* ---- sets ------------------------------------------------------------------- */

void watch_rec_release(struct watch_rec *r)
{
	free(r->name);
	free(r->path);
	free(r->comm);
	r->name = r->path = r->comm = NULL;
}

void watch_set_release(struct watch_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		watch_rec_release(&s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->alloc = 0;
}

struct watch_rec *watch_set_add(struct watch_set *s, const struct watch_rec *r)
{
	struct watch_rec *d;

	if (s->n == s->alloc) {
		s->alloc = s->alloc ? 2 * s->alloc : 16;
		s->v = xreallocarray(s->v, s->alloc, sizeof(*s->v));
	}
	d = &s->v[s->n++];
	*d = *r;
	d->name = xstrdup(r->name ? r->name : "");
	d->path = xstrdup(r->path ? r->path : "");
	d->comm = xstrdup(r->comm ? r->comm : "");
	return d;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

int watch_rec_cmp(const struct watch_rec *a, const struct watch_rec *b)
{
	int c;

	if ((c = (int)a->kind - (int)b->kind) || (c = strcmp(a->key, b->key)) ||
	    (c = cmp_u64(a->offset, b->offset)) || (c = strcmp(a->key_b, b->key_b)) ||
	    (c = cmp_u64(a->offset_b, b->offset_b)) || (c = cmp_u64(a->pid, b->pid)))
		return c;
	return cmp_u64(a->tid, b->tid);
}

static int rec_qcmp(const void *a, const void *b)
{
	return watch_rec_cmp(a, b);
}

void watch_rec_combine(struct watch_rec *a, const struct watch_rec *b)
{
	a->calls += b->calls;
	a->open += b->open;
	a->unwound += b->unwound;
	watch_stat_combine(&a->wall, &b->wall);
	watch_stat_combine(&a->cpu, &b->cpu);
	for (unsigned k = 0; k < WATCH_HIST; k++)
		a->hist[k] += b->hist[k];
	for (unsigned i = 0; i < b->nevents; i++) {
		unsigned j;

		for (j = 0; j < a->nevents; j++)
			if (!strcmp(a->ev[j].name, b->ev[i].name))
				break;
		if (j == a->nevents) {
			if (a->nevents == WATCH_MAX_EVENTS)
				continue;
			a->ev[a->nevents++] = b->ev[i];
			continue;
		}
		watch_stat_combine(&a->ev[j].st, &b->ev[i].st);
	}
	/* A name learnt later (a thread's exec) wins over an empty one. */
	if (!*a->comm && *b->comm) {
		free(a->comm);
		a->comm = xstrdup(b->comm);
	}
}

void watch_set_sort(struct watch_set *s)
{
	size_t out = 0;

	if (s->n > 1)
		qsort(s->v, s->n, sizeof(*s->v), rec_qcmp);
	for (size_t i = 0; i < s->n; i++) {
		if (out && !watch_rec_cmp(&s->v[out - 1], &s->v[i])) {
			watch_rec_combine(&s->v[out - 1], &s->v[i]);
			watch_rec_release(&s->v[i]);
			continue;
		}
		s->v[out++] = s->v[i];
	}
	s->n = out;
}

void watch_set_group(const struct watch_set *in, enum watch_by by, struct watch_set *out)
{
	for (size_t i = 0; i < in->n; i++) {
		struct watch_rec r = in->v[i];

		if (by != WATCH_BY_THREAD)
			r.tid = 0;
		if (by == WATCH_BY_FUNCTION)
			r.comm = NULL;
		if (by == WATCH_BY_FUNCTION)
			r.pid = 0;
		watch_set_add(out, &r);
	}
	watch_set_sort(out);
}

/* ---- the payload ----------------------------------------------------------- */

static void put_str(struct strbuf *out, const char *s)
{
	size_t n = strlen(s);

	strbuf_add_varint_string(out, s, n < WATCH_STR_MAX ? n : WATCH_STR_MAX);
}

static void put_double(struct strbuf *out, double d)
{
	uint8_t b[8];
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	put_le64(b, u);
	strbuf_add(out, b, 8);
}

static void put_stat(struct strbuf *out, const struct watch_stat *s)
{
	strbuf_add_varint(out, s->n);
	strbuf_add_varint(out, s->min);
	strbuf_add_varint(out, s->max);
	put_double(out, s->mean);
	put_double(out, s->m2);
}

static void put_rec(struct strbuf *out, const struct watch_rec *r)
{
	unsigned nh = 0;

	strbuf_add_varint(out, r->kind);
	put_str(out, r->key);
	strbuf_add_varint(out, r->offset);
	put_str(out, r->key_b);
	strbuf_add_varint(out, r->offset_b);
	strbuf_add_varint(out, r->pid);
	strbuf_add_varint(out, r->tid);
	put_str(out, r->name ? r->name : "");
	put_str(out, r->path ? r->path : "");
	put_str(out, r->comm ? r->comm : "");
	strbuf_add_varint(out, r->calls);
	strbuf_add_varint(out, r->open);
	strbuf_add_varint(out, r->unwound);
	put_stat(out, &r->wall);
	put_stat(out, &r->cpu);
	for (unsigned k = 0; k < WATCH_HIST; k++)
		nh += r->hist[k] != 0;
	strbuf_add_varint(out, nh);
	for (unsigned k = 0; k < WATCH_HIST; k++)
		if (r->hist[k]) {
			strbuf_add_varint(out, k);
			strbuf_add_varint(out, r->hist[k]);
		}
	strbuf_add_varint(out, r->nevents);
	for (unsigned i = 0; i < r->nevents; i++) {
		put_str(out, r->ev[i].name);
		put_stat(out, &r->ev[i].st);
	}
}

void watch_encode(const struct watch_set *s, struct strbuf *out)
{
	for (size_t i = 0; i < s->n; i++)
		put_rec(out, &s->v[i]);
}

/* A string of at most max bytes, no NUL, into a fresh allocation or buf. */
static int get_str(struct cursor *r, size_t max, char *buf, char **out)
{
	size_t n;
	const char *s = cursor_string(r, max, &n);

	if (!s)
		return -1;
	if (out) {
		*out = xstrndup(s, n);
	} else {
		memcpy(buf, s, n);
		buf[n] = 0;
	}
	return 0;
}

static int get_double(struct cursor *r, double *d)
{
	uint64_t u;

	if (cursor_le64(r, &u))
		return -1;
	memcpy(d, &u, sizeof(*d));
	if (!isfinite(*d)) {
		r->why = "number not finite";
		return -1;
	}
	return 0;
}

static int get_stat(struct cursor *r, struct watch_stat *s)
{
	if (cursor_varint(r, &s->n) || cursor_varint(r, &s->min) || cursor_varint(r, &s->max) ||
	    get_double(r, &s->mean) || get_double(r, &s->m2))
		return -1;
	if (!s->n && (s->min || s->max || s->mean != 0 || s->m2 != 0)) {
		r->why = "statistics of no values";
		return -1;
	}
	/* The mean of values in [min, max] lies there (up to rounding). */
	if (s->n && (s->min > s->max || s->m2 < 0 || s->mean < (double)s->min * (1 - 1e-9) - 1 ||
		     s->mean > (double)s->max * (1 + 1e-9) + 1)) {
		r->why = "inconsistent statistics";
		return -1;
	}
	return 0;
}

static bool event_name_ok(const char *s)
{
	return *s && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-_") == strlen(s);
}

static int get_hist(struct cursor *r, struct watch_rec *rec)
{
	uint64_t nh, k, c, sum = 0;
	int last = -1;

	if (cursor_varint_max(r, &nh, WATCH_HIST, "too many histogram buckets"))
		return -1;
	for (uint64_t i = 0; i < nh; i++) {
		if (cursor_varint_max(r, &k, WATCH_HIST - 1, "bad histogram bucket") || cursor_varint(r, &c))
			return -1;
		if ((int)k <= last || !c) {
			r->why = "histogram buckets out of order or empty";
			return -1;
		}
		rec->hist[k] = c;
		last = (int)k;
		if (__builtin_add_overflow(sum, c, &sum)) {
			r->why = "histogram overflows";
			return -1;
		}
	}
	if (sum != rec->wall.n) {
		r->why = "histogram does not add up to the timed calls";
		return -1;
	}
	return 0;
}

static int get_events(struct cursor *r, struct watch_rec *rec)
{
	uint64_t n;

	if (cursor_varint_max(r, &n, WATCH_MAX_EVENTS, "too many events"))
		return -1;
	rec->nevents = (unsigned)n;
	for (unsigned i = 0; i < rec->nevents; i++) {
		if (get_str(r, WATCH_EVENT_NAME_MAX - 1, rec->ev[i].name, NULL) ||
		    get_stat(r, &rec->ev[i].st))
			return -1;
		if (!event_name_ok(rec->ev[i].name)) {
			r->why = "bad event name";
			return -1;
		}
	}
	return 0;
}

static int get_key(struct cursor *r, char *key, bool may_be_empty)
{
	if (get_str(r, PROFILE_KEY_MAX, key, NULL))
		return -1;
	if (!(may_be_empty && !*key) && !image_key_valid(key)) {
		r->why = "bad image key";
		return -1;
	}
	return 0;
}

static int get_rec(struct cursor *r, struct watch_rec *rec)
{
	uint64_t kind, pid, tid;

	if (cursor_varint_max(r, &kind, WATCH_BETWEEN, "unknown record kind"))
		return -1;
	if (kind != WATCH_FUNC && kind != WATCH_BETWEEN) {
		r->why = "unknown record kind";
		return -1;
	}
	rec->kind = (enum watch_kind)kind;
	if (get_key(r, rec->key, false) || cursor_varint(r, &rec->offset) ||
	    get_key(r, rec->key_b, kind == WATCH_FUNC) || cursor_varint(r, &rec->offset_b))
		return -1;
	if (kind == WATCH_FUNC && (*rec->key_b || rec->offset_b)) {
		r->why = "a function record with a second point";
		return -1;
	}
	if (cursor_varint_max(r, &pid, UINT32_MAX, "bad pid") || cursor_varint_max(r, &tid, UINT32_MAX, "bad tid"))
		return -1;
	rec->pid = (uint32_t)pid;
	rec->tid = (uint32_t)tid;
	if (get_str(r, WATCH_STR_MAX, NULL, &rec->name) || get_str(r, WATCH_STR_MAX, NULL, &rec->path) ||
	    get_str(r, WATCH_STR_MAX, NULL, &rec->comm))
		return -1;
	if (cursor_varint(r, &rec->calls) || cursor_varint(r, &rec->open) || cursor_varint(r, &rec->unwound) ||
	    get_stat(r, &rec->wall) || get_stat(r, &rec->cpu))
		return -1;
	/* Every timed call, open call and unwound call is a call. */
	if (rec->wall.n > rec->calls || rec->open > rec->calls || rec->unwound > rec->calls ||
	    rec->calls - rec->wall.n < rec->open || rec->calls - rec->wall.n - rec->open < rec->unwound ||
	    rec->cpu.n > rec->wall.n) {
		r->why = "counts do not add up";
		return -1;
	}
	return get_hist(r, rec) || get_events(r, rec) ? -1 : 0;
}

int watch_decode(const void *payload, size_t len, uint32_t count, struct watch_set *s,
		 const char **why)
{
	struct cursor r = CURSOR_INIT(payload, len);

	for (uint32_t i = 0; i < count; i++) {
		struct watch_rec rec;

		memset(&rec, 0, sizeof(rec));
		if (get_rec(&r, &rec)) {
			watch_rec_release(&rec);
			*why = r.why;
			return -1;
		}
		watch_set_add(s, &rec);
		watch_rec_release(&rec);
	}
	if (r.p != r.end) {
		*why = "trailing bytes after the last record";
		return -1;
	}
	return 0;
}

/* ---- the database ---------------------------------------------------------- */

struct merge_ctx {
	const struct watch_set *add;
	uint32_t seq;
	const char *invalid;    /* the old payload did not decode: why */
};

static int merge_fn(void *vctx, const void *old, size_t old_len, const struct blob_header *h,
		    struct strbuf *out, uint32_t *count)
{
	struct merge_ctx *ctx = vctx;
	struct watch_set all = WATCH_SET_INIT;
	const char *why = NULL;

	if (old && (h->flags || watch_decode(old, old_len, h->count, &all, &why))) {
		watch_set_release(&all);
		ctx->invalid = h->flags ? "unknown flags" : why;
		return errorf("epoch %u: invalid stopwatch results '%s': %s", ctx->seq, WATCH_FILE,
			      ctx->invalid);
	}
	for (size_t i = 0; i < ctx->add->n; i++)
		watch_set_add(&all, &ctx->add->v[i]);
	watch_set_sort(&all);
	if (all.n > UINT32_MAX)
		BUG("too many stopwatch records");
	watch_encode(&all, out);
	*count = (uint32_t)all.n;
	watch_set_release(&all);
	return 0;
}

int db_watch_merge(struct db *db, uint32_t seq, const struct watch_set *s)
{
	/* The merge reports a payload that does not decode; it is set aside without a warning. */
	static const struct blob_kind kind = { WATCH_MAGIC, WATCH_VERSION, NULL, false };
	struct merge_ctx ctx = { s, seq, NULL };

	return db_blob_update(db, seq, WATCH_FILE, &kind, 0, merge_fn, &ctx, &ctx.invalid);
}

int db_watch_load(struct db *db, uint32_t seq, struct watch_set *s)
{
	struct strbuf buf = STRBUF_INIT;
	struct blob_header h;
	const char *why;
	int r = db_blob_load(db, seq, WATCH_FILE, WATCH_MAGIC, WATCH_VERSION,
			     "stopwatch results", &buf, &h);

	if (!r && h.flags) {
		r = db_damage(db, DB_DAMAGED, seq, WATCH_FILE,
			      "invalid stopwatch results: unknown flags %#x", h.flags);
	} else if (!r && watch_decode(buf.buf + BLOB_HEADER_SIZE, h.payload_size, h.count, s, &why)) {
		r = db_damage(db, DB_DAMAGED, seq, WATCH_FILE, "invalid stopwatch results: %s", why);
	}
	strbuf_release(&buf);
	if (!r)
		watch_set_sort(s);
	return r < 0 ? -1 : r;
}

bool watch_set_calls(const struct watch_set *s, const char *key, uint64_t offset,
		     uint64_t *calls)
{
	bool found = false;

	*calls = 0;
	for (size_t i = 0; i < s->n; i++) {
		const struct watch_rec *r = &s->v[i];

		if (r->kind == WATCH_FUNC && r->offset == offset && !strcmp(r->key, key)) {
			*calls += r->calls;
			found = true;
		}
	}
	return found;
}

int watch_calls_load(struct db *db, uint32_t seq, const char *key, uint64_t offset,
		     uint64_t *calls)
{
	struct watch_set s = WATCH_SET_INIT;
	int r = db_watch_load(db, seq, &s);

	if (!r)
		r = watch_set_calls(&s, key, offset, calls) ? 0 : 1;
	watch_set_release(&s);
	return r;
}
