/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/tracepaths.h - a path profile (db/paths.h) made from raw burst
 * traces (db/bursts.h): what single-step bursts (dcpirun --bursts=step)
 * saw, in the form emulated bursts record it, so that the analysis reads
 * one kind of data (pathview.h).
 *
 * Each step is the instruction about to run with the registers before it
 * (decoded here, with the image's decoder), so:
 *  - every step in the image is a block of one instruction run once, and
 *    two consecutive steps an edge (to PATHS_ELSEWHERE when the next step
 *    is in another image);
 *  - what a step's instruction wrote to a general register is that
 *    register in the next step (the written values);
 *  - a load's address comes from its registers, and a store among the
 *    PATHS_CONFLICT_WINDOW steps before it in the same burst and image
 *    that the load overlaps without being inside it (store-to-load
 *    forwarding fails) or that is at the same offset of another 4 KiB page
 *    (4K aliasing) is a conflict (seed 004's vreplay).
 * Traces have no windows, and say nothing about why a burst ended.
 *
 * An epoch of emulated bursts keeps raw traces too (a sample of the
 * detailed part of its bursts, already in its path profiles): only an
 * epoch without path profiles is converted (epoch_view_paths()).
 */
#ifndef DCPI_ANALYSIS_TRACEPATHS_H
#define DCPI_ANALYSIS_TRACEPATHS_H

#include "db/bursts.h"
#include "db/paths.h"
#include "disasm/image.h"

/* Fills out (normalized) from the steps of set in image key (img decodes them). */
void tracepaths_build(const struct burst_set *set, const char *key, struct image *img,
		      struct paths_profile *out);

#endif
