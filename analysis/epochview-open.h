/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/epochview-open.h - the images of an epoch view opened and
 * their procedures read on the engine's threads (core/workpool.h): the
 * slow part of every report over every image (10,000 binaries on a
 * server), which procprof_build() and the lookups would otherwise do one
 * image after another when they first look.  What an image reports is
 * said in the order of the images, as one thread would have said it.
 *
 *   epoch_view_open_images(&v, NULL);       // every image with samples
 *   procprof_build(&pp, &v, &o);            // finds them open
 *
 * In a task, it says how far it got (workpool_progress()), stops when the
 * task is cancelled, and gives way to more urgent tasks between images.
 */
#ifndef DCPI_CORE_ANALYSIS_EPOCHVIEW_OPEN_H
#define DCPI_CORE_ANALYSIS_EPOCHVIEW_OPEN_H

#include "analysis/epochview.h"

/* True if image i of v has samples (of any event) and matches image (NULL: any). */
bool epoch_view_image_sampled(const struct epoch_view *v, size_t i, const char *image);

/*
 * Opens the images of v with samples (of any event) that match image (a
 * path, a file name or a key: epoch_view_image_matches(); NULL: every
 * one), and reads their procedures.  Returns 0, or -1 if the task it runs
 * in was cancelled first.
 */
int epoch_view_open_images(struct epoch_view *v, const char *image);

#endif
