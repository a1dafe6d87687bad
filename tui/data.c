/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "tui/data.h"

#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "tui/job.h"
#include "tui/view.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- epochs ------------------------------------------------------------ */

void data_load_epochs(struct job *job)
{
	struct db *db = job->arg;
	struct epochs_data *ed = XNEW(struct epochs_data);

	job->result = ed;
	if (db_epochs_list(db, &ed->list)) {
		job->status = -1;
		return;
	}
	for (size_t i = 0; i < ed->list.n; i++) {
		struct db_epoch *e = &ed->list.v[i];

		for (size_t k = 0; e->meta_ok && k < e->meta.n_events; k++)
			ed->events[e->meta.events[k].event] = true;
	}
}

void epochs_data_free(void *data)
{
	struct epochs_data *ed = data;

	if (!ed)
		return;
	db_epoch_list_release(&ed->list);
	free(ed);
}

static void epochs_key(const struct source_env *env, const void *req, struct strbuf *key)
{
}

static void epochs_title(const struct source_env *env, const void *req, struct strbuf *title)
{
	strbuf_addstr(title, "reading the epochs");
}

static void *epochs_arg(const struct source_env *env, const void *req)
{
	return env->db;
}

const struct tui_source epochs_source = {
	.name = "epochs",
	.key = epochs_key,
	.title = epochs_title,
	.arg = epochs_arg,
	.run = data_load_epochs,
	.free_result = epochs_data_free,
};

const struct epochs_data *data_epochs(struct sources *s, struct view *waiter)
{
	return source_load(s, &epochs_source, NULL, waiter);
}

const struct db_epoch *epochs_data_find(const struct epochs_data *ed, uint32_t seq)
{
	for (size_t i = 0; ed && i < ed->list.n; i++)
		if (ed->list.v[i].seq == seq)
			return &ed->list.v[i];
	return NULL;
}

/* The counting job's argument: the epochs (numbers), counted from the last. */
struct counts_arg {
	struct db *db;                   /* not owned */
	uint32_t *seqs;
	size_t n, done;                  /* epochs, and how many are counted (from the last) */
	struct epoch_counts *res;        /* owned: the result is the argument's */
};

static void counts_arg_free(void *p)
{
	struct counts_arg *a = p;

	if (!a)
		return;
	free(a->seqs);
	free(a->res->n_images);
	free((void *)a->res->ready);
	free(a->res);
	free(a);
}

static void count_images(struct job *job)
{
	struct counts_arg *a = job->arg;

	for (; a->done < a->n; a->done++) {
		size_t i = a->n - 1 - a->done;
		struct image_index idx = IMAGE_INDEX_INIT;

		if (job_cancelled(job))
			return;
		workpool_yield();
		if (a->done % 16 == 0)
			job_progress(job, a->done, a->n);
		a->res->n_images[i] = db_images_load(a->db, a->seqs[i], &idx) ? SIZE_MAX : idx.n;
		image_index_release(&idx);
		atomic_store_explicit(&a->res->ready[i], 1, memory_order_release);
	}
	job->result = a->res;
	job->status = 0;
}

static const void *counts_partial(const struct job *job)
{
	return ((const struct counts_arg *)job->arg)->res;
}

static void counts_key(const struct source_env *env, const void *req, struct strbuf *key)
{
}

static void counts_title(const struct source_env *env, const void *req, struct strbuf *title)
{
	strbuf_addstr(title, "counting the images of every epoch");
}

static void *counts_arg_new(const struct source_env *env, const void *req)
{
	const struct epochs_data *ed = req;
	struct counts_arg *a = XNEW(struct counts_arg);

	a->db = env->db;
	a->n = ed->list.n;
	a->seqs = xcalloc(a->n ? a->n : 1, sizeof(*a->seqs));
	for (size_t i = 0; i < a->n; i++)
		a->seqs[i] = ed->list.v[i].seq;
	a->res = XNEW(struct epoch_counts);
	a->res->n = a->n;
	a->res->n_images = xcalloc(a->n ? a->n : 1, sizeof(*a->res->n_images));
	a->res->ready = xcalloc(a->n ? a->n : 1, sizeof(*a->res->ready));
	return a;
}

