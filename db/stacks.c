/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/stacks.c - the stack table: interning, the canonical encoding, the
 * validating decoder, merging.
 */
#include "config.h"

#include "db/stacks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cursor.h"
#include "core/die.h"
#include "core/hash.h"
#include "core/strbuf.h"
#include "core/varint.h"
#include "core/xalloc.h"
#include "db/auxfile.h"
#include "db/blob.h"
#include "db/blobfile.h"
#include "db/damage.h"
#include "db/db.h"
#include "db/image.h"

static const char *const end_names[STACK_END__COUNT] = {
	"complete", "truncated", "no-cfi", "bad", "kernel", "fp", "none", "no-table",
};

const char *stack_end_name(enum stack_end e)
{
	return (unsigned)e < STACK_END__COUNT ? end_names[e] : "?";
}

void stack_table_init(struct stack_table *t)
{
	memset(t, 0, sizeof(*t));
}

static void free_strings(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
}

void stack_table_release(struct stack_table *t)
{
	free_strings(t->images, t->n_images);
	free_strings(t->comms, t->n_comms);
	free(t->images);
	free(t->comms);
	free(t->frames);
	free(t->ids);
	free(t->stacks);
	free(t->threads);
	free(t->samples);
	idmap_release(&t->image_ix);
	idmap_release(&t->comm_ix);
	idmap_release(&t->frame_ix);
	idmap_release(&t->stack_ix);
	idmap_release(&t->thread_ix);
	u64map_release(&t->sample_ix);
	memset(t, 0, sizeof(*t));
}

void stack_table_clear(struct stack_table *t)
{
	free_strings(t->images, t->n_images);
	free_strings(t->comms, t->n_comms);
	t->n_images = t->n_comms = t->n_frames = t->n_ids = t->n_stacks = 0;
	t->n_threads = t->n_samples = 0;
	t->total = 0;
	idmap_clear(&t->image_ix);
	idmap_clear(&t->comm_ix);
	idmap_clear(&t->frame_ix);
	idmap_clear(&t->stack_ix);
	idmap_clear(&t->thread_ix);
	u64map_clear(&t->sample_ix);
}

/* ---- interning ------------------------------------------------------------ */

static uint32_t intern_string(char ***v, size_t *n, size_t *alloc, struct idmap *ix,
			      const char *s, size_t len)
{
	uint64_t h = hash_bytes(HASH_FNV_INIT, s, len);

	for (uint32_t id = idmap_first(ix, h); id != IDMAP_NONE; id = idmap_next(ix, id))
		if (strlen((*v)[id]) == len && !memcmp((*v)[id], s, len))
			return id;
	ALLOC_GROW(*v, *n + 1, *alloc);
	(*v)[*n] = xstrndup(s, len);
	idmap_add(ix, h, (uint32_t)*n);
	return (uint32_t)(*n)++;
}

uint32_t stack_table_image(struct stack_table *t, const char *key)
{
	return intern_string(&t->images, &t->n_images, &t->a_images, &t->image_ix, key,
			     strlen(key));
}

uint32_t stack_table_comm(struct stack_table *t, const char *comm)
{
	return intern_string(&t->comms, &t->n_comms, &t->a_comms, &t->comm_ix, comm,
			     strnlen(comm, STACK_COMM_MAX));
}

uint32_t stack_table_frame(struct stack_table *t, uint32_t image, uint64_t offset)
{
	uint64_t h = hash_u64(offset ^ hash_u64(image));

	for (uint32_t id = idmap_first(&t->frame_ix, h); id != IDMAP_NONE;
	     id = idmap_next(&t->frame_ix, id))
		if (t->frames[id].image == image && t->frames[id].offset == offset)
			return id;
	ALLOC_GROW(t->frames, t->n_frames + 1, t->a_frames);
	t->frames[t->n_frames].image = image;
	t->frames[t->n_frames].offset = offset;
	idmap_add(&t->frame_ix, h, (uint32_t)t->n_frames);
	return (uint32_t)t->n_frames++;
}

