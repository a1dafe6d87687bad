/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "db/textrec.h"
#include "core/crc32c.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void textrec_begin(struct strbuf *sb, const char *magic, unsigned version)
{
	strbuf_addf(sb, "%s %u\n", magic, version);
}

void textrec_token(struct strbuf *sb, const char *tok, int first)
{
	if (!first)
		strbuf_addch(sb, ' ');
	strbuf_add_escaped(sb, tok, strlen(tok), ESCAPE_SPACE);
}

void textrec_line(struct strbuf *sb, const char *key, ...)
{
	va_list ap;
	const char *tok;

	textrec_token(sb, key, 1);
	va_start(ap, key);
	while ((tok = va_arg(ap, const char *)))
		textrec_token(sb, tok, 0);
	va_end(ap);
	strbuf_addch(sb, '\n');
}

void textrec_finish(struct strbuf *sb)
{
	strbuf_addf(sb, "crc32c %08x\n", crc32c(0, sb->buf, sb->len));
}

void textrec_release(struct textrec *rec)
{
	for (size_t i = 0; i < rec->n; i++) {
		for (size_t j = 0; j < rec->lines[i].ntok; j++)
			free(rec->lines[i].tok[j]);
		free(rec->lines[i].tok);
	}
	free(rec->lines);
	memset(rec, 0, sizeof(*rec));
}

/* Splits one line (without its newline) into unescaped tokens. */
static int split_line(const char *s, size_t len, struct textrec_line *line)
{
	size_t alloc = 0;
	const char *end = s + len;

	line->tok = NULL;
	line->ntok = 0;
	while (s <= end) {
		const char *sp = memchr(s, ' ', (size_t)(end - s));
		size_t n = sp ? (size_t)(sp - s) : (size_t)(end - s);
		struct strbuf tok = STRBUF_INIT;

		if (!n || strbuf_add_unescaped(&tok, s, n) || memchr(tok.buf, '\0', tok.len)) {
			strbuf_release(&tok);
			return -1;
		}
		ALLOC_GROW(line->tok, line->ntok + 1, alloc);
		line->tok[line->ntok++] = strbuf_detach(&tok, NULL);
		if (!sp)
			break;
		s = sp + 1;
	}
	return 0;
}

int textrec_parse(const char *buf, size_t len, const char *magic, unsigned max_version,
		  struct textrec *rec, const char **why)
{
	const char *p = buf, *end, *crcline, *nl;
	size_t mlen = strlen(magic);
	unsigned crc, version;
	char tail[32];

	memset(rec, 0, sizeof(*rec));
	if (len > TEXTREC_MAX_SIZE)
		return *why = "file too large", -1;
	if (!len)
		return *why = "empty file", -1;
	if (memchr(buf, '\0', len))
		return *why = "NUL byte in text file", -1;
	/* The checksum line: the last line, "crc32c XXXXXXXX\n". */
	if (buf[len - 1] != '\n')
		return *why = "truncated (no final newline)", -1;
	crcline = buf + len - 1;
	while (crcline > buf && crcline[-1] != '\n')
		crcline--;
	if ((size_t)(buf + len - crcline) != sizeof("crc32c 01234567\n") - 1 ||
	    memcmp(crcline, "crc32c ", 7))
		return *why = "missing checksum line (truncated?)", -1;
	memcpy(tail, crcline + 7, 8);
	tail[8] = '\0';
	if (strspn(tail, "0123456789abcdef") != 8 || sscanf(tail, "%x", &crc) != 1)
		return *why = "malformed checksum line", -1;
	if (crc != crc32c(0, buf, (size_t)(crcline - buf)))
		return *why = "bad checksum", -1;

	end = crcline;
	nl = memchr(p, '\n', (size_t)(end - p));
	if (!nl || (size_t)(nl - p) <= mlen + 1 || memcmp(p, magic, mlen) || p[mlen] != ' ')
		return *why = "bad magic", -1;
	if (sscanf(p + mlen + 1, "%u", &version) != 1 || !version)
		return *why = "bad version", -1;
	if (version > max_version)
		return *why = "unsupported format version", -1;
	rec->version = version;
	p = nl + 1;
	while (p < end) {
		struct textrec_line line;

		nl = memchr(p, '\n', (size_t)(end - p));
		ALLOC_GROW(rec->lines, rec->n + 1, rec->alloc);
		if (split_line(p, (size_t)(nl - p), &line)) {
			rec->lines[rec->n++] = line;
			textrec_release(rec);
			return *why = "malformed line", -1;
		}
		rec->lines[rec->n++] = line;
		p = nl + 1;
	}
	return 0;
}
