/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "present/draw.h"

#include "core/die.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"

#include <stdio.h>
#include <string.h>
#include <wchar.h>

static const struct style_info styles[] = {
#define STYLE_ROW_(id, name, fg, bg, attr, mono) \
	{ name, DC_##fg, DC_##bg, DA_##attr, DA_##mono },
	STYLE_INFO(STYLE_ROW_)
#undef STYLE_ROW_
};

const struct style_info *style_info(enum style st)
{
	if ((unsigned)st >= STYLE__COUNT)
		BUG("bad style %d", (int)st);
	return &styles[st];
}

static const char *const glyphs[][2] = {
#define GLYPH_ROW_(id, utf8, ascii) { utf8, ascii },
	GLYPH_INFO(GLYPH_ROW_)
#undef GLYPH_ROW_
};

const char *glyph_text(enum glyph g, unsigned flags)
{
	if ((unsigned)g >= GLYPH__COUNT)
		BUG("bad glyph %d", (int)g);
	return glyphs[g][(flags & DRAW_ASCII) ? 1 : 0];
}

/* ---- characters -------------------------------------------------------- */

/* One character of input text as the layer will show it. */
struct uchar {
	size_t len;  /* bytes consumed */
	int width;   /* display columns */
	bool bad;    /* shown as '?' */
};

static void next_char(const unsigned char *p, size_t avail, unsigned flags, struct uchar *u)
{
	size_t l;
	int w;

	u->len = 1;
	u->width = 1;
	u->bad = false;
	if (p[0] < 0x80) {
		u->bad = p[0] < 0x20 || p[0] == 0x7f;
		return;
	}
	l = utf8_valid_len(p, avail);
	if (!l) {
		u->bad = true;
		return;
	}
	u->len = l;
	if (flags & DRAW_ASCII) {
		u->bad = true;
		return;
	}
	uint32_t cp = utf8_decode(p, l);

	w = cp >= 0x80 && cp < 0xa0 ? -1 : wcwidth((wchar_t)cp);
	if (w < 0 && (flags & DRAW_UTF8) && cp >= 0xa0)
		w = 1;  /* the locale does not know it; the reader's may */
	if (w < 0)
		u->bad = true;
	else
		u->width = w;
}

int text_width(const char *s, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	int w = 0;

	while (n) {
		struct uchar u;

		next_char(p, n, flags, &u);
		w += u.width;
		p += u.len;
		n -= u.len;
	}
	return w;
}

/* Bytes of the longest prefix of s (len bytes) at most cols wide; *w gets its width. */
static size_t prefix_len(const char *s, size_t len, int cols, unsigned flags, int *w)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t off = 0;

	*w = 0;
	while (off < len) {
		struct uchar u;

		next_char(p + off, len - off, flags, &u);
		if (*w + u.width > cols)
			break;
		*w += u.width;
		off += u.len;
	}
	return off;
}

/* ---- output ------------------------------------------------------------ */

struct run {
	struct draw *d;
	enum style st;
	char buf[256];
	size_t len;
	int width;
};

static void run_flush(struct run *r)
{
	if (r->len)
		r->d->be->put(r->d, r->buf, r->len, r->width, r->st);
	r->len = 0;
	r->width = 0;
}

static void run_add(struct run *r, const void *s, size_t len, int width)
{
	if (r->len + len > sizeof(r->buf))
		run_flush(r);
	memcpy(r->buf + r->len, s, len);
	r->len += len;
	r->width += width;
	r->d->col += width;
	r->d->vcol += width;
}

/* Emits one character, honouring skip and width; false when the line is full. */
static bool emit_char(struct run *r, const unsigned char *p, const struct uchar *u)
{
	struct draw *d = r->d;

	if (d->vcol < d->skip) {
		int hidden = d->skip - d->vcol;

		if (u->width <= hidden) {
			d->vcol += u->width;
			return true;
		}
		/* A wide character cut by the left edge: blank its visible part. */
		d->vcol += hidden;
		for (int i = hidden; i < u->width; i++)
			if (d->col < d->width)
				run_add(r, " ", 1, 1);
		return d->col < d->width;
	}
	if (d->col + u->width > d->width)
		return false;
	if (u->bad)
		run_add(r, "?", 1, 1);
	else
		run_add(r, p, u->len, u->width);
	return true;
}

