/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/source.c - the session's data: requests of data sources looked up in
 * the job cache, and jobs started for what is missing (tui/source.h).
 */
#include "config.h"
#include "tui/source.h"

#include "analysis/calc-cache.h"
#include "core/strbuf.h"
#include "tui/view.h"

#include <string.h>

void sources_init(struct sources *s, bool sync)
{
	memset(s, 0, sizeof(*s));
	s->env.event = -1;
	jobs_init(&s->jobs, sync);
}

void sources_release(struct sources *s)
{
	jobs_release(&s->jobs);
	calc_cache_free(s->env.calc_cache);
	s->env.calc_cache = NULL;
}

void sources_set_db(struct sources *s, struct db *db)
{
	s->env.db = db;
	if (db && !s->env.calc_cache)
		s->env.calc_cache = calc_cache_new(db);
}

/* The cache key of req under env. */
static void key_of(const struct source_env *env, const struct tui_source *src, const void *req,
		   struct strbuf *key)
{
	strbuf_addf(key, "%s/", src->name);
	src->key(env, req, key);
}

/* The job of src for req (its cache key in key), submitted if submit and missing. */
static struct job *source_job(struct sources *s, const struct tui_source *src, const void *req,
			      bool submit, struct strbuf *key)
{
	struct strbuf title = STRBUF_INIT;
	struct job *job;
	void *arg;

	key_of(&s->env, src, req, key);
	if ((job = jobs_find(&s->jobs, key->buf)) || !submit)
		return job;
	src->title(&s->env, req, &title);
	arg = src->arg ? src->arg(&s->env, req) : NULL;
	job = (src->background ? jobs_submit_background : jobs_submit)(
		&s->jobs, key->buf, title.buf, src->run, arg, src->free_arg, src->free_result);
	strbuf_release(&title);
	return job;
}

const void *source_load(struct sources *s, const struct tui_source *src, const void *req,
			struct view *waiter)
{
	struct strbuf key = STRBUF_INIT;
	struct job *job;
	const void *r = NULL;

	if (!s->env.db)
		return NULL;
	job = source_job(s, src, req, true, &key);
	if (job->collected)
		r = job->result;
	else if (waiter)
		view_wait(waiter, key.buf);
	strbuf_release(&key);
	return r;
}

const void *source_load_partial(struct sources *s, const struct tui_source *src,
				const void *req, struct view *waiter, bool *complete)
{
	struct strbuf key = STRBUF_INIT;
	struct job *job;
	const void *r;

	*complete = false;
	if (!s->env.db)
		return NULL;
	job = source_job(s, src, req, true, &key);
	*complete = job->collected;
	if (!job->collected && waiter)
		view_wait(waiter, key.buf);
	r = src->partial ? src->partial(job) : job->result;
	strbuf_release(&key);
	return r;
}

const void *source_peek(struct sources *s, const struct tui_source *src, const void *req)
{
	struct strbuf key = STRBUF_INIT;
	struct job *job = s->env.db ? source_job(s, src, req, false, &key) : NULL;

	strbuf_release(&key);
	return job && job->collected ? job->result : NULL;
}

/* The collected result of src for req under env (NULL: the session's), and its job. */
static struct job *loaded(struct sources *s, const struct tui_source *src,
			  const struct source_env *env, const void *req)
{
	struct strbuf key = STRBUF_INIT;
	struct job *job;

	key_of(env ? env : &s->env, src, req, &key);
	job = s->env.db ? jobs_find(&s->jobs, key.buf) : NULL;
	strbuf_release(&key);
	return job && job->collected ? job : NULL;
}

const void *source_peek_as(struct sources *s, const struct tui_source *src,
			   const struct source_env *env, const void *req)
{
	struct job *job = loaded(s, src, env, req);

	return job ? job->result : NULL;
}

void source_refile(struct sources *s, const struct tui_source *src, const struct source_env *env,
		   const void *req, const void *to)
{
	struct strbuf to_key = STRBUF_INIT;
	struct job *job = loaded(s, src, env, req);

	key_of(&s->env, src, to, &to_key);
	if (job && !jobs_find(&s->jobs, to_key.buf))
		jobs_rekey(&s->jobs, job, to_key.buf);
	strbuf_release(&to_key);
}

struct foreach_ctx {
	void (*fn)(const void *result, void *data);
	void *data;
};

static void foreach_one(struct job *job, void *data)
{
	struct foreach_ctx *c = data;

	if (job->result)
		c->fn(job->result, c->data);
}

void source_foreach_loaded(struct sources *s, const struct tui_source *src, const char *prefix,
			   void (*fn)(const void *result, void *data), void *data)
{
	struct strbuf key = STRBUF_INIT;
	struct foreach_ctx c = { fn, data };

	strbuf_addf(&key, "%s/%s", src->name, prefix);
	jobs_foreach_collected(&s->jobs, key.buf, foreach_one, &c);
	strbuf_release(&key);
}
