/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/image.c - images by kind: binaries and debug files, kallsyms,
 * perf maps, the vdso; verification; lazy procedures, code and DWARF.
 */
#include "config.h"

#include "disasm/image.h"

#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/die.h"
#include "core/hash.h"
#include "core/strbuf.h"
#include "core/u64map.h"
#include "core/xalloc.h"
#include "db/auxfile.h"
#include "db/binaries.h"
#include "db/db.h"
#include "db/symfile.h"
#include "disasm/decode.h"
#include "disasm/elffile.h"
#include "disasm/elfsyms.h"
#include "disasm/textsyms.h"

#define NORETURN_DEPTH 6
/* Instructions decoded for a callee's noreturn analysis kept for its own CFG, at most. */
#define KEPT_INSNS_MAX (1u << 18)
/* kept_by_start's mark of a procedure whose own CFG was built: nothing kept for it after */
#define KEPT_BUILT UINT64_MAX

/* A callee's instructions, decoded to see if it returns, kept for its own CFG. */
struct kept_decode {
	uint64_t end;
	struct insn *v;
	size_t n;
};

/* The direct jump targets of a code fragment outside procedures jump into (a .cold part). */
struct frag {
	uint64_t *targets;
	size_t n;
};

enum nr_state { NR_UNKNOWN = 0, NR_RETURNS = 1, NR_NORETURN = 2, NR_BUSY = 3 };

/*
 * Binaries open at once, at most, and their bytes: the others are closed
 * (their mappings gone) until they are needed again.  A server's epoch has
 * 10,000 images; a report reads each one's symbols, a few procedures'
 * code, and goes on.
 */
#define OPEN_MAX 32
#define OPEN_BYTES_MAX (256u << 20)

struct image_private {
	struct image_opts opts;
	/*
	 * The binary and its debug file while open (NULL when closed: opened
	 * again by bin_pin()), guarded by the cache's lock with the fields
	 * after them.
	 */
	struct elffile *bin, *dbg;
	unsigned pins;                  /* users of bin now: it stays open */
	struct image *lru_prev, *lru_next; /* in the cache of open binaries (file images) */
	bool cached;                    /* in that list */
	bool lost;                      /* could not be opened again as the same binary */
	/* what is kept of the binary while it is closed */
	bool has_bin;                   /* a binary was opened */
	bool arch_known, bin_has_code;
	struct elffile segs;            /* its PT_LOAD segments only (offsets <-> addresses) */
	uint8_t bin_id[ELF_BUILD_ID_MAX];
	unsigned bin_id_len;
	uint64_t bin_size;
	/* a file's image is shared by the epochs that profiled the same file (see below) */
	unsigned refs;                  /* guarded by shared_images.lock */
	uint64_t identity;              /* hash of what it was opened from */
	struct image *same_next;        /* the next shared image of that hash (idem) */
	bool dbg_searched;
	bool procs_loaded;
	struct proctab procs;
	struct proc **gaps;
	size_t n_gaps, alloc_gaps;
	struct u64map gap_by_start;     /* start -> index + 1 */
	struct dwarf_info *dw;
	bool dw_tried;
	const char *dw_why;
	struct u64map noreturn;         /* callee address -> enum nr_state */
	unsigned nr_depth;
	struct u64map kept_by_start;    /* procedure start -> index + 1 in kept (0: none),
					   or KEPT_BUILT */
	struct kept_decode *kept;
	size_t n_kept, alloc_kept, kept_insns;
	struct u64map frag_by_start;    /* outside fragment start -> index + 1 in frags */
	struct frag *frags;
	size_t n_frags, alloc_frags;
};

/* ---- the binaries open at once ---------------------------------------------------- */

static struct {
	pthread_mutex_t lock;
	struct image *head, *tail;      /* most recently used first */
	size_t n, bytes;
} open_bins = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void lru_unlink(struct image *img)
{
	struct image_private *p = img->priv;

	if (!p->cached)
		return;
	*(p->lru_prev ? &p->lru_prev->priv->lru_next : &open_bins.head) = p->lru_next;
	*(p->lru_next ? &p->lru_next->priv->lru_prev : &open_bins.tail) = p->lru_prev;
	p->lru_prev = p->lru_next = NULL;
	p->cached = false;
	open_bins.n--;
	open_bins.bytes -= p->bin_size;
}

static void lru_push(struct image *img)
{
	struct image_private *p = img->priv;

	p->lru_next = open_bins.head;
	p->lru_prev = NULL;
	*(open_bins.head ? &open_bins.head->priv->lru_prev : &open_bins.tail) = img;
	open_bins.head = img;
	p->cached = true;
	open_bins.n++;
	open_bins.bytes += p->bin_size;
}

/* Closes the least recently used binaries nobody uses now, down to the bounds (lock held). */
static void lru_trim(void)
{
	struct image *img = open_bins.tail;

	while (img && (open_bins.n > OPEN_MAX || open_bins.bytes > OPEN_BYTES_MAX)) {
		struct image *prev = img->priv->lru_prev;
		struct image_private *p = img->priv;

		if (!p->pins) {
			lru_unlink(img);
			elffile_close(p->bin);
			elffile_close(p->dbg);
			p->bin = p->dbg = NULL;
		}
		img = prev;
	}
}

/* What is kept of a binary just opened, and it in the cache (a file's; lock not held). */
static void bin_opened(struct image *img)
{
	struct image_private *p = img->priv;
	struct elffile *ef = p->bin;

	p->has_bin = true;
	p->arch_known = ef->arch_known;
	p->bin_has_code = elffile_has_code(ef);
	p->segs.n_loads = ef->n_loads;
	p->segs.loads = ef->n_loads ? xmemdup(ef->loads, ef->n_loads * sizeof(*ef->loads))
				    : xcalloc(1, sizeof(*ef->loads)); /* no loads: none to copy */
	memcpy(p->bin_id, ef->build_id, sizeof(p->bin_id));
	p->bin_id_len = ef->build_id_len;
	p->bin_size = ef->file_size;
	if (img->rec.kind != IMAGE_FILE)
		return;  /* the vdso: a copy in memory, never closed */
	pthread_mutex_lock(&open_bins.lock);
	lru_push(img);
	lru_trim();
	pthread_mutex_unlock(&open_bins.lock);
}

