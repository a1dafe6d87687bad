/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/u64map.h - an open-addressing hash map from uint64_t keys to uint64_t
 * values, built for counting (offset -> samples, (pid,pc) -> count).
 *
 * Linear probing, power-of-two capacity, grows at 3/4 load.  Keys are any
 * uint64_t (an occupancy bitmap, not a reserved key, marks used slots).  No
 * deletion except u64map_clear().  The map owns its storage.
 */
#ifndef DCPI_CORE_U64MAP_H
#define DCPI_CORE_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64map {
	uint64_t *keys;
	uint64_t *vals;
	uint8_t *used;
	size_t cap;  /* slots, a power of two or 0 */
	size_t size; /* used slots */
};

#define U64MAP_INIT { 0 }

void u64map_init(struct u64map *m);
void u64map_release(struct u64map *m);
/* Empties the map, keeping its storage. */
void u64map_clear(struct u64map *m);
/* Returns a pointer to the value of key, inserting 0 if absent. */
uint64_t *u64map_slot(struct u64map *m, uint64_t key);
/* Adds delta to the value of key (inserting it). */
static inline void u64map_add(struct u64map *m, uint64_t key, uint64_t delta)
{
	*u64map_slot(m, key) += delta;
}
/* Returns the value of key through *val and true, or false if absent. */
bool u64map_get(const struct u64map *m, uint64_t key, uint64_t *val);

/*
 * Iteration: for (size_t i = 0; u64map_next(m, &i, &k, &v); ) ...
 * Order is unspecified.  The map must not change during iteration.
 */
bool u64map_next(const struct u64map *m, size_t *iter, uint64_t *key, uint64_t *val);

#endif
