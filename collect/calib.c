/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "collect/calib.h"
#include "core/die.h"
#include "db/meta.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <asm/perf_regs.h>

/*
 * uint64_t calib_loop(uint64_t n, uint64_t start): rax counts the adds.
 * Eight dependent adds an iteration, so one iteration is 8 cycles (the
 * dec/jnz pair is one macro-op beside them); n = 0 runs once like n = 1 is
 * not allowed: callers pass n >= 1.  Aligned so that the body sits in one
 * 32-byte fetch block.
 */
__asm__(".text\n"
	".p2align 6\n"
	".globl calib_loop\n"
	".type calib_loop, @function\n"
	"calib_loop:\n"
	"\tmov %rsi, %rax\n"
	"\tmov %rdi, %rcx\n"
	"\t.p2align 5\n"
	".globl calib_loop_body\n"
	"calib_loop_body:\n"
	"\tadd $1, %rax\n\tadd $1, %rax\n\tadd $1, %rax\n\tadd $1, %rax\n"
	"\tadd $1, %rax\n\tadd $1, %rax\n\tadd $1, %rax\n\tadd $1, %rax\n"
	"\tdec %rcx\n"
	"\tjnz calib_loop_body\n"
	".globl calib_loop_end\n"
	"calib_loop_end:\n"
	"\tret\n"
	".size calib_loop, .-calib_loop\n");

#define CALIB_CYCLES_PER_ITER 8
#define CALIB_RING_PAGES 32          /* 128 KiB: 4096 samples of 32 bytes */
#define CALIB_MIN_NS (20 * 1000000LL)   /* sampled loop time at least */
#define CALIB_MAX_NS (120 * 1000000LL)  /* and at most */
#define CALIB_MIN_INTERVALS 16          /* wanted: keep going until this many (up to MAX_NS) */
#define CALIB_LEAST_INTERVALS 4         /* fewer: no result */

bool calib_supported(void)
{
	return true;
}

static int64_t thread_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* The loop's clock without sampling (MHz): the faster of two ~1 ms runs. */
static double unsampled_mhz(void)
{
	uint64_t n = 50000;   /* 0.4M cycles */
	double best = 0;
	int64_t t;

	/* Size the runs to ~1 ms at the clock a first short run shows. */
	t = thread_ns();
	calib_loop(n, 0);
	t = thread_ns() - t;
	if (t > 0)
		n = (uint64_t)(1e6 * (double)(n * CALIB_CYCLES_PER_ITER) / (double)t /
			       CALIB_CYCLES_PER_ITER) + 1;
	if (n > 10000000)
		n = 10000000;
	for (int k = 0; k < 2; k++) {
		t = thread_ns();
		calib_loop(n, 0);
		t = thread_ns() - t;
		if (t > 0 && (double)(n * CALIB_CYCLES_PER_ITER) * 1000.0 / (double)t > best)
			best = (double)(n * CALIB_CYCLES_PER_ITER) * 1000.0 / (double)t;
	}
	return best;
}

/* Spans of consecutive samples in the loop: their counters and intervals. */
struct spans {
	bool open;
	uint64_t first, last;       /* the counter at the span's first and last loop sample */
	uint64_t n;                 /* samples after the first, up to the last loop sample */
	uint64_t pending;           /* samples outside the loop since the last loop sample */
	double cycles;              /* closed spans */
	uint64_t intervals;
};

static void span_close(struct spans *s)
{
	if (s->open && s->n) {
		s->cycles += (double)(s->last - s->first);
		s->intervals += s->n;
	}
	s->open = false;
}

static void span_sample(struct spans *s, uint64_t ip, bool has_reg, uint64_t ax)
{
	bool in = has_reg && ip >= (uint64_t)(uintptr_t)calib_loop_body &&
		  ip <= (uint64_t)(uintptr_t)calib_loop_end;

	if (!in) {
		s->pending++;
		return;
	}
	if (!s->open || ax < s->last) {
		span_close(s);
		s->open = true;
		s->first = s->last = ax;
		s->n = s->pending = 0;
		return;
	}
	s->n += s->pending + 1;
	s->pending = 0;
	s->last = ax;
}

/* Reads the samples in the ring (which never wrapped: the caller stops before). */
static void read_ring(void *base, size_t pgsz, struct spans *s)
{
	struct perf_event_mmap_page *m = base;
	uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
	const unsigned char *data = (const unsigned char *)base + pgsz;

	for (uint64_t pos = 0; pos + sizeof(struct perf_event_header) <= head;) {
		const struct perf_event_header *h = (const void *)(data + pos);
		const uint64_t *v = (const uint64_t *)(h + 1);

		if (h->size < sizeof(*h) || pos + h->size > head)
			break;
		if (h->type == PERF_RECORD_SAMPLE && h->size >= sizeof(*h) + 2 * sizeof(uint64_t))
			span_sample(s, v[0], v[1] != PERF_SAMPLE_REGS_ABI_NONE &&
					     h->size >= sizeof(*h) + 3 * sizeof(uint64_t),
				    h->size >= sizeof(*h) + 3 * sizeof(uint64_t) ? v[2] : 0);
		else if (h->type == PERF_RECORD_LOST)
			span_close(s);  /* how many were lost is unknown: a new span */
		pos += h->size;
	}
	span_close(s);
}

