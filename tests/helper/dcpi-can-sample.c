/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dcpi-can-sample - can this machine sample with perf_event?  The tests
 * decide whether to run their sampling checks from what the kernel says, never
 * from dcpi's own collector (which is what they check: a broken dcpirun must
 * fail them, not make them skip).  It opens a cpu-clock sampling event on
 * itself with perf_event_open(2), maps its ring buffer and spins until a
 * sample arrives.  It links nothing of dcpi.
 *
 *   dcpi-can-sample [--kernel]
 *   dcpi-can-sample --counter cycles|instructions|imiss
 *
 * --kernel asks for kernel samples too (exclude_kernel=0); without it user
 * space only is enough (what perf_event_paranoid=2 allows an ordinary user).
 * --counter asks whether the processor counts cycles, retired instructions
 * or instruction-cache misses (a PMU; virtual machines often have none):
 * the event opens.
 * Exit 0 if it can; 1 if it cannot, with the reason on stdout (one line: the
 * tests put it in their SKIP); 2 on bad usage.
 */
#include "config.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int p = -100;

	if (f) {
		if (fscanf(f, "%d", &p) != 1)
			p = -100;
		fclose(f);
	}
	return p;
}

static int cannot(const char *what, int err)
{
	int p = paranoid();

	if (p == -100)
		printf("%s: %s (no /proc/sys/kernel/perf_event_paranoid: no perf_event support?)\n",
		       what, strerror(err));
	else
		printf("%s: %s (perf_event_paranoid=%d, uid %d)\n", what, strerror(err), p,
		       (int)getuid());
	return 1;
}

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int open_event(struct perf_event_attr *attr, int kernel)
{
	int fd;

	attr->exclude_kernel = 0;
	fd = (int)syscall(SYS_perf_event_open, attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && !kernel && (errno == EACCES || errno == EPERM)) {
		attr->exclude_kernel = 1;
		fd = (int)syscall(SYS_perf_event_open, attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	return fd;
}

static int has_counter(struct perf_event_attr *attr, const char *name)
{
	int fd;

	if (!strcmp(name, "cycles")) {
		attr->type = PERF_TYPE_HARDWARE;
		attr->config = PERF_COUNT_HW_CPU_CYCLES;
	} else if (!strcmp(name, "instructions")) {
		attr->type = PERF_TYPE_HARDWARE;
		attr->config = PERF_COUNT_HW_INSTRUCTIONS;
	} else if (!strcmp(name, "imiss")) {
		attr->type = PERF_TYPE_HW_CACHE;
		attr->config = PERF_COUNT_HW_CACHE_L1I | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
			       (PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
	} else {
		fprintf(stderr, "dcpi-can-sample: unknown counter '%s' (cycles, instructions, imiss)\n", name);
		return 2;
	}
	fd = open_event(attr, 0);
	if (fd < 0) {
		printf("no %s counter: perf_event_open: %s\n", name, strerror(errno));
		return 1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct perf_event_attr attr;
	struct perf_event_mmap_page *meta;
	long page = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)page * 2;
	int kernel = 0, fd;
	volatile uint64_t x = 1;
	double t0;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = 1000000; /* 1 ms of this task's CPU time */
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	attr.exclude_hv = 1;
	attr.wakeup_events = 1;
	if (argc == 3 && !strcmp(argv[1], "--counter"))
		return has_counter(&attr, argv[2]);
	if (argc == 2 && !strcmp(argv[1], "--kernel"))
		kernel = 1;
	else if (argc != 1) {
		fprintf(stderr, "usage: dcpi-can-sample [--kernel]\n"
				"       dcpi-can-sample --counter cycles|instructions|imiss\n");
		return 2;
	}
	fd = open_event(&attr, kernel);
	if (fd < 0)
		return cannot(kernel ? "perf_event_open(cpu-clock, kernel and user)"
				     : "perf_event_open(cpu-clock)", errno);
	meta = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (meta == MAP_FAILED)
		return cannot("mmap of a perf_event ring buffer", errno);
	/* 1 ms periods: a sample within a few ms of CPU; give up after 2 s. */
	t0 = cpu_seconds();
	while (__atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE) == 0) {
		if (cpu_seconds() - t0 > 2.0) {
			printf("perf_event_open(cpu-clock) opens, but no sample arrived in 2 s of CPU time\n");
			return 1;
		}
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ull + 1;
	}
	munmap(meta, len);
	close(fd);
	return 0;
}
