/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/emdip.c - how long a stop slows the thread (collect/emdip.h).
 */
#include "config.h"
#include "collect/emdip.h"
#include "core/json.h"
#include "core/strbuf.h"

#include <math.h>
#include <string.h>

void emdip_init(struct emdip *d, uint64_t period_ns)
{
	uint64_t reach = period_ns ? (uint64_t)(EMDIP_PRIOR_NS + (int64_t)period_ns - 1) / period_ns : 1;

	memset(d, 0, sizeof(*d));
	d->period_ns = period_ns;
	d->reach = reach < 1 ? 1 : reach > EMDIP_MAX_REACH ? EMDIP_MAX_REACH : (unsigned)reach;
}

double emdip_ratio(const struct emdip *d, unsigned j, double *se)
{
	const struct emdip_acc *a;
	double mean, var;

	*se = -1;
	if (j >= EMU_MAX_TRAIL || !(a = &d->acc[j])->n || !(a->ref > 0))
		return -1;
	mean = a->r / (double)a->n;
	var = a->n > 1 ? (a->r2 - (double)a->n * mean * mean) / (double)(a->n - 1) : 1;
	*se = sqrt(var > 0 ? var : 0) / sqrt((double)a->n);
	return a->insns / a->ref;
}

/* True if window j measurably runs as fast as the references. */
static bool past(const struct emdip *d, unsigned j)
{
	double se, r = emdip_ratio(d, j, &se);

	return d->acc[j].n >= EMDIP_MIN_TRAILS && r > 0 && r - 2 * se >= 1 - EMDIP_TOLERANCE;
}

/* True if window j is measurably slower than the references. */
static bool slow(const struct emdip *d, unsigned j)
{
	double se, r = emdip_ratio(d, j, &se);

	return d->acc[j].n >= EMDIP_MIN_TRAILS && r > 0 && r + 2 * se < 1 - EMDIP_TOLERANCE;
}

void emdip_add(struct emdip *d, const uint64_t *insns, const bool *ok, unsigned n)
{
	double ref = 0;
	unsigned k = 0;

	/* the reference: the trail's windows from reach on */
	for (unsigned j = d->reach; j < n; j++)
		if (ok[j] && insns[j]) {
			ref += (double)insns[j];
			k++;
		}
	if (!k)
		return;
	ref /= k;
	d->trails++;
	for (unsigned j = 0; j < n && j < d->reach; j++) {
		struct emdip_acc *a = &d->acc[j];
		double r = (double)insns[j] / ref;

		if (!ok[j])
			continue;
		a->insns += (double)insns[j];
		a->ref += ref;
		a->r += r;
		a->r2 += r * r;
		a->n++;
	}
	/* Still slow just before the reference: the dip lasts longer; look further. */
	if (d->reach < EMDIP_MAX_REACH && slow(d, d->reach - 1)) {
		unsigned reach = d->reach * 2 > EMDIP_MAX_REACH ? EMDIP_MAX_REACH : d->reach * 2;

		memset(d->acc, 0, sizeof(d->acc));
		d->trails = 0;
		d->reach = reach;
	}
}

unsigned emdip_skip(const struct emdip *d)
{
	unsigned s = d->reach;

	while (s > 0 && past(d, s - 1))
		s--;
	return s;
}

void emdip_status_text(const struct emdip *d, struct strbuf *o)
{
	unsigned skip = emdip_skip(d);

	strbuf_addf(o, "dip: windows from the %u%s sample after a stop (%.1f ms), measured over %llu "
		    "trails", skip + 1, skip == 0 ? "st" : skip == 1 ? "nd" : skip == 2 ? "rd" : "th",
		    (double)skip * (double)d->period_ns / 1e6, (unsigned long long)d->trails);
	for (unsigned j = 0; j < d->reach && j < 6; j++) {
		double se, r = emdip_ratio(d, j, &se);

		if (r > 0)
			strbuf_addf(o, "%s%u: %.2f+-%.2f", j ? ", " : "; rates after it, ", j + 1, r, se);
	}
	strbuf_addch(o, '\n');
}

void emdip_status_json(const struct emdip *d, struct json_writer *w)
{
	json_key(w, "skip"), json_u64(w, emdip_skip(d));
	json_key(w, "reach"), json_u64(w, d->reach);
	json_key(w, "trails"), json_u64(w, d->trails);
	json_key(w, "ratios"), json_array_begin(w);
	for (unsigned j = 0; j < d->reach; j++) {
		double se, r = emdip_ratio(d, j, &se);

		json_double(w, r, 4);
	}
	json_array_end(w);
}