uint32_t stack_table_stack(struct stack_table *t, const uint32_t *frames, size_t n,
			   enum stack_end end)
{
	uint64_t h = hash_u64((uint64_t)end << 32 | n);
	struct stack_rec *s;

	if (!n || n > STACK_MAX_DEPTH)
		BUG("stack of %zu frames", n);
	for (size_t i = 0; i < n; i++)
		h = hash_u64(h ^ frames[i]);
	for (uint32_t id = idmap_first(&t->stack_ix, h); id != IDMAP_NONE;
	     id = idmap_next(&t->stack_ix, id)) {
		s = &t->stacks[id];
		if (s->depth == n && s->end == end &&
		    !memcmp(t->ids + s->first, frames, n * sizeof(*frames)))
			return id;
	}
	ALLOC_GROW(t->ids, t->n_ids + n, t->a_ids);
	memcpy(t->ids + t->n_ids, frames, n * sizeof(*frames));
	ALLOC_GROW(t->stacks, t->n_stacks + 1, t->a_stacks);
	s = &t->stacks[t->n_stacks];
	s->first = (uint32_t)t->n_ids;
	s->depth = (uint32_t)n;
	s->end = (uint8_t)end;
	t->n_ids += n;
	idmap_add(&t->stack_ix, h, (uint32_t)t->n_stacks);
	return (uint32_t)t->n_stacks++;
}

uint32_t stack_table_thread(struct stack_table *t, uint32_t tgid, uint32_t tid, const char *comm)
{
	uint32_t c = stack_table_comm(t, comm);
	uint64_t h = hash_u64(((uint64_t)tgid << 32 | tid) ^ hash_u64(c));
	struct stack_thread *th;

	for (uint32_t id = idmap_first(&t->thread_ix, h); id != IDMAP_NONE;
	     id = idmap_next(&t->thread_ix, id)) {
		th = &t->threads[id];
		if (th->tgid == tgid && th->tid == tid && th->comm == c)
			return id;
	}
	if (t->n_threads >= STACK_MAX_THREADS)
		return UINT32_MAX;
	ALLOC_GROW(t->threads, t->n_threads + 1, t->a_threads);
	th = &t->threads[t->n_threads];
	th->tgid = tgid;
	th->tid = tid;
	th->comm = c;
	idmap_add(&t->thread_ix, h, (uint32_t)t->n_threads);
	return (uint32_t)t->n_threads++;
}

static uint64_t sample_key(uint32_t stack, uint32_t thread, unsigned ev)
{
	return (uint64_t)stack | (uint64_t)(thread & (STACK_MAX_THREADS - 1)) << 32 |
	       (uint64_t)(ev & 15) << 60;
}

void stack_table_add(struct stack_table *t, uint32_t stack, uint32_t thread, enum dcpi_event ev,
		     uint64_t count)
{
	uint64_t *slot;
	struct stack_sample *s;

	if (stack >= t->n_stacks || thread >= t->n_threads || (unsigned)ev >= EVENT__COUNT)
		BUG("stack_table_add: stack %u, thread %u, event %d", stack, thread, (int)ev);
	slot = u64map_slot(&t->sample_ix, sample_key(stack, thread, ev));
	if (!*slot) {
		ALLOC_GROW(t->samples, t->n_samples + 1, t->a_samples);
		s = &t->samples[t->n_samples];
		s->stack = stack;
		s->thread = thread;
		s->event = (uint8_t)ev;
		s->count = 0;
		*slot = ++t->n_samples;
	}
	s = &t->samples[*slot - 1];
	s->count = s->count + count < s->count ? UINT64_MAX : s->count + count;
	t->total = t->total + count < t->total ? UINT64_MAX : t->total + count;
}

/* ---- merging --------------------------------------------------------------- */

/* Lazily filled maps from src's numbers to dst's. */
struct remap {
	const struct stack_table *src;
	struct stack_table *dst;
	uint32_t *image, *frame, *stack, *thread;
	uint32_t buf[STACK_MAX_DEPTH];
};

