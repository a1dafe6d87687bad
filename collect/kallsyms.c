/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "collect/kallsyms.h"
#include "core/die.h"
#include "core/search.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * /proc/kallsyms is generated as it is read (the kernel formats every
 * symbol: ~40 ms for the 120,000 here, most of the cost), so it is read
 * once, in one pass, through a small buffer that is reused: the whole file
 * is never held.  The core kernel's symbols come first, sorted by address;
 * the subset of that part is picked as it streams by.  Whatever follows
 * out of order (modules, BPF programs, trampolines) is kept and sorted at
 * the end; each address's symbol is then the nearer of the two parts'.
 */
#define READ_CHUNK (128 << 10)

static const signed char hexval[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8,
	['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15,
	['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* Parses "ADDR TYPE ..." (len bytes, no newline): true for a text symbol. */
static bool text_symbol(const char *line, size_t len, uint64_t *addr)
{
	uint64_t v = 0;
	size_t i = 0;

	while (i < len && i < 16 && hexval[(unsigned char)line[i]])
		v = v << 4 | (uint64_t)(hexval[(unsigned char)line[i++]] - 1);
	if (!i || i + 3 > len || line[i] != ' ' || line[i + 2] != ' ')
		return false;
	switch (line[i + 1]) {
	case 't': case 'T': case 'w': case 'W':
		*addr = v;
		return true;
	default:
		return false;
	}
}

/* One out-of-order line, kept for the end. */
struct tail_line {
	uint64_t addr;
	size_t off, len;        /* in the tail's text */
};

/* A wanted address's symbol (floor) and the one after it (next), as far as known. */
struct sym_bounds {
	uint64_t floor, next;
	bool has_floor, has_next;
};

struct pass {
	const uint64_t *x;      /* the wanted addresses, sorted */
	size_t n, i;            /* the next one not yet placed in the sorted part */
	struct sym_bounds *b;       /* per address */
	struct strbuf *out;

	/* The sorted part: the current group (one address) of lines. */
	bool sorted, any;
	uint64_t g;             /* its address */
	bool g_emit;            /* its lines go out (the next of a wanted address) */
	struct strbuf group;    /* its lines, while not known to go out */
	size_t nonzero, nsyms;
	/*
	 * The first group, when addresses lie below it: it ends their symbol
	 * if the tail has one below them (its lines go out then).
	 */
	struct strbuf first;
	uint64_t first_addr;
	bool first_held;

	/* What came out of order. */
	struct strbuf tail_text;
	struct tail_line *tail;
	size_t n_tail, a_tail;
};

static void emit(struct strbuf *out, const char *line, size_t len)
{
	strbuf_add(out, line, len);
	strbuf_addch(out, '\n');
}

/* The group at p->g ends (the next address is a, or none): place the addresses below a. */
static void close_group(struct pass *p, bool has_a, uint64_t a)
{
	bool wanted = false, below = false;

	for (; p->i < p->n && (!has_a || p->x[p->i] < a); p->i++) {
		if (p->x[p->i] < p->g) {
			/* Below the first symbol: no floor here, but this one is above. */
			p->b[p->i].next = p->g;
			p->b[p->i].has_next = true;
			below = true;
			continue;
		}
		wanted = true;
		p->b[p->i].floor = p->g;
		p->b[p->i].has_floor = true;
		if (has_a) {
			p->b[p->i].next = a;
			p->b[p->i].has_next = true;
		}
	}
	if (wanted && !p->g_emit) {
		strbuf_add(p->out, p->group.buf, p->group.len);
	} else if (below && !p->g_emit) {
		strbuf_add(&p->first, p->group.buf, p->group.len);
		p->first_addr = p->g;
		p->first_held = true;
	}
	strbuf_reset(&p->group);
	p->g_emit = wanted;     /* the group at a is the next of these */
}

static void take_line(struct pass *p, const char *line, size_t len)
{
	uint64_t a;

	if (!text_symbol(line, len, &a))
		return;
	p->nsyms++;
	p->nonzero += a != 0;
	if (p->sorted && p->any && a < p->g) {
		/* Out of order: from here on, everything is kept for the end. */
		close_group(p, false, 0);
		p->sorted = false;
	}
	if (!p->sorted) {
		ALLOC_GROW(p->tail, p->n_tail + 1, p->a_tail);
		p->tail[p->n_tail++] = (struct tail_line){ a, p->tail_text.len, len };
		strbuf_add(&p->tail_text, line, len);
		return;
	}
	if (p->any && a != p->g)
		close_group(p, true, a);
	p->any = true;
	p->g = a;
	if (p->g_emit)
		emit(p->out, line, len);
	else
		emit(&p->group, line, len);
}

static int cmp_tail(const void *a, const void *b)
{
	const struct tail_line *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The index of the greatest element <= x, or n if none. */
static size_t floor_index(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = LOWER_BOUND(n, k, v[k] <= x);

	return lo ? lo - 1 : n;
}

static bool contains(const uint64_t *v, size_t n, uint64_t x)
{
	size_t i = floor_index(v, n, x);

	return i < n && v[i] == x;
}

/*
 * Folds the out-of-order lines in: each address's symbol is the greater of
 * the two parts' floors, and its end the least symbol above that in either
 * part (the sorted part's next is above any tail symbol between its floor
 * and the address).  The tail lines at those addresses go out, in file
 * order.  Lines the sorted part already gave out for a floor the tail
 * superseded stay: a reader still finds the nearer symbol.
 */
static void finish_tail(struct pass *p)
{
	struct tail_line *by_addr;
	uint64_t *t, *want;
	size_t nt = 0, nwant = 0;

	if (!p->n_tail)
		return;
	by_addr = xmemdup(p->tail, p->n_tail * sizeof(*p->tail));
	qsort(by_addr, p->n_tail, sizeof(*by_addr), cmp_tail);
	t = xcalloc(p->n_tail, sizeof(*t));
	for (size_t k = 0; k < p->n_tail; k++)
		if (!nt || t[nt - 1] != by_addr[k].addr)
			t[nt++] = by_addr[k].addr;
	free(by_addr);
	want = xcalloc(2 * p->n + 1, sizeof(*want));
	for (size_t k = 0; k < p->n; k++) {
		size_t j = floor_index(t, nt, p->x[k]), above;

		if (j < nt && (!p->b[k].has_floor || t[j] > p->b[k].floor)) {
			p->b[k].floor = t[j];
			p->b[k].has_floor = true;
		}
		if (!p->b[k].has_floor)
			continue;
		j = floor_index(t, nt, p->b[k].floor);
		above = j == nt ? 0 : j + 1;
		if (above < nt && (!p->b[k].has_next || t[above] < p->b[k].next)) {
			p->b[k].next = t[above];
			p->b[k].has_next = true;
		}
		want[nwant++] = p->b[k].floor;
		if (p->b[k].has_next)
			want[nwant++] = p->b[k].next;
		if (p->first_held && p->b[k].has_next && p->b[k].next == p->first_addr) {
			strbuf_add(p->out, p->first.buf, p->first.len);
			p->first_held = false;
		}
	}
	if (nwant)
		qsort(want, nwant, sizeof(*want), cmp_u64);
	for (size_t k = 0; k < p->n_tail; k++)
		if (contains(want, nwant, p->tail[k].addr))
			emit(p->out, p->tail_text.buf + p->tail[k].off, p->tail[k].len);
	free(want);
	free(t);
}

bool kallsyms_covered(const struct kallsyms_range *r, size_t n, uint64_t addr)
{
	size_t lo = LOWER_BOUND(n, k, r[k].start <= addr);

	return lo && addr < r[lo - 1].end;
}

/* The ranges [floor, next) of the addresses' symbols, sorted, unique. */
static void collect_ranges(const struct pass *p, struct kallsyms_range **ranges, size_t *nranges)
{
	size_t alloc = 0;

	for (size_t k = 0; k < p->n; k++) {
		if (!p->b[k].has_floor || !p->b[k].has_next ||
		    (*nranges && (*ranges)[*nranges - 1].start == p->b[k].floor))
			continue;
		ALLOC_GROW(*ranges, *nranges + 1, alloc);
		(*ranges)[*nranges].start = p->b[k].floor;
		(*ranges)[*nranges].end = p->b[k].next;
		(*nranges)++;
	}
}

/* Reads fd through buf, a line at a time; -1 if a read fails. */
static int read_lines(int fd, struct pass *p)
{
	char *buf = xmalloc(READ_CHUNK);
	size_t have = 0;
	bool skipping = false;  /* in a line longer than the buffer */
	ssize_t r;
	int e = 0;

	for (;;) {
		char *s = buf, *end, *nl;

		r = read(fd, buf + have, READ_CHUNK - have);
		e = errno;
		if (r < 0 && e == EINTR)
			continue;
		if (r <= 0)
			break;
		end = buf + have + r;
		while ((nl = memchr(s, '\n', (size_t)(end - s)))) {
			if (!skipping)
				take_line(p, s, (size_t)(nl - s));
			skipping = false;
			s = nl + 1;
		}
		have = (size_t)(end - s);
		if (have == READ_CHUNK) {
			skipping = true;
			have = 0;
		} else {
			memmove(buf, s, have);
		}
	}
	if (r == 0 && have && !skipping)
		take_line(p, buf, have);        /* the last line had no newline */
	free(buf);
	if (r < 0)
		errno = e;
	return r < 0 ? -1 : 0;
}

int kallsyms_subset_fd(int fd, const uint64_t *addrs, size_t n, struct strbuf *out,
		       struct kallsyms_range **ranges, size_t *nranges)
{
	struct pass p = { .x = addrs, .n = n, .out = out, .sorted = true };
	size_t out0 = out->len;
	int ret = 0;

	if (ranges) {
		*ranges = NULL;
		*nranges = 0;
	}
	p.b = xcalloc(n + 1, sizeof(*p.b));
	strbuf_init(&p.group, 0);
	strbuf_init(&p.first, 0);
	strbuf_init(&p.tail_text, 0);
	if (read_lines(fd, &p)) {
		ret = -1;
	} else {
		if (p.sorted && p.any)
			close_group(&p, false, 0);
		finish_tail(&p);
		/* All zero: kptr_restrict, or not root. */
		if (!p.nsyms || !p.nonzero)
			ret = 1;
		else if (ranges)
			collect_ranges(&p, ranges, nranges);
	}
	if (ret)
		strbuf_setlen(out, out0);
	free(p.b);
	free(p.tail);
	strbuf_release(&p.group);
	strbuf_release(&p.first);
	strbuf_release(&p.tail_text);
	return ret;
}

int kallsyms_subset(const char *path, const uint64_t *addrs, size_t n, struct strbuf *out,
		    struct kallsyms_range **ranges, size_t *nranges)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	if (ranges) {
		*ranges = NULL;
		*nranges = 0;
	}
	if (fd < 0)
		return errorf_errno("cannot open '%s'", path);
	r = kallsyms_subset_fd(fd, addrs, n, out, ranges, nranges);
	if (r < 0)
		errorf_errno("cannot read '%s'", path);
	close(fd);
	return r;
}
