/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/stopfiles.c - the files a burst's thread reads and its position
 * in them at the stop (collect/stopfiles.h).
 */
#include "config.h"
#include "collect/stopfiles.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void stopfiles_init(struct stopfiles *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < EMU_MAX_FILES; i++)
		s->local[i] = -1;
}

/* The position of process pid's descriptor fd (its fdinfo's "pos:"); -1 if none. */
static int64_t position(pid_t pid, uint32_t fd)
{
	char path[64], buf[256];
	int f;
	ssize_t n;
	const char *p;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%u", (int)pid, fd);
	if ((f = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (strncmp(buf, "pos:", 4) || !(p = buf + 4))
		return -1;
	return strtoll(p, NULL, 10);
}

void stopfiles_take(struct stopfiles *s, pid_t pid, const uint32_t *fds, size_t n)
{
	stopfiles_close(s);
	s->n_want = 0;
	for (size_t i = 0; i < n && s->n_want < EMU_MAX_FILES; i++) {
		int64_t pos = position(pid, fds[i]);

		if (pos < 0)
			continue;
		s->want[s->n_want] = fds[i];
		s->before[s->n_want++] = (uint64_t)pos;
	}
}

void stopfiles_open(struct stopfiles *s, pid_t pid)
{
	for (size_t i = 0; i < s->n_want; i++) {
		char path[64];
		struct stat st;
		int f;

		/* never a FIFO's open (it could wait): non-blocking, then checked */
		snprintf(path, sizeof(path), "/proc/%d/fd/%u", (int)pid, s->want[i]);
		if ((f = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) < 0)
			continue;
		if (fstat(f, &st) || !S_ISREG(st.st_mode)) {
			close(f);
			continue;
		}
		s->f[s->n] = (struct emu_file){ s->want[i], s->before[i] };
		s->local[s->n++] = f;
		s->known++;
	}
}

void stopfiles_close(struct stopfiles *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->local[i] >= 0)
			close(s->local[i]);
	for (size_t i = 0; i < EMU_MAX_FILES; i++)
		s->local[i] = -1;
	s->n = 0;
}
