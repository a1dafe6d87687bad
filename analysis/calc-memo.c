/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-memo.c - a view's figures of every procedure of an epoch,
 * kept (calc-memo.h).
 *
 * The payload (a blob DCPICALC, as the cached static parts; docs/db-format.md
 * "Cached analyses"):
 *
 *   u format (CALC_MEMO_FORMAT)   u epoch   s analysis   s digest   s model
 *   u images   per image: s key, u rows, the rows by start:
 *     u start - previous start, u end - start, f cpi, f best_cpi, s dominant,
 *     f dominant_share, f high_share
 *
 * (u: a varint, s: a zigzag varint or a varint length and bytes, f: a
 * double's 8 bytes, little-endian: figures kept exactly).
 */
#include "config.h"

#include "analysis/calc-memo.h"
#include "analysis/calc-cache-id.h"

#include <capstone/capstone.h>
#include <stdlib.h>
#include <string.h>

#include "core/cursor.h"
#include "core/die.h"
#include "core/radix.h"
#include "core/hash.h"
#include "core/search.h"
#include "core/strbuf.h"
#include "core/varint.h"
#include "core/xalloc.h"
#include "db/binaries.h"
#include "db/blob.h"
#include "db/db.h"
#include "model/model.h"

/* What made the figures: this version and a digest of every source of the library. */
#define ANALYSIS "dcpi " PACKAGE_VERSION " " CALC_MEMO_SOURCES
#define KEY_MAX 64

/* A procedure's figures: those a view shows. */
struct memo_row {
	uint64_t start, end;
	struct calc_procrow fig;    /* cpi, best_cpi, dominant, dominant_share, high_share */
};

struct calc_memo {
	struct db *db;
	struct epoch_view *v;
	char hex[KEY_MAX + 1], model[DB_CALC_MODEL_MAX + 1];
	size_t held;                /* how many rows the database held */
};

/* ---- what a memo is made from --------------------------------------------------- */

#define MIX(x) do { for (int k_ = 0; k_ < 4; k_++) h[k_] = hash_bytes(h[k_], &(x), sizeof(x)); } while (0)
#define MIXS(s) do { const char *s_ = (s) ? (s) : ""; \
	for (int k_ = 0; k_ < 4; k_++) h[k_] = hash_bytes(h[k_], s_, strlen(s_) + 1); } while (0)

/* The metadata the figures depend on (field by field: structs have padding). */
static void hash_meta(uint64_t h[4], const struct epoch_meta *m)
{
	MIX(m->seq);
	MIX(m->start_ns);
	MIX(m->end_ns);
	MIXS(m->cpu_model);
	MIXS(m->cpu_vendor);
	MIX(m->cpu_family);
	MIX(m->cpu_model_id);
	MIX(m->cpu_mhz);
	MIX(m->ncpus);
	MIX(m->core_sig.addimm_per_cycle);
	MIX(m->core_sig.alu_per_cycle);
	MIX(m->core_sig.load_lat);
	MIX(m->core_sig.div_lat);
	for (size_t i = 0; i < m->n_events; i++) {
		const struct epoch_event *e = &m->events[i];

		MIX(e->event);
		MIX(e->used);
		MIX(e->period);
		MIX(e->samples);
		MIX(e->time_enabled);
		MIX(e->time_running);
	}
	for (size_t i = 0; i < m->n_counters; i++) {
		MIXS(m->counters[i].name);
		MIX(m->counters[i].value);
	}
	for (size_t i = 0; i < m->n_calibs; i++) {
		const struct epoch_calib *c = &m->calibs[i];

		MIX(c->event);
		MIX(c->cycles);
		MIX(c->period);
		MIX(c->mhz);
		MIXS(c->how);
		MIX(c->imul_mhz);
		MIX(c->error);
	}
}

