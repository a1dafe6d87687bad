/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The database checker (db/check.h): dcpidb check. */
#include "config.h"
#include "db/check.h"
#include "db/auxfile.h"
#include "db/binaries.h"
#include "db/blob.h"
#include "db/bursts.h"
#include "db/db-int.h"
#include "db/db.h"
#include "db/fsio.h"
#include "db/paths.h"
#include "db/stacks.h"
#include "db/symfile.h"
#include "db/textrec.h"
#include "db/values.h"
#include "db/watch.h"
#include "core/die.h"
#include "core/endian.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the kinds of blob ------------------------------------------------------------ */

/*
 * One line per kind of blob file (db/blob.h): the checker verifies any
 * blob's container, and with an entry here its payload too.
 */
static int check_watch(const void *payload, size_t len, uint32_t count, uint16_t flags,
		       const char **why)
{
	struct watch_set ws = WATCH_SET_INIT;
	int r = watch_decode(payload, len, count, &ws, why);

	(void)flags;
	watch_set_release(&ws);
	return r;
}

static int check_stacks(const void *payload, size_t len, uint32_t count, uint16_t flags,
			const char **why)
{
	struct stack_table t;
	int r = stack_table_decode(&t, payload, len, count, why);

	(void)flags;
	stack_table_release(&t);
	return r;
}

static int check_values(const void *payload, size_t len, uint32_t count, uint16_t flags,
			const char **why)
{
	struct values_profile p;
	int r;

	(void)flags;
	values_profile_init(&p);
	r = values_decode(payload, len, count, &p, why);
	values_profile_release(&p);
	return r;
}

static int check_bursts(const void *payload, size_t len, uint32_t count, uint16_t flags,
			const char **why)
{
	struct burst_set b;
	int r;

	(void)flags;
	burst_set_init(&b);
	r = bursts_decode(payload, len, count, &b, why);
	burst_set_release(&b);
	return r;
}

static int check_paths(const void *payload, size_t len, uint32_t count, uint16_t flags,
		       const char **why)
{
	struct paths_profile p;
	int r;

	(void)flags;
	paths_profile_init(&p);
	r = paths_decode(payload, len, count, &p, why);
	paths_profile_release(&p);
	return r;
}

static int check_symfile(int kind, const void *payload, size_t len, uint32_t count,
			 uint16_t flags, const char **why)
{
	if (flags)
		return *why = "unknown flags", -1;
	return symfile_check(kind, payload, len, count, why);
}

static int check_ksyms(const void *payload, size_t len, uint32_t count, uint16_t flags,
		       const char **why)
{
	return check_symfile(SYMFILE_KALLSYMS, payload, len, count, flags, why);
}

static int check_jitmap(const void *payload, size_t len, uint32_t count, uint16_t flags,
			const char **why)
{
	return check_symfile(SYMFILE_JITMAP, payload, len, count, flags, why);
}

const struct db_blob_kind db_blob_kinds[] = {
	{ WATCH_MAGIC, "stopwatch results", WATCH_FILE, WATCH_VERSION, check_watch },
	{ STACKS_MAGIC, "stack table", STACKS_NAME "-*", STACKS_VERSION, check_stacks },
	{ VALUES_MAGIC, "value profile", "*.values", VALUES_VERSION, check_values },
	{ BURSTS_MAGIC, "burst traces", BURSTS_FILE, BURSTS_VERSION, check_bursts },
	{ PATHS_MAGIC, "path profile", "*" PATHS_SUFFIX, PATHS_VERSION, check_paths },
	{ KSYMS_MAGIC, "kernel symbols", KSYMS_FILE, SYMFILE_VERSION, check_ksyms },
	{ JITMAP_MAGIC, "JIT symbol map", "perf-*", SYMFILE_VERSION, check_jitmap },
	{ NULL, NULL, NULL, 0, NULL }
};

