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
	ed->n_images = xcalloc(ed->list.n ? ed->list.n : 1, sizeof(*ed->n_images));
	for (size_t i = 0; i < ed->list.n && !job_cancelled(job); i++) {
		struct db_epoch *e = &ed->list.v[i];
		struct image_index idx = IMAGE_INDEX_INIT;

		job_progress(job, i, ed->list.n);
		ed->n_images[i] = db_images_load(db, e->seq, &idx) ? SIZE_MAX : idx.n;
		image_index_release(&idx);
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
	free(ed->n_images);
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
	static const char *const names[] = { "-", "ok", "missing", "rebuilt", "unreadable" };

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
				      struct binary_check *out)
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
	image_free(img);
	return out->status;
}

void binary_check_release(struct binary_check *c)
{
	free(c->why);
	free(c->used);
	memset(c, 0, sizeof(*c));
}

static void row_set_path(struct image_row *row, const char *path)
{
	const char *slash;

	row->path = display_safe(path);
	slash = strrchr(row->path, '/');
	row->base = slash && slash[1] ? slash + 1 : row->path;
}

/* One row per index entry, plus one per key that has profiles but no entry. */
static void build_rows(struct images_data *id, const struct db_image_totals *tot, size_t n_tot)
{
	size_t alloc = 0;

	for (size_t i = 0; i < id->index.n; i++) {
		ALLOC_GROW(id->rows, id->n + 1, alloc);
		memset(&id->rows[id->n], 0, sizeof(*id->rows));
		strcpy(id->rows[id->n].key, id->index.v[i].key);
		id->rows[id->n].img = &id->index.v[i];
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
		for (int e = 0; e < EVENT__COUNT; e++) {
			row->samples[e] = tot[i].samples[e];
			id->total[e] += tot[i].samples[e];
			if (tot[i].samples[e])
				id->events[e] = true;
		}
	}
}

/* Progress and cancellation of db_image_totals_progress(): on a cold cache of
 * a big epoch the totals are the slow part (one small read per profile). */
static int totals_progress(void *ctx, size_t done, size_t total)
{
	struct job *job = ctx;

	job_progress(job, done, total);
	return job_cancelled(job);
}

/* The binary status of every row, as disasm verifies it. */
static void check_binaries(struct job *job, const struct data_arg *arg, struct images_data *id)
{
	struct image_opts o;

	memset(&o, 0, sizeof(o));
	o.db = arg->db;
	o.seq = arg->seq;
	o.kernel_release = id->meta_ok ? id->meta.kernel : NULL;
	o.debug_dir = arg->debug_dir;
	for (size_t i = 0; i < id->n && !job_cancelled(job); i++) {
		if (i % 64 == 0)
			job_progress(job, i, id->n);
		if (id->rows[i].img)
			id->rows[i].status = image_check_binary(id->rows[i].img, &o, &id->rows[i].bin);
	}
}

void data_load_images(struct job *job)
{
	struct data_arg *arg = job->arg;
	struct images_data *id = XNEW(struct images_data);
	struct db_image_totals *tot = NULL;
	size_t n_tot = 0;

	job->result = id;
	id->seq = arg->seq;
	epoch_meta_init(&id->meta);
	image_index_init(&id->index);
	id->meta_ok = db_meta_load(arg->db, arg->seq, &id->meta) == 0;
	for (size_t k = 0; id->meta_ok && k < id->meta.n_events; k++)
		id->events[id->meta.events[k].event] = true;
	id->index_ok = db_images_load(arg->db, arg->seq, &id->index) == 0;
	if (db_image_totals_progress(arg->db, arg->seq, &tot, &n_tot, totals_progress, job))
		job->status = -1;
	build_rows(id, tot, n_tot);
	free(tot);
	check_binaries(job, arg, id);
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