static struct elffile *open_quiet(const char *path, char **err);

/*
 * The binary, open (again, if it was closed: the same build-id and size
 * as when first opened, else it is lost) and pinned until bin_unpin();
 * NULL if there is none or it is lost.
 */
static struct elffile *bin_pin(struct image *img)
{
	struct image_private *p = img->priv;
	struct elffile *ef;

	if (!p->has_bin)
		return NULL;
	pthread_mutex_lock(&open_bins.lock);
	if (!p->bin && !p->lost) {
		ef = open_quiet(img->bin_path, NULL);
		if (ef && ef->file_size == p->bin_size && ef->build_id_len == p->bin_id_len &&
		    !memcmp(ef->build_id, p->bin_id, p->bin_id_len)) {
			p->bin = ef;
			lru_push(img);
		} else {
			elffile_close(ef);
			p->lost = true;
		}
	} else if (p->cached && open_bins.head != img) {
		lru_unlink(img);
		lru_push(img);
	}
	if ((ef = p->bin)) {
		p->pins++;
		lru_trim();
	}
	pthread_mutex_unlock(&open_bins.lock);
	return ef;
}

static void bin_unpin(struct image *img)
{
	pthread_mutex_lock(&open_bins.lock);
	img->priv->pins--;
	lru_trim();
	pthread_mutex_unlock(&open_bins.lock);
}

/* The debug file found for a pinned binary, open again if it was closed (NULL: none). */
static struct elffile *debug_file(struct image *img)
{
	struct image_private *p = img->priv;

	if (!p->dbg && img->dbg_path) {
		struct elffile *d = open_quiet(img->dbg_path, NULL);

		pthread_mutex_lock(&open_bins.lock);
		if (!p->dbg)
			p->dbg = d;
		else
			elffile_close(d);
		pthread_mutex_unlock(&open_bins.lock);
	}
	return p->dbg;
}

const char *image_state_name(enum image_state state)
{
	static const char *const names[] = { "ok", "names-only", "missing", "changed",
					     "unreadable", "nothing" };

	return (unsigned)state < ARRAY_SIZE(names) ? names[state] : "?";
}

static void set_state(struct image *img, enum image_state st, char *why)
{
	img->state = st;
	free(img->why);
	img->why = why;
}

static const char *debug_dir(const struct image *img)
{
	const char *d = img->priv->opts.debug_dir;

	if (!d || !*d)
		d = getenv("DCPI_DEBUG_DIR");
	return d && *d ? d : "/usr/lib/debug";
}

/* ---- files ----------------------------------------------------------------- */

static bool same_build_id(const struct elffile *ef, const struct db_image *rec)
{
	return ef->build_id_len == rec->build_id_len &&
	       !memcmp(ef->build_id, rec->build_id, rec->build_id_len);
}

/* Opens path without reporting; NULL if absent or not ELF (*err, if err, says why). */
static struct elffile *open_quiet(const char *path, char **err)
{
	char *why = NULL;
	struct elffile *ef = elffile_open_why(path, &why);

	if (err)
		*err = why;
	else
		free(why);
	return ef;
}

