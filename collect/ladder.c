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

static const size_t ladder_bytes[LADDER__COUNT] = {
	16 << 10, 256 << 10, 4 << 20, 64 << 20,
};

#define LINE 64
#define LOADS 4000
#define ROUNDS 11

static int64_t thread_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Links the lines of buf (n of them) into one random cycle; returns the first. */
static void **make_chase(char *buf, size_t n, uint64_t seed)
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
		*(void **)(buf + order[i] * LINE) = buf + order[(i + 1) % n] * LINE;
	first = (void **)(buf + order[0] * LINE);
	free(order);
	return first;
}

/*
 * Nanoseconds a load, the least of ROUNDS rounds, timed by the thread's
 * CPU clock (time the thread did not run is not in it: this machine is
 * shared).
 */
static double chase(void **p, size_t loads)
{
	double best = 0;

	for (int round = 0; round < ROUNDS; round++) {
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
	size_t max = ladder_bytes[LADDER__COUNT - 1], huge = 2 << 20;
	char *map = mmap(NULL, max + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *buf;

	memset(l, 0, sizeof(*l));
	if (map == MAP_FAILED)
		return -1;
	/*
	 * Huge pages where the kernel gives them: 32 faults instead of 16384
	 * (a fault costs tens of microseconds in this VM), and the chase
	 * measures the caches and memory rather than page walks.
	 */
	buf = (char *)(((uintptr_t)map + huge - 1) & ~(uintptr_t)(huge - 1));
	madvise(buf, max, MADV_HUGEPAGE);
	for (int k = 0; k < LADDER__COUNT; k++) {
		void **first = make_chase(buf, ladder_bytes[k] / LINE, 0x1adde7 + (uint64_t)k);

		if (!first)
			break;
		/* warm: the caches (make_chase faulted the pages in) */
		chase(first, ladder_bytes[k] / LINE < LOADS ? ladder_bytes[k] / LINE : LOADS);
		l->ns[k] = chase(first, LOADS);
	}
	munmap(map, max + huge);
	l->cost_ns = thread_ns() - t0;
	return 0;
}

void ladder_to_meta(const struct ladder *l, struct epoch_meta *m)
{
	for (int k = 0; k < LADDER__COUNT; k++)
		if (l->ns[k] > 0)
			epoch_meta_set_counter(m, ladder_counter[k], (uint64_t)(l->ns[k] * 1000 + 0.5));
}
