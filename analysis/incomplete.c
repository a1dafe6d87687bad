/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a report was made without (analysis/incomplete.h). */
#include "config.h"

#include "analysis/incomplete.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/epochview.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "db/damage.h"

/* The records of kinds in dbs, each database once. */
static size_t gather(struct db *const *dbs, size_t n, unsigned kinds,
		     const struct db_damage ***out)
{
	size_t total = 0, alloc = 0;

	*out = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct db_damage **v;
		bool seen = !dbs[i];
		size_t m;

		for (size_t j = 0; j < i && !seen; j++)
			seen = dbs[j] == dbs[i];
		if (seen)
			continue;
		m = db_damage_list(dbs[i], 0, kinds, &v);
		ALLOC_GROW(*out, total + m + 1, alloc);
		memcpy(*out + total, v, m * sizeof(*v));
		total += m;
		free(v);
	}
	return total;
}

bool incomplete_draw(struct db *const *dbs, size_t n, struct draw *d, const char *prefix)
{
	const struct db_damage **v;
	size_t m = gather(dbs, n, DB_DAMAGE_PARTIAL, &v);
	bool partial = m > 0;

	if (!prefix)
		prefix = "";
	if (m) {
		if (!*prefix)
			draw_eol(d);
		draw_text(d, STYLE_NORMAL, prefix);
		draw_text(d, STYLE_ERROR, "Incomplete:");
		draw_text(d, STYLE_NORMAL, " this report was made without what these files held:");
		draw_eol(d);
		for (size_t i = 0; i < m; i++) {
			char *path = display_safe(v[i]->path), *why = display_safe(v[i]->why);

			draw_printf(d, STYLE_NORMAL, "%s  %-8s %s: %s", prefix,
				    db_damage_kind_name(v[i]->kind), path, why);
			draw_eol(d);
			free(path);
			free(why);
		}
	}
	free(v);
	m = gather(dbs, n, 1u << DB_UNVERIFIED, &v);
	if (m) {
		if (!partial && !*prefix)
			draw_eol(d);
		draw_text(d, STYLE_NORMAL, prefix);
		draw_text(d, STYLE_WARNING, "Unverified:");
		draw_text(d, STYLE_NORMAL, " read without a checksum (written by an older dcpi):");
		draw_eol(d);
		for (size_t i = 0; i < m; i++) {
			char *path = display_safe(v[i]->path);

			draw_printf(d, STYLE_NORMAL, "%s  %s", prefix, path);
			draw_eol(d);
			free(path);
		}
	}
	free(v);
	return partial;
}

const char *incomplete_total_note(const struct epoch_view *v, enum dcpi_event ev, char *buf,
				  size_t size)
{
	if (v->unread[ev])
		snprintf(buf, size, " (partial: %" PRIu64 " of them in damaged or missing files, "
			 "in no row)", v->unread[ev]);
	else if (epoch_view_partial(v))
		snprintf(buf, size, " (partial: damaged or missing files, see below)");
	else
		snprintf(buf, size, "%s", "");
	return buf;
}
