#include "config.h"
#include "collect/kallsyms.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Parses "ADDR TYPE ..." and says whether it is a text symbol. */
static bool text_symbol(const char *line, uint64_t *addr)
{
	char *end;
	unsigned long long v = strtoull(line, &end, 16);

	if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
		return false;
	*addr = v;
	return strchr("tTwW", end[1]) != NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The whole file: /proc/kallsyms is generated as it is read (the kernel
 * formats every symbol, ~0.1 s), so it is read once, not once a pass.
 */
static int slurp(const char *path, struct strbuf *sb)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return errorf_errno("cannot open '%s'", path);
	do {
		strbuf_grow(sb, 256 << 10);
		r = read(fd, sb->buf + sb->len, sb->alloc - sb->len - 1);
		if (r > 0)
			strbuf_setlen(sb, sb->len + (size_t)r);
	} while (r > 0 || (r < 0 && errno == EINTR));
	close(fd);
	if (r < 0)
		return errorf_errno("cannot read '%s'", path);
	return 0;
}

/* The next line of text (NUL-terminated in place), or NULL at the end. */
static char *next_line(char **p, char *end)
{
	char *line = *p, *nl;

	if (line >= end)
		return NULL;
	nl = memchr(line, '\n', (size_t)(end - line));
	if (nl) {
		*nl = '\0';
		*p = nl + 1;
	} else {
		*p = end;
	}
	return line;
}

/* Reads the addresses of all text symbols, sorted and unique. */
static int read_addrs(char *text, char *end, uint64_t **v, size_t *n, bool *hidden)
{
	size_t alloc = 0, nonzero = 0, k = 0;
	char *line;

	*v = NULL;
	*n = 0;
	while ((line = next_line(&text, end))) {
		uint64_t a;

		if (!text_symbol(line, &a))
			continue;
		ALLOC_GROW(*v, *n + 1, alloc);
		(*v)[(*n)++] = a;
		nonzero += a != 0;
	}
	*hidden = *n && !nonzero;
	if (*n)
		qsort(*v, *n, sizeof(**v), cmp_u64);
	for (size_t i = 0; i < *n; i++)
		if (!k || (*v)[k - 1] != (*v)[i])
			(*v)[k++] = (*v)[i];
	*n = k;
	return 0;
}

/* The index of the greatest element <= x, or n if none. */
static size_t floor_index(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : n;
}

static bool contains(const uint64_t *v, size_t n, uint64_t x)
{
	size_t i = floor_index(v, n, x);

	return i < n && v[i] == x;
}

bool kallsyms_covered(const struct kallsyms_range *r, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < r[lo - 1].end;
}

/* The ranges [syms[j], syms[j + 1]) of the addresses' symbols, sorted, unique. */
static void collect_ranges(const uint64_t *syms, size_t nsyms, const uint64_t *addrs, size_t n,
			   struct kallsyms_range **ranges, size_t *nranges)
{
	size_t alloc = 0, last = nsyms;

	*ranges = NULL;
	*nranges = 0;
	for (size_t i = 0; i < n; i++) {
		size_t j = floor_index(syms, nsyms, addrs[i]);

		/* addrs is sorted: equal symbols come together. */
		if (j == nsyms || j + 1 == nsyms || j == last)
			continue;
		last = j;
		ALLOC_GROW(*ranges, *nranges + 1, alloc);
		(*ranges)[*nranges].start = syms[j];
		(*ranges)[*nranges].end = syms[j + 1];
		(*nranges)++;
	}
}

int kallsyms_subset(const char *path, const uint64_t *addrs, size_t n, struct strbuf *out,
		    struct kallsyms_range **ranges, size_t *nranges)
{
	struct strbuf file = STRBUF_INIT;
	uint64_t *syms, *want;
	size_t nsyms, nwant = 0;
	bool hidden;
	char *p, *end, *line;

	if (slurp(path, &file)) {
		strbuf_release(&file);
		return -1;
	}
	end = file.buf + file.len;
	read_addrs(file.buf, end, &syms, &nsyms, &hidden);
	if (hidden || !nsyms) {
		strbuf_release(&file);
		free(syms);
		return 1;
	}
	want = xcalloc(2 * n + 1, sizeof(*want));
	for (size_t i = 0; i < n; i++) {
		size_t j = floor_index(syms, nsyms, addrs[i]);

		if (j == nsyms)
			continue;
		want[nwant++] = syms[j];
		if (j + 1 < nsyms)
			want[nwant++] = syms[j + 1];
	}
	if (ranges)
		collect_ranges(syms, nsyms, addrs, n, ranges, nranges);
	free(syms);
	if (nwant)
		qsort(want, nwant, sizeof(*want), cmp_u64);
	/* The first pass cut the text into lines: each is followed by its NUL. */
	for (p = file.buf; p < end; p += strlen(p) + 1) {
		uint64_t a;

		line = p;
		if (text_symbol(line, &a) && contains(want, nwant, a)) {
			strbuf_addstr(out, line);
			strbuf_addch(out, '\n');
		}
	}
	strbuf_release(&file);
	free(want);
	return 0;
}
