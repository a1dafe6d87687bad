/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A database's upkeep: its census, retention and snapshot collection (db/upkeep.h). */
#include "config.h"
#include "db/upkeep.h"
#include "db/binaries.h"
#include "db/db-int.h"
#include "db/db.h"
#include "db/fsio.h"
#include "db/textrec.h"
#include "core/die.h"
#include "core/search.h"
#include "core/strbuf.h"
#include "core/testpoint.h"
#include "core/timeutil.h"
#include "core/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* ---- disk use --------------------------------------------------------------- */

static uint64_t st_bytes(const struct stat *st)
{
	return (uint64_t)st->st_blocks * 512;
}

/*
 * Disk use of the entry `name` under dirfd: a file's blocks, or a
 * directory's own and those of everything in it, down to depth levels.
 * *files counts the regular files.
 */
static uint64_t entry_bytes(int dirfd, const char *name, int depth, uint64_t *files)
{
	struct stat st;
	struct dirent *de;
	uint64_t n;
	DIR *d;
	int fd;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return 0;
	n = st_bytes(&st);
	if (S_ISREG(st.st_mode) && files)
		(*files)++;
	if (!S_ISDIR(st.st_mode) || depth <= 0)
		return n;
	if (!(d = fsio_opendir_at(dirfd, name, &fd)))
		return n;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n += entry_bytes(fd, de->d_name, depth - 1, files);
	closedir(d);
	return n;
}

/* Temp files directly under the directory `name` (writers' leftovers in an epoch). */
static void count_temps(int dirfd, const char *name, struct db_census *c)
{
	struct dirent *de;
	int fd;
	DIR *d = fsio_opendir_at(dirfd, name, &fd);

	if (!d)
		return;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, FSIO_TMP_PREFIX, strlen(FSIO_TMP_PREFIX))) {
			c->temp_bytes += entry_bytes(fd, de->d_name, 1, NULL);
			c->n_temps++;
		}
	closedir(d);
}

uint64_t db_disk_usage(struct db *db)
{
	return entry_bytes(db->dirfd, ".", 3, NULL);
}

/* ---- the census --------------------------------------------------------------- */

/* A snapshot and the epochs that name it. */
struct census_binary {
	char hex[2 * 32 + 1];           /* the build-id */
	char name[2 * 32 + 2 + DB_CALC_MODEL_MAX];  /* the file: hex, or HEX.MODEL in calc/ */
	uint64_t bytes;
	size_t refs;
};

struct census_priv {
	struct census_binary *bins;
	size_t n_bins, alloc_bins;
	struct census_binary *tabs;     /* the cached unwind tables (unwind/) */
	size_t n_tabs, alloc_tabs;
	struct census_binary *calcs;    /* the cached analyses (calc/), sorted by name */
	size_t n_calcs, alloc_calcs;
	bool images_ok;         /* every epoch's image index was read */
	/* Per epoch: the snapshots it names (indices into bins), -1 terminated lists. */
	size_t **uses;
};

