/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of core/: varint and the byte cursor, crc32c, strbuf, binary search, escaping, JSON, u64map, time,
 * hot lists, the radix sort and string ranks.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/arena.h"
#include "core/crc32c.h"
#include "core/cursor.h"
#include "core/hotlist.h"
#include "core/json.h"
#include "core/radix.h"
#include "core/search.h"
#include "core/strbuf.h"
#include "core/strrank.h"
#include "core/timeutil.h"
#include "core/u64map.h"
#include "core/utf8.h"
#include "core/varint.h"
#include "core/xalloc.h"

/* Pieces keep their bytes, are aligned for anything, and go together. */
static void arena_pieces(void **state)
{
	struct arena a = ARENA_INIT;
	char *first = arena_strdup(&a, "first");
	const char *s[5000];

	for (int i = 0; i < 5000; i++) {
		char buf[32];
		uint64_t *x;

		snprintf(buf, sizeof(buf), "name %d", i);
		s[i] = arena_strdup(&a, buf);
		x = arena_calloc(&a, 3, sizeof(*x));
		assert_int_equal((uintptr_t)x % sizeof(uint64_t), 0);
		assert_int_equal(x[0] | x[1] | x[2], 0);
		x[2] = 7;
	}
	assert_non_null(arena_calloc(&a, 1, 3u << 20)); /* bigger than a chunk */
	assert_string_equal(first, "first");
	for (int i = 0; i < 5000; i++) {
		char buf[32];

		snprintf(buf, sizeof(buf), "name %d", i);
		assert_string_equal(s[i], buf);
	}
	arena_release(&a);
	assert_int_equal(a.n, 0);
	assert_string_equal(arena_memdup(&a, "ab", 3), "ab");
	arena_release(&a);
}

static void varint_round_trip(void **state)
{
	static const uint64_t values[] = { 0, 1, 127, 128, 255, 256, 16383, 16384,
					   (1ull << 32) - 1, 1ull << 32, (1ull << 63) - 1,
					   1ull << 63, UINT64_MAX };

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		uint8_t buf[VARINT_MAX];
		const uint8_t *p = buf;
		uint64_t v;
		size_t n = varint_encode(values[i], buf);

		assert_int_equal(n, varint_len(values[i]));
		assert_int_equal(varint_decode(&p, buf + n, &v), 0);
		assert_true(v == values[i]);
		assert_ptr_equal(p, buf + n);
		/* Every truncation fails and leaves the pointer alone. */
		for (size_t k = 0; k < n; k++) {
			p = buf;
			assert_int_equal(varint_decode(&p, buf + k, &v), -1);
			assert_ptr_equal(p, buf);
		}
	}
}