static const struct tui_source counts_source = {
	.name = "counts",
	.background = true,
	.key = counts_key,
	.title = counts_title,
	.arg = counts_arg_new,
	.free_arg = counts_arg_free,
	.run = count_images,
	.partial = counts_partial,
};

const struct epoch_counts *data_epoch_counts(struct sources *s, const struct epochs_data *ed,
					     struct view *waiter, bool *complete)
{
	*complete = false;
	return ed ? source_load_partial(s, &counts_source, ed, waiter, complete) : NULL;
}

bool epoch_counts_get(const struct epoch_counts *counts, size_t i, size_t *n_images)
{
	if (!counts || i >= counts->n ||
	    !atomic_load_explicit(&counts->ready[i], memory_order_acquire))
		return false;
	*n_images = counts->n_images[i];
	return true;
}

void epochs_data_complete(const struct epochs_data *ed, struct candidates *c)
{
	char num[32];

	candidates_add(c, "latest");
	for (size_t i = 0; ed && i < ed->list.n; i++) {
		const struct db_epoch *e = &ed->list.v[i];

		snprintf(num, sizeof(num), "%" PRIu32, e->seq);
		candidates_add(c, num);
		if (e->meta_ok && e->meta.label)
			candidates_add(c, e->meta.label);
		if (i + 1 < ed->list.n) {
			snprintf(num, sizeof(num), "latest~%zu", ed->list.n - 1 - i);
			candidates_add(c, num);
		}
	}
}

/* ---- images ------------------------------------------------------------ */

