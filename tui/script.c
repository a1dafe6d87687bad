/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "tui/script.h"

#include "core/die.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "tui/request.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct script_item *add_item(struct script *s, enum script_kind kind, int lineno)
{
	struct script_item *it;

	ALLOC_GROW(s->v, s->n + 1, s->alloc);
	it = &s->v[s->n++];
	memset(it, 0, sizeof(*it));
	it->kind = kind;
	it->lineno = lineno;
	return it;
}

static int parse_keys(struct script *s, const char *name, const char *p, int lineno)
{
	size_t first = s->n;

	while (*p) {
		const char *why;
		int key = key_parse(&p, &why);

		if (key < 0)
			return errorf("%s:%d: %s near '%.12s'", name, lineno, why, p);
		add_item(s, SCRIPT_KEY, lineno)->key = key;
	}
	if (s->n > first)
		s->v[s->n - 1].line_end = true;
	return 0;
}

static int parse_line(struct script *s, const char *name, char *line, int lineno)
{
	size_t len = strlen(line);

	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		line[--len] = '\0';
	if (!len || line[0] == '#')
		return 0;
	if (line[0] == ':') {
		struct strbuf sb = STRBUF_INIT;

		strbuf_addstr(&sb, line + 1);
		strbuf_rtrim(&sb);
		add_item(s, SCRIPT_COMMAND, lineno)->command = strbuf_detach(&sb, NULL);
		return 0;
	}
	return parse_keys(s, name, line, lineno);
}

int script_parse(struct script *s, const char *name, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	int lineno = 0;

	memset(s, 0, sizeof(*s));
	s->path = xstrdup(name);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *line = xstrndup(p, l);
		int r;

		if (memchr(p, '\0', l)) {
			free(line);
			return errorf("%s:%d: NUL byte in script", name, lineno + 1);
		}
		r = parse_line(s, name, line, ++lineno);
		free(line);
		if (r)
			return -1;
		p += l + 1;
	}
	return 0;
}

int script_load(struct script *s, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	FILE *f = fopen(path, "r");
	char buf[4096];
	size_t n;
	int r;

	memset(s, 0, sizeof(*s));
	if (!f)
		return errorf_errno("cannot open script '%s'", path);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, n);
	if (ferror(f)) {
		fclose(f);
		strbuf_release(&sb);
		return errorf_errno("cannot read script '%s'", path);
	}
	fclose(f);
	r = script_parse(s, path, sb.buf, sb.len);
	strbuf_release(&sb);
	return r;
}

void script_release(struct script *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].command);
	free(s->v);
	free(s->path);
	memset(s, 0, sizeof(*s));
}

const struct script_item *script_next(struct script *s)
{
	return s->next < s->n ? &s->v[s->next++] : NULL;
}
