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
#include "tui/data-epoch.h"
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

void diff_data_free(void *data)
{
	struct diff_data *dd = data;

	if (!dd)
		return;
	for (size_t i = 0; i < dd->n_notes; i++)
		free(dd->notes[i]);
	free(dd->notes);
	free(dd->path_rank);
	free(dd->proc_name);
	free(dd->desc_a);
	free(dd->desc_b);
	free(dd->unaligned);
	free(dd->error);
	if (!dd->status)
		diff_epochs_release(&dd->de);
	shared_epoch_put(dd->se[0]);
	shared_epoch_put(dd->se[1]);
	free(dd);
}

const char *diff_data_base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

static const struct pset_rows *ranked_rows;

static int cmp_path(const void *a, const void *b)
{
	const char *x = pset_rows_path(ranked_rows, *(const uint32_t *)a);
	const char *y = pset_rows_path(ranked_rows, *(const uint32_t *)b);
	int r = strcmp(diff_data_base(x), diff_data_base(y));

	return r ? r : strcmp(x, y);
}

/* Ranks the rows' image paths, so that sorting a million rows by image sorts numbers. */
static void rank_paths(struct diff_data *dd)
{
	const struct pset_rows *t = &dd->de.diff.rows_src;
	size_t n = pset_rows_n_paths(t);
	uint32_t *v = xcalloc(n + 1, sizeof(*v)), rank = 0;

	for (size_t i = 0; i < n; i++)
		v[i] = (uint32_t)i;
	ranked_rows = t;
	qsort(v, n, sizeof(*v), cmp_path);
	dd->path_rank = xcalloc(n + 1, sizeof(*dd->path_rank));
	for (size_t i = 0; i < n; i++) {
		if (i && cmp_path(&v[i - 1], &v[i]))
			rank++;
		dd->path_rank[v[i]] = rank;
	}
	ranked_rows = NULL;
	free(v);
}

static void count_shown(struct diff_data *dd)
{
	const struct diff *d = &dd->de.diff;

	dd->n_shown = 0;
	for (size_t i = 0; i < d->n_rows; i++)
		dd->n_shown += diff_src_shown(d, i);
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
	count_shown(dd);
	if (d->has_proc)
		dd->proc_name = display_safe(d->proc.name);
	rank_paths(dd);
}

/*
 * dd made into the comparison with its sides exchanged (swap) and
 * normalised by norm, in place: the numbers, verdicts and order computed
 * again from its rows (a view that still shows it reads new numbers, and
 * reloads).  -1 (reported) if norm cannot be (a period unknown): then only
 * swapped.
 */
static int remake(struct diff_data *dd, bool swap, enum pset_norm norm)
{
	struct diff *d = &dd->de.diff;
	int r = 0;

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
	if (swap || !r) {
		count_shown(dd);
		dd->generation++;
	}
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
	struct pset *pa, *pb;

	job->result = dd;
	dd->a = arg->req.a;
	dd->b = arg->req.b;
	o.procedure = arg->req.procedure;
	o.norm = arg->env.norm_period ? PSET_NORM_PERIOD : PSET_NORM_TOTAL;
	/* the sets first (the event depends on them), then the diff: on the session's epochs */
	dd->se[0] = data_epoch_get(arg->env.analysis, job, arg->env.db, arg->req.a, arg->env.force);
	if (dd->se[0]->status) {
		dd->status = job->status = -1;
		dd->error = display_safe(dd->se[0]->error ? dd->se[0]->error : "cannot open epoch A");
		return;
	}
	dd->se[1] = data_epoch_get(arg->env.analysis, job, arg->env.db, arg->req.b, arg->env.force);
	if (dd->se[1]->status) {
		dd->status = job->status = -1;
		dd->error = display_safe(dd->se[1]->error ? dd->se[1]->error : "cannot open epoch B");
		return;
	}
	pset_borrow_epoch(&dd->de.a, &dd->se[0]->view);
	pset_borrow_epoch(&dd->de.b, &dd->se[1]->view);
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