/* DIGEST: the epoch, every image's samples, the options, the model, the build. */
static void digest(const struct epoch_view *v, const struct calc_opts *o, const char *model,
		   char hex[KEY_MAX + 1])
{
	uint64_t h[4] = { HASH_FNV_INIT, HASH_FNV_INIT ^ 1, HASH_FNV_INIT ^ 2, HASH_FNV_INIT ^ 3 };
	int cs = cs_version(NULL, NULL);

	MIXS(ANALYSIS);
	MIX(cs);
	MIXS(model);
	MIX(o->sched);
	MIX(o->flow);
	MIX(o->skid);
	MIX(o->mhz);
	MIX(o->period_cycles);
	MIX(v->opts.force);
	MIXS(v->opts.debug_dir);
	MIX(v->seq);
	if (v->meta_ok)
		hash_meta(h, &v->meta);
	for (size_t i = 0; i < v->n_images; i++) {
		MIXS(v->images[i].rec->key);
		MIXS(v->images[i].rec->path);
		MIX(v->images[i].samples);
		MIX(v->images[i].unread);
	}
	for (int k = 0; k < 4; k++)
		snprintf(hex + 16 * k, 17, "%016llx", (unsigned long long)hash_u64(h[k]));
}

/* ---- the payload ------------------------------------------------------------------- */

static void put_f(struct strbuf *sb, double x)
{
	uint64_t bits;
	char b[8];

	memcpy(&bits, &x, sizeof(bits));
	for (int k = 0; k < 8; k++)
		b[k] = (char)(bits >> (8 * k));
	strbuf_add(sb, b, 8);
}

static double get_f(struct cursor *c)
{
	uint64_t bits = 0;
	double x;

	cursor_le64(c, &bits);
	memcpy(&x, &bits, sizeof(x));
	return x;
}

static void put_str(struct strbuf *sb, const char *s)
{
	strbuf_add_varint_string(sb, s, strlen(s));
}

/* A string of the payload: true if it is want (or want is NULL); false if not, or damaged. */
static bool get_same(struct cursor *c, const char *want, size_t max)
{
	size_t len;
	const char *s = cursor_string(c, max, &len);

	return s && (!want || (len == strlen(want) && !memcmp(s, want, len)));
}

/* ---- the payload, a piece at a time ------------------------------------------ */

/* Read this much of the file at a time (a record is never longer than SLACK). */
#define WINDOW (1u << 20)
#define SLACK 4096

/* A payload read through a window: from a file (r), or whole in memory (r NULL). */
struct memo_in {
	struct db_calc_reader *r;
	const uint8_t *buf;
	uint8_t *own;               /* the window, with r */
	size_t len;                 /* bytes in buf */
	uint64_t at, size;          /* the payload's offset of buf[0]; its size */
	struct cursor c;            /* over buf[0..len) */
};

/* The bytes of the payload not read yet. */
static uint64_t in_left(const struct memo_in *in)
{
	return in->size - in->at - (uint64_t)(in->c.p - in->buf);
}

/* At least SLACK bytes at the cursor, or all that is left: -1 (c.why) if they cannot be read. */
static int in_fill(struct memo_in *in)
{
	size_t used = (size_t)(in->c.p - in->buf), left = cursor_left(&in->c);
	const char *why = NULL;

	if (!in->r || left >= SLACK || in->at + in->len >= in->size || in->c.why)
		return in->c.why ? -1 : 0;
	memmove(in->own, in->c.p, left);
	in->at += used;
	in->len = left;
	while (in->len < WINDOW && in->at + in->len < in->size) {
		ssize_t n = db_calc_read(in->r, in->own + in->len, WINDOW - in->len, in->at + in->len,
					 &why);

		if (n <= 0) {
			in->c = (struct cursor)CURSOR_INIT(in->own, 0);
			return cursor_fail(&in->c, n < 0 ? why : "truncated");
		}
		in->len += (size_t)n;
	}
	in->c = (struct cursor)CURSOR_INIT(in->own, in->len);
	return 0;
}

/* A count of items of at least min bytes each, against what is left of the whole payload. */
static int in_count(struct memo_in *in, uint64_t *n, uint64_t max, size_t min)
{
	if (cursor_varint(&in->c, n))
		return -1;
	if (*n > max || *n > in_left(in) / min)
		return cursor_fail(&in->c, "count larger than the payload");
	return 0;
}

/* A memo row found: the image's index in the view (or -1: none of it), the row. */
typedef void (*memo_row_fn)(void *ctx, ptrdiff_t image, const struct memo_row *row);

/*
 * Reads a payload (made for hex and model when m is not NULL), each row
 * given to fn (if not NULL) with its image's index in m's view.  0, 1 if
 * it is another's (stale), -1 with in->c.why if damaged.  *rows: how many.
 */
