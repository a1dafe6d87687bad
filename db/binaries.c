/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "db/binaries.h"
#include "core/crc32c.h"
#include "core/cursor.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "db/blob.h"
#include "db/db-int.h"
#include "db/db.h"
#include "db/fsio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool db_binary_name_valid(const char *hex)
{
	size_t n = strlen(hex);

	return n >= 2 && n <= 2 * IMAGE_BUILD_ID_MAX && n % 2 == 0 &&
	       strspn(hex, "0123456789abcdef") == n;
}

/* The directory dir (binaries/, unwind/) of the database, made if create. */
static int open_subdir(struct db *db, const char *dir, bool create)
{
	int fd;

	if (create && mkdirat(db->dirfd, dir, FSIO_DIR_MODE) && errno != EEXIST)
		return errorf_errno("cannot create '%s/%s'", db->path, dir);
	fd = openat(db->dirfd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && (create || errno != ENOENT))
		errorf_errno("cannot open '%s/%s'", db->path, dir);
	return fd;
}

static int open_binaries(struct db *db, bool create)
{
	return open_subdir(db, DB_BINARIES_DIR, create);
}

bool db_binary_exists(struct db *db, const char *hex)
{
	struct stat st;
	int fd;
	bool r;

	/* asked for every image of an epoch: binaries/ is kept open (or known absent) a while */
	if (!db_binary_name_valid(hex) || (fd = db_subdir(db, DB_BINARIES_DIR)) < 0)
		return false;
	r = !fstatat(fd, hex, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode);
	db_dir_put(db, fd);
	return r;
}

char *db_binary_path(struct db *db, const char *hex)
{
	return db_binary_exists(db, hex) ? xasprintf("%s/binaries/%s", db->path, hex) : NULL;
}

static int binary_store(struct db *db, const char *hex, const void *data, int src, uint64_t len)
{
	char *what;
	int fd, r;

	db_need_writer(db);
	if (!db_binary_name_valid(hex))
		return errorf("invalid build-id '%s'", hex);
	if (db_binary_exists(db, hex))
		return 0;
	if ((fd = open_binaries(db, true)) < 0)
		return -1;
	db_dirs_forget(db);  /* binaries/ may be new */
	what = xasprintf("%s/%s/%s", db->path, DB_BINARIES_DIR, hex);
	r = src >= 0 ? fsio_copy_atomic(fd, hex, what, src, len, db_sync_enabled(db)) :
		       fsio_write_atomic(fd, hex, what, data, (size_t)len, db_sync_enabled(db));
	/* The new directory entry of binaries/ itself must survive a crash too. */
	if (!r && db_sync_enabled(db))
		r = fsio_fsync_dir(db->dirfd, db->path);
	close(fd);
	free(what);
	return r;
}

int db_binary_store(struct db *db, const char *hex, const void *data, size_t len)
{
	return binary_store(db, hex, data, -1, len);
}

int db_binary_store_fd(struct db *db, const char *hex, int fd, uint64_t len)
{
	return binary_store(db, hex, NULL, fd, len);
}

/* ---- cached unwind tables --------------------------------------------- */

int db_unwind_store(struct db *db, const char *hex, const void *data, size_t len)
{
	struct strbuf blob = STRBUF_INIT;
	char *what;
	int fd, r;

	db_need_writer(db);
	if (!db_binary_name_valid(hex))
		return errorf("invalid build-id '%s'", hex);
	if ((fd = open_subdir(db, DB_UNWIND_DIR, true)) < 0)
		return -1;
	blob_encode(DB_UNWIND_MAGIC, DB_UNWIND_VERSION, 0, 0, data, len, &blob);
	what = xasprintf("%s/%s/%s", db->path, DB_UNWIND_DIR, hex);
	r = fsio_write_atomic(fd, hex, what, blob.buf, blob.len, db_sync_enabled(db));
	if (!r && db_sync_enabled(db))
		r = fsio_fsync_dir(db->dirfd, db->path);
	close(fd);
	free(what);
	strbuf_release(&blob);
	return r;
}

int db_unwind_load(struct db *db, const char *hex, struct strbuf *out)
{
	struct strbuf buf = STRBUF_INIT;
	struct blob_header h;
	const void *payload;
	const char *why;
	char *what;
	int fd, r;

	strbuf_reset(out);
	if (!db_binary_name_valid(hex))
		return 1;
	if ((fd = open_subdir(db, DB_UNWIND_DIR, false)) < 0)
		return errno == ENOENT ? 1 : -1;
	what = xasprintf("%s/%s/%s", db->path, DB_UNWIND_DIR, hex);
	r = fsio_read_at(fd, hex, what, BLOB_MAX_SIZE, &buf);
	if (!r && blob_decode(buf.buf, buf.len, DB_UNWIND_MAGIC, DB_UNWIND_VERSION, &h, &payload,
			      &why)) {
		warning("%s: %s (the table is made again)", what, why);
		r = -1;
	} else if (!r) {
		strbuf_add(out, payload, (size_t)h.payload_size);
	}
	close(fd);
	free(what);
	strbuf_release(&buf);
	return r;
}

