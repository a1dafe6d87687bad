/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "collect/pagecheck.h"
#include "collect/procmap.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

void pagecheck_begin(struct pagecheck *c, pid_t pid, uint64_t budget)
{
	pagecheck_end(c);
	c->pid = pid;
	c->budget = budget;
	c->used = 0;
}

void pagecheck_end(struct pagecheck *c)
{
	if (c->opened && c->fd >= 0)
		close(c->fd);
	free(c->lo);
	free(c->hi);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/* The readable mappings from the text of /proc/PID/maps (a kernel before 6.11). */
static void read_text(struct pagecheck *c)
{
	struct strbuf sb = STRBUF_INIT;
	char *line, *save = NULL;

	c->text = true;
	if (c->fd < 0 || strbuf_read_fd(&sb, c->fd, 64u << 20) < 0) {
		strbuf_release(&sb);
		return;
	}
	for (line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long lo, hi;
		char perms[8];

		if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perms) != 3 || perms[0] != 'r' || hi <= lo)
			continue;
		ALLOC_GROW(c->lo, c->n + 1, c->alloc);
		c->hi = xreallocarray(c->hi, c->alloc, sizeof(*c->hi));
		c->lo[c->n] = lo;
		c->hi[c->n++] = hi;
	}
	strbuf_release(&sb);
}

/* True if the page at addr lies in a readable mapping of the process. */
static bool readable(struct pagecheck *c, uint64_t addr)
{
	struct dcpi_procmap_query q;

	if (addr >= c->last_lo && addr < c->last_hi)
		return true;
	if (!c->opened) {
		char path[48];

		c->opened = true;
		snprintf(path, sizeof(path), "/proc/%ld/maps", (long)c->pid);
		c->fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (c->fd < 0)
		return false;
	if (!c->text) {
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.query_flags = DCPI_PROCMAP_QUERY_VMA_READABLE;
		q.query_addr = addr;
		if (!ioctl(c->fd, DCPI_PROCMAP_QUERY, &q)) {
			c->last_lo = q.vma_start;
			c->last_hi = q.vma_end;
			return addr >= q.vma_start && addr < q.vma_end;
		}
		if (errno != ENOTTY && errno != EINVAL && errno != EOPNOTSUPP)
			return false;   /* ENOENT: in none; ESRCH: gone */
		read_text(c);
	}
	/* The ranges, in order: a binary search for the last that starts at or below addr. */
	{
		size_t a = 0, b = c->n;

		while (a < b) {
			size_t m = a + (b - a) / 2;

			if (c->lo[m] <= addr)
				a = m + 1;
			else
				b = m;
		}
		if (a && addr < c->hi[a - 1]) {
			c->last_lo = c->lo[a - 1];
			c->last_hi = c->hi[a - 1];
			return true;
		}
	}
	return false;
}

int pagecheck_pages(struct pagecheck *c, const uint64_t *addr, size_t n, bool *ok)
{
	if (n > c->budget - c->used || c->used > c->budget)
		return -1;
	c->used += n;
	for (size_t i = 0; i < n; i++) {
		ok[i] = readable(c, addr[i]);
		c->outside += !ok[i];
	}
	return 0;
}
