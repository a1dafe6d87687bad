/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "db/db.h"
#include "db/db-int.h"
#include "db/fsio.h"
#include "db/textrec.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/testpoint.h"
#include "core/timeutil.h"
#include "core/xalloc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define FORMAT_NAME "FORMAT"
#define FORMAT_TEXT "dcpi-db 1\n"
#define LOCK_NAME "lock"
#define CURRENT_NAME "current"
#define PROFILE_MAX_SIZE ((size_t)1 << 30)

const char *db_default_path(const char *opt)
{
	const char *env = getenv("DCPI_DB");

	if (opt && *opt)
		return opt;
	if (env && *env)
		return env;
	return "dcpi.db";
}

/* ---- open / close ----------------------------------------------------- */

/*
 * True if the directory holds nothing but what an interrupted creation may
 * have left there (temp files and the lock file).
 */
static bool dir_is_empty(int dirfd)
{
	int fd;
	DIR *d = fsio_opendir_at(dirfd, ".", &fd);
	struct dirent *de;
	bool empty = true;

	if (!d)
		return false;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    strcmp(de->d_name, LOCK_NAME) &&
		    strncmp(de->d_name, FSIO_TMP_PREFIX, strlen(FSIO_TMP_PREFIX)))
			empty = false;
	closedir(d);
	return empty;
}

/*
 * Creates a new database at path atomically: the directory is built in a
 * temporary sibling (FORMAT written and synced) and renamed into place, so
 * a crash never leaves a half-made database behind.  Losing a race with
 * another creator is fine (the caller then opens what it made).
 */
static int create_new(const char *path, bool sync)
{
	char *copy = xstrdup(path), *slash, tmp[PATH_MAX] = "";
	const char *parent = ".", *base = copy;
	int pfd, tfd = -1, r = -1;

	for (size_t n = strlen(copy); n > 1 && copy[n - 1] == '/'; n--)
		copy[n - 1] = '\0';
	if ((slash = strrchr(copy, '/'))) {
		*slash = '\0';
		parent = slash == copy ? "/" : copy;
		base = slash + 1;
	}
	pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0) {
		errorf_errno("cannot create database directory '%s'", path);
		goto out;
	}
	snprintf(tmp, sizeof(tmp), "%s%.200s.new.%ld.%lld", FSIO_TMP_PREFIX, base, (long)getpid(),
		 (long long)time_monotonic_ns());
	if (mkdirat(pfd, tmp, FSIO_DIR_MODE) ||
	    (tfd = openat(pfd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		errorf_errno("cannot create database directory '%s'", path);
		goto out;
	}
	if (fsio_write_atomic(tfd, FORMAT_NAME, path, FORMAT_TEXT, strlen(FORMAT_TEXT), sync))
		goto out;
	TEST_POINT("create-before-rename");
	if (renameat(pfd, tmp, pfd, base)) {
		if (errno != EEXIST && errno != ENOTEMPTY && errno != EISDIR) {
			errorf_errno("cannot create database directory '%s'", path);
			goto out;
		}
	} else {
		tmp[0] = '\0';
		if (sync && fsio_fsync_dir(pfd, path))
			goto out;
	}
	r = 0;
out:
	if (tmp[0] && pfd >= 0 && tfd >= 0) {
		unlinkat(tfd, FORMAT_NAME, 0);
		unlinkat(pfd, tmp, AT_REMOVEDIR);
	}
	if (tfd >= 0)
		close(tfd);
	if (pfd >= 0)
		close(pfd);
	free(copy);
	return r;
}

static int check_format(struct db *db, bool create)
{
	struct strbuf sb = STRBUF_INIT;
	char what[4096];
	int r;

	snprintf(what, sizeof(what), "%s/%s", db->path, FORMAT_NAME);
	r = fsio_read_at(db->dirfd, FORMAT_NAME, what, 4096, &sb);
	if (r == 1 && create && dir_is_empty(db->dirfd)) {
		r = fsio_write_atomic(db->dirfd, FORMAT_NAME, what, FORMAT_TEXT,
				      strlen(FORMAT_TEXT), !(db->flags & DB_NOSYNC));
		strbuf_release(&sb);
		return r;
	}
	if (r == 1) {
		strbuf_release(&sb);
		return errorf("'%s' is not a dcpi database (it has no %s file)", db->path,
			      FORMAT_NAME);
	}
	if (r < 0) {
		strbuf_release(&sb);
		return -1;
	}
	if (strncmp(sb.buf, "dcpi-db ", 8)) {
		strbuf_release(&sb);
		return errorf("'%s' is not a dcpi database (bad %s file)", db->path, FORMAT_NAME);
	}
	if (strcmp(sb.buf, FORMAT_TEXT)) {
		strbuf_release(&sb);
		return errorf("database '%s' has an unsupported format version; this dcpi "
			      "reads version 1", db->path);
	}
	strbuf_release(&sb);
	return 0;
}

static int take_lock(struct db *db)
{
	char buf[32];
	int op = LOCK_EX | (db->flags & DB_WAIT ? 0 : LOCK_NB);

	db->lockfd = openat(db->dirfd, LOCK_NAME, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
			    FSIO_FILE_MODE);
	if (db->lockfd < 0)
		return errorf_errno("cannot open the lock file of database '%s'", db->path);
	while (flock(db->lockfd, op)) {
		if (errno == EINTR)
			continue;
		if (errno == EWOULDBLOCK) {
			ssize_t n = pread(db->lockfd, buf, sizeof(buf) - 1, 0);
			long pid = n > 0 ? (buf[n] = '\0', strtol(buf, NULL, 10)) : 0;

			if (pid > 0)
				return errorf("database '%s' is in use by another writer (pid %ld)",
					      db->path, pid);
			return errorf("database '%s' is in use by another writer", db->path);
		}
		return errorf_errno("cannot lock database '%s'", db->path);
	}
	/* Best effort: the pid of the lock holder, for the message above. */
	snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(db->lockfd, 0) == 0 && pwrite(db->lockfd, buf, strlen(buf), 0) < 0)
		warning_errno("cannot write the lock file of '%s'", db->path);
	return 0;
}

