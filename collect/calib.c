/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "collect/calib.h"
#include "core/die.h"
#include "db/meta.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <asm/perf_regs.h>

/*
 * uint64_t calib_loop(uint64_t n, uint64_t start): rax counts the adds.
 * Eight dependent adds of a register an iteration, so one iteration is 8
 * cycles (the dec/jnz pair is one macro-op beside them); n = 0 is not
 * allowed: callers pass n >= 1.  Aligned so that the body sits in one
 * 32-byte fetch block.  Not `add $1, %rax`: Golden Cove-class cores fold
 * chains of add-immediates in the renamer and run several a cycle
 * (measured on a Sapphire Rapids host: 15.4 a ns against 4.0 for register
 * adds and a 4.0 GHz imul chain), which made the clock 4-5 times too fast.
 */
__asm__(".text\n"
	".p2align 6\n"
	".globl calib_loop\n"
	".type calib_loop, @function\n"
	"calib_loop:\n"
	"\tmov %rsi, %rax\n"
	"\tmov %rdi, %rcx\n"
	"\tmov $1, %edx\n"
	"\t.p2align 5\n"
	".globl calib_loop_body\n"
	"calib_loop_body:\n"
	"\tadd %rdx, %rax\n\tadd %rdx, %rax\n\tadd %rdx, %rax\n\tadd %rdx, %rax\n"
	"\tadd %rdx, %rax\n\tadd %rdx, %rax\n\tadd %rdx, %rax\n\tadd %rdx, %rax\n"
	"\tdec %rcx\n"
	"\tjnz calib_loop_body\n"
	".globl calib_loop_end\n"
	"calib_loop_end:\n"
	"\tret\n"
	".size calib_loop, .-calib_loop\n");

/*
 * The check and the core's signatures (docs/collect.md, "Calibration"):
 * loops of n iterations whose cycles are known from one latency or width,
 * each timed unsampled.  Each returns something the caller passes on, so
 * that nothing is optimised away.
 *   calib_imul_loop:   8 dependent imul r64 (3 cycles each on every x86-64
 *                      core since Nehalem and Zen): 24 cycles an iteration
 *   calib_addimm_loop: 8 dependent add $1 (1 each, unless the core folds them)
 *   calib_width_loop:  12 independent register adds: the integer units
 *   calib_load_loop:   8 dependent loads of a pointer to itself: load-to-use
 *   calib_div_loop:    4 dependent 64-bit divides of 1 by 1
 */
