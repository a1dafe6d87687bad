/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dcpi-hostile - programs written to break a profiler that stops their
 * threads (tests/integration/t0286-hostile.sh).  Each does what it does the
 * same with or without the profiler, checks it, and says so; a difference
 * (a signal lost, a child never reaped) is exit status 1.
 *
 *   dcpi-hostile vfork WORKERS ROUNDS SLEEP_MS COMPUTE_MS
 *       WORKERS processes compute, then vfork a child that sleeps SLEEP_MS
 *       (the parent waits in the kernel, killably: state D), ROUNDS times
 *   dcpi-hostile fuse-server MOUNTPOINT DELAY_MS
 *       (root) mounts a FUSE file system with one file, "data", whose every
 *       read is answered DELAY_MS late; an interrupt is never answered, so
 *       a reader stopped meanwhile waits in state D; runs until killed
 *   dcpi-hostile fuse-read FILE THREADS ROUNDS COMPUTE_MS
 *       THREADS threads compute, then read FILE (on that file system)
 *   dcpi-hostile trap N
 *       raises SIGTRAP itself N times back to back (raise, and int3), each
 *       counted by its handler: every one must arrive
 *   dcpi-hostile exit-mid CHILDREN COMPUTE_MS
 *       CHILDREN processes one after another, each with two threads
 *       computing while the main thread exits the process after
 *       COMPUTE_MS: each must be reaped by its parent, within 5 s
 *   dcpi-hostile nodump SECS
 *       makes itself non-dumpable, then computes with distinctive register
 *       values for SECS seconds
 *   dcpi-hostile dump SECS
 *       the same, dumpable
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <poll.h>
#include <stdbool.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static volatile uint64_t sink;

/* Computes for ms milliseconds of the clock. */
static void compute(unsigned ms)
{
	int64_t end = now_ns() + (int64_t)ms * 1000000;
	uint64_t x = 1;

	while (now_ns() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink += x;
}

static unsigned num(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*end || v > 1000000) {
		fprintf(stderr, "dcpi-hostile: bad number '%s'\n", s);
		exit(2);
	}
	return (unsigned)v;
}

/* ---- vfork -------------------------------------------------------------------------- */

static int do_vfork(unsigned workers, unsigned rounds, unsigned sleep_ms, unsigned compute_ms)
{
	int bad = 0;

	for (unsigned w = 0; w < workers; w++) {
		pid_t p = fork();

		if (p < 0)
			return perror("fork"), 1;
		if (p)
			continue;
		for (unsigned r = 0; r < rounds; r++) {
			struct timespec ts = { sleep_ms / 1000, (long)(sleep_ms % 1000) * 1000000 };
			int status;
			pid_t c;

			compute(compute_ms);
			c = vfork();
			if (c == 0) {
				/* Only system calls in the child: it shares the parent's stack. */
				syscall(SYS_nanosleep, &ts, NULL);
				syscall(SYS_exit, 0);
			}
			if (c < 0 || waitpid(c, &status, 0) != c || !WIFEXITED(status))
				_exit(1);
		}
		_exit(0);
	}
	for (unsigned w = 0; w < workers; w++) {
		int status;

		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			bad = 1;
	}
	printf("vfork: %u workers, %u rounds each, %s\n", workers, rounds, bad ? "FAILED" : "ok");
	return bad;
}

/* ---- FUSE ---------------------------------------------------------------------------- */

#define FUSE_FILE_INO 2
#define FUSE_FILE_SIZE 4096

struct pending {
	uint64_t unique;
	int64_t due;
	uint32_t size;
};

static void fuse_reply(int fd, uint64_t unique, int error, const void *data, size_t len)
{
	char buf[sizeof(struct fuse_out_header) + 8192];
	struct fuse_out_header *h = (struct fuse_out_header *)buf;

	if (len > 8192)
		len = 8192;
	h->len = (uint32_t)(sizeof(*h) + len);
	h->error = -error;
	h->unique = unique;
	if (len)
		memcpy(buf + sizeof(*h), data, len);
	/* ENOENT: the request was interrupted and is gone; the kernel says so. */
	if (write(fd, buf, h->len) < 0 && errno != ENOENT)
		perror("fuse reply");
}

static void fuse_attr(struct fuse_attr *a, uint64_t ino)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->nlink = 1;
	if (ino == FUSE_ROOT_ID) {
		a->mode = S_IFDIR | 0755;
	} else {
		a->mode = S_IFREG | 0444;
		a->size = FUSE_FILE_SIZE;
		a->blocks = FUSE_FILE_SIZE / 512;
	}
	a->blksize = 4096;
}

