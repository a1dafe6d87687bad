/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/spawn.c - a command held before exec (core/spawn.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/die.h"
#include "core/spawn.h"

/* The child's side: wait for the go, then exec. */
static _Noreturn void child(char *const *argv, int go, int status, const sigset_t *old)
{
	char byte;
	int err;

	sigprocmask(SIG_SETMASK, old, NULL);
	if (read(go, &byte, 1) != 1)
		_exit(127);  /* the runner gave up */
	close(go);
	execvp(argv[0], argv);
	err = errno;
	if (write(status, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(err == ENOENT ? 127 : 126);
}

void spawn_start(struct spawn *s, char *const *argv, const sigset_t *old)
{
	int go[2], st[2];

	if (pipe2(go, O_CLOEXEC) || pipe2(st, O_CLOEXEC))
		die_errno("cannot create a pipe");
	fflush(NULL);
	s->pid = fork();
	if (s->pid < 0)
		die_errno("cannot fork");
	if (!s->pid) {
		close(go[1]);
		close(st[0]);
		child(argv, go[0], st[1], old);
	}
	close(go[0]);
	close(st[1]);
	s->go_fd = go[1];
	s->status_fd = st[0];
}

int spawn_release(struct spawn *s, const char *what)
{
	int err = 0;
	ssize_t n;

	if (write(s->go_fd, "x", 1) != 1)
		die_errno("cannot start '%s'", what);
	close(s->go_fd);
	do
		n = read(s->status_fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(s->status_fd);
	return n == (ssize_t)sizeof(err) ? err : 0;
}

void spawn_abort(struct spawn *s)
{
	close(s->go_fd);
	close(s->status_fd);
	waitpid(s->pid, NULL, 0);
}
