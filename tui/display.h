/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/display.h - the only part of dcpi-tui (with tui/prompt.c) that talks
 * to curses: the screen layout, the curses backend of the drawing layer,
 * keyboard input, resizing and screen dumps.
 *
 * Layout, top to bottom:
 *   the top bar     dcpi-tui, the database, epoch and event, the view path
 *   the view        its header line (tables: column titles) and its lines
 *   the title bar   [view] what it shows, position, background work
 *   the status line messages, or the prompt while it is open
 *
 * Headless mode (scripts and tests, tig's approach): ncurses draws into
 * /dev/null through newterm() with the terminal type of $TERM and the size
 * of $LINES x $COLUMNS, and :save-display reads the screen back from
 * ncurses (curscr), so a dump shows exactly what a terminal would.
 */
#ifndef DCPI_TUI_DISPLAY_H
#define DCPI_TUI_DISPLAY_H

#include <stdbool.h>
#include <stddef.h>

struct draw;
struct tui;

/*
 * Sets up the terminal (or /dev/null when headless), and t->ascii: whether
 * it can show UTF-8 (locale, --ascii); -1 (reported) if it cannot.
 */
int display_open(struct tui *t);
/* Restores the terminal. */
void display_close(struct tui *t);
/* Restores the terminal on a fatal error (safe to call at any time). */
void display_emergency(void);

/* Draws everything from the session state and updates the screen. */
void display_redraw(struct tui *t);
/* Forgets what the terminal shows, so the next redraw repaints all (C-l). */
void display_clear(struct tui *t);
/* Lays the screen out again after a size change. */
void display_layout(struct tui *t);
/* Headless: pretends the terminal is now cols x lines. */
int display_set_size(struct tui *t, int cols, int lines);

/*
 * Waits until a key may be there, fd (-1: none) is readable, or timeout_ms
 * pass (-1: no limit).  Keys ncurses holds already count as there.
 */
void display_wait(struct tui *t, int fd, int timeout_ms);
/* A key for the views (keypad on): ERR after timeout_ms (-1: wait). */
int display_getkey(struct tui *t, int timeout_ms);
/* A byte for the prompt (keypad off, readline parses sequences). */
int display_getbyte(struct tui *t, int timeout_ms);

/*
 * Writes the screen to path, one line per row, trailing blanks trimmed.
 * attrs: then "--" and, per row with any, the runs of styled cells
 * ("ROW: FROM-TO style+attrs").
 */
int display_save(struct tui *t, const char *path, bool attrs);

#endif