static uint32_t *new_map(size_t n)
{
	uint32_t *m = xmalloc((n + 1) * sizeof(*m));

	memset(m, 0xff, (n + 1) * sizeof(*m));
	return m;
}

static uint32_t map_frame(struct remap *r, uint32_t f)
{
	const struct stack_frame *fr = &r->src->frames[f];

	if (r->frame[f] == UINT32_MAX) {
		if (r->image[fr->image] == UINT32_MAX)
			r->image[fr->image] = stack_table_image(r->dst, r->src->images[fr->image]);
		r->frame[f] = stack_table_frame(r->dst, r->image[fr->image], fr->offset);
	}
	return r->frame[f];
}

static uint32_t map_stack(struct remap *r, uint32_t s)
{
	const struct stack_rec *st = &r->src->stacks[s];

	if (r->stack[s] == UINT32_MAX) {
		for (uint32_t i = 0; i < st->depth; i++)
			r->buf[i] = map_frame(r, r->src->ids[st->first + i]);
		r->stack[s] = stack_table_stack(r->dst, r->buf, st->depth, (enum stack_end)st->end);
	}
	return r->stack[s];
}

void stack_table_merge(struct stack_table *dst, const struct stack_table *src)
{
	struct remap r = { src, dst, new_map(src->n_images), new_map(src->n_frames),
			   new_map(src->n_stacks), new_map(src->n_threads), { 0 } };

	for (size_t i = 0; i < src->n_samples; i++) {
		const struct stack_sample *s = &src->samples[i];
		const struct stack_thread *th = &src->threads[s->thread];

		if (r.thread[s->thread] == UINT32_MAX)
			r.thread[s->thread] = stack_table_thread(dst, th->tgid, th->tid,
								 src->comms[th->comm]);
		if (r.thread[s->thread] == UINT32_MAX)
			continue;  /* over STACK_MAX_THREADS: cannot happen in practice */
		stack_table_add(dst, map_stack(&r, s->stack), r.thread[s->thread],
				(enum dcpi_event)s->event, s->count);
	}
	free(r.image);
	free(r.frame);
	free(r.stack);
	free(r.thread);
}

/* ---- the canonical order ----------------------------------------------------- */

/* A table in its canonical order (the one it is encoded in): each kind of item renumbered. */
struct canon {
	const struct stack_table *t;
	uint32_t *image, *comm, *frame, *stack, *thread;        /* old -> new */
	uint32_t *by_image, *by_comm, *by_frame, *by_stack, *by_thread, *by_sample; /* new -> old */
};

static int cmp_image(const void *a, const void *b, void *ctx)
{
	const struct canon *o = ctx;

	return strcmp(o->t->images[*(const uint32_t *)a], o->t->images[*(const uint32_t *)b]);
}

static int cmp_comm(const void *a, const void *b, void *ctx)
{
	const struct canon *o = ctx;

	return strcmp(o->t->comms[*(const uint32_t *)a], o->t->comms[*(const uint32_t *)b]);
}

#define CMP(x, y) ((x) < (y) ? -1 : (x) > (y))

static int cmp_frame(const void *a, const void *b, void *ctx)
{
	const struct canon *o = ctx;
	const struct stack_frame *x = &o->t->frames[*(const uint32_t *)a];
	const struct stack_frame *y = &o->t->frames[*(const uint32_t *)b];

	if (x->image != y->image)
		return CMP(o->image[x->image], o->image[y->image]);
	return CMP(x->offset, y->offset);
}

static int cmp_stack_recs(const struct canon *o, const struct stack_rec *x,
			  const struct stack_rec *y)
{
	if (x->depth != y->depth)
		return CMP(x->depth, y->depth);
	for (uint32_t i = 0; i < x->depth; i++) {
		uint32_t fx = o->frame[o->t->ids[x->first + i]], fy = o->frame[o->t->ids[y->first + i]];

		if (fx != fy)
			return CMP(fx, fy);
	}
	return CMP(x->end, y->end);
}

