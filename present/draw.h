/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * present/draw.h - the presentation layer: styled segments drawn into a
 * line, below both the report tools and dcpi-tui (tig's draw.h; perf's
 * annotation_write_ops, one line formatter for stdio and the TUI).
 *
 * A struct draw is a line being drawn into a backend.  What is drawn is a
 * sequence of segments, each a piece of text in a style; the backend
 * decides what a style looks like (a colour pair, a monochrome attribute,
 * an ANSI escape sequence, nothing at all).  Backends:
 *
 *   draw_init_text()   plain text appended to a strbuf (styles dropped):
 *                      dcpi-tui's :save-view and search, tests
 *   draw_init_file()   text written to a FILE, with ANSI colours or
 *                      without (DRAW_COLOR): the report tools
 *   curses             a line of a window (tui/display.c)
 *
 * Reports of several lines draw them one after another into the same
 * struct draw, ending each with draw_eol() (text backends write a newline;
 * a curses line has no end to write).  So analysis/ writes a report once,
 * as segments, and the tools print it while dcpi-tui draws the same lines
 * in its views.
 *
 * Text given to the layer is UTF-8.  The layer never lets a control byte,
 * an invalid sequence or a C1 control through (they become '?'), clips at
 * the line's width, honours horizontal scrolling, and in ASCII mode
 * (DRAW_ASCII: a non-UTF-8 locale or --ascii) shows every non-ASCII
 * character as '?' and every glyph in its ASCII form.  Callers should still
 * pass untrusted text through display_safe() (core/utf8.h) so that control
 * characters are shown escaped rather than replaced.
 *
 * This folder depends on core/ only: analysis/, tools/ and tui/ draw
 * through it (docs/architecture.md).
 */
#ifndef DCPI_PRESENT_DRAW_H
#define DCPI_PRESENT_DRAW_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct strbuf;

/* Colours and attributes, in the layer's own terms (no curses.h here). */
enum draw_color {
	DC_DEFAULT = -1,
	DC_BLACK, DC_RED, DC_GREEN, DC_YELLOW, DC_BLUE, DC_MAGENTA, DC_CYAN, DC_WHITE,
};

enum draw_attr {
	DA_NONE = 0,
	DA_BOLD = (1 << 0),
	DA_REVERSE = (1 << 1),
	DA_UNDERLINE = (1 << 2),
	DA_DIM = (1 << 3),
};

/*
 * STYLE_INFO(_): _(ID, name, fg, bg, colour attrs, monochrome attrs).
 * Monochrome (no colours, NO_COLOR, --no-color) uses only the last column,
 * so everything that matters must be visible with attributes alone.
 * The styles after "for the analysis" are those of the analysis' reports
 * (dcpicalc's bubbles and confidence, dcpidiff's verdicts).
 */