/* Checks a binary against its record; returns NULL if it matches, else why not. */
static char *verify(const struct image *img, const struct elffile *ef, const char *path)
{
	const struct db_image *rec = &img->rec;
	struct stat st;

	if (rec->build_id_len) {
		struct strbuf want = STRBUF_INIT;
		char have[2 * ELF_BUILD_ID_MAX + 1];
		char *why;

		if (same_build_id(ef, rec))
			return NULL;
		strbuf_add_build_id(&want, rec);
		elffile_build_id_hex(ef, have);
		why = xasprintf("'%s' is not the binary profiled: build-id %s, profiled %s", path,
				have[0] ? have : "(none)", want.buf);
		strbuf_release(&want);
		return why;
	}
	if (!rec->size && !rec->mtime_ns)
		return NULL;
	if (stat(path, &st))
		return xasprintf("cannot stat '%s': %s", path, strerror(errno));
	if ((rec->size && (uint64_t)st.st_size != rec->size) ||
	    (rec->mtime_ns &&
	     (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec != rec->mtime_ns))
		return xasprintf("'%s' changed since it was profiled (size or modification time differ)",
				 path);
	return NULL;
}

/* The database's snapshot of the binary, binaries/BUILD-ID, if there is one. */
static char *snapshot_path(const struct image *img)
{
	struct strbuf hex = STRBUF_INIT;
	const struct image_opts *o = &img->priv->opts;
	char *path;

	if (!o->db || !img->rec.build_id_len)
		return NULL;
	strbuf_add_build_id(&hex, &img->rec);
	path = db_binary_path(o->db, hex.buf);
	strbuf_release(&hex);
	return path;
}

#define DELETED_SUFFIX " (deleted)"

/*
 * The length of path without the " (deleted)" the kernel gives a mapping
 * whose file was unlinked, or 0 if it has none.
 */
static size_t deleted_path_len(const char *path)
{
	size_t n = strlen(path), k = strlen(DELETED_SUFFIX);

	return n > k && !strcmp(path + n - k, DELETED_SUFFIX) ? n - k : 0;
}

static void open_file(struct image *img)
{
	struct image_private *p = img->priv;
	char *snap = snapshot_path(img), *err = NULL, *why;
	const char *path = snap ? snap : img->rec.path;
	size_t deleted = deleted_path_len(img->rec.path);

	/*
	 * A file deleted while it ran: the kernel named it "PATH (deleted)",
	 * no file has that name, and PATH, if there is one now, is another
	 * file.  Only the snapshot can stand for it.
	 */
	if (deleted) {
		img->deleted = xasprintf("%.*s, deleted since; %s", (int)deleted, img->rec.path,
					 snap ? "snapshot kept" : "no snapshot");
		if (!snap) {
			set_state(img, IMAGE_MISSING, xstrdup(img->deleted));
			return;
		}
	}
	/* opened first (10,000 binaries: one system call less each); missing when it is not there */
	if (!(p->bin = open_quiet(path, &err))) {
		if (access(path, F_OK)) {
			set_state(img, IMAGE_MISSING,
				  xasprintf("cannot open '%s': %s", path, strerror(errno)));
			free(err);
		} else {
			set_state(img, IMAGE_UNREADABLE, err);
		}
		free(snap);
		return;
	}
	img->bin_path = snap ? snap : xstrdup(img->rec.path);
	if ((why = verify(img, p->bin, img->bin_path))) {
		set_state(img, IMAGE_CHANGED, why);
		img->forced = p->opts.force;
	}
	img->arch = p->bin->arch;
	if (img->state == IMAGE_OK && !p->bin->arch_known)
		set_state(img, IMAGE_NAMES_ONLY,
			  xasprintf("'%s': machine %u is not supported for decoding", img->bin_path,
				    p->bin->machine));
	bin_opened(img);
}

/* ---- the vdso of the running kernel ------------------------------------------ */

static void open_vdso(struct image *img)
{
	struct image_private *p = img->priv;
	const unsigned char *base = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	struct utsname u;
	size_t size = 0;
	char *err = NULL;

	if (!base || memcmp(base, ELFMAG, SELFMAG) || base[EI_CLASS] != ELFCLASS64) {
		set_state(img, IMAGE_MISSING, xstrdup("no vdso in this process"));
		return;
	}
	/* the vdso image ends with its section headers */
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff) + i;

		if (ph->p_type == PT_LOAD && ph->p_offset + ph->p_filesz > size)
			size = ph->p_offset + ph->p_filesz;
	}
	if (size > (64u << 20) || !(p->bin = elffile_open_mem(base, size, "[vdso]", &err))) {
		free(err);
		set_state(img, IMAGE_MISSING, xstrdup("cannot read the vdso of this process"));
		return;
	}
	img->bin_path = xstrdup("[vdso]");
	img->arch = p->bin->arch;
	if (img->rec.build_id_len && !same_build_id(p->bin, &img->rec))
		set_state(img, IMAGE_CHANGED,
			  xstrdup("the running kernel's vdso is not the one profiled (build-id differs)"));
	else if (!img->rec.build_id_len && p->opts.kernel_release && !uname(&u) &&
		 strcmp(u.release, p->opts.kernel_release))
		set_state(img, IMAGE_CHANGED,
			  xasprintf("the vdso profiled is that of kernel %s; this is %s",
				    p->opts.kernel_release, u.release));
	if (img->state == IMAGE_CHANGED)
		img->forced = p->opts.force;
	bin_opened(img);
}

/* ---- open / free --------------------------------------------------------------- */

/*
 * The images of files open in this process, shared: every epoch of a
 * week profiled the same binaries, and a diff of two epochs or a second
 * epoch opened in dcpi-tui finds their symbols read once.  Two records
 * name the same image when they name the same file the same way: key,
 * path, build-id, size and mtime, in the same database, forced alike,
 * with the same debug directory.
 */
static struct {
	pthread_mutex_t lock;
	struct u64map by_identity;      /* identity -> the images of that hash, a list (0: none) */
} shared_images = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The first of the shared images of hash id, NULL if none (lock held). */
static struct image *same_first(uint64_t id)
{
	uint64_t k;

	return u64map_get(&shared_images.by_identity, id, &k) ? (struct image *)(uintptr_t)k : NULL;
}

static void same_set_first(uint64_t id, struct image *img)
{
	*u64map_slot(&shared_images.by_identity, id) = (uint64_t)(uintptr_t)img;
}

static uint64_t identity_of(const struct db_image *rec, const struct image_opts *o)
{
	uint64_t h = hash_bytes(HASH_FNV_INIT, rec->key, strlen(rec->key) + 1);
	const void *db = o ? (const void *)o->db : NULL;
	const char *dd = o && o->debug_dir ? o->debug_dir : "";
	uint8_t force = o && o->force;

	h = hash_bytes(h, rec->path ? rec->path : "", rec->path ? strlen(rec->path) + 1 : 1);
	h = hash_bytes(h, rec->build_id, rec->build_id_len);
	h = hash_bytes(h, &rec->size, sizeof(rec->size));
	h = hash_bytes(h, &rec->mtime_ns, sizeof(rec->mtime_ns));
	h = hash_bytes(h, &db, sizeof(db));
	h = hash_bytes(h, dd, strlen(dd) + 1);
	return hash_bytes(h, &force, 1);
}

static bool same_opening(const struct image *img, const struct db_image *rec,
			 const struct image_opts *o)
{
	const struct image_opts *io = &img->priv->opts;
	const char *dd = o && o->debug_dir ? o->debug_dir : "";

	return !strcmp(img->rec.key, rec->key) && !strcmp(img->rec.path, rec->path ? rec->path : "") &&
	       img->rec.build_id_len == rec->build_id_len &&
	       !memcmp(img->rec.build_id, rec->build_id, rec->build_id_len) &&
	       img->rec.size == rec->size && img->rec.mtime_ns == rec->mtime_ns &&
	       io->db == (o ? o->db : NULL) && io->force == (o && o->force) &&
	       !strcmp(io->debug_dir ? io->debug_dir : "", dd);
}

/* The shared image opened from rec as o says, with a reference for the caller, or NULL (lock held). */
static struct image *shared_find(uint64_t id, const struct db_image *rec, const struct image_opts *o)
{
	for (struct image *img = same_first(id); img; img = img->priv->same_next) {
		if (same_opening(img, rec, o)) {
			img->priv->refs++;
			return img;
		}
	}
	return NULL;
}

