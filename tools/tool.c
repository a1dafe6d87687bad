/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tools/tool.c - the frame of every report tool (see tools/tool.h).
 */
#include "config.h"
#include "tools/tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "analysis/incomplete.h"
#include "db/damage.h"
#include "db/db.h"

int tool_subst_option(const struct cli_option *opt, const char *arg)
{
	if (srcfiles_add_subst(opt->value, arg))
		return errorf("bad substitution '%s' (want FROM=TO)", arg);
	return 0;
}

int tool_norm_option(const struct cli_option *opt, const char *arg)
{
	int n = pset_norm_lookup(arg);

	if (n < 0 || (n == PSET_NORM_NONE && !opt->defval)) {
		char *safe = display_safe(arg);

		errorf("unknown normalisation '%s' (%s)", safe,
		       opt->defval ? "none, total or period" : "total or period");
		free(safe);
		return -1;
	}
	*(enum pset_norm *)opt->value = (enum pset_norm)n;
	return 0;
}

/* What the options parsed into t need first (--substitute-path fills t->src). */
static void prepare(struct tool *t)
{
	srcfiles_init(&t->src);
	t->sets = (struct pset_ctx)PSET_CTX_INIT;
}

/* What follows from the options: the sets' -d and binaries, the text output. */
static void finish_setup(struct tool *t)
{
	t->sets.db_path = t->db_path;
	t->sets.view_opts = t->binaries;
	draw_init_file(&t->out, stdout, cli_use_color(t->color, stdout) ? DRAW_COLOR : 0);
	json_init(&t->jw, stdout, true);
}

void tool_init(struct tool *t)
{
	prepare(t);
	finish_setup(t);
}

int tool_start(struct tool *t, int argc, char **argv, const struct cli_command *cmd,
	       unsigned flags)
{
	int first;

	cli_init(argc, argv);
	prepare(t);
	first = cli_parse(argc, argv, cmd);
	finish_setup(t);
	if ((flags & TOOL_EPOCH) && tool_open(t))
		exit(tool_finish(t, -1));
	return first;
}

int tool_open(struct tool *t)
{
	if (!(t->db = db_open(db_default_path(t->db_path), DB_READ)))
		return -1;
	if (epoch_view_open(&t->view, t->db, t->epoch, &t->binaries)) {
		epoch_view_release(&t->view);
		return -1;
	}
	t->view_open = true;
	return 0;
}

struct pset **tool_open_sets(struct tool *t, char *const *specs, size_t n)
{
	t->setv = xcalloc(n ? n : 1, sizeof(*t->setv));
	t->sets_of = xcalloc(n ? n : 1, sizeof(*t->sets_of));
	for (; t->n_sets < n; t->n_sets++) {
		if (pset_open(&t->setv[t->n_sets], &t->sets, specs[t->n_sets]))
			return NULL;
		t->sets_of[t->n_sets] = &t->setv[t->n_sets];
	}
	return t->sets_of;
}

/* The databases t read: the -d one and the sets' (NULLs and repeats are skipped). */
static size_t tool_dbs(const struct tool *t, struct db **dbs, size_t max)
{
	size_t n = 0;

	if (n < max)
		dbs[n++] = t->db;
	if (n < max)
		dbs[n++] = t->sets.db;
	for (size_t i = 0; i < t->n_sets; i++)
		for (size_t e = 0; e < t->setv[i].n_epochs && n < max; e++)
			dbs[n++] = t->setv[i].epochs[e].db;
	return n;
}

int tool_finish(struct tool *t, int status)
{
	struct db *dbs[64];
	size_t ndbs = tool_dbs(t, dbs, 64);
	bool partial = false;

	/* a report was printed: it says what it was made without */
	if (!status && !t->json && !(t->note_prefix && !*t->note_prefix))
		partial = incomplete_draw(dbs, ndbs, &t->out, t->note_prefix);
	else
		for (size_t i = 0; i < ndbs && !partial; i++)
			partial = dbs[i] && db_damage_partial(dbs[i], 0);
	if (draw_file_finish(&t->out))
		status = errorf("cannot write the report: write error");
	while (t->n_sets)
		pset_release(&t->setv[--t->n_sets]);
	free(t->setv);
	free(t->sets_of);
	if (t->view_open)
		epoch_view_release(&t->view);
	if (t->db)
		db_close(t->db);
	pset_ctx_release(&t->sets);
	srcfiles_release(&t->src);
	memset(t, 0, sizeof(*t));
	return tool_exit_status(status, partial);
}

int tool_exit_status(int status, bool partial)
{
	/* an error that is not a damaged or missing file is a failure */
	if (status || error_count() > db_damage_errors())
		return TOOL_EXIT_FAILURE;
	return partial ? TOOL_EXIT_PARTIAL : TOOL_EXIT_OK;
}
