/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/data-proc.c - procedures and listings for the analysis views, on
 * epoch views shared between jobs (tui/data-epoch.h).
 */
#include "config.h"
#include "tui/data-proc.h"

#include "analysis/lookup.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "disasm/srcfile.h"
#include "core/workpool.h"
#include "tui/job.h"
#include "tui/view.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- procedures ------------------------------------------------------------ */

void procs_arg_free(void *arg)
{
	struct procs_arg *a = arg;

	if (!a)
		return;
	free((char *)a->req.image);
	free(a);
}

void procs_data_free(void *data)
{
	struct procs_data *pd = data;

	if (!pd)
		return;
	for (size_t i = 0; i < pd->n; i++)
		if (pd->rows[i].name != pd->rows[i].pr->name)
			free(pd->rows[i].name);
	free(pd->rows);
	for (size_t i = 0; i < pd->n_images; i++) {
		free(pd->images[i].path);
		free(pd->images[i].why);
	}
	free(pd->images);
	procprof_release(&pd->pp);
	free(pd->image);
	free(pd->error);
	shared_epoch_put(pd->se);
	free(pd);
}

static bool image_wanted(struct epoch_view *v, size_t i, const char *image)
{
	bool any = false;

	for (int e = 0; e < EVENT__COUNT; e++)
		any |= v->images[i].samples[e] != 0;
	return any && (!image || epoch_view_image_matches(v, i, image));
}

/*
 * Opens the images and reads their symbols, with progress: the slow part
 * of the procedures of a big epoch (10,000 images on a server), which
 * procprof_build() would otherwise do in one go.  Chunks of images go to
 * helper threads and the job's; what each chunk reports is kept apart (in
 * a job of its own) and said in the order of the images, as one thread
 * would have said it.  Images are apart: each is opened by one thread.
 */
#define OPEN_CHUNK 32
#define OPEN_THREADS 2

struct open_work {
	struct epoch_view *v;
	const char *image;
	struct job *job;
	struct job *chunks;          /* per chunk: what it reported */
	size_t n_chunks;
	atomic_size_t next;          /* the next chunk */
	atomic_size_t opened;        /* images looked at */
};

static void open_chunks(struct open_work *w)
{
	size_t c;

	while ((c = atomic_fetch_add(&w->next, 1)) < w->n_chunks && !job_cancelled(w->job)) {
		size_t end = (c + 1) * OPEN_CHUNK < w->v->n_images ? (c + 1) * OPEN_CHUNK
								   : w->v->n_images;

		job_enter(&w->chunks[c]);
		for (size_t i = c * OPEN_CHUNK; i < end; i++)
			if (image_wanted(w->v, i, w->image))
				image_procs(epoch_view_image(w->v, i));
		job_progress(w->job, atomic_fetch_add(&w->opened, end - c * OPEN_CHUNK) +
			     end - c * OPEN_CHUNK, w->v->n_images);
	}
	job_enter(NULL);
}

static void *open_thread(void *p)
{
	open_chunks(p);
	return NULL;
}

static void open_images(struct job *job, struct epoch_view *v, const char *image)
{
	struct open_work w = { .v = v, .image = image, .job = job };
	pthread_t threads[OPEN_THREADS];
	size_t started = 0;

	w.n_chunks = (v->n_images + OPEN_CHUNK - 1) / OPEN_CHUNK;
	w.chunks = xcalloc(w.n_chunks ? w.n_chunks : 1, sizeof(*w.chunks));
	atomic_init(&w.next, 0);
	atomic_init(&w.opened, 0);
	for (; w.n_chunks > 1 && started < OPEN_THREADS - 1; started++)
		if (pthread_create(&threads[started], NULL, open_thread, &w))
			break;
	open_chunks(&w);
	for (size_t t = 0; t < started; t++)
		pthread_join(threads[t], NULL);
	job_enter(job);
	for (size_t c = 0; c < w.n_chunks; c++) {
		for (size_t m = 0; m < w.chunks[c].n_msgs; m++) {
			job_add_message(job, w.chunks[c].msgs[m].level, w.chunks[c].msgs[m].text);
			free(w.chunks[c].msgs[m].text);
		}
		free(w.chunks[c].msgs);
	}
	free(w.chunks);
}

