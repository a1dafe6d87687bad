/* SPDX-License-Identifier: GPL-2.0-or-later
 * wl-jit: runs machine code it wrote into anonymous executable memory, as
 * a JIT does, and describes it in /tmp/perf-PID.map (perf's convention).
 *
 *   wl-jit [-n ITERATIONS]
 *
 * The generated function is a countdown loop (x86-64: mov rcx, rdi; dec
 * rcx; jnz; ret), about one iteration per cycle.  The map file is left in
 * place (JITs do; the profiler copies it later); prints its name.
 */
#include "wl.h"

#include <sys/mman.h>
#include <unistd.h>

static const unsigned char code[] = {
	0x48, 0x89, 0xf9,       /* mov rcx, rdi */
	0x48, 0xff, 0xc9,       /* loop: dec rcx */
	0x75, 0xfb,             /* jnz loop */
	0xc3,                   /* ret */
};

int main(int argc, char **argv)
{
	uint64_t n = wl_iterations(argc, argv, 3000000000ull);
	void (*fn)(uint64_t);
	char path[64];
	FILE *f;
	void *mem;

#if !defined(__x86_64__)
	fprintf(stderr, "wl-jit: x86-64 only\n");
	return 77;
#endif
	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	memcpy(mem, code, sizeof(code));
	snprintf(path, sizeof(path), "/tmp/perf-%ld.map", (long)getpid());
	if (!(f = fopen(path, "w")))
		return 1;
	fprintf(f, "%lx %zx jit_countdown\n", (unsigned long)(uintptr_t)mem, sizeof(code));
	fclose(f);
	fn = (void (*)(uint64_t))mem;
	fn(n);
	printf("%s\n", path);
	return 0;
}