static bool name_matches(const char *pattern, const char *name)
{
	size_t n = strlen(name), p = strlen(pattern);

	if (p && pattern[p - 1] == '*')  /* a prefix: "stacks-*" */
		return n >= p && !strncmp(pattern, name, p - 1);
	if (pattern[0] != '*')
		return !strcmp(pattern, name);
	p = strlen(pattern + 1);
	return n > p && !strcmp(name + n - p, pattern + 1);
}

const struct db_blob_kind *db_blob_kind_for_name(const char *name)
{
	for (const struct db_blob_kind *k = db_blob_kinds; k->magic; k++)
		if (k->names && name_matches(k->names, name))
			return k;
	return NULL;
}

const struct db_blob_kind *db_blob_kind_for_magic(const char *magic)
{
	for (const struct db_blob_kind *k = db_blob_kinds; k->magic; k++)
		if (!strcmp(k->magic, magic))
			return k;
	return NULL;
}

const char *db_check_severity_name(enum db_check_severity s)
{
	static const char *const names[] = { "error", "warning", "note" };

	return names[s];
}

/* ---- findings and reading ------------------------------------------------------- */

#define PROFILE_MAX ((size_t)1 << 30)

struct checker {
	struct db *db;
	unsigned flags;
	db_check_fn fn;
	void *ctx;
	struct db_check_stats *st;
	/* Build-ids (hex) named by the image indexes, to find unused snapshots. */
	char **used;
	size_t n_used, alloc_used;
	bool all_indexes_read;
	const uint32_t *seqs;   /* the epochs there are, sorted */
	size_t n_seqs;
};

static void __attribute__((format(printf, 4, 5)))
find(struct checker *k, enum db_check_severity s, const char *path, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	char *safe = display_safe(path);
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	k->st->findings[s]++;
	k->fn(k->ctx, s, safe, sb.buf);
	free(safe);
	strbuf_release(&sb);
}

/*
 * Reads the regular file name under dirfd whole (at most max bytes) into
 * out.  Returns 0; 1 if it is missing; -1 with a finding made.
 */
