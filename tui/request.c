/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "tui/request.h"

#include "core/die.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#include <curses.h>
#include <string.h>

static const struct request_info requests[] = {
#define REQ_GROUP_(title) /* groups are attached below */
#define REQ_ROW_(id, name, keys, arg, help) { REQ_##id, name, keys, ARG_##arg, help, NULL, NULL, 0 },
#define REQ_ROW_VIEW_(name, opener, command, keys, help) \
	{ REQ_VIEW_##name, command, keys, ARG_NONE, help, NULL, #name, VIEW_##opener },
	REQ_INFO(REQ_GROUP_, REQ_ROW_, REQ_ROW_VIEW_)
#undef REQ_GROUP_
#undef REQ_ROW_
#undef REQ_ROW_VIEW_
};

/*
 * The group of each request: the table flattened into group titles and
 * rows, walked once (a group entry must not produce an array element above).
 */
struct group_mark {
	bool is_group;
	const char *text;
};

static const struct group_mark group_marks[] = {
#define REQ_GROUP_(title) { true, title },
#define REQ_ROW_(id, name, keys, arg, help) { false, name },
#define REQ_ROW_VIEW_(name, opener, command, keys, help) { false, command },
	REQ_INFO(REQ_GROUP_, REQ_ROW_, REQ_ROW_VIEW_)
#undef REQ_GROUP_
#undef REQ_ROW_
#undef REQ_ROW_VIEW_
};

static const char *group_of(size_t index)
{
	const char *group = "";
	size_t seen = 0;

	for (size_t i = 0; i < ARRAY_SIZE(group_marks); i++) {
		if (group_marks[i].is_group) {
			group = group_marks[i].text;
			continue;
		}
		if (seen++ == index)
			return group;
	}
	BUG("request index %zu out of range", index);
}

const struct request_info *request_info(enum request req)
{
	static struct request_info table[ARRAY_SIZE(requests)];
	static bool ready;

	if (!ready) {
		for (size_t i = 0; i < ARRAY_SIZE(requests); i++) {
			table[i] = requests[i];
			table[i].group = group_of(i);
		}
		ready = true;
	}
	if (req <= REQ_NONE || req >= REQ__COUNT)
		BUG("bad request %d", (int)req);
	return &table[req - 1];
}

enum request request_lookup(const char *name)
{
	for (enum request r = REQ_NONE + 1; r < REQ__COUNT; r++)
		if (!strcmp(request_info(r)->name, name))
			return r;
	if (!strcmp(name, "q"))
		return REQ_QUIT;
	for (enum request r = REQ_NONE + 1; r < REQ__COUNT; r++)
		if (request_info(r)->view && !strcmp(request_info(r)->view, name))
			return r;
	return REQ_NONE;
}

void request_foreach(void (*fn)(const struct request_info *info, void *data), void *data)
{
	for (enum request r = REQ_NONE + 1; r < REQ__COUNT; r++)
		fn(request_info(r), data);
}

/* ---- keys ------------------------------------------------------------- */

#define CTRL_(c) ((c) & 0x1f)

static const struct {
	const char *name;
	int key;
} key_names[] = {
	{ "Enter", '\r' },        { "Tab", '\t' },          { "Esc", 27 },
	{ "Space", ' ' },         { "Backspace", KEY_BACKSPACE },
	{ "Up", KEY_UP },         { "Down", KEY_DOWN },     { "Left", KEY_LEFT },
	{ "Right", KEY_RIGHT },   { "PgUp", KEY_PPAGE },    { "PgDown", KEY_NPAGE },
	{ "Home", KEY_HOME },     { "End", KEY_END },       { "Delete", KEY_DC },
	{ "Insert", KEY_IC },     { "lt", '<' },            { "gt", '>' },
	{ "Resize", KEY_RESIZE },
};

int key_normalize(int key)
{
	switch (key) {
	case '\n':
	case KEY_ENTER:
		return '\r';
	case 127:
	case CTRL_('h'):
		return KEY_BACKSPACE;
	default:
		return key;
	}
}

static int key_by_name(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(key_names); i++)
		if (strlen(key_names[i].name) == len && !strncmp(key_names[i].name, name, len))
			return key_names[i].key;
	if (len == 1)
		return (unsigned char)name[0];
	if (len == 3 && (name[0] == 'C' || name[0] == 'c') && name[1] == '-') {
		int c = (unsigned char)name[2];

		if ((c >= '@' && c <= '_') || (c >= 'a' && c <= 'z'))
			return CTRL_(c);
	}
	if ((len == 2 || len == 3) && name[0] == 'F' && name[1] >= '1' && name[1] <= '9') {
		int n = name[1] - '0';

		if (len == 3 && (n != 1 || name[2] < '0' || name[2] > '2'))
			return -1;
		if (len == 3)
			n = 10 + name[2] - '0';
		return KEY_F(n);
	}
	return -1;
}

