/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "db/profile.h"
#include "core/crc32c.h"
#include "core/endian.h"
#include "core/die.h"
#include "core/search.h"
#include "core/strbuf.h"
#include "core/varint.h"
#include "core/xalloc.h"

#include <stdlib.h>
#include <string.h>

void profile_init(struct profile *p)
{
	p->v = NULL;
	p->n = p->alloc = 0;
}

void profile_release(struct profile *p)
{
	free(p->v);
	profile_init(p);
}

void profile_add(struct profile *p, uint64_t offset, uint64_t count)
{
	ALLOC_GROW(p->v, p->n + 1, p->alloc);
	p->v[p->n].offset = offset;
	p->v[p->n].count = count;
	p->n++;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct profile_entry *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

void profile_normalize(struct profile *p)
{
	size_t out = 0;

	if (!profile_is_normalized(p))
		qsort(p->v, p->n, sizeof(*p->v), cmp_entry);
	for (size_t i = 0; i < p->n; i++) {
		if (!p->v[i].count)
			continue;
		if (out && p->v[out - 1].offset == p->v[i].offset)
			p->v[out - 1].count = sat_add(p->v[out - 1].count, p->v[i].count);
		else
			p->v[out++] = p->v[i];
	}
	p->n = out;
}

bool profile_is_normalized(const struct profile *p)
{
	for (size_t i = 0; i < p->n; i++) {
		if (!p->v[i].count)
			return false;
		if (i && p->v[i].offset <= p->v[i - 1].offset)
			return false;
	}
	return true;
}

uint64_t profile_total(const struct profile *p)
{
	uint64_t t = 0;

	for (size_t i = 0; i < p->n; i++)
		t = sat_add(t, p->v[i].count);
	return t;
}

int profile_merge(struct profile *dst, const struct profile *add)
{
	struct profile_entry *v;
	size_t i = 0, j = 0, k = 0;

	if (!add->n)
		return 0;
	v = xreallocarray(NULL, dst->n + add->n, sizeof(*v));
	while (i < dst->n || j < add->n) {
		if (j >= add->n || (i < dst->n && dst->v[i].offset < add->v[j].offset)) {
			v[k++] = dst->v[i++];
		} else if (i >= dst->n || add->v[j].offset < dst->v[i].offset) {
			v[k++] = add->v[j++];
		} else {
			uint64_t c = dst->v[i].count + add->v[j].count;

			if (c < dst->v[i].count) {
				free(v);
				return -1;
			}
			v[k].offset = dst->v[i].offset;
			v[k++].count = c;
			i++;
			j++;
		}
	}
	free(dst->v);
	dst->v = v;
	dst->n = k;
	dst->alloc = dst->n + add->n;
	return 0;
}

size_t profile_lower_bound(const struct profile *p, uint64_t off)
{
	return LOWER_BOUND(p->n, k, p->v[k].offset < off);
}

uint64_t profile_get(const struct profile *p, uint64_t offset)
{
	size_t i = profile_lower_bound(p, offset);

	return i < p->n && p->v[i].offset == offset ? p->v[i].count : 0;
}

/* ---- encoding --------------------------------------------------------- */

enum {
	H_MAGIC = 0, H_VERSION = 8, H_FLAGS = 10, H_PID = 12, H_PAYLOAD = 16, H_NENT = 24,
	H_TOTAL = 32, H_LAST = 40, H_EVENT = 48, H_KEY = 64, H_PCRC = 120, H_HCRC = 124,
	FLAG_PER_PID = 1,
};

void profile_encode(const struct profile *p, const struct profile_header *hdr,
		    struct strbuf *out)
{
	uint8_t h[PROFILE_HEADER_SIZE];
	size_t start = out->len, payload_start;
	uint64_t prev = 0, total = 0;
	const char *ev = event_name(hdr->event);

	if (strlen(hdr->key) > PROFILE_KEY_MAX)
		BUG("profile key too long");
	strbuf_addchars(out, 0, PROFILE_HEADER_SIZE);
	payload_start = out->len;
	strbuf_grow(out, p->n * 3);
	for (size_t i = 0; i < p->n; i++) {
		uint8_t buf[2 * VARINT_MAX];
		size_t n;

		if (i && p->v[i].offset <= prev)
			BUG("profile_encode: profile not normalised");
		n = varint_encode(p->v[i].offset - prev, buf);
		n += varint_encode(p->v[i].count, buf + n);
		strbuf_add(out, buf, n);
		prev = p->v[i].offset;
		total = sat_add(total, p->v[i].count);
	}

	memset(h, 0, sizeof(h));
	memcpy(h + H_MAGIC, PROFILE_MAGIC, 8);
	put_le16(h + H_VERSION, PROFILE_VERSION);
	put_le16(h + H_FLAGS, hdr->per_pid ? FLAG_PER_PID : 0);
	put_le32(h + H_PID, hdr->per_pid ? hdr->pid : 0);
	put_le64(h + H_PAYLOAD, out->len - payload_start);
	put_le64(h + H_NENT, p->n);
	put_le64(h + H_TOTAL, total);
	put_le64(h + H_LAST, p->n ? p->v[p->n - 1].offset : 0);
	memcpy(h + H_EVENT, ev, strlen(ev));
	memcpy(h + H_KEY, hdr->key, strlen(hdr->key));
	put_le32(h + H_PCRC, crc32c(0, out->buf + payload_start, out->len - payload_start));
	put_le32(h + H_HCRC, crc32c(0, h, H_HCRC));
	memcpy(out->buf + start, h, sizeof(h));
}

/* Copies a NUL-padded field; -1 unless it is NUL-terminated within size. */
static int get_padded(const uint8_t *b, size_t size, char *out)
{
	size_t n = strnlen((const char *)b, size);

	if (n == size)
		return -1;
	for (size_t i = n; i < size; i++)
		if (b[i])
			return -1;
	memcpy(out, b, n);
	out[n] = '\0';
	return 0;
}

int profile_decode_header(const void *buf, size_t len, struct profile_header *hdr,
			  const char **why)
{
	const uint8_t *h = buf;
	char ev[EVENT_NAME_MAX + 1];
	uint16_t flags;
	int e;

	if (len < PROFILE_HEADER_SIZE)
		return *why = len ? "truncated header" : "empty file", -1;
	if (memcmp(h + H_MAGIC, PROFILE_MAGIC, 8))
		return *why = "bad magic (not a dcpi profile)", -1;
	if (get_le16(h + H_VERSION) != PROFILE_VERSION)
		return *why = "unsupported profile version", -1;
	if (get_le32(h + H_HCRC) != crc32c(0, h, H_HCRC))
		return *why = "bad header checksum", -1;
	flags = get_le16(h + H_FLAGS);
	if (flags & ~FLAG_PER_PID)
		return *why = "unknown header flags", -1;
	memset(hdr, 0, sizeof(*hdr));
	hdr->per_pid = flags & FLAG_PER_PID;
	hdr->pid = get_le32(h + H_PID);
	if (!hdr->per_pid && hdr->pid)
		return *why = "pid set in an aggregate profile", -1;
	hdr->payload_size = get_le64(h + H_PAYLOAD);
	hdr->n_entries = get_le64(h + H_NENT);
	hdr->total = get_le64(h + H_TOTAL);
	hdr->last_offset = get_le64(h + H_LAST);
	if (get_padded(h + H_EVENT, 16, ev) || (e = event_lookup(ev)) < 0)
		return *why = "unknown event in header", -1;
	hdr->event = (enum dcpi_event)e;
	if (get_padded(h + H_KEY, H_PCRC - H_KEY, hdr->key) || !hdr->key[0])
		return *why = "bad image key in header", -1;
	/* Each entry takes at least two payload bytes. */
	if (hdr->n_entries > hdr->payload_size / 2 || (hdr->n_entries && !hdr->total) ||
	    (!hdr->n_entries && (hdr->total || hdr->last_offset || hdr->payload_size)))
		return *why = "inconsistent header counts", -1;
	return 0;
}

int profile_decode(const void *buf, size_t len, struct profile_header *hdr,
		   struct profile *p, const char **why)
{
	const uint8_t *b = buf, *q, *end;
	uint64_t prev = 0, total = 0;

	p->n = 0;
	if (profile_decode_header(buf, len, hdr, why))
		return -1;
	if (len - PROFILE_HEADER_SIZE != hdr->payload_size)
		return *why = len - PROFILE_HEADER_SIZE < hdr->payload_size ?
			"truncated payload" : "trailing bytes after payload", -1;
	q = b + PROFILE_HEADER_SIZE;
	end = q + hdr->payload_size;
	if (get_le32(b + H_PCRC) != crc32c(0, q, hdr->payload_size))
		return *why = "bad payload checksum", -1;
	p->alloc = 0;
	free(p->v);
	p->v = xreallocarray(NULL, hdr->n_entries ? hdr->n_entries : 1, sizeof(*p->v));
	p->alloc = hdr->n_entries ? hdr->n_entries : 1;
	for (uint64_t i = 0; i < hdr->n_entries; i++) {
		uint64_t delta, count;

		if (varint_decode(&q, end, &delta) || varint_decode(&q, end, &count))
			goto bad_payload;
		if ((i && !delta) || prev + delta < prev || !count || total + count < total)
			goto bad_payload;
		prev += delta;
		total += count;
		p->v[i].offset = prev;
		p->v[i].count = count;
		p->n++;
	}
	if (q != end)
		goto bad_payload;
	if (total != hdr->total || (p->n && prev != hdr->last_offset))
		return p->n = 0, *why = "payload does not match header totals", -1;
	return 0;

bad_payload:
	p->n = 0;
	*why = "malformed payload";
	return -1;
}
