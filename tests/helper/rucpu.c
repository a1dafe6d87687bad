/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rucpu - runs a command and writes the CPU time (user + system, in
 * seconds, to the microsecond) of the command and of everything it waited
 * for to FILE:
 *
 *   rucpu FILE -- COMMAND [ARGS...]
 *
 * For the tests, whose floors on samples come from the CPU time a run took,
 * and the benchmarks that compare profilers (callgraph-bench.sh): wrapped
 * around a profiler and, inside it, around the profiled workload, the
 * profiler's own CPU (its threads, and the helpers it reaps, such as
 * dcpirun's unwinding worker) is the outer figure minus the inner one,
 * exact, where /proc/PID/stat polled counts 10 ms ticks and misses what a
 * process does between the last poll and its exit.  The exit status is the
 * command's (128 + N if a signal N ended it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rusage ru;
	FILE *out;
	pid_t pid;
	int st;

	if (argc < 4 || strcmp(argv[2], "--")) {
		fprintf(stderr, "usage: rucpu FILE -- COMMAND [ARGS...]\n");
		return 1;
	}
	if ((pid = fork()) < 0) {
		perror("rucpu: fork");
		return 1;
	}
	if (!pid) {
		execvp(argv[3], argv + 3);
		fprintf(stderr, "rucpu: cannot run '%s': %s\n", argv[3], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			perror("rucpu: waitpid");
			return 1;
		}
	if (getrusage(RUSAGE_CHILDREN, &ru) || !(out = fopen(argv[1], "w"))) {
		perror("rucpu");
		return 1;
	}
	fprintf(out, "%.6f\n", (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
				      (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	if (fclose(out)) {
		perror("rucpu");
		return 1;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
