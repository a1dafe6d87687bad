/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "core/utf8.h"
#include "core/strbuf.h"

#include <string.h>

size_t utf8_valid_len(const unsigned char *p, size_t avail)
{
	unsigned c = p[0];
	size_t n;
	uint32_t cp;

	if (c < 0xc2 || c > 0xf4)
		return 0;
	n = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	if (avail < n)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	cp = utf8_decode(p, n);
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	if (cp >= 0xd800 && cp <= 0xdfff)
		return 0;
	return n;
}

uint32_t utf8_decode(const unsigned char *p, size_t len)
{
	switch (len) {
	case 2:
		return ((uint32_t)(p[0] & 0x1f) << 6) | (p[1] & 0x3f);
	case 3:
		return ((uint32_t)(p[0] & 0x0f) << 12) | ((uint32_t)(p[1] & 0x3f) << 6) | (p[2] & 0x3f);
	case 4:
		return ((uint32_t)(p[0] & 0x07) << 18) | ((uint32_t)(p[1] & 0x3f) << 12) |
		       ((uint32_t)(p[2] & 0x3f) << 6) | (p[3] & 0x3f);
	default:
		return p[0];
	}
}

void strbuf_add_escaped(struct strbuf *sb, const char *s, size_t len, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	while (p < end) {
		unsigned c = *p;
		size_t n;

		switch (c) {
		case '\\': strbuf_addstr(sb, "\\\\"); p++; continue;
		case '\n': strbuf_addstr(sb, "\\n"); p++; continue;
		case '\t': strbuf_addstr(sb, "\\t"); p++; continue;
		case '\r': strbuf_addstr(sb, "\\r"); p++; continue;
		case ' ':
			if (flags & ESCAPE_SPACE) {
				strbuf_addstr(sb, "\\x20");
				p++;
				continue;
			}
			break;
		}
		if (c < 0x20 || c == 0x7f) {
			strbuf_addf(sb, "\\x%02x", c);
			p++;
		} else if (c < 0x80 || !(flags & ESCAPE_TERMINAL)) {
			strbuf_addch(sb, (int)c);
			p++;
		} else if ((n = utf8_valid_len(p, (size_t)(end - p))) > 0 &&
			   !(utf8_decode(p, n) >= 0x80 && utf8_decode(p, n) <= 0x9f)) {
			strbuf_add(sb, p, n);
			p += n;
		} else {
			strbuf_addf(sb, "\\x%02x", c);
			p++;
		}
	}
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int strbuf_add_unescaped(struct strbuf *sb, const char *s, size_t len)
{
	const char *end = s + len;

	while (s < end) {
		const char *bs = memchr(s, '\\', (size_t)(end - s));
		int hi, lo;

		/* the text up to the next escape at once (most tokens have none) */
		strbuf_add(sb, s, (size_t)((bs ? bs : end) - s));
		if (!bs)
			break;
		s = bs;
		if (++s >= end)
			return -1;
		switch (*s) {
		case '\\': strbuf_addch(sb, '\\'); s++; break;
		case 'n': strbuf_addch(sb, '\n'); s++; break;
		case 't': strbuf_addch(sb, '\t'); s++; break;
		case 'r': strbuf_addch(sb, '\r'); s++; break;
		case 'x':
			if (end - s < 3 || (hi = hexval(s[1])) < 0 || (lo = hexval(s[2])) < 0)
				return -1;
			strbuf_addch(sb, hi * 16 + lo);
			s += 3;
			break;
		default:
			return -1;
		}
	}
	return 0;
}

char *display_safe(const char *s)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_add_escaped(&sb, s, strlen(s), ESCAPE_TERMINAL);
	return strbuf_detach(&sb, NULL);
}

const char *display_safe_in(const char *s, struct strbuf *buf)
{
	const char *p = s;

	while (*p >= 0x20 && *p <= 0x7e && *p != '\\')
		p++;
	if (!*p)
		return s;
	strbuf_reset(buf);
	strbuf_add_escaped(buf, s, strlen(s), ESCAPE_TERMINAL);
	return buf->buf;
}