static uint64_t ring_head(void *base)
{
	return __atomic_load_n(&((struct perf_event_mmap_page *)base)->data_head,
			       __ATOMIC_ACQUIRE);
}

/* Runs the loop under sampling until enough intervals or time; fills s. */
static void sampled_run(int fd, void *base, size_t pgsz, double mhz, uint64_t period,
			struct spans *s)
{
	/* Chunks of ~1 ms; between them only the ring's head is looked at. */
	uint64_t chunk = (uint64_t)(mhz * 1000.0 / CALIB_CYCLES_PER_ITER) + 1;
	uint64_t counter = 0, limit = (CALIB_RING_PAGES * pgsz) / 32 - 64;
	int64_t spent = 0, min_ns = CALIB_MIN_NS;

	/* Low rates: time for CALIB_MIN_INTERVALS intervals, if under the cap. */
	if ((int64_t)period * (CALIB_MIN_INTERVALS + 2) > min_ns)
		min_ns = (int64_t)period * (CALIB_MIN_INTERVALS + 2);
	if (min_ns > CALIB_MAX_NS)
		min_ns = CALIB_MAX_NS;
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	while (spent < min_ns && ring_head(base) / 32 < limit) {
		counter = calib_loop(chunk, counter);
		/* The loop's own cycles at the unsampled clock: no syscall in between. */
		spent += (int64_t)((double)(chunk * CALIB_CYCLES_PER_ITER) * 1000.0 / mhz);
	}
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	read_ring(base, pgsz, s);
}

int calib_measure(const struct perf_evspec *spec, uint64_t period, struct calib_result *r,
		  char *why, size_t whysize)
{
	struct perf_event_attr attr;
	size_t pgsz = (size_t)sysconf(_SC_PAGESIZE);
	struct spans s;
	int64_t t0 = thread_ns();
	void *base;
	int fd;

	memset(r, 0, sizeof(*r));
	memset(&s, 0, sizeof(s));
	if (!spec->time || !period) {
		snprintf(why, whysize, "not a time event");
		return -1;
	}
	r->mhz = unsampled_mhz();
	if (!(r->mhz > 50 && r->mhz < 50000)) {
		snprintf(why, whysize, "implausible clock %.0f MHz", r->mhz);
		return -1;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = spec->type;
	attr.config = spec->config;
	attr.sample_period = period;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_REGS_USER;
	attr.sample_regs_user = 1ULL << PERF_REG_X86_AX;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	if ((fd = perf_open(&attr, 0, -1, -1)) < 0) {
		snprintf(why, whysize, "cannot open the event: %s", strerror(errno));
		return -1;
	}
	base = mmap(NULL, (CALIB_RING_PAGES + 1) * pgsz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		snprintf(why, whysize, "cannot map its ring buffer: %s", strerror(errno));
		close(fd);
		return -1;
	}
	sampled_run(fd, base, pgsz, r->mhz, period, &s);
	munmap(base, (CALIB_RING_PAGES + 1) * pgsz);
	close(fd);
	r->cost_ns = thread_ns() - t0;
	if (s.intervals < CALIB_LEAST_INTERVALS) {
		snprintf(why, whysize, "only %llu sample intervals in the loop",
			 (unsigned long long)s.intervals);
		return -1;
	}
	r->intervals = s.intervals;
	r->cycles = s.cycles / (double)s.intervals;
	return 0;
}

#else /* !__x86_64__ */

bool calib_supported(void)
{
	return false;
}

uint64_t calib_loop(uint64_t n, uint64_t start)
{
	return start + 8 * n;
}

const unsigned char calib_loop_body[1], calib_loop_end[1];

int calib_measure(const struct perf_evspec *spec, uint64_t period, struct calib_result *r,
		  char *why, size_t whysize)
{
	(void)spec, (void)period;
	memset(r, 0, sizeof(*r));
	snprintf(why, whysize, "no calibration loop for this architecture");
	return -1;
}

#endif

void calib_accumulate(struct epoch_calib *acc, const struct calib_result *r)
{
	double n = (double)acc->intervals, k = (double)r->intervals;

	if (!r->intervals)
		return;
	acc->cycles = (acc->cycles * n + r->cycles * k) / (n + k);
	acc->mhz = acc->mhz > 0 ? (acc->mhz * n + r->mhz * k) / (n + k) : r->mhz;
	acc->intervals += r->intervals;
	if (!acc->how[0])
		strcpy(acc->how, "addloop");
}