static void describe_images(struct procs_data *pd, struct epoch_view *v)
{
	pd->n_images = v->n_images;
	pd->images = xcalloc(v->n_images ? v->n_images : 1, sizeof(*pd->images));
	for (size_t i = 0; i < v->n_images; i++) {
		struct procs_image *pi = &pd->images[i];
		const char *slash;

		pi->path = display_safe(v->images[i].rec->path);
		slash = strrchr(pi->path, '/');
		pi->base = slash && slash[1] ? slash + 1 : pi->path;
	}
	for (size_t r = 0; r < pd->pp.n_rows; r++) {
		struct procs_image *pi = &pd->images[pd->pp.rows[r].image];
		struct image *img;
		const char *why;

		if (pi->opened)
			continue;
		img = epoch_view_image(v, pd->pp.rows[r].image);
		pi->opened = true;
		pi->state = img->state;
		pi->forced = img->forced;
		why = img->syms_why ? img->syms_why : img->why;
		pi->why = why ? display_safe(why) : NULL;
	}
}

/* True if display_safe(s) would be s: printable ASCII, no backslash. */
static bool plain(const char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e || *s == '\\')
			return false;
	return true;
}

void data_load_procs(struct job *job)
{
	struct procs_arg *arg = job->arg;
	struct procs_data *pd = XNEW(struct procs_data);
	struct procprof_opts po = PROCPROF_OPTS_INIT;
	const char *images[1] = { arg->req.image };
	struct epoch_view *v;

	job->result = pd;
	pd->seq = arg->req.seq;
	pd->force = arg->env.force;
	pd->by = arg->req.by;
	pd->image = arg->req.image ? xstrdup(arg->req.image) : NULL;
	pd->se = data_epoch_get(arg->env.analysis, job, arg->env.db, arg->req.seq, arg->env.force);
	if ((pd->status = job->status = pd->se->status)) {
		pd->error = xstrdup(pd->se->error);
		return;
	}
	v = &pd->se->view;
	for (size_t k = 0; k < v->n_events; k++)
		pd->events[v->events[k]] = true;
	open_images(job, v, arg->req.image);
	if (job_cancelled(job))
		return;
	po.images = arg->req.image ? images : NULL;
	po.n_images = arg->req.image ? 1 : 0;
	po.by = (enum procprof_by)arg->req.by;
	if (procprof_build(&pd->pp, v, &po)) {
		pd->status = job->status = -1;
		pd->error = xstrdup(job_last_message(job, "cannot list the procedures"));
		return;
	}
	pd->n = pd->pp.n_rows;
	pd->rows = xcalloc(pd->n ? pd->n : 1, sizeof(*pd->rows));
	for (size_t r = 0; r < pd->n; r++) {
		const char *name = pd->pp.rows[r].name;

		pd->rows[r].pr = &pd->pp.rows[r];
		/* most names need no escaping: borrow them (they outlive the rows) */
		pd->rows[r].name = plain(name) ? (char *)name : display_safe(name);
	}
	describe_images(pd, v);
}

const struct procs_image *procs_row_image(const struct procs_data *pd, const struct proc_row *r)
{
	return &pd->images[r->pr->image];
}

const char *procs_row_key(const struct procs_data *pd, const struct proc_row *r)
{
	return pd->se->view.images[r->pr->image].rec->key;
}

/* ---- every procedure analysed --------------------------------------------------- */

static bool has_time_samples(const struct procs_data *pd, const struct procprof_row *r)
{
	for (size_t e = 0; e < pd->pp.n_events; e++)
		if (event_is_time(pd->pp.events[e]) && r->samples[pd->pp.events[e]])
			return true;
	return false;
}

struct procs_calc_arg *procs_calc_arg_new(const struct procs_data *pd)
{
	struct procs_calc_arg *a = XNEW(struct procs_calc_arg);
	struct procs_calc *res = XNEW(struct procs_calc);

