/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/check.h - verifies a whole database offline, file by file, and names
 * what is damaged (git fsck's way): dcpidb check.
 *
 * Every file is read whole and validated as its readers would: the text
 * records (current, meta, images) by their checksums and syntax, profiles
 * completely (header, payload checksum, entries, totals, the name they are
 * stored under), blobs by their container (db/blob.h: size, checksums,
 * with any magic) and then by their kind's own decoder when this dcpi
 * knows the kind (the table db_blob_kinds in check.c: one line per kind),
 * binary snapshots by the build-id their name promises.  It also checks
 * what binds files together: an epoch's meta names its own number, every
 * profile's image is in the epoch's image index, the meta's sample counts
 * do not exceed what the profiles hold.
 *
 * Findings have a severity:
 *   error    damage: a reader would refuse the file or mislead (the
 *            database is not sound)
 *   warning  something unexpected that readers ignore or cope with
 *   note     expected leftovers: temp files of a writer that died,
 *            quarantined files, snapshots no epoch uses (dcpidb gc)
 * The checker only reads; it takes no lock (a writer may be running:
 * files it replaces are seen whole, old or new).
 */
#ifndef DCPI_DB_CHECK_H
#define DCPI_DB_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct db;

enum db_check_severity { DB_CHECK_ERROR, DB_CHECK_WARNING, DB_CHECK_NOTE };

const char *db_check_severity_name(enum db_check_severity s);

/* A finding: path is relative to the database ("000003/abc.cycles.prof"). */
typedef void (*db_check_fn)(void *ctx, enum db_check_severity s, const char *path,
			    const char *msg);

enum db_check_flags {
	DB_CHECK_QUICK = (1 << 0),  /* do not read binary snapshots (they can be large) */
};

struct db_check_stats {
	size_t epochs, files;           /* files checked */
	size_t profiles, blobs, records, snapshots, aux;
	size_t findings[3];             /* by severity */
};

/*
 * Checks every file of db, calling fn for each finding (files in a stable
 * order: top-level files, epochs by number, binaries).  Returns 0 if the
 * database is sound (no error), 1 if something is damaged, -1 if the
 * database itself cannot be read (reported).
 */
int db_check(struct db *db, unsigned flags, db_check_fn fn, void *ctx, struct db_check_stats *st);

/*
 * The decoder of cached analyses' payloads (calc/), which lives above the
 * database (analysis/calc-cache.h calc_cache_check_payload): a program
 * that links it sets this before db_check() so that the payloads are
 * checked too; NULL, only their containers are.
 */
extern int (*db_check_calc_payload)(const void *payload, size_t len, unsigned count,
				    const char **why);

/*
 * A kind of blob file the checker knows (docs/db-format.md "Blobs"): its
 * magic, what to call it, which epoch files are of this kind ("watch",
 * "*.values" for a suffix, "stacks-*" for a prefix), the newest payload
 * version it knows, and its decoder's validation (0, or -1 with *why).  A blob of a kind not listed
 * is still verified as a container, and said to be of an unknown kind.
 */
struct db_blob_kind {
	const char *magic;
	const char *what;
	const char *names;
	uint16_t max_version;
	int (*check)(const void *payload, size_t len, uint32_t count, uint16_t flags,
		     const char **why);
};

/* The known kinds, ending with a NULL magic. */
extern const struct db_blob_kind db_blob_kinds[];

/* The kind a file name is of, or NULL. */
const struct db_blob_kind *db_blob_kind_for_name(const char *name);
/* The kind with this magic, or NULL. */
const struct db_blob_kind *db_blob_kind_for_magic(const char *magic);

#endif
