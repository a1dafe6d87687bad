/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/script.h - scripted input for headless runs and tests (tig's
 * TIG_SCRIPT): a file of keys and commands that replaces the keyboard.
 *
 * One item per line:
 *   # a comment, and blank lines, are ignored
 *   :COMMAND ARGS       a command, run as if typed at the ':' prompt
 *                       (:save-display FILE, :save-view FILE, :resize C L,
 *                       any request name); also inside an open prompt
 *   KEYS                keys in the syntax of key_parse() (tui/request.h):
 *                       "jjj<Enter>", "<:>sort path<Enter>", "/lib<Enter>"
 * To type ':' as a key at the start of a line, write <:>.  An <Esc> at the
 * end of a line is a lone Escape (it cancels an open prompt); elsewhere it
 * starts an escape sequence as a terminal would send it.
 *
 * The session waits for background jobs to finish before each item, so a
 * script's screens do not depend on timing.  At the end of the script the
 * session quits.
 */
#ifndef DCPI_TUI_SCRIPT_H
#define DCPI_TUI_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>

enum script_kind { SCRIPT_KEY, SCRIPT_COMMAND };

struct script_item {
	enum script_kind kind;
	int key;          /* SCRIPT_KEY */
	bool line_end;    /* SCRIPT_KEY: the last key of its line */
	char *command;    /* SCRIPT_COMMAND: without the ':' */
	int lineno;
};

struct script {
	char *path;
	struct script_item *v;
	size_t n, alloc, next;
};

/* Parses a script file; -1 (reported with the line number) if it is malformed. */
int script_load(struct script *s, const char *path);
/* Parses script text (for tests); name is used in messages. */
int script_parse(struct script *s, const char *name, const char *text, size_t len);
void script_release(struct script *s);

/* The next item, or NULL at the end. */
const struct script_item *script_next(struct script *s);

#endif
