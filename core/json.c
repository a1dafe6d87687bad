/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "core/json.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/utf8.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void json_init(struct json_writer *w, FILE *out, bool pretty)
{
	w->out = out;
	w->pretty = pretty;
	w->after_key = false;
	w->depth = 0;
	w->nonempty[0] = false;
}

static void indent(struct json_writer *w)
{
	if (!w->pretty)
		return;
	fputc('\n', w->out);
	for (int i = 0; i < w->depth; i++)
		fputs("  ", w->out);
}

/* Called before every value and key. */
static void before_item(struct json_writer *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (w->depth > 0) {
		if (w->nonempty[w->depth])
			fputc(',', w->out);
		indent(w);
	}
	w->nonempty[w->depth] = true;
}

static void open(struct json_writer *w, int c)
{
	before_item(w);
	fputc(c, w->out);
	if (w->depth + 1 >= JSON_MAX_DEPTH)
		BUG("json nesting too deep");
	w->depth++;
	w->nonempty[w->depth] = false;
}

static void close_(struct json_writer *w, int c)
{
	bool had = w->nonempty[w->depth];

	if (w->depth <= 0)
		BUG("json close without open");
	w->depth--;
	if (had)
		indent(w);
	fputc(c, w->out);
}

void json_object_begin(struct json_writer *w) { open(w, '{'); }
void json_object_end(struct json_writer *w) { close_(w, '}'); }
void json_array_begin(struct json_writer *w) { open(w, '['); }
void json_array_end(struct json_writer *w) { close_(w, ']'); }

void strbuf_add_json_string(struct strbuf *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	strbuf_addch(out, '"');
	while (p < end) {
		unsigned c = *p;
		size_t n;

		if (c == '"' || c == '\\') {
			strbuf_addch(out, '\\');
			strbuf_addch(out, (int)c);
			p++;
		} else if (c == '\n') {
			strbuf_addstr(out, "\\n");
			p++;
		} else if (c == '\t') {
			strbuf_addstr(out, "\\t");
			p++;
		} else if (c == '\r') {
			strbuf_addstr(out, "\\r");
			p++;
		} else if (c < 0x20 || c == 0x7f) {
			strbuf_addf(out, "\\u%04x", c);
			p++;
		} else if (c < 0x80) {
			strbuf_addch(out, (int)c);
			p++;
		} else if ((n = utf8_valid_len(p, (size_t)(end - p))) > 0) {
			strbuf_add(out, p, n);
			p += n;
		} else {
			strbuf_addf(out, "\\u%04x", c);
			p++;
		}
	}
	strbuf_addch(out, '"');
}

void json_key(struct json_writer *w, const char *key)
{
	struct strbuf sb = STRBUF_INIT;

	before_item(w);
	strbuf_add_json_string(&sb, key, strlen(key));
	fputs(sb.buf, w->out);
	fputs(w->pretty ? ": " : ":", w->out);
	strbuf_release(&sb);
	w->after_key = true;
}

void json_string_len(struct json_writer *w, const char *s, size_t len)
{
	struct strbuf sb = STRBUF_INIT;

	before_item(w);
	strbuf_add_json_string(&sb, s, len);
	fwrite(sb.buf, 1, sb.len, w->out);
	strbuf_release(&sb);
}

void json_string(struct json_writer *w, const char *s)
{
	if (!s)
		json_null(w);
	else
		json_string_len(w, s, strlen(s));
}

void json_u64(struct json_writer *w, uint64_t v)
{
	before_item(w);
	fprintf(w->out, "%" PRIu64, v);
}

void json_u64_members(struct json_writer *w, const struct json_u64_member *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		json_key(w, m[i].key);
		json_u64(w, m[i].v);
	}
}

void json_i64(struct json_writer *w, int64_t v)
{
	before_item(w);
	fprintf(w->out, "%" PRId64, v);
}

void json_double(struct json_writer *w, double v, int digits)
{
	char buf[40];

	(void)digits;
	before_item(w);
	if (!isfinite(v))
		fputs("null", w->out);
	else if (v == 0)
		fputs("0", w->out);
	else
		fputs(json_double_text(v, buf, sizeof(buf)), w->out);
}

const char *json_double_text(double v, char *buf, size_t size)
{
	/* the shortest of %.15g, %.16g, %.17g that reads back as v (17 always does) */
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(buf, size, "%.*g", digits, v);
		if (digits == 17 || strtod(buf, NULL) == v)
			break;
	}
	return buf;
}

void json_bool(struct json_writer *w, bool v)
{
	before_item(w);
	fputs(v ? "true" : "false", w->out);
}

void json_null(struct json_writer *w)
{
	before_item(w);
	fputs("null", w->out);
}

void json_hex(struct json_writer *w, uint64_t v)
{
	before_item(w);
	fprintf(w->out, "\"0x%" PRIx64 "\"", v);
}

int json_finish(struct json_writer *w)
{
	if (w->depth)
		BUG("json_finish with %d open containers", w->depth);
	fputc('\n', w->out);
	if (fflush(w->out) || ferror(w->out))
		return errorf_errno("cannot write output");
	return 0;
}
