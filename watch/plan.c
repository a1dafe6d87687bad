/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * watch/plan.c - from FUNC[@IMAGE] to probe points (watch/plan.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/die.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "db/image.h"
#include "disasm/cfg.h"
#include "disasm/elffile.h"
#include "disasm/image.h"
#include "watch/plan.h"

void watch_plan_init(struct watch_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
}

void watch_plan_release(struct watch_plan *plan)
{
	for (size_t i = 0; i < plan->nt; i++) {
		struct watch_target *t = &plan->t[i];

		free(t->spec);
		free(t->name);
		free(t->path);
		free(t->path_b);
		free(t->name_b);
		free(t->ret_why);
	}
	free(plan->t);
	free(plan->p);
	free(plan->default_image);
	memset(plan, 0, sizeof(*plan));
}

/* ---- images --------------------------------------------------------------- */

char *watch_which(const char *cmd)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(cmd, '/'))
		return realpath(cmd, buf) ? xstrdup(buf) : NULL;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");
		char *cand = xasprintf("%.*s/%s", (int)n, n ? path : ".", cmd);
		struct stat st;

		if (!stat(cand, &st) && S_ISREG(st.st_mode) && !access(cand, X_OK) &&
		    realpath(cand, buf)) {
			free(cand);
			return xstrdup(buf);
		}
		free(cand);
		path += n + (path[n] == ':');
	}
	return NULL;
}

/* "libc" matches libc.so.6 and libc-2.36.so; "libc.so.6" itself. */
static bool base_matches(const char *base, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(base, name, n) &&
	       (!base[n] || ((base[n] == '.' || base[n] == '-') && strstr(base + n, ".so")));
}

static char *from_maps(pid_t pid, const char *name)
{
	char file[64], line[PATH_MAX + 256], *found = NULL;
	FILE *f;

	snprintf(file, sizeof(file), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(file, "re")))
		return NULL;
	while (!found && fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/'), *base;

		if (!path)
			continue;
		path[strcspn(path, "\n")] = 0;
		base = strrchr(path, '/') + 1;
		if (base_matches(base, name))
			found = xstrdup(path);
	}
	fclose(f);
	return found;
}

static char *from_dirs(const char *name)
{
	static const char *const dirs[] = { "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
					    "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
					    "/lib64", "/usr/lib64", "/lib", "/usr/lib",
					    "/usr/local/lib" };
	char buf[PATH_MAX];

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *e;
		char *found = NULL;

		if (!d)
			continue;
		while (!found && (e = readdir(d)))
			if (base_matches(e->d_name, name)) {
				char *p = xasprintf("%s/%s", dirs[i], e->d_name);

				if (realpath(p, buf))
					found = xstrdup(buf);
				free(p);
			}
		closedir(d);
		if (found)
			return found;
	}
	return NULL;
}

static char *find_image(const struct watch_plan *plan, const char *name)
{
	char buf[PATH_MAX], *p;
	struct stat st;

	if (strchr(name, '/') || (!stat(name, &st) && S_ISREG(st.st_mode)))
		return realpath(name, buf) ? xstrdup(buf) : NULL;
	if (plan->pid > 0 && (p = from_maps(plan->pid, name)))
		return p;
	return from_dirs(name);
}

/* An image record for a file, as collect/ would key it. */
static int image_rec_for(const char *path, struct db_image *rec)
{
	struct elffile *ef;
	struct stat st;
	char *why;

	memset(rec, 0, sizeof(*rec));
	if (stat(path, &st))
		return errorf_errno("cannot stat '%s'", path);
	if (!(ef = elffile_open_why(path, &why))) {
		errorf("%s", why);
		free(why);
		return -1;
	}
	rec->kind = IMAGE_FILE;
	rec->path = (char *)path;
	rec->size = (uint64_t)st.st_size;
	rec->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	rec->dev = st.st_dev;
	rec->ino = st.st_ino;
	if (ef->build_id_len) {
		memcpy(rec->build_id, ef->build_id, ef->build_id_len);
		rec->build_id_len = ef->build_id_len;
		image_key_from_build_id(rec->key, rec->build_id, rec->build_id_len);
	} else {
		image_key_from_path(rec->key, path, rec->dev, rec->ino);
	}
	elffile_close(ef);
	return 0;
}