static int read_file(struct checker *k, int dirfd, const char *name, const char *path,
		     size_t max, struct strbuf *out)
{
	enum fsio_read_error err;
	uint64_t size = 0;
	int r = fsio_read_quiet(dirfd, name, max, out, &err, &size);

	if (r >= 0)
		return r;
	if (err == FSIO_READ_SYMLINK)
		find(k, DB_CHECK_ERROR, path, "is a symbolic link (readers refuse it)");
	else if (err == FSIO_READ_OPEN)
		find(k, DB_CHECK_ERROR, path, "cannot open: %s", strerror(errno));
	else if (err == FSIO_READ_STAT || err == FSIO_READ_NOT_REGULAR)
		find(k, DB_CHECK_ERROR, path, "not a regular file");
	else if (err == FSIO_READ_TOO_LARGE)
		find(k, DB_CHECK_ERROR, path, "too large (%llu bytes; readers take at most %zu)",
		     (unsigned long long)size, max);
	else if (err == FSIO_READ_GREW)
		find(k, DB_CHECK_ERROR, path, "grew while being read");
	else
		find(k, DB_CHECK_ERROR, path, "cannot read: %s", strerror(errno));
	return -1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in a directory, sorted (caller frees each and the array); NULL on error. */
static char **list_dir(int dirfd, size_t *n)
{
	int fd;
	DIR *d = fsio_opendir_at(dirfd, ".", &fd);
	struct dirent *de;
	char **v;
	size_t alloc = 1;

	*n = 0;
	if (!d)
		return NULL;
	v = xcalloc(1, sizeof(*v));
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		ALLOC_GROW(v, *n + 1, alloc);
		v[(*n)++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static bool is_temp(const char *name)
{
	return !strncmp(name, FSIO_TMP_PREFIX, strlen(FSIO_TMP_PREFIX));
}

static bool has_suffix(const char *name, const char *suffix)
{
	size_t n = strlen(name), s = strlen(suffix);

	return n > s && !strcmp(name + n - s, suffix);
}

static void temp_note(struct checker *k, int dirfd, const char *name, const char *path)
{
	struct stat st;
	bool dir = !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode);

	find(k, DB_CHECK_NOTE, path, "orphaned temporary %s of a writer that stopped "
	     "(the next writer, or dcpidb gc, removes it)", dir ? "directory" : "file");
}

/* ---- blobs and auxiliary files ---------------------------------------------------- */

static void check_blob(struct checker *k, const char *path, const struct strbuf *buf,
		       const struct db_blob_kind *by_name)
{
	const struct db_blob_kind *kind;
	struct blob_header h;
	const void *payload;
	const char *why;

	k->st->blobs++;
	if (blob_decode(buf->buf, buf->len, NULL, 0, &h, &payload, &why)) {
		find(k, DB_CHECK_ERROR, path, "corrupt %s: %s", by_name ? by_name->what : "blob", why);
		return;
	}
	kind = db_blob_kind_for_magic(h.magic);
	if (by_name && kind != by_name) {
		find(k, DB_CHECK_ERROR, path, "holds a %s blob, not a %s (misplaced file?)", h.magic,
		     by_name->what);
		return;
	}
	if (!kind) {
		find(k, DB_CHECK_NOTE, path, "a blob of a kind this dcpi does not know (%s): "
		     "its container is sound", h.magic);
		return;
	}
	if (h.version > kind->max_version) {
		find(k, DB_CHECK_WARNING, path, "%s version %u is newer than this dcpi reads (%u)",
		     kind->what, h.version, kind->max_version);
		return;
	}
	if (kind->check(payload, h.payload_size, h.count, h.flags, &why))
		find(k, DB_CHECK_ERROR, path, "corrupt %s: %s", kind->what, why);
}

/* kallsyms: the kernel's own lines, "ADDRESS TYPE NAME[\t[MODULE]]". */
static void check_kallsyms(struct checker *k, const char *path, const struct strbuf *buf)
{
	size_t line = 0;

	for (const char *p = buf->buf, *end = buf->buf + buf->len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *q = p;

		line++;
		if (!nl) {
			find(k, DB_CHECK_ERROR, path, "truncated: line %zu has no newline", line);
			return;
		}
		while (q < nl && isxdigit((unsigned char)*q))
			q++;
		if (q == p || q + 3 > nl || q[0] != ' ' || !isalpha((unsigned char)q[1]) ||
		    q[2] != ' ' || q + 3 == nl) {
			find(k, DB_CHECK_ERROR, path, "malformed line %zu", line);
			return;
		}
		p = nl + 1;
	}
}

/* ---- profiles ------------------------------------------------------------------- */

struct epoch_check {
	uint32_t seq;
	char dir[16];
	int fd;
	struct epoch_meta meta;
	bool meta_ok;
	struct image_index idx;
	bool idx_ok;
	uint64_t totals[EVENT__COUNT];  /* of the aggregate profiles */
	bool totals_ok;                 /* every aggregate profile was read */
};

static void check_profile(struct checker *k, struct epoch_check *e, const char *name,
			  const char *path, struct strbuf *buf)
{
	struct profile p = PROFILE_INIT;
	struct profile_header h;
	struct db_profile_id id;
	const char *why;
	int r;

	k->st->profiles++;
	if (!db_profile_name_parse(name, &id)) {
		find(k, DB_CHECK_WARNING, path, "not a profile name readers know (they ignore it)");
		return;
	}
	if ((r = read_file(k, e->fd, name, path, PROFILE_MAX, buf))) {
		e->totals_ok &= id.per_pid;
		return;
	}
	if (profile_decode(buf->buf, buf->len, &h, &p, &why)) {
		find(k, DB_CHECK_ERROR, path, "corrupt profile: %s", why);
		e->totals_ok &= id.per_pid;
	} else if (strcmp(h.key, id.key) || h.event != id.event || h.per_pid != id.per_pid ||
		   h.pid != id.pid) {
		find(k, DB_CHECK_ERROR, path, "corrupt profile: its header names another "
		     "profile (misplaced file?)");
		e->totals_ok &= id.per_pid;
	} else if (!id.per_pid) {
		e->totals[id.event] += h.total;
	}
	if (e->idx_ok && !image_index_find(&e->idx, id.key))
		find(k, DB_CHECK_WARNING, path, "its image %s is not in the epoch's image index "
		     "(readers cannot name the image)", id.key);
	profile_release(&p);
}

/* ---- epochs --------------------------------------------------------------------- */

static void note_used_build_ids(struct checker *k, const struct image_index *idx)
{
	struct strbuf hex = STRBUF_INIT;

	for (size_t i = 0; i < idx->n; i++) {
		if (!idx->v[i].build_id_len)
			continue;
		strbuf_reset(&hex);
		strbuf_add_build_id(&hex, &idx->v[i]);
		ALLOC_GROW(k->used, k->n_used + 1, k->alloc_used);
		k->used[k->n_used++] = strbuf_detach(&hex, NULL);
	}
	strbuf_release(&hex);
}

static void check_meta(struct checker *k, struct epoch_check *e, struct strbuf *buf)
{
	char path[64];
	const char *why;
	int r;

	snprintf(path, sizeof(path), "%s/meta", e->dir);
	k->st->records++;
	if ((r = read_file(k, e->fd, "meta", path, TEXTREC_MAX_SIZE, buf)) == 1)
		find(k, DB_CHECK_ERROR, path, "missing (readers cannot use the epoch)");
	if (r)
		return;
	if (epoch_meta_parse(buf->buf, buf->len, &e->meta, &why))
		find(k, DB_CHECK_ERROR, path, "corrupt epoch metadata: %s", why);
	else if (e->meta.seq != e->seq)
		find(k, DB_CHECK_ERROR, path, "belongs to epoch %" PRIu32 ", not %" PRIu32,
		     e->meta.seq, e->seq);
	else
		e->meta_ok = true;
}

static void check_images(struct checker *k, struct epoch_check *e, struct strbuf *buf)
{
	char path[64];
	const char *why;
	int r;

	snprintf(path, sizeof(path), "%s/images", e->dir);
	k->st->records++;
	if ((r = read_file(k, e->fd, "images", path, TEXTREC_MAX_SIZE, buf)) == 1) {
		find(k, DB_CHECK_WARNING, path, "missing (readers take the image index as empty)");
		k->st->records--;
		e->idx_ok = true;
	} else if (!r && image_index_parse(buf->buf, buf->len, &e->idx, &why)) {
		find(k, DB_CHECK_ERROR, path, "corrupt image index: %s", why);
	} else if (!r) {
		e->idx_ok = true;
	}
	if (e->idx_ok)
		note_used_build_ids(k, &e->idx);
	else
		k->all_indexes_read = false;
}

/* One file of an epoch other than meta and images. */
static void check_epoch_file(struct checker *k, struct epoch_check *e, const char *name,
			     struct strbuf *buf)
{
	const struct db_blob_kind *kind = db_blob_kind_for_name(name);
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", e->dir, name);
	if (is_temp(name)) {
		temp_note(k, e->fd, name, path);
		return;
	}
	k->st->files++;
	if (fstatat(e->fd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		find(k, DB_CHECK_ERROR, path, "cannot stat: %s", strerror(errno));
		return;
	}
	if (S_ISLNK(st.st_mode)) {
		find(k, DB_CHECK_ERROR, path, "is a symbolic link (readers refuse it)");
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		find(k, DB_CHECK_WARNING, path, "not a regular file (readers ignore it)");
		return;
	}
	if (has_suffix(name, ".corrupt")) {
		find(k, DB_CHECK_NOTE, path, "quarantined by a writer that found it corrupt: "
		     "what it held is lost (kept for inspection)");
		return;
	}
	if (has_suffix(name, ".prof")) {
		check_profile(k, e, name, path, buf);
		return;
	}
	if (read_file(k, e->fd, name, path, BLOB_MAX_SIZE, buf))
		return;
	if (symfile_kind_for_name(name) >= 0 && (buf->len < 4 || memcmp(buf->buf, "DCPI", 4))) {
		/* an older dcpi's plain copy: readers take it, unverified */
		k->st->aux++;
		find(k, DB_CHECK_WARNING, path, "no checksum (written by an older dcpi): "
		     "readers use its symbols unverified");
		if (!strcmp(name, KSYMS_FILE))
			check_kallsyms(k, path, buf);
	} else if (kind || (buf->len >= 4 && !memcmp(buf->buf, "DCPI", 4))) {
		check_blob(k, path, buf, kind);
	} else {
		find(k, DB_CHECK_WARNING, path, "a file dcpi does not know (readers ignore it)");
	}
}

/* The meta never claims more samples than the profiles hold (writers store it after them). */
static void check_counts(struct checker *k, struct epoch_check *e)
{
	char path[64];

	if (!e->meta_ok || !e->totals_ok)
		return;
	snprintf(path, sizeof(path), "%s/meta", e->dir);
	for (size_t i = 0; i < e->meta.n_events; i++) {
		const struct epoch_event *ev = &e->meta.events[i];

		if (ev->samples > e->totals[ev->event])
			find(k, DB_CHECK_WARNING, path, "counts %" PRIu64 " %s samples, its "
			     "profiles hold %" PRIu64 " (a profile was lost?)", ev->samples,
			     event_name(ev->event), e->totals[ev->event]);
	}
}

static void check_epoch(struct checker *k, uint32_t seq, struct strbuf *buf)
{
	struct epoch_check e;
	char **names;
	size_t n;

	memset(&e, 0, sizeof(e));
	e.seq = seq;
	e.totals_ok = true;
	snprintf(e.dir, sizeof(e.dir), "%06" PRIu32, seq);
	epoch_meta_init(&e.meta);
	image_index_init(&e.idx);
	k->st->epochs++;
	e.fd = openat(k->db->dirfd, e.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (e.fd < 0) {
		find(k, DB_CHECK_ERROR, e.dir, "cannot open the epoch: %s", strerror(errno));
		k->all_indexes_read = false;
		return;
	}
	check_meta(k, &e, buf);
	check_images(k, &e, buf);
	names = list_dir(e.fd, &n);
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], "meta") && strcmp(names[i], "images"))
			check_epoch_file(k, &e, names[i], buf);
	check_counts(k, &e);
	free_list(names, n);
	epoch_meta_release(&e.meta);
	image_index_release(&e.idx);
	close(e.fd);
}

/* ---- snapshots ------------------------------------------------------------------ */

static bool hex_to_bytes(const char *hex, uint8_t *out, unsigned *len)
{
	size_t n = strlen(hex);

	if (n % 2 || n / 2 > IMAGE_BUILD_ID_MAX)
		return false;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return false;
		out[i] = (uint8_t)v;
	}
	*len = (unsigned)(n / 2);
	return true;
}

