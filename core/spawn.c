/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/spawn.c - a command held before exec (core/spawn.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

/* In the child: maps each file whole, read-only and executable (a failure leaves it out). */
static void map_files(const char *const *maps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		int fd = open(maps[i], O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			continue;
		if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0)
			mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		close(fd);
	}
}

void spawn_start_mapped(struct spawn *s, char *const *argv, const sigset_t *old,
			const char *const *maps, size_t n)
{
	int go[2], st[2], ready[2];
	char byte;

	if (pipe2(go, O_CLOEXEC) || pipe2(st, O_CLOEXEC) || pipe2(ready, O_CLOEXEC))
		die_errno("cannot create a pipe");
	fflush(NULL);
	s->pid = fork();
	if (s->pid < 0)
		die_errno("cannot fork");
	if (!s->pid) {
		close(go[1]);
		close(st[0]);
		close(ready[0]);
		map_files(maps, n);
		close(ready[1]);        /* mapped: the runner may attach */
		child(argv, go[0], st[1], old);
	}
	close(go[0]);
	close(st[1]);
	close(ready[1]);
	/* The end of the pipe: the child has mapped them (or died). */
	while (read(ready[0], &byte, 1) < 0 && errno == EINTR)
		;
	close(ready[0]);
	s->go_fd = go[1];
	s->status_fd = st[0];
}

void spawn_start(struct spawn *s, char *const *argv, const sigset_t *old)
{
	spawn_start_mapped(s, argv, old, NULL, 0);
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
