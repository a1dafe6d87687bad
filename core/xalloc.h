/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/xalloc.h - allocation wrappers that die loudly instead of returning NULL
 * (htop's XUtils), plus git's ALLOC_GROW for growable arrays.
 */
#ifndef DCPI_CORE_XALLOC_H
#define DCPI_CORE_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *ptr, size_t size);
/* xreallocarray: like reallocarray(3), dies on overflow or exhaustion. */
void *xreallocarray(void *ptr, size_t nmemb, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *xmemdup(const void *p, size_t n);

/* Allocates one zeroed object of the pointed-to type: p = XNEW(struct x). */
#define XNEW(type) ((type *)xcalloc(1, sizeof(type)))

/* The number of elements of a true array. */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * ALLOC_GROW(array, nr, alloc): makes room for at least `nr` elements in
 * `array`, whose capacity is `alloc` (both updated); grows by 1.5x.
 */
#define ALLOC_GROW(x, nr, alloc)                                             \
	do {                                                                 \
		if ((size_t)(nr) > (size_t)(alloc)) {                        \
			size_t alloc_grow_n_ = ((size_t)(alloc) + 16) * 3 / 2; \
			if (alloc_grow_n_ < (size_t)(nr))                    \
				alloc_grow_n_ = (nr);                        \
			(x) = xreallocarray((x), alloc_grow_n_, sizeof(*(x))); \
			(alloc) = alloc_grow_n_;                             \
		}                                                            \
	} while (0)

#endif
