/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/view-values.c - the semi-invariant instructions of the epoch, as
 * dcpivals lists them (analysis/invariants.h): each instruction whose
 * written register or accessed address held one value at least 90% of the
 * times it was sampled (value profiles: dcpirun --values), with the value
 * samples behind that share, where it is, its text and its most common
 * values (valprof_draw(), as dcpicalc --values draws them), hottest first.
 * Enter opens the procedure at the instruction.
 *
 * Its data is its own source (values_source below), built on the epoch
 * view the analysis sources share (tui/data-epoch.h).
 */
#include "config.h"
#include "tui/view.h"

#include "analysis/invariants.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "tui/data-epoch.h"
#include "tui/source.h"
#include "tui/table.h"
#include "tui/tui.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the data: "values/SEQ/F" -------------------------------------------------- */

struct values_row {
	const struct invariant *inv;
	uint64_t samples;         /* value samples behind the invariant value's share */
	double share;             /* its share */
	char *where;              /* "name+0x12", terminal-safe */
	char *image;              /* the image's file name, terminal-safe */
	char *key;                /* the image's key */
	char *text;               /* the instruction, terminal-safe */
};

struct values_data {
	struct shared_epoch *se;  /* a reference: the procedures the rows name */
	int status;               /* 0, or -1: the epoch cannot be read (error says why) */
	char *error;              /* terminal-safe */
	struct invariants inv;
	struct values_row *rows;
	size_t n;
};

struct values_req {
	uint32_t seq;
};

struct values_arg {
	struct source_env env;
	uint32_t seq;
};

static void values_data_free(void *data)
{
	struct values_data *vd = data;

	if (!vd)
		return;
	for (size_t i = 0; i < vd->n; i++) {
		free(vd->rows[i].where);
		free(vd->rows[i].image);
		free(vd->rows[i].key);
		free(vd->rows[i].text);
	}
	free(vd->rows);
	invariants_release(&vd->inv);
	free(vd->error);
	shared_epoch_put(vd->se);
	free(vd);
}

static void values_row_fill(struct values_row *row, const struct invariant *r, const struct epoch_view *v)
{
	const struct valprof_item *it = &r->vi.it[r->best];
	const char *path = v->images[r->image].rec->path, *slash = strrchr(path, '/');
	char *name = display_safe(r->proc->name);

	row->inv = r;
	row->samples = it->samples;
	row->share = it->n ? it->v[0].share : 0;
	row->where = xasprintf("%s+0x%" PRIx64, name, r->addr - r->proc->start);
	row->image = display_safe(slash && slash[1] ? slash + 1 : path);
	row->key = xstrdup(v->images[r->image].rec->key);
	row->text = display_safe(r->text);
	free(name);
}

static void values_run(struct job *job)
{
	struct values_arg *a = job->arg;
	struct values_data *vd = XNEW(struct values_data);
	struct invariants_opts o = INVARIANTS_OPTS_INIT;

	job->result = vd;
	vd->se = data_epoch_get(a->env.analysis, job, a->env.db, a->seq, a->env.force);
	if ((vd->status = job->status = vd->se->status)) {
		vd->error = display_safe(vd->se->error ? vd->se->error : "cannot open the epoch");
		return;
	}
	invariants_build(&vd->inv, &vd->se->view, &o);
	vd->n = vd->inv.n;
	vd->rows = xcalloc(vd->n ? vd->n : 1, sizeof(*vd->rows));
	for (size_t i = 0; i < vd->n; i++)
		values_row_fill(&vd->rows[i], &vd->inv.v[i], &vd->se->view);
}

static void values_key(const struct source_env *env, const void *req, struct strbuf *key)
{
	strbuf_addf(key, "%" PRIu32 "/%d", ((const struct values_req *)req)->seq, env->force);
}

static void values_progress(const struct source_env *env, const void *req, struct strbuf *title)
{
	strbuf_addf(title, "finding the semi-invariant values of epoch %" PRIu32,
		    ((const struct values_req *)req)->seq);
}

static void *values_arg(const struct source_env *env, const void *req)
{
	struct values_arg *a = XNEW(struct values_arg);

	a->env = *env;
	a->seq = ((const struct values_req *)req)->seq;
	return a;
}

static const struct tui_source values_source = {
	.name = "values",
	.key = values_key,
	.title = values_progress,
	.arg = values_arg,
	.free_arg = free,
	.run = values_run,
	.free_result = values_data_free,
};

/* ---- the view ------------------------------------------------------------------ */

struct values_view {
	const struct values_data *vd;
	struct table table;
};

#define VV(v) ((struct values_view *)(v)->priv)
#define ROW(p) ((const struct values_row *)(p))

static void cell_samples(void *ctx, const struct table_column *col, const void *row, size_t pos,
			 struct draw *d, int width)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, ROW(row)->samples);
	draw_field(d, STYLE_NORMAL, buf, width, ALIGN_RIGHT);
}

static void cell_share(void *ctx, const struct table_column *col, const void *row, size_t pos,
		       struct draw *d, int width)
{
	table_draw_percent(d, STYLE_HOT, ROW(row)->share, width);
}

/* The text columns: the field at the column's arg offset of a row. */
static const char *text_of(const struct table_column *col, const void *row)
{
	return *(char *const *)((const char *)row + col->arg);
}

static void cell_text(void *ctx, const struct table_column *col, const void *row, size_t pos,
		      struct draw *d, int width)
{
	draw_field(d, col->data ? STYLE_DIM : STYLE_NORMAL, text_of(col, row), width,
		   col->align);
}

