/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "db/binaries.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "db/blob.h"
#include "db/db-int.h"
#include "db/db.h"
#include "db/fsio.h"

#include <errno.h>
#include <fcntl.h>
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

	if (!db_binary_name_valid(hex) || (fd = open_binaries(db, false)) < 0)
		return false;
	r = !fstatat(fd, hex, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode);
	close(fd);
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
