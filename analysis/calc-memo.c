/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/calc-memo.c - a view's figures of every procedure of an epoch,
 * kept (calc-memo.h).
 *
 * The payload (a blob DCPICALC, as the cached static parts; docs/db-format.md
 * "Cached analyses"):
 *
 *   u format (CALC_MEMO_FORMAT)   s analysis   s digest   s model
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
	uint32_t image;             /* index in the view */
	int32_t dominant;
	uint64_t start, end;
	double cpi, best_cpi, dominant_share, high_share;
};

struct calc_memo {
	struct db *db;
	struct epoch_view *v;
	char hex[KEY_MAX + 1], model[DB_CALC_MODEL_MAX + 1];
	struct memo_row *rows;      /* what the database held, sorted by (image, start) */
	size_t n, alloc;
	size_t held;                /* how many it held */
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

static int by_image_start(const void *x, const void *y)
{
	const struct memo_row *a = x, *b = y;

	if (a->image != b->image)
		return a->image < b->image ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* The payload of rows v[0..n) (sorted by image and start, one per procedure). */
static void encode(const struct calc_memo *m, const struct memo_row *v, size_t n,
		   struct strbuf *out)
{
	size_t images = 0;

	strbuf_add_varint(out, CALC_MEMO_FORMAT);
	put_str(out, ANALYSIS);
	put_str(out, m->hex);
	put_str(out, m->model);
	for (size_t k = 0; k < n; k++)
		images += !k || v[k].image != v[k - 1].image;
	strbuf_add_varint(out, images);
	for (size_t k = 0, next; k < n; k = next) {
		uint64_t prev = 0;

		for (next = k; next < n && v[next].image == v[k].image; next++)
			;
		put_str(out, m->v->images[v[k].image].rec->key);
		strbuf_add_varint(out, next - k);
		for (size_t j = k; j < next; j++) {
			strbuf_add_varint(out, v[j].start - prev);
			strbuf_add_varint(out, v[j].end - v[j].start);
			put_f(out, v[j].cpi);
			put_f(out, v[j].best_cpi);
			strbuf_add_varint(out, varint_zigzag((uint64_t)(int64_t)v[j].dominant));
			put_f(out, v[j].dominant_share);
			put_f(out, v[j].high_share);
			prev = v[j].start;
		}
	}
}

/*
 * Reads a payload (made for hex and model when m is not NULL: the rows of
 * images of m's view into it).  0, 1 if it is another's (stale), -1 with
 * c->why if damaged.
 */
static int decode(struct cursor *c, struct calc_memo *m, unsigned count)
{
	uint64_t format, images, total = 0;

	if (cursor_varint(c, &format) || format != CALC_MEMO_FORMAT)
		return cursor_fail(c, "not a memo of figures");
	if (!get_same(c, m ? ANALYSIS : NULL, 128) || !get_same(c, m ? m->hex : NULL, KEY_MAX) ||
	    !get_same(c, m ? m->model : NULL, DB_CALC_MODEL_MAX))
		return c->why ? -1 : 1;
	if (cursor_count(c, &images, UINT32_MAX, 2))
		return -1;
	for (uint64_t i = 0; i < images; i++) {
		char key[PROFILE_KEY_MAX + 1];
		size_t len;
		const char *s = cursor_string(c, PROFILE_KEY_MAX, &len);
		const struct db_image *rec;
		uint64_t n, start = 0, size, dominant;
		ptrdiff_t img = -1;

		if (!s || cursor_count(c, &n, UINT32_MAX, 3 + 4 * 8))
			return -1;
		memcpy(key, s, len);
		key[len] = '\0';
		if (m && (rec = image_index_find(&m->v->index, key)))
			img = rec - m->v->index.v;
		total += n;
		for (uint64_t k = 0; k < n; k++) {
			struct memo_row r = { 0 };
			uint64_t delta;

			if (cursor_varint(c, &delta) || (k && !delta) || cursor_varint(c, &size) || !size)
				return cursor_fail(c, "rows out of order");
			start += delta;
			r.start = start;
			r.end = start + size;
			r.cpi = get_f(c);
			r.best_cpi = get_f(c);
			cursor_varint(c, &dominant);
			r.dominant = (int32_t)(int64_t)varint_unzigzag(dominant);
			r.dominant_share = get_f(c);
			r.high_share = get_f(c);
			if (c->why)
				return -1;
			if (img >= 0 && (size_t)img < m->v->n_images) {
				r.image = (uint32_t)img;
				ALLOC_GROW(m->rows, m->n + 1, m->alloc);
				m->rows[m->n++] = r;
			}
		}
	}
	if (c->p != c->end)
		return cursor_fail(c, "bytes after the rows");
	if (total != count)
		return cursor_fail(c, "row count differs from the header's");
	return 0;
}

int calc_memo_check_payload(const void *payload, size_t len, unsigned count, const char **why)
{
	struct cursor c = CURSOR_INIT(payload, len);

	if (decode(&c, NULL, count) < 0) {
		*why = c.why;
		return -1;
	}
	return 0;
}

/* ---- the memo ------------------------------------------------------------------------ */

static void load(struct calc_memo *m)
{
	struct strbuf buf = STRBUF_INIT;
	struct blob_header h;
	const char *why = NULL;
	int r = db_calc_load(m->db, m->hex, m->model, &buf, &h, &why);

	if (!r) {
		struct cursor c = CURSOR_INIT(buf.buf + BLOB_HEADER_SIZE, (size_t)h.payload_size);

		if ((r = decode(&c, m, h.count)) < 0)
			why = c.why;
	}
	if (r) {
		m->n = 0;   /* stale or damaged: made again */
		if (r < 0)
			warning("cached figures '%s/calc/%s.%s' are damaged: %s (made again)",
				m->db->path, m->hex, m->model, why);
	}
	if (m->n > 1)
		qsort(m->rows, m->n, sizeof(*m->rows), by_image_start);
	m->held = m->n;
	strbuf_release(&buf);
}

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
	load(m);
	return m;
}

bool calc_memo_get(struct calc_memo *m, size_t image, const struct proc *p, struct calc_procrow *row)
{
	const struct memo_row *v;
	size_t lo;

	if (!m || !m->n)
		return false;
	v = m->rows;
	lo = LOWER_BOUND(m->n, k, v[k].image < image || (v[k].image == image && v[k].start < p->start));
	if (lo >= m->n || v[lo].image != image || v[lo].start != p->start || v[lo].end != p->end)
		return false;
	memset(row, 0, sizeof(*row));
	row->cpi = v[lo].cpi;
	row->best_cpi = v[lo].best_cpi;
	row->dominant = v[lo].dominant;
	row->dominant_share = v[lo].dominant_share;
	row->high_share = v[lo].high_share;
	return true;
}

void calc_memo_done_reading(struct calc_memo *m)
{
	if (!m)
		return;
	free(m->rows);
	m->rows = NULL;
	m->n = m->alloc = 0;
}

void calc_memo_close(struct calc_memo *m, size_t n, calc_memo_row_fn row, void *ctx)
{
	struct strbuf out = STRBUF_INIT;
	struct memo_row *v = NULL;
	size_t kept = 0, alloc = 0;

	if (!m)
		return;
	for (size_t k = 0; k < n; k++) {
		struct calc_procrow r;
		const struct proc *p;
		size_t image;

		if (!row(ctx, k, &image, &p, &r) || image > UINT32_MAX)
			continue;
		ALLOC_GROW(v, kept + 1, alloc);
		v[kept++] = (struct memo_row){ (uint32_t)image, r.dominant, p->start, p->end, r.cpi,
					       r.best_cpi, r.dominant_share, r.high_share };
	}
	if (kept > 1)
		qsort(v, kept, sizeof(*v), by_image_start);
	/* a procedure twice (rows per process): once */
	size_t u = 0;

	for (size_t k = 0; k < kept; k++)
		if (!u || by_image_start(&v[u - 1], &v[k]))
			v[u++] = v[k];
	if (u > m->held && u <= UINT32_MAX) {
		/* what the database held is let go first: the rows in v are all there is */
		calc_memo_done_reading(m);
		encode(m, v, u, &out);
		free(v);
		v = NULL;
		db_calc_store(m->db, m->hex, m->model, (uint32_t)u, out.buf, out.len);
	}
	strbuf_release(&out);
	free(v);
	free(m->rows);
	free(m);
}
