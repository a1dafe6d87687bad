/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "collect/values.h"
#include "collect/procs.h"
#include "core/die.h"
#include "core/xalloc.h"
#include "db/db.h"

#include <stdlib.h>
#include <string.h>

/* Memory of one record: the record, its lists' room, its pairs if any. */
#define REC_BYTES (sizeof(struct values_rec) + VALUES_NREGS * VALUES_CAP * sizeof(struct hotlist_entry))
#define PAIRS_BYTES sizeof(struct values_pairs)
/* Threads remembered before the table starts afresh (their pair chains break). */
#define MAX_THREADS 65536

void cvalues_init(struct cvalues *v, size_t max_bytes, uint64_t seed)
{
	struct hotlist_rng rng = HOTLIST_RNG_INIT(seed);

	memset(v, 0, sizeof(*v));
	v->max_bytes = max_bytes;
	v->rng = rng;
}

static void image_release(struct cvalues_image *ci)
{
	values_profile_release(&ci->prof);
	u64map_release(&ci->at);
}

void cvalues_release(struct cvalues *v)
{
	for (size_t i = 0; i < v->n_img; i++)
		image_release(&v->img[i]);
	free(v->img);
	u64map_release(&v->img_at);
	free(v->thr);
	u64map_release(&v->thr_at);
	memset(v, 0, sizeof(*v));
}

void cvalues_from_perf(const uint64_t *perf, uint64_t *regs)
{
	/* perf's order: ax bx cx dx si di bp sp (as ours), flags, r8..r15 */
	memcpy(regs, perf, 8 * sizeof(*regs));
	regs[VREG_RFLAGS] = perf[8];
	memcpy(regs + VREG_R8, perf + 9, 8 * sizeof(*regs));
}

static struct cvalues_image *image_of(struct cvalues *v, uint32_t image)
{
	uint64_t *slot = u64map_slot(&v->img_at, image);

	if (!*slot) {
		ALLOC_GROW(v->img, v->n_img + 1, v->alloc_img);
		memset(&v->img[v->n_img], 0, sizeof(v->img[0]));
		v->img[v->n_img].image = image;
		*slot = ++v->n_img;
	}
	return &v->img[*slot - 1];
}

/* The record of (image, offset), made if there is memory for it; NULL if not. */
static struct values_rec *rec_of(struct cvalues *v, uint32_t image, uint64_t offset)
{
	struct cvalues_image *ci = image_of(v, image);
	uint64_t *slot = u64map_slot(&ci->at, offset);

	if (!*slot) {
		if (v->bytes + REC_BYTES > v->max_bytes)
			return NULL;
		values_profile_add(&ci->prof, offset);
		*slot = ci->prof.n;
		v->bytes += REC_BYTES;
	}
	return &ci->prof.v[*slot - 1];
}

static struct cvalues_thread *thread_of(struct cvalues *v, uint32_t tid)
{
	uint64_t *slot;

	if (v->n_thr >= MAX_THREADS && !u64map_get(&v->thr_at, tid, &(uint64_t){ 0 })) {
		u64map_clear(&v->thr_at);
		v->n_thr = 0;
	}
	slot = u64map_slot(&v->thr_at, tid);
	if (!*slot) {
		ALLOC_GROW(v->thr, v->n_thr + 1, v->alloc_thr);
		memset(&v->thr[v->n_thr], 0, sizeof(v->thr[0]));
		v->thr[v->n_thr].tid = tid;
		*slot = ++v->n_thr;
	}
	return &v->thr[*slot - 1];
}

