/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#define NCURSES_WIDECHAR 1
#include "tui/display.h"

#include "core/die.h"
#include "core/event.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "present/draw.h"
#include "tui/table.h"
#include "tui/tui-int.h"
#include "tui/view.h"

#include <curses.h>
#include <errno.h>
#include <langinfo.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

struct display {
	SCREEN *screen;
	FILE *out, *in;
	WINDOW *input;       /* the prompt line: keypad off, readline reads bytes */
	bool color, ascii;
	attr_t attr[STYLE__COUNT];
	short pair[STYLE__COUNT];
};

/* The display that is open, for display_emergency(). */
static struct display *open_display;

/* The smallest screen dcpi-tui lays out: top bar, header, a line, title, status. */
#define MIN_LINES 5
#define MIN_COLS 20

/* ---- the curses backend of the drawing layer ------------------------------ */

static void curses_put(struct draw *d, const char *s, size_t len, int width, enum style st)
{
	WINDOW *w = d->target;

	wattr_set(w, open_display->attr[st], open_display->pair[st], NULL);
	waddnstr(w, s, (int)len);
}

static const struct draw_backend curses_backend = { curses_put, NULL };

static void draw_init_window(struct draw *d, WINDOW *w, int row, int width, unsigned flags)
{
	memset(d, 0, sizeof(*d));
	d->be = &curses_backend;
	d->target = w;
	d->row = row;
	d->width = width;
	d->flags = flags;
	wmove(w, row, 0);
}

/* ---- setup --------------------------------------------------------------- */

static attr_t curses_attrs(unsigned a)
{
	attr_t r = A_NORMAL;

	if (a & DA_BOLD)
		r |= A_BOLD;
	if (a & DA_REVERSE)
		r |= A_REVERSE;
	if (a & DA_UNDERLINE)
		r |= A_UNDERLINE;
	if (a & DA_DIM)
		r |= A_DIM;
	return r;
}

static void setup_styles(struct display *disp, bool want_color)
{
	bool defaults = false;

	disp->color = want_color && has_colors() && start_color() == OK;
	if (disp->color)
		defaults = use_default_colors() == OK;
	for (int s = 0; s < STYLE__COUNT; s++) {
		const struct style_info *si = style_info((enum style)s);

		disp->pair[s] = 0;
		if (!disp->color) {
			disp->attr[s] = curses_attrs(si->mono);
			continue;
		}
		short fg = (short)si->fg, bg = (short)si->bg;

		if (!defaults) {
			fg = fg < 0 ? COLOR_WHITE : fg;
			bg = bg < 0 ? COLOR_BLACK : bg;
		}
		disp->attr[s] = curses_attrs(si->attr);
		/* A pair only for styles with colours of their own. */
		if ((si->fg != DC_DEFAULT || si->bg != DC_DEFAULT) && s < COLOR_PAIRS - 1 &&
		    init_pair((short)(s + 1), fg, bg) == OK)
			disp->pair[s] = (short)(s + 1);
	}
}

static bool locale_is_utf8(void)
{
	const char *cs = nl_langinfo(CODESET);

	return cs && (!strcmp(cs, "UTF-8") || !strcmp(cs, "utf8"));
}

/* Opens the screen; reports and returns NULL if it cannot. */
static SCREEN *open_screen(struct tui *t, struct display *disp)
{
	const char *term = getenv("TERM");
	SCREEN *s;

	if (!term || !*term)
		term = t->opt.headless ? "xterm" : NULL;
	if (t->opt.headless) {
		disp->out = fopen("/dev/null", "w");
		disp->in = fopen("/dev/null", "r");
		if (!disp->out || !disp->in) {
			errorf_errno("cannot open /dev/null");
			return NULL;
		}
		s = newterm(term, disp->out, disp->in);
	} else if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		errorf("dcpi-tui needs a terminal (or --script FILE for headless use)");
		return NULL;
	} else {
		s = newterm(term, stdout, stdin);
	}
	if (!s)
		errorf("cannot use terminal type '%s'", term ? term : "(unset)");
	return s;
}