/*
 * An ELF file's header says where its program and section header tables
 * end: a snapshot cut short ends before them.  Reads fixed header fields
 * only (the checker parses no ELF beyond that).  NULL if whole.
 */
static const char *elf_truncated(const unsigned char *b, size_t len)
{
	uint64_t phoff, shoff, phend, shend;

	if (len < 64 || b[5] != 1 /* little-endian */)
		return len < 52 ? "truncated ELF header" : NULL;
	if (b[4] == 2) {  /* 64-bit */
		phoff = get_le64(b + 0x20);
		shoff = get_le64(b + 0x28);
		phend = phoff + (uint64_t)get_le16(b + 0x36) * get_le16(b + 0x38);
		shend = shoff + (uint64_t)get_le16(b + 0x3a) * get_le16(b + 0x3c);
	} else if (b[4] == 1) {
		phoff = get_le32(b + 0x1c);
		shoff = get_le32(b + 0x20);
		phend = phoff + (uint64_t)get_le16(b + 0x2a) * get_le16(b + 0x2c);
		shend = shoff + (uint64_t)get_le16(b + 0x2e) * get_le16(b + 0x30);
	} else {
		return NULL;
	}
	if ((phoff && phend > len) || (shoff && shend > len))
		return "truncated: its ELF header tables lie past its end";
	return NULL;
}

