/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "collect/procs.h"
#include "core/die.h"
#include "core/hash.h"
#include "core/search.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void procs_init(struct procs *p)
{
	struct db_image img;

	memset(p, 0, sizeof(*p));
	p->free_slots = xcalloc(SHASH_SLOTS, sizeof(*p->free_slots));
	/* Hand out low slots first. */
	for (uint32_t s = SHASH_SLOTS; s-- > SLOT_FIRST;)
		p->free_slots[p->n_free++] = s;

	memset(&img, 0, sizeof(img));
	img.kind = IMAGE_KERNEL;
	strcpy(img.key, "kernel");
	img.path = (char *)"[kernel.kallsyms]";
	p->kernel_image = procs_intern(p, &img);
	img.kind = IMAGE_VDSO;
	strcpy(img.key, "vdso");
	img.path = (char *)"[vdso]";
	p->vdso_image = procs_intern(p, &img);
	img.kind = IMAGE_UNKNOWN;
	strcpy(img.key, "unknown");
	img.path = (char *)"[unknown]";
	p->unknown_image = procs_intern(p, &img);
}

static void space_free(struct addr_space *as)
{
	free(as->maps);
	free(as);
}

void procs_release(struct procs *p)
{
	uint64_t pid, v;

	for (size_t i = 0; u64map_next(&p->pid_as, &i, &pid, &v);) {
		struct addr_space *as = (struct addr_space *)(uintptr_t)v;

		/* Slotted spaces are freed below, from the slot table. */
		if (as && !--as->refs && !as->slot)
			space_free(as);
	}
	for (unsigned s = 0; s < SHASH_SLOTS; s++)
		if (p->slots[s])
			space_free(p->slots[s]);
	u64map_release(&p->pid_as);
	u64map_release(&p->lazy_failed);
	free(p->free_slots);
	free(p->retired);
	for (size_t i = 0; i < p->n_images; i++)
		free(p->images[i].img.path);
	free(p->images);
	u64map_release(&p->key_image);
	memset(p, 0, sizeof(*p));
}

/* ---- images ------------------------------------------------------------ */

static bool wants_per_process(const struct procs *p, const char *path)
{
	for (size_t i = 0; i < p->n_per_process; i++)
		if (!strcmp(p->per_process[i], path))
			return true;
	return false;
}

uint32_t procs_intern(struct procs *p, const struct db_image *img)
{
	uint64_t h = hash_bytes(HASH_FNV_INIT, img->key, strlen(img->key)), v;
	struct cimage *ci;

	/* Probe past (astronomically unlikely) 64-bit collisions. */
	while (u64map_get(&p->key_image, h, &v)) {
		ci = &p->images[v - 1];
		if (!strcmp(ci->img.key, img->key)) {
			/*
			 * The same file under another path (a copy, a hard
			 * link) was seen first: a --per-process path still
			 * gets its processes' profiles.
			 */
			if (!ci->per_process && img->kind == IMAGE_FILE && img->path &&
			    wants_per_process(p, img->path))
				ci->per_process = true;
			return (uint32_t)(v - 1);
		}
		h = hash_u64(h + 1);
	}
	ALLOC_GROW(p->images, p->n_images + 1, p->alloc_images);
	ci = &p->images[p->n_images];
	memset(ci, 0, sizeof(*ci));
	ci->img = *img;
	ci->img.path = xstrdup(img->path ? img->path : "");
	ci->per_process = img->kind == IMAGE_FILE && wants_per_process(p, ci->img.path);
	*u64map_slot(&p->key_image, h) = ++p->n_images;
	return (uint32_t)(p->n_images - 1);
}

enum image_kind procs_map_kind(const char *path)
{
	if (!strcmp(path, "[vdso]"))
		return IMAGE_VDSO;
	/* Anonymous memory ("//anon", ""), [heap], [stack], [anon:name], memfd: */
	if (!*path || path[0] == '[' || !strncmp(path, "//anon", 6) ||
	    !strncmp(path, "/memfd:", 7) || !strncmp(path, "/dev/zero", 9))
		return IMAGE_ANON;
	return IMAGE_FILE;
}