static int decode(struct memo_in *in, struct calc_memo *m, unsigned count, memo_row_fn fn,
		  void *ctx, size_t *rows)
{
	struct cursor *c = &in->c;
	uint64_t format, epoch, images, total = 0;

	*rows = 0;
	if (in_fill(in) || cursor_varint(c, &format) || format != CALC_MEMO_FORMAT)
		return cursor_fail(c, "not a memo of figures");
	if (cursor_varint(c, &epoch) || epoch > UINT32_MAX)
		return cursor_fail(c, "not an epoch");
	if ((m && epoch != m->v->seq) || !get_same(c, m ? ANALYSIS : NULL, 128) ||
	    !get_same(c, m ? m->hex : NULL, KEY_MAX) ||
	    !get_same(c, m ? m->model : NULL, DB_CALC_MODEL_MAX))
		return c->why ? -1 : 1;
	if (in_count(in, &images, UINT32_MAX, 2))
		return -1;
	for (uint64_t i = 0; i < images; i++) {
		char key[PROFILE_KEY_MAX + 1];
		size_t len;
		const char *s;
		const struct db_image *rec;
		uint64_t n, start = 0, size, dominant;
		ptrdiff_t img = -1;

		if (in_fill(in) || !(s = cursor_string(c, PROFILE_KEY_MAX, &len)) ||
		    in_count(in, &n, UINT32_MAX, 3 + 4 * 8))
			return -1;
		memcpy(key, s, len);
		key[len] = '\0';
		if (m && (rec = image_index_find(&m->v->index, key)) &&
		    (size_t)(rec - m->v->index.v) < m->v->n_images)
			img = rec - m->v->index.v;
		total += n;
		for (uint64_t k = 0; k < n; k++) {
			struct memo_row r;
			uint64_t delta;

			memset(&r, 0, sizeof(r));
			if (in_fill(in))
				return -1;
			if (cursor_varint(c, &delta) || (k && !delta) || cursor_varint(c, &size) || !size)
				return cursor_fail(c, "rows out of order");
			start += delta;
			r.start = start;
			r.end = start + size;
			r.fig.cpi = get_f(c);
			r.fig.best_cpi = get_f(c);
			cursor_varint(c, &dominant);
			r.fig.dominant = (int)(int64_t)varint_unzigzag(dominant);
			r.fig.dominant_share = get_f(c);
			r.fig.high_share = get_f(c);
			if (c->why)
				return -1;
			if (fn)
				fn(ctx, img, &r);
			*rows += img >= 0;
		}
	}
	if (in_fill(in))
		return -1;
	if (c->p != c->end)
		return cursor_fail(c, "bytes after the rows");
	if (total != count)
		return cursor_fail(c, "row count differs from the header's");
	return 0;
}

int calc_memo_check_payload(const void *payload, size_t len, unsigned count, const char **why)
{
	struct memo_in in = { NULL, payload, NULL, len, 0, len, CURSOR_INIT(payload, len) };
	size_t rows;

	if (decode(&in, NULL, count, NULL, NULL, &rows) < 0) {
		*why = in.c.why;
		return -1;
	}
	return 0;
}

/* ---- items in the order of the payload -------------------------------------------- */

/*
 * The items that have a procedure, by image (in the view's order) then
 * start: a count per image, then each image's few sorted (no array of a
 * million wide keys).  *n_with: how many; *per_image (if not NULL): how
 * many of each image.
 */
