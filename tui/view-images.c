/*
 * tui/view-images.c - the images of one epoch: samples per event, the
 * share and running share of the current event, whether the binary is
 * still the one profiled, and the path.  Enter opens the image's
 * procedures (once that view exists).
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
	struct table table;
	double *cum;            /* running share by display position */
	int event;              /* the event the columns were built for */
};

#define IV(v) ((struct images_view *)(v)->priv)
#define ROW(p) ((const struct image_row *)(p))

static double share(const struct images_view *iv, const struct image_row *r)
{
	uint64_t total = iv->event >= 0 ? iv->id->total[iv->event] : 0;

	return total ? (double)r->samples[iv->event] / (double)total : 0;
}

/* ---- cells ------------------------------------------------------------- */

static void cell_samples(void *ctx, const struct table_column *col, const void *row, size_t pos,
			 struct draw *d, int width)
{
	struct view *v = ctx;
	const struct image_row *r = row;
	uint64_t n = r->samples[col->arg];
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, n);
	draw_field(d, col->arg == IV(v)->event ? table_share_style(share(IV(v), r), n) : (n ? STYLE_NORMAL : STYLE_DIM),
		   buf, width, ALIGN_RIGHT);
}

static void draw_percent(struct draw *d, enum style st, double s, int width)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%.1f", s * 100);
	draw_field(d, st, buf, width, ALIGN_RIGHT);
}

static void cell_percent(void *ctx, const struct table_column *col, const void *row, size_t pos,
			 struct draw *d, int width)
{
	struct view *v = ctx;
	const struct image_row *r = row;
	double s = share(IV(v), r);

	draw_percent(d, table_share_style(s, IV(v)->event >= 0 ? r->samples[IV(v)->event] : 0), s, width);
}

static void cell_cum(void *ctx, const struct table_column *col, const void *row, size_t pos,
		     struct draw *d, int width)
{
	struct view *v = ctx;

	draw_percent(d, STYLE_NORMAL, IV(v)->cum && pos < v->table->n_shown ? IV(v)->cum[pos] : 0,
		     width);
}

static void cell_status(void *ctx, const struct table_column *col, const void *row, size_t pos,
			struct draw *d, int width)
{
	static const enum style styles[] = { STYLE_DIM, STYLE_OK, STYLE_MISSING, STYLE_REBUILT,
					     STYLE_WARNING };
	enum binary_status s = ROW(row)->status;

	draw_field(d, styles[s], binary_status_name(s), width, ALIGN_LEFT);
}

static void cell_path(void *ctx, const struct table_column *col, const void *row, size_t pos,
		      struct draw *d, int width)
{
	draw_field(d, STYLE_NORMAL, ROW(row)->path, width, ALIGN_LEFT_TAIL);
}

/* ---- comparisons ----------------------------------------------------------- */

static int cmp_samples(const struct table_column *c, const void *a, const void *b)
{
	return table_cmp_u64(ROW(a)->samples[c->arg], ROW(b)->samples[c->arg]);
}