__asm__(".text\n"
	".p2align 6\n"
	".type calib_imul_loop, @function\n"
	"calib_imul_loop:\n"
	"\tmov $1, %eax\n"
	"\tmov $1, %edx\n"
	"\t.p2align 5\n"
	"1:\n"
	"\timul %rdx, %rax\n\timul %rdx, %rax\n\timul %rdx, %rax\n\timul %rdx, %rax\n"
	"\timul %rdx, %rax\n\timul %rdx, %rax\n\timul %rdx, %rax\n\timul %rdx, %rax\n"
	"\tdec %rdi\n"
	"\tjnz 1b\n"
	"\tret\n"
	".size calib_imul_loop, .-calib_imul_loop\n"
	".p2align 6\n"
	".type calib_addimm_loop, @function\n"
	"calib_addimm_loop:\n"
	"\txor %eax, %eax\n"
	"\t.p2align 5\n"
	"1:\n"
	"\tadd $1, %rax\n\tadd $1, %rax\n\tadd $1, %rax\n\tadd $1, %rax\n"
	"\tadd $1, %rax\n\tadd $1, %rax\n\tadd $1, %rax\n\tadd $1, %rax\n"
	"\tdec %rdi\n"
	"\tjnz 1b\n"
	"\tret\n"
	".size calib_addimm_loop, .-calib_addimm_loop\n"
	".p2align 6\n"
	".type calib_width_loop, @function\n"
	"calib_width_loop:\n"
	"\tpush %rbx\n\tpush %r12\n\tpush %r13\n\tpush %r14\n\tpush %r15\n"
	"\tmov $1, %edx\n"
	"\txor %eax, %eax\n\txor %ebx, %ebx\n\txor %ecx, %ecx\n\txor %esi, %esi\n"
	"\txor %r8d, %r8d\n\txor %r9d, %r9d\n\txor %r10d, %r10d\n\txor %r11d, %r11d\n"
	"\txor %r12d, %r12d\n\txor %r13d, %r13d\n\txor %r14d, %r14d\n\txor %r15d, %r15d\n"
	"\t.p2align 5\n"
	"1:\n"
	"\tadd %rdx, %rax\n\tadd %rdx, %rbx\n\tadd %rdx, %rcx\n\tadd %rdx, %rsi\n"
	"\tadd %rdx, %r8\n\tadd %rdx, %r9\n\tadd %rdx, %r10\n\tadd %rdx, %r11\n"
	"\tadd %rdx, %r12\n\tadd %rdx, %r13\n\tadd %rdx, %r14\n\tadd %rdx, %r15\n"
	"\tdec %rdi\n"
	"\tjnz 1b\n"
	"\tadd %rbx, %rax\n\tadd %r15, %rax\n"
	"\tpop %r15\n\tpop %r14\n\tpop %r13\n\tpop %r12\n\tpop %rbx\n"
	"\tret\n"
	".size calib_width_loop, .-calib_width_loop\n"
	".p2align 6\n"
	".type calib_load_loop, @function\n"
	"calib_load_loop:\n"
	"\tlea -8(%rsp), %rax\n"
	"\tmov %rax, (%rax)\n"
	"\t.p2align 5\n"
	"1:\n"
	"\tmov (%rax), %rax\n\tmov (%rax), %rax\n\tmov (%rax), %rax\n\tmov (%rax), %rax\n"
	"\tmov (%rax), %rax\n\tmov (%rax), %rax\n\tmov (%rax), %rax\n\tmov (%rax), %rax\n"
	"\tdec %rdi\n"
	"\tjnz 1b\n"
	"\tret\n"
	".size calib_load_loop, .-calib_load_loop\n"
	".p2align 6\n"
	".type calib_div_loop, @function\n"
	"calib_div_loop:\n"
	"\tmov %rdi, %rsi\n"
	"\tmov $1, %eax\n"
	"\tmov $1, %ecx\n"
	"\t.p2align 5\n"
	"1:\n"
	"\txor %edx, %edx\n\tdiv %rcx\n\txor %edx, %edx\n\tdiv %rcx\n"
	"\txor %edx, %edx\n\tdiv %rcx\n\txor %edx, %edx\n\tdiv %rcx\n"
	"\tdec %rsi\n"
	"\tjnz 1b\n"
	"\tret\n"
	".size calib_div_loop, .-calib_div_loop\n");

uint64_t calib_imul_loop(uint64_t n);
uint64_t calib_addimm_loop(uint64_t n);
uint64_t calib_width_loop(uint64_t n);
uint64_t calib_load_loop(uint64_t n);
uint64_t calib_div_loop(uint64_t n);

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

/* Nanoseconds of the thread's CPU for n iterations of loop: the least of runs. */
static double least_ns(uint64_t (*loop)(uint64_t), uint64_t n, int runs, uint64_t *sink)
{
	double best = 0;

	for (int k = 0; k < runs; k++) {
		int64_t t = thread_ns();

		*sink += loop(n);
		t = thread_ns() - t;
		if (t > 0 && (!best || (double)t < best))
			best = (double)t;
	}
	return best;
}

static uint64_t add_chain(uint64_t n)
{
	return calib_loop(n, 0);
}

/* Iterations of a loop of `cycles` cycles that take about `ns` at mhz. */
static uint64_t iterations(double mhz, double cycles, double ns)
{
	double n = ns * mhz / 1000.0 / cycles;

	return n < 1000 ? 1000 : n > 1e7 ? 10000000 : (uint64_t)n;
}

/*
 * The TSC's rate in MHz over the span since (tsc0, ns0), where the kernel
 * trusts the TSC (a constant rate it knows: tsc_known_freq); else 0.
 */
static bool tsc_trusted(void)
{
	static int known = -1;

	if (known < 0) {
		FILE *f = fopen("/proc/cpuinfo", "r");
		char line[4096];

		known = 0;
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "flags", 5)) {
				known = strstr(line, " tsc_known_freq") && strstr(line, " constant_tsc");
				break;
			}
		if (f)
			fclose(f);
	}
	return known > 0;
}

static int64_t mono_raw_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_RAW, &t);
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static double tsc_mhz_since(uint64_t tsc0, int64_t ns0)
{
	int64_t ns = mono_raw_ns() - ns0;
	uint64_t tsc = __builtin_ia32_rdtsc() - tsc0;

	return ns > 1000000 ? (double)tsc * 1000.0 / (double)ns : 0;
}

