/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What readers found damaged, missing or unverified (db/damage.h). */
#include "config.h"
#include "db/damage.h"
#include "db/db.h"
#include "core/die.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	struct db_damage d;
	bool forgotten;
};

struct db_damage_log {
	pthread_mutex_t lock;
	struct entry **v;     /* pointers: entries never move */
	size_t n, alloc;
};

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned n_errors;  /* under init_lock */

const char *db_damage_kind_name(enum db_damage_kind kind)
{
	switch (kind) {
	case DB_DAMAGED:
		return "damaged";
	case DB_MISSING:
		return "missing";
	case DB_UNVERIFIED:
		return "unverified";
	}
	return "?";
}

static struct db_damage_log *get_log(struct db *db)
{
	struct db_damage_log *log;

	pthread_mutex_lock(&init_lock);
	if (!db->damage) {
		db->damage = XNEW(struct db_damage_log);
		pthread_mutex_init(&db->damage->lock, NULL);
	}
	log = db->damage;
	pthread_mutex_unlock(&init_lock);
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
	struct db_damage_log *log = get_log(db);
	struct strbuf why = STRBUF_INIT;
	struct entry *e;
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
	e = XNEW(struct entry);
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
		pthread_mutex_lock(&init_lock);
		n_errors++;
		pthread_mutex_unlock(&init_lock);
		errorf("%s: %s", e->d.path, e->d.why);
	}
	return -1;
}

size_t db_damage_list(struct db *db, uint32_t seq, unsigned kinds,
		      const struct db_damage ***out)
{
	struct db_damage_log *log = get_log(db);
	size_t n = 0;

	pthread_mutex_lock(&log->lock);
	*out = xcalloc(log->n ? log->n : 1, sizeof(**out));
	for (size_t i = 0; i < log->n; i++) {
		const struct entry *e = log->v[i];

		bool listed = false;

		if (e->forgotten || (seq && e->d.seq != seq) ||
		    (kinds && !(kinds & (1u << e->d.kind))))
			continue;
		/* a file found damaged twice (its header, then its payload) is listed once */
		for (size_t k = 0; k < n && !listed; k++)
			listed = (*out)[k]->kind == e->d.kind && (*out)[k]->seq == e->d.seq &&
				 !strcmp((*out)[k]->name, e->d.name);
		if (!listed)
			(*out)[n++] = &e->d;
	}
	pthread_mutex_unlock(&log->lock);
	return n;
}

bool db_damage_partial(struct db *db, uint32_t seq)
{
	const struct db_damage **v;
	size_t n = db_damage_list(db, seq, DB_DAMAGE_PARTIAL, &v);

	free(v);
	return n > 0;
}

/* True if record d is about image key's files (kallsyms names the kernel and its modules). */
static bool is_of_image(const struct db_damage *d, const char *key)
{
	if (d->key)
		return !strcmp(d->key, key);
	return !strcmp(d->name, "kallsyms") &&
	       (!strcmp(key, "kernel") || !strncmp(key, "mod-", 4));
}

const struct db_damage *db_damage_of_image(struct db *db, uint32_t seq, const char *key)
{
	const struct db_damage **v, *worst = NULL;
	size_t n = db_damage_list(db, seq, 0, &v);

	for (size_t i = 0; i < n; i++)
		if (is_of_image(v[i], key) && (!worst || v[i]->kind < worst->kind))
			worst = v[i];
	free(v);
	return worst;
}

void db_damage_forget(struct db *db, uint32_t seq)
{
	struct db_damage_log *log = get_log(db);

	pthread_mutex_lock(&log->lock);
	for (size_t i = 0; i < log->n; i++)
		if (!seq || log->v[i]->d.seq == seq)
			log->v[i]->forgotten = true;
	pthread_mutex_unlock(&log->lock);
}

static void json_list(struct json_writer *w, const char *key, const struct db_damage **v,
		      size_t n)
{
	json_key(w, key);
	json_array_begin(w);
	for (size_t i = 0; i < n; i++) {
		json_object_begin(w);
		json_key(w, "file");
		json_string(w, v[i]->path);
		json_key(w, "kind");
		json_string(w, db_damage_kind_name(v[i]->kind));
		json_key(w, "why");
		json_string(w, v[i]->why);
		json_object_end(w);
	}
	json_array_end(w);
}

void db_damage_json(struct db *const *dbs, size_t ndbs, struct json_writer *w)
{
	static const unsigned kinds[2] = { DB_DAMAGE_PARTIAL, 1u << DB_UNVERIFIED };
	static const char *const keys[2] = { "incomplete", "unverified" };

	for (int k = 0; k < 2; k++) {
		const struct db_damage **all = NULL;
		size_t n = 0, alloc = 0;

		for (size_t i = 0; i < ndbs; i++) {
			const struct db_damage **v;
			size_t m;
			bool seen = !dbs[i];

			for (size_t j = 0; j < i && !seen; j++)
				seen = dbs[j] == dbs[i];
			if (seen)
				continue;
			m = db_damage_list(dbs[i], 0, kinds[k], &v);
			ALLOC_GROW(all, n + m + 1, alloc);
			memcpy(all + n, v, m * sizeof(*v));
			n += m;
			free(v);
		}
		if (n || !k)
			json_list(w, keys[k], all, n);
		free(all);
	}
}

unsigned db_damage_errors(void)
{
	unsigned n;

	pthread_mutex_lock(&init_lock);
	n = n_errors;
	pthread_mutex_unlock(&init_lock);
	return n;
}

void db_damage_release(struct db *db)
{
	struct db_damage_log *log = db->damage;

	if (!log)
		return;
	for (size_t i = 0; i < log->n; i++) {
		struct entry *e = log->v[i];

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
