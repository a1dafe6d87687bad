/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "core/u64map.h"
#include "core/hash.h"
#include "core/xalloc.h"

#include <stdlib.h>
#include <string.h>

void u64map_init(struct u64map *m)
{
	memset(m, 0, sizeof(*m));
}

void u64map_release(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	u64map_init(m);
}

void u64map_clear(struct u64map *m)
{
	if (m->cap)
		memset(m->used, 0, m->cap);
	m->size = 0;
}

static size_t find(const struct u64map *m, uint64_t key)
{
	size_t mask = m->cap - 1;
	size_t i = hash_u64(key) & mask;

	while (m->used[i] && m->keys[i] != key)
		i = (i + 1) & mask;
	return i;
}

static void grow(struct u64map *m)
{
	struct u64map old = *m;

	m->cap = old.cap ? old.cap * 2 : 64;
	m->keys = xmalloc(m->cap * sizeof(*m->keys));
	m->vals = xmalloc(m->cap * sizeof(*m->vals));
	m->used = xcalloc(m->cap, 1);
	m->size = 0;
	for (size_t i = 0; i < old.cap; i++) {
		if (old.used[i]) {
			size_t j = find(m, old.keys[i]);

			m->used[j] = 1;
			m->keys[j] = old.keys[i];
			m->vals[j] = old.vals[i];
			m->size++;
		}
	}
	free(old.keys);
	free(old.vals);
	free(old.used);
}

uint64_t *u64map_slot(struct u64map *m, uint64_t key)
{
	size_t i;

	if ((m->size + 1) * 4 > m->cap * 3)
		grow(m);
	i = find(m, key);
	if (!m->used[i]) {
		m->used[i] = 1;
		m->keys[i] = key;
		m->vals[i] = 0;
		m->size++;
	}
	return &m->vals[i];
}

bool u64map_get(const struct u64map *m, uint64_t key, uint64_t *val)
{
	size_t i;

	if (!m->cap)
		return false;
	i = find(m, key);
	if (!m->used[i])
		return false;
	if (val)
		*val = m->vals[i];
	return true;
}

bool u64map_next(const struct u64map *m, size_t *iter, uint64_t *key, uint64_t *val)
{
	for (size_t i = *iter; i < m->cap; i++) {
		if (m->used[i]) {
			*key = m->keys[i];
			if (val)
				*val = m->vals[i];
			*iter = i + 1;
			return true;
		}
	}
	*iter = m->cap;
	return false;
}
