/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/arena.h - many small pieces allocated one after another and freed
 * together: names of a symbol table, the rows of a comparison.  A piece
 * costs its bytes (no per-piece header); chunks grow with the arena (4 KB
 * first, doubling up to 1 MB), so that a few names cost a page, not a
 * fixed chunk, and a million cost a few hundred chunks.  Pieces never move.
 * Not thread-safe.
 *
 *   struct arena a = ARENA_INIT;
 *   const char *s = arena_strdup(&a, name);
 *   uint64_t *counts = arena_calloc(&a, n, sizeof(*counts));
 *   arena_release(&a);              // every piece at once
 */
#ifndef DCPI_CORE_ARENA_H
#define DCPI_CORE_ARENA_H

#include <stddef.h>

struct arena {
	char **chunks;
	size_t n, alloc;
	size_t used, cap;       /* in the last chunk */
};

#define ARENA_INIT { NULL, 0, 0, 0, 0 }

/* n zeroed bytes, aligned for any type. */
void *arena_calloc(struct arena *a, size_t nmemb, size_t size);
/* A copy of n bytes (not aligned: strings and keys). */
char *arena_memdup(struct arena *a, const void *p, size_t n);
/* A copy of s with its NUL. */
char *arena_strdup(struct arena *a, const char *s);
/* Frees every piece; the arena is empty and usable again. */
void arena_release(struct arena *a);

#endif
