/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/damage-log.c - records what readers found damaged (db_damage(),
 * db/db.h): an entry in the handle's log (db/db-int.h), which db/damage.c
 * lists, and the message; and the count of errors reported so.
 */
#include "config.h"
#include "db/db.h"
#include "db/db-int.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- what readers found damaged --------------------------------------- */

static pthread_mutex_t damage_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned damage_errors;  /* under damage_lock */

struct db_damage_log *db_damage_log(struct db *db)
{
	struct db_damage_log *log;

	pthread_mutex_lock(&damage_lock);
	if (!db->damage) {
		db->damage = XNEW(struct db_damage_log);
		pthread_mutex_init(&db->damage->lock, NULL);
	}
	log = db->damage;
	pthread_mutex_unlock(&damage_lock);
	return log;
}

/* The image an epoch file belongs to, by its name (allocated), or NULL. */
static char *key_of(const char *name)
{
	struct db_profile_id id;
	size_t n = strlen(name);

	if (db_profile_name_parse(name, &id))
		return xstrdup(id.key);
	if (n > 7 && !strcmp(name + n - 7, ".values"))
		return xstrndup(name, n - 7);
	if (n > 9 && !strncmp(name, "perf-", 5) && !strcmp(name + n - 4, ".map"))
		return xasprintf("anon-%.*s", (int)(n - 9), name + 5);
	return NULL;
}

int db_damage(struct db *db, enum db_damage_kind kind, uint32_t seq, const char *name,
	      const char *fmt, ...)
{
	struct db_damage_log *log = db_damage_log(db);
	struct strbuf why = STRBUF_INIT;
	struct db_damage_entry *e;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&why, fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&log->lock);
	for (size_t i = 0; i < log->n; i++) {
		e = log->v[i];
		if (!e->forgotten && e->d.kind == kind && e->d.seq == seq &&
		    !strcmp(e->d.name, name) && !strcmp(e->d.why, why.buf)) {
			pthread_mutex_unlock(&log->lock);
			strbuf_release(&why);
			return -1;
		}
	}
	e = XNEW(struct db_damage_entry);
	e->d.kind = kind;
	e->d.seq = seq;
	e->d.name = xstrdup(name);
	e->d.path = seq ? db_epoch_file_path(db, seq, name) : xasprintf("%s/%s", db->path, name);
	e->d.key = key_of(name);
	e->d.why = strbuf_detach(&why, NULL);
	ALLOC_GROW(log->v, log->n + 1, log->alloc);
	log->v[log->n++] = e;
	pthread_mutex_unlock(&log->lock);
	if (kind == DB_UNVERIFIED) {
		warning("%s: %s", e->d.path, e->d.why);
	} else {
		pthread_mutex_lock(&damage_lock);
		damage_errors++;
		pthread_mutex_unlock(&damage_lock);
		errorf("%s: %s", e->d.path, e->d.why);
	}
	return -1;
}

unsigned db_damage_errors(void)
{
	unsigned n;

	pthread_mutex_lock(&damage_lock);
	n = damage_errors;
	pthread_mutex_unlock(&damage_lock);
	return n;
}

void db_damage_release(struct db *db)
{
	struct db_damage_log *log = db->damage;

	if (!log)
		return;
	for (size_t i = 0; i < log->n; i++) {
		struct db_damage_entry *e = log->v[i];

		free((char *)e->d.name);
		free((char *)e->d.path);
		free((char *)e->d.key);
		free((char *)e->d.why);
		free(e);
	}
	free(log->v);
	pthread_mutex_destroy(&log->lock);
	free(log);
	db->damage = NULL;
}
