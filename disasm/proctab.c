/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/proctab.c - building and searching an image's procedure table.
 */
#include "config.h"

#include "disasm/proctab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/die.h"
#include "core/search.h"
#include "core/xalloc.h"
#include "disasm/demangle.h"

struct proc_cand {
	uint64_t start, size;
	const char *name;
	unsigned flags;
};

struct name_ref {
	const char *name;
	uint32_t proc;
};

/* ---- building ---------------------------------------------------------- */

void proctab_init(struct proctab *t)
{
	memset(t, 0, sizeof(*t));
	t->pool = XNEW(struct arena);
}

void proctab_release(struct proctab *t)
{
	free(t->v);
	free(t->aliases);
	free(t->cand);
	free(t->names);
	free(t->names_block);
	if (t->pool)
		arena_release(t->pool);
	free(t->pool);
	memset(t, 0, sizeof(*t));
}

const char *proctab_strdup(struct proctab *t, const char *s)
{
	return arena_strdup(t->pool, s);
}

void proctab_add(struct proctab *t, uint64_t start, uint64_t size, const char *name,
		 unsigned flags)
{
	struct proc_cand *c;

	if (t->finished)
		BUG("proctab_add after finish");
	if (!name || !name[0])
		return;
	ALLOC_GROW(t->cand, t->n_cand + 1, t->alloc_cand);
	c = &t->cand[t->n_cand++];
	c->start = start;
	c->size = start + size < start ? UINT64_MAX - start : size;
	c->name = arena_strdup(t->pool, name);
	c->flags = flags | (size ? 0 : PROC_NOSIZE);
}

static int binding_rank(unsigned flags)
{
	if (flags & PROC_FDE)
		return 4;
	if (flags & PROC_GLOBAL)
		return 0;
	if (flags & PROC_WEAK)
		return 1;
	return 2;
}

static size_t underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* Orders candidates by start, then best name first. */
static int cand_cmp(const void *a, const void *b)
{
	const struct proc_cand *x = a, *y = b;
	int r;
	size_t ux, uy, lx, ly;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if ((r = binding_rank(x->flags) - binding_rank(y->flags)))
		return r;
	if ((x->flags & PROC_NOSIZE) != (y->flags & PROC_NOSIZE))
		return x->flags & PROC_NOSIZE ? 1 : -1;
	ux = underscores(x->name);
	uy = underscores(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	lx = strlen(x->name);
	ly = strlen(y->name);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

struct alias_buf {
	const char **v;
	size_t n, alloc;
};

static bool alias_known(const struct alias_buf *ab, size_t first, const char *primary,
			const char *name)
{
	if (!strcmp(primary, name))
		return true;
	for (size_t i = first; i < ab->n; i++)
		if (!strcmp(ab->v[i], name))
			return true;
	return false;
}

/* Groups sorted candidates [0, n) by start into procs (end 0: size unknown). */
static void group_cands(struct proctab *t, struct proc_cand *c, size_t n, struct proc **out,
			size_t *nout, struct alias_buf *ab)
{
	size_t alloc = 0;

	*out = NULL;
	*nout = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		struct proc *p;
		uint64_t size = 0;

		ALLOC_GROW(*out, *nout + 1, alloc);
		p = &(*out)[(*nout)++];
		memset(p, 0, sizeof(*p));
		p->start = c[i].start;
		p->sym = c[i].name;
		p->flags = c[i].flags & ~(unsigned)PROC_NOSIZE;
		p->alias_first = (uint32_t)ab->n;
		for (; j < n && c[j].start == c[i].start; j++) {
			if (c[j].size > size)
				size = c[j].size;
			if (j > i && !alias_known(ab, p->alias_first, p->sym, c[j].name)) {
				ALLOC_GROW(ab->v, ab->n + 1, ab->alloc);
				ab->v[ab->n++] = c[j].name;
			}
		}
		p->n_aliases = (uint32_t)(ab->n - p->alias_first);
		if (size)
			p->end = p->start + size;
		else
			p->flags |= PROC_NOSIZE;
		i = j;
	}
	(void)t;
}

/* Sets unknown ends and clips overlaps, in place on a sorted array. */
static void fix_ends(struct proc *v, size_t n, uint64_t (*limit)(void *, uint64_t), void *ctx)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t next = i + 1 < n ? v[i + 1].start : UINT64_MAX;

		if (v[i].flags & PROC_NOSIZE) {
			uint64_t lim = limit ? limit(ctx, v[i].start) : next;

			v[i].end = lim < next ? lim : next;
			if (v[i].end == UINT64_MAX && !limit)
				v[i].end = v[i].start + 1;
		} else if (v[i].end > next) {
			v[i].end = next;
		}
		if (v[i].end <= v[i].start)
			v[i].end = v[i].start + 1;
	}
}