#define STYLE_INFO(_)                                                              \
	_(NORMAL, "normal", DEFAULT, DEFAULT, NONE, NONE)                          \
	_(CURSOR, "cursor", WHITE, BLUE, BOLD, REVERSE)                            \
	_(TOPBAR, "topbar", BLACK, CYAN, NONE, REVERSE)                            \
	_(TITLE, "title", WHITE, BLUE, BOLD, REVERSE)                              \
	_(HEADER, "header", YELLOW, DEFAULT, BOLD, BOLD | DA_UNDERLINE)            \
	_(STATUS, "status", DEFAULT, DEFAULT, NONE, NONE)                          \
	_(INFO, "info", GREEN, DEFAULT, NONE, NONE)                                \
	_(WARNING, "warning", YELLOW, DEFAULT, BOLD, BOLD)                         \
	_(ERROR, "error", RED, DEFAULT, BOLD, BOLD)                                \
	_(DIM, "dim", DEFAULT, DEFAULT, DIM, DIM)                                  \
	_(HOT, "hot", RED, DEFAULT, BOLD, BOLD)                                    \
	_(WARM, "warm", YELLOW, DEFAULT, NONE, NONE)                               \
	_(MARK, "mark", MAGENTA, DEFAULT, BOLD, BOLD)                               \
	_(CURRENT, "current", GREEN, DEFAULT, BOLD, BOLD)                          \
	_(LABEL, "label", CYAN, DEFAULT, NONE, NONE)                               \
	_(OK, "ok", GREEN, DEFAULT, NONE, NONE)                                    \
	_(MISSING, "missing", RED, DEFAULT, BOLD, BOLD)                            \
	_(REBUILT, "rebuilt", YELLOW, DEFAULT, BOLD, UNDERLINE)                    \
	_(KEY, "key", GREEN, DEFAULT, NONE, BOLD)                                  \
	_(SECTION, "section", YELLOW, DEFAULT, BOLD, BOLD | DA_UNDERLINE)          \
	_(POPUP, "popup", BLACK, WHITE, NONE, REVERSE)                             \
	/* for the analysis */                                                     \
	_(ADDRESS, "address", BLUE, DEFAULT, NONE, NONE)                           \
	_(MNEMONIC, "mnemonic", DEFAULT, DEFAULT, BOLD, BOLD)                      \
	_(REGISTER, "register", CYAN, DEFAULT, NONE, NONE)                         \
	_(IMMEDIATE, "immediate", MAGENTA, DEFAULT, NONE, NONE)                    \
	_(TARGET, "target", BLUE, DEFAULT, BOLD, UNDERLINE)                        \
	_(BLOCK, "block", YELLOW, DEFAULT, NONE, BOLD)                             \
	_(SOURCE, "source", CYAN, DEFAULT, NONE, DIM)                              \
	_(BUBBLE, "bubble", RED, DEFAULT, NONE, BOLD)                              \
	_(BUBBLE_STATIC, "bubble-static", MAGENTA, DEFAULT, NONE, NONE)            \
	_(CONF_HIGH, "conf-high", GREEN, DEFAULT, NONE, NONE)                      \
	_(CONF_MEDIUM, "conf-medium", YELLOW, DEFAULT, NONE, NONE)                 \
	_(CONF_LOW, "conf-low", RED, DEFAULT, NONE, DIM)                           \
	_(WORSE, "worse", RED, DEFAULT, BOLD, BOLD)                                \
	_(BETTER, "better", GREEN, DEFAULT, BOLD, UNDERLINE)

enum style {
#define STYLE_ENUM_(id, name, fg, bg, attr, mono) STYLE_##id,
	STYLE_INFO(STYLE_ENUM_)
#undef STYLE_ENUM_
	STYLE__COUNT
};

struct style_info {
	const char *name;
	enum draw_color fg, bg;
	unsigned attr, mono;
};

const struct style_info *style_info(enum style st);

/*
 * GLYPH_INFO(_): _(ID, UTF-8 form, ASCII form).  Both forms have display
 * width 1 except where the ASCII form is longer ("->").
 */
#define GLYPH_INFO(_)                      \
	_(ELLIPSIS, "\u2026", "~")         \
	_(VLINE, "\u2502", "|")            \
	_(HLINE, "\u2500", "-")            \
	_(SORT_DESC, "\u25bc", "-")        \
	_(SORT_ASC, "\u25b2", "+")         \
	_(ARROW_RIGHT, "\u2192", "->")     \
	_(ARROW_LEFT, "\u2190", "<-")      \
	_(BREADCRUMB, "\u203a", ">")       \
	_(BULLET, "\u25cf", "*")           \
	_(BAR, "\u2588", "#")              \
	_(BUBBLE, "\u2591", ":")

enum glyph {
#define GLYPH_ENUM_(id, utf8, ascii) GLYPH_##id,
	GLYPH_INFO(GLYPH_ENUM_)
#undef GLYPH_ENUM_
	GLYPH__COUNT
};

enum draw_flags {
	DRAW_ASCII = (1 << 0),    /* ASCII only: '?' for other characters */
	DRAW_SELECTED = (1 << 1), /* the cursor line: everything in STYLE_CURSOR */
	/*
	 * Valid UTF-8 passes (one column a character) even where the locale
	 * cannot show it: reports written to files and pipes, which must not
	 * depend on the reader's locale.  Controls still become '?'.
	 */
	DRAW_UTF8 = (1 << 2),
	DRAW_COLOR = (1 << 3),    /* draw_init_file(): ANSI colours and attributes */
};

enum draw_align {
	ALIGN_LEFT,       /* pad right; truncate the end */
	ALIGN_RIGHT,      /* pad left; truncate the end */
	ALIGN_LEFT_TAIL,  /* pad right; truncate the start (paths: keep the file name) */
	/*
	 * Pad right; truncate the middle, keeping the start and the (longer)
	 * end: "std::vector<int>::…::push_back(int const&)" (C++ names).
	 */
	ALIGN_LEFT_MIDDLE,
};