int key_parse(const char **s, const char **why)
{
	const char *p = *s, *end;
	int key;

	if (!*p) {
		*why = "no key";
		return -1;
	}
	if (*p != '<' || !(end = strchr(p + 1, '>')) || end == p + 1 || end - p > 12) {
		*s = p + 1;
		return (unsigned char)*p;
	}
	key = key_by_name(p + 1, (size_t)(end - p - 1));
	if (key < 0) {
		/* "<" followed by something that is no name: a plain '<'. */
		if (memchr(p + 1, ' ', (size_t)(end - p - 1))) {
			*s = p + 1;
			return '<';
		}
		*why = "unknown key name";
		return -1;
	}
	*s = end + 1;
	return key;
}

void key_describe(int key, struct strbuf *sb)
{
	key = key_normalize(key);
	for (size_t i = 0; i < ARRAY_SIZE(key_names); i++) {
		if (key_names[i].key == key && key != '<' && key != '>') {
			strbuf_addstr(sb, key_names[i].name);
			return;
		}
	}
	if (key >= KEY_F(1) && key <= KEY_F(12))
		strbuf_addf(sb, "F%d", key - KEY_F(0));
	else if (key >= 0 && key < 32)
		strbuf_addf(sb, "C-%c", key + 'a' - 1);
	else if (key > 32 && key < 127)
		strbuf_addch(sb, key);
	else
		strbuf_addf(sb, "<%#x>", (unsigned)key);
}

size_t key_to_bytes(int key, char buf[8])
{
	static const struct {
		int key;
		const char *seq;
	} seqs[] = {
		{ KEY_UP, "\033[A" },   { KEY_DOWN, "\033[B" },  { KEY_RIGHT, "\033[C" },
		{ KEY_LEFT, "\033[D" }, { KEY_HOME, "\033[H" },  { KEY_END, "\033[F" },
		{ KEY_DC, "\033[3~" },  { KEY_IC, "\033[2~" },   { KEY_PPAGE, "\033[5~" },
		{ KEY_NPAGE, "\033[6~" }, { KEY_BACKSPACE, "\177" },
	};

	key = key_normalize(key);
	if (key >= 0 && key < 256) {
		buf[0] = (char)key;
		return 1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(seqs); i++) {
		if (seqs[i].key == key) {
			size_t len = strlen(seqs[i].seq);

			memcpy(buf, seqs[i].seq, len);
			return len;
		}
	}
	return 0;
}

/* The default keymap, parsed once from the table's key strings. */
struct binding {
	int key;
	enum request req;
};

static struct binding *bindings;
static size_t n_bindings;

static void bind_keys(const struct request_info *info, void *data)
{
	size_t *alloc = data;
	const char *p = info->keys, *why;

	while (*p) {
		int key;

		if (*p == ' ') {
			p++;
			continue;
		}
		if ((key = key_parse(&p, &why)) < 0)
			BUG("bad key in binding of %s: %s", info->name, why);
		ALLOC_GROW(bindings, n_bindings + 1, *alloc);
		bindings[n_bindings].key = key_normalize(key);
		bindings[n_bindings].req = info->req;
		n_bindings++;
	}
}

static void keymap_load(void)
{
	size_t alloc = 0;

	if (!bindings)
		request_foreach(bind_keys, &alloc);
}

enum request key_request(int key)
{
	keymap_load();
	key = key_normalize(key);
	for (size_t i = 0; i < n_bindings; i++)
		if (bindings[i].key == key)
			return bindings[i].req;
	return REQ_NONE;
}

void request_key_names(enum request req, struct strbuf *sb)
{
	bool first = true;

	keymap_load();
	for (size_t i = 0; i < n_bindings; i++) {
		if (bindings[i].req != req)
			continue;
		if (!first)
			strbuf_addstr(sb, ", ");
		key_describe(bindings[i].key, sb);
		first = false;
	}
}
