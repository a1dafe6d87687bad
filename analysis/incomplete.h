/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/incomplete.h - the part of every report that says what it was
 * made without: the files its databases' readers found damaged or missing
 * (db/damage.h), and those read unverified.  The report tools draw it
 * after their text report (tools/tool.h does), their JSON carries the same
 * as "incomplete" and "unverified" (db_damage_json()), and their exit
 * status is 2 (docs/dcpi.7); dcpi-tui shows it in its rows.
 *
 *   Incomplete: this report was made without what these files held:
 *     damaged  prof.db/000002/3f1e....cycles.prof: corrupt profile: truncated payload
 *   Unverified: read without a checksum (written by an older dcpi):
 *     prof.db/000002/kallsyms
 */
#ifndef DCPI_ANALYSIS_INCOMPLETE_H
#define DCPI_ANALYSIS_INCOMPLETE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/event.h"
#include "present/draw.h"

struct db;
struct epoch_view;

/*
 * Draws the lines above for the databases dbs[0..n) (NULLs and repeats
 * skipped), after a blank line; nothing if every file was sound.  With a
 * prefix (NULL: none), every line starts with it: "// " makes them
 * comments of a DOT graph.
 * Returns true if a damaged or missing file was listed.
 */
bool incomplete_draw(struct db *const *dbs, size_t n, struct draw *d, const char *prefix);

/*
 * The note a report's totals carry when its epoch is partial:
 * " (partial: 5999 of them in damaged or missing files, in no row)" after
 * a total that counts them (v->totals[ev] + v->unread[ev]), or
 * " (partial: damaged or missing files, see below)" when their count is
 * unknown; "" when the view's epoch is sound.  Written into buf.
 */
const char *incomplete_total_note(const struct epoch_view *v, enum dcpi_event ev, char *buf,
				  size_t size);

#endif
