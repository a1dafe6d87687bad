/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db-bench - size and speed of the profile database.
 *
 *   db-bench [DIR]
 *
 * For 10^3 .. 10^7 distinct offsets, builds a profile shaped like a real
 * one (offsets mostly a few bytes apart in hot regions with jumps between
 * them; counts heavy-tailed) and reports:
 *   bytes/offset   size of the profile file over the number of offsets
 *   encode, decode offsets/s for the pure codec
 *   merge          offsets/s of db_profile_merge() (read + add + atomic,
 *                  fsynced write) adding an equally large profile that
 *                  overlaps the stored one by half
 */
#include "config.h"
#include "core/cli.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/timeutil.h"
#include "core/xalloc.h"
#include "db/db.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Instruction-like gaps (1-8 bytes), with a jump to a new region now and then. */
static void make(struct profile *p, size_t n, uint64_t start)
{
	uint64_t off = start;

	profile_init(p);
	for (size_t i = 0; i < n; i++) {
		off += next() % 64 == 0 ? 64 + next() % 4096 : 1 + next() % 8;
		/* Heavy tail: most counts 1-3, a few in the thousands. */
		profile_add(p, off, 1 + (uint64_t)floor(pow(2.0, (double)(next() % 1200) / 100.0)) % 5000);
	}
}

static double secs(int64_t t0)
{
	return (double)(time_monotonic_ns() - t0) / 1e9;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "db-bench.db";
	struct db *db;
	struct epoch_meta m;
	char *rm;

	cli_init(argc, argv);
	rm = xasprintf("rm -rf '%s'", dir);
	if (system(rm))
		die("cannot clean '%s'", dir);
	db = db_open(dir, DB_CREATE);
	if (!db)
		return 1;
	epoch_meta_init(&m);
	if (db_epoch_create(db, &m))
		return 1;
	printf("%10s %12s %14s %14s %14s\n", "offsets", "bytes/offset", "encode/s", "decode/s",
	       "merge/s");
	for (size_t n = 1000; n <= 10000000; n *= 10) {
		struct profile a, b, c = PROFILE_INIT;
		struct profile_header h;
		struct strbuf sb = STRBUF_INIT;
		struct db_profile_id id;
		const char *why;
		int64_t t0;
		double enc, dec, mrg;
		int reps = n <= 100000 ? 10 : 1;

		make(&a, n, 0);
		make(&b, n, n * 2); /* overlaps a's range partly */
		memset(&h, 0, sizeof(h));
		strcpy(h.key, "bench");
		t0 = time_monotonic_ns();
		for (int r = 0; r < reps; r++) {
			strbuf_reset(&sb);
			profile_encode(&a, &h, &sb);
		}
		enc = (double)n * reps / secs(t0);
		t0 = time_monotonic_ns();
		for (int r = 0; r < reps; r++)
			if (profile_decode(sb.buf, sb.len, &h, &c, &why))
				die("decode: %s", why);
		dec = (double)n * reps / secs(t0);
		db_profile_id_set(&id, "bench", EVENT_CYCLES, false, (uint32_t)n);
		snprintf(id.key, sizeof(id.key), "bench%zu", n);
		if (db_profile_store(db, m.seq, &id, &a))
			return 1;
		t0 = time_monotonic_ns();
		if (db_profile_merge(db, m.seq, &id, &b))
			return 1;
		mrg = (double)(2 * n) / secs(t0);
		printf("%10zu %12.2f %14.3g %14.3g %14.3g\n", n, (double)sb.len / (double)n, enc, dec,
		       mrg);
		fflush(stdout);
		profile_release(&a);
		profile_release(&b);
		profile_release(&c);
		strbuf_release(&sb);
	}
	epoch_meta_release(&m);
	db_close(db);
	if (system(rm))
		return 1;
	free(rm);
	return 0;
}
