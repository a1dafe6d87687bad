/*
 * tui/views.h - the registry of views.  A new view is a file
 * tui/view-NAME.c ending with `const struct view_ops NAME_view_ops = {...};`,
 * a line here, and a line in tui/Makemodule.am; tui_open_view("NAME", loc)
 * then finds it (until then it says the view is not available yet).
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
	_(help)      \
	_(messages)

#define VIEW_DECLARE_(name) extern const struct view_ops name##_view_ops;
VIEW_INFO(VIEW_DECLARE_)
#undef VIEW_DECLARE_

#endif