const char *binary_status_name(enum binary_status s)
{
	static const char *const names[] = { "-", "ok", "missing", "rebuilt", "unreadable",
					     "..." };

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static enum binary_status status_of(const struct image *img)
{
	switch (img->state) {
	case IMAGE_OK:
	case IMAGE_NAMES_ONLY:
		return BINARY_OK;
	case IMAGE_MISSING:
		return BINARY_MISSING;
	case IMAGE_CHANGED:
		return BINARY_REBUILT;
	case IMAGE_UNREADABLE:
		return BINARY_UNREADABLE;
	default:
		return BINARY_NA;
	}
}

enum binary_status image_check_binary(const struct db_image *rec, const struct image_opts *opts,
				      struct binary_check *out, bool keep)
{
	struct image *img;
	struct stat st;

	memset(out, 0, sizeof(*out));
	if (rec->kind != IMAGE_FILE)
		return out->status = BINARY_NA;
	img = image_open(rec, opts);
	out->status = status_of(img);
	if (img->why && out->status != BINARY_OK)
		out->why = display_safe(img->why);
	if (img->bin_path && strcmp(img->bin_path, rec->path))
		out->used = display_safe(img->bin_path);
	if (!stat(img->bin_path ? img->bin_path : rec->path, &st) && S_ISREG(st.st_mode)) {
		out->stat_ok = true;
		out->size = (uint64_t)st.st_size;
		out->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	}
	if (keep) {
		image_procs(img);
		out->img = img;
	} else {
		image_free(img);
	}
	return out->status;
}

void binary_check_release(struct binary_check *c)
{
	free(c->why);
	free(c->used);
	image_free(c->img);
	memset(c, 0, sizeof(*c));
}

static void row_set_path(struct image_row *row, const char *path)
{
	const char *slash;

	row->path = display_safe(path);
	slash = strrchr(row->path, '/');
	row->base = slash && slash[1] ? slash + 1 : row->path;
}

/*
 * One row per index entry, plus one per key that has profiles but no entry;
 * bad[i]: a profile of tot[i] could not be read (not counted).
 */
static void build_rows(struct images_data *id, const struct db_image_totals *tot,
		       const bool *bad, size_t n_tot)
{
	size_t alloc = 0;

	for (size_t i = 0; i < id->index.n; i++) {
		ALLOC_GROW(id->rows, id->n + 1, alloc);
		memset(&id->rows[id->n], 0, sizeof(*id->rows));
		strcpy(id->rows[id->n].key, id->index.v[i].key);
		id->rows[id->n].img = &id->index.v[i];
		id->rows[id->n].status = id->index.v[i].kind == IMAGE_FILE ? BINARY_CHECKING : BINARY_NA;
		row_set_path(&id->rows[id->n], id->index.v[i].path);
		id->n++;
	}
	for (size_t i = 0; i < n_tot; i++) {
		const struct db_image *img = image_index_find(&id->index, tot[i].key);
		struct image_row *row = NULL;

		if (img) {
			row = &id->rows[img - id->index.v];
		} else {
			char name[PROFILE_KEY_MAX + 3];

			ALLOC_GROW(id->rows, id->n + 1, alloc);
			row = &id->rows[id->n++];
			memset(row, 0, sizeof(*row));
			strcpy(row->key, tot[i].key);
			snprintf(name, sizeof(name), "[%s]", tot[i].key);
			row_set_path(row, name);
		}
		if (bad[i] && !row->damaged) {
			row->damaged = true;
			id->n_damaged++;
		}
		for (int e = 0; e < EVENT__COUNT; e++) {
			row->samples[e] = tot[i].samples[e];
			id->total[e] += tot[i].samples[e];
			if (tot[i].samples[e])
				id->events[e] = true;
		}
	}
}

/*
 * The totals of a big epoch: one small read per profile (10,000 on a
 * server), the first screen's slow part, spread over the engine's threads
 * a chunk of profiles at a time (what a chunk reports is said in the
 * order of the profiles, as one thread would have said it).
 */
#define TOTALS_CHUNK 256

struct totals_work {
	struct db *db;
	uint32_t seq;
	const struct db_profile_id *ids;
	size_t n;
	uint64_t *total;             /* per profile */
	bool *bad;                   /* per profile: unreadable or corrupt */
};

static void read_chunk(void *ctx, size_t c)
{
	struct totals_work *w = ctx;
	size_t end = (c + 1) * TOTALS_CHUNK < w->n ? (c + 1) * TOTALS_CHUNK : w->n;

	for (size_t i = c * TOTALS_CHUNK; i < end; i++) {
		struct profile_header h;

		if (w->ids[i].per_pid)
			continue;
		if (!db_profile_stat(w->db, w->seq, &w->ids[i], &h))
			w->total[i] = h.total;
		else
			w->bad[i] = true;
	}
}

/*
 * One entry per image key of the aggregate profiles, as db_image_totals()
 * makes them; (*bad)[k]: a profile of key k could not be read.
 */
static void totals_by_key(const struct totals_work *w, struct db_image_totals **v, bool **bad,
			  size_t *n)
{
	size_t alloc = 0, bad_alloc = 0;

	*v = NULL;
	*bad = NULL;
	*n = 0;
	for (size_t i = 0; i < w->n; i++) {
		if (w->ids[i].per_pid)
			continue;
		if (!*n || strcmp((*v)[*n - 1].key, w->ids[i].key)) {
			ALLOC_GROW(*v, *n + 1, alloc);
			memset(&(*v)[*n], 0, sizeof(**v));
			strcpy((*v)[*n].key, w->ids[i].key);
			ALLOC_GROW(*bad, *n + 1, bad_alloc);
			(*bad)[*n] = false;
			(*n)++;
		}
		(*v)[*n - 1].samples[w->ids[i].event] += w->total[i];
		(*bad)[*n - 1] |= w->bad[i];
	}
}

void data_load_images(struct job *job)
{
	struct data_arg *arg = job->arg;
	struct images_data *id = XNEW(struct images_data);
	struct totals_work w = { .db = arg->db, .seq = arg->seq };
	struct workpool_batch chunks = { .work = read_chunk, .ctx = &w };
	struct db_profile_id *ids = NULL;
	struct db_image_totals *tot = NULL;
	bool *bad = NULL;
	size_t n_tot = 0;

	job->result = id;
	id->seq = arg->seq;
	epoch_meta_init(&id->meta);
	image_index_init(&id->index);
	if (db_profiles_list(arg->db, arg->seq, &ids, &w.n))
		job->status = -1;
	w.ids = ids;
	w.total = xcalloc(w.n ? w.n : 1, sizeof(*w.total));
	w.bad = xcalloc(w.n ? w.n : 1, sizeof(*w.bad));
	id->meta_ok = db_meta_load(arg->db, arg->seq, &id->meta) == 0;
	for (size_t k = 0; id->meta_ok && k < id->meta.n_events; k++)
		id->events[id->meta.events[k].event] = true;
	id->index_ok = db_images_load(arg->db, arg->seq, &id->index) == 0;
	chunks.n = (w.n + TOTALS_CHUNK - 1) / TOTALS_CHUNK;
	workpool_run(&chunks);
	totals_by_key(&w, &tot, &bad, &n_tot);
	build_rows(id, tot, bad, n_tot);
	free(tot);
	free(bad);
	free(w.total);
	free(w.bad);
	free(ids);
	if (!id->index_ok)
		job->status = -1;
}

void images_data_free(void *data)
{
	struct images_data *id = data;

	if (!id)
		return;
	for (size_t i = 0; i < id->n; i++) {
		free(id->rows[i].path);
		binary_check_release(&id->rows[i].bin);
	}
	free(id->rows);
	image_index_release(&id->index);
	epoch_meta_release(&id->meta);
	free(id);
}

static void images_key(const struct source_env *env, const void *req, struct strbuf *key)
{
	strbuf_addf(key, "%" PRIu32, *(const uint32_t *)req);
}

static void images_title(const struct source_env *env, const void *req, struct strbuf *title)
{
	strbuf_addf(title, "reading the images of epoch %" PRIu32, *(const uint32_t *)req);
}

static void *images_arg(const struct source_env *env, const void *req)
{
	struct data_arg *arg = XNEW(struct data_arg);

	arg->db = env->db;
	arg->seq = *(const uint32_t *)req;
	arg->debug_dir = env->debug_dir;
	return arg;
}

const struct tui_source images_source = {
	.name = "images",
	.key = images_key,
	.title = images_title,
	.arg = images_arg,
	.free_arg = free,
	.run = data_load_images,
	.free_result = images_data_free,
};

const struct images_data *data_images(struct sources *s, uint32_t seq, struct view *waiter)
{
	return seq ? source_load(s, &images_source, &seq, waiter) : NULL;
}

/* ---- binaries, verified in the background --------------------------------------- */

/* The job's argument: the records to verify (copies), in the order to verify them. */
struct checks_arg {
	struct db *db;                   /* not owned */
	uint32_t seq;
	char *debug_dir, *kernel;
	struct db_image *recs;           /* per row (path owned; kind IMAGE_NONE: nothing to check) */
	size_t *order;                   /* rows, most samples first */
	size_t n, next;                  /* rows, and where to resume after a yield */
	struct binary_checks *res;       /* owned; the job's result once done */
};

static void checks_free(struct binary_checks *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		binary_check_release(&c->v[i]);
	free(c->v);
	free((void *)c->ready);
	free(c);
}

static void checks_arg_free(void *p)
{
	struct checks_arg *a = p;

	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++)
		free(a->recs[i].path);
	free(a->recs);
	free(a->order);
	free(a->debug_dir);
	free(a->kernel);
	checks_free(a->res);
	free(a);
}