/* ---- cached analyses (calc/HEX.MODEL) ---------------------------------- */

bool db_calc_model_valid(const char *model)
{
	size_t n = strlen(model);

	if (!n || n > DB_CALC_MODEL_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((model[i] >= 'a' && model[i] <= 'z') || (model[i] >= '0' && model[i] <= '9') ||
		      model[i] == '-'))
			return false;
	return true;
}

bool db_calc_name_valid(const char *name, size_t *hex_len)
{
	const char *dot = strchr(name, '.');
	char hex[2 * 32 + 1];
	size_t n = dot ? (size_t)(dot - name) : 0;

	if (!dot || n >= sizeof(hex))
		return false;
	memcpy(hex, name, n);
	hex[n] = 0;
	if (!db_binary_name_valid(hex) || !db_calc_model_valid(dot + 1))
		return false;
	if (hex_len)
		*hex_len = n;
	return true;
}

/* "HEX.MODEL" into out, or -1 if either is not valid. */
static int calc_name(char *out, size_t size, const char *hex, const char *model)
{
	if (!db_binary_name_valid(hex) || !db_calc_model_valid(model))
		return -1;
	snprintf(out, size, "%s.%s", hex, model);
	return 0;
}

int db_calc_store(struct db *db, const char *hex, const char *model, uint32_t count,
		  const void *payload, size_t len)
{
	struct strbuf blob = STRBUF_INIT;
	char name[128];
	int fd, r, err;

	if (calc_name(name, sizeof(name), hex, model)) {
		errno = EINVAL;
		return -1;
	}
	if (mkdirat(db->dirfd, DB_CALC_DIR, FSIO_DIR_MODE) && errno != EEXIST)
		return -1;
	fd = openat(db->dirfd, DB_CALC_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	blob_encode(DB_CALC_MAGIC, DB_CALC_VERSION, 0, count, payload, len, &blob);
	r = fsio_write_cache(fd, name, blob.buf, blob.len);
	err = errno;
	close(fd);
	strbuf_release(&blob);
	errno = err;
	return r;
}

int db_calc_load(struct db *db, const char *hex, const char *model, struct strbuf *buf,
		 struct blob_header *h, const char **why)
{
	const void *payload;
	struct stat st;
	char name[128];
	int dfd, fd, r = 0;

	strbuf_reset(buf);
	*why = NULL;
	if (calc_name(name, sizeof(name), hex, model))
		return 1;
	dfd = openat(db->dirfd, DB_CALC_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? 1 : (*why = strerror(errno), -1);
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		return errno == ENOENT ? 1 : (*why = strerror(errno), -1);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		r = -1;
	} else if ((uint64_t)st.st_size > BLOB_MAX_SIZE) {
		*why = "too large";
		r = -1;
	} else {
		size_t want = (size_t)st.st_size, got = 0;

		strbuf_grow(buf, want + 1);
		while (got < want) {
			ssize_t n = pread(fd, buf->buf + got, want - got, (off_t)got);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				*why = n < 0 ? strerror(errno) : "truncated";
				r = -1;
				break;
			}
			got += (size_t)n;
		}
		buf->len = got;
		buf->buf[got] = 0;
	}
	close(fd);
	if (!r && blob_decode(buf->buf, buf->len, DB_CALC_MAGIC, DB_CALC_VERSION, h, &payload, why))
		r = -1;
	return r;
}

/* ---- cached analyses, piece by piece ------------------------------------------ */

