/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/epochview.h - one epoch of a profile database opened for
 * reports: its metadata, its images with their sample totals, and, on
 * demand, each image's disasm/image.h view and its profiles.
 *
 * This is the common ground of every report: dcpiprof and dcpilist (and
 * dcpicalc, dcpidiff, dcpi-tui) open an epoch view, then build rows from it
 * (procprof.h, listing.h), so they all see the same images, names and
 * numbers.
 *
 *   struct epoch_view v;
 *   if (epoch_view_open(&v, db, "latest", NULL))
 *           return -1;                      // reported
 *   for (size_t i = 0; i < v.n_images; i++)
 *           ... v.images[i].rec->path, v.images[i].samples[EVENT_CYCLES] ...
 *   struct image *img = epoch_view_image(&v, i);          // opened now
 *   const struct profile *p = epoch_view_profile(&v, i, EVENT_CYCLES);
 *   epoch_view_release(&v);
 *
 * Profiles are all read and validated when the view opens, so a damaged
 * one is reported at once, by name, whatever the report then looks at; it
 * is treated as empty and the rest goes on.  The view keeps their files'
 * bytes (a few bytes per sampled instruction) and decodes a profile when
 * it is asked for (16 bytes a sample), until epoch_view_profile_forget();
 * a pass over every image decodes each into a buffer of its own instead
 * (epoch_view_profile_pass()), so that 10,000 images' profiles are not
 * all kept decoded.  What was lost is kept as data
 * (db/damage.h): epoch_view_partial() says whether the reports of the view
 * are made from partial data, epoch_view_image_damage() which image's
 * files were damaged or missing, and unread[] how many samples the epoch
 * recorded that no readable profile holds.  A damaged or missing image
 * index does not stop the view: the images its profiles name get records
 * of their own (path "[not in the image index]"), so the samples are still
 * counted, and named where a snapshot of the binary is kept.  The report
 * tools print what they can, then say what was missing (analysis/
 * incomplete.h) and exit 2 (docs/dcpi.7).
 * Images (binaries, symbols) are opened lazily and kept until release.
 */
#ifndef DCPI_CORE_ANALYSIS_EPOCHVIEW_H
#define DCPI_CORE_ANALYSIS_EPOCHVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/event.h"
#include "db/bursts.h"
#include "db/damage.h"
#include "db/db.h"
#include "db/paths.h"
#include "db/values.h"
#include "disasm/image.h"

struct pathscale;

struct epoch_view_opts {
	bool force;             /* use binaries that changed since they were profiled */
	const char *debug_dir;  /* where debug files are (NULL: default, see image.h) */
};

struct ev_image {
	const struct db_image *rec;      /* the image record (in the view's index) */
	uint64_t samples[EVENT__COUNT];  /* all samples of this image, per event (readable) */
	uint64_t unread[EVENT__COUNT];   /* samples its damaged profiles say they held (a sound header) */
	/* private: use the accessors */
	struct image *img;
	struct profile prof[EVENT__COUNT];
	unsigned char prof_state[EVENT__COUNT];
	char *raw[EVENT__COUNT];         /* the profile's file, validated (decoded into prof on demand) */
	uint32_t raw_len[EVENT__COUNT];
	struct values_profile vals;
	unsigned char vals_state;
	struct paths_profile paths;
	unsigned char paths_state;
	struct pathscale *pscale;        /* pathscale_of()'s, freed by pscale_free */
	enum dcpi_event pscale_ev;
	void (*pscale_free)(struct pathscale *);
	bool warned;
};

struct epoch_view {
	struct db *db;
	uint32_t seq;
	struct epoch_meta meta;
	bool meta_ok;
	struct image_index index;
	struct ev_image *images;         /* one per image of the index, in index order (by key) */
	size_t n_images;
	/* the events of the epoch in the order its metadata lists them, then
	 * any other event with samples; only events with samples */
	enum dcpi_event events[EVENT__COUNT];
	size_t n_events;
	uint64_t totals[EVENT__COUNT];   /* samples of all images, per event (readable profiles) */
	/*
	 * Samples the epoch recorded that no readable profile holds: what its
	 * meta counts beyond totals[], or at least what damaged profiles'
	 * headers say they held.  Not 0 only when a file is damaged or missing.
	 */
	uint64_t unread[EVENT__COUNT];
	struct epoch_view_opts opts;
	struct burst_set bursts;         /* private: epoch_view_bursts() */
	unsigned char bursts_state;
};

