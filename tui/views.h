/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/views.h - the registry of views, and how to add one.
 *
 * A view is one file and a line of VIEW_INFO below.  Adding one (say, the
 * callers of a procedure):
 *
 *  1. tui/view-callers.c: its private data, its ops, ending with
 *        const struct view_ops callers_view_ops = { .name = "callers", ... };
 *     (tui/view.h says what each op does; tui/view-images.c is a small
 *     table view, tui/view-help.c a small text view).  It draws through
 *     present/draw.h, never curses; a table view sets v->table
 *     (tui/table.h) and gets sorting, filtering and the header for free.
 *  2. Its data, if no source has it yet: a struct tui_source (tui/source.h:
 *     the cache key, the job argument, the run function on the worker
 *     thread, built on analysis/) in the view's file, asked for with
 *     source_load(v->src, ...) in its reload op; or, when other views
 *     want it too, in tui/data-callers.c and .h with a typed accessor
 *     (data_callers(v->src, ..., v)).  What the analysis prints is drawn
 *     by analysis/ into a struct draw (present/draw.h) so that the report
 *     tool and the view share it.
 *  3. A line in VIEW_INFO below, which is also its request: the command
 *     and keys that open it (the key bindings, the prompt's commands, its
 *     completion and the help view come from it), or NONE when other views
 *     open it (tui_open_view(v->tui, "callers", &loc) with a struct
 *     view_loc, from a request such as REQ_CALLERS that they handle);
 *     and the .c file in tui/Makemodule.am.
 *  4. A screen test: tests/tui/cases/NAME.script (tests/tui/run.sh) and its
 *     expected screens, and a line in docs/dcpi-tui.1.
 *
 * Nothing else changes: the session finds the view by its name and opens
 * it by its request, and its data comes through its source.
 *
 * procedures (of one image or all) and procedure (one procedure's listing
 * and analysis) build on analysis/ (tui/data-proc.h); diff and
 * diff-procedure (the view called diff_procedure here) on its diff engine
 * (tui/data-diff.h).
 */
#ifndef DCPI_TUI_VIEWS_H
#define DCPI_TUI_VIEWS_H

struct view_ops;

/* How a view's request opens it. */
enum view_opener {
	VIEW_SHOW,   /* back to it if it is on the stack, else on top */
	VIEW_OPEN,   /* another one on top, at the current epoch */
	VIEW_TOGGLE, /* on top, or closed if it is on top already */
};

/*
 * VIEW_INFO(_, X): a line per view, _(X, name, opener, command, keys, help).
 *   name     its ops are name##_view_ops (the view is called name, with
 *            '-' for '_')
 *   opener   SHOW, OPEN or TOGGLE (enum view_opener), or NONE: no request
 *            of its own
 *   command, keys, help   its request (tui/request.h's REQ: ":command",
 *            the default keys, the help line); "" for NONE
 *   X        passed through to _ (tui/request.h makes its requests with it)
 * The order is that of the help view and of the breadcrumbs' registry.
 */
#define VIEW_INFO(_, X)                                                                   \
	_(X, epochs, SHOW, "view-epochs", "E", "Show the epochs")                           \
	_(X, images, SHOW, "view-images", "I", "Show the images of the current epoch")      \
	_(X, procedures, OPEN, "view-procedures", "P", "Show the procedures of all images") \
	_(X, procedure, NONE, "", "", "")                                                   \
	_(X, diff, NONE, "", "", "")                                                        \
	_(X, diff_procedure, NONE, "", "", "")                                              \
	_(X, callers, NONE, "", "", "")                                                     \
	_(X, help, TOGGLE, "view-help", "? <F1>", "Show this help")                         \
	_(X, messages, TOGGLE, "messages", "M", "Show the messages of this session")         \
	_(X, stopwatch, OPEN, "view-stopwatch", "W", "Show the dcpiwatch results")          \
	_(X, values, OPEN, "view-values", "U", "Show the semi-invariant values")

#define VIEW_DECLARE_(X, name, opener, command, keys, help) \
	extern const struct view_ops name##_view_ops;
VIEW_INFO(VIEW_DECLARE_, )
#undef VIEW_DECLARE_

#endif
