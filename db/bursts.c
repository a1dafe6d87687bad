/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "db/bursts.h"
#include "core/cursor.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/varint.h"
#include "core/xalloc.h"
#include "db/blob.h"
#include "db/blobfile.h"
#include "db/db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Image keys: [0-9a-z][0-9a-z_-]{0,54} (docs/db-format.md, "Image keys"). */
#define KEY_MAX 55

void burst_set_init(struct burst_set *s)
{
	memset(s, 0, sizeof(*s));
}

void burst_set_release(struct burst_set *s)
{
	for (size_t k = 0; k < s->n_keys; k++)
		free(s->keys[k]);
	free(s->keys);
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].steps);
	free(s->v);
	burst_set_init(s);
}

uint32_t burst_set_key(struct burst_set *s, const char *key)
{
	for (size_t k = 0; k < s->n_keys; k++)
		if (!strcmp(s->keys[k], key))
			return (uint32_t)k;
	s->keys = xreallocarray(s->keys, s->n_keys + 1, sizeof(*s->keys));
	s->keys[s->n_keys] = xstrdup(key);
	return (uint32_t)s->n_keys++;
}

struct burst_trace *burst_set_add(struct burst_set *s, uint32_t tid)
{
	struct burst_trace *t;

	ALLOC_GROW(s->v, s->n + 1, s->alloc);
	t = &s->v[s->n++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	return t;
}

void burst_trace_push(struct burst_trace *t, const struct burst_step *step)
{
	t->steps = xreallocarray(t->steps, t->n + 1, sizeof(*t->steps));
	t->steps[t->n++] = *step;
}

/* Moves a copy of trace src (image indexes through map) into dst. */
static void copy_trace(struct burst_set *dst, const struct burst_trace *src, const uint32_t *map)
{
	struct burst_trace *t = burst_set_add(dst, src->tid);

	t->steps = xcalloc(src->n ? src->n : 1, sizeof(*t->steps));
	t->n = src->n;
	for (size_t k = 0; k < src->n; k++) {
		t->steps[k] = src->steps[k];
		if (src->steps[k].image != BURSTS_NO_IMAGE)
			t->steps[k].image = map[src->steps[k].image];
	}
}

void burst_set_merge(struct burst_set *dst, const struct burst_set *src, size_t keep,
		     struct hotlist_rng *rng)
{
	uint32_t *map = xcalloc(src->n_keys + 1, sizeof(*map));

