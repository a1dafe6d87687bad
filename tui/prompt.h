/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/prompt.h - the ':' and '/' prompt: GNU readline inside ncurses.
 *
 * Readline runs through its callback interface and never touches the
 * terminal itself: it reads bytes through our getc function (the keyboard,
 * or the script in headless runs, so scripts drive the prompt too: editing,
 * history, completion), and redisplays through the display, which draws the
 * prompt line and the completion list.  (tig's src/prompt.c routes input
 * the same way.)
 *
 * Keys: the usual readline (emacs) editing keys and history (Up, Down,
 * C-r); Tab completes command names and then each command's argument
 * (epochs, events, columns, images, file names); Enter runs; Escape, C-g,
 * C-c, or Backspace on an empty line cancel.
 *
 * History is kept across runs in $XDG_STATE_HOME/dcpi/tui_history (else
 * ~/.local/state/dcpi/tui_history), searches apart in tui_search_history,
 * at most 500 lines each, files mode 0600 in a directory created 0700.
 */
#ifndef DCPI_TUI_PROMPT_H
#define DCPI_TUI_PROMPT_H

#include "tui/request.h"

struct candidates;
struct tui;

/* What the prompt asks of the session it runs in. */
struct prompt_hooks {
	/* Runs a command line of a script while the prompt is open (to dump it). */
	void (*command)(struct tui *t, const char *line);
	/* Adds the completion candidates of an argument of kind. */
	void (*complete)(struct tui *t, enum arg_kind kind, struct candidates *c);
};

/* Sets readline up and loads the history. */
void prompt_init(struct tui *t, const struct prompt_hooks *hooks);
/* Trims the history file. */
void prompt_release(struct tui *t);

/*
 * Reads a line at the status line after prompt (":" or "/"), starting with
 * initial (may be NULL).  Returns the line (caller frees) or NULL if the
 * prompt was cancelled or the script ended.
 */
char *prompt_read(struct tui *t, const char *prompt, const char *initial);

#endif