static void check_snapshot(struct checker *k, int dirfd, const char *hex, const char *path)
{
	uint8_t id[IMAGE_BUILD_ID_MAX];
	unsigned id_len = 0;
	const char *why;
	struct stat st;
	void *map;
	int fd;

	k->st->snapshots++;
	k->st->files++;
	fd = openat(dirfd, hex, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ELOOP)
			find(k, DB_CHECK_ERROR, path, "is a symbolic link (readers refuse it)");
		else
			find(k, DB_CHECK_ERROR, path, "cannot open the snapshot: %s", strerror(errno));
		return;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		find(k, DB_CHECK_ERROR, path, "not a regular file");
	} else if (!(k->flags & DB_CHECK_QUICK) && hex_to_bytes(hex, id, &id_len)) {
		map = st.st_size ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)
				 : MAP_FAILED;
		if (st.st_size && map == MAP_FAILED) {
			find(k, DB_CHECK_ERROR, path, "cannot read the snapshot: %s", strerror(errno));
		} else if (!st.st_size || memcmp(map, "\177ELF", 4) ||
			   !image_data_has_build_id(map, (size_t)st.st_size, id, id_len)) {
			find(k, DB_CHECK_ERROR, path, "not an ELF file holding build-id %s: not "
			     "the binary its name says", hex);
		} else if ((why = elf_truncated(map, (size_t)st.st_size))) {
			find(k, DB_CHECK_ERROR, path, "%s", why);
		}
		if (st.st_size && map != MAP_FAILED)
			munmap(map, (size_t)st.st_size);
	}
	close(fd);
}