/*
 * The widest a column of names is made when sized by its content (reports
 * and views): longer names are cut in the middle (ALIGN_LEFT_MIDDLE).
 */
#define DRAW_NAME_MAX 40

/* A width no line reaches: text backends use it to draw lines whole. */
#define DRAW_UNBOUNDED (1 << 20)

struct draw;

struct draw_backend {
	/*
	 * Writes len bytes of clean text (display width `width`) at the line's
	 * current position in style st.
	 */
	void (*put)(struct draw *d, const char *s, size_t len, int width, enum style st);
	/* Ends the line (NULL: a backend of single lines). */
	void (*eol)(struct draw *d);
};

struct draw {
	const struct draw_backend *be;
	void *target;    /* backend data: a WINDOW, a strbuf, a FILE */
	int row;         /* backend data: the line's row; the style a file is in */
	int width;       /* columns of the line */
	int col;         /* columns drawn so far */
	int skip;        /* columns hidden on the left (horizontal scroll) */
	int vcol;        /* virtual column: drawn plus skipped */
	unsigned flags;  /* enum draw_flags */
};

/* Starts a line drawn as plain text appended to out (styles dropped). */
void draw_init_text(struct draw *d, struct strbuf *out, int width, unsigned flags);

/*
 * Starts lines written to f, unbounded: with ANSI colours when flags has
 * DRAW_COLOR (cli_color(): --color, a terminal, $NO_COLOR), else plain.
 * Check for write errors with draw_file_finish().
 */
void draw_init_file(struct draw *d, FILE *f, unsigned flags);
/* Flushes the file; -1 on a write error (reported by the caller). */
int draw_file_finish(struct draw *d);

/* Ends the line and starts the next one (text backends write a newline). */
void draw_eol(struct draw *d);

/* Draws text, clipped; returns the columns drawn. */
int draw_text(struct draw *d, enum style st, const char *s);
int draw_textn(struct draw *d, enum style st, const char *s, size_t len);
int draw_printf(struct draw *d, enum style st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Draws text that holds newlines, a line per line, each ended with
 * draw_eol() (the last one too, when text does not end with a newline).
 */
void draw_lines(struct draw *d, enum style st, const char *text);

/*
 * Where to break the first line of s (len bytes) to make it at most width
 * bytes: at its last space past half the width, else at width (a word too
 * long is cut).  len if it fits.
 */
size_t draw_wrap(const char *s, size_t len, size_t width);

/* Draws n spaces (in style st). */
void draw_space(struct draw *d, enum style st, int n);

/*
 * Draws s in exactly `width` columns: padded as align says, or cut with an
 * ellipsis glyph where it does not fit.
 */
void draw_field(struct draw *d, enum style st, const char *s, int width, enum draw_align align);

/* A field of a row (draw_columns): its text, width and alignment. */
struct draw_col {
	const char *text;
	int width;
	enum draw_align align;
};

/*
 * Draws n fields in style st (draw_field), with gap spaces in style gap_st
 * between them: a row of column titles.
 */
void draw_columns(struct draw *d, enum style st, const struct draw_col *cols, size_t n,
		 enum style gap_st, int gap);

/* Draws a glyph (its ASCII form in ASCII mode). */
int draw_glyph(struct draw *d, enum style st, enum glyph g);
/* The text of a glyph under flags. */
const char *glyph_text(enum glyph g, unsigned flags);

/* Draws a horizontal bar of fraction (0..1) of width columns, then pads. */
void draw_bar(struct draw *d, enum style st, double fraction, int width);

/* Pads the rest of the line with spaces in style st (no-op when unbounded). */
void draw_fill(struct draw *d, enum style st);

/* Display width of s under flags (what draw_text() would draw, unclipped). */
int text_width(const char *s, unsigned flags);

/* Hot (a share >= 10%), warm (>= 1%), cold (no samples: dim) rows stand out. */
static inline enum style draw_share_style(double share, uint64_t n)
{
	if (!n)
		return STYLE_DIM;
	return share >= 0.10 ? STYLE_HOT : share >= 0.01 ? STYLE_WARM : STYLE_NORMAL;
}

/* The decimal digits of n (the width of a count column). */
static inline int draw_digits(uint64_t n)
{
	int d = 1;

	while (n >= 10) {
		n /= 10;
		d++;
	}
	return d;
}

#endif
