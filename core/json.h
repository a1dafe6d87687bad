/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/json.h - a streaming JSON writer for every tool's --json output.
 *
 * The writer inserts commas and (when pretty) indentation; callers only say
 * what comes next.  Strings are escaped per RFC 8259; bytes that are not
 * valid UTF-8 (paths may contain anything) are written as \u00XX, i.e. read
 * as Latin-1, so the output is always valid JSON.  Non-finite doubles are
 * written as null.
 *
 *   struct json_writer w;
 *   json_init(&w, stdout, true);
 *   json_object_begin(&w);
 *   json_key(&w, "samples"); json_u64(&w, 42);
 *   json_object_end(&w);
 *   json_finish(&w);            // newline, flush; returns -1 on a write error
 */
#ifndef DCPI_CORE_JSON_H
#define DCPI_CORE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 64

struct json_writer {
	FILE *out;
	bool pretty;
	bool after_key;
	int depth;
	bool nonempty[JSON_MAX_DEPTH];
};

void json_init(struct json_writer *w, FILE *out, bool pretty);
void json_object_begin(struct json_writer *w);
void json_object_end(struct json_writer *w);
void json_array_begin(struct json_writer *w);
void json_array_end(struct json_writer *w);
void json_key(struct json_writer *w, const char *key);
void json_string(struct json_writer *w, const char *s); /* NULL writes null */
void json_string_len(struct json_writer *w, const char *s, size_t len);
void json_u64(struct json_writer *w, uint64_t v);
void json_i64(struct json_writer *w, int64_t v);

/* A member of an object whose value is a count (json_u64_members). */
struct json_u64_member {
	const char *key;
	uint64_t v;
};
/* Writes the n members m, in order: "key": v each. */
void json_u64_members(struct json_writer *w, const struct json_u64_member *m, size_t n);
/* json_u64_members() of its arguments: JSON_U64_MEMBERS(w, { "files", n }, { "bytes", b }). */
#define JSON_U64_MEMBERS(w, ...)                                                          \
	json_u64_members(w, (const struct json_u64_member[]){ __VA_ARGS__ },              \
			 sizeof((const struct json_u64_member[]){ __VA_ARGS__ }) /         \
				 sizeof(struct json_u64_member))
/*
 * Writes v as the shortest number that reads back as exactly v (0.1,
 * 4133.734612, 3512345.6): JSON numbers are never rounded, a reader gets
 * the double dcpi computed.  digits is no longer used (it rounded: a
 * calibration of 4.1e9 cycles came out as 4e+09).
 */
void json_double(struct json_writer *w, double v, int digits);
/* The text json_double() writes for a finite v, into buf (>= 32 bytes). */
const char *json_double_text(double v, char *buf, size_t size);
void json_bool(struct json_writer *w, bool v);
void json_null(struct json_writer *w);
/* Writes v as a string "0x...", the form addresses take in dcpi's JSON. */
void json_hex(struct json_writer *w, uint64_t v);
/* Ends the document with a newline and flushes; -1 on a write error. */
int json_finish(struct json_writer *w);

/* Escapes s into a JSON string literal (with quotes) appended to out. */
struct strbuf;
void strbuf_add_json_string(struct strbuf *out, const char *s, size_t len);

#endif