static int clean_temps(struct db *db)
{
	uint32_t *seqs;
	size_t n;
	int fd, ret = fsio_remove_temps(db->dirfd, db->path);

	if (db_epoch_seqs(db, &seqs, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		char name[16];

		snprintf(name, sizeof(name), "%06" PRIu32, seqs[i]);
		fd = openat(db->dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fsio_remove_temps(fd, name))
			ret = -1;
		close(fd);
	}
	free(seqs);
	for (int i = 0; i < 3; i++) {
		const char *dir = i == 2 ? DB_CALC_DIR : i ? DB_UNWIND_DIR : DB_BINARIES_DIR;

		fd = openat(db->dirfd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			if (fsio_remove_temps(fd, dir))
				ret = -1;
			close(fd);
		}
	}
	return ret;
}

struct db *db_open(const char *path, unsigned flags)
{
	struct db *db = XNEW(struct db);

	if (flags & DB_CREATE)
		flags |= DB_WRITE;
	db->path = xstrdup(path);
	db->flags = flags;
	db->lockfd = -1;
	if ((flags & DB_CREATE) && access(path, F_OK) && errno == ENOENT &&
	    create_new(path, !(flags & DB_NOSYNC)))
		goto fail_nofd;
	db->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (db->dirfd < 0) {
		if (errno == ENOENT)
			errorf("no profile database at '%s' (record one with dcpirun or dcpid, "
			       "or name one with -d or $DCPI_DB)", path);
		else
			errorf_errno("cannot open database '%s'", path);
		goto fail_nofd;
	}
	if (check_format(db, flags & DB_CREATE))
		goto fail;
	if (flags & DB_WRITE) {
		if (take_lock(db))
			goto fail;
		if (clean_temps(db))
			goto fail;
	}
	return db;
fail:
	db_close(db);
	return NULL;
fail_nofd:
	free(db->path);
	free(db);
	return NULL;
}

void db_close(struct db *db)
{
	if (!db)
		return;
	if (db->lockfd >= 0)
		close(db->lockfd);
	db_dirs_release(db);
	if (db->dirfd >= 0)
		close(db->dirfd);
	db_damage_release(db);
	free(db->path);
	free(db);
}

void db_set_values_mode(struct db *db, unsigned mode)
{
	db->values_mode = mode;
}

bool db_sync_enabled(const struct db *db)
{
	return !(db->flags & DB_NOSYNC);
}

void db_need_writer(struct db *db)
{
	if (!(db->flags & DB_WRITE))
		BUG("write to database '%s' opened read-only", db->path);
}

/* ---- epochs ----------------------------------------------------------- */

static void epoch_dirname(uint32_t seq, char *buf, size_t size)
{
	snprintf(buf, size, "%06" PRIu32, seq);
}

char *db_epoch_file_path(struct db *db, uint32_t seq, const char *name)
{
	return xasprintf("%s/%06" PRIu32 "/%s", db->path, seq, name);
}

bool db_epoch_dirname_parse(const char *name, uint32_t *seq)
{
	char buf[16];
	unsigned long long v;

	if (!*name || strlen(name) > 10 || strspn(name, "0123456789") != strlen(name))
		return false;
	v = strtoull(name, NULL, 10);
	if (!v || v > UINT32_MAX)
		return false;
	epoch_dirname((uint32_t)v, buf, sizeof(buf));
	if (strcmp(buf, name))
		return false;
	*seq = (uint32_t)v;
	return true;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int db_epoch_seqs(struct db *db, uint32_t **seqs, size_t *n)
{
	int fd;
	DIR *d = fsio_opendir_at(db->dirfd, ".", &fd);
	struct dirent *de;
	size_t alloc = 0;

	*seqs = NULL;
	*n = 0;
	if (!d)
		return errorf_errno("cannot read database '%s'", db->path);
	while ((de = readdir(d))) {
		uint32_t seq;

		if (!db_epoch_dirname_parse(de->d_name, &seq))
			continue;
		ALLOC_GROW(*seqs, *n + 1, alloc);
		(*seqs)[(*n)++] = seq;
	}
	closedir(d);
	if (*n)
		qsort(*seqs, *n, sizeof(**seqs), cmp_u32);
	return 0;
}

int db_open_epoch(struct db *db, uint32_t seq)
{
	char name[16];
	int fd;

	epoch_dirname(seq, name, sizeof(name));
	fd = openat(db->dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return errorf("database '%s' has no epoch %" PRIu32, db->path, seq);
		return errorf_errno("cannot open epoch '%s/%s'", db->path, name);
	}
	return fd;
}

int db_epoch_read(struct db *db, uint32_t seq, const char *name, size_t max, struct strbuf *out)
{
	char *why;
	int fd, r;

	strbuf_reset(out);
	if ((fd = db_epoch_dir(db, seq)) < 0)
		return -1;
	r = fsio_read_at_why(fd, name, max, out, &why);
	db_dir_put(db, fd);
	if (r < 0) {
		db_damage(db, DB_DAMAGED, seq, name, "%s", why);
		free(why);
	}
	return r;
}

/*
 * Reads epoch seq's text file name and parses it into out: 0; if it does
 * not exist, 1 or (required) -1 (recorded as missing); -1 (reported and
 * recorded as damaged, db/damage.h: "PATH: WHY") if it does not parse.
 */
static int load_text(struct db *db, uint32_t seq, const char *name, bool required,
		     int (*parse)(const char *buf, size_t len, void *out, const char **why),
		     void *out)
{
	struct strbuf sb = STRBUF_INIT;
	const char *why;
	int r = db_epoch_read(db, seq, name, TEXTREC_MAX_SIZE, &sb);

	if (r == 1 && required)
		r = db_damage(db, DB_MISSING, seq, name, "missing");
	else if (!r && parse(sb.buf, sb.len, out, &why))
		r = db_damage(db, DB_DAMAGED, seq, name, "%s", why);
	strbuf_release(&sb);
	return r;
}

static int parse_meta(const char *buf, size_t len, void *meta, const char **why)
{
	return epoch_meta_parse(buf, len, meta, why);
}

int db_meta_load(struct db *db, uint32_t seq, struct epoch_meta *meta)
{
	int r;

	epoch_meta_init(meta);
	r = load_text(db, seq, META_NAME, true, parse_meta, meta);
	if (!r && meta->seq != seq) {
		r = db_damage(db, DB_DAMAGED, seq, META_NAME,
			      "belongs to epoch %" PRIu32 ", not %" PRIu32, meta->seq, seq);
		epoch_meta_release(meta);
	}
	return r;
}

static int store_meta_at(struct db *db, int fd, const struct epoch_meta *meta)
{
	struct strbuf sb = STRBUF_INIT;
	char *what = db_epoch_file_path(db, meta->seq, META_NAME);
	int r;

	epoch_meta_format(meta, &sb);
	r = fsio_write_atomic(fd, META_NAME, what, sb.buf, sb.len, db_sync_enabled(db));
	strbuf_release(&sb);
	free(what);
	return r;
}

int db_meta_store(struct db *db, const struct epoch_meta *meta)
{
	int fd, r;

	db_need_writer(db);
	if ((fd = db_open_epoch(db, meta->seq)) < 0)
		return -1;
	r = store_meta_at(db, fd, meta);
	close(fd);
	return r;
}

int db_epochs_list(struct db *db, struct db_epoch_list *out)
{
	uint32_t *seqs;
	size_t n;

	memset(out, 0, sizeof(*out));
	if (db_epoch_seqs(db, &seqs, &n))
		return -1;
	out->v = xcalloc(n ? n : 1, sizeof(*out->v));
	out->alloc = n;
	for (size_t i = 0; i < n; i++) {
		struct db_epoch *e = &out->v[out->n++];

		e->seq = seqs[i];
		e->meta_ok = !db_meta_load(db, seqs[i], &e->meta);
	}
	free(seqs);
	return 0;
}

void db_epoch_list_release(struct db_epoch_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		epoch_meta_release(&l->v[i].meta);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int db_epoch_resolve(struct db *db, const char *name, uint32_t *seq)
{
	uint32_t *seqs;
	size_t n;
	int r = -1;

	if (db_epoch_seqs(db, &seqs, &n))
		return -1;
	if (!n) {
		errorf("database '%s' has no epochs", db->path);
		goto out;
	}
	if (!name || !*name || !strcmp(name, "latest")) {
		*seq = seqs[n - 1];
		r = 0;
	} else if (!strncmp(name, "latest~", 7)) {
		char *end;
		unsigned long back;

		errno = 0;
		back = strtoul(name + 7, &end, 10);
		if (!isdigit((unsigned char)name[7]) || *end || errno)
			errorf("bad epoch name '%s' (expected latest~N)", name);
		else if (back >= n)
			errorf("no epoch '%s': database '%s' has only %zu epochs", name, db->path, n);
		else
			*seq = seqs[n - 1 - back], r = 0;
	} else if (strspn(name, "0123456789") == strlen(name)) {
		unsigned long long v = strtoull(name, NULL, 10);

		for (size_t i = 0; i < n; i++)
			if (seqs[i] == v)
				*seq = seqs[i], r = 0;
		if (r)
			errorf("no epoch %s in database '%s'", name, db->path);
	} else {
		for (size_t i = n; i-- > 0 && r;) {
			struct epoch_meta m;

			if (db_meta_load(db, seqs[i], &m))
				continue;
			if (m.label && !strcmp(m.label, name))
				*seq = seqs[i], r = 0;
			epoch_meta_release(&m);
		}
		if (r)
			errorf("no epoch labelled '%s' in database '%s'", name, db->path);
	}
out:
	free(seqs);
	return r;
}

#define CURRENT_MAGIC "dcpi-current"

/*
 * Raises *seq to the newest epoch of the database.  An epoch is created by
 * renaming its directory into place and then moving `current` to it: a
 * writer killed between the two leaves an epoch newer than `current` (or
 * no `current` at all), which is the one it was about to write and the one
 * the next writer continues.
 */
static int newest_epoch(struct db *db, uint32_t *seq)
{
	uint32_t *seqs;
	size_t n;

	if (db_epoch_seqs(db, &seqs, &n))
		return -1;
	if (n && seqs[n - 1] > *seq)
		*seq = seqs[n - 1];
	free(seqs);
	return 0;
}

int db_epoch_current(struct db *db, uint32_t *seq)
{
	struct strbuf sb = STRBUF_INIT;
	struct textrec rec;
	char what[4096];
	const char *why;
	int r;

	*seq = 0;
	snprintf(what, sizeof(what), "%s/%s", db->path, CURRENT_NAME);
	r = fsio_read_at(db->dirfd, CURRENT_NAME, what, 4096, &sb);
	if (r) {
		strbuf_release(&sb);
		return r == 1 ? newest_epoch(db, seq) : -1;
	}
	if (textrec_parse(sb.buf, sb.len, CURRENT_MAGIC, 1, &rec, &why)) {
		strbuf_release(&sb);
		return errorf("%s: %s", what, why);
	}
	for (size_t i = 0; i < rec.n; i++) {
		if (!strcmp(rec.lines[i].tok[0], "epoch") && rec.lines[i].ntok == 2 &&
		    !db_epoch_dirname_parse(rec.lines[i].tok[1], seq)) {
			unsigned long long v = strtoull(rec.lines[i].tok[1], NULL, 10);

			if (v && v <= UINT32_MAX)
				*seq = (uint32_t)v;
		}
	}
	textrec_release(&rec);
	strbuf_release(&sb);
	return newest_epoch(db, seq);
}

static int store_current(struct db *db, uint32_t seq)
{
	struct strbuf sb = STRBUF_INIT;
	char what[4096];
	int r;

	snprintf(what, sizeof(what), "%s/%s", db->path, CURRENT_NAME);
	textrec_begin(&sb, CURRENT_MAGIC, 1);
	strbuf_addf(&sb, "epoch %" PRIu32 "\n", seq);
	textrec_finish(&sb);
	r = fsio_write_atomic(db->dirfd, CURRENT_NAME, what, sb.buf, sb.len, db_sync_enabled(db));
	strbuf_release(&sb);
	return r;
}

int db_epoch_close(struct db *db, uint32_t seq, int64_t end_ns)
{
	struct epoch_meta m;
	int r;

	db_need_writer(db);
	if (db_meta_load(db, seq, &m))
		return -1;
	m.end_ns = end_ns ? end_ns : time_now_ns();
	if (m.end_ns < m.start_ns)
		m.end_ns = m.start_ns;
	r = db_meta_store(db, &m);
	epoch_meta_release(&m);
	return r;
}

int db_epoch_create(struct db *db, struct epoch_meta *meta)
{
	struct image_index empty = IMAGE_INDEX_INIT;
	struct strbuf sb = STRBUF_INIT;
	char tmp[128], name[16];
	uint32_t *seqs, cur, next;
	size_t n;
	int fd = -1, r = -1;

	db_need_writer(db);
	if (meta->label && !epoch_label_valid(meta->label))
		return errorf("invalid epoch label '%s' (1-64 characters, no spaces, not a "
			      "number, not starting with 'latest')", meta->label);
	if (db_epoch_seqs(db, &seqs, &n))
		return -1;
	next = n ? seqs[n - 1] + 1 : 1;
	free(seqs);
	if (!next)
		return errorf("database '%s' has run out of epoch numbers", db->path);

	/* Close the previous epoch before the current pointer moves. */
	if (db_epoch_current(db, &cur) == 0 && cur) {
		struct epoch_meta old;

		if (!db_meta_load(db, cur, &old)) {
			if (!old.end_ns && db_epoch_close(db, cur, 0)) {
				epoch_meta_release(&old);
				return -1;
			}
			epoch_meta_release(&old);
		}
	}

	meta->seq = next;
	if (!meta->start_ns)
		meta->start_ns = time_now_ns();
	if (fsio_mkdtemp_at(db->dirfd, tmp, sizeof(tmp), db->path))
		return -1;
	fd = openat(db->dirfd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		errorf_errno("cannot open '%s/%s'", db->path, tmp);
		goto out;
	}
	if (store_meta_at(db, fd, meta))
		goto out;
	image_index_format(&empty, &sb);
	if (fsio_write_atomic(fd, IMAGES_NAME, IMAGES_NAME, sb.buf, sb.len, db_sync_enabled(db)))
		goto out;
	epoch_dirname(next, name, sizeof(name));
	TEST_POINT("epoch-before-rename");
	if (renameat(db->dirfd, tmp, db->dirfd, name)) {
		errorf_errno("cannot create epoch '%s/%s'", db->path, name);
		goto out;
	}
	tmp[0] = '\0';
	if (db_sync_enabled(db) && fsio_fsync_dir(db->dirfd, db->path))
		goto out;
	r = store_current(db, next);
out:
	if (fd >= 0)
		close(fd);
	if (tmp[0])
		fsio_remove_temps(db->dirfd, db->path);
	strbuf_release(&sb);
	return r;
}

/* ---- images ----------------------------------------------------------- */

static int parse_images(const char *buf, size_t len, void *idx, const char **why)
{
	return image_index_parse(buf, len, idx, why);
}

int db_images_load(struct db *db, uint32_t seq, struct image_index *idx)
{
	int r;

	image_index_init(idx);
	r = load_text(db, seq, IMAGES_NAME, false, parse_images, idx);
	return r == 1 ? 0 : r;
}

int db_images_store(struct db *db, uint32_t seq, const struct image_index *idx)
{
	struct strbuf sb = STRBUF_INIT;
	char *what;
	int fd, r;

	db_need_writer(db);
	if ((fd = db_open_epoch(db, seq)) < 0)
		return -1;
	what = db_epoch_file_path(db, seq, IMAGES_NAME);
	image_index_format(idx, &sb);
	r = fsio_write_atomic(fd, IMAGES_NAME, what, sb.buf, sb.len, db_sync_enabled(db));
	close(fd);
	free(what);
	strbuf_release(&sb);
	return r;
}

/* ---- profiles --------------------------------------------------------- */

int db_profile_id_set(struct db_profile_id *id, const char *key, enum dcpi_event event,
		      bool per_pid, uint32_t pid)
{
	if (!image_key_valid(key))
		return errorf("invalid image key '%s'", key);
	memset(id, 0, sizeof(*id));
	strcpy(id->key, key);
	id->event = event;
	id->per_pid = per_pid;
	id->pid = per_pid ? pid : 0;
	return 0;
}

void db_profile_name(const struct db_profile_id *id, char *buf, size_t size)
{
	if (id->per_pid)
		snprintf(buf, size, "%s.%s.%" PRIu32 PROFILE_SUFFIX, id->key, event_name(id->event),
			 id->pid);
	else
		snprintf(buf, size, "%s.%s" PROFILE_SUFFIX, id->key, event_name(id->event));
}

bool db_profile_name_parse(const char *name, struct db_profile_id *id)
{
	char buf[128], *tok[4], *save = NULL, *t;
	size_t len = strlen(name), slen = strlen(PROFILE_SUFFIX), ntok = 0;
	int ev;

	if (len <= slen || len >= sizeof(buf) || strcmp(name + len - slen, PROFILE_SUFFIX))
		return false;
	memcpy(buf, name, len - slen);
	buf[len - slen] = '\0';
	for (t = strtok_r(buf, ".", &save); t; t = strtok_r(NULL, ".", &save)) {
		if (ntok == 3)
			return false;
		tok[ntok++] = t;
	}
	if (ntok < 2 || !image_key_valid(tok[0]) || (ev = event_lookup(tok[1])) < 0)
		return false;
	memset(id, 0, sizeof(*id));
	strcpy(id->key, tok[0]);
	id->event = (enum dcpi_event)ev;
	if (ntok == 3) {
		unsigned long long pid;

		if (strspn(tok[2], "0123456789") != strlen(tok[2]) || strlen(tok[2]) > 10)
			return false;
		pid = strtoull(tok[2], NULL, 10);
		if (pid > UINT32_MAX)
			return false;
		id->per_pid = true;
		id->pid = (uint32_t)pid;
	}
	/* Canonical names only (no leading zeros in pids). */
	db_profile_name(id, buf, sizeof(buf));
	return !strcmp(buf, name);
}

static int cmp_profile_id(const void *a, const void *b)
{
	const struct db_profile_id *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c)
		return c;
	if (x->event != y->event)
		return x->event < y->event ? -1 : 1;
	if (x->per_pid != y->per_pid)
		return x->per_pid ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

int db_epoch_names(struct db *db, uint32_t seq, bool (*keep)(const char *name, const void *ctx),
		   const void *ctx, char ***names, size_t *n)
{
	int fd = db_open_epoch(db, seq);
	size_t alloc = 0;
	struct dirent *de;
	DIR *d;

	*names = NULL;
	*n = 0;
	if (fd < 0)
		return -1;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return errorf_errno("cannot read epoch %" PRIu32 " of '%s'", seq, db->path);
	}
	while ((de = readdir(d))) {
		if (!keep(de->d_name, ctx))
			continue;
		ALLOC_GROW(*names, *n + 1, alloc);
		(*names)[(*n)++] = xstrdup(de->d_name);
	}
	closedir(d);
	return 0;
}

static bool profile_name(const char *name, const void *ctx)
{
	struct db_profile_id id;

	return db_profile_name_parse(name, &id);
}

int db_profiles_list(struct db *db, uint32_t seq, struct db_profile_id **ids, size_t *n)
{
	char **names;

	*ids = NULL;
	if (db_epoch_names(db, seq, profile_name, NULL, &names, n))
		return -1;
	if (*n)
		*ids = xcalloc(*n, sizeof(**ids));
	for (size_t i = 0; i < *n; i++) {
		db_profile_name_parse(names[i], &(*ids)[i]);
		free(names[i]);
	}
	free(names);
	if (*n)
		qsort(*ids, *n, sizeof(**ids), cmp_profile_id);
	return 0;
}

static int check_header_matches(const struct profile_header *h, const struct db_profile_id *id,
				const char **why)
{
	if (strcmp(h->key, id->key) || h->event != id->event || h->per_pid != id->per_pid ||
	    h->pid != id->pid)
		return *why = "header does not match the file name (misplaced file?)", -1;
	return 0;
}

/* Reads a profile's file into sb and decodes it into p: db_profile_load(), -2 (reported) if corrupt. */
static int read_profile(struct db *db, uint32_t seq, const struct db_profile_id *id,
			struct strbuf *sb, struct profile *p)
{
	struct profile_header h;
	char name[128];
	const char *why;
	int r;

	p->n = 0;
	db_profile_name(id, name, sizeof(name));
	r = db_epoch_read(db, seq, name, PROFILE_MAX_SIZE, sb);
	if (!r && (profile_decode(sb->buf, sb->len, &h, p, &why) ||
		   check_header_matches(&h, id, &why))) {
		p->n = 0;
		db_damage(db, DB_DAMAGED, seq, name, "corrupt profile: %s", why);
		r = -2;
	}
	return r;
}

/* Like db_profile_load(), but returns -2 (reported) if the file is corrupt. */
static int load_profile(struct db *db, uint32_t seq, const struct db_profile_id *id,
			struct profile *p)
{
	struct strbuf sb = STRBUF_INIT;
	int r = read_profile(db, seq, id, &sb, p);

	strbuf_release(&sb);
	return r;
}

int db_profile_load(struct db *db, uint32_t seq, const struct db_profile_id *id,
		    struct profile *p)
{
	int r = load_profile(db, seq, id, p);

	return r == -2 ? -1 : r;
}

int db_profile_read(struct db *db, uint32_t seq, const struct db_profile_id *id,
		    struct strbuf *file, struct profile *scratch)
{
	int r = read_profile(db, seq, id, file, scratch);

	if (r)
		strbuf_reset(file);
	return r == -2 ? -1 : r;
}

int db_profile_stat(struct db *db, uint32_t seq, const struct db_profile_id *id,
		    struct profile_header *hdr)
{
	unsigned char buf[PROFILE_HEADER_SIZE];
	char name[128];
	const char *why;
	struct stat st;
	ssize_t n;
	int dfd, fd, r = -1;

	if ((dfd = db_epoch_dir(db, seq)) < 0)
		return -1;
	db_profile_name(id, name, sizeof(name));
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	db_dir_put(db, dfd);
	if (fd < 0) {
		if (errno == ENOENT)
			r = 1;
		else if (errno == ELOOP)
			db_damage(db, DB_DAMAGED, seq, name, "is a symbolic link; refusing to read it");
		else
			db_damage(db, DB_DAMAGED, seq, name, "cannot open: %s", strerror(errno));
		return r;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		db_damage(db, DB_DAMAGED, seq, name, "not a regular file");
	else if ((n = pread(fd, buf, sizeof(buf), 0)) < 0)
		db_damage(db, DB_DAMAGED, seq, name, "cannot read: %s", strerror(errno));
	else if (profile_decode_header(buf, (size_t)n, hdr, &why) ||
		 check_header_matches(hdr, id, &why))
		db_damage(db, DB_DAMAGED, seq, name, "corrupt profile: %s", why);
	else if ((uint64_t)st.st_size != PROFILE_HEADER_SIZE + hdr->payload_size)
		db_damage(db, DB_DAMAGED, seq, name, "corrupt profile: %s",
			  (uint64_t)st.st_size < PROFILE_HEADER_SIZE + hdr->payload_size ?
			  "truncated payload" : "trailing bytes after payload");
	else
		r = 0;
	close(fd);
	return r;
}

static int store_profile(struct db *db, uint32_t seq, const struct db_profile_id *id,
			 const struct profile *p)
{
	struct profile_header h;
	struct strbuf sb = STRBUF_INIT;
	char name[128], *what;
	int fd, r;

	if ((fd = db_open_epoch(db, seq)) < 0)
		return -1;
	memset(&h, 0, sizeof(h));
	strcpy(h.key, id->key);
	h.event = id->event;
	h.per_pid = id->per_pid;
	h.pid = id->pid;
	profile_encode(p, &h, &sb);
	db_profile_name(id, name, sizeof(name));
	what = db_epoch_file_path(db, seq, name);
	r = fsio_write_atomic(fd, name, what, sb.buf, sb.len, db_sync_enabled(db));
	close(fd);
	free(what);
	strbuf_release(&sb);
	return r;
}

int db_profile_store(struct db *db, uint32_t seq, const struct db_profile_id *id,
		     const struct profile *p)
{
	db_need_writer(db);
	if (!profile_is_normalized(p))
		BUG("db_profile_store: profile not normalised");
	return store_profile(db, seq, id, p);
}

int db_file_quarantine(struct db *db, uint32_t seq, const char *name)
{
	char bad[160];
	int fd, r = 0;

	db_need_writer(db);
	if ((fd = db_open_epoch(db, seq)) < 0)
		return -1;
	snprintf(bad, sizeof(bad), "%s" CORRUPT_SUFFIX, name);
	if (renameat(fd, name, fd, bad))
		r = errorf_errno("cannot move corrupt file '%s/%06" PRIu32 "/%s' aside",
				 db->path, seq, name);
	else
		warning("moved corrupt file to '%s/%06" PRIu32 "/%s'; what it held is lost",
			db->path, seq, bad);
	if (!r && db_sync_enabled(db))
		r = fsio_fsync_dir(fd, db->path);
	close(fd);
	return r;
}

/* Moves a corrupt profile aside (NAME.corrupt) so that a merge can proceed. */
static int quarantine(struct db *db, uint32_t seq, const struct db_profile_id *id)
{
	char name[128];

	db_profile_name(id, name, sizeof(name));
	return db_file_quarantine(db, seq, name);
}

int db_profile_merge(struct db *db, uint32_t seq, const struct db_profile_id *id,
		     const struct profile *add)
{
	struct profile cur = PROFILE_INIT;
	int r;

	db_need_writer(db);
	if (!profile_is_normalized(add))
		BUG("db_profile_merge: profile not normalised");
	r = load_profile(db, seq, id, &cur);
	if (r == -2)
		r = quarantine(db, seq, id);
	if (r < 0) {
		profile_release(&cur);
		return -1;
	}
	if (profile_merge(&cur, add)) {
		profile_release(&cur);
		return errorf("profile %s.%s of epoch %" PRIu32 ": count overflow", id->key,
			      event_name(id->event), seq);
	}
	r = store_profile(db, seq, id, &cur);
	profile_release(&cur);
	return r;
}

int db_image_totals(struct db *db, uint32_t seq, struct db_image_totals **v, size_t *n)
{
	return db_image_totals_progress(db, seq, v, n, NULL, NULL);
}

int db_image_totals_progress(struct db *db, uint32_t seq, struct db_image_totals **v, size_t *n,
			     db_progress_fn progress, void *ctx)
{
	struct db_profile_id *ids;
	size_t nids, alloc = 0;

	*v = NULL;
	*n = 0;
	if (db_profiles_list(db, seq, &ids, &nids))
		return -1;
	for (size_t i = 0; i < nids; i++) {
		struct profile_header h;

		if (progress && i % 64 == 0 && progress(ctx, i, nids))
			break;
		if (ids[i].per_pid)
			continue;
		if (!*n || strcmp((*v)[*n - 1].key, ids[i].key)) {
			ALLOC_GROW(*v, *n + 1, alloc);
			memset(&(*v)[*n], 0, sizeof(**v));
			strcpy((*v)[*n].key, ids[i].key);
			(*n)++;
		}
		if (db_profile_stat(db, seq, &ids[i], &h) == 0)
			(*v)[*n - 1].samples[ids[i].event] += h.total;
	}
	free(ids);
	return 0;
}
