/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "db/fsio.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/testpoint.h"
#include "core/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static int remove_tree_at(int dirfd, const char *name);

static enum fsio_fault fault_kind;
static unsigned fault_countdown;

void fsio_inject_fault(enum fsio_fault kind, unsigned n)
{
	fault_kind = kind;
	fault_countdown = n;
}

static bool fault_hits(enum fsio_fault kind)
{
	if (!fault_countdown || fault_kind != kind)
		return false;
	if (--fault_countdown)
		return false;
	errno = EIO;
	return true;
}

int fsio_read_quiet(int dirfd, const char *name, size_t max, struct strbuf *out,
		    enum fsio_read_error *err, uint64_t *size)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK), saved, r = -1;
	struct stat st;

	strbuf_reset(out);
	if (fd < 0 && errno == ENOENT)
		return 1;
	if (fd < 0)
		*err = errno == ELOOP ? FSIO_READ_SYMLINK : FSIO_READ_OPEN;
	else if (fstat(fd, &st))
		*err = FSIO_READ_STAT;
	else if (!S_ISREG(st.st_mode))
		*err = FSIO_READ_NOT_REGULAR;
	else if ((*size = (uint64_t)st.st_size) > max)
		*err = FSIO_READ_TOO_LARGE;
	else if (strbuf_grow(out, (size_t)st.st_size + 1), strbuf_read_fd(out, fd, max))
		*err = errno == EFBIG ? FSIO_READ_GREW : FSIO_READ_READ;
	else
		r = 0;
	saved = errno;
	if (fd >= 0)
		close(fd);
	if (r)
		strbuf_reset(out);
	errno = saved;
	return r;
}

int fsio_read_at_why(int dirfd, const char *name, size_t max, struct strbuf *out, char **why)
{
	enum fsio_read_error err;
	uint64_t size = 0;
	int r = fsio_read_quiet(dirfd, name, max, out, &err, &size);

	*why = NULL;
	if (r >= 0)
		return r;
	switch (err) {
	case FSIO_READ_SYMLINK:
		*why = xstrdup("is a symbolic link; refusing to read it");
		break;
	case FSIO_READ_OPEN:
		*why = xasprintf("cannot open: %s", strerror(errno));
		break;
	case FSIO_READ_STAT:
		*why = xasprintf("cannot stat: %s", strerror(errno));
		break;
	case FSIO_READ_NOT_REGULAR:
		*why = xstrdup("not a regular file");
		break;
	case FSIO_READ_TOO_LARGE:
		*why = xasprintf("file too large (%llu bytes)", (unsigned long long)size);
		break;
	case FSIO_READ_GREW:
		*why = xstrdup("file too large");
		break;
	case FSIO_READ_READ:
		*why = xasprintf("cannot read: %s", strerror(errno));
		break;
	}
	return r;
}

int fsio_read_at(int dirfd, const char *name, const char *what, size_t max, struct strbuf *out)
{
	char *why;
	int r = fsio_read_at_why(dirfd, name, max, out, &why);

	if (r < 0) {
		errorf("%s: %s", what, why);
		free(why);
	}
	return r;
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		size_t chunk = len > (1u << 20) ? (1u << 20) : len;
		ssize_t n;

		if (fault_hits(FSIO_FAULT_SHORT)) {
			if (write(fd, p, chunk / 2) < 0)
				return -1;
			errno = ENOSPC;
			return -1;
		}
		if (fault_hits(FSIO_FAULT_WRITE))
			return -1;
		n = write(fd, p, chunk);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Fills name with ".tmp.<base>.<16 hex>". */
static void tmp_name(char *name, size_t size, const char *base)
{
	uint64_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = (uint64_t)getpid() << 32 ^ (uint64_t)random();
	snprintf(name, size, "%s%.40s.%016llx", FSIO_TMP_PREFIX, base, (unsigned long long)r);
}

/* Creates a new temporary file for name in dirfd, its name in tmp; -1 with errno. */
static int open_tmp(int dirfd, const char *name, char *tmp, size_t size, unsigned mode)
{
	int fd, tries = 0;

	do {
		tmp_name(tmp, size, name);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    (mode_t)mode);
	} while (fd < 0 && errno == EEXIST && ++tries < 10);
	return fd;
}