int draw_textn(struct draw *d, enum style st, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	struct run r = { .d = d, .st = (d->flags & DRAW_SELECTED) ? STYLE_CURSOR : st };
	int start = d->col;

	while (len) {
		struct uchar u;

		if (*p >= 0x20 && *p < 0x7f && d->vcol >= d->skip) {
			/* a run of printable ASCII: as emit_char() would, a byte a column */
			size_t k = 1;

			while (k < len && p[k] >= 0x20 && p[k] < 0x7f)
				k++;
			if (d->col >= d->width)
				break;
			if ((size_t)(d->width - d->col) < k)
				k = (size_t)(d->width - d->col);
			if (r.len == sizeof(r.buf))
				run_flush(&r);
			if (k > sizeof(r.buf) - r.len)
				k = sizeof(r.buf) - r.len;
			run_add(&r, p, k, (int)k);
			p += k;
			len -= k;
			continue;
		}
		next_char(p, len, d->flags, &u);
		if (!emit_char(&r, p, &u))
			break;
		p += u.len;
		len -= u.len;
	}
	run_flush(&r);
	return d->col - start;
}

int draw_text(struct draw *d, enum style st, const char *s)
{
	return draw_textn(d, st, s, strlen(s));
}

void draw_lines(struct draw *d, enum style st, const char *text)
{
	while (*text) {
		size_t n = strcspn(text, "\n");

		draw_textn(d, st, text, n);
		draw_eol(d);
		text += n + (text[n] == '\n');
	}
}

size_t draw_wrap(const char *s, size_t len, size_t width)
{
	size_t cut = width;

	if (len <= width)
		return len;
	while (cut > width / 2 && s[cut] != ' ')
		cut--;
	return s[cut] == ' ' ? cut : width;
}

int draw_printf(struct draw *d, enum style st, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	int n, w;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(small))
		return draw_textn(d, st, small, (size_t)n);

	struct strbuf sb = STRBUF_INIT;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	w = draw_textn(d, st, sb.buf, sb.len);
	strbuf_release(&sb);
	return w;
}

void draw_space(struct draw *d, enum style st, int n)
{
	static const char spaces[] = "                                ";

	while (n > 0 && d->col < d->width) {
		int k = n < (int)sizeof(spaces) - 1 ? n : (int)sizeof(spaces) - 1;

		draw_textn(d, st, spaces, (size_t)k);
		n -= k;
	}
}

void draw_field(struct draw *d, enum style st, const char *s, int width, enum draw_align align)
{
	size_t len = strlen(s);
	int tw = text_width(s, d->flags), w;
	const char *ell = glyph_text(GLYPH_ELLIPSIS, d->flags);

	if (width <= 0)
		return;
	if (tw <= width) {
		if (align == ALIGN_RIGHT)
			draw_space(d, st, width - tw);
		draw_textn(d, st, s, len);
		if (align != ALIGN_RIGHT)
			draw_space(d, st, width - tw);
		return;
	}
	if (align == ALIGN_LEFT_MIDDLE && width > 2) {
		/* the first half of the room, the ellipsis, then as much of the end as fits */
		int wh;
		size_t head = prefix_len(s, len, (width - 1) / 2, d->flags, &wh), off = head;
		const unsigned char *p = (const unsigned char *)s;

		w = tw - wh;
		while (off < len && w > width - 1 - wh) {
			struct uchar u;

			next_char(p + off, len - off, d->flags, &u);
			off += u.len;
			w -= u.width;
		}
		draw_textn(d, st, s, head);
		draw_text(d, st, ell);
		draw_textn(d, st, s + off, len - off);
		draw_space(d, st, width - 1 - wh - w);
		return;
	}
	if (align == ALIGN_LEFT_TAIL) {
		/* Drop characters from the front until the rest fits after the ellipsis. */
		size_t off = 0;
		const unsigned char *p = (const unsigned char *)s;

		w = tw;
		while (off < len && w > width - 1) {
			struct uchar u;

			next_char(p + off, len - off, d->flags, &u);
			off += u.len;
			w -= u.width;
		}
		draw_text(d, st, ell);
		draw_textn(d, st, s + off, len - off);
		draw_space(d, st, width - 1 - w);
		return;
	}
	len = prefix_len(s, len, width - 1, d->flags, &w);
	draw_textn(d, st, s, len);
	draw_space(d, st, width - 1 - w);
	draw_text(d, st, ell);
}

void draw_columns(struct draw *d, enum style st, const struct draw_col *cols, size_t n,
		 enum style gap_st, int gap)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			draw_space(d, gap_st, gap);
		draw_field(d, st, cols[i].text, cols[i].width, cols[i].align);
	}
}

