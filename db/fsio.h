/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/fsio.h - the file-system primitives of the database: bounded reads,
 * atomic durable replacement (temp + fsync + rename + fsync dir), temp-file
 * cleanup.  Everything is relative to a directory fd and never follows a
 * symlink in the last path component.
 *
 * `what` arguments are the display path used in error messages, e.g.
 * "prof.db/000001/abc.cycles.prof".  Functions report their errors with
 * errorf() and return -1, except where noted.
 */
#ifndef DCPI_DB_FSIO_H
#define DCPI_DB_FSIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <sys/types.h>

struct strbuf;

#define FSIO_TMP_PREFIX ".tmp."
#define FSIO_FILE_MODE 0640
#define FSIO_DIR_MODE 0750
/* Files holding processes' register values: their owner's only (db_set_values_mode). */
#define FSIO_VALUES_MODE 0600

/*
 * Reads the regular file `name` (no symlinks) into out, at most max bytes
 * (a larger file is an error).  Returns 0; 1 if it does not exist (no
 * message); -1 on error (reported).
 */
int fsio_read_at(int dirfd, const char *name, const char *what, size_t max, struct strbuf *out);
/* The same without a message: on -1, *why says what failed (allocated). */
int fsio_read_at_why(int dirfd, const char *name, size_t max, struct strbuf *out, char **why);

/*
 * The directory name under dirfd ("." for dirfd's own, read from its start)
 * opened for readdir, never through a symbolic link; *fd is its descriptor
 * (for the *at calls), closed by closedir().  NULL with errno, nothing
 * reported, nothing left open.
 */
DIR *fsio_opendir_at(int dirfd, const char *name, int *fd);

/* Why fsio_read_quiet failed. */
enum fsio_read_error {
	FSIO_READ_SYMLINK,      /* readers refuse symbolic links */
	FSIO_READ_OPEN,         /* open failed: errno */
	FSIO_READ_STAT,         /* fstat failed: errno */
	FSIO_READ_NOT_REGULAR,
	FSIO_READ_TOO_LARGE,    /* larger than max: *size */
	FSIO_READ_GREW,         /* grew past max while being read */
	FSIO_READ_READ,         /* read failed: errno */
};

/*
 * fsio_read_at without a message, for callers that report in their own
 * words (the checker): returns 0; 1 if the file does not exist; -1 with
 * *err (and errno, *size: the file's size, as it says).  out holds the file
 * only on success.
 */
int fsio_read_quiet(int dirfd, const char *name, size_t max, struct strbuf *out,
		    enum fsio_read_error *err, uint64_t *size);

/*
 * Replaces `name` atomically with data: writes a new temp file in the same
 * directory (O_CREAT|O_EXCL|O_NOFOLLOW, 0640), fsyncs it (unless !sync),
 * renames it over name and fsyncs the directory.  On failure the temp file
 * is removed and name is untouched.
 */
int fsio_write_atomic(int dirfd, const char *name, const char *what, const void *data,
		      size_t len, bool sync);
/* The same, the new file made with mode (before the umask) instead of FSIO_FILE_MODE. */
int fsio_write_atomic_mode(int dirfd, const char *name, const char *what, const void *data,
			   size_t len, bool sync, unsigned mode);

/*
 * The same with the first len bytes of the open file src (copy_file_range:
 * the bytes stay in the kernel, or pread and write).  A src shorter than len
 * fails with EIO.
 */
int fsio_copy_atomic(int dirfd, const char *name, const char *what, int src, uint64_t len,
		     bool sync);

/*
 * Replaces `name` atomically with data, for a cache: as fsio_write_atomic()
 * but without fsync (after a crash the file is the old one, the new one, or
 * one whose checksum fails) and without a message: -1 with errno set.
 */
int fsio_write_cache(int dirfd, const char *name, const void *data, size_t len);

/*
 * A cache file written piece by piece, for what is too big to hold whole
 * (the figures of a million procedures): as fsio_write_cache(), the pieces
 * appended to a temp file that fsio_cache_commit() renames over name (or
 * fsio_cache_abort() removes).  -1 with errno set, no message; a failed
 * write or pwrite leaves the file to abort.
 */
struct fsio_cache_file {
	int dirfd, fd;
	char tmp[128];
};

int fsio_cache_open(struct fsio_cache_file *f, int dirfd, const char *name);
int fsio_cache_write(struct fsio_cache_file *f, const void *data, size_t len);
/* Writes at an offset (a header whose checksum is known at the end). */
int fsio_cache_pwrite(struct fsio_cache_file *f, const void *data, size_t len, uint64_t at);
int fsio_cache_commit(struct fsio_cache_file *f, const char *name);
void fsio_cache_abort(struct fsio_cache_file *f);

int fsio_fsync_dir(int dirfd, const char *what);

/* Removes entries named .tmp.* (files, and directories with their files). */
int fsio_remove_temps(int dirfd, const char *what);

/*
 * Removes `name` so that a reader sees it whole or not at all: renames it
 * to a temp name (.tmp.<base>.<random>) in the same directory and writes
 * that name into tmp (size >= 80).  The caller fsyncs the directory (once
 * for a batch) and then deletes the temp with fsio_remove_tree(); a crash
 * in between leaves a temp that the next writer removes.
 */
int fsio_rename_to_temp(int dirfd, const char *name, const char *base, char *tmp, size_t size,
			const char *what);

/*
 * Removes the file or directory `name` under dirfd; a directory's files
 * (one level: epochs hold no subdirectories) go first.  0, or -1 with errno.
 */
int fsio_remove_tree(int dirfd, const char *name);

/*
 * Creates a new temp directory .tmp.<random> under dirfd (0750); writes its
 * name into name (size >= 32).
 */
int fsio_mkdtemp_at(int dirfd, char *name, size_t size, const char *what);

/*
 * Fault injection for tests: make the n-th following write (FSIO_FAULT_WRITE)
 * or fsync (FSIO_FAULT_FSYNC) in fsio_write_atomic fail with EIO, or make the
 * n-th write short and then fail (FSIO_FAULT_SHORT).  n == 0 disables.
 */
enum fsio_fault { FSIO_FAULT_WRITE, FSIO_FAULT_FSYNC, FSIO_FAULT_SHORT };
void fsio_inject_fault(enum fsio_fault kind, unsigned n);

#endif