static uint32_t *order_items(struct calc_memo *m, size_t n, calc_memo_item_fn item, void *ctx,
			     size_t *n_with, size_t **per_image)
{
	size_t n_img = m->v->n_images, *at = xcalloc(n_img + 1, sizeof(*at)), most = 0, sum = 0;
	uint32_t *order, *image_of = xcalloc(n + 1, sizeof(*image_of));
	struct radix_item *keyed, *tmp;

	for (size_t k = 0; k < n; k++) {
		const struct proc *p;
		size_t image;

		image_of[k] = UINT32_MAX;
		if (!item(ctx, k, &image, &p) || image >= n_img)
			continue;
		image_of[k] = (uint32_t)image;
		at[image]++;
	}
	for (size_t i = 0; i < n_img; i++) {
		size_t c = at[i];

		most = c > most ? c : most;
		at[i] = sum;
		sum += c;
	}
	at[n_img] = sum;
	order = xcalloc(sum + 1, sizeof(*order));
	for (size_t k = 0; k < n; k++)
		if (image_of[k] != UINT32_MAX)
			order[at[image_of[k]]++] = (uint32_t)k;
	free(image_of);
	/* at[i] is now where image i + 1 starts: each image's items sorted by start */
	keyed = xcalloc(most + 1, sizeof(*keyed));
	tmp = xcalloc(most + 1, sizeof(*tmp));
	for (size_t i = 0, from = 0, end; i < n_img; from = end, i++) {
		size_t cnt = (end = at[i]) - from;

		for (size_t j = 0; j < cnt; j++) {
			const struct proc *p;
			size_t image;

			item(ctx, order[from + j], &image, &p);
			keyed[j] = (struct radix_item){ p->start, order[from + j] };
		}
		radix_sort_scratch(keyed, cnt, false, tmp);
		for (size_t j = 0; j < cnt; j++)
			order[from + j] = keyed[j].i;
		if (per_image)
			at[i] = cnt;
	}
	free(keyed);
	free(tmp);
	*n_with = sum;
	if (per_image)
		*per_image = at;
	else
		free(at);
	return order;
}

/* ---- the memo ------------------------------------------------------------------------ */

struct calc_memo *calc_memo_open(struct db *db, struct epoch_view *v, const struct calc_opts *o)
{
	static const struct calc_opts defaults = CALC_OPTS_INIT;
	const struct cpu_model *model;
	struct calc_memo *m;

	if (!o)
		o = &defaults;
	if (o->est || !db)
		return NULL;
	model = o->model ? o->model : cpu_model_for(v->meta_ok ? &v->meta : NULL, NULL);
	if (!model || !db_calc_model_valid(model->name))
		return NULL;
	m = XNEW(struct calc_memo);
	m->db = db;
	m->v = v;
	snprintf(m->model, sizeof(m->model), "%s", model->name);
	digest(v, o, m->model, m->hex);
	return m;
}

/* The merge of the items (in the payload's order) with the rows as they are read. */
struct finding {
	struct calc_memo *m;
	const uint32_t *order;
	size_t n, next;             /* items, and the first not passed yet */
	calc_memo_item_fn item;
	calc_memo_found_fn found;
	void *ctx;
	size_t hits;
};

static void find_row(void *ctx, ptrdiff_t image, const struct memo_row *r)
{
	struct finding *f = ctx;

	if (image < 0)
		return;
	while (f->next < f->n) {
		const struct proc *p;
		size_t img;

		f->item(f->ctx, f->order[f->next], &img, &p);
		if (img > (size_t)image || (img == (size_t)image && p->start >= r->start))
			break;
		f->next++;
	}
	/* a procedure twice (rows per process): each of them */
	for (size_t j = f->next; j < f->n; j++) {
		const struct proc *p;
		size_t img;

		f->item(f->ctx, f->order[j], &img, &p);
		if (img != (size_t)image || p->start != r->start)
			break;
		if (p->end == r->end) {
			f->found(f->ctx, f->order[j], &r->fig);
			f->hits++;
		}
	}
}

size_t calc_memo_find(struct calc_memo *m, size_t n, calc_memo_item_fn item,
		      calc_memo_found_fn found, void *ctx)
{
	struct db_calc_reader rd;
	struct finding f = { m, NULL, 0, 0, item, found, ctx, 0 };
	const char *why = NULL;
	size_t rows = 0;
	int r;

	if (!m)
		return 0;
	if ((r = db_calc_read_begin(m->db, m->hex, m->model, &rd, &why)) == 0) {
		uint8_t *window = xmalloc(WINDOW);
		struct memo_in in = { &rd, window, window, 0, 0, rd.h.payload_size,
				      CURSOR_INIT(window, 0) };

		/* read through first, that nothing of a damaged or stale one is believed */
		if ((r = decode(&in, m, rd.h.count, NULL, NULL, &rows)) < 0)
			why = in.c.why;
		if (!r) {
			in = (struct memo_in){ &rd, window, window, 0, 0, rd.h.payload_size,
					       CURSOR_INIT(window, 0) };
			f.order = order_items(m, n, item, ctx, &f.n, NULL);
			decode(&in, m, rd.h.count, find_row, &f, &rows);
			free((void *)f.order);
		}
		free(window);
		db_calc_read_end(&rd);
	}
	if (r < 0)
		warning("cached figures '%s/calc/%s.%s' are damaged: %s (made again)", m->db->path,
			m->hex, m->model, why);
	m->held = r ? 0 : rows;
	return f.hits;
}

