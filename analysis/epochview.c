/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/epochview.c - an epoch opened for reports.
 */
#include "config.h"

#include "analysis/epochview.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/tracepaths.h"
#include "core/die.h"
#include "core/utf8.h"
#include "core/xalloc.h"

enum { PROF_NONE = 0, PROF_LOADED = 1 };

static void add_event(struct epoch_view *v, enum dcpi_event ev)
{
	for (size_t i = 0; i < v->n_events; i++)
		if (v->events[i] == ev)
			return;
	if (v->totals[ev])
		v->events[v->n_events++] = ev;
}

static int load_totals(struct epoch_view *v)
{
	struct db_image_totals *t;
	size_t n;

	if (db_image_totals(v->db, v->seq, &t, &n))
		return -1;
	for (size_t k = 0; k < n; k++) {
		const struct db_image *rec = image_index_find(&v->index, t[k].key);
		size_t i;

		if (!rec)
			continue;  /* a profile without an image record: nothing to name it by */
		i = (size_t)(rec - v->index.v);
		for (int e = 0; e < EVENT__COUNT; e++) {
			v->images[i].samples[e] += t[k].samples[e];
			v->totals[e] += t[k].samples[e];
		}
	}
	free(t);
	return 0;
}

int epoch_view_open(struct epoch_view *v, struct db *db, const char *epoch,
		    const struct epoch_view_opts *opts)
{
	memset(v, 0, sizeof(*v));
	v->db = db;
	if (opts)
		v->opts = *opts;
	image_index_init(&v->index);
	epoch_meta_init(&v->meta);
	if (db_epoch_resolve(db, epoch, &v->seq))
		return -1;
	v->meta_ok = !db_meta_load(db, v->seq, &v->meta);
	if (db_images_load(db, v->seq, &v->index))
		return -1;
	v->n_images = v->index.n;
	v->images = xcalloc(v->n_images ? v->n_images : 1, sizeof(*v->images));
	for (size_t i = 0; i < v->n_images; i++)
		v->images[i].rec = &v->index.v[i];
	if (load_totals(v))
		return -1;
	for (size_t i = 0; v->meta_ok && i < v->meta.n_events; i++)
		add_event(v, v->meta.events[i].event);
	for (int e = 0; e < EVENT__COUNT; e++)
		add_event(v, (enum dcpi_event)e);
	/* validate every profile now: damage is reported whatever is shown */
	for (size_t i = 0; i < v->n_images; i++)
		for (int e = 0; e < EVENT__COUNT; e++)
			if (v->images[i].samples[e])
				epoch_view_profile(v, i, (enum dcpi_event)e);
	return 0;
}

void epoch_view_release(struct epoch_view *v)
{
	for (size_t i = 0; i < v->n_images; i++) {
		image_free(v->images[i].img);
		for (int e = 0; e < EVENT__COUNT; e++)
			profile_release(&v->images[i].prof[e]);
		values_profile_release(&v->images[i].vals);
		paths_profile_release(&v->images[i].paths);
		if (v->images[i].pscale)
			v->images[i].pscale_free(v->images[i].pscale);
	}
	free(v->images);
	burst_set_release(&v->bursts);
	image_index_release(&v->index);
	epoch_meta_release(&v->meta);
	memset(v, 0, sizeof(*v));
}

struct image *epoch_view_image(struct epoch_view *v, size_t i)
{
	struct ev_image *e = &v->images[i];

	if (!e->img) {
		struct image_opts o;

		memset(&o, 0, sizeof(o));
		o.db = v->db;
		o.seq = v->seq;
		o.kernel_release = v->meta_ok ? v->meta.kernel : NULL;
		o.debug_dir = v->opts.debug_dir;
		o.force = v->opts.force;
		e->img = image_open(e->rec, &o);
	}
	return e->img;
}

const struct profile *epoch_view_profile(struct epoch_view *v, size_t i, enum dcpi_event ev)
{
	struct ev_image *e = &v->images[i];
	struct db_profile_id id;

	if (e->prof_state[ev] == PROF_NONE) {
		e->prof_state[ev] = PROF_LOADED;
		profile_init(&e->prof[ev]);
		if (e->samples[ev] && !db_profile_id_set(&id, e->rec->key, ev, false, 0))
			db_profile_load(v->db, v->seq, &id, &e->prof[ev]);  /* errors reported */
	}
	return &e->prof[ev];
}

const struct burst_set *epoch_view_bursts(struct epoch_view *v)
{
	if (v->bursts_state == PROF_NONE) {
		v->bursts_state = PROF_LOADED;
		burst_set_init(&v->bursts);
		db_bursts_load(v->db, v->seq, &v->bursts);  /* errors reported */
	}
	return &v->bursts;
}

const struct values_profile *epoch_view_values(struct epoch_view *v, size_t i)
{
	struct ev_image *e = &v->images[i];

	if (e->vals_state == PROF_NONE) {
		e->vals_state = PROF_LOADED;
		values_profile_init(&e->vals);
		db_values_load(v->db, v->seq, e->rec->key, &e->vals);  /* errors reported */
	}
	return &e->vals;
}

void epoch_view_paths_summary(const struct epoch_view *v, struct paths_summary *s)
{
	if (v->meta_ok)
		paths_summary_from_meta(&v->meta, s);
	else
		memset(s, 0, sizeof(*s));
}

const struct paths_profile *epoch_view_paths(struct epoch_view *v, size_t i)
{
	struct ev_image *e = &v->images[i];
	struct paths_summary s;

	if (e->paths_state == PROF_NONE) {
		e->paths_state = PROF_LOADED;
		paths_profile_init(&e->paths);
		/* errors reported; 1: none */
		if (db_paths_load(v->db, v->seq, e->rec->key, &e->paths) == 1) {
			epoch_view_paths_summary(v, &s);
			if (!s.bursts && epoch_view_bursts(v)->n)
				tracepaths_build(&v->bursts, e->rec->key, epoch_view_image(v, i), &e->paths);
		}
	}
	return &e->paths;
}

bool epoch_view_image_matches(const struct epoch_view *v, size_t i, const char *spec)
{
	const struct db_image *rec = v->images[i].rec;
	const char *slash = strrchr(rec->path, '/');

	return !strcmp(rec->path, spec) || !strcmp(slash ? slash + 1 : rec->path, spec) ||
	       !strcmp(rec->key, spec);
}

const char *epoch_view_event_label(const struct epoch_view *v, enum dcpi_event ev, char *buf,
				   size_t size)
{
	const struct epoch_event *e = v->meta_ok ? epoch_meta_event(&v->meta, ev) : NULL;

	if (e && e->used != ev)
		snprintf(buf, size, "%s(%s)", event_name(ev), event_name(e->used));
	else
		snprintf(buf, size, "%s", event_name(ev));
	return buf;
}

void epoch_view_warn_image(struct epoch_view *v, size_t i)
{
	struct ev_image *e = &v->images[i];
	struct image *img = epoch_view_image(v, i);
	const char *why = img->syms_why ? img->syms_why : img->why;
	char *safe;

	if (e->warned || !why || img->state == IMAGE_NOTHING ||
	    (img->state == IMAGE_NAMES_ONLY && !img->syms_why))
		return;
	e->warned = true;
	safe = display_safe(why);
	warning("%s", safe);
	free(safe);
}