/* Shares img (just opened), or returns the image shared meanwhile (img freed). */
static struct image *shared_add(struct image *img)
{
	struct image_private *p = img->priv;
	struct image *found;

	pthread_mutex_lock(&shared_images.lock);
	if ((found = shared_find(p->identity, &img->rec, &p->opts))) {
		pthread_mutex_unlock(&shared_images.lock);
		p->identity = 0;
		image_free(img);
		return found;
	}
	p->refs = 1;
	p->same_next = same_first(p->identity);
	same_set_first(p->identity, img);
	pthread_mutex_unlock(&shared_images.lock);
	return img;
}

/* Drops a reference to a shared image: false while others hold it (else it is no longer shared). */
static bool shared_put(struct image *img)
{
	struct image_private *p = img->priv;
	bool last;

	pthread_mutex_lock(&shared_images.lock);
	last = !--p->refs;
	if (last) {
		struct image *at = same_first(p->identity), *prev = NULL;

		while (at != img) {
			prev = at;
			at = at->priv->same_next;
		}
		if (prev)
			prev->priv->same_next = p->same_next;
		else
			same_set_first(p->identity, p->same_next);
	}
	pthread_mutex_unlock(&shared_images.lock);
	return last;
}

struct image *image_open(const struct db_image *rec, const struct image_opts *opts)
{
	struct image *img;
	const char *slash;
	uint64_t id = 0;

	if (rec->kind == IMAGE_FILE) {
		id = identity_of(rec, opts);
		pthread_mutex_lock(&shared_images.lock);
		img = shared_find(id, rec, opts);
		pthread_mutex_unlock(&shared_images.lock);
		if (img)
			return img;
	}
	img = XNEW(struct image);
	img->priv = XNEW(struct image_private);
	img->priv->identity = id;
	if (opts)
		img->priv->opts = *opts;
	img->rec = *rec;
	img->rec.path = xstrdup(rec->path ? rec->path : "");
	slash = strrchr(img->rec.path, '/');
	img->base = slash ? slash + 1 : img->rec.path;
	proctab_init(&img->priv->procs);
	u64map_init(&img->priv->gap_by_start);
	u64map_init(&img->priv->noreturn);
	u64map_init(&img->priv->kept_by_start);
	u64map_init(&img->priv->frag_by_start);
	img->arch = ARCH_X86_64;
	switch (rec->kind) {
	case IMAGE_FILE:
		open_file(img);
		break;
	case IMAGE_VDSO:
		open_vdso(img);
		break;
	case IMAGE_KERNEL:
	case IMAGE_MODULE:
	case IMAGE_ANON:
		set_state(img, IMAGE_NAMES_ONLY,
			  xstrdup(rec->kind == IMAGE_ANON ? "no code for anonymous memory (JIT)"
							  : "no code for kernel images"));
		break;
	default:
		set_state(img, IMAGE_NOTHING, xstrdup("samples that no image holds"));
	}
	return rec->kind == IMAGE_FILE ? shared_add(img) : img;
}

void image_free(struct image *img)
{
	struct image_private *p;

	if (!img)
		return;
	p = img->priv;
	if (p->identity && !shared_put(img))
		return;
	pthread_mutex_lock(&open_bins.lock);
	lru_unlink(img);
	pthread_mutex_unlock(&open_bins.lock);
	elffile_close(p->bin);
	elffile_close(p->dbg);
	free(p->segs.loads);
	proctab_release(&p->procs);
	for (size_t i = 0; i < p->n_gaps; i++)
		free(p->gaps[i]);
	free(p->gaps);
	u64map_release(&p->gap_by_start);
	u64map_release(&p->noreturn);
	u64map_release(&p->kept_by_start);
	for (size_t i = 0; i < p->n_kept; i++)
		free(p->kept[i].v);
	free(p->kept);
	u64map_release(&p->frag_by_start);
	for (size_t i = 0; i < p->n_frags; i++)
		free(p->frags[i].targets);
	free(p->frags);
	dwarf_info_close(p->dw);
	free(p);
	free(img->rec.path);
	free(img->why);
	free(img->deleted);
	free(img->bin_path);
	free(img->dbg_path);
	free(img->syms_why);
	free(img);
}

static bool binary_usable(const struct image *img)
{
	return img->priv->has_bin && (img->state != IMAGE_CHANGED || img->forced);
}

/* ---- debug files -------------------------------------------------------------- */

static struct elffile *try_debug(const struct image *img, const char *path, bool check_crc)
{
	const struct elffile *bin = img->priv->bin;
	struct elffile *d;
	uint32_t crc;

	if (access(path, R_OK) || !strcmp(path, img->bin_path))
		return NULL;
	if (!(d = open_quiet(path, NULL)))
		return NULL;
	if (bin->build_id_len && d->build_id_len) {
		if (d->build_id_len == bin->build_id_len &&
		    !memcmp(d->build_id, bin->build_id, bin->build_id_len))
			return d;
	} else if (check_crc && !elffile_crc32_path(path, &crc) && crc == bin->debuglink_crc) {
		return d;
	}
	elffile_close(d);
	return NULL;
}

