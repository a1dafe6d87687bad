/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "db/image.h"
#include "db/textrec.h"
#include "core/die.h"
#include "core/hash.h"
#include "core/search.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMAGES_MAGIC "dcpi-images"
#define IMAGES_VERSION 1

static const char *const kind_names[IMAGE_KIND__COUNT] = {
	[IMAGE_FILE] = "file", [IMAGE_KERNEL] = "kernel", [IMAGE_MODULE] = "module",
	[IMAGE_VDSO] = "vdso", [IMAGE_ANON] = "anon", [IMAGE_UNKNOWN] = "unknown",
};

const char *image_kind_name(enum image_kind kind)
{
	if ((unsigned)kind >= IMAGE_KIND__COUNT)
		BUG("bad image kind %d", (int)kind);
	return kind_names[kind];
}

int image_kind_lookup(const char *name)
{
	for (int i = 0; i < IMAGE_KIND__COUNT; i++)
		if (!strcmp(kind_names[i], name))
			return i;
	return -1;
}

bool image_key_valid(const char *key)
{
	size_t n = strlen(key);

	if (!n || n > PROFILE_KEY_MAX)
		return false;
	if (!islower((unsigned char)key[0]) && !isdigit((unsigned char)key[0]))
		return false;
	return strspn(key, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

static void key_from_hash(char key[PROFILE_KEY_MAX + 1], uint64_t h)
{
	snprintf(key, PROFILE_KEY_MAX + 1, "h%016" PRIx64, h);
}

void image_key_from_build_id(char key[PROFILE_KEY_MAX + 1], const uint8_t *id, size_t len)
{
	if (!len || len > 24) {
		key_from_hash(key, hash_bytes(HASH_FNV_INIT, id, len));
		return;
	}
	for (size_t i = 0; i < len; i++)
		snprintf(key + 2 * i, 3, "%02x", id[i]);
}

void image_key_from_path(char key[PROFILE_KEY_MAX + 1], const char *path, uint64_t dev,
			 uint64_t ino)
{
	char tail[48];
	uint64_t h = hash_bytes(HASH_FNV_INIT, path, strlen(path) + 1);

	snprintf(tail, sizeof(tail), "%" PRIu64 " %" PRIu64, dev, ino);
	key_from_hash(key, hash_bytes(h, tail, strlen(tail)));
}

void strbuf_add_build_id(struct strbuf *sb, const struct db_image *img)
{
	for (unsigned i = 0; i < img->build_id_len; i++)
		strbuf_addf(sb, "%02x", img->build_id[i]);
}

int image_parse_build_id(struct db_image *img, const char *hex)
{
	size_t n = strlen(hex);

	if (!n || n % 2 || n / 2 > IMAGE_BUILD_ID_MAX || strspn(hex, "0123456789abcdefABCDEF") != n)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;

		sscanf(hex + 2 * i, "%2x", &v);
		img->build_id[i] = (uint8_t)v;
	}
	img->build_id_len = (unsigned)(n / 2);
	return 0;
}

void image_index_init(struct image_index *idx)
{
	idx->v = NULL;
	idx->n = idx->alloc = 0;
}

void image_index_release(struct image_index *idx)
{
	for (size_t i = 0; i < idx->n; i++)
		free(idx->v[i].path);
	free(idx->v);
	image_index_init(idx);
}

/* Index of the first record with key >= key. */
static size_t lower_bound(const struct image_index *idx, const char *key)
{
	return LOWER_BOUND(idx->n, k, strcmp(idx->v[k].key, key) < 0);
}

struct db_image *image_index_find(const struct image_index *idx, const char *key)
{
	size_t i = lower_bound(idx, key);

	return i < idx->n && !strcmp(idx->v[i].key, key) ? &idx->v[i] : NULL;
}

struct db_image *image_index_put(struct image_index *idx, const struct db_image *img)
{
	size_t i = lower_bound(idx, img->key);
	struct db_image *r;

	if (!image_key_valid(img->key))
		BUG("invalid image key '%s'", img->key);
	if (i < idx->n && !strcmp(idx->v[i].key, img->key)) {
		r = &idx->v[i];
		free(r->path);
	} else {
		ALLOC_GROW(idx->v, idx->n + 1, idx->alloc);
		memmove(&idx->v[i + 1], &idx->v[i], (idx->n - i) * sizeof(*idx->v));
		idx->n++;
		r = &idx->v[i];
	}
	*r = *img;
	r->path = xstrdup(img->path ? img->path : "");
	return r;
}

void image_index_format(const struct image_index *idx, struct strbuf *out)
{
	textrec_begin(out, IMAGES_MAGIC, IMAGES_VERSION);
	for (size_t i = 0; i < idx->n; i++) {
		const struct db_image *img = &idx->v[i];

		strbuf_addf(out, "image %s %s ", img->key, image_kind_name(img->kind));
		if (img->build_id_len)
			strbuf_add_build_id(out, img);
		else
			strbuf_addch(out, '-');
		strbuf_addf(out, " %" PRIu64 " %" PRId64 " %" PRIu64 " %" PRIu64, img->size,
			    img->mtime_ns, img->dev, img->ino);
		textrec_token(out, img->path && *img->path ? img->path : "-", 0);
		strbuf_addch(out, '\n');
	}
	textrec_finish(out);
}

static int parse_num(const char *s, uint64_t *v)
{
	char *end;

	if (!isdigit((unsigned char)*s) && !(*s == '-' && isdigit((unsigned char)s[1])))
		return -1;
	errno = 0;
	*v = *s == '-' ? (uint64_t)strtoll(s, &end, 10) : strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

static int parse_image(const struct textrec_line *l, struct db_image *img)
{
	uint64_t mtime;
	int kind;

	memset(img, 0, sizeof(*img));
	if (strcmp(l->tok[0], "image") || l->ntok != 9)
		return -1;
	if (!image_key_valid(l->tok[1]))
		return -1;
	strcpy(img->key, l->tok[1]);
	if ((kind = image_kind_lookup(l->tok[2])) < 0)
		return -1;
	img->kind = (enum image_kind)kind;
	if (strcmp(l->tok[3], "-") && image_parse_build_id(img, l->tok[3]))
		return -1;
	if (parse_num(l->tok[4], &img->size) || parse_num(l->tok[5], &mtime) ||
	    parse_num(l->tok[6], &img->dev) || parse_num(l->tok[7], &img->ino))
		return -1;
	img->mtime_ns = (int64_t)mtime;
	img->path = l->tok[8];
	return 0;
}

int image_index_parse(const char *buf, size_t len, struct image_index *idx, const char **why)
{
	struct textrec rec;

	image_index_init(idx);
	if (textrec_parse(buf, len, IMAGES_MAGIC, IMAGES_VERSION, &rec, why))
		return -1;
	for (size_t i = 0; i < rec.n; i++) {
		struct db_image img;

		if (strcmp(rec.lines[i].tok[0], "image"))
			continue; /* a newer writer's line: ignore */
		if (parse_image(&rec.lines[i], &img)) {
			*why = "malformed image line";
			goto fail;
		}
		if (idx->n && strcmp(idx->v[idx->n - 1].key, img.key) >= 0) {
			*why = "image lines not sorted or duplicated";
			goto fail;
		}
		image_index_put(idx, &img);
	}
	textrec_release(&rec);
	return 0;
fail:
	textrec_release(&rec);
	image_index_release(idx);
	return -1;
}

bool image_data_has_build_id(const void *data, size_t len, const uint8_t *id, unsigned id_len)
{
	unsigned char note[12 + 4 + IMAGE_BUILD_ID_MAX];
	uint32_t namesz = 4, descsz = id_len, type = 3;

	if (!id_len || id_len > IMAGE_BUILD_ID_MAX)
		return false;
	memcpy(note, &namesz, 4);
	memcpy(note + 4, &descsz, 4);
	memcpy(note + 8, &type, 4);
	memcpy(note + 12, "GNU", 4);
	memcpy(note + 16, id, id_len);
	return memmem(data, len, note, 16 + id_len) != NULL;
}