/* Where the two clocks agree; turns of the two chains taken, at least and at most. */
#define CALIB_AGREE EPOCH_CALIB_AGREE
#define CALIB_TURNS_MIN 2
#define CALIB_TURNS_MAX 8

/*
 * The unsampled clocks and the core's signatures: the register-add chain's
 * clock (the sampled loop's own, to size it), checked against the imul
 * chain's, whose latency no core shortens; then what the model is chosen
 * by (collect/calib.h).
 */
static void unsampled(struct calib_result *r, bool signatures)
{
	uint64_t n = 50000, sink = 0;
	double t;

	/* Size ~1 ms runs at the clock a first short run shows. */
	t = least_ns(add_chain, n, 1, &sink);
	if (t > 0)
		n = iterations(8 * (double)n * 1000.0 / t, 8, 1e6);
	if ((t = least_ns(add_chain, n, 2, &sink)) > 0)
		r->mhz = 8 * (double)n * 1000.0 / t;
	if (!(r->mhz > 0))
		return;
	/*
	 * The two chains in turns, the fastest run of each kept: a busy
	 * sibling thread or a clock that moved slows one run, not the least
	 * of several, and more turns are taken while the two disagree (a core
	 * that folds the adds disagrees in every turn).
	 */
	{
		uint64_t na = n, ni = iterations(r->mhz, 24, 1e6);
		double ta = t, ti = 0;

		for (int turn = 0; turn < CALIB_TURNS_MAX; turn++) {
			double a = least_ns(add_chain, na, 1, &sink);
			double i = least_ns(calib_imul_loop, ni, 1, &sink);

			if (a > 0 && (!(ta > 0) || a < ta))
				ta = a;
			if (i > 0 && (!(ti > 0) || i < ti))
				ti = i;
			if (turn + 1 >= CALIB_TURNS_MIN && ta > 0 && ti > 0 &&
			    fabs((8 * (double)na / ta) / (24 * (double)ni / ti) - 1) <= CALIB_AGREE)
				break;
		}
		if (ta > 0)
			r->mhz = 8 * (double)na * 1000.0 / ta;
		if (ti > 0)
			r->imul_mhz = 24 * (double)ni * 1000.0 / ti;
	}
	if (!signatures)
		goto out;
	/* the signatures, in cycles of the checked clock */
	{
		double mhz = r->imul_mhz > 0 ? r->imul_mhz : r->mhz, cyc;

		n = iterations(mhz, 8, 5e5);
		if ((t = least_ns(calib_addimm_loop, n, 2, &sink)) > 0 &&
		    (cyc = t * mhz / 1000.0 / (double)n) > 0)
			r->sig.addimm_per_cycle = 8 / cyc;
		n = iterations(mhz, 3, 5e5);
		if ((t = least_ns(calib_width_loop, n, 2, &sink)) > 0 &&
		    (cyc = t * mhz / 1000.0 / (double)n) > 0)
			r->sig.alu_per_cycle = 12 / cyc;
		n = iterations(mhz, 40, 5e5);
		if ((t = least_ns(calib_load_loop, n, 2, &sink)) > 0)
			r->sig.load_lat = t * mhz / 1000.0 / (double)n / 8;
		n = iterations(mhz, 60, 5e5);
		if ((t = least_ns(calib_div_loop, n, 2, &sink)) > 0)
			r->sig.div_lat = t * mhz / 1000.0 / (double)n / 4;
		r->sig.have = r->sig.addimm_per_cycle > 0 && r->sig.alu_per_cycle > 0 &&
			      r->sig.load_lat > 0 && r->sig.div_lat > 0;
	}
out:
	/* keeps the loops' results alive */
	__asm__ volatile("" : : "r"(sink));
}

/*
 * Which clock the cycles are counted in, and how sure it is: the register
 * adds' when the imul chain agrees (within CALIB_AGREE), else the imul's
 * (adds faster than one a cycle are shortened by the core; slower, the
 * clock moved between the runs: either way the imul chain cannot be
 * shortened).  A clock outside CALIB_TSC_LO..HI times the TSC's rate is
 * implausible: its error says so.
 */
#define CALIB_ERROR_FLOOR 0.01
#define CALIB_TSC_LO 0.4
#define CALIB_TSC_HI 2.5

/*
 * A test hook: DCPI_TEST_CALIB_FOLD=K makes the register adds read as if
 * the core ran K of them a cycle (as Golden Cove-class cores run
 * add-immediates), so that a test sees the check catch it on any host.
 */
