/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tui/view-help.c - every key and command, generated from the request
 * table (tui/request.h) that also makes the key bindings and the prompt's
 * commands, followed by what each view's columns and marks mean.
 */
#include "config.h"
#include "tui/view.h"

#include "core/strbuf.h"
#include "core/xalloc.h"
#include "tui/tui.h"
#include "tui/views.h"

#include <stdlib.h>
#include <string.h>

enum help_kind { HELP_SECTION, HELP_ENTRY, HELP_TEXT, HELP_BLANK };

struct help_line {
	enum help_kind kind;
	char *keys, *command, *text;
};

struct help_view {
	struct help_line *lines;
	size_t n, alloc;
	const char *group;     /* while building: the last group added */
};

#define HV(v) ((struct help_view *)(v)->priv)

static void add_line(struct help_view *hv, enum help_kind kind, char *keys, char *command,
		     char *text)
{
	ALLOC_GROW(hv->lines, hv->n + 1, hv->alloc);
	hv->lines[hv->n++] = (struct help_line){ kind, keys, command, text };
}

static const char *arg_placeholder(enum arg_kind kind)
{
	static const char *const names[] = {
		[ARG_NONE] = "", [ARG_TEXT] = " TEXT", [ARG_OPT_TEXT] = " [TEXT]",
		[ARG_EPOCH] = " E", [ARG_EPOCH_PAIR] = " [A B]", [ARG_EVENT] = " NAME",
		[ARG_COLUMN] = " COLUMN", [ARG_GOTO] = " WHAT", [ARG_FILE] = " FILE",
		[ARG_SIZE] = " COLS LINES", [ARG_NORM] = " [MODE]",
	};

	return names[kind];
}

static void add_request(const struct request_info *info, void *data)
{
	struct help_view *hv = data;
	struct strbuf keys = STRBUF_INIT;

	if (!hv->group || strcmp(hv->group, info->group)) {
		if (hv->n)
			add_line(hv, HELP_BLANK, NULL, NULL, NULL);
		add_line(hv, HELP_SECTION, NULL, NULL, xstrdup(info->group));
		hv->group = info->group;
	}
	request_key_names(info->req, &keys);
	add_line(hv, HELP_ENTRY, strbuf_detach(&keys, NULL),
		 xasprintf(":%s%s", info->name, arg_placeholder(info->arg)), xstrdup(info->help));
}

static void add_text(struct help_view *hv, const char *text)
{
	while (*text) {
		size_t n = strcspn(text, "\n");

		add_line(hv, HELP_TEXT, NULL, NULL, xstrndup(text, n));
		text += n + (text[n] == '\n');
	}
}

static void add_legends(struct help_view *hv)
{
	static const struct view_ops *const views[] = {
#define VIEW_OPS_(X, name, opener, command, keys, help) &name##_view_ops,
		VIEW_INFO(VIEW_OPS_, )
#undef VIEW_OPS_
	};

	for (size_t i = 0; i < ARRAY_SIZE(views); i++) {
		const struct view_ops *ops = views[i];

		if (!ops->legend)
			continue;
		add_line(hv, HELP_BLANK, NULL, NULL, NULL);
		add_line(hv, HELP_SECTION, NULL, NULL, xasprintf("The %s view", ops->name));
		add_text(hv, ops->legend);
		if (ops->legend_more) {
			struct strbuf sb = STRBUF_INIT;

			ops->legend_more(&sb);
			add_text(hv, sb.buf);
			strbuf_release(&sb);
		}
	}
}

static int help_open(struct view *v)
{
	struct help_view *hv = HV(v);

	add_text(hv, "dcpi-tui: keys, and the commands to type after ':' (Tab completes them).");
	request_foreach(add_request, hv);
	add_legends(hv);
	view_set_lines(v, hv->n);
	return 0;
}

static void help_close(struct view *v)
{
	struct help_view *hv = HV(v);

	for (size_t i = 0; i < hv->n; i++) {
		free(hv->lines[i].keys);
		free(hv->lines[i].command);
		free(hv->lines[i].text);
	}
	free(hv->lines);
}

static void help_draw(struct view *v, size_t line, struct draw *d)
{
	const struct help_line *l = &HV(v)->lines[line];

	switch (l->kind) {
	case HELP_SECTION:
		draw_text(d, STYLE_SECTION, l->text);
		break;
	case HELP_ENTRY:
		draw_space(d, STYLE_NORMAL, 2);
		draw_field(d, STYLE_KEY, l->keys, 18, ALIGN_LEFT);
		draw_space(d, STYLE_NORMAL, 1);
		draw_field(d, STYLE_NORMAL, l->command, 22, ALIGN_LEFT);
		draw_space(d, STYLE_NORMAL, 1);
		draw_text(d, STYLE_NORMAL, l->text);
		break;
	case HELP_TEXT:
		draw_space(d, STYLE_NORMAL, 2);
		draw_text(d, STYLE_NORMAL, l->text);
		break;
	case HELP_BLANK:
		break;
	}
}

static void help_title(struct view *v, struct strbuf *sb)
{
	strbuf_addstr(sb, "keys and commands (q goes back)");
}

const struct view_ops help_view_ops = {
	.name = "help",
	.priv_size = sizeof(struct help_view),
	.open = help_open,
	.close = help_close,
	.draw = help_draw,
	.title = help_title,
};