static int fuse_server(const char *mnt, unsigned delay_ms)
{
	static char in[FUSE_MIN_READ_BUFFER + 65536];
	struct pending q[256];
	size_t nq = 0;
	char opts[128];
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return perror("/dev/fuse"), 1;
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", fd);
	if (mount("dcpi-stall", mnt, "fuse", MS_NOSUID | MS_NODEV, opts))
		return perror("mount"), 1;
	printf("mounted\n");
	fflush(stdout);
	for (;;) {
		int64_t now = now_ns(), next = -1;
		struct pollfd p = { fd, POLLIN, 0 };
		struct fuse_in_header *h = (struct fuse_in_header *)in;
		void *arg = in + sizeof(*h);
		ssize_t n;

		for (size_t i = 0; i < nq;) {
			if (q[i].due <= now) {
				static char data[FUSE_FILE_SIZE];

				memset(data, 'x', sizeof(data));
				fuse_reply(fd, q[i].unique, 0, data,
					   q[i].size < sizeof(data) ? q[i].size : sizeof(data));
				q[i] = q[--nq];
				continue;
			}
			if (next < 0 || q[i].due < next)
				next = q[i].due;
			i++;
		}
		if (poll(&p, 1, next < 0 ? -1 : (int)((next - now) / 1000000) + 1) <= 0)
			continue;
		if ((n = read(fd, in, sizeof(in))) < 0) {
			if (errno == EINTR || errno == ENOENT || errno == EAGAIN)
				continue;
			if (errno == ENODEV)
				return 0;       /* unmounted */
			return perror("read /dev/fuse"), 1;
		}
		switch (h->opcode) {
		case FUSE_INIT: {
			struct fuse_init_out o;

			memset(&o, 0, sizeof(o));
			o.major = FUSE_KERNEL_VERSION;
			o.minor = 31;
			o.max_readahead = 0;
			o.max_write = 4096;
			o.max_background = 16;
			o.congestion_threshold = 12;
			fuse_reply(fd, h->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_LOOKUP: {
			struct fuse_entry_out o;

			if (h->nodeid != FUSE_ROOT_ID || strcmp(arg, "data")) {
				fuse_reply(fd, h->unique, ENOENT, NULL, 0);
				break;
			}
			memset(&o, 0, sizeof(o));
			o.nodeid = FUSE_FILE_INO;
			o.attr_valid = 3600;
			o.entry_valid = 3600;
			fuse_attr(&o.attr, FUSE_FILE_INO);
			fuse_reply(fd, h->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_GETATTR: {
			struct fuse_attr_out o;

			memset(&o, 0, sizeof(o));
			o.attr_valid = 3600;
			fuse_attr(&o.attr, h->nodeid);
			fuse_reply(fd, h->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_OPEN: {
			struct fuse_open_out o;

			memset(&o, 0, sizeof(o));
			o.fh = 1;
			o.open_flags = FOPEN_DIRECT_IO;   /* every read comes here */
			fuse_reply(fd, h->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_READ: {
			const struct fuse_read_in *r = arg;

			if (nq == sizeof(q) / sizeof(q[0])) {
				fuse_reply(fd, h->unique, EAGAIN, NULL, 0);
				break;
			}
			q[nq++] = (struct pending){ h->unique, now + (int64_t)delay_ms * 1000000, r->size };
			break;
		}
		case FUSE_RELEASE:
		case FUSE_FLUSH:
			fuse_reply(fd, h->unique, 0, NULL, 0);
			break;
		case FUSE_INTERRUPT:            /* never answered: the reader waits in state D */
		case FUSE_FORGET:
		case FUSE_BATCH_FORGET:
		case FUSE_DESTROY:
			break;
		default:
			fuse_reply(fd, h->unique, ENOSYS, NULL, 0);
			break;
		}
	}
}

struct reader {
	const char *file;
	unsigned rounds, compute_ms;
	int failed;
};

static void *fuse_read_thread(void *arg)
{
	struct reader *r = arg;

	for (unsigned i = 0; i < r->rounds; i++) {
		char c;
		int fd;

		compute(r->compute_ms);
		if ((fd = open(r->file, O_RDONLY)) < 0 || pread(fd, &c, 1, 0) != 1 || c != 'x') {
			r->failed = errno ? errno : EIO;
			if (fd >= 0)
				close(fd);
			return NULL;
		}
		close(fd);
	}
	return NULL;
}

static int fuse_read(const char *file, unsigned threads, unsigned rounds, unsigned compute_ms)
{
	pthread_t t[64];
	struct reader r[64];
	int bad = 0;

	if (threads > 64)
		threads = 64;
	for (unsigned i = 0; i < threads; i++) {
		r[i] = (struct reader){ file, rounds, compute_ms, 0 };
		if (pthread_create(&t[i], NULL, fuse_read_thread, &r[i]))
			return perror("pthread_create"), 1;
	}
	for (unsigned i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		if (r[i].failed) {
			fprintf(stderr, "fuse-read: %s\n", strerror(r[i].failed));
			bad = 1;
		}
	}
	printf("fuse-read: %u threads, %u reads each, %s\n", threads, rounds, bad ? "FAILED" : "ok");
	return bad;
}

/* ---- SIGTRAP ------------------------------------------------------------------------- */

static volatile sig_atomic_t traps;

static void on_trap(int sig)
{
	(void)sig;
	traps++;
}

static int do_trap(unsigned n)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_trap;
	sigaction(SIGTRAP, &sa, NULL);
	/* Back to back: a tracer that seizes the thread lands between two of them. */
	for (unsigned i = 0; i < n; i++) {
		if (i % 2)
			raise(SIGTRAP);
		else
			__asm__ volatile("int3");
	}
	printf("trap: %u of %u arrived, %s\n", (unsigned)traps, n, traps == (sig_atomic_t)n ? "ok" : "FAILED");
	return traps != (sig_atomic_t)n;
}

/* ---- a process ending while its threads run ------------------------------------------ */

static unsigned mid_ms;

static void *spin(void *arg)
{
	(void)arg;
	for (;;)
		compute(1);
	return NULL;
}

static int exit_mid(unsigned children, unsigned compute_ms)
{
	unsigned late = 0;

	mid_ms = compute_ms;
	for (unsigned i = 0; i < children; i++) {
		int64_t give_up;
		int status = 0;
		pid_t c = fork(), r = 0;

		if (c < 0)
			return perror("fork"), 1;
		if (c == 0) {
			pthread_t t;

			for (int k = 0; k < 2; k++)
				pthread_create(&t, NULL, spin, NULL);
			compute(mid_ms);
			exit(0);        /* exit_group: the spinning threads end with it */
		}
		give_up = now_ns() + 5 * (int64_t)1000000000;
		while ((r = waitpid(c, &status, WNOHANG)) == 0 && now_ns() < give_up)
			usleep(1000);
		if (r != c) {
			fprintf(stderr, "exit-mid: child %d not reaped after 5 s\n", (int)c);
			late++;
			kill(c, SIGKILL);
			break;  /* it is someone else's to reap now: do not wait for it */
		}
	}
	printf("exit-mid: %u children, %u not reaped in time, %s\n", children, late,
	       late ? "FAILED" : "ok");
	return late != 0;
}

/* ---- non-dumpable ---------------------------------------------------------------------- */

static int nodump(unsigned secs, bool dumpable)
{
	int64_t end;
	uint64_t x = 0x5eed5eed5eed5eedull;

	if (!dumpable && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		return perror("prctl"), 1;
	end = now_ns() + (int64_t)secs * 1000000000;
	/* A register holding a value no other program has: the test looks for it. */
	while (now_ns() < end)
		for (int i = 0; i < 100000; i++)
			__asm__ volatile("mov %1, %%r12\n\tadd %%r12, %0" : "+r"(x)
					 : "r"(0x0dd5ec2e70dd5ec2ull) : "r12");
	sink += x;
	printf("%s: ok\n", dumpable ? "dump" : "nodump");
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 6 && !strcmp(argv[1], "vfork"))
		return do_vfork(num(argv[2]), num(argv[3]), num(argv[4]), num(argv[5]));
	if (argc == 4 && !strcmp(argv[1], "fuse-server"))
		return fuse_server(argv[2], num(argv[3]));
	if (argc == 6 && !strcmp(argv[1], "fuse-read"))
		return fuse_read(argv[2], num(argv[3]), num(argv[4]), num(argv[5]));
	if (argc == 3 && !strcmp(argv[1], "trap"))
		return do_trap(num(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "exit-mid"))
		return exit_mid(num(argv[2]), num(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "nodump"))
		return nodump(num(argv[2]), false);
	if (argc == 3 && !strcmp(argv[1], "dump"))
		return nodump(num(argv[2]), true);
	fprintf(stderr, "usage: dcpi-hostile vfork|fuse-server|fuse-read|trap|exit-mid|nodump|dump ...\n");
	return 2;
}