/* What close() stores: a writer and the chunk it fills. */
struct storing {
	struct db_calc_writer w;
	struct strbuf chunk;
};

static void flush(struct storing *st, bool all)
{
	if (st->chunk.len >= WINDOW || (all && st->chunk.len)) {
		db_calc_write(&st->w, st->chunk.buf, st->chunk.len);
		strbuf_reset(&st->chunk);
	}
}

/* The items of calc_memo_close()'s rows: their procedures. */
struct close_items {
	calc_memo_row_fn row;
	void *ctx;
};

static bool close_item(void *ctx, size_t k, size_t *image, const struct proc **p)
{
	const struct close_items *ci = ctx;
	struct calc_procrow r;

	return ci->row(ci->ctx, k, image, p, &r) && *image <= UINT32_MAX;
}

/* Item j of order (within its image) is the same procedure as the one before it. */
static bool repeated(const struct close_items *ci, const uint32_t *order, size_t j, size_t from)
{
	const struct proc *p, *q;
	struct calc_procrow r;
	size_t image;

	if (j == from)
		return false;
	ci->row(ci->ctx, order[j - 1], &image, &p, &r);
	ci->row(ci->ctx, order[j], &image, &q, &r);
	return p->start == q->start;
}

void calc_memo_close(struct calc_memo *m, size_t n, calc_memo_row_fn row, void *ctx)
{
	struct close_items ci = { row, ctx };
	struct storing st;
	size_t kept, *per_image, u = 0, images = 0;
	uint32_t *order;

	if (!m)
		return;
	order = order_items(m, n, close_item, &ci, &kept, &per_image);
	/* a procedure twice (rows per process): once */
	for (size_t i = 0, from = 0; i < m->v->n_images; from += per_image[i++]) {
		size_t before = u;

		for (size_t j = from; j < from + per_image[i]; j++)
			u += !repeated(&ci, order, j, from);
		images += u > before;
	}
	if (u > m->held && u <= UINT32_MAX && !db_calc_write_begin(m->db, m->hex, m->model, &st.w)) {
		strbuf_init(&st.chunk, WINDOW + SLACK);
		strbuf_add_varint(&st.chunk, CALC_MEMO_FORMAT);
		strbuf_add_varint(&st.chunk, m->v->seq);
		put_str(&st.chunk, ANALYSIS);
		put_str(&st.chunk, m->hex);
		put_str(&st.chunk, m->model);
		strbuf_add_varint(&st.chunk, images);
		for (size_t i = 0, from = 0; i < m->v->n_images; from += per_image[i++]) {
			uint64_t prev = 0;
			size_t rows = 0;

			for (size_t j = from; j < from + per_image[i]; j++)
				rows += !repeated(&ci, order, j, from);
			if (!rows)
				continue;
			put_str(&st.chunk, m->v->images[i].rec->key);
			strbuf_add_varint(&st.chunk, rows);
			for (size_t j = from; j < from + per_image[i]; j++) {
				struct calc_procrow r;
				const struct proc *p;
				size_t image;

				if (repeated(&ci, order, j, from))
					continue;
				row(ctx, order[j], &image, &p, &r);
				strbuf_add_varint(&st.chunk, p->start - prev);
				strbuf_add_varint(&st.chunk, p->end - p->start);
				put_f(&st.chunk, r.cpi);
				put_f(&st.chunk, r.best_cpi);
				strbuf_add_varint(&st.chunk, varint_zigzag((uint64_t)(int64_t)r.dominant));
				put_f(&st.chunk, r.dominant_share);
				put_f(&st.chunk, r.high_share);
				prev = p->start;
				flush(&st, false);
			}
		}
		flush(&st, true);
		/* those of the epoch made before (or with other options) are stale now */
		if (!db_calc_write_end(&st.w, (uint32_t)u, true))
			db_calc_memo_replace(m->db, m->hex, m->model, m->v->seq);
		strbuf_release(&st.chunk);
	}
	free(order);
	free(per_image);
	free(m);
}
