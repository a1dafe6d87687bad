/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/command.h - what keys and commands do in a session: a key or a
 * command line becomes a request (tui/request.h), which the current view
 * handles first (its request op), then the generic view code (tui/view.h:
 * moves, sort, filter, goto), then the session: the views of VIEW_INFO
 * (tui/views.h) opened by their requests, epochs, events, search, the
 * prompt, dumps, reload.
 */
#ifndef DCPI_TUI_COMMAND_H
#define DCPI_TUI_COMMAND_H

#include <stdbool.h>

#include "tui/request.h"

struct candidates;
struct tui;

/* Handles one key (a resize lays the screen out again). */
void tui_key(struct tui *t, int key);
/* Runs a command line ("sort cycles"), as typed after ':'. */
void tui_command(struct tui *t, const char *line);
/*
 * Runs request req with arg (NULL: none).  from_key: invoked by a key, so a
 * missing argument opens the prompt instead of being an error.
 */
void tui_request(struct tui *t, enum request req, const char *arg, bool from_key);
/* Completion candidates for arg kind (the prompt's hook). */
void tui_complete(struct tui *t, enum arg_kind kind, struct candidates *c);

#endif