static void find_debug(struct image *img)
{
	struct image_private *p = img->priv;
	const struct elffile *bin = p->bin;
	char hex[2 * ELF_BUILD_ID_MAX + 1], *dir, *path;
	const char *dd = debug_dir(img);

	if (p->dbg_searched || !bin)
		return;
	p->dbg_searched = true;
	if (bin->build_id_len >= 2) {
		elffile_build_id_hex(bin, hex);
		path = xasprintf("%s/.build-id/%.2s/%s.debug", dd, hex, hex + 2);
		p->dbg = try_debug(img, path, false);
		if (p->dbg)
			img->dbg_path = path;
		else
			free(path);
	}
	if (p->dbg || !bin->debuglink || img->rec.kind != IMAGE_FILE)
		return;
	dir = xstrdup(img->bin_path);
	*(strrchr(dir, '/') ? strrchr(dir, '/') : dir) = '\0';
	const char *fmts[] = { "%s/%s", "%s/.debug/%s", NULL };
	for (int i = 0; !p->dbg && i < 3; i++) {
		path = i < 2 ? xasprintf(fmts[i], dir, bin->debuglink)
			     : xasprintf("%s%s/%s", dd, dir, bin->debuglink);
		p->dbg = try_debug(img, path, true);
		if (p->dbg)
			img->dbg_path = path;
		else
			free(path);
	}
	free(dir);
}

/* ---- procedures ---------------------------------------------------------------- */

static int load_aux_syms(struct image *img, const char *name,
			 long (*load)(struct proctab *, const char *, size_t))
{
	struct image_private *p = img->priv;
	struct strbuf sb = STRBUF_INIT;
	int r = -1;

	if (!p->opts.db) {
		proctab_finish(&p->procs, NULL, NULL);
		set_state(img, IMAGE_MISSING, xasprintf("no %s to name its samples", name));
		return 0;
	}
	r = db_symfile_load(p->opts.db, p->opts.seq, name, &sb);
	if (r == DB_SYMFILE_UNVERIFIED)
		r = 0;  /* an older dcpi's plain copy: used, and reported as unverified */
	if (r == DB_SYMFILE_ABSENT) {
		proctab_finish(&p->procs, NULL, NULL);
		set_state(img, IMAGE_MISSING, xasprintf("epoch %u has no %s", p->opts.seq, name));
		r = 0;
	} else if (r == 0 && load(&p->procs, sb.buf, sb.len) < 0) {
		img->syms_why = xasprintf("cannot read symbols from %s: no usable addresses", name);
		r = -1;
	} else if (r < 0) {
		proctab_finish(&p->procs, NULL, NULL);
		img->syms_why = xasprintf("cannot read symbols from %s", name);
	}
	strbuf_release(&sb);
	return r;
}

static int load_elf_syms(struct image *img)
{
	struct image_private *p = img->priv;
	struct elffile *bin;
	int r = 0;

	if (!binary_usable(img) || !(bin = bin_pin(img))) {
		proctab_finish(&p->procs, NULL, NULL);
		return 0;
	}
	if (!elffile_section(bin, ".symtab"))
		find_debug(img);
	if (elfsyms_load(&p->procs, bin, debug_file(img), img->base)) {
		img->syms_why = xasprintf("cannot read symbols of '%s': %s", img->bin_path,
					  bin->sections_bad ? "damaged section headers"
							    : "malformed symbol tables or .eh_frame");
		r = -1;
	}
	bin_unpin(img);
	if (r)
		return -1;
	if (!p->procs.n)
		img->syms_why = xasprintf("no symbols in '%s' (no symbol table and no .eh_frame)",
					  img->bin_path);
	return 0;
}

int image_load_procs(struct image *img)
{
	struct image_private *p = img->priv;
	char name[64];
	int r;

	if (p->procs_loaded)
		return img->syms_bad ? -1 : 0;
	p->procs_loaded = true;
	switch (img->rec.kind) {
	case IMAGE_FILE:
	case IMAGE_VDSO:
		r = load_elf_syms(img);
		break;
	case IMAGE_KERNEL:
	case IMAGE_MODULE:
		r = load_aux_syms(img, "kallsyms", kallsyms_load);
		break;
	case IMAGE_ANON:
		if (strncmp(img->rec.key, "anon-", 5) || strlen(img->rec.key) > 40) {
			proctab_finish(&p->procs, NULL, NULL);
			r = 0;
			break;
		}
		snprintf(name, sizeof(name), "perf-%s.map", img->rec.key + 5);
		r = load_aux_syms(img, name, perfmap_load);
		break;
	default:
		proctab_finish(&p->procs, NULL, NULL);
		r = 0;
	}
	img->syms_bad = r < 0;
	return r;
}

struct proctab *image_procs(struct image *img)
{
	image_load_procs(img);
	return &img->priv->procs;
}

/* ---- addresses ------------------------------------------------------------------ */

static bool offsets_are_addresses(const struct image *img)
{
	return img->rec.kind == IMAGE_KERNEL || img->rec.kind == IMAGE_MODULE ||
	       img->rec.kind == IMAGE_ANON || img->rec.kind == IMAGE_UNKNOWN;
}

bool image_offset_to_addr(const struct image *img, uint64_t offset, uint64_t *addr)
{
	if (offsets_are_addresses(img)) {
		*addr = offset;
		return true;
	}
	return img->priv->has_bin && !elffile_off_to_vaddr(&img->priv->segs, offset, addr);
}

bool image_addr_to_offset(const struct image *img, uint64_t addr, uint64_t *offset)
{
	if (offsets_are_addresses(img)) {
		*offset = addr;
		return true;
	}
	return img->priv->has_bin && !elffile_vaddr_to_off(&img->priv->segs, addr, offset);
}