/*
 * Size and mtime of a file image, when the path still names the file that
 * was mapped (same device and inode; symlinks are not followed).
 */
static void file_identity(struct db_image *img, const struct map_info *m)
{
	struct stat st;

	if (!m->has_inode || fstatat(AT_FDCWD, m->path, &st, AT_SYMLINK_NOFOLLOW))
		return;
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_dev != m->dev || (uint64_t)st.st_ino != m->ino)
		return;
	img->size = (uint64_t)st.st_size;
	img->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
}

static uint32_t anon_image(struct procs *p, uint32_t pid, const char *comm)
{
	struct db_image img;
	uint32_t i;

	memset(&img, 0, sizeof(img));
	img.kind = IMAGE_ANON;
	snprintf(img.key, sizeof(img.key), "anon-%" PRIu32, pid);
	img.path = xasprintf("[anon:%" PRIu32 "] %s", pid, comm);
	i = procs_intern(p, &img);
	free(img.path);
	return i;
}

static uint32_t map_image(struct procs *p, uint32_t pid, const char *comm,
			  const struct map_info *m)
{
	struct db_image img;

	switch (procs_map_kind(m->path)) {
	case IMAGE_VDSO:
		return p->vdso_image;
	case IMAGE_ANON:
		return anon_image(p, pid, comm);
	default:
		break;
	}
	memset(&img, 0, sizeof(img));
	img.kind = IMAGE_FILE;
	img.path = (char *)m->path;
	if (m->has_inode) {
		img.dev = m->dev;
		img.ino = m->ino;
	}
	if (m->build_id_len && m->build_id_len <= IMAGE_BUILD_ID_MAX) {
		memcpy(img.build_id, m->build_id, m->build_id_len);
		img.build_id_len = m->build_id_len;
		image_key_from_build_id(img.key, img.build_id, img.build_id_len);
	} else {
		image_key_from_path(img.key, m->path, img.dev, img.ino);
	}
	file_identity(&img, m);
	return procs_intern(p, &img);
}

/* ---- address spaces ---------------------------------------------------- */

static struct addr_space *space_new(uint32_t pid, const char *comm)
{
	struct addr_space *as = XNEW(struct addr_space);

	as->refs = 1;
	as->pid = pid;
	snprintf(as->comm, sizeof(as->comm), "%s", comm ? comm : "");
	return as;
}

static struct addr_space *space_copy(const struct addr_space *src, uint32_t pid)
{
	struct addr_space *as = space_new(pid, src->comm);

	if (src->n) {
		as->maps = xmemdup(src->maps, src->n * sizeof(*src->maps));
		as->n = as->alloc = src->n;
	}
	return as;
}

/* Drops one process's reference. */
static void space_put(struct procs *p, struct addr_space *as)
{
	if (--as->refs)
		return;
	if (!as->slot) {
		space_free(as);
		return;
	}
	as->retired = true;
	ALLOC_GROW(p->retired, p->n_retired + 1, p->alloc_retired);
	p->retired[p->n_retired++] = as;
}

static struct addr_space *get_space(struct procs *p, uint32_t pid)
{
	uint64_t v;

	return u64map_get(&p->pid_as, pid, &v) && v ? (struct addr_space *)(uintptr_t)v : NULL;
}

/* Makes as the address space of pid (taking over the caller's reference). */
static void set_space(struct procs *p, uint32_t pid, struct addr_space *as)
{
	uint64_t *slot = u64map_slot(&p->pid_as, pid);
	struct addr_space *old = *slot ? (struct addr_space *)(uintptr_t)*slot : NULL;

	*slot = (uint64_t)(uintptr_t)as;
	if (old)
		space_put(p, old);
}