/* calc/ opened (made if make), or -1 with errno. */
static int calc_dir(struct db *db, bool make)
{
	if (make && mkdirat(db->dirfd, DB_CALC_DIR, FSIO_DIR_MODE) && errno != EEXIST)
		return -1;
	return openat(db->dirfd, DB_CALC_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int db_calc_write_begin(struct db *db, const char *hex, const char *model,
			struct db_calc_writer *w)
{
	uint8_t room[BLOB_HEADER_SIZE] = { 0 };
	int dfd, r;

	memset(w, 0, sizeof(*w));
	w->f.fd = -1;
	w->failed = true;
	if (calc_name(w->name, sizeof(w->name), hex, model)) {
		errno = EINVAL;
		return -1;
	}
	if ((dfd = calc_dir(db, true)) < 0)
		return -1;
	if (fsio_cache_open(&w->f, dfd, w->name)) {
		int err = errno;

		close(dfd);
		errno = err;
		return -1;
	}
	/* the header's room: written at the end, once the checksum is known */
	if ((r = fsio_cache_write(&w->f, room, sizeof(room)))) {
		int err = errno;

		fsio_cache_abort(&w->f);
		close(dfd);
		errno = err;
		return -1;
	}
	w->failed = false;
	return 0;
}

int db_calc_write(struct db_calc_writer *w, const void *data, size_t len)
{
	if (w->failed)
		return -1;
	if (fsio_cache_write(&w->f, data, len)) {
		w->failed = true;
		return -1;
	}
	w->crc = crc32c(w->crc, data, len);
	w->size += len;
	return 0;
}

int db_calc_write_end(struct db_calc_writer *w, uint32_t count, bool keep)
{
	uint8_t h[BLOB_HEADER_SIZE];
	int dfd = w->f.dirfd, r = -1, err;

	if (w->f.fd < 0)
		return -1;
	if (keep && !w->failed) {
		blob_encode_header(DB_CALC_MAGIC, DB_CALC_VERSION, 0, count, w->size, w->crc, h);
		if (!fsio_cache_pwrite(&w->f, h, sizeof(h), 0))
			r = fsio_cache_commit(&w->f, w->name);
	}
	err = errno;
	if (r)
		fsio_cache_abort(&w->f);
	close(dfd);
	errno = err;
	return r;
}

int db_calc_read_begin(struct db *db, const char *hex, const char *model,
		       struct db_calc_reader *r, const char **why)
{
	uint8_t head[BLOB_HEADER_SIZE], *buf;
	uint32_t want, crc = 0;
	struct stat st;
	char name[128];
	const char *bad = NULL;
	ssize_t n;
	int dfd;

	r->fd = -1;
	*why = NULL;
	if (calc_name(name, sizeof(name), hex, model))
		return 1;
	if ((dfd = calc_dir(db, false)) < 0)
		return errno == ENOENT ? 1 : (*why = strerror(errno), -1);
	r->fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close(dfd);
	if (r->fd < 0)
		return errno == ENOENT ? 1 : (*why = strerror(errno), -1);
	if (fstat(r->fd, &st) || !S_ISREG(st.st_mode))
		bad = "not a regular file";
	else if ((uint64_t)st.st_size > BLOB_MAX_SIZE)
		bad = "too large";
	else if ((n = pread(r->fd, head, sizeof(head), 0)) < 0)
		bad = strerror(errno);
	else if (blob_decode_header(head, (uint64_t)st.st_size, DB_CALC_MAGIC, DB_CALC_VERSION,
				    &r->h, &want, &bad) == 0) {
		/* the payload's checksum, read through before any of it is believed */
		buf = xmalloc(1u << 20);
		for (uint64_t at = 0; at < r->h.payload_size && !bad; at += (uint64_t)n) {
			if ((n = db_calc_read(r, buf, 1u << 20, at, &bad)) == 0)
				bad = "truncated";
			else if (n > 0)
				crc = crc32c(crc, buf, (size_t)n);
		}
		free(buf);
		if (!bad && crc != want)
			bad = "bad payload checksum";
	}
	if (bad) {
		*why = bad;
		db_calc_read_end(r);
		return -1;
	}
	return 0;
}

ssize_t db_calc_read(struct db_calc_reader *r, void *buf, size_t len, uint64_t at,
		     const char **why)
{
	ssize_t n;

	if (at >= r->h.payload_size)
		return 0;
	if (len > r->h.payload_size - at)
		len = (size_t)(r->h.payload_size - at);
	do
		n = pread(r->fd, buf, len, (off_t)(at + BLOB_HEADER_SIZE));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		*why = strerror(errno);
	return n;
}

void db_calc_read_end(struct db_calc_reader *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}

/* ---- memos (calc/DIGEST.MODEL) ------------------------------------------------ */

int db_calc_memo_epoch(int dirfd, const char *name, uint32_t *seq)
{
	/* the header, then the format's and the epoch's varints */
	uint8_t head[BLOB_HEADER_SIZE + 2 * 10];
	struct blob_header h;
	struct stat st;
	const char *why;
	uint64_t format, epoch;
	uint32_t crc;
	ssize_t n;
	int r = -1, fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) &&
	    (n = pread(fd, head, sizeof(head), 0)) >= BLOB_HEADER_SIZE &&
	    !blob_decode_header(head, (uint64_t)st.st_size, DB_CALC_MAGIC, DB_CALC_VERSION, &h,
				&crc, &why)) {
		size_t len = (size_t)n - BLOB_HEADER_SIZE;
		struct cursor c = CURSOR_INIT(head + BLOB_HEADER_SIZE,
					      len < h.payload_size ? len : (size_t)h.payload_size);

		r = 0;
		if (!cursor_varint(&c, &format) && format == DB_CALC_MEMO_FORMAT) {
			r = -1;
			if (!cursor_varint(&c, &epoch) && epoch <= UINT32_MAX) {
				*seq = (uint32_t)epoch;
				r = 1;
			}
		}
	}
	close(fd);
	return r;
}

size_t db_calc_memo_replace(struct db *db, const char *hex, const char *model, uint32_t seq)
{
	struct dirent *de;
	size_t removed = 0, hex_len;
	char keep[128];
	DIR *d;
	int fd;

	if (calc_name(keep, sizeof(keep), hex, model) || (fd = calc_dir(db, false)) < 0)
		return 0;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d))) {
		uint32_t of;

		/* a memo's name: 64 digits, the same model */
		if (!db_calc_name_valid(de->d_name, &hex_len) || hex_len != 64 ||
		    strcmp(de->d_name + hex_len + 1, model) || !strcmp(de->d_name, keep) ||
		    db_calc_memo_epoch(fd, de->d_name, &of) != 1 || of != seq)
			continue;
		removed += !unlinkat(fd, de->d_name, 0);
	}
	closedir(d);
	return removed;
}