/* The registers' changes from the thread's last sample, added to r's pairs. */
static void add_pair(struct cvalues *v, struct values_rec *r, const struct cvalues_thread *t,
		     uint64_t time, const uint64_t *regs)
{
	struct values_pairs *p;

	if (!r->pairs)
		v->bytes += PAIRS_BYTES;
	p = values_rec_pairs(r);
	p->n++;
	p->dt += time - t->time;
	for (unsigned k = 0; k < VALUES_NREGS; k++) {
		uint64_t d = regs[k] - t->regs[k];

		if (!d || (d >= VALUES_PAIR_WILD && 0 - d >= VALUES_PAIR_WILD))
			continue;
		p->mask |= 1u << k;
		if ((int64_t)d > 0) {
			p->d[k].npos++;
			p->d[k].spos = p->d[k].spos > UINT64_MAX - d ? UINT64_MAX : p->d[k].spos + d;
			values_top2(&p->d[k].mpos, &p->d[k].mpos2, d);
		} else {
			d = 0 - d;
			p->d[k].nneg++;
			p->d[k].sneg = p->d[k].sneg > UINT64_MAX - d ? UINT64_MAX : p->d[k].sneg + d;
			values_top2(&p->d[k].mneg, &p->d[k].mneg2, d);
		}
	}
	v->st.pairs++;
}

static bool pairs_with(const struct cvalues *v, const struct cvalues_thread *t, uint32_t image,
		       uint64_t offset, uint64_t time)
{
	uint64_t dist = offset > t->offset ? offset - t->offset : t->offset - offset;

	(void)v;
	return t->valid && t->image == image && dist <= VALUES_PAIR_WINDOW && time >= t->time;
}

void cvalues_sample(struct cvalues *v, uint32_t tid, uint64_t time, uint32_t image,
		    uint64_t offset, const uint64_t *regs)
{
	struct values_rec *r = rec_of(v, image, offset);
	struct cvalues_thread *t = thread_of(v, tid);

	if (!r) {
		v->st.dropped++;
		t->valid = false;
		return;
	}
	values_rec_sample(r, regs, VALUES_ALL_REGS, &v->rng);
	v->st.samples++;
	if (pairs_with(v, t, image, offset, time))
		add_pair(v, r, t, time, regs);
	t->valid = true;
	t->image = image;
	t->offset = offset;
	t->time = time;
	memcpy(t->regs, regs, sizeof(t->regs));
}

void cvalues_break(struct cvalues *v, uint32_t tid)
{
	uint64_t i;

	if (u64map_get(&v->thr_at, tid, &i) && i)
		v->thr[i - 1].valid = false;
}

void cvalues_forget(struct cvalues *v, uint32_t tid)
{
	/* u64map cannot delete: the entry is marked unused; the table restarts when full. */
	cvalues_break(v, tid);
}

bool cvalues_pressed(const struct cvalues *v)
{
	return v->bytes > v->max_bytes / 2;
}

/* Frees the records of an image table that reached the database. */
static void image_clear(struct cvalues *v, struct cvalues_image *ci)
{
	for (size_t i = 0; i < ci->prof.n; i++) {
		v->bytes -= REC_BYTES;
		if (ci->prof.v[i].pairs)
			v->bytes -= PAIRS_BYTES;
	}
	values_profile_release(&ci->prof);
	u64map_clear(&ci->at);
	ci->failures = 0;
}

void cvalues_clear(struct cvalues *v)
{
	for (size_t i = 0; i < v->n_img; i++) {
		v->st.dropped += values_profile_samples(&v->img[i].prof);
		image_clear(v, &v->img[i]);
	}
}

int cvalues_write(struct cvalues *v, struct db *db, uint32_t seq, struct procs *procs)
{
	int ret = 0;

	for (size_t i = 0; i < v->n_img; i++) {
		struct cvalues_image *ci = &v->img[i];
		const char *key = procs_cimage(procs, ci->image)->img.key;
		uint64_t samples;

		if (!ci->prof.n)
			continue;
		values_profile_sort(&ci->prof);
		/* Sorting moved the records: the offset map is rebuilt. */
		u64map_clear(&ci->at);
		for (size_t k = 0; k < ci->prof.n; k++)
			*u64map_slot(&ci->at, ci->prof.v[k].offset) = k + 1;
		samples = values_profile_samples(&ci->prof);
		if (db_values_merge(db, seq, key, &ci->prof)) {
			v->st.write_failures++;
			ci->failures++;
			ret = -1;
			continue;
		}
		v->st.writes++;
		v->st.written_samples += samples;
		image_clear(v, ci);
	}
	return ret;
}
