/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/data-callers.h - the call graph of an epoch for dcpi-tui's callers
 * view: the epoch's stacks resolved to procedures (analysis/stackview.h)
 * and gprof's graph of them (analysis/callgraph.h), as dcpicg builds them,
 * so the view and the tool never disagree.
 *
 *   callers_source   "callgraph/SEQ/F/EVENT"   struct callers_data  (data_callers())
 *
 * Built on the worker thread from the epoch view the procedure views share
 * (tui/data-epoch.h: data_epoch_get), whose reference it keeps: the node
 * names point into it.  Read-only once loaded.
 */
#ifndef DCPI_TUI_DATA_CALLERS_H
#define DCPI_TUI_DATA_CALLERS_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/callgraph.h"
#include "tui/source.h"

struct shared_epoch;
struct sources;
struct view;

struct callers_data {
	struct shared_epoch *se;    /* a reference: the epoch view the nodes name */
	int status;                 /* 0; -1: no stacks or unreadable (error says) */
	char *error;                /* terminal-safe */
	enum dcpi_event event;
	struct stack_view sv;
	struct callgraph g;
};

struct callers_req {
	uint32_t seq;
	int event;                  /* the event, -1: the epoch's first */
};

extern const struct tui_source callers_source;

/* The call graph of epoch seq for event (-1: the first), or NULL while it loads. */
const struct callers_data *data_callers(struct sources *s, uint32_t seq, int event,
					struct view *waiter);

/*
 * The node of the procedure at address start of image key (start 0: by
 * name), or UINT32_MAX if it is on no sampled stack.
 */
uint32_t callers_find(const struct callers_data *cd, const char *key, uint64_t start,
		      const char *name);

/* The image key of a node ("" for samples of no image). */
const char *callers_node_key(const struct callers_data *cd, uint32_t node);

#endif