static void varint_rejects_malformed(void **state)
{
	static const uint8_t overlong[] = { 0x80, 0x00 };
	static const uint8_t too_long[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	static const uint8_t overflow[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02 };
	const uint8_t *p;
	uint64_t v;

	p = overlong;
	assert_int_equal(varint_decode(&p, overlong + 2, &v), -1);
	p = too_long;
	assert_int_equal(varint_decode(&p, too_long + sizeof(too_long), &v), -1);
	p = overflow;
	assert_int_equal(varint_decode(&p, overflow + sizeof(overflow), &v), -1);
	assert_int_equal(varint_len(300), 2);
}

/* A cursor's chained reads keep the first failure: fields read in a row, checked once. */
static void cursor_next_remembers_failure(void **state)
{
	static const uint8_t buf[] = { 0x05, 0xac, 0x02, 'a', 'b', 0x80 };
	struct cursor r = CURSOR_INIT(buf, sizeof(buf));
	const uint8_t *bytes;

	(void)state;
	assert_true(cursor_next(&r) == 5 && cursor_next(&r) == 300);
	bytes = cursor_next_bytes(&r, 2);
	assert_non_null(bytes);
	assert_memory_equal(bytes, "ab", 2);
	assert_null(r.why);
	assert_int_equal(cursor_left(&r), 1);
	assert_true(cursor_next(&r) == 0 && r.why);     /* truncated */
	assert_int_equal(cursor_left(&r), 1);           /* where it was */
	assert_true(cursor_next(&r) == 0 && r.why);     /* and stays so */
	assert_null(cursor_next_bytes(&r, 0));
	r = (struct cursor)CURSOR_INIT(buf, 1);
	assert_null(cursor_next_bytes(&r, 2));
	assert_string_equal(r.why, "truncated");
}

/*
 * The one list-length guard: at most max, and no more records than the
 * bytes after the count hold at min_bytes each (0 counting as 1); a count
 * refused leaves the position at it.
 */
static void cursor_list_lengths(void **state)
{
	static const uint8_t three[] = { 0x03, 1, 2, 3, 4, 5, 6 };
	struct cursor c;
	uint64_t n;

	(void)state;
	c = (struct cursor)CURSOR_INIT(three, sizeof(three));
	assert_int_equal(cursor_next_count(&c, 3, 2), 3);    /* 6 bytes left: 3 of 2 */
	assert_null(c.why);
	c = (struct cursor)CURSOR_INIT(three, sizeof(three));
	assert_int_equal(cursor_next_count(&c, 2, 1), 0);    /* more than max */
	assert_string_equal(c.why, "count larger than the payload");
	assert_ptr_equal(c.p, three);
	c = (struct cursor)CURSOR_INIT(three, sizeof(three));
	assert_int_equal(cursor_next_count(&c, 100, 3), 0);  /* 3 of 3 need 9 bytes */
	assert_true(c.why != NULL);
	c = (struct cursor)CURSOR_INIT(three, sizeof(three));
	assert_int_equal(cursor_next_count(&c, 100, 0), 3);  /* 0 counts as 1 */
	c = (struct cursor)CURSOR_INIT(three, 1);
	assert_int_equal(cursor_count(&c, &n, 100, 1), -1);  /* nothing after the count */
	assert_true(n == 0);
	c = (struct cursor)CURSOR_INIT(three, sizeof(three));
	assert_int_equal(cursor_count(&c, &n, 100, 2), 0);
	assert_true(n == 3);
	assert_ptr_equal(c.p, three + 1);
	c = (struct cursor)CURSOR_INIT("\x80", 1);                /* a malformed count */
	assert_int_equal(cursor_next_count(&c, 100, 1), 0);
	assert_true(c.why != NULL);
}

static void cursor_reads(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct cursor c;
	const uint8_t *b = NULL;
	const char *s;
	uint64_t v;
	size_t len;

	strbuf_add_varint(&sb, 300);
	strbuf_add_varint_string(&sb, "abc", 3);
	strbuf_add(&sb, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
	strbuf_add_varint(&sb, 7);
	strbuf_addch(&sb, 'z');
	c = (struct cursor)CURSOR_INIT(sb.buf, sb.len);
	assert_int_equal(cursor_varint(&c, &v), 0);
	assert_true(v == 300);
	s = cursor_string(&c, 3, &len);
	assert_non_null(s);
	assert_int_equal(len, 3);
	assert_memory_equal(s, "abc", 3);
	assert_int_equal(cursor_le64(&c, &v), 0);
	assert_true(v == 0x0807060504030201ull);
	assert_int_equal(cursor_varint_max(&c, &v, 6, "too big"), -1);
	assert_string_equal(c.why, "too big");
	/* Once failed, every read fails and the first reason stays. */
	assert_int_equal(cursor_varint(&c, &v), -1);
	assert_int_equal(cursor_fail(&c, "other"), -1);
	assert_string_equal(c.why, "too big");
	c.why = NULL;
	assert_int_equal(cursor_varint_max(&c, &v, 7, "too big"), 0);
	assert_int_equal(cursor_bytes(&c, 2, &b), -1);
	assert_string_equal(c.why, "truncated");
	assert_int_equal(cursor_left(&c), 1);
	c.why = NULL;
	assert_int_equal(cursor_bytes(&c, 1, &b), 0);
	assert_int_equal(*b, 'z');
	assert_ptr_equal(c.p, c.end);
	assert_int_equal(cursor_le64(&c, &v), -1);
	assert_string_equal(c.why, "truncated number");

	/* Strings: too long, cut short, holding a NUL; the position stays. */
	strbuf_reset(&sb);
	strbuf_add_varint_string(&sb, "a\0b", 3);
	c = (struct cursor)CURSOR_INIT(sb.buf, sb.len);
	assert_null(cursor_string(&c, 2, &len));
	assert_string_equal(c.why, "string too long");
	assert_ptr_equal(c.p, (const uint8_t *)sb.buf);
	c.why = NULL;
	assert_null(cursor_string(&c, 3, &len));
	assert_string_equal(c.why, "NUL in a string");
	c = (struct cursor)CURSOR_INIT(sb.buf, sb.len - 1);
	assert_null(cursor_string(&c, 3, &len));
	assert_string_equal(c.why, "truncated string");
	/* A malformed number. */
	c = (struct cursor)CURSOR_INIT("\x80", 1);
	assert_int_equal(cursor_varint(&c, &v), -1);
	assert_string_equal(c.why, "truncated or malformed number");
	strbuf_release(&sb);
}

static void crc32c_known_values(void **state)
{
	char buf[1000];

	assert_int_equal(crc32c(0, "123456789", 9), 0xe3069283);
	assert_int_equal(crc32c_sw(0, "123456789", 9), 0xe3069283);
	assert_int_equal(crc32c(0, "", 0), 0);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char)(i * 7 + 3);
	for (size_t len = 0; len < sizeof(buf); len += 37) {
		assert_int_equal(crc32c(0, buf, len), crc32c_sw(0, buf, len));
		/* Continuation equals one pass. */
		assert_int_equal(crc32c(crc32c(0, buf, len / 3), buf + len / 3, len - len / 3),
				 crc32c(0, buf, len));
	}
}

static void strbuf_basics(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char *s;
	size_t len;

	assert_string_equal(sb.buf, "");
	strbuf_addstr(&sb, "abc");
	strbuf_addf(&sb, "%d-%s", 42, "x");
	strbuf_addch(&sb, '!');
	assert_string_equal(sb.buf, "abc42-x!");
	for (int i = 0; i < 1000; i++)
		strbuf_addf(&sb, "%04d", i);
	assert_int_equal(sb.len, 8 + 4000);
	strbuf_setlen(&sb, 3);
	strbuf_addstr(&sb, "  \n");
	strbuf_rtrim(&sb);
	s = strbuf_detach(&sb, &len);
	assert_string_equal(s, "abc");
	assert_int_equal(len, 3);
	assert_string_equal(sb.buf, "");
	free(s);
}

/* A temporary file holding n bytes of a pattern, at its start. */
static int pattern_file(size_t n)
{
	FILE *f = tmpfile();

	assert_non_null(f);
	for (size_t i = 0; i < n; i++)
		fputc('a' + (int)(i % 26), f);
	fflush(f);
	rewind(f);
	return dup(fileno(f)); /* the FILE goes, the file stays open */
}

static void strbuf_read_fd_bounds(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	int fd;

	/* Whole, appended after what sb held, with growth on the way. */
	strbuf_addstr(&sb, "head:");
	fd = pattern_file(100000);
	assert_int_equal(strbuf_read_fd(&sb, fd, 100000), 0);
	close(fd);
	assert_int_equal(sb.len, 5 + 100000);
	assert_memory_equal(sb.buf, "head:abc", 8);
	assert_int_equal(sb.buf[5 + 99999], 'a' + 99999 % 26);
	assert_int_equal(sb.buf[sb.len], '\0');

	/* One byte too many: EFBIG, and the first max bytes kept. */
	strbuf_reset(&sb);
	fd = pattern_file(4097);
	errno = 0;
	assert_int_equal(strbuf_read_fd(&sb, fd, 4096), -1);
	assert_int_equal(errno, EFBIG);
	assert_int_equal(sb.len, 4096);
	assert_int_equal(sb.buf[4096], '\0');
	close(fd);

	/* Empty, and a limit of nothing. */
	strbuf_reset(&sb);
	fd = pattern_file(0);
	assert_int_equal(strbuf_read_fd(&sb, fd, 0), 0);
	assert_int_equal(sb.len, 0);
	close(fd);
	fd = pattern_file(1);
	assert_int_equal(strbuf_read_fd(&sb, fd, 0), -1);
	assert_int_equal(errno, EFBIG);
	assert_int_equal(sb.len, 0);
	close(fd);

	/* A read that fails says why. */
	errno = 0;
	assert_int_equal(strbuf_read_fd(&sb, -1, 10), -1);
	assert_int_equal(errno, EBADF);
	strbuf_release(&sb);
}

static void lower_bound_partition(void **state)
{
	static const int v[] = { 1, 3, 3, 3, 7, 9 };
	const size_t n = sizeof(v) / sizeof(v[0]);
	const char *names[] = { "ant", "bee", "cat" };

	assert_int_equal(LOWER_BOUND(0, k, v[k] < 5), 0);
	/* The first element >= x, for every x around and between the elements. */
	for (int x = 0; x <= 10; x++) {
		size_t want = 0;

		while (want < n && v[want] < x)
			want++;
		assert_int_equal(LOWER_BOUND(n, k, v[k] < x), want);
	}
	/* With <=: one past the last element <= x (the run of 3s ends at 4). */
	assert_int_equal(LOWER_BOUND(n, k, v[k] <= 3), 4);
	assert_int_equal(LOWER_BOUND(n, k, v[k] <= 0), 0);
	assert_int_equal(LOWER_BOUND(n, k, v[k] <= 9), n);
	assert_int_equal(LOWER_BOUND(3, k, strcmp(names[k], "bee") < 0), 1);
	assert_int_equal(LOWER_BOUND(3, k, strcmp(names[k], "cow") < 0), 3);
}

static void escape_round_trip(void **state)
{
	static const char *const inputs[] = {
		"plain", "with space", "../../etc/x", "new\nline", "tab\there", "back\\slash",
		"\x1b[31mred", "caf\xc3\xa9", "bad\xff utf8", "\x7f", "",
	};

	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		struct strbuf esc = STRBUF_INIT, back = STRBUF_INIT;

		strbuf_add_escaped(&esc, inputs[i], strlen(inputs[i]), ESCAPE_SPACE);
		assert_null(strpbrk(esc.buf, " \n\t\r\x1b"));
		assert_int_equal(strbuf_add_unescaped(&back, esc.buf, esc.len), 0);
		assert_string_equal(back.buf, inputs[i]);
		strbuf_release(&esc);
		strbuf_release(&back);
	}
}

