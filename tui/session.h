/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/session.h - a dcpi-tui session from start to end: the database and
 * the first views opened, the terminal (or a script) read until quit, the
 * timings written.  For dcpi-tui.c; the state is tui/tui-int.h.
 */
#ifndef DCPI_TUI_SESSION_H
#define DCPI_TUI_SESSION_H

#include "tui/tui-int.h"

/* Sets up a session (display, database, first views); -1 if the terminal cannot be used. */
int tui_init(struct tui *t, const struct tui_options *opt);
/* Runs until quit; returns the exit status. */
int tui_run(struct tui *t);
/* Frees the session (also after tui_init() failed). */
void tui_release(struct tui *t);

#endif