/* ---- exceptions ------------------------------------------------------------ */

static const char *const throwers[] = { "__cxa_throw", "__cxa_rethrow", "_Unwind_RaiseException",
					"_Unwind_Resume", "_Unwind_ForcedUnwind", NULL };

static void sym_throws(void *ctx, const struct elf_sym *sym)
{
	for (size_t i = 0; throwers[i]; i++)
		if (!strcmp(sym->name, throwers[i]))
			*(bool *)ctx = true;
}

/* True if code of this image can be unwound through by an exception. */
static bool image_can_throw(const char *path)
{
	struct elffile *ef;
	bool throws = false;
	char *why;

	if (!(ef = elffile_open_why(path, &why))) {
		free(why);
		return false;
	}
	if (elffile_section(ef, ".gcc_except_table"))
		throws = true;
	for (size_t i = 0; !throws && i < ef->n_secs; i++)
		if (ef->secs[i].type == 11 /* SHT_DYNSYM */ || ef->secs[i].type == 2 /* SHT_SYMTAB */)
			elffile_symbols(ef, &ef->secs[i], sym_throws, &throws);
	elffile_close(ef);
	return throws;
}

/* ---- points ------------------------------------------------------------------ */

static struct watch_point *add_point(struct watch_plan *plan, unsigned target, enum watch_role role,
				     uint64_t offset, uint64_t vaddr)
{
	struct watch_point *p;

	plan->p = xreallocarray(plan->p, plan->np + 1, sizeof(*plan->p));
	p = &plan->p[plan->np++];
	*p = (struct watch_point){ .target = target, .role = role, .offset = offset, .vaddr = vaddr };
	return p;
}

static struct watch_target *add_target(struct watch_plan *plan, const char *spec)
{
	struct watch_target *t;

	plan->t = xreallocarray(plan->t, plan->nt + 1, sizeof(*plan->t));
	t = &plan->t[plan->nt++];
	memset(t, 0, sizeof(*t));
	t->spec = xstrdup(spec);
	return t;
}

/*
 * True if the kernel single-steps this instruction rather than emulating
 * it (arch/x86/kernel/uprobes.c emulates push of a register, nop and the
 * direct jumps and calls).
 */
static bool insn_stepped(struct image *img, uint64_t addr)
{
	uint8_t b[3];

	if (image_read(img, addr, b, sizeof(b)))
		return true;
	if (b[0] == 0x41 && b[1] >= 0x50 && b[1] <= 0x57)
		return false;
	if ((b[0] >= 0x50 && b[0] <= 0x57) || b[0] == 0x90 || b[0] == 0xe8 || b[0] == 0xe9 ||
	    b[0] == 0xeb || (b[0] >= 0x70 && b[0] <= 0x7f))
		return false;
	return !(b[0] == 0x0f && b[1] >= 0x80 && b[1] <= 0x8f);
}

/* True if q is a part of p that the compiler moved away (GCC's "f [clone .cold]"). */
static bool is_cold_part(const struct proc *p, const struct proc *q)
{
	size_t n = strlen(p->name);

	return q && q != p && !strncmp(q->name, p->name, n) && !strcmp(q->name + n, " [clone .cold]");
}

struct exits {
	const struct proc *parts[4];  /* the function and its cold parts */
	size_t nparts;
	uint64_t *v;
	size_t n;
	const char *why;
};

static bool in_parts(const struct exits *x, uint64_t addr)
{
	for (size_t i = 0; i < x->nparts; i++)
		if (addr >= x->parts[i]->start && addr < x->parts[i]->end)
			return true;
	return false;
}