static void escape_terminal(void **state)
{
	char *s = display_safe("a\x1b[2Jb\xc2\x9b" "c\xff" "caf\xc3\xa9");

	assert_string_equal(s, "a\\x1b[2Jb\\xc2\\x9bc\\xffcaf\xc3\xa9");
	free(s);
}

static void unescape_rejects_bad(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(strbuf_add_unescaped(&sb, "a\\", 2), -1);
	assert_int_equal(strbuf_add_unescaped(&sb, "\\q", 2), -1);
	assert_int_equal(strbuf_add_unescaped(&sb, "\\x4", 3), -1);
	assert_int_equal(strbuf_add_unescaped(&sb, "\\xzz", 4), -1);
	strbuf_release(&sb);
}

static void json_output(void **state)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	struct json_writer w;

	json_init(&w, f, false);
	json_object_begin(&w);
	json_key(&w, "name");
	json_string(&w, "a\"b\\c\n\x01\xff\xc3\xa9");
	json_key(&w, "list");
	json_array_begin(&w);
	json_u64(&w, 1);
	json_i64(&w, -2);
	json_double(&w, 0.5, 6);
	json_bool(&w, true);
	json_null(&w);
	json_hex(&w, 0x401000);
	json_array_end(&w);
	json_key(&w, "empty");
	json_object_begin(&w);
	json_object_end(&w);
	json_object_end(&w);
	assert_int_equal(json_finish(&w), 0);
	fclose(f);
	assert_string_equal(buf, "{\"name\":\"a\\\"b\\\\c\\n\\u0001\\u00ff\xc3\xa9\","
				 "\"list\":[1,-2,0.5,true,null,\"0x401000\"],\"empty\":{}}\n");
	free(buf);
}

