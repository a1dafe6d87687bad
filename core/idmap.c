/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/idmap.c - hash chains over caller-numbered items.
 */
#include "config.h"

#include "core/idmap.h"

#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "core/xalloc.h"

void idmap_release(struct idmap *m)
{
	u64map_release(&m->head);
	free(m->next);
	memset(m, 0, sizeof(*m));
}

void idmap_clear(struct idmap *m)
{
	u64map_clear(&m->head);
	m->n = 0;
}

uint32_t idmap_first(const struct idmap *m, uint64_t hash)
{
	uint64_t v;

	return u64map_get(&m->head, hash, &v) ? (uint32_t)(v - 1) : IDMAP_NONE;
}

void idmap_add(struct idmap *m, uint64_t hash, uint32_t id)
{
	uint64_t *head;

	if (id != m->n)
		BUG("idmap_add: item %u added as number %zu", id, m->n);
	ALLOC_GROW(m->next, m->n + 1, m->alloc);
	head = u64map_slot(&m->head, hash);
	m->next[id] = *head ? (uint32_t)(*head - 1) : IDMAP_NONE;
	*head = (uint64_t)id + 1;
	m->n++;
}
