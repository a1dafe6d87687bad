/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An epoch's symbol files in their container (db/symfile.h). */
#include "config.h"
#include "db/symfile.h"
#include "db/auxfile.h"
#include "db/blob.h"
#include "db/blobfile.h"
#include "db/damage.h"
#include "db/db.h"
#include "core/die.h"
#include "core/strbuf.h"

#include <ctype.h>
#include <string.h>

int symfile_kind_for_name(const char *name)
{
	size_t n = strlen(name);

	if (!strcmp(name, KSYMS_FILE))
		return SYMFILE_KALLSYMS;
	if (n > 9 && !strncmp(name, "perf-", 5) && !strcmp(name + n - 4, ".map"))
		return SYMFILE_JITMAP;
	return -1;
}

uint32_t symfile_count_lines(const void *text, size_t len)
{
	const char *p = text, *end = p + len;
	uint64_t n = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		n++;
		p = nl ? nl + 1 : end;
	}
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* A kallsyms line: hex digits, a space, a letter, a space, a name (then anything). */
static bool kallsyms_line_ok(const char *p, const char *nl)
{
	const char *q = p;

	while (q < nl && isxdigit((unsigned char)*q))
		q++;
	return q > p && q + 3 < nl && q[0] == ' ' && isalpha((unsigned char)q[1]) && q[2] == ' ';
}

int symfile_check(enum symfile_kind kind, const void *text, size_t len, uint32_t count,
		  const char **why)
{
	const char *p = text, *end = p + len;

	if (symfile_count_lines(text, len) != count)
		return *why = "the line count does not match the header", -1;
	if (kind != SYMFILE_KALLSYMS)
		return 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if (!nl)
			return *why = "the last line has no newline", -1;
		if (!kallsyms_line_ok(p, nl))
			return *why = "malformed line (not ADDRESS TYPE NAME)", -1;
		p = nl + 1;
	}
	return 0;
}

static const char *magic_of(int kind)
{
	return kind == SYMFILE_KALLSYMS ? KSYMS_MAGIC : JITMAP_MAGIC;
}

int db_symfile_store(struct db *db, uint32_t seq, const char *name, const void *text,
		     size_t len)
{
	int kind = symfile_kind_for_name(name);

	if (kind < 0)
		BUG("'%s' is not a symbol file name", name);
	return db_blob_store(db, seq, name, magic_of(kind), SYMFILE_VERSION, 0,
			     symfile_count_lines(text, len), text, len);
}

int db_symfile_load(struct db *db, uint32_t seq, const char *name, struct strbuf *out)
{
	struct strbuf buf = STRBUF_INIT;
	struct blob_header h;
	const void *payload;
	const char *why;
	int kind = symfile_kind_for_name(name), r;

	if (kind < 0)
		BUG("'%s' is not a symbol file name", name);
	strbuf_reset(out);
	r = db_aux_load(db, seq, name, SYMFILE_MAX_SIZE, &buf);
	if (r) {
		strbuf_release(&buf);
		return r > 0 ? DB_SYMFILE_ABSENT : -1;
	}
	if (buf.len < 4 || memcmp(buf.buf, "DCPI", 4)) {
		/* an older dcpi's plain copy: kept, not verified */
		db_damage(db, DB_UNVERIFIED, seq, name,
			  "no checksum (written by an older dcpi): its symbols are unverified");
		strbuf_add(out, buf.buf, buf.len);
		strbuf_release(&buf);
		return DB_SYMFILE_UNVERIFIED;
	}
	if (blob_decode(buf.buf, buf.len, magic_of(kind), SYMFILE_VERSION, &h, &payload, &why) ||
	    (h.flags && (why = "unknown flags")) ||
	    symfile_check(kind, payload, h.payload_size, h.count, &why)) {
		r = db_damage(db, DB_DAMAGED, seq, name, "corrupt %s: %s",
			      kind == SYMFILE_KALLSYMS ? "kernel symbols" : "JIT symbol map", why);
	} else {
		strbuf_add(out, payload, h.payload_size);
	}
	strbuf_release(&buf);
	return r;
}
