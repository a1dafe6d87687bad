/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/view-images.c - the images of one epoch: samples per event, the
 * share and running share of the current event, whether the binary is
 * still the one profiled, and the path.  Enter opens the image's
 * procedures.
 */
#include "config.h"
#include "tui/view.h"

#include "core/strbuf.h"
#include "core/timeutil.h"
#include "core/xalloc.h"
#include "tui/data.h"
#include "tui/data-proc.h"
#include "tui/table.h"
#include "tui/tui.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct images_view {
	const struct images_data *id;
	const struct binary_checks *checks; /* while the binaries are verified, else NULL */
	struct table table;
	struct table_samples samples;  /* the event the columns were built for, cum% */
};

#define IV(v) ((struct images_view *)(v)->priv)
#define ROW(p) ((const struct image_row *)(p))

static uint64_t samples(const struct table_samples *ts, const void *row, int ev)
{
	return ROW(row)->samples[ev];
}

/* What the check of the row's binary found, BINARY_CHECKING while it runs. */
static enum binary_status status_of(const struct images_view *iv, const struct image_row *r)
{
	return binaries_status(iv->id, iv->checks, (size_t)(r - iv->id->rows));
}

/* The status shown: "damaged" (a profile unreadable, its samples partial) before the binary's. */
static const char *status_name(const struct images_view *iv, const struct image_row *r)
{
	return r->damaged ? "damaged" : binary_status_name(status_of(iv, r));
}

/* ---- cells ------------------------------------------------------------- */

static const char *text_status(void *ctx, const struct table_column *col, const void *row)
{
	return status_name(col->data, row);
}

static void cell_status(void *ctx, const struct table_column *col, const void *row, size_t pos,
			struct draw *d, int width)
{
	static const enum style styles[] = { STYLE_DIM, STYLE_OK, STYLE_MISSING, STYLE_REBUILT,
					     STYLE_WARNING, STYLE_DIM };
	enum binary_status s = status_of(col->data, row);

	draw_field(d, ROW(row)->damaged ? STYLE_WARNING : styles[s], status_name(col->data, row),
		   width, ALIGN_LEFT);
}

static const char *text_path(void *ctx, const struct table_column *col, const void *row)
{
	return ROW(row)->path;
}

static void cell_path(void *ctx, const struct table_column *col, const void *row, size_t pos,
		      struct draw *d, int width)
{
	draw_field(d, STYLE_NORMAL, ROW(row)->path, width, ALIGN_LEFT_TAIL);
}

/* ---- comparisons ----------------------------------------------------------- */

static int cmp_status(const struct table_column *c, const void *a, const void *b)
{
	int r = table_cmp_u64(ROW(a)->damaged, ROW(b)->damaged);

	return r ? r : table_cmp_u64(status_of(c->data, a), status_of(c->data, b));
}

static int cmp_path(const struct table_column *c, const void *a, const void *b)
{
	return strcmp(ROW(a)->path, ROW(b)->path);
}

static int cmp_base(const struct table_column *c, const void *a, const void *b)
{
	int r = strcmp(ROW(a)->base, ROW(b)->base);

	return r ? r : strcmp(ROW(a)->path, ROW(b)->path);
}

/* ---- building -------------------------------------------------------------- */

/* As wide as the longest status shown ("rebuilt", "unreadable"), at least 7. */
static int status_width(const struct images_view *iv)
{
	int w = 7;

	for (size_t i = 0; i < iv->id->n; i++)
		if ((int)strlen(status_name(iv, &iv->id->rows[i])) > w)
			w = (int)strlen(status_name(iv, &iv->id->rows[i]));
	return w;
}