static void add_exit(struct exits *x, uint64_t site)
{
	for (size_t k = 0; k < x->n; k++)
		if (x->v[k] == site)
			return;
	x->v = xreallocarray(x->v, x->n + 1, sizeof(*x->v));
	x->v[x->n++] = site;
}

/* The exits of one part; jumps to a cold part add it, jumps between parts stay inside. */
static void part_exits(struct image *img, struct exits *x, const struct proc *p)
{
	struct cfg cfg;

	if (image_cfg(img, p, &cfg)) {
		x->why = "its code cannot be read";
		return;
	}
	if (cfg.flags & CFG_MISSING_EDGES)
		x->why = "some of its jumps are not resolved";
	for (size_t i = 0; !x->why && i < cfg.n_edges; i++) {
		const struct cfg_edge *e = &cfg.edges[i];
		const struct proc *q;
		long ii = cfg_insn_at(&cfg, e->site);
		const struct insn *in = ii >= 0 ? &cfg.insns[ii] : NULL;

		if (e->kind == CFG_UNRESOLVED)
			x->why = "an indirect jump is not resolved";
		if (e->kind == CFG_RETURN)
			add_exit(x, e->site);
		if (e->kind != CFG_TAIL_CALL)
			continue;
		if (e->target && in_parts(x, e->target))
			continue;
		q = e->target ? image_proc_at(img, e->target) : NULL;
		if (e->target && is_cold_part(x->parts[0], q) && x->nparts < 4) {
			x->parts[x->nparts++] = q;
			continue;
		}
		if (!in || (in->kind != INSN_JUMP && in->kind != INSN_IJUMP))
			x->why = in && in->kind == INSN_CJUMP ? "it has a conditional tail call"
							      : "it falls off its end";
		else
			add_exit(x, e->site);
	}
	cfg_release(&cfg);
}

/* The addresses of the instructions leaving p; -1 with *why if they are not all known. */
static int find_exits(struct image *img, const struct proc *p, uint64_t **exits, size_t *n,
		      const char **why)
{
	struct exits x = { { p }, 1, NULL, 0, NULL };

	for (size_t done = 0; done < x.nparts && !x.why; done++)
		part_exits(img, &x, x.parts[done]);
	if (!x.why && !x.n)
		x.why = "it never returns";
	*exits = x.v;
	*n = x.n;
	*why = x.why;
	return x.why ? -1 : 0;
}

static void plan_returns(struct watch_plan *plan, struct watch_target *t, struct image *img,
			 const struct proc *p)
{
	unsigned ti = (unsigned)(t - plan->t);
	uint64_t *exits = NULL;
	size_t n = 0;
	const char *why = NULL;
	bool want = plan->ret == WATCH_RET_EXITS;

	if (plan->ret == WATCH_RET_AUTO && image_can_throw(t->path))
		want = true;
	if (want && find_exits(img, p, &exits, &n, &why)) {
		if (plan->ret == WATCH_RET_EXITS)
			warning("'%s': cannot probe the exits of %s (%s): using a uretprobe", t->spec,
				t->name, why);
		else
			warning("'%s': %s can raise exceptions but its exits are not all known (%s): "
				"a uretprobe makes an exception through it abort the program",
				t->spec, t->name, why);
		want = false;
	}
	if (!want) {
		t->ret = WATCH_RET_URETPROBE;
		t->ret_why = xstrdup(plan->ret == WATCH_RET_URETPROBE ? "--return uretprobe"
				     : why ? why : "the image raises no exceptions");
		add_point(plan, ti, WP_RETURN, t->offset, t->vaddr);
		return;
	}
	t->ret = WATCH_RET_EXITS;
	t->ret_why = xstrdup(plan->ret == WATCH_RET_EXITS ? "--return exits"
			     : "the image can raise exceptions");
	t->n_exits = (unsigned)n;
	for (size_t i = 0; i < n; i++) {
		uint64_t off;

		if (!image_addr_to_offset(img, exits[i], &off))
			BUG("exit %#" PRIx64 " outside the image", exits[i]);
		add_point(plan, ti, WP_EXIT, off, exits[i])->stepped = true;
	}
	free(exits);
}

