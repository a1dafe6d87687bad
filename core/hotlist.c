/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "core/hotlist.h"
#include "core/die.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t hotlist_rand(struct hotlist_rng *r)
{
	uint64_t x = r->s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

/* A uniform double in (0, 1]. */
static double unit(struct hotlist_rng *r)
{
	return ((double)(hotlist_rand(r) >> 11) + 1.0) / 9007199254740992.0;
}

void hotlist_init(struct hotlist *h, struct hotlist_entry *room, unsigned cap)
{
	if (!cap || cap > HOTLIST_MAX)
		BUG("hot list room %u outside 1..%d", cap, HOTLIST_MAX);
	h->e = room;
	h->tau = 1;
	h->n = 0;
	h->cap = (uint16_t)cap;
}

/* The next threshold: about 1.25 times the last (Gibbons and Matias use 1.1-2). */
static uint32_t next_tau(uint32_t tau)
{
	uint64_t t = (uint64_t)tau + 1 + tau / 4;

	return t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

/*
 * The thinning of one count from tau to tau2: with probability tau/tau2
 * unchanged; else one less, and one less per tail of a 1/tau2 coin.
 */
static uint64_t thin(uint64_t c, uint32_t tau, uint32_t tau2, struct hotlist_rng *rng)
{
	double p, u;
	uint64_t tails;

	if (tau2 <= tau)
		return c;
	/*
	 * A count of at least tau2 is not at risk of eviction: it loses what
	 * thinning takes on average, (1 - tau/tau2) * tau2 = tau2 - tau, rather
	 * than a geometric draw whose spread (about tau2) would be its
	 * estimate's only error.  Eviction (the footprint) still works: the
	 * entries below tau2 are thinned at random, and tau grows past any
	 * count.
	 */
	if (c >= tau2)
		return c - (tau2 - tau);
	if (hotlist_rand(rng) % tau2 < tau)
		return c;
	c--;
	if (!c)
		return 0;
	/* Tails before the first head of a coin with heads probability p: geometric. */
	p = 1.0 / tau2;
	u = unit(rng);
	tails = p >= 1 ? 0 : (uint64_t)fmin(floor(log(u) / log1p(-p)), 1e18);
	return tails >= c ? 0 : c - tails;
}

/* Thins entries e[0..n) from tau to tau2, dropping zeros; returns the new n. */
static size_t thin_all(struct hotlist_entry *e, size_t n, uint32_t tau, uint32_t tau2,
		       struct hotlist_rng *rng)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t c = thin(e[i].count, tau, tau2, rng);

		if (c) {
			e[k].value = e[i].value;
			e[k++].count = c;
		}
	}
	return k;
}

void hotlist_raise(struct hotlist *h, uint32_t tau, struct hotlist_rng *rng)
{
	if (tau <= h->tau)
		return;
	h->n = (uint16_t)thin_all(h->e, h->n, h->tau, tau, rng);
	h->tau = tau;
}

/* Raises tau on e[0..n) (room for more than cap) until at most cap entries remain. */
static size_t fit(struct hotlist_entry *e, size_t n, uint32_t *tau, unsigned cap,
		  struct hotlist_rng *rng)
{
	while (n > cap && *tau < UINT32_MAX) {
		uint32_t t = next_tau(*tau);

		n = thin_all(e, n, *tau, t, rng);
		*tau = t;
	}
	/* tau cannot grow any further (never in practice): drop the smallest. */
	while (n > cap) {
		size_t min = 0;

		for (size_t i = 1; i < n; i++)
			if (e[i].count < e[min].count)
				min = i;
		e[min] = e[--n];
	}
	return n;
}

void hotlist_add(struct hotlist *h, uint64_t value, struct hotlist_rng *rng)
{
	struct hotlist_entry tmp[HOTLIST_MAX + 1];
	size_t n;

	for (size_t i = 0; i < h->n; i++) {
		if (h->e[i].value == value) {
			h->e[i].count++;
			return;
		}
	}
	if (h->tau > 1 && hotlist_rand(rng) % h->tau)
		return;
	if (h->n < h->cap) {
		h->e[h->n].value = value;
		h->e[h->n++].count = 1;
		return;
	}
	/* Over the footprint: the newcomer is thinned with the others. */
	memcpy(tmp, h->e, h->n * sizeof(*tmp));
	tmp[h->n].value = value;
	tmp[h->n].count = 1;
	n = fit(tmp, (size_t)h->n + 1, &h->tau, h->cap, rng);
	memcpy(h->e, tmp, n * sizeof(*tmp));
	h->n = (uint16_t)n;
}

void hotlist_merge(struct hotlist *dst, const struct hotlist *src, struct hotlist_rng *rng)
{
	struct hotlist_entry tmp[2 * HOTLIST_MAX], other[HOTLIST_MAX];
	uint32_t tau = dst->tau > src->tau ? dst->tau : src->tau;
	size_t n, m;

	if (src->n > HOTLIST_MAX)
		BUG("hot list of %u entries", src->n);
	memcpy(tmp, dst->e, dst->n * sizeof(*tmp));
	n = thin_all(tmp, dst->n, dst->tau, tau, rng);
	memcpy(other, src->e, src->n * sizeof(*other));
	m = thin_all(other, src->n, src->tau, tau, rng);
	for (size_t j = 0; j < m; j++) {
		size_t i;

		for (i = 0; i < n && tmp[i].value != other[j].value; i++)
			;
		if (i < n) {
			/*
			 * Each stream missed the occurrences before the value
			 * entered it; one estimate adds one stream's worth back,
			 * so the count takes the other's (what hotlist_estimate
			 * would add for it).
			 */
			uint64_t c = tmp[i].count + other[j].count;
			double miss = c >= 4 * (uint64_t)tau ? tau - 1.0 : 0.418 * tau - 1;

			tmp[i].count = c + (miss > 0 ? (uint64_t)(miss + 0.5) : 0);
		} else {
			tmp[n++] = other[j];
		}
	}
	n = fit(tmp, n, &tau, dst->cap, rng);
	memcpy(dst->e, tmp, n * sizeof(*tmp));
	dst->n = (uint16_t)n;
	dst->tau = tau;
}

static int by_count(const void *a, const void *b)
{
	const struct hotlist_entry *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->value < y->value ? -1 : x->value > y->value;
}

void hotlist_sort(struct hotlist *h)
{
	qsort(h->e, h->n, sizeof(*h->e), by_count);
}

double hotlist_estimate(const struct hotlist *h, size_t i)
{
	double c = (double)h->e[i].count;

	if (h->tau <= 1)
		return c;
	/* Heavy: thinned by expectation since long before (thin()). */
	if (h->e[i].count >= 4 * (uint64_t)h->tau)
		return c + h->tau - 1;
	return c + 0.418 * h->tau - 1;
}

bool hotlist_reportable(const struct hotlist *h, size_t i)
{
	return h->tau <= 1 || (double)h->e[i].count >= h->tau - (0.418 * h->tau - 1);
}
