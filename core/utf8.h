/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/utf8.h - UTF-8 validation and display width, and escaping of
 * untrusted text (image paths, labels, command names) for files and
 * terminals.
 */
#ifndef DCPI_CORE_UTF8_H
#define DCPI_CORE_UTF8_H

#include <stddef.h>
#include <stdint.h>

struct strbuf;

/*
 * If p starts with a valid, shortest-form UTF-8 sequence of 2-4 bytes
 * encoding a scalar value (not a surrogate), returns its length; else 0.
 * ASCII bytes return 0 too (callers handle them first).
 */
size_t utf8_valid_len(const unsigned char *p, size_t avail);

/* Decodes the code point of a valid sequence (as checked above). */
uint32_t utf8_decode(const unsigned char *p, size_t len);

enum escape_flags {
	/* Also escape space (for space-separated fields). */
	ESCAPE_SPACE = (1 << 0),
	/*
	 * Escape bytes >= 0x80 that are not valid UTF-8, and C1 control code
	 * points (U+0080..U+009F), so the result is safe to print on a
	 * terminal.  Without it, bytes >= 0x80 pass through (lossless for
	 * files).
	 */
	ESCAPE_TERMINAL = (1 << 1),
};

/*
 * Appends s, escaped: backslash as \\, \n \t \r, other control bytes and
 * DEL as \xHH; see enum escape_flags.  The result never contains a control
 * byte, a newline or a tab, so it can be a field of a line-based file.
 */
void strbuf_add_escaped(struct strbuf *sb, const char *s, size_t len, unsigned flags);

/*
 * Reverses strbuf_add_escaped(): appends the unescaped bytes of s to sb.
 * Returns -1 on an unknown or truncated escape.
 */
int strbuf_add_unescaped(struct strbuf *sb, const char *s, size_t len);

/* Terminal-safe copy of s (ESCAPE_TERMINAL), newly allocated. */
char *display_safe(const char *s);
/*
 * s as display_safe() makes it, without a copy where it needs no escaping
 * (printable ASCII, no backslash: most names of a million rows drawn): s
 * itself, else its escaped copy in buf (valid until buf changes).
 */
const char *display_safe_in(const char *s, struct strbuf *buf);

#endif