struct where {
	char *path;
	char key[PROFILE_KEY_MAX + 1];
	uint64_t vaddr, offset;
	char *name;             /* the procedure's name (+0xOFF inside it) */
	const struct proc *proc;
	bool stepped;
};

/* C++ functions by their name without parameters: "mid" for mid(long). */
static size_t procs_by_base_name(struct image *img, const char *name, const struct proc **out,
				 size_t max)
{
	const struct proctab *t = image_procs(img);
	size_t n = 0, len = strlen(name);

	for (size_t i = 0; i < t->n; i++)
		if (!strncmp(t->v[i].name, name, len) && t->v[i].name[len] == '(' &&
		    !strstr(t->v[i].name, " [clone ")) {
			if (n < max)
				out[n] = &t->v[i];
			n++;
		}
	return n;
}

/* Resolves WHAT (a name, NAME+0xOFF or 0xADDR) in img. */
static int find_addr(struct image *img, const char *spec, const char *what, struct where *w)
{
	const struct proc *procs[2];
	char *plus, *end, *name = xstrdup(what);
	uint64_t add = 0;
	size_t n;

	if (!strncmp(what, "0x", 2)) {
		errno = 0;
		w->vaddr = strtoull(what, &end, 16);
		if (errno || *end || end == what + 2) {
			free(name);
			return errorf("'%s': bad address '%s'", spec, what);
		}
		w->proc = image_proc_at(img, w->vaddr);
	} else {
		n = image_procs_by_name(img, name, procs, 2);
		if (!n)
			n = procs_by_base_name(img, name, procs, 2);
		if (!n && (plus = strstr(name, "+0x"))) {
			errno = 0;
			add = strtoull(plus + 3, &end, 16);
			if (errno || *end)
				add = 0;
			else
				*plus = 0;
			n = image_procs_by_name(img, name, procs, 2);
		}
		if (!n) {
			free(name);
			return errorf("'%s': no function '%s' in '%s'%s", spec, what, img->rec.path,
				      img->syms_why ? " (its symbols cannot be read)" : "");
		}
		if (n > 1 && procs[0]->start != procs[1]->start) {
			free(name);
			return errorf("'%s': '%s' names several functions in '%s' (at %#" PRIx64
				      " and %#" PRIx64 "): name one by address",
				      spec, what, img->rec.path, procs[0]->start, procs[1]->start);
		}
		w->proc = procs[0];
		w->vaddr = procs[0]->start + add;
	}
	free(name);
	if (!image_addr_to_offset(img, w->vaddr, &w->offset) || !w->proc ||
	    w->vaddr >= w->proc->end)
		return errorf("'%s': %#" PRIx64 " is not in the code of '%s'", spec, w->vaddr,
			      img->rec.path);
	w->name = w->vaddr == w->proc->start ? xstrdup(w->proc->name)
		  : xasprintf("%s+%#" PRIx64, w->proc->name, w->vaddr - w->proc->start);
	w->stepped = insn_stepped(img, w->vaddr);
	return 0;
}

static int resolve(struct watch_plan *plan, const char *spec, struct where *w,
		   struct image **imgp)
{
	const char *at = strrchr(spec, '@');
	char *what = at ? xstrndup(spec, (size_t)(at - spec)) : xstrdup(spec);
	struct db_image rec;
	struct image_opts opts = { 0 };
	struct image *img;
	int r = -1;