int display_open(struct tui *t)
{
	struct display *disp = XNEW(struct display);

	disp->screen = open_screen(t, disp);
	if (!disp->screen) {
		if (disp->out)
			fclose(disp->out);
		if (disp->in)
			fclose(disp->in);
		free(disp);
		return -1;
	}
	set_term(disp->screen);
	open_display = disp;
	t->disp = disp;
	cbreak();
	noecho();
	nonl();
	intrflush(stdscr, FALSE);
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	disp->ascii = t->opt.ascii || !locale_is_utf8();
	t->ascii = disp->ascii;
	setup_styles(disp, !t->opt.no_color);
	display_layout(t);
	return 0;
}

void display_close(struct tui *t)
{
	struct display *disp = t->disp;

	if (!disp)
		return;
	if (disp->input)
		delwin(disp->input);
	endwin();
	delscreen(disp->screen);
	if (disp->out)
		fclose(disp->out);
	if (disp->in)
		fclose(disp->in);
	free(disp);
	t->disp = NULL;
	open_display = NULL;
}

void display_emergency(void)
{
	if (open_display && !isendwin())
		endwin();
}

static bool too_small(void)
{
	return LINES < MIN_LINES || COLS < MIN_COLS;
}

void display_layout(struct tui *t)
{
	struct display *disp = t->disp;

	if (disp->input)
		delwin(disp->input);
	disp->input = newwin(1, COLS, LINES > 0 ? LINES - 1 : 0, 0);
	keypad(disp->input, FALSE);
	t->dirty_views = true;
}

int display_set_size(struct tui *t, int cols, int lines)
{
	if (cols < 1 || lines < 1 || cols > 1000 || lines > 1000)
		return errorf("bad screen size %dx%d", cols, lines);
	if (resizeterm(lines, cols) != OK)
		return errorf("cannot resize the screen to %dx%d", cols, lines);
	display_layout(t);
	return 0;
}

void display_clear(struct tui *t)
{
	clearok(curscr, TRUE);
}

/* ---- drawing -------------------------------------------------------------- */

static unsigned flags_of(struct tui *t)
{
	return t->disp->ascii ? DRAW_ASCII : 0;
}

/*
 * Draws a bar: left, then right at the end of the line.  When both do not
 * fit, left is cut (keep_right) or right is dropped.
 */
static void draw_bar_line(struct draw *d, enum style st, const char *left, const char *right,
			  bool keep_right)
{
	int lw = text_width(left, d->flags), rw = text_width(right, d->flags);

	if (lw + 1 + rw <= d->width) {
		draw_text(d, st, left);
		draw_space(d, st, d->width - lw - rw);
		draw_text(d, st, right);
	} else if (keep_right && rw + 2 < d->width) {
		draw_field(d, st, left, d->width - rw - 1, ALIGN_LEFT);
		draw_space(d, st, 1);
		draw_text(d, st, right);
	} else {
		draw_text(d, st, left);
	}
	draw_fill(d, st);
}

static void draw_topbar(struct tui *t)
{
	struct strbuf sb = STRBUF_INIT, path = STRBUF_INIT;
	const char *sep = glyph_text(GLYPH_VLINE, flags_of(t));
	struct draw d;
	char *db = display_safe(t->db_path ? t->db_path : "?");

	strbuf_addf(&sb, " dcpi-tui %s %s", sep, db);
	if (t->epoch) {
		strbuf_addf(&sb, " %s epoch ", sep);
		tui_epoch_name(t, t->epoch, &sb);
	}
	if (t->src.env.event >= 0)
		strbuf_addf(&sb, " %s %s", sep, event_name((enum dcpi_event)t->src.env.event));
	for (size_t i = 0; i < t->depth; i++)
		strbuf_addf(&path, "%s%s", i ? glyph_text(GLYPH_BREADCRUMB, flags_of(t)) : "",
			    t->stack[i]->ops->name);
	strbuf_addch(&path, ' ');
	draw_init_window(&d, stdscr, 0, COLS, flags_of(t));
	draw_bar_line(&d, STYLE_TOPBAR, sb.buf, path.buf, false);
	free(db);
	strbuf_release(&sb);
	strbuf_release(&path);
}

