/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/data-watch.h - what the stopwatch view shows: an epoch's stopwatch
 * results (db/watch.h, written by dcpiwatch), per function and per thread.
 *
 * The source is watch_source (tui/source.h, data_watch()); its key is
 * "watch/SEQ".  A result with no results in the epoch has status 1.
 */
#ifndef DCPI_TUI_DATA_WATCH_H
#define DCPI_TUI_DATA_WATCH_H

#include <stdint.h>

#include "db/watch.h"
#include "tui/source.h"

struct watch_data {
	int status;                 /* 0; 1: the epoch has none; -1: unreadable (reported) */
	uint32_t seq;
	struct watch_set functions; /* combined per function, sorted */
	struct watch_set threads;   /* per thread, sorted (so by function, then thread) */
};

extern const struct tui_source watch_source;

/* The results of epoch seq, or NULL while they load (waiter is reloaded then). */
const struct watch_data *data_watch(struct sources *s, uint32_t seq, struct view *waiter);

#endif