/* The current event first, with its % and cum%, then the other events. */
static void build_columns(struct view *v)
{
	struct images_view *iv = IV(v);
	struct table *t = &iv->table;

	enum dcpi_event events[EVENT__COUNT];
	int widths[EVENT__COUNT] = { 0 };
	size_t n = 0;

	/* the events with samples in the epoch, as wide as their largest count */
	for (int e = 0; e < EVENT__COUNT; e++) {
		uint64_t max = 0;

		if (!iv->id->events[e])
			continue;
		for (size_t i = 0; i < iv->id->n; i++)
			if (iv->id->rows[i].samples[e] > max)
				max = iv->id->rows[i].samples[e];
		widths[e] = draw_digits(max);
		events[n++] = (enum dcpi_event)e;
	}
	table_clear_columns(t);
	table_add_sample_columns(t, &iv->samples, events, n, widths);
	table_add_column(t, &(struct table_column){ .name = "status", .width = status_width(iv),
						    .data = iv, .cmp = cmp_status, .cell = cell_status,
						    .text = text_status, .live = true });
	table_add_column(t, &(struct table_column){ .name = "path", .min = 12,
						    .align = ALIGN_LEFT_TAIL, .cmp = cmp_path,
						    .cell = cell_path, .text = text_path });
	/* Sort by file name without a column of its own: ":sort name". */
	table_add_column(t, &(struct table_column){ .name = "name", .hidden = true,
						    .cmp = cmp_base });
}

static void images_updated(void *ctx, struct table *t)
{
	table_samples_update(t, &IV((struct view *)ctx)->samples);
}

static void images_filter_text(void *ctx, const void *row, struct strbuf *out)
{
	const struct image_row *r = row;

	strbuf_addf(out, "%s %s %s", r->path, r->key, status_name(IV((struct view *)ctx), r));
}

static void select_key(struct view *v, const char *key)
{
	for (size_t i = 0; key && i < v->lines; i++) {
		if (!strcmp(ROW(table_row(v->table, i))->key, key)) {
			view_move_to(v, i);
			return;
		}
	}
	view_move_to(v, 0);
}

static void images_reload(struct view *v)
{
	struct images_view *iv = IV(v);
	const struct image_row *cur = table_row(v->table, v->pos);
	char *key = cur ? xstrdup(cur->key) : NULL;
	const struct images_data *id = data_images(v->src, v->loc.epoch, v);

	bool checked;

	table_set_rows(&iv->table, NULL, 0);
	iv->id = id;
	iv->checks = NULL;
	v->empty = tui_has_db(v->tui) ? "(no images in this epoch)" : "(no database)";
	if (!id) {
		view_set_lines(v, 0);
		free(key);
		return;
	}
	/* the binaries are verified in the background: reloaded when they are */
	iv->checks = data_binaries(v->src, id, v, &checked);
	if (!id->index_ok)
		v->empty = "(the image index of this epoch is unreadable)";
	tui_default_event(v->tui, id->events);
	iv->samples.totals = id->total;
	table_samples_set_event(&iv->table, &iv->samples, tui_event(v->tui));
	build_columns(v);
	table_samples_default_sort(&iv->table, &iv->samples, "path");
	table_set_row_array(&iv->table, id->rows, id->n, sizeof(*id->rows));
	view_table_update(v);
	select_key(v, key);
	free(key);
}

static int images_open(struct view *v)
{
	struct images_view *iv = IV(v);

	if (!v->loc.epoch)
		return errorf("no epoch to show the images of");
	table_init(&iv->table, v);
	iv->table.filter_text = images_filter_text;
	iv->table.updated = images_updated;
	iv->samples.event = -1;
	iv->samples.samples = samples;
	v->table = &iv->table;
	images_reload(v);
	return 0;
}

static void images_close(struct view *v)
{
	table_release(&IV(v)->table);
	table_samples_release(&IV(v)->samples);
}

static enum view_result images_request(struct view *v, enum request req, const char *arg)
{
	const struct image_row *r = table_row(v->table, v->pos);
	struct view_loc loc = { .epoch = v->loc.epoch };

	if (req != REQ_ENTER || !r)
		return VIEW_PASS;
	loc.image = (char *)r->key;
	tui_open_view(v->tui, "procedures", &loc);
	return VIEW_DONE;
}

static void images_title(struct view *v, struct strbuf *sb)
{
	struct images_view *iv = IV(v);

	strbuf_addstr(sb, "epoch ");
	tui_epoch_name(v->tui, v->loc.epoch, sb);
	if (!iv->id)
		return;
	strbuf_addf(sb, ": %zu image%s", iv->id->n, iv->id->n == 1 ? "" : "s");
	if (v->lines != iv->id->n)
		strbuf_addf(sb, ", %zu shown", v->lines);
	if (iv->samples.event >= 0)
		strbuf_addf(sb, ", %s%" PRIu64 " %s samples", iv->id->n_damaged ? "partial " : "",
			    iv->id->total[iv->samples.event],
			    event_name((enum dcpi_event)iv->samples.event));
	if (iv->id->n_damaged)
		strbuf_addf(sb, " (%zu damaged)", iv->id->n_damaged);
}