/* JSON numbers are never rounded: each reads back as the double written. */
static void json_numbers_round_trip(void **state)
{
	static const double v[] = { 0.1, 4133.734612, 3512345.6, 4.1e9, 1.0 / 3, 2596.126,
				    1e-300, 123456789012345678.0, -0.000123 };
	char buf[40];

	for (size_t i = 0; i < sizeof(v) / sizeof(*v); i++)
		assert_true(strtod(json_double_text(v[i], buf, sizeof(buf)), NULL) == v[i]);
	assert_string_equal(json_double_text(0.1, buf, sizeof(buf)), "0.1");
	assert_string_equal(json_double_text(3512345.6, buf, sizeof(buf)), "3512345.6");
	assert_string_equal(json_double_text(4133734612.0, buf, sizeof(buf)), "4133734612");
}

static void u64map_counts(void **state)
{
	struct u64map m = U64MAP_INIT;
	uint64_t k, v, sum = 0;
	size_t it = 0, n = 0;

	for (uint64_t i = 0; i < 10000; i++)
		u64map_add(&m, i * 0x1000, i);
	u64map_add(&m, 0, 5);
	u64map_add(&m, UINT64_MAX, 1);
	assert_int_equal(m.size, 10001);
	assert_true(u64map_get(&m, 0x1000 * 9999, &v) && v == 9999);
	assert_true(u64map_get(&m, 0, &v) && v == 5);
	assert_false(u64map_get(&m, 1, &v));
	while (u64map_next(&m, &it, &k, &v)) {
		sum += v;
		n++;
	}
	assert_int_equal(n, 10001);
	assert_true(sum == 9999ull * 10000 / 2 + 5 + 1);
	u64map_clear(&m);
	assert_int_equal(m.size, 0);
	assert_false(u64map_get(&m, 0, &v));
	u64map_release(&m);
}

