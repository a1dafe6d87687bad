/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dcpi-mdwe CMD [ARGS...] - runs CMD under the seccomp filter systemd
 * installs for MemoryDenyWriteExecute=yes (tests/helper/mdwe-filter.h), as
 * dcpid.service does, where systemd is not PID 1 (t0288).
 */
#include "config.h"
#include "tests/helper/mdwe-filter.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	void *p;

	if (argc < 2) {
		fprintf(stderr, "usage: dcpi-mdwe CMD [ARGS...]\n");
		return 2;
	}
	if (mdwe_filter_install()) {
		perror("dcpi-mdwe: seccomp");
		return 2;
	}
	/* The filter holds: writable and executable memory is refused, writable memory not. */
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED || mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				    -1, 0) == MAP_FAILED) {
		fprintf(stderr, "dcpi-mdwe: the filter does not hold\n");
		return 2;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "dcpi-mdwe: cannot run '%s': %s\n", argv[1], strerror(errno));
	return 127;
}