/*
 * Cached unwind tables: a cache, so a damaged one is a warning (the
 * collector makes it again), not an error.  Only the container is checked:
 * the table's own decoder is the collector's (unwind/utable.h).
 */
static void check_unwind_table(struct checker *k, int dirfd, const char *hex, const char *path)
{
	struct strbuf buf = STRBUF_INIT;
	struct blob_header h;
	const void *payload;
	const char *why;

	k->st->files++;
	if (!read_file(k, dirfd, hex, path, BLOB_MAX_SIZE, &buf) &&
	    blob_decode(buf.buf, buf.len, DB_UNWIND_MAGIC, DB_UNWIND_VERSION, &h, &payload, &why))
		find(k, DB_CHECK_WARNING, path, "damaged cached unwind table: %s (the next run with "
		     "-g makes it again)", why);
	strbuf_release(&buf);
}

int (*db_check_calc_payload)(const void *payload, size_t len, unsigned count, const char **why);

/*
 * Cached analyses: a cache too, so a damaged one is a warning (the next
 * analysis makes it again).  The container is checked here, the payload by
 * the analysis' decoder when the program has one (db_check_calc_payload).
 */
static void check_calc(struct checker *k, int dirfd, const char *name, const char *path)
{
	struct strbuf buf = STRBUF_INIT;
	struct blob_header h;
	const void *payload;
	const char *why;

	k->st->files++;
	if (!read_file(k, dirfd, name, path, BLOB_MAX_SIZE, &buf) &&
	    (blob_decode(buf.buf, buf.len, DB_CALC_MAGIC, DB_CALC_VERSION, &h, &payload, &why) ||
	     (db_check_calc_payload &&
	      db_check_calc_payload(payload, (size_t)h.payload_size, h.count, &why))))
		find(k, DB_CHECK_WARNING, path, "damaged cached analysis: %s (the next analysis "
		     "makes it again)", why);
	strbuf_release(&buf);
}

