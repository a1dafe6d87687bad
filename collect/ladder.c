/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "collect/ladder.h"
#include "core/hash.h"
#include "db/meta.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

const char *const ladder_counter[LADDER__COUNT] = {
	"lat_l1_ps", "lat_l2_ps", "lat_l3_ps", "lat_mem_ps",
};

/* The working sets of the cache levels; memory is a set of flushed lines. */
static const size_t ladder_bytes[LADDER_MEM] = {
	16 << 10, 256 << 10, 4 << 20,
};

#define LINE 64
#define LOADS 4000
#define ROUNDS 11
#define HUGE (2u << 20)
/*
 * Memory: MEM_LINES lines MEM_STRIDE apart in one huge page, flushed
 * before each round (the stride keeps the adjacent-line prefetcher from
 * bringing the next one in with its neighbour).
 */
#define MEM_LINES 4096
#define MEM_STRIDE 512

static int64_t thread_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Links n lines of buf, stride bytes apart, into one random cycle; returns the first. */
static void **make_chase(char *buf, size_t n, size_t stride, uint64_t seed)
{
	size_t *order = malloc(n * sizeof(*order));
	void **first;

	if (!order)
		return NULL;
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)(hash_u64(seed + i) % (i + 1)), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (size_t i = 0; i < n; i++)
		*(void **)(buf + order[i] * stride) = buf + order[(i + 1) % n] * stride;
	first = (void **)(buf + order[0] * stride);
	free(order);
	return first;
}

static void flush_lines(const char *buf, size_t n, size_t stride)
{
#if defined(__x86_64__) || defined(__i386__)
	for (size_t i = 0; i < n; i++)
		__asm__ volatile("clflush (%0)" : : "r"(buf + i * stride) : "memory");
	__asm__ volatile("mfence" : : : "memory");
#else
	(void)buf, (void)n, (void)stride;
#endif
}

/*
 * Nanoseconds a load, the least of ROUNDS rounds, timed by the thread's
 * CPU clock (time the thread did not run is not in it: this machine is
 * shared).  With flush, the n lines are flushed before each round.
 */
static double chase(void **p, size_t loads, const char *flush, size_t n, size_t stride)
{
	double best = 0;

	for (int round = 0; round < ROUNDS; round++) {
		if (flush)
			flush_lines(flush, n, stride);
		int64_t t0 = thread_ns();

		for (size_t i = 0; i < loads; i++)
			p = (void **)*p;
		__asm__ volatile("" : : "r"(p) : "memory");
		double ns = (double)(thread_ns() - t0) / (double)loads;

		if (!round || ns < best)
			best = ns;
	}
	return best;
}

int ladder_measure(struct ladder *l)
{
	int64_t t0 = thread_ns();
	size_t max = ladder_bytes[LADDER_MEM - 1] + HUGE;
	char *map = mmap(NULL, max + HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *buf, *mem;
	void **first;

	memset(l, 0, sizeof(*l));
	if (map == MAP_FAILED)
		return -1;
	/*
	 * Huge pages where the kernel gives them: a few faults instead of
	 * thousands (a fault costs tens of microseconds in this VM), and the
	 * chase measures the caches and memory rather than page walks.
	 */
	buf = (char *)(((uintptr_t)map + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
	madvise(buf, max, MADV_HUGEPAGE);
	for (int k = 0; k < LADDER_MEM; k++) {
		size_t n = ladder_bytes[k] / LINE;

		first = make_chase(buf, n, LINE, 0x1adde7 + (uint64_t)k);
		if (!first)
			goto out;
		/* warm: the caches (make_chase faulted the pages in) */
		chase(first, n < LOADS ? n : LOADS, NULL, 0, 0);
		l->ns[k] = chase(first, LOADS, NULL, 0, 0);
	}
	/*
	 * Memory: flushed lines rather than a set larger than the caches (64
	 * MiB took 0.4 s of faults in this VM, a fifth of a two-second run).
	 */
	mem = buf + ladder_bytes[LADDER_MEM - 1];
	first = make_chase(mem, MEM_LINES, MEM_STRIDE, 0x1adde7 + LADDER_MEM);
	if (first)
		l->ns[LADDER_MEM] = chase(first, LOADS, mem, MEM_LINES, MEM_STRIDE);
out:
	munmap(map, max + HUGE);
	l->cost_ns = thread_ns() - t0;
	return 0;
}

void ladder_to_meta(const struct ladder *l, struct epoch_meta *m)
{
	for (int k = 0; k < LADDER__COUNT; k++)
		if (l->ns[k] > 0)
			epoch_meta_set_counter(m, ladder_counter[k], (uint64_t)(l->ns[k] * 1000 + 0.5));
}
