/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "db/values.h"
#include "core/cursor.h"
#include "core/die.h"
#include "core/search.h"
#include "core/strbuf.h"
#include "core/varint.h"
#include "core/xalloc.h"
#include "db/blob.h"
#include "db/blobfile.h"
#include "db/db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const reg_names[VALUES_NREGS] = {
	"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rflags",
};

const char *values_reg_name(unsigned r)
{
	return r < VALUES_NREGS ? reg_names[r] : NULL;
}

int values_reg_lookup(const char *name)
{
	/* The legacy registers' 32-, 16- and 8-bit names. */
	static const char *const alias[][4] = {
		{ "eax", "ax", "al", "ah" }, { "ebx", "bx", "bl", "bh" },
		{ "ecx", "cx", "cl", "ch" }, { "edx", "dx", "dl", "dh" },
		{ "esi", "si", "sil", NULL }, { "edi", "di", "dil", NULL },
		{ "ebp", "bp", "bpl", NULL }, { "esp", "sp", "spl", NULL },
	};
	size_t n;

	for (unsigned r = 0; r < VALUES_NREGS; r++)
		if (!strcmp(name, reg_names[r]))
			return (int)r;
	for (unsigned r = 0; r < 8; r++)
		for (unsigned k = 0; k < 4; k++)
			if (alias[r][k] && !strcmp(name, alias[r][k]))
				return (int)r;
	/* r8d, r8w, r8b */
	n = strlen(name);
	if (n >= 3 && name[0] == 'r' && strchr("dwb", name[n - 1])) {
		char base[8];

		if (n - 1 >= sizeof(base))
			return -1;
		memcpy(base, name, n - 1);
		base[n - 1] = '\0';
		for (unsigned r = VREG_R8; r <= VREG_R15; r++)
			if (!strcmp(base, reg_names[r]))
				return (int)r;
	}
	if (!strcmp(name, "eflags") || !strcmp(name, "flags"))
		return VREG_RFLAGS;
	return -1;
}

/* ---- profiles ---------------------------------------------------------------------- */

void values_profile_init(struct values_profile *p)
{
	memset(p, 0, sizeof(*p));
}

static void rec_release(struct values_rec *r)
{
	free(r->pairs);
	free(r->room);
}

void values_profile_release(struct values_profile *p)
{
	for (size_t i = 0; i < p->n; i++)
		rec_release(&p->v[i]);
	free(p->v);
	values_profile_init(p);
}

/* Gives r room for caps[k] entries in the list of register k. */
static void rec_room(struct values_rec *r, const unsigned *caps)
{
	size_t total = 0;

	for (unsigned k = 0; k < VALUES_NREGS; k++)
		total += caps[k];
	r->room = xcalloc(total ? total : 1, sizeof(*r->room));
	total = 0;
	for (unsigned k = 0; k < VALUES_NREGS; k++) {
		if (caps[k])
			hotlist_init(&r->h[k], r->room + total, caps[k]);
		total += caps[k];
	}
}

static struct values_rec *append(struct values_profile *p, uint64_t offset)
{
	struct values_rec *r;

	ALLOC_GROW(p->v, p->n + 1, p->alloc);
	r = &p->v[p->n++];
	memset(r, 0, sizeof(*r));
	r->offset = offset;
	return r;
}

struct values_rec *values_profile_add(struct values_profile *p, uint64_t offset)
{
	unsigned caps[VALUES_NREGS];
	struct values_rec *r = append(p, offset);

	for (unsigned k = 0; k < VALUES_NREGS; k++)
		caps[k] = VALUES_CAP;
	rec_room(r, caps);
	return r;
}

struct values_rec *values_profile_add_regs(struct values_profile *p, uint64_t offset,
					   uint32_t mask)
{
	unsigned caps[VALUES_NREGS];
	struct values_rec *r = append(p, offset);

	for (unsigned k = 0; k < VALUES_NREGS; k++)
		caps[k] = mask >> k & 1 ? VALUES_CAP : 0;
	rec_room(r, caps);
	return r;
}