static bool matches(const struct image_row *r, const char *what, int how)
{
	switch (how) {
	case 0:
		return !strcmp(r->base, what) || !strcmp(r->path, what);
	case 1:
		return !strncmp(r->key, what, strlen(what));
	default:
		return strstr(r->base, what) != NULL;
	}
}

/*
 * :goto NAME: an image by file name or path, then key prefix, then a part of
 * its file name; else a procedure of that name in the epoch.  (Directories
 * are not searched: ":goto main" must not pick /home/main/x over main().)  :goto 0xADDRESS:
 * the procedure at that address in the selected image.
 */
static int images_goto(struct view *v, const char *what)
{
	const struct images_view *iv = IV(v);
	const struct image_row *cur = table_row(v->table, v->pos);

	if (!strncmp(what, "0x", 2) || !strncmp(what, "0X", 2)) {
		if (!cur)
			return errorf("no image selected to look for address %s in", what);
		/* 0xADDRESS@IMAGE says which image itself */
		return tui_open_procedure(v->tui, v->loc.epoch, strchr(what, '@') ? NULL : cur->key,
					  what);
	}
	for (int how = 0; how < 3; how++) {
		for (size_t i = 0; i < v->lines; i++) {
			if (matches(table_row(v->table, i), what, how)) {
				view_move_to(v, i);
				return 0;
			}
		}
		for (size_t i = 0; iv->id && i < iv->id->n; i++)
			if (matches(&iv->id->rows[i], what, how))
				return errorf("image '%s' is hidden by the filter (:filter clears it)", what);
	}
	return tui_open_procedure(v->tui, v->loc.epoch, NULL, what);
}

static void images_complete(struct view *v, enum arg_kind kind, struct candidates *c)
{
	const struct images_view *iv = IV(v);

	if (kind != ARG_GOTO || !iv->id)
		return;
	for (size_t i = 0; i < iv->id->n; i++)
		candidates_add(c, iv->id->rows[i].base);
	procs_complete_names(v->src, v->loc.epoch, c);
}

/* ---- the details pane: the selected image's record ------------------------- */

enum { PANE_PATH, PANE_IMAGE, PANE_RECORD, PANE_BINARY, PANE_SAMPLES, PANE__LINES };

static size_t images_pane_lines(struct view *v)
{
	return table_row(v->table, v->pos) ? PANE__LINES : 0;
}

static void add_file_state(struct strbuf *sb, uint64_t size, int64_t mtime_ns)
{
	strbuf_addf(sb, "%" PRIu64 " bytes, mtime ", size);
	strbuf_add_time_short(sb, mtime_ns);
}

/* What the database recorded about the file when it was profiled. */
static void describe_record(const struct image_row *r, struct strbuf *sb)
{
	const struct db_image *img = r->img;

	if (!img)
		strbuf_addstr(sb, "none: profiles without an entry in the image index");
	else if (img->kind != IMAGE_FILE)
		strbuf_addstr(sb, "-");
	else if (!img->size && !img->mtime_ns)
		strbuf_addstr(sb, "no size or mtime");
	else
		add_file_state(sb, img->size, img->mtime_ns);
}

/* What the check of the row's binary found (NULL: not verified yet). */
static const struct binary_check *check_of(const struct images_view *iv, const struct image_row *r)
{
	size_t i = (size_t)(r - iv->id->rows);

	if (iv->id->checked || !r->img || r->status != BINARY_CHECKING)
		return &r->bin;
	if (iv->checks && status_of(iv, r) != BINARY_CHECKING)
		return &iv->checks->v[i];
	return NULL;
}

/* What the file is like now, as the report tools see it. */
static void describe_binary(const struct images_view *iv, const struct image_row *r,
			    struct strbuf *sb)
{
	const struct db_image *img = r->img;
	const struct binary_check *bin = check_of(iv, r);

