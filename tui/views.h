/*
 * tui/views.h - the registry of views.  A new view is a file
 * tui/view-NAME.c ending with `const struct view_ops NAME_view_ops = {...};`,
 * a line here, and a line in tui/Makemodule.am; tui_open_view("NAME", loc)
 * then finds it (until then it says the view is not available yet).
 *
 * Still to come, on top of core/analysis: procedures (of one image or all),
 * procedure (annotated blocks with bubbles), diff, diff-procedure.
 */
#ifndef DCPI_TUI_VIEWS_H
#define DCPI_TUI_VIEWS_H

#include "tui/view.h"

#define VIEW_INFO(_) \
	_(epochs)    \
	_(images)    \
	_(help)      \
	_(messages)

#define VIEW_DECLARE_(name) extern const struct view_ops name##_view_ops;
VIEW_INFO(VIEW_DECLARE_)
#undef VIEW_DECLARE_

#endif