/* Copies len bytes of src from its start to fd; -1 with errno (EIO: src shrank). */
static int copy_all(int fd, int src, uint64_t len)
{
	loff_t off = 0;
	bool plain = false;     /* copy_file_range cannot: read and write */
	char *buf = NULL;
	int ret = 0;

	if (fault_hits(FSIO_FAULT_WRITE))
		return -1;
	while ((uint64_t)off < len) {
		size_t chunk = len - (uint64_t)off > (4u << 20) ? (4u << 20) : (size_t)(len - (uint64_t)off);
		ssize_t n;

		if (!plain) {
			n = copy_file_range(src, &off, fd, NULL, chunk, 0);
			if (n < 0 && !off && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
					      errno == EOPNOTSUPP || errno == EBADF)) {
				plain = true;
				buf = xmalloc(64 << 10);
				continue;
			}
		} else {
			n = pread(src, buf, chunk > (64u << 10) ? (64u << 10) : chunk, off);
			if (n > 0 && write_all(fd, buf, (size_t)n))
				n = -1;
			else if (n > 0)
				off += n;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!n)
				errno = EIO;
			ret = -1;
			break;
		}
	}
	free(buf);
	return ret;
}

static int write_atomic(int dirfd, const char *name, const char *what, const void *data,
			int src, uint64_t len, bool sync, unsigned mode)
{
	char tmp[128];
	int fd;

	fd = open_tmp(dirfd, name, tmp, sizeof(tmp), mode);
	if (fd < 0)
		return errorf_errno("cannot create a temporary file for '%s'", what);
	if (src >= 0 ? copy_all(fd, src, len) : write_all(fd, data, (size_t)len)) {
		errorf_errno("cannot write '%s'", what);
		goto fail;
	}
	if (sync && (fault_hits(FSIO_FAULT_FSYNC) || fsync(fd))) {
		errorf_errno("cannot fsync '%s'", what);
		goto fail;
	}
	if (close(fd)) {
		fd = -1;
		errorf_errno("cannot write '%s'", what);
		goto fail;
	}
	fd = -1;
	TEST_POINT("write-before-rename");
	if (renameat(dirfd, tmp, dirfd, name)) {
		errorf_errno("cannot rename a temporary file to '%s'", what);
		goto fail;
	}
	TEST_POINT("write-after-rename");
	if (sync && fsio_fsync_dir(dirfd, what))
		return -1;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlinkat(dirfd, tmp, 0);
	return -1;
}

int fsio_write_atomic(int dirfd, const char *name, const char *what, const void *data,
		      size_t len, bool sync)
{
	return write_atomic(dirfd, name, what, data, -1, len, sync, FSIO_FILE_MODE);
}

int fsio_write_atomic_mode(int dirfd, const char *name, const char *what, const void *data,
			   size_t len, bool sync, unsigned mode)
{
	return write_atomic(dirfd, name, what, data, -1, len, sync, mode);
}

int fsio_copy_atomic(int dirfd, const char *name, const char *what, int src, uint64_t len,
		     bool sync)
{
	return write_atomic(dirfd, name, what, NULL, src, len, sync, FSIO_FILE_MODE);
}

int fsio_write_cache(int dirfd, const char *name, const void *data, size_t len)
{
	char tmp[128];
	int fd, err;

	fd = open_tmp(dirfd, name, tmp, sizeof(tmp), FSIO_FILE_MODE);
	if (fd < 0)
		return -1;
	if (write_all(fd, data, len)) {
		err = errno;
		close(fd);
		goto fail;
	}
	if (close(fd) || renameat(dirfd, tmp, dirfd, name)) {
		err = errno;
		goto fail;
	}
	return 0;
fail:
	unlinkat(dirfd, tmp, 0);
	errno = err;
	return -1;
}

