/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/data-diff.c - two epochs compared for the diff views, by dcpidiff's
 * engine (see tui/data-diff.h).
 */
#include "config.h"
#include "tui/data-diff.h"

#include "core/die.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "tui/job.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void diff_arg_free(void *arg)
{
	struct diff_arg *a = arg;

	if (!a)
		return;
	free((char *)a->req.procedure);
	free(a);
}

static void vrow_release(struct diff_vrow *v)
{
	if (v->owned_name)
		free(v->name);
	if (v->owned_image)
		free(v->image);
}

void diff_data_free(void *data)
{
	struct diff_data *dd = data;

	if (!dd)
		return;
	for (size_t i = 0; i < dd->n; i++)
		vrow_release(&dd->rows[i]);
	free(dd->rows);
	vrow_release(&dd->proc);
	for (size_t i = 0; i < dd->n_notes; i++)
		free(dd->notes[i]);
	free(dd->notes);
	free(dd->desc_a);
	free(dd->desc_b);
	free(dd->unaligned);
	free(dd->error);
	if (!dd->status)
		diff_epochs_release(&dd->de);
	free(dd);
}

/* True if display_safe(s) would be s: printable ASCII, no backslash. */
static bool plain(const char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e || *s == '\\')
			return false;
	return true;
}

static char *safe(const char *s, bool *owned)
{
	*owned = !plain(s ? s : "");
	return *owned ? display_safe(s) : (char *)(s ? s : "");
}

static void vrow_init(struct diff_vrow *v, const struct diff *d, const struct diff_row *r)
{
	const char *slash;

	v->r = r;
	v->name = safe(r->name, &v->owned_name);
	v->image = safe(r->image, &v->owned_image);
	slash = strrchr(v->image, '/');
	v->base = slash && slash[1] ? slash + 1 : v->image;
	v->shown = diff_row_shown(d, r);
}

static int cmp_image_of(const void *a, const void *b)
{
	const struct diff_vrow *x = *(struct diff_vrow *const *)a, *y = *(struct diff_vrow *const *)b;
	int r = strcmp(x->base, y->base);

	return r ? r : strcmp(x->image, y->image);
}

/* Ranks the rows' images, so that sorting 100,000 rows by image compares numbers. */
static void rank_images(struct diff_data *dd)
{
	struct diff_vrow **v = xcalloc(dd->n ? dd->n : 1, sizeof(*v));
	uint32_t rank = 0;

	for (size_t i = 0; i < dd->n; i++)
		v[i] = &dd->rows[i];
	qsort(v, dd->n, sizeof(*v), cmp_image_of);
	for (size_t i = 0; i < dd->n; i++) {
		if (i && cmp_image_of(&v[i - 1], &v[i]))
			rank++;
		v[i]->image_rank = rank;
	}
	free(v);
}

static void describe(struct diff_data *dd)
{
	const struct diff *d = &dd->de.diff;

	pset_event_label(d->sets, d->n_sets, d->event, dd->label, sizeof(dd->label));
	dd->desc_a = display_safe(d->sets[d->side_a[0]]->desc);
	dd->desc_b = display_safe(d->sets[d->side_b[0]]->desc);
	dd->n_notes = d->rows_src.n_notes;
	dd->notes = xcalloc(dd->n_notes ? dd->n_notes : 1, sizeof(*dd->notes));
	for (size_t i = 0; i < dd->n_notes; i++)
		dd->notes[i] = display_safe(d->rows_src.notes[i]);
	if (d->unaligned)
		dd->unaligned = display_safe(d->unaligned);
	dd->n = d->n_rows;
	dd->rows = xcalloc(dd->n ? dd->n : 1, sizeof(*dd->rows));
	for (size_t i = 0; i < dd->n; i++) {
		vrow_init(&dd->rows[i], d, &d->rows[i]);
		dd->n_shown += dd->rows[i].shown;
	}
	if (d->has_proc)
		vrow_init(&dd->proc, d, &d->proc);
	rank_images(dd);
}

/*
 * dd made into the comparison with its sides exchanged (swap) and
 * normalised by norm, in place: the numbers and verdicts computed again
 * from its rows, the view rows rewritten where they are (a view that still
 * points at them reads rows, not freed memory), each image's rank kept.
 * -1 (reported) if norm cannot be (a period unknown): then only swapped.
 */
static int remake(struct diff_data *dd, bool swap, enum pset_norm norm)
{
	struct diff *d = &dd->de.diff;
	uint32_t *rank = xcalloc(dd->n + 1, sizeof(*rank));
	int r = 0;

	for (size_t i = 0; i < dd->n; i++) {
		rank[dd->rows[i].r->src - d->rows_src.rows] = dd->rows[i].image_rank;
		vrow_release(&dd->rows[i]);
	}
	if (swap) {
		uint32_t a = dd->a;
		char *desc = dd->desc_a;

		diff_swap(d);
		dd->a = dd->b;
		dd->b = a;
		dd->desc_a = dd->desc_b;
		dd->desc_b = desc;
	}
	if (norm != d->opts.norm)
		r = diff_renorm(d, norm);
	dd->n_shown = 0;
	for (size_t i = 0; i < dd->n; i++) {
		vrow_init(&dd->rows[i], d, &d->rows[i]);
		dd->rows[i].image_rank = rank[d->rows[i].src - d->rows_src.rows];
		dd->n_shown += dd->rows[i].shown;
	}
	if (d->has_proc) {
		vrow_release(&dd->proc);
		vrow_init(&dd->proc, d, &d->proc);
	}
	free(rank);
	return r;
}

