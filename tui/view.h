/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/view.h - the view interface: what every screen of dcpi-tui is.
 *
 * One view per file (tui/view-NAME.c), each ending with its ops table
 * (tig's src/blob.c).  A view is a list of lines with a cursor; it draws
 * them through the drawing layer (present/draw.h), never through curses, and
 * sees requests (tui/request.h), never keys.  Its request op runs first and
 * returns VIEW_PASS for what it does not handle; then the generic code here
 * (cursor movement, scrolling, sort, filter, goto) and then the session
 * (tui/tui.h: views, epochs, search, prompt) get it.
 *
 * A view that shows a table (tui/table.h) sets v->table in open and gets
 * drawing, the column header, sorting, filtering and column completion from
 * this file; other views set ops->draw (and ops->draw_header).
 *
 * Where a view stands is its struct view_loc (epoch, image, procedure,
 * address); drilling down opens the next view with a more precise loc:
 *   epochs --Enter--> images (loc.epoch) --Enter--> procedures (loc.image)
 *   --Enter--> procedure (loc.procedure) ; diff (loc.epoch, loc.epoch_b).
 * Views open each other by name through tui_open_view() (tui/tui.h); the
 * registry and the recipe for a new view are in tui/views.h.
 *
 * Data comes from data sources (tui/source.h): open and reload ask
 * v->src with source_load(), which starts a job if the data is not cached
 * and makes the view wait; the session calls reload again when the job is
 * done.
 */
#ifndef DCPI_TUI_VIEW_H
#define DCPI_TUI_VIEW_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "present/draw.h"
#include "tui/request.h"

struct sources;
struct strbuf;
struct table;
struct u64map;
struct tui;
struct view;

/* Where a view stands.  Strings are owned by the view (view_loc_copy). */
struct view_loc {
	uint32_t epoch;       /* 0: none */
	uint32_t epoch_b;     /* a diff's second epoch, 0: none */
	char *image;          /* image key, NULL: all images */
	char *procedure;      /* procedure name, NULL: none */
	uint64_t address;     /* an address in the image, 0: none */
};

void view_loc_copy(struct view_loc *dst, const struct view_loc *src);
void view_loc_release(struct view_loc *loc);

enum view_result {
	VIEW_PASS, /* not handled here: pass it on */
	VIEW_DONE, /* handled (including "handled with an error message") */
};

/* Completion candidates (prompt): words that start with a prefix. */
struct candidates {
	const char *prefix;
	char **v;
	size_t n, alloc;
	struct u64map *seen;  /* hash of a word -> index + 1 (private) */
};

/* Adds word if it starts with c->prefix and is not there yet. */
void candidates_add(struct candidates *c, const char *word);
void candidates_release(struct candidates *c);

enum view_flags {
	VIEW_FOLLOWS_EPOCH = (1 << 0), /* loc.epoch follows :epoch and reload */
	/*
	 * Searches reuse the text of the lines until the lines change through
	 * view_set_lines() or view_table_update(): for big views whose lines
	 * change no other way.
	 */
	VIEW_CACHE_TEXT = (1 << 1),
};

struct view_ops {
	const char *name;          /* "images": breadcrumbs, :save-view, tui_open_view() */
	unsigned flags;            /* enum view_flags */
	const char *legend;        /* help-view text about this view, or NULL */
	/* Appends generated help-view text after the legend (NULL: none). */
	void (*legend_more)(struct strbuf *sb);
	size_t priv_size;          /* zeroed private data for each view */

	/* Sets up the view at v->loc; -1 (reported) if it cannot be opened. */
	int (*open)(struct view *v);
	/* Frees what open and reload allocated (not priv itself). */
	void (*close)(struct view *v);
	/*
	 * Rebuilds the lines: the data waited for has arrived, or the epoch,
	 * the event or the database changed.  Keeps the cursor where it can.
	 */
	void (*reload)(struct view *v);
	/* Draws a line (non-table views). */
	void (*draw)(struct view *v, size_t line, struct draw *d);
	/* Draws the sticky header line (non-table views; NULL: none). */
	void (*draw_header)(struct view *v, struct draw *d);
	/* Handles a request before the generic code; NULL: all pass. */
	enum view_result (*request)(struct view *v, enum request req, const char *arg);
	/* Appends what the title bar says about the view. */
	void (*title)(struct view *v, struct strbuf *sb);
	/* :goto WHAT; returns 0 and moves the cursor, or -1 (reported). */
	int (*go_to)(struct view *v, const char *what);
	/* Adds completion candidates of kind (ARG_GOTO, ...). */
	void (*complete)(struct view *v, enum arg_kind kind, struct candidates *c);
	/*
	 * The details pane under the lines, opened and closed by :toggle-pane
	 * (p): how many lines it has for the cursor line, and each of them.
	 * The images view shows an image's record there, the procedure view
	 * its summary (the paper's Figure 4).  NULL: no pane.
	 */
	size_t (*pane_lines)(struct view *v);
	void (*draw_pane)(struct view *v, size_t line, struct draw *d);
};

struct view {
	const struct view_ops *ops;
	struct tui *tui;      /* the session (tui/tui.h) */
	struct sources *src;  /* the session's data (tui/source.h) */
	struct view_loc loc;
	void *priv;
	struct table *table;  /* a table view's table (owned by priv) */
	size_t lines;         /* lines (a table: rows shown) */
	size_t pos;           /* the cursor line */
	size_t offset;        /* the first line on screen */
	int hscroll;          /* columns scrolled to the right */
	bool pane;            /* the details pane is open */
	int height, width;    /* the body, without the header line */
	char *pending;        /* the job key the view waits for, or NULL */
	const char *empty;    /* what to show when there are no lines */
	/*
	 * VIEW_CACHE_TEXT: the text of every line, one after another, each
	 * ending in a NUL (line i's at texts + text_at[i]), ASCII lower-cased
	 * if texts_folded (for case-insensitive searches); or NULL.
	 */
	char *texts;
	size_t *text_at;
	size_t n_texts, texts_len;
	bool texts_folded;
};

/*
 * Creates a view of ops at loc and opens it; NULL (after reporting) if it
 * cannot be opened.
 */
struct view *view_new(struct tui *tui, struct sources *src, const struct view_ops *ops,
		      const struct view_loc *loc);
void view_free(struct view *v);

/* Sets the number of lines, keeping the cursor and offset in range. */
void view_set_lines(struct view *v, size_t lines);
/* Moves the cursor to line, scrolling to keep it visible. */
void view_move_to(struct view *v, size_t line);
/* Sets the body size (the display calls it on every layout). */
void view_resize(struct view *v, int height, int width);

/* Marks the view as waiting for job key (NULL: not waiting). */
void view_wait(struct view *v, const char *key);

/* Generic request handling (movement, scrolling, sort, filter, goto). */
enum view_result view_request(struct view *v, enum request req, const char *arg);

/* Draws line `line` / the header through the view's table or ops. */
void view_draw_line(struct view *v, size_t line, struct draw *d);
bool view_has_header(const struct view *v);
void view_draw_header(struct view *v, struct draw *d);

/*
 * A line of a details pane (draw_pane): its label, dim, in a column of
 * width, then text in style st.
 */
void view_pane_line(struct draw *d, const char *label, int width, enum style st, const char *text);

/*
 * A search pattern: an extended regular expression, case-insensitive unless
 * it has an upper-case letter (smartcase).  One without special characters
 * is matched as a plain substring (much faster over 100,000 lines).
 */
struct view_pattern {
	regex_t re;
	char *literal;     /* the pattern if it has no special character, else NULL */
	bool icase;
};

/* Compiles pattern; -1 (reported) if it is not a valid expression. */
int view_pattern_init(struct view_pattern *p, const char *pattern);
void view_pattern_release(struct view_pattern *p);
bool view_pattern_match(const struct view_pattern *p, const char *text);

/*
 * Finds the next line (dir 1) or previous (dir -1) after the cursor that
 * matches p, wrapping around; -1 if none.  *wrapped tells if it wrapped.
 * Views with VIEW_CACHE_TEXT keep the text of their lines between searches
 * (until view_set_lines() or view_table_update()).
 */
long view_search(struct view *v, const struct view_pattern *p, int dir, bool *wrapped);

/*
 * Writes the view model as text (:save-view): a header of key: value lines
 * (view, loc, lines, cursor, sort, filter), "--", the column header, and
 * every line, the cursor line marked with "> ".
 */
void view_dump(struct view *v, FILE *out, unsigned flags);

/* Table views: re-sorts and re-filters, keeping the cursor on its row. */
void view_table_update(struct view *v);

#endif
