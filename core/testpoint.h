/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/testpoint.h - named points where a test stops the process, so that a
 * crash test kills it at a known moment instead of guessing a time window
 * (after git's GIT_TEST_* variables and SQLite's test-control hooks).
 *
 *   DCPI_TEST_STOP_AT=NAME[@N][,NAME[@N]...]
 *
 * makes the process raise SIGSTOP the Nth time (1 if not given) it passes
 * the point NAME.  The test waits until the process is stopped (state T in
 * /proc/PID/stat: tests/lib.sh `wait_stopped`) and kills it there with
 * SIGKILL, round after round, with N drawn at random: every kill lands
 * where it was meant to, and a round in which the point is never reached
 * fails (the process exits instead of stopping).
 *
 * The points compile in always.  When the variable is not set (it is read
 * once, at start-up), TEST_POINT costs one predictable branch on a
 * variable and does nothing.  The points (docs/architecture.md, "Testing"):
 *
 *   write-before-rename   a file's temporary copy is written and synced,
 *                         not yet renamed over its name (db/fsio.c)
 *   write-after-rename    renamed, its directory not yet synced
 *   epoch-before-rename   a new epoch's directory is complete under its
 *                         temporary name, not yet renamed (db/db.c)
 *   create-before-rename  a new database's directory, likewise
 *   prune-after-rename    retention moved one more epoch aside (db/upkeep.c)
 *   prune-after-unlink    one more moved epoch is deleted
 *   gc-after-unlink       one more unused binary snapshot is deleted
 *   emulate-stopped       a burst's thread is stopped and its state read, the
 *                         emulating worker not asked yet (collect/emburst.c)
 *   emulate-burst         the emulating worker has a burst to follow, not
 *                         begun (collect/emu-worker.c; in the worker)
 */
#ifndef DCPI_CORE_TESTPOINT_H
#define DCPI_CORE_TESTPOINT_H

#include <stdbool.h>

/* Set at start-up when DCPI_TEST_STOP_AT names at least one point. */
extern bool test_points_armed;

/* Counts a pass through point name; stops the process if it is the one asked for. */
void test_point_reached(const char *name);

#define TEST_POINT(name)                                                                   \
	do {                                                                               \
		if (__builtin_expect(test_points_armed, 0))                                \
			test_point_reached(name);                                          \
	} while (0)

#endif