	for (size_t k = 0; k < src->n_keys; k++)
		map[k] = burst_set_key(dst, src->keys[k]);
	for (size_t i = 0; i < src->n; i++)
		copy_trace(dst, &src->v[i], map);
	dst->seen += src->seen;
	/* A uniform sample of keep: a random permutation's first keep (Fisher-Yates). */
	for (size_t i = 0; keep && dst->n > keep && i < keep; i++) {
		size_t j = i + (size_t)(hotlist_rand(rng) % (dst->n - i));
		struct burst_trace t = dst->v[i];

		dst->v[i] = dst->v[j];
		dst->v[j] = t;
	}
	while (keep && dst->n > keep)
		free(dst->v[--dst->n].steps);
	free(map);
}

/* ---- encoding ------------------------------------------------------------------------- */

uint32_t bursts_encode(const struct burst_set *s, struct strbuf *out)
{
	strbuf_add_varint(out, s->seen);
	strbuf_add_varint(out, s->n_keys);
	for (size_t k = 0; k < s->n_keys; k++)
		strbuf_add_varint_string(out, s->keys[k], strlen(s->keys[k]));
	for (size_t i = 0; i < s->n; i++) {
		const struct burst_trace *t = &s->v[i];
		uint64_t prev_off = 0, prev[VALUES_NREGS] = { 0 };

		strbuf_add_varint(out, t->tid);
		strbuf_add_varint(out, t->n);
		for (size_t k = 0; k < t->n; k++) {
			const struct burst_step *st = &t->steps[k];
			uint32_t mask = 0;

			strbuf_add_varint(out, st->image == BURSTS_NO_IMAGE ? 0 : (uint64_t)st->image + 1);
			strbuf_add_varint(out, varint_zigzag(st->offset - prev_off));
			prev_off = st->offset;
			for (unsigned r = 0; r < VALUES_NREGS; r++)
				if (st->regs[r] != prev[r])
					mask |= 1u << r;
			strbuf_add_varint(out, mask);
			for (unsigned r = 0; r < VALUES_NREGS; r++) {
				if (!(mask & (1u << r)))
					continue;
				strbuf_add_varint(out, varint_zigzag(st->regs[r] - prev[r]));
				prev[r] = st->regs[r];
			}
		}
	}
	if (s->n > UINT32_MAX)
		BUG("%zu bursts", s->n);
	return (uint32_t)s->n;
}

static bool key_ok(const uint8_t *k, size_t len)
{
	if (!len || len > KEY_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		bool alnum = (k[i] >= '0' && k[i] <= '9') || (k[i] >= 'a' && k[i] <= 'z');

		if (!alnum && (!i || (k[i] != '_' && k[i] != '-')))
			return false;
	}
	return true;
}

#define FAIL(msg) do { *why = (msg); goto bad; } while (0)

int bursts_decode(const void *payload, size_t len, uint32_t count, struct burst_set *out,
		  const char **why)
{
	struct cursor c = CURSOR_INIT(payload, len);
	uint64_t n_keys;

	burst_set_release(out);
	if (cursor_varint(&c, &out->seen) || cursor_varint(&c, &n_keys))
		FAIL("truncated header");
	if (n_keys > 1u << 20)
		FAIL("too many image keys");
	for (uint64_t k = 0; k < n_keys; k++) {
		uint64_t klen;
		const uint8_t *k_at;
		char key[KEY_MAX + 1];

		if (cursor_varint(&c, &klen) || cursor_bytes(&c, klen, &k_at))
			FAIL("truncated image key");
		if (!key_ok(k_at, (size_t)klen))
			FAIL("bad image key");
		memcpy(key, k_at, (size_t)klen);
		key[klen] = '\0';
		if (burst_set_key(out, key) != k)
			FAIL("image key twice");
	}
	if (count > out->seen)
		FAIL("more bursts than taken");
	for (uint32_t i = 0; i < count; i++) {
		uint64_t tid, n, prev_off = 0, prev[VALUES_NREGS] = { 0 };
		struct burst_trace *t;

		if (cursor_varint(&c, &tid) || cursor_varint(&c, &n))
			FAIL("truncated burst");
		if (tid > UINT32_MAX || !n || n > BURSTS_MAX_STEPS)
			FAIL("bad burst");
		t = burst_set_add(out, (uint32_t)tid);
		t->steps = xcalloc((size_t)n, sizeof(*t->steps));
		for (uint64_t k = 0; k < n; k++) {
			struct burst_step *st = &t->steps[k];
			uint64_t img, z, mask;

			if (cursor_varint(&c, &img) || cursor_varint(&c, &z) || cursor_varint(&c, &mask))
				FAIL("truncated step");
			if (img > n_keys)
				FAIL("bad image index");
			if (mask & ~(uint64_t)VALUES_ALL_REGS)
				FAIL("bad register mask");
			st->image = img ? (uint32_t)(img - 1) : BURSTS_NO_IMAGE;
			st->offset = prev_off + varint_unzigzag(z);
			prev_off = st->offset;
			for (unsigned r = 0; r < VALUES_NREGS; r++) {
				if (mask & (1u << r)) {
					if (cursor_varint(&c, &z))
						FAIL("truncated step");
					if (!z)
						FAIL("register listed as changed but not");
					prev[r] += varint_unzigzag(z);
				}
				st->regs[r] = prev[r];
			}
			t->n = (size_t)k + 1;
		}
	}
	if (c.p != c.end)
		FAIL("trailing bytes");
	return 0;
bad:
	burst_set_release(out);
	return -1;
}

/* ---- the database ------------------------------------------------------------------------ */

static void init_cb(void *p)
{
	burst_set_init(p);
}

static void release_cb(void *p)
{
	burst_set_release(p);
}

static int decode_cb(void *out, const void *payload, size_t len, uint32_t count, const char **why)
{
	return bursts_decode(payload, len, count, out, why);
}

static void merge_cb(void *dst, const void *src, struct hotlist_rng *rng)
{
	burst_set_merge(dst, src, BURSTS_KEEP, rng);
}

static uint32_t encode_cb(const void *p, struct strbuf *out)
{
	return bursts_encode(p, out);
}

static const struct blob_type type = {
	{ BURSTS_MAGIC, BURSTS_VERSION, "burst traces", true }, sizeof(struct burst_set),
	init_cb, release_cb, decode_cb, merge_cb, encode_cb,
};

int db_bursts_load(struct db *db, uint32_t seq, struct burst_set *out)
{
	return db_blob_type_load(db, seq, BURSTS_FILE, &type, out);
}

int db_bursts_merge(struct db *db, uint32_t seq, const struct burst_set *add)
{
	return db_blob_type_merge(db, seq, BURSTS_FILE, &type, add,
				  (uint64_t)seq * 0x9E3779B97F4A7C15ull ^ add->seen);
}
