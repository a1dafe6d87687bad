/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/pathscale.c - the scale of the counts from paths per procedure
 * and region of an image (pathscale.h).
 */
#include "config.h"

#include "analysis/pathscale.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/epochview.h"
#include "analysis/lookup.h"
#include "core/u64map.h"
#include "core/xalloc.h"
#include "db/paths.h"

struct build {
	struct pathscale *ps;
	struct epoch_view *v;
	size_t image;
	struct image *img;
	enum dcpi_event ev;
	struct u64map at;           /* start -> index + 1 */
	size_t alloc;
};

/* The index of the procedure holding offset off, added if new; -1 if none. */
static long proc_of(struct build *b, uint64_t off)
{
	struct pathscale *ps = b->ps;
	const struct proc *p;
	uint64_t addr, *slot;

	if (!image_offset_to_addr(b->img, off, &addr) || !(p = image_proc_at(b->img, addr)))
		return -1;
	slot = u64map_slot(&b->at, p->start);
	if (!*slot) {
		struct proc_ref ref = { b->image, p };

		ALLOC_GROW(ps->procs, ps->n_procs + 1, b->alloc);
		memset(&ps->procs[ps->n_procs], 0, sizeof(ps->procs[0]));
		ps->procs[ps->n_procs].start = p->start;
		ps->procs[ps->n_procs].end = p->end;
		ps->procs[ps->n_procs].samples = (double)proc_ref_samples(b->v, &ref, b->ev);
		*slot = ++ps->n_procs;
	}
	return (long)*slot - 1;
}

static size_t find_root(size_t *up, size_t x)
{
	while (up[x] != x)
		x = up[x] = up[up[x]];
	return x;
}

/* Procedures that call each other at least twice a burst are one region. */
static void regions(struct pathscale *ps, const struct paths_profile *prof, struct build *b)
{
	double per_burst = prof->bursts ? (double)prof->insns / (double)prof->bursts : 0;
	struct u64map link;
	size_t n, *up, *idx;

	u64map_init(&link);
	for (size_t k = 0; k < prof->n_edges; k++) {
		const struct paths_edge *e = &prof->edges[k];
		long f, t;

		if (e->to == PATHS_ELSEWHERE || (f = proc_of(b, e->from)) < 0 || (t = proc_of(b, e->to)) < 0 ||
		    f == t)
			continue;
		if (f > t) {
			long x = f;

			f = t;
			t = x;
		}
		u64map_add(&link, (uint64_t)f << 32 | (uint64_t)t, e->count);
	}
	n = ps->n_procs;  /* after the edges: they may name procedures no block is in */
	up = xcalloc(n + 1, sizeof(size_t));
	idx = xcalloc(n + 1, sizeof(size_t));
	for (size_t k = 0; k < n; k++)
		up[k] = k;
	for (size_t it = 0, key, cnt; per_burst > 0 && u64map_next(&link, &it, &key, &cnt);) {
		size_t f = key >> 32, t = key & 0xffffffffu;
		double bf = ps->procs[f].followed / per_burst, bt = ps->procs[t].followed / per_burst;

		if (cnt >= 4 && (double)cnt >= 2 * (bf < bt ? bf : bt))
			up[find_root(up, f)] = find_root(up, t);
	}
	for (size_t k = 0; k < n; k++)
		idx[k] = SIZE_MAX;
	for (size_t k = 0; k < n; k++) {
		size_t r = find_root(up, k);

		if (idx[r] == SIZE_MAX)
			idx[r] = ps->n_regions++;
		ps->procs[k].region = idx[r];
	}
	ps->regions = xcalloc(ps->n_regions + 1, sizeof(*ps->regions));
	for (size_t k = 0; k < n; k++) {
		struct pathscale_region *r = &ps->regions[ps->procs[k].region];
		const struct pathscale_proc *p = &ps->procs[k];

		r->samples += p->samples;
		r->followed += p->followed;
		r->wfollowed += p->wfollowed;
		r->win_b1 += p->win_b1;
		r->win_b1_here += p->win_b1_here;
		r->n_procs++;
	}
	u64map_release(&link);
	free(up);
	free(idx);
}

