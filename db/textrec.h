/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/textrec.h - the checksummed, line-based text format shared by the
 * database's small files (current, meta, images); docs/db-format.md,
 * "Text records".
 *
 * Writing:  textrec_begin(&sb, "dcpi-epoch", 1);
 *           textrec_line(&sb, "seq", "3", NULL);
 *           textrec_finish(&sb);          // appends the crc32c line
 * Reading:  textrec_parse(buf, len, "dcpi-epoch", 1, &rec, &why);
 *           for each line: rec.lines[i].tok[0] is the key.
 */
#ifndef DCPI_DB_TEXTREC_H
#define DCPI_DB_TEXTREC_H

#include <stddef.h>

struct strbuf;

/* Files larger than this are rejected unread. */
#define TEXTREC_MAX_SIZE (64u << 20)

struct textrec_line {
	char **tok; /* unescaped tokens, tok[0] is the key */
	size_t ntok;
};

struct textrec {
	unsigned version;
	struct textrec_line *lines; /* without the magic and crc lines */
	size_t n, alloc;
};

void textrec_begin(struct strbuf *sb, const char *magic, unsigned version);
/* Appends one line of NULL-terminated tokens, each escaped. */
void textrec_line(struct strbuf *sb, const char *key, ...) __attribute__((sentinel));
/* Appends one token (escaped, with a leading space unless first on the line). */
void textrec_token(struct strbuf *sb, const char *tok, int first);
void textrec_finish(struct strbuf *sb);

/*
 * Parses and validates buf.  Accepts a version <= max_version.  Returns 0,
 * or -1 with *why set to a static description.
 */
int textrec_parse(const char *buf, size_t len, const char *magic, unsigned max_version,
		  struct textrec *rec, const char **why);
void textrec_release(struct textrec *rec);

#endif
