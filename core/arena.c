/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/arena.c - pieces allocated one after another, freed together
 * (arena.h).
 */
#include "config.h"

#include "core/arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "core/xalloc.h"

#define CHUNK_MIN 4096
#define CHUNK_MAX (1u << 20)

/* n bytes at an offset of the last chunk that is a multiple of align. */
static char *take(struct arena *a, size_t n, size_t align)
{
	size_t at = (a->used + align - 1) & ~(align - 1);

	if (!a->n || at > a->cap || n > a->cap - at) {
		size_t cap = a->cap ? 2 * a->cap : CHUNK_MIN;

		if (cap > CHUNK_MAX)
			cap = CHUNK_MAX;
		if (cap < n)
			cap = n;
		ALLOC_GROW(a->chunks, a->n + 1, a->alloc);
		a->chunks[a->n++] = xmalloc(cap);
		a->cap = cap;
		at = 0;
	}
	a->used = at + n;
	return a->chunks[a->n - 1] + at;
}

void *arena_calloc(struct arena *a, size_t nmemb, size_t size)
{
	char *p;

	if (size && nmemb > SIZE_MAX / size)
		die("allocation size overflow (%zu x %zu)", nmemb, size);
	p = take(a, nmemb * size, alignof(max_align_t));
	memset(p, 0, nmemb * size);
	return p;
}

char *arena_memdup(struct arena *a, const void *p, size_t n)
{
	char *q = take(a, n, 1);

	memcpy(q, p, n);
	return q;
}

char *arena_strdup(struct arena *a, const char *s)
{
	return arena_memdup(a, s, strlen(s) + 1);
}

void arena_release(struct arena *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->chunks[i]);
	free(a->chunks);
	memset(a, 0, sizeof(*a));
}
