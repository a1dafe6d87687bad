/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/tui.h - what views see of a dcpi-tui session (its state is
 * tui/tui-int.h, its loop tui/session.h).
 *
 * Views use the functions below to reach the session: to open other views
 * (tui_push, tui_open_view, tui_show_view), to change the session's epoch
 * or event, and to say things in the status line (tui_info; errors go
 * through errorf() like everywhere in dcpi and end up in the status line
 * and the messages view, because the session installs a report routine:
 * nothing a view reports ever kills the UI).  Data comes from data sources
 * through v->src (tui/source.h: source_load()), one per kind of data.
 * Nothing here calls back into the views but their ops.
 */
#ifndef DCPI_TUI_TUI_H
#define DCPI_TUI_TUI_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/die.h"
#include "tui/job.h"
#include "tui/request.h"
#include "tui/view.h"

struct strbuf;
struct tui;

/* ---- for views -------------------------------------------------------- */

/* The view on top of the stack, or NULL. */
struct view *tui_view(struct tui *t);

/* Opens a view of ops at loc on top of the stack; -1 if it cannot open. */
int tui_push(struct tui *t, const struct view_ops *ops, const struct view_loc *loc);

/*
 * Opens the view called name ("procedures", "diff", ...: tui/views.h) at
 * loc.  An unknown name is reported in the status line ("the NAME view is
 * not available") and -1 returned.
 */
int tui_open_view(struct tui *t, const char *name, const struct view_loc *loc);

/*
 * Shows the view called name: back to it if it is on the stack, else
 * opened on top at the current epoch.
 */
int tui_show_view(struct tui *t, const char *name);

/* The registered view called name, or NULL. */
const struct view_ops *tui_view_ops(const char *name);

/* Uses (or stops using) binaries that changed since profiling: every view reloads. */
void tui_set_force(struct tui *t, bool force);
/* Normalises diffs by period (else by total samples, dcpidiff -N): every view reloads. */
void tui_set_norm_period(struct tui *t, bool period);

/*
 * Opens the procedure view of spec (a name or 0xADDRESS) in image (a key,
 * or NULL: any image of the epoch).
 */
int tui_open_procedure(struct tui *t, uint32_t seq, const char *image, const char *spec);

/* Makes seq the current epoch: views that follow the epoch reload. */
void tui_set_epoch(struct tui *t, uint32_t seq);
/* Makes ev the current event: every view reloads. */
void tui_set_event(struct tui *t, int ev);
/*
 * Makes sure the current event is one that events (of the data a view is
 * about to show) has: else picks the default (cycles, clock, ...), saying so
 * if the user had chosen the missing one.
 */
void tui_default_event(struct tui *t, const bool events[]);

/* Appends "3" or "3 'label'" for epoch seq. */
void tui_epoch_name(struct tui *t, uint32_t seq, struct strbuf *sb);

/* Marks or unmarks epoch seq for a diff (A is the older mark). */
void tui_toggle_mark(struct tui *t, uint32_t seq);
/* 'A', 'B' or 0. */
char tui_mark_of(const struct tui *t, uint32_t seq);

/* A status-line note (not an error); errors use errorf(). */
void tui_info(struct tui *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The draw flags for this session (DRAW_ASCII or 0). */
unsigned tui_draw_flags(const struct tui *t);

/* Whether the session has a database open (views say "(no database)" if not). */
bool tui_has_db(const struct tui *t);
/* The current epoch (0: none) and event (-1: not known yet). */
uint32_t tui_epoch(const struct tui *t);
int tui_event(const struct tui *t);
/* The epoch marked A (k 0) or B (k 1) for a diff, 0: none. */
uint32_t tui_mark(const struct tui *t, int k);

struct tui_message {
	enum report_level level;
	char *text;
};
/* The warnings and errors of the session (*n), and how many were not kept. */
const struct tui_message *tui_messages(const struct tui *t, size_t *n, size_t *dropped);

#endif