/* Makes (or finds) the PROC_GAP procedure holding addr. */
static const struct proc *gap_at(struct image *img, uint64_t addr)
{
	struct image_private *p = img->priv;
	const struct elf_section *sec;
	const struct proctab *t = &p->procs;
	uint64_t lo = 0, hi = 0, idx;
	struct elffile *bin;
	size_t next;
	struct proc *g;
	char name[320];

	if (!binary_usable(img) || !(bin = bin_pin(img)))
		return NULL;
	if ((sec = elffile_section_at(bin, addr)) && (sec->flags & SHF_EXECINSTR)) {
		lo = sec->addr;
		hi = sec->addr + sec->size;
	}
	bin_unpin(img);
	if (lo == hi)
		return NULL;
	next = proctab_lower_bound(t, addr);
	if (next < t->n && t->v[next].start < hi)
		hi = t->v[next].start;
	if (next > 0 && t->v[next - 1].end > lo)
		lo = t->v[next - 1].end;
	if (lo > addr || addr >= hi)
		return NULL;
	if (u64map_get(&p->gap_by_start, lo, &idx))
		return p->gaps[idx - 1];
	g = XNEW(struct proc);
	g->start = lo;
	g->end = hi;
	snprintf(name, sizeof(name), "%s+0x%llx", img->base, (unsigned long long)lo);
	g->name = g->sym = proctab_strdup(&p->procs, name);
	g->flags = PROC_GAP;
	ALLOC_GROW(p->gaps, p->n_gaps + 1, p->alloc_gaps);
	p->gaps[p->n_gaps++] = g;
	*u64map_slot(&p->gap_by_start, lo) = p->n_gaps;
	return g;
}

const struct proc *image_proc_at(struct image *img, uint64_t addr)
{
	const struct proc *pr;

	image_load_procs(img);
	if ((pr = proctab_find(&img->priv->procs, addr)))
		return pr;
	return gap_at(img, addr);
}

size_t image_procs_by_name(struct image *img, const char *name, const struct proc **out,
			   size_t max)
{
	size_t n, blen = strlen(img->base);
	const struct proc *g;
	uint64_t addr;
	char *end;

	image_load_procs(img);
	n = proctab_by_name(&img->priv->procs, name, out, max);
	if (n || strncmp(name, img->base, blen) || strncmp(name + blen, "+0x", 3))
		return n;
	/* BASE+0xADDR of a gap not made yet */
	errno = 0;
	addr = strtoull(name + blen + 3, &end, 16);
	if (errno || *end || !(g = gap_at(img, addr)) || g->start != addr)
		return 0;
	if (max)
		out[0] = g;
	return 1;
}

const char *image_unnamed(struct image *img)
{
	image_load_procs(img);
	switch (img->state) {
	case IMAGE_MISSING:
		return img->rec.kind == IMAGE_KERNEL || img->rec.kind == IMAGE_MODULE ? "[kernel]"
										      : "[no binary]";
	case IMAGE_CHANGED:
		if (!img->forced)
			return "[changed binary]";
		break;
	case IMAGE_UNREADABLE:
		return "[no symbols]";
	default:
		break;
	}
	if (!img->priv->procs.n && img->state != IMAGE_NOTHING)
		return "[no symbols]";
	return "[unknown]";
}

/* ---- code ------------------------------------------------------------------------- */

bool image_has_code(const struct image *img, const char **why)
{
	const struct image_private *p = img->priv;
	const char *w = NULL;

	if (img->state == IMAGE_CHANGED && !img->forced)
		w = "the binary changed since it was profiled (use --force to use it anyway)";
	else if (img->state != IMAGE_OK && img->state != IMAGE_CHANGED)
		w = img->why ? img->why : "no code";
	else if (!p->has_bin || !p->arch_known)
		w = "unsupported architecture";
	else if (!p->bin_has_code)
		w = "the file has no code (a debug file?)";
	if (why)
		*why = w;
	return !w;
}

int image_read(struct image *img, uint64_t addr, void *buf, size_t size)
{
	const uint8_t *b;
	struct elffile *bin;
	size_t avail;
	int r = -1;

	if (!binary_usable(img) || !(bin = bin_pin(img)))
		return -1;
	if ((b = elffile_bytes_at(bin, addr, &avail)) && avail >= size) {
		memcpy(buf, b, size);
		r = 0;
	}
	bin_unpin(img);
	return r;
}

struct decoder *image_decoder(struct image *img)
{
	return decoder_of_thread(img->arch);
}

int image_decode(struct image *img, const struct proc *pr, struct insn **v, size_t *n)
{
	const char *why;
	const uint8_t *b;
	size_t avail, alloc = 0, len;
	struct decoder *dec;
	struct elffile *bin;

	*v = NULL;
	*n = 0;
	if (!image_has_code(img, &why))
		return errorf("cannot decode '%s' in '%s': %s", pr->name, img->rec.path, why);
	if (!(bin = bin_pin(img)))
		return errorf("cannot decode '%s': '%s' cannot be opened again as the binary profiled",
			      pr->name, img->bin_path);
	if (!(b = elffile_bytes_at(bin, pr->start, &avail))) {
		bin_unpin(img);
		return errorf("cannot decode '%s': its address 0x%llx is not in '%s'", pr->name,
			      (unsigned long long)pr->start, img->bin_path);
	}
	if (!(dec = image_decoder(img))) {
		bin_unpin(img);
		return -1;
	}
	len = pr->end - pr->start;
	if (len > avail)
		len = avail;
	if (len > (64u << 20))
		len = 64u << 20;
	if (len) {
		/* room for the usual instruction lengths at once (growing copies the array) */
		alloc = len / 3 + 8;
		*v = xmalloc(alloc * sizeof(**v));
		decode_range(dec, b, len, pr->start, v, n, &alloc);
		if (*n + *n / 4 < alloc)
			*v = xreallocarray(*v, *n ? *n : 1, sizeof(**v));
	}
	bin_unpin(img);
	return 0;
}

/* ---- noreturn calls ------------------------------------------------------------------ */

