/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/epochview.c - an epoch opened for reports.
 */
#include "config.h"

#include "analysis/epochview.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/tracepaths.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"

/* A profile's state: not read yet, read and validated (raw, maybe none), decoded (prof). */
enum { PROF_NONE = 0, PROF_LOADED = 1, PROF_RAW = 2 };

static void add_event(struct epoch_view *v, enum dcpi_event ev)
{
	for (size_t i = 0; i < v->n_events; i++)
		if (v->events[i] == ev)
			return;
	if (v->totals[ev] || v->unread[ev])
		v->events[v->n_events++] = ev;
}

/*
 * A record for an image that profiles name and the index does not (a
 * damaged or missing index): its kind and path from its key where the key
 * says them, else a file whose build-id the key is (a snapshot of it may
 * be kept) and a path saying what happened.
 */
static void orphan_record(struct epoch_view *v, const char *key)
{
	struct db_image img;
	size_t n = strlen(key);

	memset(&img, 0, sizeof(img));
	strcpy(img.key, key);
	img.kind = IMAGE_FILE;
	img.path = (char *)"[not in the image index]";
	if (!strcmp(key, "kernel")) {
		img.kind = IMAGE_KERNEL;
		img.path = (char *)"[kernel.kallsyms]";
	} else if (!strcmp(key, "vdso")) {
		img.kind = IMAGE_VDSO;
		img.path = (char *)"[vdso]";
	} else if (!strcmp(key, "unknown")) {
		img.kind = IMAGE_UNKNOWN;
		img.path = (char *)"[unknown]";
	} else if (!strncmp(key, "anon-", 5)) {
		img.kind = IMAGE_ANON;
	} else if (!strncmp(key, "mod-", 4)) {
		img.kind = IMAGE_MODULE;
	} else if (n % 2 == 0 && strspn(key, "0123456789abcdef") == n) {
		image_parse_build_id(&img, key);
	}
	image_index_put(&v->index, &img);
}

static int load_totals(struct epoch_view *v, bool index_read)
{
	struct db_image_totals *t;
	size_t n, orphans = 0;
	bool had_records = v->index.n > 0;

	if (db_image_totals(v->db, v->seq, &t, &n))
		return -1;
	for (size_t k = 0; k < n; k++)
		if (!image_index_find(&v->index, t[k].key)) {
			orphan_record(v, t[k].key);
			orphans++;
		}
	if (orphans && index_read)
		db_damage(v->db, DB_MISSING, v->seq, "images",
			  "%s: no record of %zu image%s its profiles name (their samples are "
			  "counted, not named)", had_records ? "incomplete" : "missing or empty",
			  orphans, orphans == 1 ? "" : "s");
	v->n_images = v->index.n;
	v->images = xcalloc(v->n_images ? v->n_images : 1, sizeof(*v->images));
	for (size_t i = 0; i < v->n_images; i++)
		v->images[i].rec = &v->index.v[i];
	for (size_t k = 0; k < n; k++) {
		size_t i = (size_t)(image_index_find(&v->index, t[k].key) - v->index.v);

		for (int e = 0; e < EVENT__COUNT; e++) {
			v->images[i].samples[e] += t[k].samples[e];
			v->totals[e] += t[k].samples[e];
		}
	}
	free(t);
	return 0;
}

/*
 * Reads every profile now, so that damage is reported whatever is shown;
 * the samples of one that cannot be read move from totals[] to unread[],
 * and what the meta counts beyond the readable profiles is unread too.
 */
static void validate_profiles(struct epoch_view *v)
{
	struct strbuf file = STRBUF_INIT;
	struct profile scratch = PROFILE_INIT;

	for (size_t i = 0; i < v->n_images; i++) {
		struct ev_image *im = &v->images[i];

		for (int e = 0; e < EVENT__COUNT; e++) {
			struct db_profile_id id;
			int r;

			if (!im->samples[e])
				continue;
			im->prof_state[e] = PROF_RAW;
			if (db_profile_id_set(&id, im->rec->key, (enum dcpi_event)e, false, 0))
				continue;
			if ((r = db_profile_read(v->db, v->seq, &id, &file, &scratch)) < 0) {
				im->unread[e] = im->samples[e];
				v->unread[e] += im->samples[e];
				v->totals[e] -= im->samples[e];
				im->samples[e] = 0;
			} else if (!r) {
				/* kept as read: decoded when asked for */
				im->raw[e] = xmemdup(file.buf, file.len);
				im->raw_len[e] = (uint32_t)file.len;
			}
		}
	}
	strbuf_release(&file);
	profile_release(&scratch);
	for (size_t k = 0; v->meta_ok && k < v->meta.n_events; k++) {
		const struct epoch_event *ev = &v->meta.events[k];
		uint64_t beyond = ev->samples > v->totals[ev->event] ?
				  ev->samples - v->totals[ev->event] : 0;
		char name[40];

		/* no profile said to be damaged: one is missing */
		if (beyond > v->unread[ev->event] && !v->unread[ev->event] && !epoch_view_partial(v)) {
			snprintf(name, sizeof(name), "*.%s.prof", event_name(ev->event));
			db_damage(v->db, DB_MISSING, v->seq, name,
				  "the meta counts %" PRIu64 " %s samples, the profiles hold %" PRIu64
				  " (a profile was lost?)", ev->samples, event_name(ev->event),
				  v->totals[ev->event]);
		}
		if (beyond > v->unread[ev->event])
			v->unread[ev->event] = beyond;
	}
}

