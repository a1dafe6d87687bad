/* SPDX-License-Identifier: GPL-2.0-or-later
 * wl-threads: several threads doing the same work.
 *
 *   wl-threads [-n ITERATIONS] [-s SECONDS] [-t THREADS]
 *
 * THREADS threads (default 4) each run worker() for ITERATIONS iterations
 * of a multiply-add chain (with -s, chunks of a million until the thread has
 * used SECONDS of CPU time); main() only waits.
 */
#include "wl.h"

#include <pthread.h>

static uint64_t iterations;
static double seconds;

__attribute__((noinline)) uint64_t worker_loop(uint64_t n, uint64_t x)
{
	for (uint64_t i = 0; i < n; i++)
		x = x * 2862933555777941757ull + 3037000493ull;
	return x;
}

static void *worker(void *arg)
{
	uint64_t x = (uint64_t)(uintptr_t)arg;

	if (seconds > 0)
		do
			x = worker_loop(1000000, x);
		while (wl_thread_cpu() < seconds);
	else
		x = worker_loop(iterations, x);
	wl_keep(x);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t tid[64];
	long threads = 4;

	iterations = wl_iterations(argc, argv, 300000000);
	seconds = wl_seconds(argc, argv);
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "-t"))
			threads = strtol(argv[i + 1], NULL, 10);
	if (threads < 1 || threads > 64)
		threads = 4;
	for (long i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, worker, (void *)(uintptr_t)(i + 1)))
			return 1;
	for (long i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	printf("%ld threads done\n", threads);
	return 0;
}