static int cmp_stack(const void *a, const void *b, void *ctx)
{
	const struct canon *o = ctx;

	return cmp_stack_recs(o, &o->t->stacks[*(const uint32_t *)a],
			      &o->t->stacks[*(const uint32_t *)b]);
}

static int cmp_thread(const void *a, const void *b, void *ctx)
{
	const struct canon *o = ctx;
	const struct stack_thread *x = &o->t->threads[*(const uint32_t *)a];
	const struct stack_thread *y = &o->t->threads[*(const uint32_t *)b];

	if (x->tgid != y->tgid)
		return CMP(x->tgid, y->tgid);
	if (x->tid != y->tid)
		return CMP(x->tid, y->tid);
	return CMP(o->comm[x->comm], o->comm[y->comm]);
}

static int cmp_sample(const void *a, const void *b, void *ctx)
{
	const struct canon *o = ctx;
	const struct stack_sample *x = &o->t->samples[*(const uint32_t *)a];
	const struct stack_sample *y = &o->t->samples[*(const uint32_t *)b];

	if (x->stack != y->stack)
		return CMP(o->stack[x->stack], o->stack[y->stack]);
	if (x->thread != y->thread)
		return CMP(o->thread[x->thread], o->thread[y->thread]);
	return CMP(x->event, y->event);
}

/* Sorts 0..n-1 by cmp into *by (new -> old) and fills *map (old -> new). */
static void sort_ids(size_t n, int (*cmp)(const void *, const void *, void *), struct canon *o,
		     uint32_t **by, uint32_t **map)
{
	*by = xmalloc((n + 1) * sizeof(**by));
	for (size_t i = 0; i < n; i++)
		(*by)[i] = (uint32_t)i;
	qsort_r(*by, n, sizeof(**by), cmp, o);
	if (!map)
		return;
	*map = xmalloc((n + 1) * sizeof(**map));
	for (size_t i = 0; i < n; i++)
		(*map)[(*by)[i]] = (uint32_t)i;
}

static void canon_build(struct canon *o, const struct stack_table *t)
{
	memset(o, 0, sizeof(*o));
	o->t = t;
	sort_ids(t->n_images, cmp_image, o, &o->by_image, &o->image);
	sort_ids(t->n_comms, cmp_comm, o, &o->by_comm, &o->comm);
	sort_ids(t->n_frames, cmp_frame, o, &o->by_frame, &o->frame);
	sort_ids(t->n_stacks, cmp_stack, o, &o->by_stack, &o->stack);
	sort_ids(t->n_threads, cmp_thread, o, &o->by_thread, &o->thread);
	sort_ids(t->n_samples, cmp_sample, o, &o->by_sample, NULL);
}

static void canon_release(struct canon *o)
{
	free(o->image);
	free(o->comm);
	free(o->frame);
	free(o->stack);
	free(o->thread);
	free(o->by_image);
	free(o->by_comm);
	free(o->by_frame);
	free(o->by_stack);
	free(o->by_thread);
	free(o->by_sample);
}

/* ---- encoding ------------------------------------------------------------------ */

/* Strings in their canonical order (by: new -> old): the count, then each. */
static void encode_strings(struct strbuf *out, char *const *v, const uint32_t *by, size_t n)
{
	strbuf_add_varint(out, n);
	for (size_t i = 0; i < n; i++)
		strbuf_add_varint_string(out, v[by[i]], strlen(v[by[i]]));
}

static void encode_frames(const struct canon *o, struct strbuf *out)
{
	const struct stack_table *t = o->t;
	uint32_t prev_image = 0;
	uint64_t prev_off = 0;

	strbuf_add_varint(out, t->n_frames);
	for (size_t i = 0; i < t->n_frames; i++) {
		const struct stack_frame *f = &t->frames[o->by_frame[i]];
		uint32_t image = o->image[f->image];

		strbuf_add_varint(out, image - prev_image);
		strbuf_add_varint(out, i && image == prev_image ? f->offset - prev_off : f->offset);
		prev_image = image;
		prev_off = f->offset;
	}
}

