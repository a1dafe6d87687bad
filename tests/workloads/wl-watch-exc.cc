// SPDX-License-Identifier: GPL-2.0-or-later
// wl-watch-exc - C++ exceptions through watched functions: a uretprobe
// on mid() would make the runtime find the trampoline's address on the
// stack while unwinding and call std::terminate; dcpiwatch must not.
//
//   wl-watch-exc N     N calls of mid(i); every third throws from thrower()
//                      through mid() to main; prints "caught C" and "returned R"
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

static volatile long sink;

__attribute__((noinline)) long thrower(long i)
{
	if (i % 3 == 0)
		throw std::runtime_error("third");
	sink += i;
	return sink;
}

__attribute__((noinline)) long mid(long i)
{
	long r = thrower(i);

	sink += r;
	return r + 1;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 30, caught = 0, returned = 0;

	for (long i = 0; i < n; i++) {
		try {
			mid(i);
			returned++;
		} catch (const std::exception &) {
			caught++;
		}
	}
	printf("caught %ld\nreturned %ld\n", caught, returned);
	return 0;
}
