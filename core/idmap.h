/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/idmap.h - interning: a hash index over items numbered 0, 1, 2, ...
 * that the caller keeps in its own array (stacks, frames, strings).
 *
 * The index maps a 64-bit hash to the items having it, in a chain; the
 * caller compares the items themselves, so collisions cost a comparison,
 * never a wrong match:
 *
 *   for (uint32_t id = idmap_first(&m, h); id != IDMAP_NONE; id = idmap_next(&m, id))
 *           if (equal(&items[id], &want)) return id;
 *   id = n_items++; ...; idmap_add(&m, h, id);
 */
#ifndef DCPI_CORE_IDMAP_H
#define DCPI_CORE_IDMAP_H

#include <stddef.h>
#include <stdint.h>

#include "core/u64map.h"

#define IDMAP_NONE UINT32_MAX

struct idmap {
	struct u64map head;     /* hash -> newest id + 1 */
	uint32_t *next;         /* id -> the previous id with the same hash, or IDMAP_NONE */
	size_t n, alloc;
};

#define IDMAP_INIT { U64MAP_INIT, NULL, 0, 0 }

void idmap_release(struct idmap *m);
/* Forgets every item, keeping the storage. */
void idmap_clear(struct idmap *m);

uint32_t idmap_first(const struct idmap *m, uint64_t hash);
static inline uint32_t idmap_next(const struct idmap *m, uint32_t id)
{
	return m->next[id];
}

/* Adds item id, which must be the number of items added so far. */
void idmap_add(struct idmap *m, uint64_t hash, uint32_t id);

#endif