	if (!bin) {
		strbuf_addstr(sb, "not verified yet (the binaries are verified in the background)");
		return;
	}
	switch (bin->status) {
	case BINARY_NA:
		strbuf_addf(sb, "not a file (%s)", img ? image_kind_name(img->kind) : "no record");
		return;
	case BINARY_OK:
		if (bin->used)
			strbuf_addf(sb, "ok: the database's copy %s", bin->used);
		else
			strbuf_addstr(sb, img->build_id_len ? "ok: same build-id"
				      : img->size || img->mtime_ns ? "ok: same size and mtime"
				      : "ok: it exists (nothing recorded to check)");
		return;
	case BINARY_REBUILT:
		strbuf_addstr(sb, "rebuilt: ");
		/* without a build-id, what differs is the size or mtime */
		if (!img->build_id_len && bin->stat_ok) {
			add_file_state(sb, bin->size, bin->mtime_ns);
			strbuf_addstr(sb, " now");
			return;
		}
		break;
	case BINARY_MISSING:
		strbuf_addstr(sb, "missing: ");
		break;
	case BINARY_UNREADABLE:
		strbuf_addstr(sb, "unreadable: ");
		break;
	case BINARY_CHECKING:
		break;
	}
	strbuf_addstr(sb, bin->why ? bin->why : "?");
}

static void describe_samples(const struct images_view *iv, const struct image_row *r,
			     struct strbuf *sb)
{
	size_t start;

	if (r->damaged)
		strbuf_addstr(sb, "damaged (a profile unreadable, not counted): ");
	start = sb->len;
	for (int e = 0; e < EVENT__COUNT; e++) {
		uint64_t total = iv->id->total[e];

		if (!iv->id->events[e])
			continue;
		strbuf_addf(sb, "%s%s %" PRIu64 " (%.1f%%)", sb->len > start ? ", " : "",
			    event_name((enum dcpi_event)e), r->samples[e],
			    total ? 100.0 * (double)r->samples[e] / (double)total : 0.0);
	}
}

static void images_draw_pane(struct view *v, size_t line, struct draw *d)
{
	static const char *const labels[] = { "path", "image", "recorded", "binary", "samples" };
	const struct image_row *r = table_row(v->table, v->pos);
	struct strbuf sb = STRBUF_INIT;

	if (!r)
		return;
	switch (line) {
	case PANE_PATH:
		strbuf_addstr(&sb, r->path);
		break;
	case PANE_IMAGE:
		strbuf_addf(&sb, "key %s", r->key);
		if (r->img) {
			strbuf_addf(&sb, ", %s, build-id ", image_kind_name(r->img->kind));
			if (r->img->build_id_len)
				strbuf_add_build_id(&sb, r->img);
			else
				strbuf_addstr(&sb, "none");
		}
		break;
	case PANE_RECORD:
		describe_record(r, &sb);
		break;
	case PANE_BINARY:
		describe_binary(IV(v), r, &sb);
		break;
	case PANE_SAMPLES:
		describe_samples(IV(v), r, &sb);
		break;
	}
	view_pane_line(d, labels[line], 9, STYLE_NORMAL, sb.buf);
	strbuf_release(&sb);
}

const struct view_ops images_view_ops = {
	.name = "images",
	.flags = VIEW_FOLLOWS_EPOCH,
	.legend = "Samples per event in each image of the epoch (all processes); % and cum% are\n"
		  "shares of the current event (:event NAME).  status: ok (the binary is the one\n"
		  "profiled: same build-id, else same size and mtime), missing, rebuilt (it\n"
		  "changed since), unreadable (not ELF, no permission), - (not a file: kernel,\n"
		  "vdso, anonymous code), damaged (a profile of it is unreadable: its samples\n"
		  "are not counted and the title says the totals are partial).\n"
		  ":sort name sorts by file name; p shows the selected image's record and\n"
		  "binary in a pane.",
	.priv_size = sizeof(struct images_view),
	.open = images_open,
	.close = images_close,
	.reload = images_reload,
	.request = images_request,
	.title = images_title,
	.go_to = images_goto,
	.complete = images_complete,
	.pane_lines = images_pane_lines,
	.draw_pane = images_draw_pane,
};
