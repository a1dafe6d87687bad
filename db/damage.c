/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What readers found damaged, missing or unverified (db/damage.h). */
#include "config.h"
#include "db/damage.h"
#include "db/db-int.h"
#include "db/db.h"
#include "core/die.h"
#include "core/json.h"
#include "core/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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

size_t db_damage_list(struct db *db, uint32_t seq, unsigned kinds,
		      const struct db_damage ***out)
{
	struct db_damage_log *log = db_damage_log(db);
	size_t n = 0;

	pthread_mutex_lock(&log->lock);
	*out = xcalloc(log->n ? log->n : 1, sizeof(**out));
	for (size_t i = 0; i < log->n; i++) {
		const struct db_damage_entry *e = log->v[i];

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
	struct db_damage_log *log = db_damage_log(db);

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
