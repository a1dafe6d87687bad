/*
 * wl-spawn: starts hundreds of short-lived processes.
 *
 *   wl-spawn [-n CHILDREN] [-w WORK]
 *
 * Runs CHILDREN processes (default 300), two at a time, each a fresh exec
 * of this program ("wl-spawn --child WORK") that spends about WORK
 * iterations (default 3M, a few milliseconds) in child_work() and exits.
 * Profilers must attribute the children's samples to this image even
 * though each child lives only a few milliseconds.
 */
#include "wl.h"

#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) uint64_t child_work(uint64_t n, uint64_t x)
{
	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

static int spawn(const char *self, const char *work)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		execl(self, "wl-spawn", "--child", work, (char *)NULL);
		_exit(127);
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t children = wl_iterations(argc, argv, 300);
	const char *work = "3000000";
	uint64_t started = 0, done = 0, failed = 0;
	int status;

	if (argc == 3 && !strcmp(argv[1], "--child")) {
		wl_keep(child_work(strtoull(argv[2], NULL, 0), 1));
		return 0;
	}
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "-w"))
			work = argv[i + 1];
	while (done < children) {
		while (started < children && started - done < 2) {
			if (spawn("/proc/self/exe", work))
				return 1;
			started++;
		}
		if (wait(&status) < 0)
			return 1;
		failed += !WIFEXITED(status) || WEXITSTATUS(status);
		done++;
	}
	printf("%llu children, %llu failed\n", (unsigned long long)done, (unsigned long long)failed);
	return failed != 0;
}