static int cmp_epoch(const void *a, const void *b)
{
	const struct db_epoch_usage *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_bin(const void *a, const void *b)
{
	return strcmp(((const struct census_binary *)a)->name, ((const struct census_binary *)b)->name);
}

/* Counts a use of every cached analysis of build-id hex (v sorted by name, so by build-id). */
static void use_calcs(struct census_binary *v, size_t n, const char *hex)
{
	size_t lo = LOWER_BOUND(n, k, strcmp(v[k].hex, hex) < 0);

	for (; lo < n && !strcmp(v[lo].hex, hex); lo++)
		v[lo].refs++;
}

/* Reads an epoch's meta without reporting a bad one (the checker names it). */
static void read_meta(struct db *db, struct db_epoch_usage *e)
{
	struct strbuf sb = STRBUF_INIT;
	struct epoch_meta m;
	const char *why;
	char name[32];
	int fd;

	snprintf(name, sizeof(name), "%06" PRIu32, e->seq);
	fd = openat(db->dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	epoch_meta_init(&m);
	if (!fsio_read_at(fd, "meta", name, TEXTREC_MAX_SIZE, &sb) &&
	    !epoch_meta_parse(sb.buf, sb.len, &m, &why) && m.seq == e->seq) {
		e->meta_ok = true;
		e->label = m.label ? xstrdup(m.label) : NULL;
		e->start_ns = m.start_ns;
		e->end_ns = m.end_ns;
	}
	epoch_meta_release(&m);
	close(fd);
	strbuf_release(&sb);
}

/* The length of the build-id file `name` of dir is named by, or 0 if none. */
static size_t build_id_of(const char *dir, const char *name)
{
	size_t n;

	if (!strcmp(dir, DB_CALC_DIR))
		return db_calc_name_valid(name, &n) ? n : 0;
	return db_binary_name_valid(name) ? strlen(name) : 0;
}

/* The files named by build-id in the directory dir (binaries/, unwind/, calc/), sorted. */
static void list_by_build_id(struct db *db, const char *dir, struct census_binary **v, size_t *n,
			     size_t *alloc)
{
	struct dirent *de;
	int fd;
	DIR *d = fsio_opendir_at(db->dirfd, dir, &fd);

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;
		size_t hex = build_id_of(dir, de->d_name);

		if (!hex || fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		ALLOC_GROW(*v, *n + 1, *alloc);
		memset(&(*v)[*n], 0, sizeof((*v)[0]));
		/* A valid name has at most 64 digits (and a model of at most 32 characters). */
		memcpy((*v)[*n].hex, de->d_name, hex);
		memcpy((*v)[*n].name, de->d_name, strlen(de->d_name) + 1);
		(*v)[(*n)++].bytes = st_bytes(&st);
	}
	closedir(d);
	if (*n)
		qsort(*v, *n, sizeof(**v), cmp_bin);
}

static void list_binaries(struct db *db, struct db_census *c, struct census_priv *p)
{
	list_by_build_id(db, DB_BINARIES_DIR, &p->bins, &p->n_bins, &p->alloc_bins);
	c->n_binaries = p->n_bins;
	list_by_build_id(db, DB_UNWIND_DIR, &p->tabs, &p->n_tabs, &p->alloc_tabs);
	c->n_unwind = p->n_tabs;
	list_by_build_id(db, DB_CALC_DIR, &p->calcs, &p->n_calcs, &p->alloc_calcs);
	c->n_calc = p->n_calcs;
}

/* The snapshots epoch i names by build-id (only those the database holds). */
static void epoch_uses(struct db *db, struct db_census *c, struct census_priv *p, size_t i)
{
	struct image_index idx;
	struct strbuf hex = STRBUF_INIT;
	size_t n = 0, *v = xcalloc(1, sizeof(*v));

	v[0] = (size_t)-1;
	p->uses[i] = v;
	if (!p->n_bins && !p->n_tabs && !p->n_calcs)
		return;
	/* db_images_load reports an unreadable index: the checker's business too. */
	if (db_images_load(db, c->epochs[i].seq, &idx)) {
		p->images_ok = false;
		return;
	}
	for (size_t k = 0; k < idx.n; k++) {
		struct census_binary key, *b;
		bool seen = false;

		if (!idx.v[k].build_id_len)
			continue;
		strbuf_reset(&hex);
		strbuf_add_build_id(&hex, &idx.v[k]);
		snprintf(key.hex, sizeof(key.hex), "%s", hex.buf);
		snprintf(key.name, sizeof(key.name), "%s", hex.buf);
		use_calcs(p->calcs, p->n_calcs, key.hex);
		if (p->n_tabs && (b = bsearch(&key, p->tabs, p->n_tabs, sizeof(*p->tabs), cmp_bin)))
			b->refs++;
		b = p->n_bins ? bsearch(&key, p->bins, p->n_bins, sizeof(*p->bins), cmp_bin) : NULL;
		if (!b)
			continue;
		/* Each snapshot once per epoch. */
		for (size_t j = 0; j < n && !seen; j++)
			seen = v[j] == (size_t)(b - p->bins);
		if (seen)
			continue;
		v = xrealloc(v, (n + 2) * sizeof(*v));
		v[n++] = (size_t)(b - p->bins);
		v[n] = (size_t)-1;
		b->refs++;
	}
	p->uses[i] = v;
	image_index_release(&idx);
	strbuf_release(&hex);
}

/* A memo of calc/ (named by a digest, not a build-id) is in use while its epoch is there. */
static void use_memos(struct db *db, struct db_census *c, struct census_priv *p)
{
	int fd = -1;

	for (size_t k = 0; k < p->n_calcs; k++) {
		struct census_binary *b = &p->calcs[k];
		struct db_epoch_usage key;

		if (b->refs || strlen(b->hex) != 64)
			continue;
		if (fd < 0 && (fd = openat(db->dirfd, DB_CALC_DIR,
					   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			return;
		if (db_calc_memo_epoch(fd, b->name, &key.seq) == 1 && c->n &&
		    bsearch(&key, c->epochs, c->n, sizeof(*c->epochs), cmp_epoch))
			b->refs++;
	}
	if (fd >= 0)
		close(fd);
}

int db_census_take(struct db *db, struct db_census *c)
{
	int fd;
	DIR *d = fsio_opendir_at(db->dirfd, ".", &fd);
	struct census_priv *p;
	struct dirent *de;
	size_t alloc = 0;

	memset(c, 0, sizeof(*c));
	if (!d)
		return errorf_errno("cannot read database '%s'", db->path);
	p = XNEW(struct census_priv);
	memset(p, 0, sizeof(*p));
	p->images_ok = true;
	c->priv = p;
	rewinddir(d);
	c->total_bytes = entry_bytes(db->dirfd, ".", 0, NULL);
	while ((de = readdir(d))) {
		const char *name = de->d_name;
		uint64_t files = 0, bytes;
		uint32_t seq;

		if (!strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		bytes = entry_bytes(db->dirfd, name, 2, &files);
		c->total_bytes += bytes;
		if (db_epoch_dirname_parse(name, &seq)) {
			struct db_epoch_usage *e;

			ALLOC_GROW(c->epochs, c->n + 1, alloc);
			e = &c->epochs[c->n++];
			memset(e, 0, sizeof(*e));
			e->seq = seq;
			e->bytes = bytes;
			e->files = files;
			count_temps(db->dirfd, name, c);
		} else if (!strcmp(name, DB_BINARIES_DIR)) {
			c->binaries_bytes = bytes;
			count_temps(db->dirfd, name, c);
		} else if (!strcmp(name, DB_UNWIND_DIR)) {
			c->unwind_bytes = bytes;
			count_temps(db->dirfd, name, c);
		} else if (!strcmp(name, DB_CALC_DIR)) {
			c->calc_bytes = bytes;
			count_temps(db->dirfd, name, c);
		} else if (!strncmp(name, FSIO_TMP_PREFIX, strlen(FSIO_TMP_PREFIX))) {
			c->temp_bytes += bytes;
			c->n_temps++;
		}
	}
	closedir(d);
	if (c->n)
		qsort(c->epochs, c->n, sizeof(*c->epochs), cmp_epoch);
	list_binaries(db, c, p);
	p->uses = xcalloc(c->n ? c->n : 1, sizeof(*p->uses));
	for (size_t i = 0; i < c->n; i++) {
		read_meta(db, &c->epochs[i]);
		epoch_uses(db, c, p, i);
	}
	use_memos(db, c, p);
	for (size_t k = 0; k < p->n_bins && p->images_ok; k++)
		c->n_unused_binaries += !p->bins[k].refs;
	for (size_t k = 0; k < p->n_tabs && p->images_ok; k++)
		c->n_unused_unwind += !p->tabs[k].refs;
	for (size_t k = 0; k < p->n_calcs && p->images_ok; k++)
		c->n_unused_calc += !p->calcs[k].refs;
	if (db_epoch_current(db, &c->current))
		c->current = 0;
	return 0;
}

void db_census_release(struct db_census *c)
{
	struct census_priv *p = c->priv;

	for (size_t i = 0; i < c->n; i++)
		free(c->epochs[i].label);
	if (p) {
		for (size_t i = 0; i < c->n; i++)
			free(p->uses[i]);
		free(p->uses);
		free(p->bins);
		free(p->tabs);
		free(p->calcs);
		free(p);
	}
	free(c->epochs);
	memset(c, 0, sizeof(*c));
}

/* ---- the plan ------------------------------------------------------------------- */

bool db_retention_empty(const struct db_retention *r)
{
	return !r->max_bytes && !r->max_age_ns && !r->keep && !r->label;
}

static bool selected(const struct db_retention *r, const struct db_epoch_usage *e)
{
	return !r->label || (e->meta_ok && e->label && !strcmp(e->label, r->label));
}

static bool is_candidate(const struct db_census *c, const struct db_retention *r, size_t i,
			 uint32_t protect)
{
	const struct db_epoch_usage *e = &c->epochs[i];

	if (i == c->n - 1 || e->seq == c->current || (protect && e->seq == protect))
		return false;
	return selected(r, e);
}

/* Marks epoch i removed: its bytes, and those of snapshots only it still named. */
static uint64_t take(const struct db_census *c, size_t *refs, bool *gone, size_t i)
{
	const struct census_priv *p = c->priv;
	uint64_t b = c->epochs[i].bytes;

	gone[i] = true;
	for (const size_t *u = p->uses[i]; *u != (size_t)-1; u++)
		if (--refs[*u] == 0 && p->images_ok)
			b += p->bins[*u].bytes;
	return b;
}

void db_prune_plan_make(const struct db_census *c, const struct db_retention *r,
			uint32_t protect, int64_t now_ns, struct db_prune_plan *plan)
{
	const struct census_priv *p = c->priv;
	bool *gone = xcalloc(c->n ? c->n : 1, sizeof(*gone));
	size_t *refs = xcalloc(p->n_bins ? p->n_bins : 1, sizeof(*refs));
	uint64_t size = c->total_bytes, freed = 0;
	uint32_t kept = 0;

	memset(plan, 0, sizeof(*plan));
	for (size_t k = 0; k < p->n_bins; k++) {
		refs[k] = p->bins[k].refs;
		/* Snapshots nothing names go with the next collection. */
		if (!refs[k] && p->images_ok)
			size -= p->bins[k].bytes;
	}
	/* --keep: the N latest (selected) epochs stay, protected ones among them. */
	for (size_t i = c->n; r->keep && i-- > 0;)
		if (selected(r, &c->epochs[i]) && ++kept > r->keep && is_candidate(c, r, i, protect))
			freed += take(c, refs, gone, i);
	for (size_t i = 0; i < c->n; i++) {
		const struct db_epoch_usage *e = &c->epochs[i];
		int64_t t = e->end_ns ? e->end_ns : e->start_ns;

		if (gone[i] || !is_candidate(c, r, i, protect))
			continue;
		if ((r->max_age_ns && e->meta_ok && t && now_ns - t > r->max_age_ns) ||
		    (r->label && !r->max_bytes && !r->max_age_ns && !r->keep))
			freed += take(c, refs, gone, i);
	}
	/* --max-size: the oldest go until the rest fits. */
	for (size_t i = 0; r->max_bytes && i < c->n && size > freed + r->max_bytes; i++)
		if (!gone[i] && is_candidate(c, r, i, protect))
			freed += take(c, refs, gone, i);
	for (size_t i = 0; i < c->n; i++) {
		if (!gone[i])
			continue;
		plan->seqs = xrealloc(plan->seqs, (plan->n + 1) * sizeof(*plan->seqs));
		plan->seqs[plan->n++] = c->epochs[i].seq;
		plan->bytes += c->epochs[i].bytes;
	}
	plan->bytes_after = size > freed ? size - freed : 0;
	plan->over_limit = r->max_bytes && plan->bytes_after > r->max_bytes;
	free(gone);
	free(refs);
}

void db_prune_plan_release(struct db_prune_plan *p)
{
	free(p->seqs);
	memset(p, 0, sizeof(*p));
}

/* ---- removal --------------------------------------------------------------------- */

static bool syncing(const struct db *db)
{
	return !(db->flags & DB_NOSYNC);
}

int db_epochs_remove(struct db *db, const uint32_t *seqs, size_t n, struct db_prune_stats *st)
{
	char (*tmp)[96] = xcalloc(n ? n : 1, sizeof(*tmp));
	size_t moved = 0;
	uint32_t cur = 0;
	int r = 0;

	if (!(db->flags & DB_WRITE))
		BUG("removing epochs of database '%s' opened read-only", db->path);
	db_dirs_forget(db);  /* none of them read through a directory kept */
	if (db_epoch_current(db, &cur))
		cur = 0;
	/* Oldest first: after a crash the survivors are the newest. */
	for (; moved < n; moved++) {
		char name[32], base[48], what[64];
		uint64_t bytes;

		if (seqs[moved] == cur) {
			r = errorf("refusing to remove epoch %" PRIu32 " of '%s': a writer fills it",
				   seqs[moved], db->path);
			break;
		}
		snprintf(name, sizeof(name), "%06" PRIu32, seqs[moved]);
		snprintf(base, sizeof(base), "prune-%s", name);
		snprintf(what, sizeof(what), "epoch %" PRIu32, seqs[moved]);
		bytes = entry_bytes(db->dirfd, name, 1, NULL);
		if (fsio_rename_to_temp(db->dirfd, name, base, tmp[moved], sizeof(tmp[0]), what)) {
			r = -1;
			break;
		}
		st->epochs++;
		st->epoch_bytes += bytes;
		if (seqs[moved] > st->last_seq)
			st->last_seq = seqs[moved];
		TEST_POINT("prune-after-rename");
	}
	/* The renames must be on disk before any file of theirs goes. */
	if (moved && syncing(db) && fsio_fsync_dir(db->dirfd, db->path))
		r = -1;
	for (size_t i = 0; i < moved; i++) {
		if (fsio_remove_tree(db->dirfd, tmp[i]))
			warning_errno("cannot delete '%s/%s' (the next writer will)", db->path, tmp[i]);
		TEST_POINT("prune-after-unlink");
	}
	free(tmp);
	return r;
}

/*
 * Removes the files of dir (binaries/, unwind/) in v[0..n) that no epoch
 * names, counting them in *count and *bytes; each is listed first, by its
 * name with prefix before it.
 */
static int remove_unused(struct db *db, const char *dir, const char *prefix,
			 const struct census_binary *v, size_t n, bool dry_run, uint64_t *count,
			 uint64_t *bytes, void (*list)(void *ctx, const char *hex, uint64_t bytes),
			 void *ctx)
{
	int fd = -1, r = 0;
	size_t removed = 0;
	char name[128];

	if (!n)
		return 0;
	if (!dry_run &&
	    (fd = openat(db->dirfd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return errorf_errno("cannot open '%s/%s'", db->path, dir);
	for (size_t k = 0; k < n; k++) {
		if (v[k].refs)
			continue;
		snprintf(name, sizeof(name), "%s%s", prefix, v[k].name);
		if (list)
			list(ctx, name, v[k].bytes);
		if (!dry_run && unlinkat(fd, v[k].name, 0) && errno != ENOENT) {
			r = errorf_errno("cannot remove '%s/%s/%s'", db->path, dir, v[k].name);
			continue;
		}
		removed++;
		(*count)++;
		*bytes += v[k].bytes;
		TEST_POINT("gc-after-unlink");
	}
	if (removed && !dry_run && syncing(db) && fsio_fsync_dir(fd, db->path))
		r = -1;
	if (fd >= 0)
		close(fd);
	return r;
}

int db_binaries_gc(struct db *db, bool dry_run, struct db_prune_stats *st,
		   void (*list)(void *ctx, const char *hex, uint64_t bytes), void *ctx)
{
	struct db_census c;
	struct census_priv *p;
	int r = 0;

	if (!dry_run && !(db->flags & DB_WRITE))
		BUG("collecting snapshots of database '%s' opened read-only", db->path);
	if (db_census_take(db, &c))
		return -1;
	p = c.priv;
	if (!p->images_ok && (p->n_bins || p->n_tabs || p->n_calcs)) {
		warning("an image index of '%s' is unreadable: keeping every binary snapshot",
			db->path);
		r = 1;
	} else if (remove_unused(db, DB_BINARIES_DIR, "", p->bins, p->n_bins, dry_run, &st->binaries,
				 &st->binary_bytes, list, ctx) ||
		   remove_unused(db, DB_UNWIND_DIR, DB_UNWIND_DIR "/", p->tabs, p->n_tabs, dry_run,
				 &st->unwind_tables, &st->unwind_bytes, list, ctx) ||
		   remove_unused(db, DB_CALC_DIR, DB_CALC_DIR "/", p->calcs, p->n_calcs, dry_run,
				 &st->calc_files, &st->calc_bytes, list, ctx)) {
		r = -1;
	}
	db_census_release(&c);
	return r;
}

/*
 * Removing epochs frees a little less than their size: the database
 * directory keeps the blocks its longer temp names needed (directories do
 * not shrink).  So a size limit is checked against the disk afterwards,
 * and another pass removes more if needed.
 */
#define RETAIN_PASSES 4

int db_retain(struct db *db, const struct db_retention *r, uint32_t protect,
	      struct db_prune_stats *st, uint64_t *bytes_after)
{
	int ret = 0;

	for (int pass = 0; pass < RETAIN_PASSES && !ret; pass++) {
		struct db_census c;
		struct db_prune_plan plan;
		size_t n;

		if (db_census_take(db, &c))
			return -1;
		db_prune_plan_make(&c, r, protect, time_now_ns(), &plan);
		*bytes_after = c.total_bytes;
		/* Snapshots left unused by an earlier run (one that died, say) go too. */
		if ((n = plan.n) || c.n_unused_binaries || c.n_unused_calc) {
			if (n)
				ret = db_epochs_remove(db, plan.seqs, plan.n, st);
			if (db_binaries_gc(db, false, st, NULL, NULL) < 0)
				ret = -1;
			*bytes_after = db_disk_usage(db);
		}
		db_prune_plan_release(&plan);
		db_census_release(&c);
		if (!n || !r->max_bytes || *bytes_after <= r->max_bytes)
			break;
	}
	return ret;
}
