/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/data-watch.c - an epoch's stopwatch results for the stopwatch view
 * (tui/data-watch.h).
 */
#include "config.h"
#include "tui/data-watch.h"

#include <inttypes.h>
#include <stdlib.h>

#include "core/strbuf.h"
#include "core/xalloc.h"
#include "tui/job.h"

struct watch_req {
	uint32_t seq;
};

struct watch_arg {
	struct db *db;              /* not owned */
	uint32_t seq;
};

static void watch_key(const struct source_env *env, const void *req, struct strbuf *key)
{
	(void)env;
	strbuf_addf(key, "%" PRIu32, ((const struct watch_req *)req)->seq);
}

static void watch_title(const struct source_env *env, const void *req, struct strbuf *title)
{
	(void)env;
	strbuf_addf(title, "reading the stopwatch results of epoch %" PRIu32,
		    ((const struct watch_req *)req)->seq);
}

static void *watch_arg_new(const struct source_env *env, const void *req)
{
	struct watch_arg *arg = xcalloc(1, sizeof(*arg));

	arg->db = env->db;
	arg->seq = ((const struct watch_req *)req)->seq;
	return arg;
}

static void watch_data_free(void *p)
{
	struct watch_data *wd = p;

	if (!wd)
		return;
	watch_set_release(&wd->functions);
	watch_set_release(&wd->threads);
	free(wd);
}

static void watch_run(struct job *job)
{
	const struct watch_arg *arg = job->arg;
	struct watch_data *wd = xcalloc(1, sizeof(*wd));
	struct watch_set all = WATCH_SET_INIT;

	wd->seq = arg->seq;
	wd->status = db_watch_load(arg->db, arg->seq, &all);
	if (!wd->status) {
		watch_set_group(&all, WATCH_BY_FUNCTION, &wd->functions);
		watch_set_group(&all, WATCH_BY_THREAD, &wd->threads);
	}
	watch_set_release(&all);
	job->result = wd;
	job->status = wd->status < 0 ? -1 : 0;
}

const struct tui_source watch_source = {
	.name = "watch",
	.key = watch_key,
	.title = watch_title,
	.arg = watch_arg_new,
	.free_arg = free,
	.run = watch_run,
	.free_result = watch_data_free,
};

const struct watch_data *data_watch(struct sources *s, uint32_t seq, struct view *waiter)
{
	if (!seq)
		return NULL;
	return source_load(s, &watch_source, &(struct watch_req){ seq }, waiter);
}
