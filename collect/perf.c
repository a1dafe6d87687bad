/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "collect/perf.h"
#include "core/die.h"
#include "core/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HW_CACHE(cache, op, result) \
	((cache) | (PERF_COUNT_HW_CACHE_OP_##op << 8) | (PERF_COUNT_HW_CACHE_RESULT_##result << 16))

static const struct {
	uint32_t type;
	uint64_t config;
} hw_events[EVENT__COUNT] = {
	[EVENT_CYCLES] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	[EVENT_IMISS] = { PERF_TYPE_HW_CACHE, HW_CACHE(PERF_COUNT_HW_CACHE_L1I, READ, MISS) },
	[EVENT_DMISS] = { PERF_TYPE_HW_CACHE, HW_CACHE(PERF_COUNT_HW_CACHE_L1D, READ, MISS) },
	[EVENT_BRANCHMP] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	[EVENT_DTLBMISS] = { PERF_TYPE_HW_CACHE, HW_CACHE(PERF_COUNT_HW_CACHE_DTLB, READ, MISS) },
	[EVENT_ITLBMISS] = { PERF_TYPE_HW_CACHE, HW_CACHE(PERF_COUNT_HW_CACHE_ITLB, READ, MISS) },
	[EVENT_INSTRUCTIONS] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	[EVENT_CLOCK] = { PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
};

int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
}

/* Opens a counting event of this type on the calling thread. */
static int probe(uint32_t type, uint64_t config)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = config;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.sample_period = 1000000;
	fd = perf_open(&attr, 0, -1, -1);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

int perf_evspec_probe(enum dcpi_event ev, struct perf_evspec *spec, char *why, size_t whysize)
{
	int err;

	memset(spec, 0, sizeof(*spec));
	spec->event = spec->used = ev;
	spec->type = hw_events[ev].type;
	spec->config = hw_events[ev].config;
	spec->time = ev == EVENT_CLOCK;
	err = probe(spec->type, spec->config);
	if (!err)
		return 0;
	if (ev == EVENT_CYCLES) {
		/* No PMU (virtual machines): time the code with the cpu-clock timer. */
		spec->used = EVENT_CLOCK;
		spec->type = hw_events[EVENT_CLOCK].type;
		spec->config = hw_events[EVENT_CLOCK].config;
		spec->time = true;
		err = probe(spec->type, spec->config);
		if (!err)
			return 0;
	}
	if (err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV || err == -EINVAL)
		snprintf(why, whysize, "this machine has no such counter (no PMU?)");
	else
		snprintf(why, whysize, "%s", perf_strerror(-err, false));
	return -1;
}

void perf_attr_init(struct perf_event_attr *attr, const struct perf_evspec *spec,
		    const struct perf_target *target, uint64_t period, bool freq, bool side_band,
		    size_t wakeup_bytes)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = spec->type;
	attr->config = spec->config;
	if (freq) {
		attr->freq = 1;
		attr->sample_freq = period;
	} else {
		attr->sample_period = period;
	}
	attr->sample_type = PERF_COLLECT_SAMPLE_TYPE;
	/* PERF_FORMAT_LOST (Linux 6.0): the samples the kernel could not write. */
	attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
			    PERF_FORMAT_LOST;
	attr->disabled = 1;
	attr->inherit = target->inherit;
	attr->enable_on_exec = target->enable_on_exec;
	attr->exclude_kernel = target->exclude_kernel;
	attr->exclude_hv = 1;
	attr->sample_id_all = 1;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	attr->watermark = 1;
	attr->wakeup_watermark = (uint32_t)wakeup_bytes;
	if (side_band) {
		attr->mmap = 1;   /* the kernel wants mmap with mmap2 */
		attr->mmap2 = 1;
		attr->comm = 1;
		attr->comm_exec = 1;
		attr->task = 1;
		attr->build_id = 1;
	}
}

const char *perf_strerror(int err, bool system_wide)
{
	static char buf[256];

	switch (err) {
	case EACCES:
	case EPERM:
		snprintf(buf, sizeof(buf),
			 "%s: %s needs root or CAP_PERFMON (perf_event_paranoid is %d)", strerror(err),
			 system_wide ? "system-wide sampling" : "sampling the kernel",
			 perf_paranoid());
		return buf;
	case ENOENT:
	case EOPNOTSUPP:
		return "the kernel does not support this event here";
	case ENOSYS:
		return "this kernel has no perf_event support";
	case EMFILE:
		return "too many open files (raise the open-file limit)";
	default:
		return strerror(err);
	}
}

int perf_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = 2;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 2;
		fclose(f);
	}
	return v;
}