static int cmp_status(const struct table_column *c, const void *a, const void *b)
{
	return table_cmp_u64(ROW(a)->status, ROW(b)->status);
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

static void add_samples_column(struct images_view *iv, int ev)
{
	uint64_t max = 0;

	for (size_t i = 0; i < iv->id->n; i++)
		if (iv->id->rows[i].samples[ev] > max)
			max = iv->id->rows[i].samples[ev];
	table_add_column(&iv->table, &(struct table_column){
		.name = event_name((enum dcpi_event)ev), .width = table_digits(max), .align = ALIGN_RIGHT,
		.numeric = true, .arg = ev, .cmp = cmp_samples, .cell = cell_samples });
}

/* As wide as the longest status shown ("rebuilt", "unreadable"), at least 7. */
static int status_width(const struct images_view *iv)
{
	int w = 7;

	for (size_t i = 0; i < iv->id->n; i++)
		if ((int)strlen(binary_status_name(iv->id->rows[i].status)) > w)
			w = (int)strlen(binary_status_name(iv->id->rows[i].status));
	return w;
}

/* The current event first, with its % and cum%, then the other events. */
static void build_columns(struct view *v)
{
	struct images_view *iv = IV(v);
	struct table *t = &iv->table;

	table_clear_columns(t);
	if (iv->event >= 0) {
		add_samples_column(iv, iv->event);
		table_add_column(t, &(struct table_column){ .name = "percent", .title = "%", .width = 5,
							    .align = ALIGN_RIGHT, .numeric = true,
							    .arg = iv->event, .cmp = cmp_samples,
							    .cell = cell_percent });
		table_add_column(t, &(struct table_column){ .name = "cum", .title = "cum%", .width = 5,
							    .align = ALIGN_RIGHT, .cell = cell_cum });
	}
	for (int e = 0; e < EVENT__COUNT; e++)
		if (e != iv->event && iv->id->events[e])
			add_samples_column(iv, e);
	table_add_column(t, &(struct table_column){ .name = "status", .width = status_width(iv),
						    .cmp = cmp_status, .cell = cell_status });
	table_add_column(t, &(struct table_column){ .name = "path", .min = 12,
						    .align = ALIGN_LEFT_TAIL, .cmp = cmp_path,
						    .cell = cell_path });
	/* Sort by file name without a column of its own: ":sort name". */
	table_add_column(t, &(struct table_column){ .name = "name", .hidden = true,
						    .cmp = cmp_base });
}

static double row_share(const void *iv, const void *row)
{
	return share(iv, row);
}

static void images_updated(void *ctx, struct table *t)
{
	struct images_view *iv = IV((struct view *)ctx);

	table_cumulative(t, &iv->cum, row_share, iv);
}

static void images_filter_text(void *ctx, const void *row, struct strbuf *out)
{
	const struct image_row *r = row;

	strbuf_addf(out, "%s %s %s", r->path, r->key, binary_status_name(r->status));
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
	const struct images_data *id = data_images(v->tui, v->loc.epoch, v);
	const void **ptrs;

	table_set_rows(&iv->table, NULL, 0);
	iv->id = id;
	v->empty = tui_has_db(v->tui) ? "(no images in this epoch)" : "(no database)";
	if (!id) {
		view_set_lines(v, 0);
		free(key);
		return;
	}
	if (!id->index_ok)
		v->empty = "(the image index of this epoch is unreadable)";
	tui_default_event(v->tui, id->events);
	/* Sorted by the old event's samples: sort by the new one's. */
	if (iv->event >= 0 && iv->event != tui_event(v->tui) &&
	    !strcmp(iv->table.sort_name, event_name((enum dcpi_event)iv->event)))
		iv->table.sort_name[0] = '\0';
	iv->event = tui_event(v->tui);
	build_columns(v);
	if (iv->table.sort < 0)
		table_sort_by(&iv->table, iv->event >= 0 ? 0 : table_column_index(&iv->table, "path"),
			      iv->event >= 0);
	ptrs = xcalloc(id->n ? id->n : 1, sizeof(*ptrs));
	for (size_t i = 0; i < id->n; i++)
		ptrs[i] = &id->rows[i];
	table_set_rows(&iv->table, ptrs, id->n);
	free(ptrs);
	view_table_update(v);
	select_key(v, key);
	free(key);
}

static int images_open(struct view *v)
{
	struct images_view *iv = IV(v);

	table_init(&iv->table, v);
	iv->table.filter_text = images_filter_text;
	iv->table.updated = images_updated;
	iv->event = -1;
	v->table = &iv->table;
	images_reload(v);
	return 0;
}

static void images_close(struct view *v)
{
	table_release(&IV(v)->table);
	free(IV(v)->cum);
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
	if (iv->event >= 0)
		strbuf_addf(sb, ", %" PRIu64 " %s samples", iv->id->total[iv->event],
			    event_name((enum dcpi_event)iv->event));
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
	procs_complete_names(v->tui, v->loc.epoch, c);
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

/* What the file is like now, as the report tools see it. */
static void describe_binary(const struct image_row *r, struct strbuf *sb)
{
	const struct db_image *img = r->img;

	switch (r->status) {
	case BINARY_NA:
		strbuf_addf(sb, "not a file (%s)", img ? image_kind_name(img->kind) : "no record");
		return;
	case BINARY_OK:
		if (r->bin.used)
			strbuf_addf(sb, "ok: the database's copy %s", r->bin.used);
		else
			strbuf_addstr(sb, img->build_id_len ? "ok: same build-id"
				      : img->size || img->mtime_ns ? "ok: same size and mtime"
				      : "ok: it exists (nothing recorded to check)");
		return;
	case BINARY_REBUILT:
		strbuf_addstr(sb, "rebuilt: ");
		/* without a build-id, what differs is the size or mtime */
		if (!img->build_id_len && r->bin.stat_ok) {
			add_file_state(sb, r->bin.size, r->bin.mtime_ns);
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
	}
	strbuf_addstr(sb, r->bin.why ? r->bin.why : "?");
}

static void describe_samples(const struct images_view *iv, const struct image_row *r,
			     struct strbuf *sb)
{
	for (int e = 0; e < EVENT__COUNT; e++) {
		uint64_t total = iv->id->total[e];

		if (!iv->id->events[e])
			continue;
		strbuf_addf(sb, "%s%s %" PRIu64 " (%.1f%%)", sb->len ? ", " : "",
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
		describe_binary(r, &sb);
		break;
	case PANE_SAMPLES:
		describe_samples(IV(v), r, &sb);
		break;
	}
	draw_printf(d, STYLE_DIM, " %-9s", labels[line]);
	draw_text(d, STYLE_NORMAL, sb.buf);
	strbuf_release(&sb);
}

const struct view_ops images_view_ops = {
	.name = "images",
	.flags = VIEW_FOLLOWS_EPOCH,
	.legend = "Samples per event in each image of the epoch (all processes); % and cum% are\n"
		  "shares of the current event (:event NAME).  status: ok (the binary is the one\n"
		  "profiled: same build-id, else same size and mtime), missing, rebuilt (it\n"
		  "changed since), unreadable (not ELF, no permission), - (not a file: kernel,\n"
		  "vdso, anonymous code).  :sort name sorts by file name;\n"
		  "p shows the selected image's record and binary in a pane.",
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