int fsio_cache_open(struct fsio_cache_file *f, int dirfd, const char *name)
{
	f->dirfd = dirfd;
	f->fd = open_tmp(dirfd, name, f->tmp, sizeof(f->tmp), FSIO_FILE_MODE);
	return f->fd < 0 ? -1 : 0;
}

int fsio_cache_write(struct fsio_cache_file *f, const void *data, size_t len)
{
	return write_all(f->fd, data, len);
}

int fsio_cache_pwrite(struct fsio_cache_file *f, const void *data, size_t len, uint64_t at)
{
	const char *p = data;

	while (len) {
		ssize_t n = pwrite(f->fd, p, len, (off_t)at);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -1 : (errno = EIO, -1);
		p += n;
		len -= (size_t)n;
		at += (uint64_t)n;
	}
	return 0;
}

int fsio_cache_commit(struct fsio_cache_file *f, const char *name)
{
	int err, r = close(f->fd);

	f->fd = -1;
	if (!r && !renameat(f->dirfd, f->tmp, f->dirfd, name))
		return 0;
	err = errno;
	unlinkat(f->dirfd, f->tmp, 0);
	errno = err;
	return -1;
}

void fsio_cache_abort(struct fsio_cache_file *f)
{
	int err = errno;

	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	unlinkat(f->dirfd, f->tmp, 0);
	errno = err;
}

int fsio_fsync_dir(int dirfd, const char *what)
{
	if (fsync(dirfd) && errno != EINVAL)
		return errorf_errno("cannot fsync the directory of '%s'", what);
	return 0;
}

int fsio_rename_to_temp(int dirfd, const char *name, const char *base, char *tmp, size_t size,
			const char *what)
{
	for (int tries = 0; tries < 10; tries++) {
		tmp_name(tmp, size, base);
		/* RENAME_NOREPLACE: never clobber a temp that exists by chance. */
		if (!renameat2(dirfd, name, dirfd, tmp, RENAME_NOREPLACE))
			return 0;
		if (errno != EEXIST)
			break;
	}
	return errorf_errno("cannot move '%s' aside for removal", what);
}

int fsio_remove_tree(int dirfd, const char *name)
{
	if (!unlinkat(dirfd, name, 0) || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -1;
	return remove_tree_at(dirfd, name);
}

DIR *fsio_opendir_at(int dirfd, const char *name, int *fd)
{
	DIR *d;
	int err;

	*fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	if (!(d = fdopendir(*fd))) {
		err = errno;
		close(*fd);
		errno = err;
	}
	return d;
}

static int remove_tree_at(int dirfd, const char *name)
{
	struct dirent *de;
	int fd, ret = 0;
	DIR *d = fsio_opendir_at(dirfd, name, &fd);

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(fd, de->d_name, 0) && errno != ENOENT)
			ret = -1;
	}
	closedir(d);
	if (unlinkat(dirfd, name, AT_REMOVEDIR))
		ret = -1;
	return ret;
}

int fsio_remove_temps(int dirfd, const char *what)
{
	struct dirent *de;
	int fd, ret = 0;
	DIR *d = fsio_opendir_at(dirfd, ".", &fd);

	if (!d)
		return errorf_errno("cannot read directory '%s'", what);
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, FSIO_TMP_PREFIX, strlen(FSIO_TMP_PREFIX)))
			continue;
		if (!unlinkat(dirfd, de->d_name, 0) || errno == ENOENT)
			continue;
		if ((errno == EISDIR || errno == EPERM) && !remove_tree_at(dirfd, de->d_name))
			continue;
		ret = errorf_errno("cannot remove stale temporary file '%s/%s'", what, de->d_name);
	}
	closedir(d);
	return ret;
}

int fsio_mkdtemp_at(int dirfd, char *name, size_t size, const char *what)
{
	for (int tries = 0; tries < 10; tries++) {
		tmp_name(name, size, "epoch");
		if (!mkdirat(dirfd, name, FSIO_DIR_MODE))
			return 0;
		if (errno != EEXIST)
			break;
	}
	return errorf_errno("cannot create a temporary directory in '%s'", what);
}
