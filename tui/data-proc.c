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
#include "analysis/calc-memo.h"
#include "analysis/epochview-open.h"
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

	if (!pd || atomic_fetch_sub(&pd->refs, 1) > 1)
		return;
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

void data_load_procs(struct job *job)
{
	struct procs_arg *arg = job->arg;
	struct procs_data *pd = XNEW(struct procs_data);
	struct procprof_opts po = PROCPROF_OPTS_INIT;

	atomic_init(&pd->refs, 1);
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
	if (epoch_view_open_images(v, arg->req.image))
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
	describe_images(pd, v);
}

const struct procs_image *procs_row_image(const struct procs_data *pd, const struct procprof_row *r)
{
	return &pd->images[r->image];
}

const char *procs_row_key(const struct procs_data *pd, const struct procprof_row *r)
{
	return pd->se->view.images[r->image].rec->key;
}

const char *procs_row_name(const struct procs_data *pd, size_t i, struct strbuf *buf)
{
	return display_safe_in(procprof_name(&pd->pp, i), buf);
}

/* ---- every procedure analysed --------------------------------------------------- */

static bool has_time_samples(const struct procs_data *pd, size_t i)
{
	for (size_t e = 0; e < pd->pp.n_events; e++)
		if (event_is_time(pd->pp.events[e]) && procprof_samples(&pd->pp, i, e))
			return true;
	return false;
}

/* Row i has something to analyse: a procedure with code, time samples. */
static bool analysable(const struct procs_data *pd, size_t i)
{
	const struct procprof_row *r = &pd->pp.rows[i];
	const struct procs_image *pi = &pd->images[r->image];

	/* kernel, JIT: names without code, nothing to analyse */
	return r->proc && has_time_samples(pd, i) &&
	       (pi->state == IMAGE_OK || (pi->state == IMAGE_CHANGED && pi->forced));
}

/*
 * The rows image after image, the image of the hottest row first, each
 * image's in their order (a counting sort: a million rows in two passes).
 */
static void order_by_image(const struct procs_data *pd, uint32_t *row_of)
{
	size_t *at = xcalloc(pd->n_images + 1, sizeof(*at)); /* per image: rows, then its first place */
	uint32_t *order = xcalloc(pd->n_images + 1, sizeof(*order));
	size_t n_order = 0, next = 0;

	for (size_t i = 0; i < pd->n; i++) {
		size_t img = pd->pp.rows[i].image;

		if (!at[img]++)
			order[n_order++] = (uint32_t)img;
	}
	for (size_t k = 0; k < n_order; k++) {
		size_t count = at[order[k]];

		at[order[k]] = next;
		next += count;
	}
	for (size_t i = 0; i < pd->n; i++)
		row_of[at[pd->pp.rows[i].image]++] = (uint32_t)i;
	free(at);
	free(order);
}

struct procs_calc_arg *procs_calc_arg_new(const struct procs_data *pd, struct calc_cache *cache)
{
	struct procs_calc_arg *a = XNEW(struct procs_calc_arg);
	struct procs_calc *res = XNEW(struct procs_calc);
	size_t n = pd->n ? pd->n : 1;