	a->se = pd->se;
	shared_epoch_get(a->se);
	a->n = pd->n;
	a->refs = xcalloc(pd->n ? pd->n : 1, sizeof(*a->refs));
	atomic_init(&a->next, 0);
	pthread_mutex_init(&a->lock, NULL);
	a->threads = workpool_threads(0);
	res->n = pd->n;
	res->an = xcalloc(pd->n ? pd->n : 1, sizeof(*res->an));
	res->ready = xcalloc(pd->n ? pd->n : 1, sizeof(*res->ready));
	atomic_init(&res->done, 0);
	atomic_init(&res->n_analysed, 0);
	atomic_init(&res->n_failed, 0);
	pthread_mutex_init(&res->want_lock, NULL);
	atomic_init(&res->n_want, 0);
	for (size_t i = 0; i < pd->n; i++) {
		const struct procprof_row *r = pd->rows[i].pr;

		const struct procs_image *pi = &pd->images[r->image];

		/* kernel, JIT: names without code, nothing to analyse */
		if (!r->proc || !has_time_samples(pd, r) ||
		    !(pi->state == IMAGE_OK || (pi->state == IMAGE_CHANGED && pi->forced)))
			continue;
		a->refs[i] = (struct proc_ref){ r->image, r->proc };
		res->n_todo++;
	}
	a->res = res;
	return a;
}