/* The length of the build-id a file of binaries/ or unwind/ is named by, 0: none. */
static size_t build_id_name(const char *name)
{
	return db_binary_name_valid(name) ? strlen(name) : 0;
}

/* The same for calc/ (HEX.MODEL). */
static size_t calc_build_id(const char *name)
{
	size_t n;

	return db_calc_name_valid(name, &n) ? n : 0;
}

/*
 * A file of calc/ that no image index names but that is in use all the
 * same: a memo of an epoch there is (one of an epoch gone is noted here).
 */
static bool memo_in_use(struct checker *k, int dirfd, const char *name, const char *path)
{
	uint32_t seq;

	if (db_calc_memo_epoch(dirfd, name, &seq) != 1)
		return false;
	if (!k->n_seqs || !bsearch(&seq, k->seqs, k->n_seqs, sizeof(*k->seqs), cmp_u32))
		find(k, DB_CHECK_NOTE, path, "a memo of epoch %" PRIu32 ", which does not exist "
		     "(dcpidb gc removes it)", seq);
	return true;
}

/*
 * A directory of files named by build-id (binaries/, unwind/, calc/): temps,
 * other names, each file by check, and those no epoch's image index names
 * (unless in_use says otherwise).
 */
static void check_by_build_id(struct checker *k, const char *dir, const char *what,
			      size_t (*hex_len)(const char *name),
			      void (*check)(struct checker *k, int dirfd, const char *hex,
					    const char *path),
			      bool (*in_use)(struct checker *k, int dirfd, const char *name,
					     const char *path))
{
	int fd = openat(k->db->dirfd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char **names, path[128];
	size_t n;

	if (fd < 0) {
		if (errno != ENOENT)
			find(k, DB_CHECK_ERROR, dir, "cannot open: %s", strerror(errno));
		return;
	}
	names = list_dir(fd, &n);
	if (k->n_used)
		qsort(k->used, k->n_used, sizeof(*k->used), cmp_str);
	for (size_t i = 0; i < n; i++) {
		const char *hex = names[i];
		size_t idn = hex_len(hex);

		snprintf(path, sizeof(path), "%s/%s", dir, hex);
		if (is_temp(hex)) {
			temp_note(k, fd, hex, path);
		} else if (!idn || idn >= 2 * 32 + 1) {
			find(k, DB_CHECK_WARNING, path, "not a %s name (readers ignore it)", what);
		} else {
			char id[2 * 32 + 1];
			const char *key = id;

			memcpy(id, hex, idn);
			id[idn] = 0;
			check(k, fd, hex, path);
			if (k->all_indexes_read &&
			    !bsearch(&key, k->used, k->n_used, sizeof(*k->used), cmp_str) &&
			    !(in_use && in_use(k, fd, hex, path)))
				find(k, DB_CHECK_NOTE, path, "no epoch uses this %s "
				     "(dcpidb gc removes it)", what);
		}
	}
	free_list(names, n);
	close(fd);
}

/* ---- the database --------------------------------------------------------------- */

static void check_top_file(struct checker *k, const char *name, struct strbuf *buf,
			   uint32_t *current)
{
	struct textrec rec;
	const char *why;

	k->st->files++;
	if (!strcmp(name, "FORMAT")) {
		if (!read_file(k, k->db->dirfd, name, name, 4096, buf) &&
		    strcmp(buf->buf, "dcpi-db 1\n"))
			find(k, DB_CHECK_ERROR, name, "not \"dcpi-db 1\"");
	} else if (!strcmp(name, "current")) {
		k->st->records++;
		if (read_file(k, k->db->dirfd, name, name, 4096, buf))
			return;
		if (textrec_parse(buf->buf, buf->len, "dcpi-current", 1, &rec, &why)) {
			find(k, DB_CHECK_ERROR, name, "corrupt: %s", why);
			return;
		}
		for (size_t i = 0; i < rec.n; i++)
			if (!strcmp(rec.lines[i].tok[0], "epoch") && rec.lines[i].ntok == 2)
				*current = (uint32_t)strtoul(rec.lines[i].tok[1], NULL, 10);
		textrec_release(&rec);
	}
}

int db_check(struct db *db, unsigned flags, db_check_fn fn, void *ctx, struct db_check_stats *st)
{
	struct checker k = { .db = db, .flags = flags, .fn = fn, .ctx = ctx, .st = st,
			     .all_indexes_read = true };
	struct strbuf buf = STRBUF_INIT;
	uint32_t current = 0, seq;
	uint32_t *seqs = NULL;
	size_t n, nseqs = 0, alloc = 0;
	char **names;
	bool have_current = false;

	memset(st, 0, sizeof(*st));
	if (!(names = list_dir(db->dirfd, &n)))
		return errorf_errno("cannot read database '%s'", db->path);
	for (size_t i = 0; i < n; i++) {
		const char *name = names[i];
		struct stat s;

		if (fstatat(db->dirfd, name, &s, AT_SYMLINK_NOFOLLOW))
			continue;
		if (db_epoch_dirname_parse(name, &seq) && S_ISDIR(s.st_mode)) {
			ALLOC_GROW(seqs, nseqs + 1, alloc);
			seqs[nseqs++] = seq;
		} else if (is_temp(name)) {
			temp_note(&k, db->dirfd, name, name);
		} else if (S_ISLNK(s.st_mode)) {
			find(&k, DB_CHECK_ERROR, name, "is a symbolic link (readers refuse it)");
		} else if (!strcmp(name, "FORMAT") || !strcmp(name, "current") ||
			   !strcmp(name, "lock")) {
			have_current |= !strcmp(name, "current");
			check_top_file(&k, name, &buf, &current);
		} else if (strcmp(name, DB_BINARIES_DIR) && strcmp(name, DB_UNWIND_DIR) &&
			   strcmp(name, DB_CALC_DIR)) {
			find(&k, DB_CHECK_WARNING, name, "not part of a dcpi database (readers ignore it)");
		}
	}
	if (nseqs)
		qsort(seqs, nseqs, sizeof(*seqs), cmp_u32);
	for (size_t i = 0; i < nseqs; i++)
		check_epoch(&k, seqs[i], &buf);
	if (have_current && current) {
		bool found = false;

		for (size_t i = 0; i < nseqs && !found; i++)
			found = seqs[i] == current;
		if (!found)
			find(&k, DB_CHECK_WARNING, "current", "names epoch %" PRIu32 ", which does not "
			     "exist (a writer starts a new one)", current);
	}
	k.seqs = seqs;
	k.n_seqs = nseqs;
	check_by_build_id(&k, DB_BINARIES_DIR, "snapshot", build_id_name, check_snapshot, NULL);
	check_by_build_id(&k, DB_UNWIND_DIR, "cached unwind table", build_id_name,
			  check_unwind_table, NULL);
	check_by_build_id(&k, DB_CALC_DIR, "cached analysis", calc_build_id, check_calc,
			  memo_in_use);
	for (size_t i = 0; i < k.n_used; i++)
		free(k.used[i]);
	free(k.used);
	free(seqs);
	free_list(names, n);
	strbuf_release(&buf);
	return st->findings[DB_CHECK_ERROR] ? 1 : 0;
}