/*
 * Opens the epoch named by epoch (a number, label, "latest", "latest~N";
 * NULL for latest) of db, which stays owned by the caller.  Returns 0, or
 * -1 after reporting (no such epoch, unreadable image index).
 */
int epoch_view_open(struct epoch_view *v, struct db *db, const char *epoch,
		    const struct epoch_view_opts *opts);
void epoch_view_release(struct epoch_view *v);

/*
 * True if a file of the view's epoch was found damaged or missing (now or
 * by a later load: values, bursts, kallsyms...): a report made from the
 * view is made from partial data.
 */
bool epoch_view_partial(const struct epoch_view *v);

/*
 * The worst record (db/damage.h: damaged, missing, unverified) of the
 * files of image i (its profiles, value profile, kallsyms or JIT map), or
 * NULL if every one read so far was sound: dcpi-tui's status of the row,
 * ->why what went wrong.  Valid until the database is closed.
 */
const struct db_damage *epoch_view_image_damage(const struct epoch_view *v, size_t i);

/* The disasm view of image i, opened on first use (never NULL). */
struct image *epoch_view_image(struct epoch_view *v, size_t i);

/*
 * The profile of image i for ev (all processes); empty if there is none or
 * it is unreadable (reported when the view opened).  Decoded now and kept
 * until release.
 */
const struct profile *epoch_view_profile(struct epoch_view *v, size_t i, enum dcpi_event ev);
/*
 * Lets go of image i's profiles decoded by epoch_view_profile() (decoded
 * again from their files' bytes when asked for): for a caller that is
 * done with the image, no pointer to them kept.
 */
void epoch_view_profile_forget(struct epoch_view *v, size_t i);
/*
 * The same for a pass over every image: the view's if it keeps it decoded,
 * else decoded into scratch (replaced: one buffer for the whole pass,
 * profile_release() after it), valid until scratch is used again.
 */
const struct profile *epoch_view_profile_pass(struct epoch_view *v, size_t i, enum dcpi_event ev,
					      struct profile *scratch);

/*
 * The value profile of image i (db/values.h; --values), read on first use:
 * empty if the epoch has none for it or it is unreadable (reported then,
 * once).
 */
const struct values_profile *epoch_view_values(struct epoch_view *v, size_t i);

/*
 * The epoch's burst traces (db/bursts.h; dcpirun --bursts), read on first
 * use: empty if there are none or they are unreadable (reported, once).
 */
const struct burst_set *epoch_view_bursts(struct epoch_view *v);

/*
 * The path profile of image i (db/paths.h; emulated bursts), read on first
 * use: empty if the epoch has none for it or it is unreadable (reported
 * then, once).  An epoch without path profiles whose bursts were single
 * steps (--bursts=step) gets one made from its raw traces
 * (tracepaths.h).
 */
const struct paths_profile *epoch_view_paths(struct epoch_view *v, size_t i);

/* The epoch's totals of emulated bursts and windows (zeros without). */
void epoch_view_paths_summary(const struct epoch_view *v, struct paths_summary *s);

/*
 * True if image i is what spec names: its path, its path's last component,
 * or its key.
 */
bool epoch_view_image_matches(const struct epoch_view *v, size_t i, const char *spec);

/* The display name of an event column: "cycles", or "cycles(clock)" when clock stood in. */
const char *epoch_view_event_label(const struct epoch_view *v, enum dcpi_event ev, char *buf,
				   size_t size);

/*
 * Warns once per image about why it cannot be named or shown
 * ("warning: /usr/bin/x: cannot open ...").  Report layers call it when
 * they fall back to image-level rows.
 */
void epoch_view_warn_image(struct epoch_view *v, size_t i);

#endif