/* The address space of pid, created empty if the process is new to us. */
static struct addr_space *space_of(struct procs *p, uint32_t pid)
{
	struct addr_space *as = get_space(p, pid);

	if (!as) {
		as = space_new(pid, NULL);
		set_space(p, pid, as);
	}
	return as;
}

void procs_fork(struct procs *p, uint32_t pid, uint32_t ppid)
{
	struct addr_space *parent = get_space(p, ppid);

	p->st.forks++;
	u64map_slot(&p->lazy_failed, pid)[0] = 0;
	if (parent) {
		parent->refs++;
		set_space(p, pid, parent);
	} else {
		set_space(p, pid, space_new(pid, NULL));
	}
}

void procs_exec(struct procs *p, uint32_t pid, const char *comm)
{
	p->st.execs++;
	u64map_slot(&p->lazy_failed, pid)[0] = 0;
	set_space(p, pid, space_new(pid, comm));
}

void procs_comm(struct procs *p, uint32_t pid, const char *comm)
{
	struct addr_space *as = get_space(p, pid);

	/* A shared space keeps its first name: the pid may be a child's. */
	if (as && (as->pid == pid || !as->comm[0]))
		snprintf(as->comm, sizeof(as->comm), "%s", comm);
}

void procs_exit(struct procs *p, uint32_t pid)
{
	p->st.exits++;
	if (!get_space(p, pid))
		return;
	set_space(p, pid, NULL);
}

/* Index of the first mapping ending after addr. */
static size_t first_after(const struct addr_space *as, uint64_t addr)
{
	return LOWER_BOUND(as->n, k, as->maps[k].end <= addr);
}

static void insert_at(struct addr_space *as, size_t i, const struct mapping *m)
{
	ALLOC_GROW(as->maps, as->n + 1, as->alloc);
	memmove(&as->maps[i + 1], &as->maps[i], (as->n - i) * sizeof(*as->maps));
	as->maps[i] = *m;
	as->n++;
}

/* Replaces whatever as maps in [m->start, m->end) with m. */
static void replace_range(struct addr_space *as, const struct mapping *m)
{
	size_t i = first_after(as, m->start), j = i;
	struct mapping head, tail;
	bool has_head = false, has_tail = false;

	while (j < as->n && as->maps[j].start < m->end)
		j++;
	if (i < j && as->maps[i].start < m->start) {
		head = as->maps[i];
		head.end = m->start;
		has_head = true;
	}
	if (i < j && as->maps[j - 1].end > m->end) {
		tail = as->maps[j - 1];
		tail.pgoff += m->end - tail.start;
		tail.start = m->end;
		has_tail = true;
	}
	memmove(&as->maps[i], &as->maps[j], (as->n - j) * sizeof(*as->maps));
	as->n -= j - i;
	if (has_head)
		insert_at(as, i++, &head);
	insert_at(as, i++, m);
	if (has_tail)
		insert_at(as, i, &tail);
}

void procs_mmap(struct procs *p, uint32_t pid, const struct map_info *mi)
{
	struct addr_space *as = space_of(p, pid);
	struct mapping m;
	size_t i;

	p->st.mmaps++;
	if (!mi->len || mi->start + mi->len < mi->start)
		return;
	m.start = mi->start;
	m.end = mi->start + mi->len;
	m.pgoff = mi->pgoff;
	m.image = map_image(p, pid, as->comm, mi);
	i = first_after(as, m.start);
	if (i == as->n || as->maps[i].start >= m.end) {
		/* New ground: nothing sampled there can resolve differently. */
		insert_at(as, i, &m);
		return;
	}
	if (as->maps[i].start == m.start && as->maps[i].end == m.end &&
	    as->maps[i].pgoff == m.pgoff && as->maps[i].image == m.image)
		return;
	if (as->refs > 1 || as->slot) {
		/* Samples already counted (or other processes) may need the old mapping. */
		struct addr_space *copy = space_copy(as, pid);

		p->st.cow_copies++;
		replace_range(copy, &m);
		set_space(p, pid, copy);
		return;
	}
	replace_range(as, &m);
}