int draw_glyph(struct draw *d, enum style st, enum glyph g)
{
	return draw_text(d, st, glyph_text(g, d->flags));
}

void draw_bar(struct draw *d, enum style st, double fraction, int width)
{
	static const char *const eighths[] = {
		"", "\u258f", "\u258e", "\u258d", "\u258c", "\u258b", "\u258a", "\u2589",
	};
	int drawn = 0;

	if (fraction < 0)
		fraction = 0;
	if (fraction > 1)
		fraction = 1;
	if (d->flags & DRAW_ASCII) {
		int n = (int)(fraction * width + 0.5);

		for (; drawn < n; drawn++)
			draw_text(d, st, "#");
	} else {
		int n8 = (int)(fraction * width * 8 + 0.5);

		for (; drawn < n8 / 8; drawn++)
			draw_glyph(d, st, GLYPH_BAR);
		if (n8 % 8 && drawn < width) {
			draw_text(d, st, eighths[n8 % 8]);
			drawn++;
		}
	}
	draw_space(d, st, width - drawn);
}

void draw_fill(struct draw *d, enum style st)
{
	if (d->width < DRAW_UNBOUNDED)
		draw_space(d, st, d->width - d->col);
}

void draw_eol(struct draw *d)
{
	if (d->be->eol)
		d->be->eol(d);
	d->col = 0;
	d->vcol = 0;
}

/* ---- plain-text backend ------------------------------------------------ */

static void text_put(struct draw *d, const char *s, size_t len, int width, enum style st)
{
	strbuf_add(d->target, s, len);
}

static void text_eol(struct draw *d)
{
	strbuf_addch(d->target, '\n');
}

static const struct draw_backend text_backend = { text_put, text_eol };

void draw_init_text(struct draw *d, struct strbuf *out, int width, unsigned flags)
{
	memset(d, 0, sizeof(*d));
	d->be = &text_backend;
	d->target = out;
	d->width = width;
	d->flags = flags;
}

/* ---- file backend: plain or ANSI colours ---------------------------------- */

/* The SGR parameters of a style ("1;31"), "" for the default look. */
static void sgr_of(enum style st, struct strbuf *sb)
{
	static const unsigned char attr_sgr[] = { 1, 7, 4, 2 }; /* DA_BOLD, REVERSE, UNDERLINE, DIM */
	const struct style_info *si = style_info(st);

	for (size_t k = 0; k < sizeof(attr_sgr); k++)
		if (si->attr & (1u << k))
			strbuf_addf(sb, "%s%u", sb->len ? ";" : "", attr_sgr[k]);
	if (si->fg != DC_DEFAULT)
		strbuf_addf(sb, "%s%d", sb->len ? ";" : "", 30 + (int)si->fg);
	if (si->bg != DC_DEFAULT)
		strbuf_addf(sb, "%s%d", sb->len ? ";" : "", 40 + (int)si->bg);
}

/* d->row holds the style the file is in (STYLE_NORMAL: none). */
static void file_style(struct draw *d, enum style st)
{
	struct strbuf sb = STRBUF_INIT;

	if ((int)st == d->row)
		return;
	if (d->row != STYLE_NORMAL)
		fputs("\033[m", d->target);
	d->row = st;
	sgr_of(st, &sb);
	if (sb.len)
		fprintf(d->target, "\033[%sm", sb.buf);
	strbuf_release(&sb);
}

static void file_put(struct draw *d, const char *s, size_t len, int width, enum style st)
{
	if (d->flags & DRAW_COLOR)
		file_style(d, st);
	fwrite(s, 1, len, d->target);
}

static void file_eol(struct draw *d)
{
	if (d->flags & DRAW_COLOR)
		file_style(d, STYLE_NORMAL);
	fputc('\n', d->target);
}

static const struct draw_backend file_backend = { file_put, file_eol };

void draw_init_file(struct draw *d, FILE *f, unsigned flags)
{
	memset(d, 0, sizeof(*d));
	d->be = &file_backend;
	d->target = f;
	d->row = STYLE_NORMAL;
	d->width = DRAW_UNBOUNDED;
	d->flags = flags | DRAW_UTF8;
}

int draw_file_finish(struct draw *d)
{
	if (d->flags & DRAW_COLOR)
		file_style(d, STYLE_NORMAL);
	return fflush(d->target) || ferror(d->target) ? -1 : 0;
}