static void draw_empty(struct tui *t, struct view *v, int y)
{
	struct strbuf sb = STRBUF_INIT;
	struct draw d;

	if (v->pending) {
		strbuf_addstr(&sb, "  loading");
		if (jobs_busy(&t->src.jobs)) {
			strbuf_addstr(&sb, ": ");
			jobs_describe(&t->src.jobs, &sb);
		}
		strbuf_addstr(&sb, glyph_text(GLYPH_ELLIPSIS, flags_of(t)));
	} else if (v->table && v->table->n_rows && v->table->filter) {
		strbuf_addf(&sb, "  (no line matches the filter '%s')", v->table->filter);
	} else {
		strbuf_addf(&sb, "  %s", v->empty);
	}
	draw_init_window(&d, stdscr, y, COLS, flags_of(t));
	draw_text(&d, STYLE_DIM, sb.buf);
	strbuf_release(&sb);
}

/* Lines of the details pane that fit under a view of h lines (0: closed). */
static int pane_height(struct view *v, int h)
{
	int n;

	if (!v->pane || !v->lines || !v->ops->pane_lines)
		return 0;
	n = (int)v->ops->pane_lines(v);
	if (n > (h - 1) / 2)
		n = (h - 1) / 2;
	return n > 0 ? n : 0;
}

static void draw_pane(struct tui *t, struct view *v, int y, int n)
{
	struct draw d;

	draw_init_window(&d, stdscr, y, COLS, flags_of(t));
	for (int x = 0; x < COLS; x++)
		draw_glyph(&d, STYLE_HEADER, GLYPH_HLINE);
	for (int i = 0; i < n; i++) {
		draw_init_window(&d, stdscr, y + 1 + i, COLS, flags_of(t));
		v->ops->draw_pane(v, (size_t)i, &d);
		draw_fill(&d, STYLE_NORMAL);
	}
}

static void draw_view(struct tui *t, struct view *v)
{
	int y = 1, h = LINES - 3, pane;
	struct draw d;

	if (view_has_header(v))
		h--;
	if ((pane = pane_height(v, h)))
		h -= pane + 1;
	view_resize(v, h, COLS);
	/* Scrolled right, flexible columns (paths) grow to show what was cut. */
	if (v->table)
		table_layout(v->table, COLS + v->hscroll);
	if (view_has_header(v)) {
		draw_init_window(&d, stdscr, y++, COLS, flags_of(t));
		d.skip = v->hscroll;
		view_draw_header(v, &d);
		draw_fill(&d, STYLE_HEADER);
	}
	if (!v->lines) {
		draw_empty(t, v, y);
		return;
	}
	for (int i = 0; i < h && v->offset + (size_t)i < v->lines; i++) {
		size_t line = v->offset + (size_t)i;

		draw_init_window(&d, stdscr, y + i, COLS,
				 flags_of(t) | (line == v->pos ? DRAW_SELECTED : 0));
		d.skip = v->hscroll;
		view_draw_line(v, line, &d);
		draw_fill(&d, STYLE_NORMAL);
	}
	if (pane)
		draw_pane(t, v, y + h, pane);
}

static void draw_title(struct tui *t, struct view *v)
{
	struct strbuf sb = STRBUF_INIT, right = STRBUF_INIT;
	struct draw d;

	strbuf_addf(&sb, "[%s]", v->ops->name);
	if (v->ops->title) {
		strbuf_addch(&sb, ' ');
		v->ops->title(v, &sb);
	}
	if (v->lines)
		strbuf_addf(&right, "%zu/%zu ", v->pos + 1, v->lines);
	draw_init_window(&d, stdscr, LINES - 2, COLS, flags_of(t));
	draw_bar_line(&d, STYLE_TITLE, sb.buf, right.buf, true);
	strbuf_release(&sb);
	strbuf_release(&right);
}

