/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dcpi-emulate - the emulating worker of dcpid's bursts as a service of
 * its own (collect/dcpi-emulate.socket, dcpi-emulate@.service), for a
 * dcpid whose unit forbids writable and executable memory
 * (MemoryDenyWriteExecute=yes), which the emulator's code buffer needs.
 *
 * systemd accepts each of dcpid's connections on the socket (Accept=yes)
 * and runs one of these for it, under its own unit, with the connection as
 * descriptor 3 (LISTEN_FDS=1).  It serves that connection exactly as a
 * worker forked by dcpid would (collect/emu-worker.h): descriptors 0-2 on
 * /dev/null, resource limits, no privileges, its seccomp filter sealed
 * before it reads anything, one user's bursts.  The root daemon never
 * execs it: systemd does.
 */
#include "config.h"
#include "collect/emu-worker.h"
#include "collect/sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *fds = getenv("LISTEN_FDS"), *pid = getenv("LISTEN_PID");
	int type = 0;
	socklen_t len = sizeof(type);

	(void)argv;
	if (argc != 1 || !fds || strcmp(fds, "1") || !pid || atol(pid) != (long)getpid() ||
	    getsockopt(3, SOL_SOCKET, SO_TYPE, &type, &len) || type != SOCK_STREAM) {
		fprintf(stderr, "dcpi-emulate: started by its socket (dcpi-emulate.socket, Accept=yes) "
			"with a connection as descriptor 3, and nothing else\n");
		return 1;
	}
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDNAMES");
	prctl(PR_SET_NAME, "dcpi-emulate", 0, 0, 0);
	sandbox_enter(3, &emu_worker_limits);
	emu_worker_serve(3);
	return 0;
}