static bool noreturn_name(const char *name)
{
	static const char *const names[] = {
		"abort", "exit", "_exit", "_Exit", "quick_exit", "__assert_fail",
		"__assert_perror_fail", "__assert", "__stack_chk_fail", "__stack_chk_fail_local",
		"__chk_fail", "__fortify_fail", "__libc_fatal", "err", "errx", "verr", "verrx",
		"longjmp", "_longjmp", "siglongjmp", "__longjmp_chk", "pthread_exit",
		"__pthread_exit", "__cxa_throw", "__cxa_rethrow", "__cxa_bad_cast",
		"__cxa_bad_typeid", "__cxa_throw_bad_array_new_length", "__cxa_pure_virtual",
		"__cxa_call_terminate", "_Unwind_Resume", "__libc_start_main",
		"__libc_start_call_main", "_ZSt9terminatev", "__ubsan_handle_builtin_unreachable",
		"__builtin_unreachable", "__go_panic",
	};
	size_t len = strlen(name);
	char buf[256];

	if (len > 4 && !strcmp(name + len - 4, "@plt")) {
		if (len - 4 >= sizeof(buf))
			return false;
		memcpy(buf, name, len - 4);
		buf[len - 4] = '\0';
		name = buf;
	}
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(name, names[i]))
			return true;
	if (!strncmp(name, "_ZSt", 4) && strstr(name, "__throw_"))
		return true;
	if (!strncmp(name, "__asan_report_", 14) ||
	    (!strncmp(name, "__ubsan_handle_", 15) && strstr(name, "_abort")))
		return true;
	return false;
}

static bool noreturn_callback(void *ctx, const struct insn *call)
{
	return call->kind == INSN_CALL && image_noreturn(ctx, call->target);
}

static int read_callback(void *ctx, uint64_t addr, void *buf, size_t size)
{
	return image_read(ctx, addr, buf, size);
}

/*
 * Whether the procedure whose CFG is cfg returns: by a reachable edge that
 * leaves by return, or by a tail call to one that returns.  With peek, a
 * tail call's target is not analysed: *known is false if one would be.
 */
static bool cfg_returns(struct image *img, const struct cfg *cfg, bool peek, bool *known)
{
	struct image_private *p = img->priv;
	bool returns = false;
	uint64_t st;

	*known = true;
	for (size_t e = 0; e < cfg->n_edges && !returns; e++) {
		const struct cfg_edge *ed = &cfg->edges[e];

		if (cfg->blocks[ed->from].flags & CFG_BLOCK_UNREACHABLE)
			continue;
		switch (ed->kind) {
		case CFG_RETURN:
		case CFG_UNRESOLVED:
			returns = true;
			break;
		case CFG_TAIL_CALL:
			if (!ed->target || ed->target == cfg->end) {
				returns = true;
			} else if (!peek) {
				returns = !image_noreturn(img, ed->target);
			} else {
				const struct proc *q = image_proc_at(img, ed->target);

				if (q && q->start == ed->target && !(q->flags & (PROC_GAP | PROC_PLT)) &&
				    (!u64map_get(&p->noreturn, ed->target, &st) ||
				     st == NR_UNKNOWN || st == NR_BUSY)) {
					*known = false;
					return false;
				}
				returns = !image_noreturn(img, ed->target);
			}
			break;
		default:
			break;
		}
	}
	/* an empty procedure, or one made of nothing that leaves: not analysed */
	if (!cfg->n_insns)
		returns = true;
	return returns;
}

/* A procedure never returns if no reachable edge leaves by return or by a call that returns. */
static bool analyse_noreturn(struct image *img, const struct proc *pr)
{
	struct cfg cfg;
	bool returns, known;

	if (image_cfg(img, pr, &cfg))
		return false;
	returns = cfg_returns(img, &cfg, false, &known);
	cfg_release(&cfg);
	return !returns;
}

bool image_noreturn(struct image *img, uint64_t addr)
{
	struct image_private *p = img->priv;
	const struct proc *pr = image_proc_at(img, addr);
	uint64_t *st;
	bool nr;

	if (!pr || pr->start != addr || (pr->flags & PROC_GAP))
		return false;
	if (noreturn_name(pr->sym) || noreturn_name(pr->name))
		return true;
	for (uint32_t i = 0; i < pr->n_aliases; i++)
		if (noreturn_name(p->procs.aliases[pr->alias_first + i]))
			return true;
	if (pr->flags & PROC_PLT)
		return false;
	st = u64map_slot(&p->noreturn, addr);
	if (*st == NR_BUSY || *st == NR_RETURNS)
		return false;
	if (*st == NR_NORETURN)
		return true;
	if (p->nr_depth >= NORETURN_DEPTH)
		return false;
	*st = NR_BUSY;
	p->nr_depth++;
	nr = analyse_noreturn(img, pr);
	p->nr_depth--;
	*u64map_slot(&p->noreturn, addr) = nr ? NR_NORETURN : NR_RETURNS;
	return nr;
}

/* The fragment holding target, decoded once: its direct jumps' targets. */
static const struct frag *fragment(struct image *img, const struct proc *q)
{
	struct image_private *p = img->priv;
	uint64_t idx;
	struct insn *v;
	size_t n, alloc = 0;
	struct frag f = { NULL, 0 };

	if (u64map_get(&p->frag_by_start, q->start, &idx))
		return &p->frags[idx - 1];
	if (!image_decode(img, q, &v, &n)) {
		for (size_t i = 0; i < n; i++)
			if ((v[i].kind == INSN_JUMP || v[i].kind == INSN_CJUMP) &&
			    (v[i].target < q->start || v[i].target >= q->end)) {
				ALLOC_GROW(f.targets, f.n + 1, alloc);
				f.targets[f.n++] = v[i].target;
			}
		free(v);
	}
	ALLOC_GROW(p->frags, p->n_frags + 1, p->alloc_frags);
	p->frags[p->n_frags++] = f;
	*u64map_slot(&p->frag_by_start, q->start) = p->n_frags;
	return &p->frags[p->n_frags - 1];
}

/*
 * Jumps to code outside the procedure come back when that code is a part
 * of it placed elsewhere: a .cold part (named so, or entered in its middle,
 * or an unnamed FDE range in a stripped binary).  A jump to the start of an
 * ordinary function is a tail call: nothing comes back.
 */