/* Parses a sysfs CPU list ("0-3,5,7-8"). */
static int parse_cpulist(const char *s, int **cpus, size_t *n)
{
	size_t alloc = 0;

	*cpus = NULL;
	*n = 0;
	while (*s && *s != '\n') {
		char *end;
		long lo = strtol(s, &end, 10), hi;

		if (end == s || lo < 0 || lo > 65535)
			return -1;
		hi = lo;
		s = end;
		if (*s == '-') {
			hi = strtol(s + 1, &end, 10);
			if (end == s + 1 || hi < lo || hi > 65535)
				return -1;
			s = end;
		}
		for (long c = lo; c <= hi; c++) {
			ALLOC_GROW(*cpus, *n + 1, alloc);
			(*cpus)[(*n)++] = (int)c;
		}
		if (*s == ',')
			s++;
	}
	return *n ? 0 : -1;
}

int perf_online_cpus(int **cpus, size_t *n)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	char line[4096];

	if (f && fgets(line, sizeof(line), f) && !parse_cpulist(line, cpus, n)) {
		fclose(f);
		return 0;
	}
	if (f)
		fclose(f);
	/* No sysfs: assume CPUs 0..N-1 are online. */
	*n = (size_t)sysconf(_SC_NPROCESSORS_ONLN);
	if (!*n)
		*n = 1;
	*cpus = xcalloc(*n, sizeof(**cpus));
	for (size_t i = 0; i < *n; i++)
		(*cpus)[i] = (int)i;
	return 0;
}

/* ---- ring buffers ------------------------------------------------------ */

int perf_ring_map(struct perf_ring *r, int fd, int cpu, unsigned pages)
{
	size_t pgsz = (size_t)sysconf(_SC_PAGESIZE);

	memset(r, 0, sizeof(*r));
	if (!pages || (pages & (pages - 1)))
		BUG("ring pages must be a power of two, not %u", pages);
	r->fd = fd;
	r->cpu = cpu;
	r->data_size = pages * pgsz;
	r->base = mmap(NULL, (pages + 1) * pgsz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return -1;
	}
	r->data = (unsigned char *)r->base + pgsz;
	return 0;
}

void perf_ring_unmap(struct perf_ring *r)
{
	if (r->base)
		munmap(r->base, r->data_size + (size_t)sysconf(_SC_PAGESIZE));
	free(r->bounce);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

static struct perf_event_mmap_page *meta_page(const struct perf_ring *r)
{
	return r->base;
}

static unsigned char *ring_data(const struct perf_ring *r)
{
	return r->data;
}

/* Copies len bytes at ring position pos (which may wrap) into dst. */
static void ring_copy(const struct perf_ring *r, uint64_t pos, void *dst, size_t len)
{
	size_t off = (size_t)(pos & (r->data_size - 1));
	size_t first = len < r->data_size - off ? len : r->data_size - off;

	memcpy(dst, ring_data(r) + off, first);
	memcpy((unsigned char *)dst + first, ring_data(r), len - first);
}

size_t perf_ring_read(struct perf_ring *r, perf_record_fn fn, void *ctx, uint64_t *garbled)
{
	struct perf_event_mmap_page *m = meta_page(r);
	uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = m->data_tail;
	size_t n = 0;

	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		size_t off = (size_t)(tail & (r->data_size - 1));

		ring_copy(r, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > r->data_size || tail + h.size > head) {
			/* Cannot happen with a sane kernel: skip what is there. */
			*garbled += head - tail;
			tail = head;
			break;
		}
		if (off + h.size <= r->data_size) {
			fn(ctx, r->cpu, (const struct perf_event_header *)(ring_data(r) + off));
		} else {
			if (r->bounce_size < h.size) {
				r->bounce = xrealloc(r->bounce, h.size);
				r->bounce_size = h.size;
			}
			ring_copy(r, tail, r->bounce, h.size);
			fn(ctx, r->cpu, (const struct perf_event_header *)r->bounce);
		}
		tail += h.size;
		r->bytes_read += h.size;
		n++;
	}
	__atomic_store_n(&m->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

int perf_set_period(int fd, uint64_t period)
{
	return ioctl(fd, PERF_EVENT_IOC_PERIOD, &period);
}

int perf_read_counts(int fd, struct perf_counts *c)
{
	uint64_t v[4] = { 0, 0, 0, 0 };
	ssize_t n = read(fd, v, sizeof(v));

	/* Without PERF_FORMAT_LOST (older kernels) the value is one field short. */
	if (n != (ssize_t)sizeof(v) && n != (ssize_t)(3 * sizeof(uint64_t)))
		return -1;
	c->enabled = v[1];
	c->running = v[2];
	c->lost = n == (ssize_t)sizeof(v) ? v[3] : 0;
	c->has_lost = n == (ssize_t)sizeof(v);
	return 0;
}

int perf_event_id(int fd, uint64_t *id)
{
	return ioctl(fd, PERF_EVENT_IOC_ID, id);
}
