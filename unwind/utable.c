/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * unwind/utable.c - building, encoding and searching unwind tables.
 */
#include "config.h"

#include "unwind/utable.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/endian.h"
#include "core/search.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "unwind/elfcfi.h"

#include <zlib.h>

/* A compressed .debug_frame larger than this once inflated is refused. */
#define DEBUG_FRAME_MAX ((uint64_t)64 << 20)
#define ELFCOMPRESS_ZLIB 1

void utable_release(struct utable *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

/* Rows as the FDEs give them, before sorting: with their order of arrival. */
struct build {
	const struct elfcfi *elf;
	struct utable *t;
	struct brow {
		struct utable_row row;
		uint32_t seq;
	} *v;
	size_t n, alloc;
	bool too_big;
};

static void on_row(void *ctx, const struct cfi_row *row)
{
	struct build *b = ctx;
	uint64_t off;
	struct brow *r;

	if (!elfcfi_vaddr_to_offset(b->elf, row->start, &off)) {
		/* An FDE's end can be the first byte past its segment. */
		if (row->cfa != CFI_CFA_NONE || !row->start ||
		    !elfcfi_vaddr_to_offset(b->elf, row->start - 1, &off))
			return;
		off++;
	}
	if (off > UINT32_MAX)
		return;
	if (b->n >= UTABLE_MAX_ROWS) {
		b->too_big = true;
		return;
	}
	ALLOC_GROW(b->v, b->n + 1, b->alloc);
	r = &b->v[b->n];
	r->row.start = (uint32_t)off;
	r->row.cfa = row->cfa;
	r->row.rbp = row->rbp;
	r->row.rbp_off = (int16_t)row->rbp_off;
	r->row.cfa_off = row->cfa_off;
	if (row->rbp_off != r->row.rbp_off)
		r->row.rbp = CFI_RBP_UNKNOWN;
	if (row->cfa == CFI_CFA_UNSUPPORTED)
		b->t->unsupported++;
	r->seq = (uint32_t)b->n;
	b->n++;
}

static int on_fde(void *ctx, const struct cfi_fde *f)
{
	struct build *b = ctx;

	b->t->fdes++;
	cfi_fde_rows(f, on_row, b);
	return b->too_big;
}

/*
 * By start; at the same start a function's first row beats the end marker
 * of the function before it (a NONE row), then the later row wins.
 */
static int cmp_brow(const void *pa, const void *pb)
{
	const struct brow *a = pa, *b = pb;
	bool an = a->row.cfa == CFI_CFA_NONE, bn = b->row.cfa == CFI_CFA_NONE;

	if (a->row.start != b->row.start)
		return a->row.start < b->row.start ? -1 : 1;
	if (an != bn)
		return an ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static bool same_rule(const struct utable_row *a, const struct utable_row *b)
{
	return a->cfa == b->cfa && a->rbp == b->rbp && a->cfa_off == b->cfa_off &&
	       a->rbp_off == b->rbp_off;
}

/*
 * Sorts, keeps the winner of each start, and merges runs of the same rule.
 * The table is made in place, over the rows as they came (a row is
 * smaller than a brow, and never written past the one being read): no
 * second array to fault in.
 */
static void finish(struct build *b)
{
	struct utable *t = b->t;
	struct utable_row *rows = (struct utable_row *)(void *)b->v;
	size_t k = 1, n = 0;

	/* The FDEs usually come in address order: no sort (and no sort buffer). */
	while (k < b->n && cmp_brow(&b->v[k - 1], &b->v[k]) < 0)
		k++;
	if (k < b->n)
		qsort(b->v, b->n, sizeof(*b->v), cmp_brow);
	for (size_t i = 0; i < b->n; i++) {
		struct utable_row r = b->v[i].row;

		if (i + 1 < b->n && b->v[i + 1].row.start == r.start)
			continue;
		if (n && same_rule(&rows[n - 1], &r))
			continue;
		if (!n && r.cfa == CFI_CFA_NONE)
			continue;
		rows[n++] = r;
	}
	b->v = NULL;
	b->n = b->alloc = 0;
	t->rows = xreallocarray(rows, n + 1, sizeof(*rows));
	memset(&t->rows[n], 0, sizeof(*t->rows));
	t->n = n;
}

/*
 * The entry point is the outermost frame of the first thread.  Some
 * entry code has no FDE (the dynamic linker's _start): mark it so that a
 * walk that reaches it is known to be whole.
 */
static void mark_entry(struct utable *t, const struct elfcfi *e)
{
	uint64_t off;
	size_t i = 0;

	if (!e->entry || !elfcfi_vaddr_to_offset(e, e->entry, &off) || off > UINT32_MAX - 64 ||
	    utable_find(t, off))
		return;
	while (i < t->n && t->rows[i].start < off)
		i++;
	t->rows = xreallocarray(t->rows, t->n + 3, sizeof(*t->rows));
	if (i == t->n || t->rows[i].start != off) {
		/* else a NONE row (the end of the code before) starts there: it becomes ours */
		memmove(t->rows + i + 1, t->rows + i, (t->n - i) * sizeof(*t->rows));
		t->n++;
	}
	memset(&t->rows[i], 0, sizeof(t->rows[i]));
	t->rows[i].start = (uint32_t)off;
	t->rows[i].cfa = CFI_CFA_END;
	if (i + 1 == t->n) {
		memset(&t->rows[t->n], 0, sizeof(t->rows[0]));
		t->rows[t->n].start = (uint32_t)off + 64;
		t->rows[t->n++].cfa = CFI_CFA_NONE;
	}
}

/*
 * A compressed section (SHF_COMPRESSED: an Elf64_Chdr of 24 bytes, then a
 * zlib stream), inflated into *out (the caller frees it) and described by
 * *sec.  Its size is bounded before anything is allocated.
 */
static int inflate_section(const struct cfi_section *in, struct cfi_section *sec, uint8_t **out,
			   const char **why)
{
	uint64_t size;
	uLongf n;

	*out = NULL;
	if (in->len < 24 || get_le32(in->buf) != ELFCOMPRESS_ZLIB) {
		*why = "a compressed .debug_frame of an unknown kind";
		return -1;
	}
	size = get_le64(in->buf + 8);
	if (!size || size > DEBUG_FRAME_MAX) {
		*why = "a compressed .debug_frame of an unlikely size";
		return -1;
	}
	*out = xmalloc((size_t)size);
	n = (uLongf)size;
	if (uncompress(*out, &n, in->buf + 24, (uLong)(in->len - 24)) != Z_OK || n != size) {
		free(*out);
		*out = NULL;
		*why = "a damaged compressed .debug_frame";
		return -1;
	}
	*sec = *in;
	sec->buf = *out;
	sec->len = (size_t)size;
	return 0;
}

/*
 * Walks one CFI section into b (inflating it first if it is compressed).
 * Returns 0, or -1 with *why set.
 */
static int walk_section(const struct cfi_section *sec, bool zlib, struct build *b,
			const char **why)
{
	struct cfi_section inflated;
	uint8_t *owned = NULL;
	int r;

	if (zlib) {
		if (inflate_section(sec, &inflated, &owned, why))
			return -1;
		sec = &inflated;
	}
	r = cfi_walk(sec, on_fde, b);
	free(owned);
	if (r && !b->n) {
		*why = sec->debug_frame ? "malformed .debug_frame" : "malformed .eh_frame";
		return -1;
	}
	return 0;
}

int utable_build(const uint8_t *elf, size_t len, struct utable *t, const char **why)
{
	struct elfcfi e;
	struct build b;
	int r = -1;

	memset(t, 0, sizeof(*t));
	if (elfcfi_read(elf, len, &e, why))
		return -1;
	memcpy(t->build_id, e.build_id, e.build_id_len);
	t->build_id_len = e.build_id_len;
	if (!e.eh_frame.buf && !e.debug_frame.buf) {
		*why = "no .eh_frame or .debug_frame section";
		return -1;
	}
	memset(&b, 0, sizeof(b));
	b.elf = &e;
	b.t = t;
	/*
	 * .eh_frame, or .debug_frame where .eh_frame has no FDE (Go's linker
	 * writes only .debug_frame; a -fno-asynchronous-unwind-tables build
	 * may have an empty .eh_frame): never both, they describe the same
	 * functions.
	 */
	if (e.eh_frame.buf)
		r = walk_section(&e.eh_frame, false, &b, why);
	if (!t->fdes && e.debug_frame.buf) {
		free(b.v);
		memset(&b, 0, sizeof(b));
		b.elf = &e;
		b.t = t;
		r = walk_section(&e.debug_frame, e.debug_frame_zlib, &b, why);
	}
	if (r) {
		free(b.v);
		return -1;
	}
	if (b.too_big) {
		free(b.v);
		*why = "too many unwind rules";
		return -1;
	}
	finish(&b);
	free(b.v);
	mark_entry(t, &e);
	return 0;
}

const struct utable_row *utable_find(const struct utable *t, uint64_t off)
{
	size_t lo;

	if (off > UINT32_MAX)
		return NULL;
	/* The last row with start <= off. */
	lo = LOWER_BOUND(t->n, k, t->rows[k].start <= off);
	if (!lo || t->rows[lo - 1].cfa == CFI_CFA_NONE)
		return NULL;
	return &t->rows[lo - 1];
}

#define ROW_SIZE 12
_Static_assert(sizeof(struct utable_row) == ROW_SIZE &&
	       offsetof(struct utable_row, rbp_off) == 6 && offsetof(struct utable_row, cfa_off) == 8,
	       "a row is its wire form");

void utable_encode(const struct utable *t, struct strbuf *out)
{
	uint8_t *p;
	size_t len = 4 + 4 + 1 + t->build_id_len + 8 + t->n * ROW_SIZE;

	strbuf_grow(out, len);
	p = (uint8_t *)out->buf + out->len;
	memcpy(p, "UTB2", 4);
	put_le32(p + 4, (uint32_t)t->n);
	p[8] = (uint8_t)t->build_id_len;
	memcpy(p + 9, t->build_id, t->build_id_len);
	p += 9 + t->build_id_len;
	put_le32(p, t->fdes);
	put_le32(p + 4, t->unsupported);
	p += 8;
	for (size_t i = 0; i < t->n; i++, p += ROW_SIZE) {
		const struct utable_row *r = &t->rows[i];

		put_le32(p, r->start);
		p[4] = r->cfa;
		p[5] = r->rbp;
		put_le16(p + 6, (uint16_t)r->rbp_off);
		put_le32(p + 8, (uint32_t)r->cfa_off);
	}
	strbuf_setlen(out, out->len + len);
}

int utable_decode(const uint8_t *buf, size_t len, struct utable *t, const char **why)
{
	size_t n, idlen;
	const uint8_t *p;

	memset(t, 0, sizeof(*t));
	if (len >= 4 && !memcmp(buf, "UTB1", 4)) {
		*why = "an unwind table of an older format";
		return -2;
	}
	if (len < 9 || memcmp(buf, "UTB2", 4)) {
		*why = "not an unwind table";
		return -1;
	}
	n = get_le32(buf + 4);
	idlen = buf[8];
	if (n > UTABLE_MAX_ROWS || idlen > UTABLE_BUILD_ID_MAX ||
	    len != 9 + idlen + 8 + n * ROW_SIZE) {
		*why = "unwind table of the wrong size";
		return -1;
	}
	memcpy(t->build_id, buf + 9, idlen);
	t->build_id_len = idlen;
	p = buf + 9 + idlen;
	t->fdes = get_le32(p);
	t->unsupported = get_le32(p + 4);
	p += 8;
	t->rows = xmalloc((n + 1) * sizeof(*t->rows));
	/* On a little-endian host a row is its wire form: copy, then check. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(t->rows, p, n * ROW_SIZE);
#else
	for (size_t i = 0; i < n; i++, p += ROW_SIZE) {
		struct utable_row *r = &t->rows[i];

		r->start = get_le32(p);
		r->cfa = p[4];
		r->rbp = p[5];
		r->rbp_off = (int16_t)get_le16(p + 6);
		r->cfa_off = (int32_t)get_le32(p + 8);
	}
#endif
	for (size_t i = 0; i < n; i++) {
		const struct utable_row *r = &t->rows[i];

		if ((r->cfa > CFI_CFA_DEREF_RSP &&
		     (r->cfa < CFI_CFA_REG || r->cfa >= CFI_CFA_REG_END)) ||
		    r->rbp > CFI_RBP_UNKNOWN ||
		    (i && r->start <= t->rows[i - 1].start)) {
			utable_release(t);
			*why = "malformed unwind table";
			return -1;
		}
	}
	t->n = n;
	return 0;
}

size_t utable_bytes(const struct utable *t)
{
	return sizeof(*t) + (t->n + 1) * sizeof(*t->rows);
}
