/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/view-messages.c - every warning and error of the session, oldest
 * first (the status line shows only the first of a burst, and only the
 * first line of a message of several lines, such as the candidates of an
 * ambiguous procedure name).
 */
#include "config.h"
#include "tui/view.h"

#include "core/strbuf.h"
#include "tui/tui.h"

#include <string.h>

static size_t msg_lines(const char *text)
{
	size_t n = 1;

	for (const char *p = text; (p = strchr(p, '\n')); p++)
		n++;
	return n;
}

static void messages_reload(struct view *v)
{
	size_t n = 0, n_msgs, dropped;
	const struct tui_message *msgs = tui_messages(v->tui, &n_msgs, &dropped);

	for (size_t i = 0; i < n_msgs; i++)
		n += msg_lines(msgs[i].text);
	view_set_lines(v, n);
}

static int messages_open(struct view *v)
{
	v->empty = "(no messages)";
	messages_reload(v);
	view_move_to(v, v->lines ? v->lines - 1 : 0);
	return 0;
}

static void messages_draw(struct view *v, size_t line, struct draw *d)
{
	const struct tui_message *m = NULL, *msgs;
	const char *s, *nl;
	size_t k = 0, n_msgs, dropped;

	msgs = tui_messages(v->tui, &n_msgs, &dropped);
	for (size_t i = 0; i < n_msgs; i++) {
		size_t n = msg_lines(msgs[i].text);

		if (line < k + n) {
			m = &msgs[i];
			break;
		}
		k += n;
	}
	if (!m)
		return;
	s = m->text;
	for (size_t skip = line - k; skip; skip--)
		s = strchr(s, '\n') + 1;
	if (s != m->text)
		draw_space(d, STYLE_NORMAL, 2);
	else if (m->level == REPORT_WARNING)
		draw_text(d, STYLE_WARNING, "warning: ");
	else
		draw_text(d, STYLE_ERROR, "error: ");
	nl = strchr(s, '\n');
	draw_textn(d, STYLE_NORMAL, s, nl ? (size_t)(nl - s) : strlen(s));
}

static void messages_title(struct view *v, struct strbuf *sb)
{
	size_t n_msgs, dropped;

	tui_messages(v->tui, &n_msgs, &dropped);
	strbuf_addf(sb, "%zu messages this session", n_msgs);
	if (dropped)
		strbuf_addf(sb, " (and %zu more not kept)", dropped);
}

const struct view_ops messages_view_ops = {
	.name = "messages",
	.open = messages_open,
	.reload = messages_reload,
	.draw = messages_draw,
	.title = messages_title,
};
