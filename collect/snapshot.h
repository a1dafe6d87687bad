/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/snapshot.h - copies of profiled executables in the database
 * (binaries/BUILD-ID), taken by dcpirun at the end of a run; see
 * docs/dcpirun.1 for why they are on by default there and never taken by
 * the daemon.
 */
#ifndef DCPI_COLLECT_SNAPSHOT_H
#define DCPI_COLLECT_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct collector;

/* Snapshots larger than this are skipped by default. */
#define SNAPSHOT_MAX_BYTES ((size_t)256 << 20)

/*
 * Stores a snapshot of every file image with a build-id in the current
 * epoch's index, unless the database has it already, the file is larger
 * than max_bytes, or it no longer carries that build-id.  *stored counts
 * the new snapshots.  Returns -1 if a write failed (reported).
 */
int collector_snapshot(struct collector *c, size_t max_bytes, unsigned *stored);

/* True if data contains the GNU build-id note for id (a byte search). */
bool snapshot_has_build_id(const void *data, size_t len, const uint8_t *id, unsigned id_len);

#endif