static void run_checks(struct job *job)
{
	struct checks_arg *a = job->arg;
	struct image_opts o;

	memset(&o, 0, sizeof(o));
	o.db = a->db;
	o.seq = a->seq;
	o.kernel_release = a->kernel;
	o.debug_dir = a->debug_dir;
	for (; a->next < a->n; a->next++) {
		size_t i = a->order[a->next];

		if (job_cancelled(job))
			return;
		workpool_yield();
		if (a->next % 64 == 0)
			job_progress(job, a->next, a->n);
		if (a->recs[i].kind == IMAGE_FILE)
			image_check_binary(&a->recs[i], &o, &a->res->v[i], true);
		atomic_store_explicit(&a->res->ready[i], 1, memory_order_release);
		atomic_fetch_add(&a->res->n_done, 1);
	}
	job->result = a->res;  /* still the argument's: freed with it */
	job->status = 0;
}

static const void *checks_partial(const struct job *job)
{
	return ((const struct checks_arg *)job->arg)->res;
}

static void checks_key(const struct source_env *env, const void *req, struct strbuf *key)
{
	strbuf_addf(key, "%" PRIu32, ((const struct images_data *)req)->seq);
}

static void checks_title(const struct source_env *env, const void *req, struct strbuf *title)
{
	strbuf_addf(title, "verifying the binaries of epoch %" PRIu32,
		    ((const struct images_data *)req)->seq);
}