static void draw_status(struct tui *t)
{
	struct strbuf sb = STRBUF_INIT;
	enum style st = STYLE_STATUS;
	struct draw d;

	if (t->status) {
		if (t->status_is_info) {
			st = STYLE_INFO;
		} else {
			st = t->status_level == REPORT_WARNING ? STYLE_WARNING : STYLE_ERROR;
			strbuf_addstr(&sb, t->status_level == REPORT_WARNING ? "warning: " : "error: ");
		}
		strbuf_addstr(&sb, t->status);
		if (t->status_more)
			strbuf_addf(&sb, " (+%zu more: M)", t->status_more);
	} else if (jobs_busy(&t->src.jobs)) {
		jobs_describe(&t->src.jobs, &sb);
		strbuf_addstr(&sb, glyph_text(GLYPH_ELLIPSIS, flags_of(t)));
	}
	draw_init_window(&d, stdscr, LINES - 1, COLS, flags_of(t));
	draw_text(&d, st, sb.buf);
	draw_fill(&d, STYLE_STATUS);
	strbuf_release(&sb);
}

/* The prompt line, scrolled so that the cursor is visible. */
static void draw_prompt(struct tui *t)
{
	struct display *disp = t->disp;
	struct strbuf sb = STRBUF_INIT;
	int cursor, skip = 0;
	struct draw d;

	strbuf_addstr(&sb, t->prompt.prompt);
	strbuf_add(&sb, t->prompt.line, (size_t)t->prompt.point);
	cursor = text_width(sb.buf, flags_of(t));
	strbuf_addstr(&sb, t->prompt.line + t->prompt.point);
	if (cursor > COLS - 1)
		skip = cursor - (COLS - 1);
	werase(disp->input);
	draw_init_window(&d, disp->input, 0, COLS, flags_of(t));
	d.skip = skip;
	draw_text(&d, STYLE_NORMAL, sb.buf);
	wattr_set(disp->input, A_NORMAL, 0, NULL);
	wmove(disp->input, 0, cursor - skip);
	strbuf_release(&sb);
}

/* The completion list, in columns above the prompt. */
static void draw_matches(struct tui *t)
{
	size_t n = t->prompt.n_matches, colw = 0, ncols, nrows, maxrows = (size_t)LINES - 3;
	WINDOW *w;

	for (size_t i = 0; i < n; i++) {
		size_t l = (size_t)text_width(t->prompt.matches[i], flags_of(t));

		colw = l > colw ? l : colw;
	}
	colw += 2;
	ncols = (size_t)COLS / colw ? (size_t)COLS / colw : 1;
	nrows = (n + ncols - 1) / ncols;
	if (nrows > maxrows)
		nrows = maxrows;
	w = newwin((int)nrows, COLS, LINES - 1 - (int)nrows, 0);
	if (!w)
		return;
	for (size_t r = 0; r < nrows; r++) {
		struct draw d;

		draw_init_window(&d, w, (int)r, COLS, flags_of(t));
		for (size_t c = 0; c < ncols; c++) {
			size_t i = c * nrows + r;

			if (i < n)
				draw_field(&d, STYLE_POPUP, t->prompt.matches[i], (int)colw, ALIGN_LEFT);
		}
		draw_fill(&d, STYLE_POPUP);
	}
	wnoutrefresh(w);
	delwin(w);
}

void display_redraw(struct tui *t)
{
	struct view *v = tui_view(t);

	werase(stdscr);
	if (too_small()) {
		mvaddnstr(0, 0, "screen too small", COLS);
		wnoutrefresh(stdscr);
		doupdate();
		return;
	}
	draw_topbar(t);
	if (v) {
		draw_view(t, v);
		draw_title(t, v);
	}
	draw_status(t);
	wnoutrefresh(stdscr);
	if (t->prompt.active) {
		if (t->prompt.n_matches)
			draw_matches(t);
		draw_prompt(t);
		wnoutrefresh(t->disp->input);
	}
	curs_set(t->prompt.active ? 1 : 0);
	doupdate();
	t->dirty_views = false;
}

/* ---- input ----------------------------------------------------------------- */

