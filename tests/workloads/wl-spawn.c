/* SPDX-License-Identifier: GPL-2.0-or-later
 * wl-spawn: starts hundreds of short-lived processes.
 *
 *   wl-spawn [-n CHILDREN] [-w WORK]
 *
 * Runs CHILDREN processes (default 300), two at a time, each a fresh exec
 * of this program ("wl-spawn --child WORK FD") that spends about WORK
 * iterations (default 3M, a few milliseconds) in child_work() and exits.
 * Profilers must attribute the children's samples to this image even
 * though each child lives only a few milliseconds.
 *
 * Prints "N children, F failed", "cpu SECONDS" (the CPU time of the whole
 * tree: this process and its children, creation and exit included),
 * "child_work_cpu SECONDS" (the children's time in child_work(), each child
 * measuring its own with its thread CPU clock and sending it back through a
 * pipe) and "child_work SHARE" (the second over the first).  What
 * the rest costs (fork, exec, loading, exit) depends on the machine: the
 * tests compare the sampled share with this measured one.
 */
#include "wl.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) uint64_t child_work(uint64_t n, uint64_t x)
{
	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

static int spawn(const char *self, const char *work, const char *fd)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		execl(self, "wl-spawn", "--child", work, fd, (char *)NULL);
		_exit(127);
	}
	return 0;
}

/* A child: the work, then its CPU time in child_work() down the pipe. */
static int child(const char *work, const char *fd)
{
	double t0 = wl_thread_cpu(), t;

	wl_keep(child_work(strtoull(work, NULL, 0), 1));
	t = wl_thread_cpu() - t0;
	return write(atoi(fd), &t, sizeof(t)) == (ssize_t)sizeof(t) ? 0 : 1;
}

/* Adds up what the children sent so far (the pipe does not block). */
static void drain(int fd, double *sum)
{
	double t;

	while (read(fd, &t, sizeof(t)) == (ssize_t)sizeof(t))
		*sum += t;
}

static double rusage_cpu(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	uint64_t children = wl_iterations(argc, argv, 300);
	const char *work = "3000000";
	uint64_t started = 0, done = 0, failed = 0;
	int status, fds[2];
	char fd[16];
	double in_work = 0, all;

	if (argc == 4 && !strcmp(argv[1], "--child"))
		return child(argv[2], argv[3]);
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "-w"))
			work = argv[i + 1];
	if (pipe(fds) || fcntl(fds[0], F_SETFL, O_NONBLOCK))
		return 1;
	snprintf(fd, sizeof(fd), "%d", fds[1]);
	while (done < children) {
		while (started < children && started - done < 2) {
			if (spawn("/proc/self/exe", work, fd))
				return 1;
			started++;
		}
		if (wait(&status) < 0)
			return 1;
		failed += !WIFEXITED(status) || WEXITSTATUS(status);
		done++;
		drain(fds[0], &in_work);
	}
	drain(fds[0], &in_work);
	all = rusage_cpu(RUSAGE_SELF) + rusage_cpu(RUSAGE_CHILDREN);
	printf("%llu children, %llu failed\n", (unsigned long long)done, (unsigned long long)failed);
	printf("cpu %.6f\nchild_work_cpu %.6f\n", all, in_work);
	printf("child_work %.4f\n", all > 0 ? in_work / all : 0);
	return failed != 0;
}
