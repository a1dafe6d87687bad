/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/image.h - image records and the per-epoch image index
 * (docs/db-format.md, "images" and "Image keys").
 *
 * An image is an executable object samples fall into: a file (executable or
 * shared library), the kernel, a kernel module, the vdso, a process's
 * anonymous executable memory, or the special "unknown" image.  Its key
 * names its profiles on disk; the path is only ever stored inside files.
 */
#ifndef DCPI_DB_IMAGE_H
#define DCPI_DB_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/profile.h"

struct strbuf;

#define IMAGE_BUILD_ID_MAX 32  /* bytes */

enum image_kind {
	IMAGE_FILE,
	IMAGE_KERNEL,
	IMAGE_MODULE,
	IMAGE_VDSO,
	IMAGE_ANON,
	IMAGE_UNKNOWN,
	IMAGE_KIND__COUNT
};

struct db_image {
	char key[PROFILE_KEY_MAX + 1];
	enum image_kind kind;
	char *path;             /* owned; never NULL once in an index */
	uint8_t build_id[IMAGE_BUILD_ID_MAX];
	unsigned build_id_len;  /* 0: none */
	uint64_t size;          /* bytes, 0 if unknown */
	int64_t mtime_ns;       /* 0 if unknown */
	uint64_t dev, ino;      /* 0 if unknown */
};

/* An epoch's image index; owns its images, kept sorted by key. */
struct image_index {
	struct db_image *v;
	size_t n, alloc;
};

#define IMAGE_INDEX_INIT { NULL, 0, 0 }

const char *image_kind_name(enum image_kind kind);
int image_kind_lookup(const char *name);

/* True if key is a valid image key ([0-9a-z][0-9a-z_-]{0,54}). */
bool image_key_valid(const char *key);
/* The key for a build-id: lowercase hex (hashed to h... if > 48 hex digits). */
void image_key_from_build_id(char key[PROFILE_KEY_MAX + 1], const uint8_t *id, size_t len);
/* The key of an image without build-id: "h" + FNV-1a of path, dev, ino. */
void image_key_from_path(char key[PROFILE_KEY_MAX + 1], const char *path, uint64_t dev,
			 uint64_t ino);
/* Appends the build-id of img as lowercase hex (nothing if none). */
void strbuf_add_build_id(struct strbuf *sb, const struct db_image *img);
/* Parses lowercase/uppercase hex into img's build-id; -1 if malformed. */
int image_parse_build_id(struct db_image *img, const char *hex);
/*
 * True if data (a file's bytes) holds the GNU build-id note of id: namesz
 * 4, descsz, type 3, "GNU\0" and the id, byte for byte.  A byte search, not
 * ELF parsing (the daemon and the checker parse no ELF).
 */
bool image_data_has_build_id(const void *data, size_t len, const uint8_t *id, unsigned id_len);

void image_index_init(struct image_index *idx);
void image_index_release(struct image_index *idx);
/* The image with this key, or NULL (binary search). */
struct db_image *image_index_find(const struct image_index *idx, const char *key);
/*
 * Inserts a copy of img, or updates the record with the same key (path,
 * build-id and file identity are replaced).  Returns the stored record.
 */
struct db_image *image_index_put(struct image_index *idx, const struct db_image *img);
/* Formats the index as a complete images file. */
void image_index_format(const struct image_index *idx, struct strbuf *out);
/* Parses an images file; -1 with *why (idx left empty). */
int image_index_parse(const char *buf, size_t len, struct image_index *idx, const char **why);

#endif
