/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/data-callers.c - the call graph source (tui/source.h).
 */
#include "config.h"
#include "tui/data-callers.h"

#include "core/die.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "tui/data-epoch.h"
#include "tui/job.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct callers_arg {
	struct source_env env;
	struct callers_req req;
};

static void callers_free(void *data)
{
	struct callers_data *cd = data;

	if (!cd)
		return;
	if (cd->g.entries)
		callgraph_release(&cd->g);
	if (cd->sv.view)
		stack_view_release(&cd->sv);
	free(cd->error);
	shared_epoch_put(cd->se);
	free(cd);
}

static void fail(struct job *job, struct callers_data *cd, const char *dflt)
{
	cd->status = job->status = -1;
	cd->error = display_safe(job_last_message(job, dflt));
}

static void callers_run(struct job *job)
{
	struct callers_arg *a = job->arg;
	struct callers_data *cd = XNEW(struct callers_data);
	struct callgraph_opts o = CALLGRAPH_OPTS_INIT;
	struct epoch_view *v;

	job->result = cd;
	cd->se = data_epoch_get(a->env.analysis, job, a->env.db, a->req.seq, a->env.force);
	if ((cd->status = job->status = cd->se->status)) {
		cd->error = xstrdup(cd->se->error ? cd->se->error : "cannot open the epoch");
		return;
	}
	v = &cd->se->view;
	if (stack_view_need(&cd->sv, v)) {
		memset(&cd->sv, 0, sizeof(cd->sv));
		fail(job, cd, "cannot read the stacks");
		return;
	}
	cd->event = a->req.event >= 0 ? (enum dcpi_event)a->req.event :
		    v->n_events ? v->events[0] : EVENT_CYCLES;
	o.event = cd->event;
	if (callgraph_build(&cd->g, &cd->sv, &o)) {
		memset(&cd->g, 0, sizeof(cd->g));
		fail(job, cd, "cannot build the call graph");
	}
}

static void callers_key(const struct source_env *env, const void *req, struct strbuf *key)
{
	const struct callers_req *r = req;

	strbuf_addf(key, "%" PRIu32 "/%d/%d", r->seq, env->force, r->event);
}

static void callers_title(const struct source_env *env, const void *req, struct strbuf *title)
{
	strbuf_addstr(title, "reading the stacks of the epoch");
}

static void *callers_arg(const struct source_env *env, const void *req)
{
	struct callers_arg *a = XNEW(struct callers_arg);

	a->env = *env;
	a->req = *(const struct callers_req *)req;
	return a;
}

const struct tui_source callers_source = {
	.name = "callgraph",
	.key = callers_key,
	.title = callers_title,
	.arg = callers_arg,
	.free_arg = free,
	.run = callers_run,
	.free_result = callers_free,
};

const struct callers_data *data_callers(struct sources *s, uint32_t seq, int event,
					struct view *waiter)
{
	return seq ? source_load(s, &callers_source, &(struct callers_req){ seq, event }, waiter) : NULL;
}

const char *callers_node_key(const struct callers_data *cd, uint32_t node)
{
	size_t i = cd->sv.nodes[node].image;

	return i == SIZE_MAX ? "" : cd->sv.view->images[i].rec->key;
}

uint32_t callers_find(const struct callers_data *cd, const char *key, uint64_t start,
		      const char *name)
{
	for (uint32_t n = 0; n < cd->sv.n_nodes; n++) {
		const struct sv_node *sn = &cd->sv.nodes[n];

		if (key && strcmp(callers_node_key(cd, n), key))
			continue;
		if (start ? sn->proc && sn->proc->start == start : name && !strcmp(sn->name, name))
			return n;
	}
	return UINT32_MAX;
}