	a->se = pd->se;
	shared_epoch_get(a->se);
	/* the rows outlive the job that made them while they are analysed */
	a->pd = (struct procs_data *)pd;
	atomic_fetch_add(&a->pd->refs, 1);
	a->cache = cache;
	a->n = pd->n;
	a->row_of = xcalloc(n, sizeof(*a->row_of));
	a->left = xcalloc(pd->n_images + 1, sizeof(*a->left));
	pthread_mutex_init(&a->lock, NULL);
	res->n = pd->n;
	res->fig = xcalloc(n, sizeof(*res->fig));
	res->state = xcalloc(n, sizeof(*res->state));
	res->item_of = xcalloc(n, sizeof(*res->item_of));
	atomic_init(&res->n_analysed, 0);
	atomic_init(&res->n_failed, 0);
	pthread_mutex_init(&res->want_lock, NULL);
	/* image after image (their binaries are open once), hottest first */
	order_by_image(pd, a->row_of);
	for (size_t k = 0; k < pd->n; k++) {
		size_t i = a->row_of[k];

		res->item_of[i] = (uint32_t)k;
		if (!analysable(pd, i)) {
			atomic_init(&res->state[i], PROCS_CALC_READY);
			continue;
		}
		atomic_fetch_add(&a->left[pd->pp.rows[i].image], 1);
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
	procs_data_free(a->pd);
	free(a->row_of);
	free(a->left);
	free(a->res->fig);
	free((void *)a->res->state);
	free(a->res->item_of);
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
	if (c->rows)
		calc_rows_prefer(c->rows, c->item_of[i]);
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

const struct proc_analysis *procs_calc_get(const struct procs_calc *calc, size_t i,
					   struct proc_analysis *buf)
{
	unsigned state = atomic_load_explicit(&calc->state[i], memory_order_acquire);

	if (!(state & PROCS_CALC_VALID))
		return NULL;
	buf->valid = true;
	buf->cpi = calc->fig[i].cpi;
	buf->best_cpi = calc->fig[i].best_cpi;
	buf->culprit_share = calc->fig[i].culprit_share;
	buf->high_conf = calc->fig[i].high_conf;
	buf->dominant = (int8_t)((int)(state >> PROCS_CALC_CULPRIT_SHIFT) - 1);
	return buf;
}

/*
 * The analysis of item k (a row) done, on the thread that did it.  A
 * failure keeps the message of the lowest row that failed, for the one
 * summary said at the end (the same whatever the threads' timing), and
 * says nothing else; what a row that could be analysed said stays said.
 */
/* Row i's figures (any thread): final at once. */
static void set_figures(struct procs_calc *res, size_t i, const struct calc_procrow *row)
{
	int dominant = row->dominant >= 0 && row->dominant < CULPRIT__COUNT ? row->dominant : -1;

	res->fig[i] = (struct proc_figures){ row->cpi, row->best_cpi, row->dominant_share,
					     row->high_share };
	atomic_store_explicit(&res->state[i], (unsigned char)(PROCS_CALC_READY | PROCS_CALC_VALID |
			      (dominant + 1) << PROCS_CALC_CULPRIT_SHIFT), memory_order_release);
}

/* Row i done without figures (any thread): final at once. */
static void set_none(struct procs_calc *res, size_t i)
{
	atomic_store_explicit(&res->state[i], PROCS_CALC_READY, memory_order_release);
}

/*
 * Item k analysed: its image's decoded profile and what building its CFGs
 * kept go once the image's last item is (read again, found again, for a
 * procedure shown: 10,000 images' are not all kept).
 */
static void item_done(struct procs_calc_arg *a, size_t k)
{
	size_t image = a->pd->pp.rows[a->row_of[k]].image;

	if (atomic_fetch_sub(&a->left[image], 1) == 1) {
		epoch_view_profile_forget(&a->se->view, image);
		image_forget_cfgs(epoch_view_image(&a->se->view, image));
	}
}

static void fill_row(void *ctx, size_t k, struct calc *c, int r)
{
	struct procs_calc_arg *a = ctx;
	struct procs_calc *res = a->res;
	size_t i = a->row_of[k];
	struct calc_procrow row;

	if (r) {
		struct report_log *said = report_capture_log();

		pthread_mutex_lock(&a->lock);
		if (!a->first_error || i < a->first_error_row) {
			free(a->first_error);
			a->first_error = xstrdup(said ? report_log_last(said, "?") : "?");
			a->first_error_row = i;
		}
		pthread_mutex_unlock(&a->lock);
		if (said)
			report_log_clear(said);
		atomic_fetch_add(&res->n_failed, 1);
		set_none(res, i);
	} else {
		calc_procrow(c, &row);
		set_figures(res, i, &row);
	}
	workpool_progress(atomic_fetch_add(&res->n_analysed, 1) + 1, res->n_todo);
	item_done(a, k);
}

/* Item k has yet to be analysed (its figures were not found in the memo). */
static bool not_ready(void *ctx, size_t k)
{
	struct procs_calc_arg *a = ctx;

	return !procs_calc_ready(a->res, a->row_of[k]);
}

/* Item k's procedure (calc_rows, the memo): none when its row needs no analysis. */
static void item_ref(void *ctx, size_t k, struct proc_ref *out)
{
	struct procs_calc_arg *a = ctx;
	size_t i = a->row_of[k];

	*out = (struct proc_ref){ a->pd->pp.rows[i].image,
				  analysable(a->pd, i) ? a->pd->pp.rows[i].proc : NULL };
}

static bool memo_item(void *ctx, size_t k, size_t *image, const struct proc **p)
{
	struct proc_ref ref;

	item_ref(ctx, k, &ref);
	*image = ref.image;
	*p = ref.proc;
	return *p != NULL;
}

/* Item k's figures, found in the memo: final at once. */
static void memo_found(void *ctx, size_t k, const struct calc_procrow *row)
{
	struct procs_calc_arg *a = ctx;

	set_figures(a->res, a->row_of[k], row);
	atomic_fetch_add(&a->res->n_analysed, 1);
	item_done(a, k);
}

/* Item k's figures for the memo, if it has some. */
static bool memo_row_of(void *ctx, size_t k, size_t *image, const struct proc **p,
			struct calc_procrow *row)
{
	struct procs_calc_arg *a = ctx;
	struct proc_analysis buf;
	const struct proc_analysis *an;

	if (!procs_calc_ready(a->res, a->row_of[k]) ||
	    !(an = procs_calc_get(a->res, a->row_of[k], &buf)))
		return false;
	*image = a->pd->pp.rows[a->row_of[k]].image;
	*p = a->pd->pp.rows[a->row_of[k]].proc;
	memset(row, 0, sizeof(*row));
	row->cpi = an->cpi;
	row->best_cpi = an->best_cpi;
	row->dominant = an->dominant;
	row->dominant_share = an->culprit_share;
	row->high_share = an->high_conf;
	return true;
}

void data_calc_procs(struct job *job)
{
	struct procs_calc_arg *a = job->arg;
	struct procs_calc *res = a->res;
	struct calc_opts co = CALC_OPTS_INIT;
	struct calc_rows rows = { .ref = item_ref, .n = a->n, .o = &co, .row = fill_row, .ctx = a,
				  .wanted = not_ready };
	struct calc_memo *memo;
	int r;

	if (a->se->status)
		goto done;
	co.cache = a->cache;
	rows.v = &a->se->view;
	/* what an earlier session found of these very rows first */
	memo = calc_memo_open(a->se->db, &a->se->view, &co);
	calc_memo_find(memo, a->n, memo_item, memo_found, a);
	pthread_mutex_lock(&res->want_lock);
	res->rows = &rows;
	pthread_mutex_unlock(&res->want_lock);
	r = calc_rows_run(&rows);
	pthread_mutex_lock(&res->want_lock);
	res->rows = NULL;
	pthread_mutex_unlock(&res->want_lock);
	/* what was found is kept, also when the job was cancelled half way */
	calc_memo_close(memo, a->n, memo_row_of, a);
	if (r)
		return;
	if (atomic_load(&res->n_failed)) {
		size_t nf = atomic_load(&res->n_failed);

		warning("%zu procedure%s could not be analysed: %s", nf, nf == 1 ? "" : "s",
			a->first_error ? a->first_error : "?");
	}
done:
	for (size_t i = 0; i < a->n; i++)
		if (!procs_calc_ready(res, i))
			set_none(res, i);
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

		if (!epoch_view_image_sampled(v, i, image))
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
	co.cache = arg->env.calc_cache;
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
	return procs_calc_arg_new(req, env->calc_cache);
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
	struct strbuf buf = STRBUF_INIT;

	for (size_t r = 0; r < pd->n; r++)
		if (pd->pp.rows[r].proc)
			candidates_add(data, procs_row_name(pd, r, &buf));
	strbuf_release(&buf);
}

void procs_complete_names(struct sources *s, uint32_t seq, struct candidates *c)
{
	char prefix[48];

	snprintf(prefix, sizeof(prefix), "%" PRIu32 "/%d/", seq, s->env.force);
	source_foreach_loaded(s, &procs_source, prefix, add_proc_names, c);
}