static void time_format_parse(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	int64_t ns, t = 1795329060123000000ll;

	strbuf_add_time_iso(&sb, t);
	assert_string_equal(sb.buf, "2026-11-22T06:31:00.123Z");
	assert_int_equal(time_parse_iso(sb.buf, &ns), 0);
	assert_true(ns == t);
	assert_int_equal(time_parse_iso("2026-11-22T06:31:00Z", &ns), 0);
	assert_int_equal(time_parse_iso("2026-13-22T06:31:00Z", &ns), -1);
	assert_int_equal(time_parse_iso("2026-11-22 06:31:00", &ns), -1);
	assert_int_equal(time_parse_iso("2026-11-22T06:31:00.Z", &ns), -1);
	strbuf_reset(&sb);
	strbuf_add_duration(&sb, 3723 * 1000000000ll);
	assert_string_equal(sb.buf, "1h02m");
	strbuf_release(&sb);
}

/* ---- hot lists -------------------------------------------------------------------- */

/* The estimated share of value v in h over n occurrences (0 if absent). */
static double share_of(const struct hotlist *h, uint64_t v, uint64_t n)
{
	for (size_t i = 0; i < h->n; i++)
		if (h->e[i].value == v)
			return hotlist_estimate(h, i) / (double)n;
	return 0;
}