static const struct proc *find_in(const struct proc *v, size_t n, uint64_t addr)
{
	size_t lo = LOWER_BOUND(n, k, v[k].end <= addr);

	return lo < n && v[lo].start <= addr ? &v[lo] : NULL;
}

static int proc_cmp(const void *a, const void *b)
{
	const struct proc *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Adds FDE ranges that no symbol covers, clipped to their neighbours. */
static void merge_fdes(struct proctab *t, struct proc **v, size_t *n, struct proc_cand *fde,
		       size_t nfde)
{
	struct proc *add = NULL;
	size_t nadd = 0, alloc = 0;

	for (size_t i = 0; i < nfde; i++) {
		const struct proc_cand *c = &fde[i];
		struct proc *p;

		if (find_in(*v, *n, c->start))
			continue;
		if (nadd && add[nadd - 1].end > c->start) {
			if (add[nadd - 1].start == c->start)
				continue;
			add[nadd - 1].end = c->start;
		}
		ALLOC_GROW(add, nadd + 1, alloc);
		p = &add[nadd++];
		memset(p, 0, sizeof(*p));
		p->start = c->start;
		p->end = c->start + c->size;
		p->sym = c->name;
		p->flags = c->flags;
		p->alias_first = 0;
	}
	if (nadd) {
		*v = xreallocarray(*v, *n + nadd, sizeof(**v));
		memcpy(*v + *n, add, nadd * sizeof(*add));
		*n += nadd;
		qsort(*v, *n, sizeof(**v), proc_cmp);
		/* clip FDE ranges at the next procedure */
		for (size_t i = 0; i + 1 < *n; i++)
			if ((*v)[i].end > (*v)[i + 1].start)
				(*v)[i].end = (*v)[i + 1].start;
	}
	free(add);
	(void)t;
}

static void set_display_names(struct proctab *t)
{
	for (size_t i = 0; i < t->n; i++) {
		char *d = demangle(t->v[i].sym);

		t->v[i].name = d ? arena_strdup(t->pool, d) : t->v[i].sym;
		free(d);
	}
}

/* Copies s to *at, moving it on: the copy. */
static const char *copy_name(char **at, const char *s)
{
	size_t n = strlen(s) + 1;
	char *copy = *at;

	memcpy(copy, s, n);
	*at += n;
	return copy;
}

/*
 * The names the table keeps, copied end to end into one block, and the
 * pool (every candidate's name, in chunks of 4 KB and up) let go: it
 * starts again empty for the names made later (gaps).
 */
static void compact_names(struct proctab *t)
{
	size_t total = 1;
	char *at;

	for (size_t i = 0; i < t->n; i++)
		total += strlen(t->v[i].sym) + 1 +
			 (t->v[i].name != t->v[i].sym ? strlen(t->v[i].name) + 1 : 0);
	for (size_t i = 0; i < t->n_aliases; i++)
		total += strlen(t->aliases[i]) + 1;
	t->names_block = at = xmalloc(total);
	for (size_t i = 0; i < t->n; i++) {
		struct proc *p = &t->v[i];
		bool same = p->name == p->sym;

		p->sym = copy_name(&at, p->sym);
		p->name = same ? p->sym : copy_name(&at, p->name);
	}
	for (size_t i = 0; i < t->n_aliases; i++)
		t->aliases[i] = copy_name(&at, t->aliases[i]);
	arena_release(t->pool);
}

void proctab_finish(struct proctab *t, uint64_t (*limit)(void *ctx, uint64_t addr), void *ctx)
{
	struct alias_buf ab = { NULL, 0, 0 };
	struct proc_cand *fde;
	size_t nsym = 0;

	if (t->finished)
		BUG("proctab_finish twice");
	t->finished = true;
	/* symbols first, FDE ranges after */
	for (size_t i = 0; i < t->n_cand; i++)
		if (!(t->cand[i].flags & PROC_FDE)) {
			struct proc_cand tmp = t->cand[nsym];

			t->cand[nsym++] = t->cand[i];
			t->cand[i] = tmp;
		}
	if (nsym > 1)
		qsort(t->cand, nsym, sizeof(*t->cand), cand_cmp);
	fde = t->cand ? t->cand + nsym : NULL;
	if (t->n_cand - nsym > 1)
		qsort(fde, t->n_cand - nsym, sizeof(*t->cand), cand_cmp);
	group_cands(t, t->cand, nsym, &t->v, &t->n, &ab);
	fix_ends(t->v, t->n, limit, ctx);
	merge_fdes(t, &t->v, &t->n, fde, t->n_cand - nsym);
	t->aliases = ab.v;
	t->n_aliases = ab.n;
	set_display_names(t);
	/* read-only from now on: no room to grow (10,000 tables of an epoch) */
	if (t->v)
		t->v = xreallocarray(t->v, t->n ? t->n : 1, sizeof(*t->v));
	free(t->cand);
	t->cand = NULL;
	t->n_cand = t->alloc_cand = 0;
	compact_names(t);
}

/* ---- lookups ----------------------------------------------------------- */

const struct proc *proctab_find(const struct proctab *t, uint64_t addr)
{
	return find_in(t->v, t->n, addr);
}

size_t proctab_lower_bound(const struct proctab *t, uint64_t addr)
{
	return LOWER_BOUND(t->n, k, t->v[k].end <= addr);
}

static int name_cmp(const void *a, const void *b)
{
	const struct name_ref *x = a, *y = b;
	int r = strcmp(x->name, y->name);

	return r ? r : (x->proc < y->proc ? -1 : x->proc > y->proc);
}

static void add_name(struct name_ref **v, size_t *n, size_t *alloc, const char *name, size_t i)
{
	ALLOC_GROW(*v, *n + 1, *alloc);
	(*v)[*n].name = name;
	(*v)[*n].proc = (uint32_t)i;
	(*n)++;
}

static void build_names(struct proctab *t)
{
	size_t alloc = 0, w = 0;

	for (size_t i = 0; i < t->n; i++) {
		const struct proc *p = &t->v[i];

		add_name(&t->names, &t->n_names, &alloc, p->sym, i);
		if (p->name != p->sym)
			add_name(&t->names, &t->n_names, &alloc, p->name, i);
		for (uint32_t k = 0; k < p->n_aliases; k++)
			add_name(&t->names, &t->n_names, &alloc, t->aliases[p->alias_first + k], i);
	}
	if (!t->n_names)
		return;
	if (t->n_names > 1)
		qsort(t->names, t->n_names, sizeof(*t->names), name_cmp);
	for (size_t i = 1; i < t->n_names; i++)   /* one entry per (name, proc) */
		if (t->names[i].proc != t->names[w].proc || strcmp(t->names[i].name, t->names[w].name))
			t->names[++w] = t->names[i];
	t->n_names = w + 1;
}

size_t proctab_by_name(struct proctab *t, const char *name, const struct proc **out, size_t max)
{
	size_t lo, found = 0;

	if (!t->names && t->n)
		build_names(t);
	lo = LOWER_BOUND(t->n_names, k, strcmp(t->names[k].name, name) < 0);
	for (size_t i = lo; i < t->n_names && !strcmp(t->names[i].name, name); i++) {
		if (found < max)
			out[found] = &t->v[t->names[i].proc];
		found++;
	}
	return found;
}
