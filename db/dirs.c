/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/dirs.c - the directories of a database kept open for the reads that
 * follow (db-int.h: db_epoch_dir(), db_subdir()).  Reading the 10,000
 * profiles of an epoch opened and closed its directory for each of them
 * (and binaries/, absent, was looked for once per image): two system
 * calls of five a file.  A directory is kept for a second, so that what
 * changes in the database (an epoch pruned, snapshots written) is seen
 * soon, as when it was opened every time.
 */
#include "config.h"

#include "db/db-int.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/die.h"
#include "core/timeutil.h"
#include "core/xalloc.h"

#define KEEP_NS 1000000000
#define KEPT 4

/* A directory kept: an epoch's (seq) or a folder's (name). */
struct db_dir {
	uint32_t seq;
	char name[16];          /* "" for an epoch */
	int fd;                 /* -1: a folder that is not there */
	int users;              /* borrowers of fd */
	int64_t opened_ns;      /* 0: the slot is free */
};

struct db_dirs {
	pthread_mutex_t lock;
	struct db_dir v[KEPT];
};

static pthread_mutex_t make_lock = PTHREAD_MUTEX_INITIALIZER;

static struct db_dirs *dirs_of(struct db *db)
{
	pthread_mutex_lock(&make_lock);
	if (!db->dirs) {
		db->dirs = XNEW(struct db_dirs);
		pthread_mutex_init(&db->dirs->lock, NULL);
	}
	pthread_mutex_unlock(&make_lock);
	return db->dirs;
}

static void drop(struct db_dir *d)
{
	if (d->fd >= 0 && !d->users)
		close(d->fd);
	memset(d, 0, sizeof(*d));
	d->fd = -1;
}

/*
 * The kept directory seq or name (fresh), borrowed; else open(db, seq,
 * name) opens one, kept in a free slot if there is one (else the caller
 * closes it at db_dir_put()).  Lock held.
 */
static int get(struct db *db, struct db_dirs *ds, uint32_t seq, const char *name,
	       int (*open_it)(struct db *db, uint32_t seq, const char *name))
{
	int64_t now = time_monotonic_ns();
	struct db_dir *slot = NULL;
	int fd;

	for (size_t k = 0; k < KEPT; k++) {
		struct db_dir *d = &ds->v[k];

		if (d->opened_ns && now - d->opened_ns > KEEP_NS && !d->users)
			drop(d);
		if (d->opened_ns && d->seq == seq && !strcmp(d->name, name)) {
			if (d->fd >= 0)
				d->users++;
			else
				errno = ENOENT;
			return d->fd;
		}
		if (!d->opened_ns && !slot)
			slot = d;
	}
	fd = open_it(db, seq, name);
	/* a folder that is not there is believed too; an epoch that is not, not */
	if (slot && (fd >= 0 || (*name && errno == ENOENT))) {
		slot->seq = seq;
		snprintf(slot->name, sizeof(slot->name), "%s", name);
		slot->fd = fd;
		slot->users = fd >= 0;
		slot->opened_ns = now;
	}
	return fd;
}

static int open_epoch(struct db *db, uint32_t seq, const char *name)
{
	return db_open_epoch(db, seq);
}

static int open_folder(struct db *db, uint32_t seq, const char *name)
{
	return openat(db->dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int db_epoch_dir(struct db *db, uint32_t seq)
{
	struct db_dirs *ds = dirs_of(db);
	int fd;

	pthread_mutex_lock(&ds->lock);
	fd = get(db, ds, seq, "", open_epoch);
	pthread_mutex_unlock(&ds->lock);
	return fd;
}

int db_subdir(struct db *db, const char *name)
{
	struct db_dirs *ds = dirs_of(db);
	int fd;

	if (strlen(name) >= sizeof(ds->v[0].name))
		BUG("folder name '%s' too long to keep", name);
	pthread_mutex_lock(&ds->lock);
	fd = get(db, ds, 0, name, open_folder);
	pthread_mutex_unlock(&ds->lock);
	return fd;
}

void db_dir_put(struct db *db, int fd)
{
	struct db_dirs *ds = db->dirs;
	bool kept = false;

	if (fd < 0)
		return;
	pthread_mutex_lock(&ds->lock);
	for (size_t k = 0; k < KEPT && !kept; k++)
		if (ds->v[k].opened_ns && ds->v[k].fd == fd) {
			ds->v[k].users--;
			kept = true;
		}
	pthread_mutex_unlock(&ds->lock);
	if (!kept)
		close(fd);
}

void db_dirs_forget(struct db *db)
{
	struct db_dirs *ds = db->dirs;

	if (!ds)
		return;
	pthread_mutex_lock(&ds->lock);
	for (size_t k = 0; k < KEPT; k++) {
		struct db_dir *d = &ds->v[k];

		if (!d->opened_ns)
			continue;
		if (d->users) {
			/* its borrowers close it: no longer kept */
			d->opened_ns = 0;
			continue;
		}
		drop(d);
	}
	pthread_mutex_unlock(&ds->lock);
}

void db_dirs_release(struct db *db)
{
	if (!db->dirs)
		return;
	db_dirs_forget(db);
	pthread_mutex_destroy(&db->dirs->lock);
	free(db->dirs);
	db->dirs = NULL;
}