/* As many values as entries: exact counts, tau stays 1. */
static void hotlist_exact(void **state)
{
	struct hotlist_entry room[4];
	struct hotlist h;
	struct hotlist_rng rng = HOTLIST_RNG_INIT(1);

	(void)state;
	hotlist_init(&h, room, 4);
	for (int i = 0; i < 1000; i++)
		hotlist_add(&h, (uint64_t)(i % 4) * 0x1000, &rng);
	hotlist_add(&h, 0, &rng);
	assert_int_equal(h.tau, 1);
	assert_int_equal(h.n, 4);
	hotlist_sort(&h);
	assert_true(h.e[0].value == 0 && h.e[0].count == 251);
	assert_true(h.e[1].count == 250 && h.e[3].count == 250);
	assert_true(hotlist_estimate(&h, 0) == 251.0);
	assert_true(hotlist_reportable(&h, 3));
}

/*
 * One value 95% of the time, a new value each other time (DCPI's "a load
 * reads from 0x3c8 95% of the time"): the list stays at 4 entries, tau
 * grows, and the value's estimated share stays within a point, for every
 * seed tried.
 */
static void hotlist_semi_invariant(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct hotlist_entry room[4];
		struct hotlist h;
		struct hotlist_rng rng = HOTLIST_RNG_INIT(seed), src = HOTLIST_RNG_INIT(seed + 99);
		const uint64_t n = 200000;
		double share;

		hotlist_init(&h, room, 4);
		for (uint64_t i = 0; i < n; i++) {
			uint64_t r = hotlist_rand(&src);

			hotlist_add(&h, r % 100 < 95 ? 0x5eed5eed : r | 1ull << 63, &rng);
		}
		assert_true(h.n <= 4);
		assert_true(h.tau > 1);
		hotlist_sort(&h);
		assert_true(h.e[0].value == 0x5eed5eed);
		assert_true(hotlist_reportable(&h, 0));
		share = share_of(&h, 0x5eed5eed, n);
		assert_true(share > 0.94 && share < 0.96);
	}
}

/* Skewed values (60%, 25%, 10%, then a long tail): the top three come out in order. */
static void hotlist_skewed(void **state)
{
	struct hotlist_entry room[4];
	struct hotlist h;
	struct hotlist_rng rng = HOTLIST_RNG_INIT(5), src = HOTLIST_RNG_INIT(6);
	const uint64_t n = 100000;

	(void)state;
	hotlist_init(&h, room, 4);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = hotlist_rand(&src) % 1000;

		hotlist_add(&h, r < 600 ? 1 : r < 850 ? 2 : r < 950 ? 3 : 100 + r, &rng);
	}
	hotlist_sort(&h);
	assert_true(h.e[0].value == 1 && h.e[1].value == 2 && h.e[2].value == 3);
	assert_true(fabs(share_of(&h, 1, n) - 0.60) < 0.02);
	assert_true(fabs(share_of(&h, 2, n) - 0.25) < 0.02);
	assert_true(fabs(share_of(&h, 3, n) - 0.10) < 0.02);
}