/*
 * The diff req asks for, made from one of the same two epochs already
 * loaded (the sides exchanged, x; the other normalisation, %) instead of
 * comparing them again: true if there was one.
 */
static bool remade(struct sources *s, const struct diff_req *req)
{
	struct source_env other = s->env;
	const struct diff_req swapped = { req->b, req->a, NULL };
	const struct { const struct diff_req *from; bool other_norm, swap; } ways[] = {
		{ &swapped, false, true }, { req, true, false }, { &swapped, true, true },
	};
	enum pset_norm norm = s->env.norm_period ? PSET_NORM_PERIOD : PSET_NORM_TOTAL;

	other.norm_period = !s->env.norm_period;
	if (req->procedure || source_peek(s, &diff_source, req))
		return false;
	for (size_t k = 0; k < sizeof(ways) / sizeof(ways[0]); k++) {
		const struct source_env *env = ways[k].other_norm ? &other : NULL;
		struct diff_data *dd = (struct diff_data *)source_peek_as(s, &diff_source, env,
									  ways[k].from);

		if (!dd || dd->status)
			continue;
		struct report_log said = REPORT_LOG_INIT, *prev = report_capture(&said);
		int r = remake(dd, ways[k].swap, norm);

		report_capture(prev);
		report_log_clear(&said);
		if (r) {
			/* a period unknown: as it was; the job for req fails and says why */
			if (ways[k].swap)
				remake(dd, true, dd->de.diff.opts.norm);
			return false;
		}
		source_refile(s, &diff_source, env, ways[k].from, req);
		return true;
	}
	return false;
}

/* The event asked for if either epoch has samples of it, else dcpidiff's default. */
static enum dcpi_event pick_event(struct diff_epochs *de, int event)
{
	struct pset *sets[2] = { &de->a, &de->b };

	if (event >= 0 && (pset_total(sets[0], (enum dcpi_event)event) ||
			   pset_total(sets[1], (enum dcpi_event)event)))
		return (enum dcpi_event)event;
	return pset_default_event(sets, 2);
}

static void failed(struct job *job, struct diff_data *dd, const char *dflt)
{
	dd->status = job->status = -1;
	dd->error = display_safe(job_last_message(job, dflt));
}

void data_load_diff(struct job *job)
{
	struct diff_arg *arg = job->arg;
	struct diff_data *dd = XNEW(struct diff_data);
	struct diff_opts o = DIFF_OPTS_INIT;
	struct epoch_view_opts vo = { .force = arg->env.force, .debug_dir = arg->env.debug_dir };
	struct pset *pa, *pb;

	job->result = dd;
	dd->a = arg->req.a;
	dd->b = arg->req.b;
	o.procedure = arg->req.procedure;
	o.norm = arg->env.norm_period ? PSET_NORM_PERIOD : PSET_NORM_TOTAL;
	/* the sets first (the event depends on them), then the diff */
	if (pset_open_epoch(&dd->de.a, arg->env.db, arg->req.a, &vo)) {
		failed(job, dd, "cannot open epoch A");
		return;
	}
	if (pset_open_epoch(&dd->de.b, arg->env.db, arg->req.b, &vo)) {
		pset_release(&dd->de.a);
		failed(job, dd, "cannot open epoch B");
		return;
	}
	o.event = pick_event(&dd->de, arg->env.event);
	/* as diff_epochs_open() does, on the sets already open */
	pa = &dd->de.a;
	pb = &dd->de.b;
	if (job_cancelled(job) || diff_build(&dd->de.diff, &pa, 1, &pb, 1, &o)) {
		pset_release(&dd->de.a);
		pset_release(&dd->de.b);
		failed(job, dd, job_cancelled(job) ? "cancelled" : "cannot compare the epochs");
		return;
	}
	if (arg->req.procedure)
		diff_sort(&dd->de.diff, DIFF_SORT_ADDRESS);
	describe(dd);
}

/* ---- the data source (tui/source.h) ------------------------------------------------- */

static void diff_key(const struct source_env *env, const void *req, struct strbuf *key)
{
	const struct diff_req *r = req;

	strbuf_addf(key, "%" PRIu32 "/%" PRIu32 "/%d/%d/%c", r->a, r->b, env->force, env->event,
		    env->norm_period ? 'p' : 't');
	if (r->procedure)
		strbuf_addf(key, "/%s", r->procedure);
}

static void diff_title(const struct source_env *env, const void *req, struct strbuf *title)
{
	const struct diff_req *r = req;

	strbuf_addf(title, "comparing epochs %" PRIu32 " and %" PRIu32, r->a, r->b);
}

static void *diff_arg_new(const struct source_env *env, const void *req)
{
	const struct diff_req *r = req;
	struct diff_arg *arg = XNEW(struct diff_arg);

	arg->env = *env;
	arg->req = *r;
	arg->req.procedure = r->procedure ? xstrdup(r->procedure) : NULL;
	return arg;
}

const struct tui_source diff_source = {
	.name = "diff",
	.key = diff_key,
	.title = diff_title,
	.arg = diff_arg_new,
	.free_arg = diff_arg_free,
	.run = data_load_diff,
	.free_result = diff_data_free,
};

const struct diff_data *data_diff(struct sources *s, uint32_t a, uint32_t b, const char *procedure,
				  struct view *waiter)
{
	const struct diff_req req = { a, b, procedure };

	if (!a || !b)
		return NULL;
	remade(s, &req);
	return source_load(s, &diff_source, &req, waiter);
}