static void encode_stacks(const struct canon *o, struct strbuf *out)
{
	const struct stack_table *t = o->t;

	strbuf_add_varint(out, t->n_stacks);
	for (size_t i = 0; i < t->n_stacks; i++) {
		const struct stack_rec *s = &t->stacks[o->by_stack[i]];

		strbuf_add_varint(out, s->depth);
		strbuf_addch(out, s->end);
		for (uint32_t k = 0; k < s->depth; k++)
			strbuf_add_varint(out, o->frame[t->ids[s->first + k]]);
	}
}

static void encode_samples(const struct canon *o, struct strbuf *out)
{
	const struct stack_table *t = o->t;
	uint32_t prev = 0;

	strbuf_add_varint(out, t->n_samples);
	for (size_t i = 0; i < t->n_samples; i++) {
		const struct stack_sample *s = &t->samples[o->by_sample[i]];
		uint32_t stack = o->stack[s->stack];

		strbuf_add_varint(out, stack - prev);
		strbuf_add_varint(out, o->thread[s->thread]);
		strbuf_add_varint(out, s->event);
		strbuf_add_varint(out, s->count);
		prev = stack;
	}
}

void stack_table_encode(const struct stack_table *t, struct strbuf *out, uint32_t *count)
{
	struct canon o;

	canon_build(&o, t);
	encode_strings(out, t->images, o.by_image, t->n_images);
	encode_strings(out, t->comms, o.by_comm, t->n_comms);
	encode_frames(&o, out);
	strbuf_add_varint(out, t->n_threads);
	for (size_t i = 0; i < t->n_threads; i++) {
		const struct stack_thread *th = &t->threads[o.by_thread[i]];

		strbuf_add_varint(out, th->tgid);
		strbuf_add_varint(out, th->tid);
		strbuf_add_varint(out, o.comm[th->comm]);
	}
	encode_stacks(&o, out);
	encode_samples(&o, out);
	*count = t->n_samples > UINT32_MAX ? UINT32_MAX : (uint32_t)t->n_samples;
	canon_release(&o);
}

/* ---- decoding ---------------------------------------------------------------------- */

static int decode_strings(struct cursor *d, struct stack_table *t, bool images)
{
	char buf[64], prev[64] = "";
	uint64_t n;

	if (cursor_count(d, &n, UINT64_MAX, 1))
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		size_t len;
		const char *s = cursor_string(d, images ? 55 : STACK_COMM_MAX, &len);

		if (!s)
			return -1;
		memcpy(buf, s, len);
		buf[len] = '\0';
		if ((images && !image_key_valid(buf)) || (i && strcmp(prev, buf) >= 0)) {
			d->why = images ? "bad or unsorted image key" : "unsorted process names";
			return -1;
		}
		if (images)
			stack_table_image(t, buf);
		else
			stack_table_comm(t, buf);
		memcpy(prev, buf, sizeof(buf));
	}
	return 0;
}

static int decode_frames(struct cursor *d, struct stack_table *t)
{
	uint64_t n, image = 0, off = 0, di, v;

	if (cursor_count(d, &n, UINT64_MAX, 2))
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		if (cursor_varint_max(d, &di, t->n_images, "bad frame image") || cursor_varint(d, &v))
			return -1;
		if (image + di >= t->n_images || (i && !di && (!v || off + v < off))) {
			d->why = "bad or unsorted frame";
			return -1;
		}
		off = i && !di ? off + v : v;
		image += di;
		stack_table_frame(t, (uint32_t)image, off);
	}
	if (t->n_frames != n)
		d->why = "duplicate frame";
	return d->why ? -1 : 0;
}