/* Two halves of a stream counted apart and merged estimate like one list. */
static void hotlist_merge_halves(void **state)
{
	struct hotlist_entry ra[4], rb[4], rc[16];
	struct hotlist a, b, c;
	struct hotlist_rng rng = HOTLIST_RNG_INIT(3), src = HOTLIST_RNG_INIT(4);
	const uint64_t n = 50000;

	(void)state;
	hotlist_init(&a, ra, 4);
	hotlist_init(&b, rb, 4);
	for (uint64_t i = 0; i < 2 * n; i++) {
		uint64_t r = hotlist_rand(&src);

		hotlist_add(i < n ? &a : &b, r % 100 < 90 ? 42 : r, &rng);
	}
	/* Only a few distinct values in the second list: an exact one merges in too. */
	hotlist_init(&c, rc, 16);
	for (int i = 0; i < 300; i++)
		hotlist_add(&c, i % 3 == 0 ? 42 : 7, &rng);
	assert_int_equal(c.tau, 1);
	hotlist_merge(&a, &b, &rng);
	assert_true(a.n <= 4 && a.tau >= b.tau);
	assert_true(fabs(share_of(&a, 42, 2 * n) - 0.90) < 0.01);
	hotlist_merge(&a, &c, &rng);
	assert_true(fabs(share_of(&a, 42, 2 * n + 300) - (0.9 * 2 * n + 100) / (2 * n + 300)) < 0.01);
	/* An empty list (tau 1) takes the other's threshold and entries. */
	hotlist_init(&c, rc, 16);
	hotlist_merge(&c, &a, &rng);
	assert_int_equal(c.tau, a.tau);
	assert_int_equal(c.n, a.n);
}

/* Thinning from tau to tau' keeps a count's expectation (count * tau / tau' + ...). */
static void hotlist_raise_keeps_big_counts(void **state)
{
	struct hotlist_entry room[2];
	struct hotlist h;
	struct hotlist_rng rng = HOTLIST_RNG_INIT(9);

	(void)state;
	hotlist_init(&h, room, 2);
	hotlist_add(&h, 1, &rng);
	h.e[0].count = 100000;
	hotlist_add(&h, 2, &rng);
	hotlist_raise(&h, 1000, &rng);
	assert_int_equal(h.tau, 1000);
	/* The big count loses a geometric number of units (mean ~tau), never all. */
	assert_true(h.e[0].value == 1 && h.e[0].count > 100000 - 20000);
	assert_true(hotlist_estimate(&h, 0) > 99000 - 20000);
}

/* Keys sort either way, ties in the order given; doubles sort as numbers. */
static void radix_sorts_stably(void **state)
{
	enum { N = 5000 };
	struct radix_item *v = calloc(N, sizeof(*v));
	const double d[] = { -INFINITY, -3.5, -1e-300, -0.0, 0.0, 1e-300, 2.0, 1e300, INFINITY };
	uint64_t seed = 12345;

	(void)state;
	for (int desc = 0; desc < 2; desc++) {
		for (uint32_t i = 0; i < N; i++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			/* few distinct keys, spread over high and low bytes */
			v[i] = (struct radix_item){ (seed >> 60) << (i % 2 ? 40 : 3), i };
		}
		radix_sort(v, N, desc);
		for (size_t i = 1; i < N; i++) {
			if (v[i - 1].key == v[i].key)
				assert_true(v[i - 1].i < v[i].i);
			else
				assert_true(desc ? v[i - 1].key > v[i].key : v[i - 1].key < v[i].key);
		}
	}
	for (size_t i = 1; i < ARRAY_SIZE(d); i++)
		assert_true(radix_key_double(d[i - 1]) <= radix_key_double(d[i]) &&
			    (d[i - 1] == d[i]) == (radix_key_double(d[i - 1]) == radix_key_double(d[i])));
	radix_sort(v, 1, false);
	radix_sort(v, 0, true);
	free(v);
}