void procs_calc_arg_free(void *arg)
{
	struct procs_calc_arg *a = arg;

	if (!a)
		return;
	shared_epoch_put(a->se);
	free(a->refs);
	free(a->res->an);
	free((void *)a->res->ready);
	pthread_mutex_destroy(&a->res->want_lock);
	free(a->res);
	free(a->first_error);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

const struct procs_calc *procs_calc_of(const struct job *job)
{
	return ((const struct procs_calc_arg *)job->arg)->res;
}

void procs_calc_want(const struct procs_calc *calc, size_t i)
{
	struct procs_calc *c = (struct procs_calc *)calc; /* the want list is the view's to write */

	if (procs_calc_ready(c, i))
		return;
	pthread_mutex_lock(&c->want_lock);
	if (atomic_load(&c->n_want) < PROCS_CALC_WANT) {
		c->want[atomic_load(&c->n_want)] = i;
		atomic_fetch_add(&c->n_want, 1);
	}
	pthread_mutex_unlock(&c->want_lock);
}

/* The culprits in words that fit a column. */
static const char *const short_names[CULPRIT__COUNT] = {
	[CULPRIT_ICACHE] = "icache", [CULPRIT_ITLB] = "itlb", [CULPRIT_DCACHE] = "dcache",
	[CULPRIT_DTLB] = "dtlb", [CULPRIT_BRANCH] = "branch", [CULPRIT_STORE_BUF] = "storeq",
	[CULPRIT_MUL] = "mul", [CULPRIT_DIV] = "div", [CULPRIT_SYNC] = "sync",
	[CULPRIT_STORE_FWD] = "stfwd", [CULPRIT_ALIAS_4K] = "4kalias",
	[CULPRIT_UNEXPLAINED] = "unexpl",
};

const char *proc_analysis_culprit(const struct proc_analysis *an)
{
	return an->dominant >= 0 && an->dominant < CULPRIT__COUNT ? short_names[an->dominant] : NULL;
}

/*
 * Analyses row i (any thread; own is where the thread's messages go, job
 * the background job).  A
 * failure keeps the message of the lowest row that failed, for the one
 * summary said at the end (the same whatever the threads' timing).
 */
static void analyse_row(struct procs_calc_arg *a, struct job *job, struct job *own, size_t i)
{
	struct calc_opts co = CALC_OPTS_INIT;
	struct proc_analysis *an = &a->res->an[i];
	struct calc_procrow row;
	struct calc c;
	int r;

	pthread_mutex_lock(&a->lock);
	r = calc_prepare(&c, &a->se->view, &a->refs[i], &co);
	pthread_mutex_unlock(&a->lock);
	if (r || calc_compute(&c)) {
		calc_release(&c);
		pthread_mutex_lock(&a->lock);
		if (!a->first_error || i < a->first_error_row) {
			free(a->first_error);
			a->first_error = xstrdup(job_last_message(own, "?"));
			a->first_error_row = i;
		}
		pthread_mutex_unlock(&a->lock);
		for (size_t m = 0; m < own->n_msgs; m++)
			free(own->msgs[m].text);
		own->n_msgs = 0;
		atomic_fetch_add(&a->res->n_failed, 1);
		return;
	}
	calc_procrow(&c, &row);
	an->valid = true;
	an->cpi = row.cpi;
	an->best_cpi = row.best_cpi;
	an->dominant = (int8_t)(row.dominant >= 0 ? row.dominant : -1);
	an->culprit_share = row.dominant_share;
	an->high_conf = row.high_share;
	calc_release(&c);
	/* what a row that could be analysed said stays said */
	for (size_t m = 0; m < own->n_msgs; m++) {
		job_add_message(job, own->msgs[m].level, own->msgs[m].text);
		free(own->msgs[m].text);
	}
	own->n_msgs = 0;
}

/* Takes row i for this thread (ready 0 -> 2: in work), false if another has it or had it. */
static bool take(struct procs_calc *res, size_t i)
{
	unsigned char idle = 0;

	return atomic_compare_exchange_strong(&res->ready[i], &idle, 2);
}

/* The next row to analyse: one a view wants, else the next in order; false: none left. */
static bool claim(struct procs_calc_arg *a, size_t *i)
{
	struct procs_calc *res = a->res;

	if (atomic_load(&res->n_want)) { /* the lock is taken only when a view asked */
		bool found = false;

		pthread_mutex_lock(&res->want_lock);
		while (atomic_load(&res->n_want) && !found) {
			*i = res->want[atomic_fetch_sub(&res->n_want, 1) - 1];
			found = *i < a->n && a->refs[*i].proc && take(res, *i);
		}
		pthread_mutex_unlock(&res->want_lock);
		if (found)
			return true;
	}
	for (;;) {
		*i = atomic_fetch_add(&a->next, 1);
		if (*i >= a->n)
			return false;
		if (take(res, *i))
			return true;
	}
}

struct calc_thread {
	struct procs_calc_arg *a;
	struct job *job;              /* the background job */
	struct job own;               /* what this thread reported */
	pthread_t tid;
};

static void analyse_rows(struct calc_thread *t)
{
	struct procs_calc_arg *a = t->a;
	struct procs_calc *res = a->res;
	size_t i;

	job_enter(&t->own);
	while (!job_cancelled(t->job) && !job_should_yield(t->job) && claim(a, &i)) {
		if (a->refs[i].proc) {
			analyse_row(a, t->job, &t->own, i);
			atomic_fetch_add(&res->n_analysed, 1);
			job_progress(t->job, atomic_load(&res->n_analysed), res->n_todo);
		}
		atomic_store_explicit(&res->ready[i], 1, memory_order_release);
	}
	job_enter(NULL);
}

static void *calc_thread_main(void *p)
{
	analyse_rows(p);
	return NULL;
}

/* Rows [0, next) are claimed; those final from done on move done. */
static void advance_done(struct procs_calc_arg *a)
{
	struct procs_calc *res = a->res;
	size_t d = atomic_load(&res->done);

	while (d < a->n && atomic_load(&res->ready[d]) == 1)
		d++;
	atomic_store(&res->done, d);
}

void data_calc_procs(struct job *job)
{
	struct procs_calc_arg *a = job->arg;
	struct procs_calc *res = a->res;
	struct calc_thread t[8];
	unsigned n = a->threads < 8 ? a->threads : 8, started;

	if (a->se->status)
		goto done;
	memset(t, 0, sizeof(t));
	for (unsigned k = 0; k < n; k++) {
		t[k].a = a;
		t[k].job = job;
	}
	/*
	 * On threads of their own, the job's waiting: their allocations go to
	 * arenas of their own too, not among the million rows the job thread
	 * allocated (malloc was a fifth of the time there).
	 */
	for (started = 0; started < n; started++)
		if (pthread_create(&t[started].tid, NULL, calc_thread_main, &t[started]))
			break;
	if (!started)
		analyse_rows(&t[0]); /* no thread: here */
	for (unsigned k = 0; k < started; k++)
		pthread_join(t[k].tid, NULL);
	job_enter(job);
	for (unsigned k = 0; k < n; k++)
		free(t[k].own.msgs);
	advance_done(a);
	if (job_cancelled(job))
		return;
	if (atomic_load(&a->next) < a->n || atomic_load(&res->done) < a->n) {
		job_yield(job);
		return;
	}
	if (atomic_load(&res->n_failed)) {
		size_t nf = atomic_load(&res->n_failed);

		warning("%zu procedure%s could not be analysed: %s", nf, nf == 1 ? "" : "s",
			a->first_error ? a->first_error : "?");
	}
done:
	for (size_t i = 0; i < a->n; i++)
		atomic_store(&res->ready[i], 1);
	atomic_store(&res->done, a->n);
	job->result = res;
	job->status = 0;
}

/* ---- one procedure ---------------------------------------------------------- */

void proc_arg_free(void *arg)
{
	struct proc_arg *a = arg;

	if (!a)
		return;
	free((char *)a->req.image);
	free((char *)a->req.spec);
	free(a);
}

void proc_data_free(void *data)
{
	struct proc_data *pd = data;

	if (!pd)
		return;
	for (size_t i = 0; pd->targets && i < pd->c.list.n_insns; i++)
		free(pd->targets[i].name);
	free(pd->targets);
	calc_lines_release(&pd->render);
	free(pd->bubble_first);
	free(pd->bubble_n);
	calc_release(&pd->c);
	free(pd->names);
	free(pd->error);
	lookup_failure_release(&pd->lookup);
	free(pd->name);
	free(pd->image_path);
	free(pd->warning);
	free(pd->src_file);
	shared_epoch_put(pd->se);
	free(pd);
}

/* True if an image the lookup could have used is a changed binary not used. */
static bool changed_binary(struct epoch_view *v, const char *image)
{
	for (size_t i = 0; i < v->n_images; i++) {
		struct image *img;

		if (!image_wanted(v, i, image))
			continue;
		img = epoch_view_image(v, i);
		if (img->state == IMAGE_CHANGED && !img->forced)
			return true;
	}
	return false;
}

/* Names branch and call targets outside the procedure. */
static void name_targets(struct proc_data *pd, struct image *img)
{
	const struct proc *self = pd->c.list.ref.proc;

	pd->targets = xcalloc(pd->c.list.n_insns ? pd->c.list.n_insns : 1, sizeof(*pd->targets));
	for (size_t i = 0; i < pd->c.list.n_insns; i++) {
		const struct insn *in = pd->c.list.insns[i].insn;
		const struct proc *p;
		char *name;

		if (!in->target || (in->kind != INSN_JUMP && in->kind != INSN_CJUMP &&
				    in->kind != INSN_CALL))
			continue;
		if (in->target >= self->start && in->target < self->end)
			continue;
		if (!(p = image_proc_at(img, in->target)))
			continue;
		name = in->target == p->start ? xstrdup(p->name)
			: xasprintf("%s+0x%" PRIx64, p->name, in->target - p->start);
		pd->targets[i].name = display_safe(name);
		free(name);
	}
}

static void list_names(struct proc_data *pd, struct image *img)
{
	struct proctab *t = image_procs(img);

	pd->n_names = t->n;
	pd->names = xcalloc(t->n ? t->n : 1, sizeof(*pd->names));
	for (size_t k = 0; k < t->n; k++)
		pd->names[k] = t->v[k].name;
}

/* "./a/./b.c" -> "a/b.c": how srcfiles joins a relative directory and file. */
static char *tidy_path(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	char *safe;

	while (!strncmp(path, "./", 2))
		path += 2;
	for (const char *p = path; *p; p++) {
		if (!strncmp(p, "/./", 3)) {
			p++;
			continue;
		}
		strbuf_addch(&sb, *p);
	}
	safe = display_safe(sb.buf);
	strbuf_release(&sb);
	return safe;
}

static void find_source(struct proc_data *pd, struct data_ctx *ctx)
{
	for (size_t i = 0; i < pd->c.list.n_insns; i++) {
		const struct src_line *line = pd->c.list.insns[i].line;
		const char *found;

		if (!line)
			continue;
		srcfiles_line(data_ctx_srcfiles(ctx), line->file, pd->c.list.comp_dir, line->line);
		found = srcfiles_found_path(data_ctx_srcfiles(ctx), line->file, pd->c.list.comp_dir);
		pd->src_file = tidy_path(found ? found : line->file);
		return;
	}
}

static void proc_failed(struct job *job, struct proc_data *pd, struct epoch_view *v,
			const char *image)
{
	pd->status = job->status = -1;
	pd->error = xstrdup(job_last_message(job, "cannot show the procedure"));
	pd->need_force = changed_binary(v, image);
}

/*
 * NAME@IMAGE found in IMAGE alone, without reading the symbols of every
 * other image first as proc_lookup() does (it tries the whole spec as a
 * name everywhere before splitting it): true if exactly one procedure
 * matches.  Anything else goes to proc_lookup(), for its messages.
 */
static bool one_in_image(struct epoch_view *v, const char *spec, struct proc_ref *ref)
{
	size_t len, n;
	const char *image = proc_spec_image(v, spec, &len);
	struct proc_ref *refs;
	char *name;

	if (!image)
		return false;
	name = xstrndup(spec, len);
	n = proc_lookup_all(v, name, image, &refs);
	if (n == 1)
		*ref = refs[0];
	free(refs);
	free(name);
	return n == 1;
}

/* dcpicalc's lines, and where each instruction's bubbles are among them. */
static void index_bubbles(struct proc_data *pd)
{
	size_t n = pd->c.n_insns ? pd->c.n_insns : 1;

	calc_render(&pd->c, &pd->render, CALC_RENDER_NO_HEADER);
	pd->bubble_first = xcalloc(n, sizeof(*pd->bubble_first));
	pd->bubble_n = xcalloc(n, sizeof(*pd->bubble_n));
	for (size_t k = 0; k < pd->render.n; k++) {
		const struct calc_line *cl = &pd->render.v[k];

		if (cl->kind != CALC_LINE_BUBBLE || cl->insn < 0)
			continue;
		if (!pd->bubble_n[cl->insn])
			pd->bubble_first[cl->insn] = (uint32_t)k;
		pd->bubble_n[cl->insn]++;
	}
}

/* Looks the procedure up as dcpilist does; -1 (pd says why) if not exactly one. */
static int find(struct job *job, struct proc_data *pd, struct epoch_view *v,
		const struct proc_arg *arg, struct proc_ref *ref)
{
	struct strbuf sb = STRBUF_INIT;
	size_t len;

	if (!arg->req.image && one_in_image(v, arg->req.spec, ref))
		return 0;
	if (!proc_lookup_why(v, arg->req.spec, arg->req.image, ref, &pd->lookup))
		return 0;
	lookup_failure_text(&pd->lookup, &sb);
	errorf("%s", sb.buf);
	strbuf_release(&sb);
	pd->status = job->status = -1;
	pd->error = xstrdup(job_last_message(job, "cannot find the procedure"));
	/* not found (not ambiguous): a changed binary might have had it */
	pd->need_force = pd->lookup.kind != LOOKUP_AMBIGUOUS &&
			 changed_binary(v, arg->req.image ? arg->req.image
						      : proc_spec_image(v, arg->req.spec, &len));
	return -1;
}

void data_load_proc(struct job *job)
{
	struct proc_arg *arg = job->arg;
	struct proc_data *pd = XNEW(struct proc_data);
	struct calc_opts co = CALC_OPTS_INIT;
	struct proc_ref ref;
	struct epoch_view *v;
	struct image *img;

	job->result = pd;
	pd->se = data_epoch_get(arg->env.analysis, job, arg->env.db, arg->req.seq, arg->env.force);
	if (pd->se->status) {
		pd->status = job->status = -1;
		pd->error = xstrdup(pd->se->error);
		return;
	}
	v = &pd->se->view;
	memcpy(pd->epoch_totals, v->totals, sizeof(pd->epoch_totals));
	if (find(job, pd, v, arg, &ref))
		return;
	co.source = true;
	co.src = data_ctx_srcfiles(arg->env.analysis);
	if (calc_build(&pd->c, v, &ref, &co)) {
		calc_release(&pd->c);
		proc_failed(job, pd, v, v->images[ref.image].rec->key);
		return;
	}
	index_bubbles(pd);
	img = pd->c.list.img;
	snprintf(pd->image_key, sizeof(pd->image_key), "%s", v->images[ref.image].rec->key);
	pd->name = display_safe(ref.proc->name);
	pd->image_path = display_safe(img->rec.path);
	if (img->forced && img->why)
		pd->warning = display_safe(img->why);
	name_targets(pd, img);
	list_names(pd, img);
	find_source(pd, arg->env.analysis);
}

/* ---- the data sources (tui/source.h) ---------------------------------------------- */

static void procs_key(const struct source_env *env, const void *req, struct strbuf *key)
{
	const struct procs_req *r = req;

	strbuf_addf(key, "%" PRIu32 "/%d/%s/%d", r->seq, env->force, r->image ? r->image : "*", r->by);
}

static void procs_title(const struct source_env *env, const void *req, struct strbuf *title)
{
	const struct procs_req *r = req;

	strbuf_addf(title, "reading the procedures of %s", r->image ? "an image" : "every image");
}

static void *procs_arg(const struct source_env *env, const void *req)
{
	const struct procs_req *r = req;
	struct procs_arg *arg = XNEW(struct procs_arg);

	arg->env = *env;
	arg->req = *r;
	arg->req.image = r->image ? xstrdup(r->image) : NULL;
	return arg;
}

const struct tui_source procs_source = {
	.name = "procs",
	.key = procs_key,
	.title = procs_title,
	.arg = procs_arg,
	.free_arg = procs_arg_free,
	.run = data_load_procs,
	.free_result = procs_data_free,
};

const struct procs_data *data_procs(struct sources *s, uint32_t seq, const char *image,
				    struct view *waiter)
{
	return data_procs_by(s, seq, image, PROCPROF_BY_IMAGE, waiter);
}

const struct procs_data *data_procs_by(struct sources *s, uint32_t seq, const char *image, int by,
				       struct view *waiter)
{
	return seq ? source_load(s, &procs_source, &(struct procs_req){ seq, image, by }, waiter) : NULL;
}

/* The analysis of every row: req is the procs_data analysed. */
static void calc_key(const struct source_env *env, const void *req, struct strbuf *key)
{
	const struct procs_data *pd = req;

	strbuf_addf(key, "%" PRIu32 "/%d/%s/%d", pd->seq, pd->force, pd->image ? pd->image : "*",
		    pd->by);
}

static void calc_title(const struct source_env *env, const void *req, struct strbuf *title)
{
	const struct procs_data *pd = req;

	strbuf_addf(title, "analysing the procedures of %s", pd->image ? "the image" : "every image");
}

static void *calc_arg(const struct source_env *env, const void *req)
{
	return procs_calc_arg_new(req);
}

static const void *calc_partial(const struct job *job)
{
	return procs_calc_of(job);
}

const struct tui_source procs_calc_source = {
	.name = "calc",
	.background = true,
	.key = calc_key,
	.title = calc_title,
	.arg = calc_arg,
	.free_arg = procs_calc_arg_free,
	.run = data_calc_procs,
	.partial = calc_partial,
};

const struct procs_calc *data_procs_calc(struct sources *s, const struct procs_data *pd,
					 struct view *waiter, bool *complete)
{
	*complete = false;
	if (!pd || pd->status)
		return NULL;
	return source_load_partial(s, &procs_calc_source, pd, waiter, complete);
}

static void proc_key(const struct source_env *env, const void *req, struct strbuf *key)
{
	const struct proc_req *r = req;

	strbuf_addf(key, "%" PRIu32 "/%d/%s/%s", r->seq, env->force, r->image ? r->image : "*",
		    r->spec);
}

static void proc_title(const struct source_env *env, const void *req, struct strbuf *title)
{
	char *safe = display_safe(((const struct proc_req *)req)->spec);

	strbuf_addf(title, "analysing %s", safe);
	free(safe);
}

static void *proc_arg(const struct source_env *env, const void *req)
{
	const struct proc_req *r = req;
	struct proc_arg *arg = XNEW(struct proc_arg);

	arg->env = *env;
	arg->req = *r;
	arg->req.image = r->image ? xstrdup(r->image) : NULL;
	arg->req.spec = xstrdup(r->spec);
	return arg;
}

const struct tui_source proc_source = {
	.name = "proc",
	.key = proc_key,
	.title = proc_title,
	.arg = proc_arg,
	.free_arg = proc_arg_free,
	.run = data_load_proc,
	.free_result = proc_data_free,
};

const struct proc_data *data_proc(struct sources *s, uint32_t seq, const char *image,
				  const char *spec, struct view *waiter)
{
	return seq ? source_load(s, &proc_source, &(struct proc_req){ seq, image, spec }, waiter) : NULL;
}

static void add_proc_names(const void *result, void *data)
{
	const struct procs_data *pd = result;

	for (size_t r = 0; r < pd->n; r++)
		if (pd->rows[r].pr->proc)
			candidates_add(data, pd->rows[r].name);
}

void procs_complete_names(struct sources *s, uint32_t seq, struct candidates *c)
{
	char prefix[48];

	snprintf(prefix, sizeof(prefix), "%" PRIu32 "/%d/", seq, s->env.force);
	source_foreach_loaded(s, &procs_source, prefix, add_proc_names, c);
}
