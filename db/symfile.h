/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/symfile.h - an epoch's symbol files: `kallsyms` (the lines of
 * /proc/kallsyms its kernel samples need, collect/kallsyms.h) and
 * `perf-PID.map` (a JIT's own map, copied as it wrote it).  Their text is
 * kept in the checksummed container of db/blob.h (kinds DCPIKSYM and
 * DCPIJMAP; docs/db-format.md, "Symbol files"), so that a damaged or
 * edited one is caught as any other file is.
 *
 * Databases written before kept them as plain text: a reader still takes
 * such a file, as unverified (reported, and recorded in db/damage.h), and
 * `dcpidb check` says so.  A file starting with "DCPI" is a container and
 * must be a sound one (neither a kallsyms line nor a perf map line starts
 * so: they start with a hexadecimal address).
 */
#ifndef DCPI_DB_SYMFILE_H
#define DCPI_DB_SYMFILE_H

#include <stddef.h>
#include <stdint.h>

struct db;
struct strbuf;

#define KSYMS_MAGIC "DCPIKSYM"
#define KSYMS_FILE "kallsyms"
#define JITMAP_MAGIC "DCPIJMAP"
#define SYMFILE_VERSION 1
/* Symbol files are read whole; none may be larger. */
#define SYMFILE_MAX_SIZE (256u << 20)

enum symfile_kind {
	SYMFILE_KALLSYMS,   /* "ADDRESS TYPE NAME[\t[MODULE]]" lines, each ending in a newline */
	SYMFILE_JITMAP,     /* "START SIZE NAME" lines as a JIT wrote them (parsed warily) */
};

/* The kind of an epoch file by its name ("kallsyms", "perf-PID.map"), or -1. */
int symfile_kind_for_name(const char *name);

/* The header's count: the text's lines (a last line without a newline counts). */
uint32_t symfile_count_lines(const void *text, size_t len);

/*
 * The payload decoder: count must be the text's lines, and kallsyms lines
 * must be well formed (a JIT's map is the JIT's: only its lines are
 * counted).  0, or -1 with *why set (static).
 */
int symfile_check(enum symfile_kind kind, const void *text, size_t len, uint32_t count,
		  const char **why);

/* Writer: stores text as symbol file `name` of epoch seq, in its container. */
int db_symfile_store(struct db *db, uint32_t seq, const char *name, const void *text,
		     size_t len);

enum {
	DB_SYMFILE_ABSENT = 1,      /* no such file (no message) */
	DB_SYMFILE_UNVERIFIED = 2,  /* plain text of an older dcpi: read, reported as unverified */
};

/*
 * Reads symbol file `name` of epoch seq into out (its text).  Returns 0
 * (verified), DB_SYMFILE_ABSENT, DB_SYMFILE_UNVERIFIED, or -1 if it is
 * damaged or cannot be read (reported and recorded, db/damage.h; out
 * empty).
 */
int db_symfile_load(struct db *db, uint32_t seq, const char *name, struct strbuf *out);

#endif