int epoch_view_open(struct epoch_view *v, struct db *db, const char *epoch,
		    const struct epoch_view_opts *opts)
{
	bool index_read;

	memset(v, 0, sizeof(*v));
	v->db = db;
	if (opts)
		v->opts = *opts;
	image_index_init(&v->index);
	epoch_meta_init(&v->meta);
	if (db_epoch_resolve(db, epoch, &v->seq))
		return -1;
	v->meta_ok = !db_meta_load(db, v->seq, &v->meta);
	/* a damaged index (reported) leaves the profiles to name their images */
	index_read = !db_images_load(db, v->seq, &v->index);
	if (load_totals(v, index_read))
		return -1;
	validate_profiles(v);
	for (size_t i = 0; v->meta_ok && i < v->meta.n_events; i++)
		add_event(v, v->meta.events[i].event);
	for (int e = 0; e < EVENT__COUNT; e++)
		add_event(v, (enum dcpi_event)e);
	return 0;
}

bool epoch_view_partial(const struct epoch_view *v)
{
	return db_damage_partial(v->db, v->seq);
}

const struct db_damage *epoch_view_image_damage(const struct epoch_view *v, size_t i)
{
	return db_damage_of_image(v->db, v->seq, v->images[i].rec->key);
}

void epoch_view_release(struct epoch_view *v)
{
	for (size_t i = 0; i < v->n_images; i++) {
		image_free(v->images[i].img);
		for (int e = 0; e < EVENT__COUNT; e++) {
			profile_release(&v->images[i].prof[e]);
			free(v->images[i].raw[e]);
		}
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

/* Decodes image e's profile of ev, read and validated, into p; false if there is none. */
static bool decode_raw(const struct ev_image *e, enum dcpi_event ev, struct profile *p)
{
	struct profile_header h;
	const char *why;

	p->n = 0;
	if (!e->raw[ev])
		return false;
	if (profile_decode(e->raw[ev], e->raw_len[ev], &h, p, &why))
		BUG("profile validated, then not decoded: %s", why);
	return true;
}

const struct profile *epoch_view_profile(struct epoch_view *v, size_t i, enum dcpi_event ev)
{
	struct ev_image *e = &v->images[i];
	struct db_profile_id id;

	if (e->prof_state[ev] == PROF_RAW) {
		e->prof_state[ev] = PROF_LOADED;
		profile_init(&e->prof[ev]);
		decode_raw(e, ev, &e->prof[ev]);
	} else if (e->prof_state[ev] == PROF_NONE) {
		e->prof_state[ev] = PROF_LOADED;
		profile_init(&e->prof[ev]);
		if (e->samples[ev] && !db_profile_id_set(&id, e->rec->key, ev, false, 0))
			db_profile_load(v->db, v->seq, &id, &e->prof[ev]);  /* errors reported */
	}
	return &e->prof[ev];
}

void epoch_view_profile_forget(struct epoch_view *v, size_t i)
{
	struct ev_image *e = &v->images[i];

	for (int ev = 0; ev < EVENT__COUNT; ev++) {
		if (e->prof_state[ev] != PROF_LOADED || !e->raw[ev])
			continue;
		profile_release(&e->prof[ev]);
		e->prof_state[ev] = PROF_RAW;
	}
}

const struct profile *epoch_view_profile_pass(struct epoch_view *v, size_t i, enum dcpi_event ev,
					      struct profile *scratch)
{
	struct ev_image *e = &v->images[i];

	if (e->prof_state[ev] == PROF_RAW) {
		decode_raw(e, ev, scratch);
		return scratch;
	}
	return epoch_view_profile(v, i, ev);
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

static bool any_samples(const struct ev_image *e)
{
	for (int k = 0; k < EVENT__COUNT; k++)
		if (e->samples[k])
			return true;
	return false;
}

/*
 * Anonymous memory without a JIT map is common (a JIT that writes none,
 * code copied to the heap): said once for the epoch, naming the processes
 * whose samples it left unnamed.
 */
static void warn_no_jit_maps(struct epoch_view *v)
{
	struct strbuf pids = STRBUF_INIT;
	uint64_t samples = 0;
	size_t n = 0;

	for (size_t k = 0; k < v->n_images; k++) {
		struct ev_image *e = &v->images[k];
		struct image *img;

		if (e->rec->kind != IMAGE_ANON || !any_samples(e))
			continue;
		img = epoch_view_image(v, k);
		image_load_procs(img);
		if (img->state != IMAGE_MISSING || img->syms_why)
			continue;
		e->warned = true;
		for (int ev = 0; ev < EVENT__COUNT; ev++)
			samples += e->samples[ev];
		if (n++ < 4)
			strbuf_addf(&pids, "%s%s", n > 1 ? ", " : "", e->rec->key + 5);
	}
	if (n)
		warning("epoch %" PRIu32 ": %" PRIu64 " samples in anonymous memory of pid %s%s have "
			"no JIT map (perf-PID.map) to name them", v->seq, samples, pids.buf,
			n > 4 ? " and others" : "");
	strbuf_release(&pids);
}

void epoch_view_warn_image(struct epoch_view *v, size_t i)
{
	struct ev_image *e = &v->images[i];
	struct image *img = epoch_view_image(v, i);
	const char *why = img->syms_why ? img->syms_why : img->why;
	char *safe;

	if (e->warned || !why || img->state == IMAGE_NOTHING ||
	    (img->state == IMAGE_NAMES_ONLY && !img->syms_why) || !any_samples(e))
		return;
	if (e->rec->kind == IMAGE_ANON && img->state == IMAGE_MISSING && !img->syms_why) {
		warn_no_jit_maps(v);
		return;
	}
	e->warned = true;
	safe = display_safe(why);
	warning("%s", safe);
	free(safe);
}
