/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/procmap.h - the kernel's PROCMAP_QUERY ioctl on /proc/PID/maps
 * (Linux 6.11): one mapping of a process by address, without reading the
 * whole text.  From <linux/fs.h> (uapi, stable); older headers lack it,
 * older kernels answer ENOTTY (or EINVAL): then /proc/PID/maps is read.
 */
#ifndef DCPI_COLLECT_PROCMAP_H
#define DCPI_COLLECT_PROCMAP_H

#include <linux/ioctl.h>
#include <stdint.h>

struct dcpi_procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start;
	uint64_t vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};

#define DCPI_PROCMAP_QUERY _IOWR('f', 17, struct dcpi_procmap_query)
/* query_flags: the mapping must be readable, executable; or the next one if none covers */
#define DCPI_PROCMAP_QUERY_VMA_READABLE 0x01
#define DCPI_PROCMAP_QUERY_VMA_EXECUTABLE 0x04
#define DCPI_PROCMAP_QUERY_COVERING_OR_NEXT_VMA 0x10

_Static_assert(sizeof(struct dcpi_procmap_query) == 104, "procmap_query layout");

#endif