void display_wait(struct tui *t, int fd, int timeout_ms)
{
	struct pollfd p[2] = { { .fd = fileno(stdin), .events = POLLIN },
			       { .fd = fd, .events = POLLIN } };

	poll(p, fd >= 0 ? 2 : 1, timeout_ms);
}

int display_getkey(struct tui *t, int timeout_ms)
{
	wtimeout(stdscr, timeout_ms);
	return wgetch(stdscr);
}

int display_getbyte(struct tui *t, int timeout_ms)
{
	wtimeout(t->disp->input, timeout_ms);
	return wgetch(t->disp->input);
}

/* ---- screen dumps ----------------------------------------------------------- */

static void attr_names(attr_t a, short pair, struct strbuf *sb)
{
	static const struct {
		attr_t a;
		const char *name;
	} names[] = {
		{ A_BOLD, "bold" }, { A_REVERSE, "reverse" }, { A_UNDERLINE, "underline" },
		{ A_DIM, "dim" },
	};
	bool first = true;

	if (pair > 0 && pair <= STYLE__COUNT) {
		strbuf_addstr(sb, style_info((enum style)(pair - 1))->name);
		first = false;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (a & names[i].a) {
			strbuf_addf(sb, "%s%s", first ? "" : "+", names[i].name);
			first = false;
		}
	}
}

/* Reads one row of the screen as UTF-8 text, and its style runs. */
static void read_row(int y, struct strbuf *text, struct strbuf *runs)
{
	struct strbuf cur = STRBUF_INIT, prev = STRBUF_INIT;
	int run_start = 0;

	for (int x = 0; x < COLS; x++) {
		cchar_t cc;
		wchar_t wch[CCHARW_MAX + 1];
		attr_t a = 0;
		short pair = 0;
		char mb[MB_LEN_MAX];

		if (mvwin_wch(curscr, y, x, &cc) == ERR || getcchar(&cc, wch, &a, &pair, NULL) == ERR)
			wch[0] = L' ', wch[1] = 0;
		for (int i = 0; wch[i]; i++) {
			mbstate_t ps;
			size_t n;

			memset(&ps, 0, sizeof(ps));
			n = wcrtomb(mb, wch[i], &ps);
			if (n == (size_t)-1)
				strbuf_addch(text, '?');
			else
				strbuf_add(text, mb, n);
		}
		if (wch[0] && wcwidth(wch[0]) == 2)
			x++;
		strbuf_reset(&cur);
		attr_names(a & (A_BOLD | A_REVERSE | A_UNDERLINE | A_DIM), pair, &cur);
		if (x == 0 || strcmp(cur.buf, prev.buf)) {
			if (x && prev.len)
				strbuf_addf(runs, " %d-%d %s", run_start, x - 1, prev.buf);
			run_start = x;
			strbuf_reset(&prev);
			strbuf_addstr(&prev, cur.buf);
		}
	}
	if (prev.len)
		strbuf_addf(runs, " %d-%d %s", run_start, COLS - 1, prev.buf);
	strbuf_rtrim(text);
	strbuf_release(&cur);
	strbuf_release(&prev);
}

int display_save(struct tui *t, const char *path, bool attrs)
{
	struct strbuf text = STRBUF_INIT, runs = STRBUF_INIT, all_runs = STRBUF_INIT;
	FILE *f = fopen(path, "w");

	if (!f)
		return errorf_errno("cannot write '%s'", path);
	for (int y = 0; y < LINES; y++) {
		strbuf_reset(&text);
		strbuf_reset(&runs);
		read_row(y, &text, &runs);
		fprintf(f, "%s\n", text.buf);
		if (runs.len)
			strbuf_addf(&all_runs, "%d:%s\n", y, runs.buf);
	}
	if (attrs) {
		fprintf(f, "--\n%s", all_runs.buf);
		if (t->prompt.active)
			fprintf(f, "cursor: %d %d\n", getcury(t->disp->input) + LINES - 1,
				getcurx(t->disp->input));
	}
	strbuf_release(&text);
	strbuf_release(&runs);
	strbuf_release(&all_runs);
	if (fclose(f))
		return errorf_errno("cannot write '%s'", path);
	return 0;
}