static double test_fold(void)
{
	const char *v = getenv("DCPI_TEST_CALIB_FOLD");
	double k = v ? strtod(v, NULL) : 1;

	return k >= 0.1 && k <= 16 ? k : 1;
}

static void check_clock(struct calib_result *r)
{
	double clock, d;

	snprintf(r->how, sizeof(r->how), "regadd");
	r->scale = 1;
	r->error = CALIB_ERROR_FLOOR;
	if (!(r->imul_mhz > 0) || !(r->mhz > 0))
		return;
	d = r->mhz / r->imul_mhz - 1;
	clock = r->mhz;
	if (fabs(d) > CALIB_AGREE) {
		snprintf(r->how, sizeof(r->how), "imul");
		r->scale = r->imul_mhz / r->mhz;
		clock = r->imul_mhz;
	}
	if (fabs(d) > r->error)
		r->error = fabs(d);
	if (r->tsc_mhz > 0 && (clock < CALIB_TSC_LO * r->tsc_mhz || clock > CALIB_TSC_HI * r->tsc_mhz)) {
		double off = clock / r->tsc_mhz;

		off = off > 1 ? off - 1 : 1 / off - 1;
		if (off > r->error)
			r->error = off;
	}
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

int calib_measure(const struct perf_evspec *spec, uint64_t period, bool signatures,
		  struct calib_result *r, char *why, size_t whysize)
{
	struct perf_event_attr attr;
	size_t pgsz = (size_t)sysconf(_SC_PAGESIZE);
	struct spans s;
	int64_t t0 = thread_ns(), raw0 = mono_raw_ns();
	uint64_t tsc0 = __builtin_ia32_rdtsc();
	void *base;
	int fd;

	memset(r, 0, sizeof(*r));
	memset(&s, 0, sizeof(s));
	if (!spec->time || !period) {
		snprintf(why, whysize, "not a time event");
		return -1;
	}
	unsampled(r, signatures);
	r->mhz *= test_fold();
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
	sampled_run(fd, base, pgsz, r->mhz / test_fold(), period, &s);
	munmap(base, (CALIB_RING_PAGES + 1) * pgsz);
	close(fd);
	if (tsc_trusted())
		r->tsc_mhz = tsc_mhz_since(tsc0, raw0);
	check_clock(r);
	r->cost_ns = thread_ns() - t0;
	if (s.intervals < CALIB_LEAST_INTERVALS) {
		snprintf(why, whysize, "only %llu sample intervals in the loop",
			 (unsigned long long)s.intervals);
		return -1;
	}
	r->intervals = s.intervals;
	/* the adds counted, in cycles of the checked clock */
	r->cycles = s.cycles * test_fold() / (double)s.intervals * r->scale;
	r->mhz *= r->scale;
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

int calib_measure(const struct perf_evspec *spec, uint64_t period, bool signatures,
		  struct calib_result *r, char *why, size_t whysize)
{
	(void)spec, (void)period, (void)signatures;
	memset(r, 0, sizeof(*r));
	snprintf(why, whysize, "no calibration loop for this architecture");
	return -1;
}

#endif

/* The interval-weighted mean of a and b (b alone where a is unknown). */
static double weigh(double a, double n, double b, double k)
{
	if (!(a > 0))
		return b;
	if (!(b > 0))
		return a;
	return (a * n + b * k) / (n + k);
}

void calib_accumulate(struct epoch_calib *acc, const struct calib_result *r)
{
	double n = (double)acc->intervals, k = (double)r->intervals;

	if (!r->intervals)
		return;
	acc->cycles = (acc->cycles * n + r->cycles * k) / (n + k);
	acc->mhz = weigh(acc->mhz, n, r->mhz, k);
	acc->imul_mhz = weigh(acc->imul_mhz, n, r->imul_mhz, k);
	acc->tsc_mhz = weigh(acc->tsc_mhz, n, r->tsc_mhz, k);
	/* the least sure measurement's error holds for the merge */
	if (r->error > acc->error)
		acc->error = r->error;
	acc->intervals += r->intervals;
	/* a merge with an older method, or of runs that used different clocks, says the worse */
	if (!acc->how[0] || !strcmp(r->how, "imul") || !strcmp(acc->how, "addloop"))
		snprintf(acc->how, sizeof(acc->how), "%s", r->how[0] ? r->how : "regadd");
}