static int decode_threads(struct cursor *d, struct stack_table *t)
{
	uint64_t n, tgid, tid, comm;
	struct stack_thread prev = { 0, 0, 0 };

	if (cursor_count(d, &n, UINT64_MAX, 3) || n > STACK_MAX_THREADS)
		return d->why ? -1 : (d->why = "too many threads", -1);
	for (uint64_t i = 0; i < n; i++) {
		if (cursor_varint_max(d, &tgid, UINT32_MAX, "bad tgid") ||
		    cursor_varint_max(d, &tid, UINT32_MAX, "bad tid") ||
		    cursor_varint_max(d, &comm, t->n_comms ? t->n_comms - 1 : 0, "bad process name") ||
		    !t->n_comms)
			return d->why ? -1 : (d->why = "thread without process names", -1);
		if (i && (tgid < prev.tgid || (tgid == prev.tgid && tid < prev.tid) ||
			  (tgid == prev.tgid && tid == prev.tid && comm <= prev.comm))) {
			d->why = "unsorted threads";
			return -1;
		}
		prev.tgid = (uint32_t)tgid;
		prev.tid = (uint32_t)tid;
		prev.comm = (uint32_t)comm;
		stack_table_thread(t, prev.tgid, prev.tid, t->comms[comm]);
	}
	return 0;
}

static int decode_stacks(struct cursor *d, struct stack_table *t)
{
	uint32_t frames[STACK_MAX_DEPTH];
	uint64_t n, depth, f;
	struct canon o = { .t = t };

	if (cursor_count(d, &n, UINT64_MAX, 3))
		return -1;
	/* Frames are already in canonical order: the identity maps them. */
	o.frame = xmalloc((t->n_frames + 1) * sizeof(*o.frame));
	for (size_t i = 0; i < t->n_frames; i++)
		o.frame[i] = (uint32_t)i;
	for (uint64_t i = 0; i < n && !d->why; i++) {
		uint8_t end;

		if (cursor_varint_max(d, &depth, STACK_MAX_DEPTH, "stack too deep") || !depth ||
		    !cursor_left(d)) {
			cursor_fail(d, "empty or truncated stack");
			break;
		}
		end = *d->p++;
		if (end >= STACK_END__COUNT) {
			d->why = "bad stack end";
			break;
		}
		for (uint64_t k = 0; k < depth && !d->why; k++)
			if (!cursor_varint_max(d, &f, t->n_frames ? t->n_frames - 1 : 0, "bad frame number") &&
			    !t->n_frames)
				d->why = "stack without frames";
			else
				frames[k] = (uint32_t)f;
		if (d->why)
			break;
		stack_table_stack(t, frames, depth, (enum stack_end)end);
		if (t->n_stacks != i + 1 ||
		    (i && cmp_stack_recs(&o, &t->stacks[i - 1], &t->stacks[i]) >= 0))
			d->why = "duplicate or unsorted stack";
	}
	free(o.frame);
	return d->why ? -1 : 0;
}

static int decode_samples(struct cursor *d, struct stack_table *t, uint32_t count)
{
	uint64_t n, ds, thread, ev, cnt, stack = 0;
	struct stack_sample prev = { 0, 0, 0, 0 };

	if (cursor_count(d, &n, UINT64_MAX, 4))
		return -1;
	if (n != count) {
		d->why = "sample count does not match the header";
		return -1;
	}
	for (uint64_t i = 0; i < n; i++) {
		if (cursor_varint_max(d, &ds, t->n_stacks, "bad stack number") ||
		    cursor_varint_max(d, &thread, t->n_threads, "bad thread number") ||
		    cursor_varint_max(d, &ev, EVENT__COUNT - 1, "bad event") || cursor_varint(d, &cnt))
			return -1;
		stack += ds;
		if (stack >= t->n_stacks || thread >= t->n_threads || !cnt) {
			d->why = "bad sample";
			return -1;
		}
		if (i && !ds && (thread < prev.thread || (thread == prev.thread && ev <= prev.event))) {
			d->why = "unsorted samples";
			return -1;
		}
		prev.thread = (uint32_t)thread;
		prev.event = (uint8_t)ev;
		stack_table_add(t, (uint32_t)stack, (uint32_t)thread, (enum dcpi_event)ev, cnt);
	}
	return 0;
}

