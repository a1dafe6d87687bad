/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/views.h - the registry of views, and how to add one.
 *
 * Adding a view (say, the callers of a procedure):
 *
 *  1. tui/view-callers.c: its private data, its ops, ending with
 *        const struct view_ops callers_view_ops = { .name = "callers", ... };
 *     (tui/view.h says what each op does; tui/view-images.c is a small
 *     table view, tui/view-help.c a small text view).  It draws through
 *     present/draw.h, never curses; a table view sets v->table
 *     (tui/table.h) and gets sorting, filtering and the header for free.
 *  2. Its data, if no source has it yet: tui/data-callers.c and .h with a
 *     struct tui_source (tui/source.h: the cache key, the job argument, the
 *     run function on the worker thread, built on analysis/), and a typed
 *     accessor the view calls in its reload op (data_callers(t, ..., v)).
 *     What the analysis prints is drawn by analysis/ into a struct draw
 *     (present/draw.h) so that the report tool and the view share it.
 *  3. A line _(callers) in VIEW_INFO below, and the .c files in
 *     tui/Makemodule.am.
 *  4. A way in: a request (tui/request.h: REQ(...) with its key, command
 *     and help text) handled by the view it starts from, which calls
 *     tui_open_view(v->tui, "callers", &loc) with a struct view_loc.
 *  5. A screen test: tests/tui/cases/NAME.script (tests/tui/run.sh) and its
 *     expected screens, and a line in docs/dcpi-tui.1.
 *
 * tui.c and tui.h do not change: the session finds the view by its name,
 * and its data through its source.
 *
 * procedures (of one image or all) and procedure (one procedure's listing
 * and analysis) build on analysis/ (tui/data-proc.h); diff and
 * diff-procedure (the view called diff_procedure here) on its diff engine
 * (tui/data-diff.h).
 */
#ifndef DCPI_TUI_VIEWS_H
#define DCPI_TUI_VIEWS_H

#include "tui/view.h"

#define VIEW_INFO(_) \
	_(epochs)    \
	_(images)    \
	_(procedures) \
	_(procedure) \
	_(diff)      \
	_(diff_procedure) \
	_(callers)   \
	_(help)      \
	_(messages)  \
	_(stopwatch)

#define VIEW_DECLARE_(name) extern const struct view_ops name##_view_ops;
VIEW_INFO(VIEW_DECLARE_)
#undef VIEW_DECLARE_

#endif
