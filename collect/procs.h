/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/procs.h - what the daemon knows about processes: their address
 * spaces (which image is mapped where), built from the side-band records
 * (MMAP2, COMM, FORK, EXIT) and a /proc scan, and the images samples fall
 * into.  It turns a (process, pc) into an (image, offset) following
 * docs/db-format.md, "What an offset means, per image kind".
 *
 * Address spaces are shared after fork and copied when a mapping is
 * replaced (copy on write), so samples taken before an exec, a dlclose or a
 * remap still resolve against the mappings of their time: the sample hash
 * (collect/shash.h) counts by address-space slot, and a slot is recycled
 * only after every table has been drained (procs_drained()).
 *
 * Nothing here parses ELF: build-ids come from the kernel (MMAP2, or the
 * PROCMAP_QUERY ioctl of /proc/PID/maps).
 */
#ifndef DCPI_COLLECT_PROCS_H
#define DCPI_COLLECT_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collect/shash.h"
#include "core/u64map.h"
#include "db/image.h"

/* Reserved slots of the sample hash's key. */
#define SLOT_KERNEL 0   /* kernel pcs, whatever the process */
#define SLOT_UNKNOWN 1  /* user pcs of processes nobody knows */
#define SLOT_FIRST 2

#define CIMAGE_NONE UINT32_MAX

/* An image, interned for the whole run. */
struct cimage {
	struct db_image img;    /* key, kind, path, build-id, identity */
	bool per_process;       /* --per-process asked for this path */
	uint32_t store_gen;     /* collect/store.h: epoch whose index has it */
};

struct mapping {
	uint64_t start, end;    /* [start, end) */
	uint64_t pgoff;         /* file offset of start */
	uint32_t image;
};

struct addr_space {
	uint32_t refs;          /* processes using it */
	uint32_t slot;          /* sample-hash slot, 0 if none yet */
	uint32_t pid;           /* the process that made it */
	bool retired;           /* no process uses it; freed after the next drain */
	char comm[16];
	struct mapping *maps;   /* sorted by start, disjoint */
	size_t n, alloc;
};

struct procs_stats {
	uint64_t forks, execs, exits, mmaps, scans, lazy_scans;
	uint64_t cow_copies;    /* address spaces copied on a replacing mmap */
	uint64_t no_slot;       /* samples resolved directly: all slots in use */
};

struct procs {
	struct u64map pid_as;           /* pid -> struct addr_space * */
	struct addr_space *slots[SHASH_SLOTS];
	uint32_t *free_slots;
	size_t n_free;
	struct addr_space **retired;    /* slotted, waiting for a drain */
	size_t n_retired, alloc_retired;

	struct cimage *images;
	size_t n_images, alloc_images;
	struct u64map key_image;        /* hash of key -> index + 1 */
	uint32_t kernel_image, vdso_image, unknown_image;

	char **per_process;             /* paths with per-process profiles (not owned) */
	size_t n_per_process;
	bool lazy_scan;                 /* scan /proc/PID/maps for unknown pids */
	struct u64map lazy_failed;      /* pids already tried */
	struct procs_stats st;
};

void procs_init(struct procs *p);
void procs_release(struct procs *p);

/* ---- images ---------------------------------------------------------- */

/* The image with this record's key, added if new (img is copied). */
uint32_t procs_intern(struct procs *p, const struct db_image *img);
static inline struct cimage *procs_cimage(struct procs *p, uint32_t i)
{
	return &p->images[i];
}

/* A mapping as the kernel describes it (MMAP2 or /proc/PID/maps). */
struct map_info {
	uint64_t start, len, pgoff;
	const char *path;
	const uint8_t *build_id;
	unsigned build_id_len;  /* 0: none */
	bool has_inode;
	uint64_t dev, ino;
};

/* ---- side-band ------------------------------------------------------- */

/* A new process pid (not a thread) forked from ppid: shares its mappings. */
void procs_fork(struct procs *p, uint32_t pid, uint32_t ppid);
/* pid called execve: a fresh, empty address space. */
void procs_exec(struct procs *p, uint32_t pid, const char *comm);
/* pid renamed itself (prctl), or a name learned elsewhere. */
void procs_comm(struct procs *p, uint32_t pid, const char *comm);
/* The process pid is gone. */
void procs_exit(struct procs *p, uint32_t pid);
/* pid mapped executable memory. */
void procs_mmap(struct procs *p, uint32_t pid, const struct map_info *m);

/*
 * Reads /proc/PID/maps of one process (pid > 0) or of all (pid 0):
 * executable mappings, with build-ids where the kernel provides them
 * (PROCMAP_QUERY).  Returns the number of processes read.
 */
size_t procs_scan(struct procs *p, uint32_t pid);

/* ---- samples --------------------------------------------------------- */

/*
 * The address space of pid for a user sample, or NULL if the process is
 * unknown (after a lazy /proc scan, if enabled).
 */
struct addr_space *procs_lookup(struct procs *p, uint32_t pid);

/*
 * The hash slot of as, assigning one if needed; 0 if every slot is in use
 * (the caller then resolves the sample directly).
 */
unsigned procs_slot(struct procs *p, struct addr_space *as);

/* The address space holding slot, or NULL. */
static inline struct addr_space *procs_slot_space(struct procs *p, unsigned slot)
{
	return slot < SHASH_SLOTS ? p->slots[slot] : NULL;
}

/*
 * Resolves a user pc of as to (image, offset); the unknown image with the
 * pc itself if no mapping holds it.  Returns true if resolved.
 */
bool procs_resolve(struct procs *p, struct addr_space *as, uint64_t pc, uint32_t *image,
		   uint64_t *offset);

/* The mapping of as holding addr, or NULL. */
const struct mapping *procs_mapping(const struct addr_space *as, uint64_t addr);

/* Every sample hash has been drained: retired slots can be reused. */
void procs_drained(struct procs *p);

/* True if fewer than `want` slots are free (time for an early drain). */
bool procs_slots_low(const struct procs *p, size_t want);

/* Approximate bytes of memory held. */
size_t procs_bytes(const struct procs *p);

/* Classifies a mapping path: IMAGE_FILE, IMAGE_VDSO or IMAGE_ANON. */
enum image_kind procs_map_kind(const char *path);

#endif