int stack_table_decode(struct stack_table *t, const void *payload, size_t len, uint32_t count,
		       const char **why)
{
	struct cursor d = CURSOR_INIT(payload, len);

	stack_table_init(t);
	if (decode_strings(&d, t, true) || decode_strings(&d, t, false) || decode_frames(&d, t) ||
	    decode_threads(&d, t) || decode_stacks(&d, t) || decode_samples(&d, t, count) ||
	    (d.p != d.end && (d.why = "trailing bytes"))) {
		*why = d.why;
		stack_table_release(t);
		return -1;
	}
	return 0;
}

/* ---- the database ---------------------------------------------------------------------- */

/*
 * An epoch's stacks are a base and deltas: "stacks-G" holds generation G
 * (everything merged so far) and "stacks-G-N" the samples written since,
 * one file per write, so that a write costs what it adds, not the whole
 * table.  Every STACKS_SEGMENTS deltas (and at the end of an epoch) the
 * base and its deltas are merged into "stacks-(G+1)"; once that file is in
 * place the older ones mean nothing (readers take the highest generation
 * and its deltas only) and are removed.  A crash at any point leaves a
 * consistent set: every file is written whole, atomically.
 */

struct parts {
	unsigned gen;           /* the highest base generation, 0 if none */
	unsigned max_seg;       /* the highest delta number of that generation */
	char **names;           /* every stacks file */
	size_t n;
};

/* "stacks-G" (seg 0) or "stacks-G-N"; false for anything else. */
static bool parse_part(const char *name, unsigned *gen, unsigned *seg)
{
	char buf[64];
	unsigned g, n = 0;

	if (sscanf(name, STACKS_NAME "-%u-%u", &g, &n) == 2)
		snprintf(buf, sizeof(buf), STACKS_NAME "-%u-%u", g, n);
	else if (sscanf(name, STACKS_NAME "-%u", &g) == 1)
		snprintf(buf, sizeof(buf), STACKS_NAME "-%u", g);
	else
		return false;
	if (strcmp(buf, name) || (!n && strchr(name + sizeof(STACKS_NAME), '-')))
		return false;
	*gen = g;
	*seg = n;
	return true;
}

static void parts_release(struct parts *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->names[i]);
	free(p->names);
}

static int list_parts(struct db *db, uint32_t seq, struct parts *p)
{
	unsigned g, n;

	memset(p, 0, sizeof(*p));
	if (db_aux_list(db, seq, STACKS_NAME "-", &p->names, &p->n))
		return -1;
	for (size_t i = 0; i < p->n; i++)
		if (parse_part(p->names[i], &g, &n) && !n && g > p->gen)
			p->gen = g;
	for (size_t i = 0; i < p->n; i++)
		if (parse_part(p->names[i], &g, &n) && g == p->gen && n > p->max_seg)
			p->max_seg = n;
	return 0;
}

/* True if name is part of the current set (the base or one of its deltas). */
static bool current(const struct parts *p, const char *name, bool *is_base)
{
	unsigned g, n;

	if (!parse_part(name, &g, &n) || g != p->gen)
		return false;
	*is_base = !n;
	return true;
}

/* Loads one file into t (merged).  0; 1 if gone; -1 unreadable; -2 invalid (reported). */
static int load_part(struct db *db, uint32_t seq, const char *name, struct stack_table *t)
{
	struct strbuf buf = STRBUF_INIT;
	struct stack_table part;
	struct blob_header h;
	const char *why;
	int r = db_blob_load(db, seq, name, STACKS_MAGIC, STACKS_VERSION, "stack table", &buf, &h);

	if (!r && stack_table_decode(&part, buf.buf + BLOB_HEADER_SIZE, h.payload_size, h.count,
				     &why)) {
		db_damage(db, DB_DAMAGED, seq, name, "invalid stack table: %s", why);
		r = -2;
	} else if (!r) {
		stack_table_merge(t, &part);
		stack_table_release(&part);
	}
	strbuf_release(&buf);
	return r;
}

