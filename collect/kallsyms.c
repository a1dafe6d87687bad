#include "config.h"
#include "collect/kallsyms.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Reads the addresses of all text symbols, sorted and unique. */
static int read_addrs(FILE *f, uint64_t **v, size_t *n, bool *hidden)
{
	char line[1024];
	size_t alloc = 0, nonzero = 0, k = 0;

	*v = NULL;
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
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
	FILE *f = fopen(path, "re");
	uint64_t *syms, *want;
	size_t nsyms, nwant = 0;
	bool hidden;
	char line[1024];

	if (!f)
		return errorf_errno("cannot open '%s'", path);
	read_addrs(f, &syms, &nsyms, &hidden);
	if (hidden || !nsyms) {
		fclose(f);
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
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		uint64_t a;

		if (text_symbol(line, &a) && contains(want, nwant, a))
			strbuf_addstr(out, line);
	}
	fclose(f);
	free(want);
	return 0;
}