/* The last column: as wide as the values (the line clips it). */
static void cell_values(void *ctx, const struct table_column *col, const void *row, size_t pos,
			struct draw *d, int width)
{
	valprof_draw(&ROW(row)->inv->vi, d);
}

static int cmp_samples(const struct table_column *c, const void *a, const void *b)
{
	return table_cmp_u64(ROW(a)->samples, ROW(b)->samples);
}

static int cmp_share(const struct table_column *c, const void *a, const void *b)
{
	return table_cmp_double(ROW(a)->share, ROW(b)->share);
}

static int cmp_text(const struct table_column *c, const void *a, const void *b)
{
	return strcmp(text_of(c, a), text_of(c, b));
}

static void build_columns(struct table *t, const struct values_data *vd)
{
	uint64_t max = 0;

	for (size_t i = 0; i < vd->n; i++)
		max = vd->rows[i].samples > max ? vd->rows[i].samples : max;
	table_clear_columns(t);
	table_add_column(t, &(struct table_column){ .name = "samples", .width = draw_digits(max),
		.align = ALIGN_RIGHT, .numeric = true, .cmp = cmp_samples, .cell = cell_samples });
	table_add_column(t, &(struct table_column){ .name = "share", .title = "%", .width = 5,
		.align = ALIGN_RIGHT, .numeric = true, .cmp = cmp_share, .cell = cell_share });
	table_add_column(t, &(struct table_column){ .name = "procedure", .width = 0, .min = 12,
		.arg = (int)offsetof(struct values_row, where), .cmp = cmp_text,
		.cell = cell_text });
	table_add_column(t, &(struct table_column){ .name = "image", .width = 0, .min = 8,
		.align = ALIGN_LEFT_TAIL, .arg = (int)offsetof(struct values_row, image),
		.data = "dim", .cmp = cmp_text, .cell = cell_text });
	table_add_column(t, &(struct table_column){ .name = "instruction", .width = 0, .min = 16,
		.arg = (int)offsetof(struct values_row, text), .cmp = cmp_text,
		.cell = cell_text });
	table_add_column(t, &(struct table_column){ .name = "values", .width = 0, .min = 16,
		.cell = cell_values });
}

static void values_filter_text(void *ctx, const void *row, struct strbuf *out)
{
	strbuf_addf(out, "%s %s %s", ROW(row)->where, ROW(row)->image, ROW(row)->text);
}

static void values_reload(struct view *v)
{
	struct values_view *vv = VV(v);
	const struct values_data *vd =
		source_load(v->src, &values_source, &(struct values_req){ v->loc.epoch }, v);

	table_set_rows(&vv->table, NULL, 0);
	vv->vd = vd;
	v->empty = tui_has_db(v->tui) ? "(no semi-invariant values in this epoch: value profiles"
					 " come from dcpirun --values)" : "(no database)";
	if (!vd || vd->status) {
		if (vd)
			v->empty = vd->error;
		view_set_lines(v, 0);
		return;
	}
	build_columns(&vv->table, vd);
	table_set_row_array(&vv->table, vd->rows, vd->n, sizeof(*vd->rows));
	view_table_update(v);
}

static int values_open(struct view *v)
{
	struct values_view *vv = VV(v);

	if (!v->loc.epoch)
		return errorf("no epoch to show the values of");
	table_init(&vv->table, v);
	vv->table.filter_text = values_filter_text;
	v->table = &vv->table;
	values_reload(v);
	return 0;
}

static void values_close(struct view *v)
{
	table_release(&VV(v)->table);
}

static enum view_result values_request(struct view *v, enum request req, const char *arg)
{
	const struct values_row *r = table_row(v->table, v->pos);
	char spec[32];

	if (req != REQ_ENTER || !r)
		return VIEW_PASS;
	/* the procedure by its start, the cursor on the instruction */
	snprintf(spec, sizeof(spec), "0x%" PRIx64, r->inv->proc->start);
	tui_open_view(v->tui, "procedure", &(struct view_loc){ .epoch = v->loc.epoch,
		.image = r->key, .procedure = spec, .address = r->inv->addr });
	return VIEW_DONE;
}

static void values_title(struct view *v, struct strbuf *sb)
{
	const struct values_data *vd = VV(v)->vd;

	strbuf_addstr(sb, "epoch ");
	tui_epoch_name(v->tui, v->loc.epoch, sb);
	if (!vd || vd->status)
		return;
	strbuf_addf(sb, ": %zu semi-invariant instruction%s (a value >= %.0f%% of >= %" PRIu64
		    " value samples)", vd->n, vd->n == 1 ? "" : "s", 100 * vd->inv.opts.min_share,
		    vd->inv.opts.min_samples);
	if (v->lines != vd->n)
		strbuf_addf(sb, ", %zu shown", v->lines);
}

const struct view_ops values_view_ops = {
	.name = "values",
	.flags = VIEW_FOLLOWS_EPOCH,
	.legend = "The semi-invariant instructions of the epoch, as dcpivals lists them: those\n"
		  "whose written register or accessed address held one value at least 90% of the\n"
		  "times they were sampled (value profiles: dcpirun --values), hottest first.\n"
		  "samples: the value samples behind that share; % the share; then where the\n"
		  "instruction is, its image, its text and its most common values.  Enter opens\n"
		  "the procedure at the instruction.",
	.priv_size = sizeof(struct values_view),
	.open = values_open,
	.close = values_close,
	.reload = values_reload,
	.request = values_request,
	.title = values_title,
};