/* Loads the current set.  quarantine: move invalid files aside (a writer). */
static int load_set(struct db *db, uint32_t seq, const struct parts *p, struct stack_table *t,
		    bool quarantine, size_t *found)
{
	int r = 0;

	*found = 0;
	for (size_t i = 0; i < p->n; i++) {
		bool base;
		int k;

		if (!current(p, p->names[i], &base))
			continue;
		k = load_part(db, seq, p->names[i], t);
		if (k == -2 && quarantine)
			db_blob_quarantine(db, seq, p->names[i]);
		else if (k < 0)
			r = -1;
		*found += k == 0;
	}
	return r;
}

int db_stacks_load(struct db *db, uint32_t seq, struct stack_table *t)
{
	struct parts p;
	size_t found;
	int r;

	stack_table_init(t);
	if (list_parts(db, seq, &p))
		return -1;
	/* a damaged file is reported and recorded (db/damage.h); the rest is the table */
	r = load_set(db, seq, &p, t, false, &found);
	parts_release(&p);
	return found || r ? 0 : 1;
}

static int store_part(struct db *db, uint32_t seq, const char *name, const struct stack_table *t)
{
	struct strbuf sb = STRBUF_INIT;
	uint32_t count;
	int r;

	stack_table_encode(t, &sb, &count);
	r = db_blob_store(db, seq, name, STACKS_MAGIC, STACKS_VERSION, 0, count, sb.buf, sb.len);
	strbuf_release(&sb);
	return r;
}

/* Merges the current set into the next generation's base; removes what it replaces. */
static int compact(struct db *db, uint32_t seq, const struct parts *p)
{
	struct stack_table t;
	char name[64];
	size_t found;
	int r;

	stack_table_init(&t);
	r = load_set(db, seq, p, &t, true, &found);
	snprintf(name, sizeof(name), STACKS_NAME "-%u", p->gen + 1);
	if (!r)
		r = store_part(db, seq, name, &t);
	stack_table_release(&t);
	if (r)
		return -1;
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->names[i], name))
			db_aux_remove(db, seq, p->names[i]);
	return 0;
}

int db_stacks_merge(struct db *db, uint32_t seq, const struct stack_table *t, bool final)
{
	struct parts p;
	char name[64];
	size_t deltas = 0;
	bool base;
	int r;

	if (list_parts(db, seq, &p))
		return -1;
	snprintf(name, sizeof(name), STACKS_NAME "-%u-%u", p.gen, p.max_seg + 1);
	r = t->n_samples ? store_part(db, seq, name, t) : 0;
	if (!r) {
		parts_release(&p);
		if (list_parts(db, seq, &p))
			return -1;
		for (size_t i = 0; i < p.n; i++)
			deltas += current(&p, p.names[i], &base) && !base;
		/* Old generations left by a crash go too. */
		if (deltas >= STACKS_SEGMENTS || (final && (deltas || p.n > 1)))
			r = compact(db, seq, &p);
	}
	parts_release(&p);
	return r;
}

size_t stack_table_bytes(const struct stack_table *t)
{
	size_t n = sizeof(*t);

	n += t->a_images * sizeof(char *) + t->n_images * 24;
	n += t->a_comms * sizeof(char *) + t->n_comms * 24;
	n += t->a_frames * sizeof(*t->frames) + t->a_ids * sizeof(*t->ids);
	n += t->a_stacks * sizeof(*t->stacks) + t->a_threads * sizeof(*t->threads);
	n += t->a_samples * sizeof(*t->samples);
	n += (t->image_ix.head.cap + t->comm_ix.head.cap + t->frame_ix.head.cap +
	      t->stack_ix.head.cap + t->thread_ix.head.cap + t->sample_ix.cap) * 17;
	n += (t->image_ix.alloc + t->comm_ix.alloc + t->frame_ix.alloc + t->stack_ix.alloc +
	      t->thread_ix.alloc) * 4;
	return n;
}