/* Values sort by their high half only, ties keeping their order. */
static void radix_high_sorts_by_the_high_half(void **state)
{
	enum { N = 5000 };
	uint64_t *v = calloc(N, sizeof(*v)), *tmp = calloc(N, sizeof(*tmp));
	uint64_t seed = 99;

	(void)state;
	for (uint32_t i = 0; i < N; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		/* few keys, in the low and the top byte of the high half */
		v[i] = (seed >> 61) << (i % 2 ? 56 : 32) | i;
	}
	radix_sort_high(v, N, tmp);
	for (size_t i = 1; i < N; i++) {
		assert_true(v[i - 1] >> 32 <= v[i] >> 32);
		if (v[i - 1] >> 32 == v[i] >> 32)
			assert_true((uint32_t)v[i - 1] < (uint32_t)v[i]);
	}
	/* all keys alike: nothing moves */
	for (uint32_t i = 0; i < N; i++)
		v[i] = (uint64_t)7 << 32 | (N - i);
	radix_sort_high(v, N, tmp);
	for (uint32_t i = 0; i < N; i++)
		assert_true(v[i] == ((uint64_t)7 << 32 | (N - i)));
	radix_sort_high(v, 1, tmp);
	free(tmp);
	free(v);
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Ranks are strcmp's order: prefixes, repeats, bytes above 0x7f, long common starts. */
static void str_ranks_order(void **state)
{
	enum { N = 3000 };
	char **s = calloc(N, sizeof(*s)), **sorted = calloc(N, sizeof(*sorted));
	uint32_t *rank = calloc(N, sizeof(*rank));
	uint64_t seed = 99;
	size_t distinct = 1;

	(void)state;
	for (size_t i = 0; i < N; i++) {
		char buf[64];
		size_t len;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		len = (size_t)(seed >> 59);  /* 0..31 */
		snprintf(buf, sizeof(buf), "%s", i % 3 ? "lib0001_function_" : "");
		for (size_t k = strlen(buf); k < len + 17 && k < sizeof(buf) - 1; k++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			buf[k] = "ab\xc3\x7f"[(seed >> 62)];
			buf[k + 1] = '\0';
		}
		buf[i % 7 ? strlen(buf) : strlen(buf) / 2] = '\0';   /* some prefixes of others */
		s[i] = strdup(buf);
	}
	memcpy(sorted, s, N * sizeof(*s));
	qsort(sorted, N, sizeof(*sorted), cmp_strp);
	for (size_t i = 1; i < N; i++)
		distinct += strcmp(sorted[i - 1], sorted[i]) != 0;
	assert_int_equal(str_ranks((const char *const *)s, N, rank), distinct);
	for (size_t i = 0; i < N; i++)
		for (size_t j = i + 1; j < N; j += 37) {
			int c = strcmp(s[i], s[j]);

			assert_true(c < 0 ? rank[i] < rank[j] : c > 0 ? rank[i] > rank[j]
							    : rank[i] == rank[j]);
		}
	for (size_t i = 0; i < N; i++)
		free(s[i]);
	assert_int_equal(str_ranks(NULL, 0, rank), 0);
	free(s);
	free(sorted);
	free(rank);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(arena_pieces),
		cmocka_unit_test(varint_round_trip),
		cmocka_unit_test(varint_rejects_malformed),
		cmocka_unit_test(cursor_next_remembers_failure),
		cmocka_unit_test(cursor_list_lengths),
		cmocka_unit_test(cursor_reads),
		cmocka_unit_test(crc32c_known_values),
		cmocka_unit_test(strbuf_basics),
		cmocka_unit_test(strbuf_read_fd_bounds),
		cmocka_unit_test(lower_bound_partition),
		cmocka_unit_test(escape_round_trip),
		cmocka_unit_test(escape_terminal),
		cmocka_unit_test(unescape_rejects_bad),
		cmocka_unit_test(json_output),
		cmocka_unit_test(json_numbers_round_trip),
		cmocka_unit_test(u64map_counts),
		cmocka_unit_test(time_format_parse),
		cmocka_unit_test(hotlist_exact),
		cmocka_unit_test(hotlist_semi_invariant),
		cmocka_unit_test(hotlist_skewed),
		cmocka_unit_test(hotlist_merge_halves),
		cmocka_unit_test(hotlist_raise_keeps_big_counts),
		cmocka_unit_test(radix_sorts_stably),
		cmocka_unit_test(radix_high_sorts_by_the_high_half),
		cmocka_unit_test(str_ranks_order),
	};

	return cmocka_run_group_tests_name("core", tests, NULL, NULL);
}