/* ---- samples ----------------------------------------------------------- */

struct addr_space *procs_lookup(struct procs *p, uint32_t pid)
{
	struct addr_space *as = get_space(p, pid);
	uint64_t tried;

	if (as || !p->lazy_scan || !pid)
		return as;
	if (u64map_get(&p->lazy_failed, pid, &tried) && tried)
		return NULL;
	p->st.lazy_scans++;
	procs_scan(p, pid);
	as = get_space(p, pid);
	if (!as)
		*u64map_slot(&p->lazy_failed, pid) = 1;
	return as;
}

unsigned procs_slot(struct procs *p, struct addr_space *as)
{
	if (as->slot)
		return as->slot;
	if (!p->n_free) {
		p->st.no_slot++;
		return 0;
	}
	as->slot = p->free_slots[--p->n_free];
	p->slots[as->slot] = as;
	return as->slot;
}

const struct mapping *procs_mapping(const struct addr_space *as, uint64_t addr)
{
	size_t i = as ? first_after(as, addr) : 0;

	return as && i < as->n && as->maps[i].start <= addr ? &as->maps[i] : NULL;
}

bool procs_resolve(struct procs *p, struct addr_space *as, uint64_t pc, uint32_t *image,
		   uint64_t *offset)
{
	size_t i = as ? first_after(as, pc) : 0;
	const struct mapping *m;
	enum image_kind kind;

	if (!as || i == as->n || as->maps[i].start > pc) {
		*image = p->unknown_image;
		*offset = pc;
		return false;
	}
	m = &as->maps[i];
	*image = m->image;
	kind = p->images[m->image].img.kind;
	if (kind == IMAGE_FILE)
		*offset = pc - m->start + m->pgoff;
	else if (kind == IMAGE_VDSO)
		*offset = pc - m->start;
	else
		*offset = pc;
	return true;
}

/*
 * u64map cannot delete: exited processes leave zero values behind.  Rebuild
 * the map from the live ones so memory follows the live processes, not
 * every pid ever seen.
 */
static void compact_pids(struct procs *p)
{
	struct u64map live = U64MAP_INIT;
	uint64_t pid, v;
	size_t n = 0;

	for (size_t i = 0; u64map_next(&p->pid_as, &i, &pid, &v);)
		n += v != 0;
	if (n * 4 > p->pid_as.size)
		return;
	for (size_t i = 0; u64map_next(&p->pid_as, &i, &pid, &v);)
		if (v)
			*u64map_slot(&live, pid) = v;
	u64map_release(&p->pid_as);
	p->pid_as = live;
}

void procs_drained(struct procs *p)
{
	for (size_t i = 0; i < p->n_retired; i++) {
		struct addr_space *as = p->retired[i];

		p->slots[as->slot] = NULL;
		p->free_slots[p->n_free++] = as->slot;
		space_free(as);
	}
	p->n_retired = 0;
	/* Forget failed lazy scans now and then: pids are reused. */
	u64map_clear(&p->lazy_failed);
	compact_pids(p);
}

bool procs_slots_low(const struct procs *p, size_t want)
{
	return p->n_free < want;
}

size_t procs_bytes(const struct procs *p)
{
	size_t n = sizeof(*p) + SHASH_SLOTS * sizeof(uint32_t);

	for (unsigned s = 0; s < SHASH_SLOTS; s++)
		if (p->slots[s])
			n += sizeof(struct addr_space) + p->slots[s]->alloc * sizeof(struct mapping);
	n += p->pid_as.cap * 17 + p->key_image.cap * 17;
	n += p->alloc_images * sizeof(struct cimage);
	for (size_t i = 0; i < p->n_images; i++)
		n += strlen(p->images[i].img.path) + 1;
	return n;
}