static int hotter_row(const void *x, const void *y, void *ctx)
{
	const struct images_data *id = ctx;
	const struct image_row *a = &id->rows[*(const size_t *)x];
	const struct image_row *b = &id->rows[*(const size_t *)y];
	uint64_t sa = 0, sb = 0;

	for (int e = 0; e < EVENT__COUNT; e++) {
		sa += a->samples[e];
		sb += b->samples[e];
	}
	if (sa != sb)
		return sa > sb ? -1 : 1;
	return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

static void *checks_arg_new(const struct source_env *env, const void *req)
{
	const struct images_data *id = req;
	struct checks_arg *a = XNEW(struct checks_arg);

	a->db = env->db;
	a->seq = id->seq;
	a->debug_dir = env->debug_dir ? xstrdup(env->debug_dir) : NULL;
	a->kernel = id->meta_ok && id->meta.kernel ? xstrdup(id->meta.kernel) : NULL;
	a->n = id->n;
	a->recs = xcalloc(a->n ? a->n : 1, sizeof(*a->recs));
	a->order = xcalloc(a->n ? a->n : 1, sizeof(*a->order));
	for (size_t i = 0; i < a->n; i++) {
		a->order[i] = i;
		if (!id->rows[i].img) {
			a->recs[i].kind = IMAGE_UNKNOWN;  /* profiles without an index entry: no binary */
			continue;
		}
		a->recs[i] = *id->rows[i].img;
		a->recs[i].path = xstrdup(id->rows[i].img->path ? id->rows[i].img->path : "");
	}
	/* most samples first: what the view shows first is verified first */
	qsort_r(a->order, a->n, sizeof(*a->order), hotter_row, (void *)id);
	a->res = XNEW(struct binary_checks);
	a->res->n = a->n;
	a->res->v = xcalloc(a->n ? a->n : 1, sizeof(*a->res->v));
	a->res->ready = xcalloc(a->n ? a->n : 1, sizeof(*a->res->ready));
	return a;
}

static const struct tui_source binaries_source = {
	.name = "binaries",
	.background = true,
	.key = checks_key,
	.title = checks_title,
	.arg = checks_arg_new,
	.free_arg = checks_arg_free,
	.run = run_checks,
	.partial = checks_partial,
};

const struct binary_checks *data_binaries(struct sources *s, const struct images_data *id,
					  struct view *waiter, bool *complete)
{
	const struct binary_checks *c;
	struct images_data *own = (struct images_data *)id;

	*complete = false;
	if (!id || id->checked) {
		*complete = true;
		return NULL;
	}
	c = source_load_partial(s, &binaries_source, id, waiter, complete);
	if (!*complete || !c)
		return c;
	/* the main thread owns the rows once loaded: they take the statuses */
	for (size_t i = 0; i < id->n && i < c->n; i++) {
		if (!id->rows[i].img)
			continue;
		own->rows[i].status = c->v[i].status;
		own->rows[i].bin = c->v[i];
		memset(&c->v[i], 0, sizeof(c->v[i]));
	}
	own->checked = true;
	return NULL;
}

enum binary_status binaries_status(const struct images_data *id,
				   const struct binary_checks *checks, size_t i)
{
	if (id->checked || !id->rows[i].img || id->rows[i].status != BINARY_CHECKING)
		return id->rows[i].status;
	if (checks && i < checks->n &&
	    atomic_load_explicit(&checks->ready[i], memory_order_acquire))
		return checks->v[i].status;
	return BINARY_CHECKING;
}

int data_default_event(const bool events[EVENT__COUNT])
{
	static const enum dcpi_event order[] = { EVENT_CYCLES, EVENT_CLOCK };

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (events[order[i]])
			return (int)order[i];
	for (int e = 0; e < EVENT__COUNT; e++)
		if (events[e])
			return e;
	return -1;
}