static size_t reentries_callback(void *ctx, uint64_t target, uint64_t start, uint64_t end,
				 uint64_t **out)
{
	struct image *img = ctx;
	const struct proc *q = image_proc_at(img, target);
	const struct frag *f;
	size_t n = 0, alloc = 0;

	*out = NULL;
	if (!q || (q->start >= start && q->start < end))
		return 0;
	if (target == q->start && !strstr(q->sym, ".cold") && !(q->flags & (PROC_FDE | PROC_GAP)))
		return 0;
	f = fragment(img, q);
	for (size_t i = 0; i < f->n; i++)
		if (f->targets[i] >= start && f->targets[i] < end) {
			ALLOC_GROW(*out, n + 1, alloc);
			(*out)[n++] = f->targets[i];
		}
	return n;
}

/*
 * Keeps a copy of pr's instructions, decoded for the analysis of whether
 * it returns, for when its own CFG is built (dcpicalc --image builds every
 * procedure's, and decoding is most of building one); not once it was.
 */
static void keep_decode(struct image_private *p, const struct proc *pr, const struct insn *v,
			size_t n)
{
	uint64_t *slot;

	if (!n || p->kept_insns + n > KEPT_INSNS_MAX)
		return;
	slot = u64map_slot(&p->kept_by_start, pr->start);
	if (*slot)
		return;
	ALLOC_GROW(p->kept, p->n_kept + 1, p->alloc_kept);
	p->kept[p->n_kept] = (struct kept_decode){ pr->end, xmemdup(v, n * sizeof(*v)), n };
	*slot = ++p->n_kept;
	p->kept_insns += n;
}

/* pr's instructions if keep_decode() kept them (then no longer kept). */
static bool take_decode(struct image_private *p, const struct proc *pr, struct insn **v,
			size_t *n)
{
	uint64_t idx;
	struct kept_decode *k;

	if (!p->kept_insns || !u64map_get(&p->kept_by_start, pr->start, &idx) || !idx ||
	    idx == KEPT_BUILT)
		return false;
	k = &p->kept[idx - 1];
	if (!k->v || k->end != pr->end)
		return false;
	*v = k->v;
	*n = k->n;
	p->kept_insns -= k->n;
	k->v = NULL;
	k->n = 0;
	*u64map_slot(&p->kept_by_start, pr->start) = 0;
	return true;
}

void image_forget_cfgs(struct image *img)
{
	struct image_private *p = img->priv;

	if (p->nr_depth)
		BUG("image_forget_cfgs() during an analysis of whether a callee returns");
	u64map_release(&p->noreturn);
	u64map_release(&p->kept_by_start);
	for (size_t i = 0; i < p->n_kept; i++)
		free(p->kept[i].v);
	free(p->kept);
	p->kept = NULL;
	p->n_kept = p->alloc_kept = p->kept_insns = 0;
}

int image_cfg(struct image *img, const struct proc *pr, struct cfg *cfg)
{
	struct image_private *p = img->priv;
	struct cfg_env env;
	struct insn *v;
	size_t n;

	if (!take_decode(p, pr, &v, &n)) {
		if (image_decode(img, pr, &v, &n))
			return -1;
		if (p->nr_depth)
			keep_decode(p, pr, v, n);
	}
	if (!p->nr_depth)
		*u64map_slot(&p->kept_by_start, pr->start) = KEPT_BUILT;
	env.dec = image_decoder(img);
	env.read = read_callback;
	env.noreturn = noreturn_callback;
	env.reentries = reentries_callback;
	env.ctx = img;
	cfg_build(cfg, v, n, pr->start, pr->end, img->arch, &env);
	if (!p->nr_depth && !(pr->flags & (PROC_GAP | PROC_PLT))) {
		/*
		 * Whether it returns, while its CFG is here (what its callers ask
		 * would decode it again), unless that needs another analysis.
		 */
		uint64_t *st = u64map_slot(&p->noreturn, pr->start);
		bool known, returns;

		if (*st == NR_UNKNOWN) {
			returns = cfg_returns(img, cfg, true, &known);
			st = u64map_slot(&p->noreturn, pr->start);
			if (known && *st == NR_UNKNOWN)
				*st = returns ? NR_RETURNS : NR_NORETURN;
		}
	}
	return 0;
}

/* ---- DWARF ------------------------------------------------------------------------------ */

static bool has_dwarf(const struct elffile *ef)
{
	const struct elf_section *s = elffile_section(ef, ".debug_info");

	return s && s->type != SHT_NOBITS && s->size;
}

/* Sections libdwarf 20210528 cannot be trusted with when malformed. */
static bool dwarf_sane(struct elffile *ef)
{
	static const char *const lists[] = { ".debug_rnglists", ".debug_loclists" };

	for (size_t i = 0; i < ARRAY_SIZE(lists); i++) {
		const struct elf_section *sec = elffile_section(ef, lists[i]);
		const uint8_t *data;
		size_t len;

		if (!sec)
			continue;
		data = elffile_section_data(ef, sec, &len);
		if ((!data && sec->size) || (data && !dwarf_lists_sane(data, len)))
			return false;
	}
	return true;
}

struct dwarf_info *image_dwarf(struct image *img, const char **why)
{
	struct image_private *p = img->priv;
	struct elffile *ef = NULL;
	const char *path = NULL;

	if (!p->dw_tried) {
		struct elffile *bin = NULL, *dbg;

		p->dw_tried = true;
		if (binary_usable(img) && img->rec.kind == IMAGE_FILE && (bin = bin_pin(img))) {
			if (has_dwarf(bin)) {
				path = img->bin_path;
				ef = bin;
			} else {
				find_debug(img);
				if ((dbg = debug_file(img)) && has_dwarf(dbg)) {
					path = img->dbg_path;
					ef = dbg;
				}
			}
		}
		if (path && !dwarf_sane(ef))
			p->dw_why = "malformed DWARF (range or location lists)";
		else if (path)
			p->dw = dwarf_info_open(path, &p->dw_why);
		if (bin)
			bin_unpin(img);
	}
	if (why)
		*why = p->dw_why;
	return p->dw;
}
