/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Binary snapshots (dcpirun): a copy of every sampled file image with a
 * build-id, stored once per build-id in the database's binaries/, so that
 * rebuilding a program does not orphan its old profile.
 *
 * The file at the image's path is copied only if it still carries the
 * build-id the kernel reported when it was mapped: the GNU build-id note
 * (namesz 4, descsz, type 3, "GNU\0", id) must appear in it byte for byte.
 * That is a byte search, not ELF parsing.
 */
#include "config.h"
#include "collect/collector-int.h"
#include "collect/snapshot.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "db/binaries.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int read_file(const char *path, size_t max, struct strbuf *out, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), r;

	if (fd < 0)
		return -1;
	if (fstat(fd, st) || !S_ISREG(st->st_mode) || (uint64_t)st->st_size > max) {
		close(fd);
		return -1;
	}
	strbuf_grow(out, (size_t)st->st_size + 1);
	r = strbuf_read_fd(out, fd, max);
	close(fd);
	return r;
}

/* True if data holds the GNU build-id note of img. */
bool snapshot_has_build_id(const void *data, size_t len, const uint8_t *id, unsigned id_len)
{
	return image_data_has_build_id(data, len, id, id_len);
}

/*
 * Where the build-id note is looked for first: ELF notes come right after
 * the program headers.  If it is there the file is copied in the kernel,
 * else read whole and searched.
 */
#define SNAPSHOT_HEAD ((size_t)64 << 10)

/* 1 if the file's head holds the note and the file was stored, 0 if not there, -1 on error. */
static int snapshot_by_head(struct db *db, const struct db_image *img, const char *hex, size_t max)
{
	int fd = open(img->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), r = 0;
	struct stat st;
	char *head;
	ssize_t n;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
		close(fd);
		return 0;
	}
	head = xmalloc(SNAPSHOT_HEAD);
	do
		n = pread(fd, head, SNAPSHOT_HEAD, 0);
	while (n < 0 && errno == EINTR);
	if (n > 0 && snapshot_has_build_id(head, (size_t)n, img->build_id, img->build_id_len))
		r = db_binary_store_fd(db, hex, fd, (uint64_t)st.st_size) ? -1 : 1;
	free(head);
	close(fd);
	return r;
}

/* Snapshots one image; 1 if stored, 0 if skipped, -1 on a write error. */
static int snapshot_image(struct db *db, const struct db_image *img, size_t max)
{
	struct strbuf hex = STRBUF_INIT, data = STRBUF_INIT;
	struct stat st;
	int r = 0;

	strbuf_add_build_id(&hex, img);
	if (db_binary_exists(db, hex.buf))
		goto out;
	if ((r = snapshot_by_head(db, img, hex.buf, max)))
		goto out;
	if (read_file(img->path, max, &data, &st) ||
	    !snapshot_has_build_id(data.buf, data.len, img->build_id, img->build_id_len))
		goto out;  /* gone, too big, or rebuilt since it ran */
	r = db_binary_store(db, hex.buf, data.buf, data.len) ? -1 : 1;
out:
	strbuf_release(&hex);
	strbuf_release(&data);
	return r;
}

int collector_snapshot(struct collector *c, size_t max_bytes, unsigned *stored)
{
	int r = 0;

	*stored = 0;
	for (size_t i = 0; i < c->store.index.n; i++) {
		const struct db_image *img = &c->store.index.v[i];
		int k;

		if (img->kind != IMAGE_FILE || !img->build_id_len)
			continue;
		k = snapshot_image(c->db, img, max_bytes);
		if (k < 0)
			r = -1;
		else
			*stored += (unsigned)k;
	}
	return r;
}
