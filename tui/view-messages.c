/*
 * tui/view-messages.c - every warning and error of the session, oldest
 * first (the status line shows only the first of a burst).
 */
#include "config.h"
#include "tui/view.h"

#include "core/strbuf.h"
#include "tui/tui.h"


static void messages_reload(struct view *v)
{
	view_set_lines(v, v->tui->n_msgs);
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
	const struct tui_message *m = &v->tui->msgs[line];

	if (m->level == REPORT_WARNING)
		draw_text(d, STYLE_WARNING, "warning: ");
	else
		draw_text(d, STYLE_ERROR, "error: ");
	draw_text(d, STYLE_NORMAL, m->text);
}

static void messages_title(struct view *v, struct strbuf *sb)
{
	strbuf_addf(sb, "%zu messages this session", v->tui->n_msgs);
	if (v->tui->msgs_dropped)
		strbuf_addf(sb, " (and %zu more not kept)", v->tui->msgs_dropped);
}

const struct view_ops messages_view_ops = {
	.name = "messages",
	.open = messages_open,
	.reload = messages_reload,
	.draw = messages_draw,
	.title = messages_title,
};