	memset(w, 0, sizeof(*w));
	if (!*what) {
		errorf("'%s': no function", spec);
		goto out;
	}
	if (at && !at[1]) {
		errorf("'%s': no image after '@'", spec);
		goto out;
	}
	if (!at && !plan->default_image) {
		errorf("'%s': which image? name it as FUNC@IMAGE", spec);
		goto out;
	}
	if (!(w->path = at ? find_image(plan, at + 1) : xstrdup(plan->default_image))) {
		errorf("'%s': no image '%s' (not a file, not in the process's maps, not in the "
		       "library directories)", spec, at + 1);
		goto out;
	}
	if (image_rec_for(w->path, &rec))
		goto out;
	img = image_open(&rec, &opts);
	if (img->state != IMAGE_OK) {
		errorf("'%s': cannot use '%s': %s", spec, w->path, img->why ? img->why : "no code");
		image_free(img);
		goto out;
	}
	memcpy(w->key, rec.key, sizeof(w->key));
	if (!(r = find_addr(img, spec, what, w)) && imgp)
		*imgp = img;
	else
		image_free(img);
out:
	free(what);
	if (r) {
		free(w->path);
		free(w->name);
	}
	return r;
}

static bool is_kernel(const char *spec)
{
	const char *at = strrchr(spec, '@');

	return at && (!strcmp(at + 1, "kernel") || !strcmp(at + 1, "[kernel]"));
}

static int add_kernel_function(struct watch_plan *plan, const char *spec)
{
	struct watch_target *t = add_target(plan, spec);
	unsigned ti = (unsigned)plan->nt - 1;

	t->kind = WATCH_FUNC;
	t->kernel = true;
	t->name = xstrndup(spec, (size_t)(strrchr(spec, '@') - spec));
	t->path = xstrdup("[kernel.kallsyms]");
	strcpy(t->key, "kernel");
	t->ret = WATCH_RET_URETPROBE;
	t->ret_why = xstrdup("a kretprobe");
	add_point(plan, ti, WP_ENTRY, 0, 0)->ksym = t->name;
	add_point(plan, ti, WP_RETURN, 0, 0)->ksym = t->name;
	return 0;
}

/* A target's (first) point: w's image and address; the target takes w's path. */
static void target_at(struct watch_target *t, const struct where *w)
{
	t->path = w->path;
	memcpy(t->key, w->key, sizeof(t->key));
	t->offset = w->offset;
	t->vaddr = w->vaddr;
	t->entry_stepped = w->stepped;
}

int watch_plan_add_function(struct watch_plan *plan, const char *spec)
{
	struct watch_target *t;
	struct image *img;
	struct where w;
	unsigned ti;

	if (is_kernel(spec))
		return add_kernel_function(plan, spec);
	if (resolve(plan, spec, &w, &img))
		return -1;
	if (w.vaddr != w.proc->start)
		warning("'%s': %#" PRIx64 " is inside %s, not its entry: times run from there",
			spec, w.vaddr, w.proc->name);
	t = add_target(plan, spec);
	ti = (unsigned)plan->nt - 1;
	t->kind = WATCH_FUNC;
	t->name = w.name;
	target_at(t, &w);
	add_point(plan, ti, WP_ENTRY, t->offset, t->vaddr)->stepped = w.stepped;
	plan_returns(plan, t, img, w.proc);
	image_free(img);
	return 0;
}

int watch_plan_add_between(struct watch_plan *plan, const char *a, const char *b)
{
	struct watch_target *t;
	struct where wa, wb;
	char *spec;
	unsigned ti;

	if (is_kernel(a) || is_kernel(b))
		return errorf("--between: kernel points are not supported");
	if (resolve(plan, a, &wa, NULL))
		return -1;
	if (resolve(plan, b, &wb, NULL)) {
		free(wa.path);
		free(wa.name);
		return -1;
	}
	spec = xasprintf("%s..%s", a, b);
	t = add_target(plan, spec);
	free(spec);
	ti = (unsigned)plan->nt - 1;
	t->kind = WATCH_BETWEEN;
	t->name = xasprintf("%s..%s", wa.name, wb.name);
	target_at(t, &wa);
	t->path_b = wb.path;
	memcpy(t->key_b, wb.key, sizeof(t->key_b));
	t->offset_b = wb.offset;
	t->name_b = wb.name;
	free(wa.name);
	add_point(plan, ti, WP_FROM, t->offset, t->vaddr)->stepped = wa.stepped;
	add_point(plan, ti, WP_TO, t->offset_b, wb.vaddr)->stepped = wb.stepped;
	return 0;
}