/* Each region's factor from the windows (see pathscale.h). */
static void factors(struct pathscale *ps, const struct paths_profile *prof, struct build *b)
{
	double *s = xcalloc(ps->n_regions + 1, sizeof(double)), *s2 = xcalloc(ps->n_regions + 1, sizeof(double));
	double *kept = xcalloc(ps->n_regions + 1, sizeof(double)), all = 0;
	double simg = (double)b->v->images[b->image].samples[b->ev];

	for (size_t k = 0; k < prof->n_win; k++) {
		long p = proc_of(b, prof->win[k].b1);
		double h = (double)prof->win[k].here;

		all += h;
		if (p < 0)
			continue;
		kept[ps->procs[p].region]++;
		s[ps->procs[p].region] += h;
		s2[ps->procs[p].region] += h * h;
	}
	if (prof->windows && simg > 0)
		ps->img_k = simg / (double)prof->windows;
	for (size_t k = 0; k < ps->n_regions; k++) {
		struct pathscale_region *r = &ps->regions[k];
		double cv = PATHSCALE_WINDOW_CV, self, kk, n;

		r->sigma = -1;
		if (!(r->wfollowed > 0) || !(r->followed > 0))
			continue;
		if (kept[k] > 1) {
			double mean = s[k] / kept[k], var = (s2[k] / kept[k] - mean * mean) * kept[k] / (kept[k] - 1);

			if (mean > 0 && var > 0 && sqrt(var) / mean > cv)
				cv = sqrt(var) / mean;
		}
		self = r->win_b1_here / r->wfollowed;
		if (r->win_b1 > 0 && self >= 0.5 && r->samples > 0) {
			kk = r->samples / r->win_b1;
			r->own = true;
			r->rel_error = sqrt(cv * cv / kept[k] + (self < 1 ? (1 - self) * (1 - self) : 0) +
					    PATHS_WINDOW_BIAS * PATHS_WINDOW_BIAS);
		} else if (ps->img_k > 0) {
			kk = ps->img_k;
			n = prof->n_win && all > 0 ? r->wfollowed / (all / (double)prof->n_win) : 1;
			r->rel_error = sqrt((1 + cv * cv) / (n > 1 ? n : 1));
			if (r->rel_error < 0.15)
				r->rel_error = 0.15;
		} else {
			continue;
		}
		r->sigma = kk * r->wfollowed / r->followed;
	}
	free(s);
	free(s2);
	free(kept);
}

static int by_start(const void *a, const void *b)
{
	const struct pathscale_proc *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

void pathscale_build(struct pathscale *ps, struct epoch_view *v, size_t i, enum dcpi_event ev)
{
	const struct paths_profile *prof = epoch_view_paths(v, i);
	struct build b = { ps, v, i, NULL, ev, { 0 }, 0 };

	memset(ps, 0, sizeof(*ps));
	if (paths_profile_empty(prof) || !prof->n_blocks)
		return;
	b.img = epoch_view_image(v, i);
	if (!image_has_code(b.img, NULL) || image_load_procs(b.img))
		return;
	u64map_init(&b.at);
	for (size_t k = 0; k < prof->n_blocks; k++) {
		const struct paths_block *pb = &prof->blocks[k];
		long p = proc_of(&b, pb->offset);

		if (p < 0)
			continue;
		ps->procs[p].followed += (double)pb->count * pb->insns;
		ps->procs[p].wfollowed += (double)pb->wcount * pb->insns;
	}
	for (size_t k = 0; k < prof->n_win; k++) {
		long p = proc_of(&b, prof->win[k].b1);
		double scale = (double)prof->windows / (double)prof->n_win;

		if (p < 0)
			continue;
		ps->procs[p].win_b1 += scale;
		ps->procs[p].win_b1_here += scale * (double)prof->win[k].here;
	}
	regions(ps, prof, &b);
	factors(ps, prof, &b);
	/* sorted for lookups (the regions keep their indices) */
	qsort(ps->procs, ps->n_procs, sizeof(*ps->procs), by_start);
	u64map_release(&b.at);
}

void pathscale_release(struct pathscale *ps)
{
	free(ps->procs);
	free(ps->regions);
	memset(ps, 0, sizeof(*ps));
}

const struct pathscale_proc *pathscale_find(const struct pathscale *ps, uint64_t start)
{
	size_t lo = 0, hi = ps->n_procs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ps->procs[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ps->n_procs && ps->procs[lo].start == start ? &ps->procs[lo] : NULL;
}

static void pathscale_free(struct pathscale *ps)
{
	pathscale_release(ps);
	free(ps);
}

const struct pathscale *pathscale_of(struct epoch_view *v, size_t i, enum dcpi_event ev)
{
	struct ev_image *e = &v->images[i];

	if (e->pscale && e->pscale_ev != ev) {
		e->pscale_free(e->pscale);
		e->pscale = NULL;
	}
	if (!e->pscale) {
		e->pscale = xmalloc(sizeof(*e->pscale));
		e->pscale_ev = ev;
		e->pscale_free = pathscale_free;
		pathscale_build(e->pscale, v, i, ev);
	}
	return e->pscale;
}