static int by_offset(const void *a, const void *b)
{
	const struct values_rec *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

void values_profile_sort(struct values_profile *p)
{
	if (p->n > 1)
		qsort(p->v, p->n, sizeof(*p->v), by_offset);
	for (size_t i = 1; i < p->n; i++)
		if (p->v[i].offset == p->v[i - 1].offset)
			BUG("value profile with offset %#llx twice", (unsigned long long)p->v[i].offset);
}

size_t values_profile_lower_bound(const struct values_profile *p, uint64_t offset)
{
	return LOWER_BOUND(p->n, k, p->v[k].offset < offset);
}

const struct values_rec *values_profile_find(const struct values_profile *p, uint64_t offset)
{
	size_t i = values_profile_lower_bound(p, offset);

	return i < p->n && p->v[i].offset == offset ? &p->v[i] : NULL;
}

uint64_t values_profile_samples(const struct values_profile *p)
{
	uint64_t n = 0;

	for (size_t i = 0; i < p->n; i++)
		n += p->v[i].samples;
	return n;
}

struct values_pairs *values_rec_pairs(struct values_rec *r)
{
	if (!r->pairs)
		r->pairs = xcalloc(1, sizeof(*r->pairs));
	return r->pairs;
}

void values_rec_sample(struct values_rec *r, const uint64_t *regs, uint32_t mask,
		       struct hotlist_rng *rng)
{
	r->samples++;
	for (unsigned k = 0; k < VALUES_NREGS; k++) {
		if (!(mask & (1u << k)) || !r->h[k].cap)
			continue;
		r->mask |= 1u << k;
		hotlist_add(&r->h[k], regs[k], rng);
	}
}

/* ---- merging ------------------------------------------------------------------------- */

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static void pairs_add(struct values_rec *dst, const struct values_pairs *s)
{
	struct values_pairs *d = values_rec_pairs(dst);

	d->n = sat_add(d->n, s->n);
	d->dt = sat_add(d->dt, s->dt);
	d->mask |= s->mask;
	for (unsigned k = 0; k < VALUES_NREGS; k++) {
		d->d[k].npos = sat_add(d->d[k].npos, s->d[k].npos);
		d->d[k].spos = sat_add(d->d[k].spos, s->d[k].spos);
		values_top2(&d->d[k].mpos, &d->d[k].mpos2, s->d[k].mpos);
		values_top2(&d->d[k].mpos, &d->d[k].mpos2, s->d[k].mpos2);
		values_top2(&d->d[k].mneg, &d->d[k].mneg2, s->d[k].mneg);
		values_top2(&d->d[k].mneg, &d->d[k].mneg2, s->d[k].mneg2);
		d->d[k].nneg = sat_add(d->d[k].nneg, s->d[k].nneg);
		d->d[k].sneg = sat_add(d->d[k].sneg, s->d[k].sneg);
	}
}

/* A writer's record at src's offset holding src's data (lists thinned to VALUES_CAP). */
static void rec_copy(struct values_profile *p, const struct values_rec *src,
		     struct hotlist_rng *rng)
{
	struct values_rec *r = values_profile_add(p, src->offset);

	r->samples = src->samples;
	r->mask = src->mask;
	for (unsigned k = 0; k < VALUES_NREGS; k++)
		if (src->mask & (1u << k))
			hotlist_merge(&r->h[k], &src->h[k], rng);
	if (src->pairs)
		pairs_add(r, src->pairs);
}

static void rec_merge(struct values_rec *dst, const struct values_rec *src,
		      struct hotlist_rng *rng)
{
	dst->samples = sat_add(dst->samples, src->samples);
	for (unsigned k = 0; k < VALUES_NREGS; k++) {
		if (!(src->mask & (1u << k)))
			continue;
		if (!(dst->mask & (1u << k)))
			dst->h[k].tau = 1, dst->h[k].n = 0;
		dst->mask |= 1u << k;
		hotlist_merge(&dst->h[k], &src->h[k], rng);
		/* The merge adds back what one stream missed: never past the samples. */
		for (size_t e = 0; e < dst->h[k].n; e++)
			if (dst->h[k].e[e].count > dst->samples)
				dst->h[k].e[e].count = dst->samples;
	}
	if (src->pairs)
		pairs_add(dst, src->pairs);
}

void values_merge(struct values_profile *dst, const struct values_profile *src,
		  struct hotlist_rng *rng)
{
	struct values_profile out;
	size_t i = 0, j = 0;

	values_profile_init(&out);
	while (i < dst->n || j < src->n) {
		if (j >= src->n || (i < dst->n && dst->v[i].offset < src->v[j].offset)) {
			rec_copy(&out, &dst->v[i++], rng);
		} else if (i >= dst->n || src->v[j].offset < dst->v[i].offset) {
			rec_copy(&out, &src->v[j++], rng);
		} else {
			rec_copy(&out, &dst->v[i++], rng);
			rec_merge(&out.v[out.n - 1], &src->v[j++], rng);
		}
	}
	values_profile_release(dst);
	*dst = out;
}

/* ---- encoding ------------------------------------------------------------------------- */

/* A register's pair sums, in their order in the file. */
#define DELTA_SUMS(d)                                                                 \
	{ &(d)->npos, &(d)->spos, &(d)->mpos, &(d)->mpos2,                            \
	  &(d)->nneg, &(d)->sneg, &(d)->mneg, &(d)->mneg2 }

/*
 * Values are stored as differences: a list's first value from the first
 * value of the same register's list in the last record that had one, the
 * others from the value before them (stack and base pointers, bounds and
 * small counters then take a byte or two).
 */
uint32_t values_encode(const struct values_profile *p, struct strbuf *out)
{
	uint64_t last_off = 0, prev_first[VALUES_NREGS] = { 0 };

	for (size_t i = 0; i < p->n; i++) {
		const struct values_rec *r = &p->v[i];

		strbuf_add_varint(out, i ? r->offset - last_off : r->offset);
		last_off = r->offset;
		strbuf_add_varint(out, r->samples);
		strbuf_add_varint(out, r->mask);
		for (unsigned k = 0; k < VALUES_NREGS; k++) {
			const struct hotlist *h = &r->h[k];
			uint64_t prev;

			if (!(r->mask & (1u << k)))
				continue;
			strbuf_add_varint(out, h->tau);
			strbuf_add_varint(out, h->n);
			prev = prev_first[k];
			for (size_t e = 0; e < h->n; e++) {
				strbuf_add_varint(out, varint_zigzag(h->e[e].value - prev));
				strbuf_add_varint(out, h->e[e].count);
				prev = h->e[e].value;
			}
			if (h->n)
				prev_first[k] = h->e[0].value;
		}
		if (!r->pairs || !r->pairs->n) {
			strbuf_add_varint(out, 0);
			continue;
		}
		strbuf_add_varint(out, r->pairs->n);
		strbuf_add_varint(out, r->pairs->dt);
		strbuf_add_varint(out, r->pairs->mask);
		for (unsigned k = 0; k < VALUES_NREGS; k++) {
			const struct values_delta *d = &r->pairs->d[k];

			if (!(r->pairs->mask & (1u << k)))
				continue;
			const uint64_t *const sums[] = DELTA_SUMS(d);

			for (unsigned j = 0; j < ARRAY_SIZE(sums); j++)
				strbuf_add_varint(out, *sums[j]);
		}
	}
	if (p->n > UINT32_MAX)
		BUG("value profile of %zu records", p->n);
	return (uint32_t)p->n;
}

#define FAIL(msg) do { *why = (msg); goto bad; } while (0)

/* Reads one register's list into r (which has room for it). */
static int get_list(struct cursor *c, struct hotlist *h, uint64_t samples, uint64_t *prev_first,
		    const char **why)
{
	uint64_t tau, n, prev = *prev_first;

	if (cursor_varint(c, &tau) || cursor_varint(c, &n))
		return *why = "truncated hot list", -1;
	if (!tau || tau > UINT32_MAX)
		return *why = "bad hot list threshold", -1;
	if (n > h->cap)
		BUG("hot list of %llu entries in room for %u", (unsigned long long)n, h->cap);
	h->tau = (uint32_t)tau;
	for (uint64_t e = 0; e < n; e++) {
		uint64_t z, count;

		if (cursor_varint(c, &z) || cursor_varint(c, &count))
			return *why = "truncated hot list", -1;
		h->e[e].value = prev + varint_unzigzag(z);
		if (!count || count > samples)
			return *why = "bad hot list count", -1;
		for (uint64_t f = 0; f < e; f++)
			if (h->e[f].value == h->e[e].value)
				return *why = "value twice in a hot list", -1;
		h->e[e].count = count;
		prev = h->e[e].value;
		h->n = (uint16_t)(e + 1);
	}
	if (n)
		*prev_first = h->e[0].value;
	return 0;
}

/*
 * The sizes of a record's lists, read ahead (the room is allocated before
 * the entries are read): a copy of the cursor walks the same bytes.  An
 * empty list (every value thinned out) gets room for one.
 */
static int list_sizes(struct cursor c, uint32_t mask, unsigned *caps, const char **why)
{
	for (unsigned k = 0; k < VALUES_NREGS; k++) {
		uint64_t tau, n, skip;

		caps[k] = 0;
		if (!(mask & (1u << k)))
			continue;
		if (cursor_varint(&c, &tau) || cursor_varint(&c, &n))
			return *why = "truncated hot list", -1;
		if (n > HOTLIST_MAX)
			return *why = "bad hot list size", -1;
		if (!n && tau <= 1)
			return *why = "empty exact hot list", -1;
		caps[k] = n ? (unsigned)n : 1;
		for (uint64_t e = 0; e < 2 * n; e++)
			if (cursor_varint(&c, &skip))
				return *why = "truncated hot list", -1;
	}
	return 0;
}

static int get_pairs(struct cursor *c, struct values_rec *r, const char **why)
{
	struct values_pairs *pp;
	uint64_t n, mask;

	if (cursor_varint(c, &n))
		return *why = "truncated pairs", -1;
	if (!n)
		return 0;
	pp = values_rec_pairs(r);
	pp->n = n;
	if (cursor_varint(c, &pp->dt) || cursor_varint(c, &mask))
		return *why = "truncated pairs", -1;
	if (mask & ~(uint64_t)VALUES_ALL_REGS)
		return *why = "bad register mask", -1;
	pp->mask = (uint32_t)mask;
	for (unsigned k = 0; k < VALUES_NREGS; k++) {
		struct values_delta *d = &pp->d[k];

		if (!(mask & (1u << k)))
			continue;
		uint64_t *const sums[] = DELTA_SUMS(d);

		for (unsigned j = 0; j < ARRAY_SIZE(sums); j++)
			if (cursor_varint(c, sums[j]))
				return *why = "truncated pairs", -1;
		if (d->npos > n || d->nneg > n - d->npos || !d->npos != !d->spos ||
		    !d->nneg != !d->sneg || !d->npos != !d->mpos || !d->nneg != !d->mneg ||
		    (d->npos < 2 && d->mpos2) || (d->nneg < 2 && d->mneg2) ||
		    (d->npos >= 2 && !d->mpos2) || (d->nneg >= 2 && !d->mneg2) ||
		    d->mpos2 > d->mpos || d->mneg2 > d->mneg ||
		    d->mpos > d->spos || d->mpos2 > d->spos - d->mpos ||
		    d->mneg > d->sneg || d->mneg2 > d->sneg - d->mneg)
			return *why = "bad pair sums", -1;
	}
	return 0;
}

int values_decode(const void *payload, size_t len, uint32_t count, struct values_profile *out,
		  const char **why)
{
	struct cursor c = CURSOR_INIT(payload, len);
	uint64_t last_off = 0, prev_first[VALUES_NREGS] = { 0 };

	values_profile_release(out);
	for (uint32_t i = 0; i < count; i++) {
		unsigned caps[VALUES_NREGS];
		uint64_t delta, samples, mask;
		struct values_rec *r;

		if (cursor_varint(&c, &delta) || cursor_varint(&c, &samples) || cursor_varint(&c, &mask))
			FAIL("truncated record");
		if (i && (!delta || delta > UINT64_MAX - last_off))
			FAIL("offsets not increasing");
		if (!samples)
			FAIL("record without samples");
		if (mask & ~(uint64_t)VALUES_ALL_REGS)
			FAIL("bad register mask");
		if (list_sizes(c, (uint32_t)mask, caps, why))
			goto bad;
		r = append(out, i ? last_off + delta : delta);
		last_off = r->offset;
		rec_room(r, caps);
		r->samples = samples;
		r->mask = (uint32_t)mask;
		for (unsigned k = 0; k < VALUES_NREGS; k++) {
			if (!(mask & (1u << k)))
				continue;
			if (get_list(&c, &r->h[k], samples, &prev_first[k], why))
				goto bad;
		}
		if (get_pairs(&c, r, why))
			goto bad;
	}
	if (c.p != c.end)
		FAIL("trailing bytes");
	return 0;
bad:
	values_profile_release(out);
	return -1;
}

/* ---- the database ------------------------------------------------------------------------ */

/* The epoch file name of image key's value profile ("KEY.values"). */
static void values_file_name(const char *key, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s", key, VALUES_SUFFIX);
}

static void init_cb(void *p)
{
	values_profile_init(p);
}

static void release_cb(void *p)
{
	values_profile_release(p);
}

static int decode_cb(void *out, const void *payload, size_t len, uint32_t count, const char **why)
{
	return values_decode(payload, len, count, out, why);
}

static void merge_cb(void *dst, const void *src, struct hotlist_rng *rng)
{
	values_merge(dst, src, rng);
}

static uint32_t encode_cb(const void *p, struct strbuf *out)
{
	return values_encode(p, out);
}

static const struct blob_type type = {
	{ VALUES_MAGIC, VALUES_VERSION, "value profile", true }, sizeof(struct values_profile),
	init_cb, release_cb, decode_cb, merge_cb, encode_cb,
};

int db_values_load(struct db *db, uint32_t seq, const char *key, struct values_profile *out)
{
	char name[128];

	values_file_name(key, name, sizeof(name));
	return db_blob_type_load(db, seq, name, &type, out);
}

int db_values_merge(struct db *db, uint32_t seq, const char *key, const struct values_profile *add)
{
	char name[128];

	values_file_name(key, name, sizeof(name));
	return db_blob_type_merge(db, seq, name, &type, add,
				  (uint64_t)seq * 0x9E3779B97F4A7C15ull ^ values_profile_samples(add));
}
