/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading the executable mappings of running processes from /proc, for
 * the processes that were there before collection started (and for pids
 * the side-band never mentioned).  The kernel's PROCMAP_QUERY ioctl (Linux
 * 6.11) gives build-ids; older kernels fall back to the text of
 * /proc/PID/maps, and their images are keyed by path, device and inode.
 */
#include "config.h"
#include "collect/procmap.h"
#include "collect/procs.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static bool query_unsupported;

static void read_comm(uint32_t pid, char *comm, size_t size)
{
	char path[64];
	FILE *f;

	comm[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/comm", pid);
	if (!(f = fopen(path, "re")))
		return;
	if (fgets(comm, (int)size, f))
		comm[strcspn(comm, "\n")] = '\0';
	fclose(f);
}

/* Returns 0, or -1 if the kernel has no PROCMAP_QUERY. */
static int scan_query(struct procs *p, int fd, uint32_t pid)
{
	static char name[4096 + 64];
	uint8_t bid[64];
	uint64_t addr = 0;

	for (;;) {
		struct dcpi_procmap_query q;
		struct map_info mi;

		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.query_flags = DCPI_PROCMAP_QUERY_COVERING_OR_NEXT_VMA |
				DCPI_PROCMAP_QUERY_VMA_EXECUTABLE;
		q.query_addr = addr;
		q.vma_name_addr = (uint64_t)(uintptr_t)name;
		q.vma_name_size = sizeof(name);
		q.build_id_addr = (uint64_t)(uintptr_t)bid;
		q.build_id_size = sizeof(bid);
		if (ioctl(fd, DCPI_PROCMAP_QUERY, &q)) {
			if (errno == ENOTTY || errno == EINVAL || errno == EOPNOTSUPP)
				return -1;
			return 0; /* ENOENT: no more mappings; ESRCH: gone */
		}
		if (q.vma_end <= q.vma_start || q.vma_end <= addr)
			return 0;
		memset(&mi, 0, sizeof(mi));
		mi.start = q.vma_start;
		mi.len = q.vma_end - q.vma_start;
		mi.pgoff = q.vma_offset;
		name[sizeof(name) - 1] = '\0';
		mi.path = q.vma_name_size ? name : "";
		mi.build_id = bid;
		mi.build_id_len = q.build_id_size <= sizeof(bid) ? q.build_id_size : 0;
		mi.has_inode = q.inode != 0;
		mi.dev = makedev(q.dev_major, q.dev_minor);
		mi.ino = q.inode;
		procs_mmap(p, pid, &mi);
		addr = q.vma_end;
	}
}

/* Parses one line of /proc/PID/maps; only executable mappings count. */
static void scan_line(struct procs *p, uint32_t pid, char *line)
{
	unsigned long long start, end, off, ino;
	unsigned maj, min;
	char perms[8];
	int n = 0;
	struct map_info mi;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &maj, &min,
		   &ino, &n) < 7 || strlen(perms) < 3 || perms[2] != 'x' || end <= start)
		return;
	memset(&mi, 0, sizeof(mi));
	mi.start = start;
	mi.len = end - start;
	mi.pgoff = off;
	mi.path = line + n;
	mi.has_inode = ino != 0;
	mi.dev = makedev(maj, min);
	mi.ino = ino;
	procs_mmap(p, pid, &mi);
}

static void scan_text(struct procs *p, int fd, uint32_t pid)
{
	struct strbuf sb = STRBUF_INIT;
	char *line, *save = NULL;

	/* What could not be read (an error, more than 64 MiB) is not scanned. */
	strbuf_read_fd(&sb, fd, 64u << 20);
	for (line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		scan_line(p, pid, line);
	strbuf_release(&sb);
}

/* Reads one process; returns 0, or -1 if it is gone or unreadable. */
static int scan_one(struct procs *p, uint32_t pid)
{
	char path[64], comm[32];
	int fd;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	read_comm(pid, comm, sizeof(comm));
	procs_exec(p, pid, comm);
	p->st.execs--; /* not an exec: a fresh start */
	if (query_unsupported || scan_query(p, fd, pid)) {
		query_unsupported = true;
		scan_text(p, fd, pid);
	}
	close(fd);
	return 0;
}

size_t procs_scan(struct procs *p, uint32_t pid)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	p->st.scans++;
	if (pid)
		return scan_one(p, pid) == 0;
	if (!(d = opendir("/proc")))
		return 0;
	while ((de = readdir(d))) {
		char *end;
		unsigned long v;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		v = strtoul(de->d_name, &end, 10);
		if (*end || !v || v > UINT32_MAX)
			continue;
		n += scan_one(p, (uint32_t)v) == 0;
	}
	closedir(d);
	return n;
}
