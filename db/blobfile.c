/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "db/blobfile.h"
#include "core/die.h"
#include "core/hotlist.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "db/auxfile.h"
#include "db/damage.h"
#include "db/db.h"

#include <stdlib.h>

static int store(struct db *db, uint32_t seq, const char *name, const char *magic,
		 uint16_t version, uint16_t flags, uint32_t count, const void *payload, size_t len,
		 bool values)
{
	struct strbuf sb = STRBUF_INIT;
	int r;

	blob_encode(magic, version, flags, count, payload, len, &sb);
	r = values ? db_aux_store_values(db, seq, name, sb.buf, sb.len) :
		     db_aux_store(db, seq, name, sb.buf, sb.len);
	strbuf_release(&sb);
	return r;
}

int db_blob_store(struct db *db, uint32_t seq, const char *name, const char *magic,
		  uint16_t version, uint16_t flags, uint32_t count, const void *payload,
		  size_t len)
{
	return store(db, seq, name, magic, version, flags, count, payload, len, false);
}

int db_blob_load(struct db *db, uint32_t seq, const char *name, const char *magic,
		 uint16_t max_version, const char *what, struct strbuf *buf,
		 struct blob_header *h)
{
	const void *payload;
	const char *why;
	int r;

	strbuf_reset(buf);
	r = db_aux_load(db, seq, name, BLOB_MAX_SIZE, buf);
	if (r)
		return r;
	if (!blob_decode(buf->buf, buf->len, magic, max_version, h, &payload, &why))
		return 0;
	db_damage(db, DB_DAMAGED, seq, name, "corrupt %s: %s", what ? what : "blob", why);
	return -2;
}

int db_blob_quarantine(struct db *db, uint32_t seq, const char *name)
{
	return db_file_quarantine(db, seq, name);
}

/* db_blob_merge, naming the kind what in messages (values: it holds register values). */
static int merge_kind(struct db *db, uint32_t seq, const char *name, const char *magic,
		      uint16_t version, const char *what, bool values, uint16_t flags,
		      blob_merge_fn merge, void *ctx)
{
	struct strbuf old = STRBUF_INIT, out = STRBUF_INIT;
	struct blob_header h;
	uint32_t count = 0;
	int r;

	r = db_blob_load(db, seq, name, magic, version, what, &old, &h);
	if (r == -2)
		r = db_blob_quarantine(db, seq, name) ? -1 : 1;
	if (r < 0)
		goto out;
	if (r == 1)
		r = merge(ctx, NULL, 0, NULL, &out, &count);
	else
		r = merge(ctx, old.buf + BLOB_HEADER_SIZE, old.len - BLOB_HEADER_SIZE, &h, &out,
			  &count);
	if (!r)
		r = store(db, seq, name, magic, version, flags, count, out.buf, out.len, values);
out:
	strbuf_release(&old);
	strbuf_release(&out);
	return r;
}

int db_blob_merge(struct db *db, uint32_t seq, const char *name, const char *magic,
		  uint16_t version, uint16_t flags, blob_merge_fn merge, void *ctx)
{
	return merge_kind(db, seq, name, magic, version, NULL, false, flags, merge, ctx);
}

int db_blob_read(struct db *db, uint32_t seq, const char *name, const struct blob_kind *k,
		 blob_decode_fn decode, void *out)
{
	struct strbuf buf = STRBUF_INIT;
	struct blob_header h;
	const char *why;
	int r = db_blob_load(db, seq, name, k->magic, k->version, k->what, &buf, &h);

	if (r)
		r = r > 0 ? 1 : -1;
	else if (decode(out, buf.buf + BLOB_HEADER_SIZE, h.payload_size, h.count, &why))
		r = db_damage(db, DB_DAMAGED, seq, name, "invalid %s: %s", k->what, why);
	strbuf_release(&buf);
	return r;
}

int db_blob_update(struct db *db, uint32_t seq, const char *name, const struct blob_kind *k,
		   uint16_t flags, blob_merge_fn merge, void *ctx, const char **invalid)
{
	int r = merge_kind(db, seq, name, k->magic, k->version, k->what, k->values, flags, merge,
			   ctx);

	if (r && *invalid) {
		/* A sound container with a payload its decoder refuses: set it aside too. */
		if (k->what) {
			char *path = db_epoch_file_path(db, seq, name);

			warning("%s '%s': %s", k->what, path, *invalid);
			free(path);
		}
		*invalid = NULL;
		if (db_blob_quarantine(db, seq, name))
			return -1;
		r = merge_kind(db, seq, name, k->magic, k->version, k->what, k->values, flags, merge,
			       ctx);
	}
	return r;
}

int db_blob_type_load(struct db *db, uint32_t seq, const char *name, const struct blob_type *t,
		      void *out)
{
	t->release(out);
	return db_blob_read(db, seq, name, &t->kind, t->decode, out);
}

struct type_merge_ctx {
	const struct blob_type *t;
	const void *add;
	uint64_t seed;
	const char *invalid;        /* the old payload's decoder refused it: why */
};

static int type_merge_cb(void *ctx, const void *old_payload, size_t old_len,
			 const struct blob_header *old, struct strbuf *out, uint32_t *count)
{
	struct type_merge_ctx *m = ctx;
	const struct blob_type *t = m->t;
	struct hotlist_rng rng = HOTLIST_RNG_INIT(m->seed);
	void *have = xmalloc(t->size);
	const char *why;
	int r = 0;

	t->init(have);
	if (old_payload && t->decode(have, old_payload, old_len, old->count, &why)) {
		m->invalid = why;
		r = -1;
	} else {
		t->merge(have, m->add, &rng);
		*count = t->encode(have, out);
	}
	t->release(have);
	free(have);
	return r;
}

int db_blob_type_merge(struct db *db, uint32_t seq, const char *name, const struct blob_type *t,
		       const void *add, uint64_t seed)
{
	struct type_merge_ctx m = { t, add, seed, NULL };

	return db_blob_update(db, seq, name, &t->kind, 0, type_merge_cb, &m, &m.invalid);
}
