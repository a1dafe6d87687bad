/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/textsyms.c - kallsyms and perf-PID.map parsers.
 */
#include "config.h"

#include "disasm/textsyms.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "disasm/proctab.h"

/* Parses hex digits at *p (at least one, at most 16); advances *p. */
static bool hex_field(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	unsigned n = 0;

	*v = 0;
	while (s < end && n < 17) {
		char c = *s;
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			break;
		*v = *v << 4 | d;
		s++;
		n++;
	}
	if (!n || n > 16)
		return false;
	*p = s;
	return true;
}

static const char *next_line(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	return nl ? nl : end;
}

/* Copies [s, e) into buf (NUL-terminated, truncated to size - 1). */
static void copy_field(char *buf, size_t size, const char *s, const char *e)
{
	size_t n = (size_t)(e - s);

	if (n > size - 1)
		n = size - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
}

struct ksym {
	uint64_t addr;
	size_t name_off, name_len;
	char type;
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

#define KSYM_MAX_SIZE (1u << 20)  /* a text symbol extends at most this far */
#define KSYM_LAST_SIZE 4096       /* the last symbol, with nothing after it */

long kallsyms_load(struct proctab *tab, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	struct ksym *v = NULL;
	size_t n = 0, alloc = 0;
	long added = 0, nonzero = 0, bad = 0;

	while (p < end) {
		const char *eol = next_line(p, end), *name;
		uint64_t addr;

		if (!hex_field(&p, eol, &addr) || p + 3 > eol || p[0] != ' ' || p[2] != ' ') {
			bad++;
			p = eol + 1;
			continue;
		}
		name = p + 3;
		p = name;
		while (p < eol && *p != '\t' && *p != ' ')
			p++;
		if (p > name) {
			ALLOC_GROW(v, n + 1, alloc);
			v[n].addr = addr;
			v[n].type = name[-2];
			v[n].name_off = (size_t)(name - buf);
			v[n].name_len = (size_t)(p - name);
			n++;
		}
		p = eol + 1;
	}
	/* every symbol (text or not) ends the text symbol before it */
	if (n > 1)
		qsort(v, n, sizeof(*v), ksym_cmp);
	for (size_t i = 0; i < n; i++) {
		char type = v[i].type, sym[512];
		uint64_t size = KSYM_LAST_SIZE;
		size_t k = i + 1;

		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		while (k < n && v[k].addr == v[i].addr)
			k++;
		if (k < n)
			size = v[k].addr - v[i].addr < KSYM_MAX_SIZE ? v[k].addr - v[i].addr : KSYM_MAX_SIZE;
		copy_field(sym, sizeof(sym), buf + v[i].name_off, buf + v[i].name_off + v[i].name_len);
		if (v[i].addr)
			nonzero++;
		proctab_add(tab, v[i].addr, size, sym,
			    type == 'T' ? PROC_GLOBAL | PROC_KSYM
					: type == 'W' ? PROC_WEAK | PROC_KSYM : PROC_KSYM);
		added++;
	}
	free(v);
	proctab_finish(tab, NULL, NULL);
	if (!nonzero || (bad && !added))
		return -1;
	return added;
}

long perfmap_load(struct proctab *tab, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;
	long added = 0;
	bool bad = false;

	while (p < end) {
		const char *eol = next_line(p, end), *name;
		uint64_t start, size;
		char sym[512];

		if (p == eol) {
			p = eol + 1;
			continue;
		}
		if (!hex_field(&p, eol, &start) || p >= eol || *p++ != ' ' ||
		    !hex_field(&p, eol, &size) || p >= eol || *p++ != ' ' || p >= eol) {
			bad = true;
			p = eol + 1;
			continue;
		}
		name = p;
		copy_field(sym, sizeof(sym), name, eol);
		proctab_add(tab, start, size, sym, PROC_JIT | PROC_GLOBAL);
		added++;
		p = eol + 1;
	}
	proctab_finish(tab, NULL, NULL);
	return bad ? -1 : added;
}
