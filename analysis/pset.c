/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/pset.c - profile sets, and rows matched across them.
 */
#include "config.h"

#include "analysis/pset.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/epochview-open.h"
#include "analysis/lookup.h"
#include "core/arena.h"
#include "core/die.h"
#include "core/hash.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "core/u64map.h"
#include "core/utf8.h"
#include "core/xalloc.h"

/* ---- sets --------------------------------------------------------------- */

void pset_ctx_release(struct pset_ctx *ctx)
{
	if (ctx->db)
		db_close(ctx->db);
	ctx->db = NULL;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* A directory with dcpi's FORMAT marker. */
static bool is_db_dir(const char *path)
{
	char *marker = xasprintf("%s/FORMAT", path);
	bool r = is_dir(path) && !access(marker, F_OK);

	free(marker);
	return r;
}

static void add_epoch_desc(struct strbuf *sb, const struct epoch_view *v)
{
	strbuf_addf(sb, "epoch %" PRIu32, v->seq);
	if (v->meta_ok && v->meta.label) {
		char *safe = display_safe(v->meta.label);

		strbuf_addf(sb, " (%s)", safe);
		free(safe);
	}
}

static struct pset_epoch *new_epoch(struct pset *s, size_t *alloc, struct db *db)
{
	struct pset_epoch *e;

	ALLOC_GROW(s->epochs, s->n_epochs + 1, *alloc);
	e = &s->epochs[s->n_epochs];
	memset(e, 0, sizeof(*e));
	e->db = db;
	return e;
}

/* One epoch (name) of db as the whole set. */
static int open_one(struct pset *s, struct db *db, const char *name,
		    const struct epoch_view_opts *o)
{
	size_t alloc = 0;
	struct pset_epoch *e = new_epoch(s, &alloc, db);
	struct strbuf sb = STRBUF_INIT;
	char *path;

	if (epoch_view_open(&e->view, db, name, o)) {
		epoch_view_release(&e->view);
		return -1;
	}
	s->n_epochs = 1;
	path = display_safe(db->path);
	add_epoch_desc(&sb, &e->view);
	strbuf_addf(&sb, " of %s", path);
	s->desc = strbuf_detach(&sb, NULL);
	free(path);
	return 0;
}

/* Every epoch of db, summed. */
static int open_all(struct pset *s, struct db *db, const struct epoch_view_opts *o)
{
	uint32_t *seqs;
	size_t n, alloc = 0;
	char *path = display_safe(db->path);

	if (db_epoch_seqs(db, &seqs, &n)) {
		free(path);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct pset_epoch *e = new_epoch(s, &alloc, db);
		char name[16];

		snprintf(name, sizeof(name), "%" PRIu32, seqs[i]);
		if (epoch_view_open(&e->view, db, name, o))
			epoch_view_release(&e->view);  /* reported; left out */
		else
			s->n_epochs++;
	}
	if (!s->n_epochs)
		errorf(n ? "database '%s': no epoch can be read" : "database '%s' has no epochs",
		       path);
	else if (s->n_epochs == 1)
		s->desc = xasprintf("%s (its epoch %" PRIu32 ")", path, s->epochs[0].view.seq);
	else
		s->desc = xasprintf("%s (%zu epochs, %" PRIu32 "-%" PRIu32 ", summed)", path,
				    s->n_epochs, s->epochs[0].view.seq,
				    s->epochs[s->n_epochs - 1].view.seq);
	free(seqs);
	free(path);
	return s->n_epochs ? 0 : -1;
}

static int open_dir(struct pset *s, const char *dir, const char *epoch,
		    const struct epoch_view_opts *o)
{
	if (!(s->own_db = db_open(dir, DB_READ)))
		return -1;
	if (epoch)
		return open_one(s, s->own_db, epoch, o);
	return open_all(s, s->own_db, o);
}

/* DIR:EPOCH -> true with *dir allocated and *epoch pointing into spec. */
static bool split_dir_epoch(const char *spec, char **dir, const char **epoch)
{
	const char *colon = strrchr(spec, ':');

	if (!colon || colon == spec)
		return false;
	*dir = xstrndup(spec, (size_t)(colon - spec));
	if (!is_db_dir(*dir)) {
		free(*dir);
		return false;
	}
	*epoch = colon + 1;
	return true;
}

int pset_open(struct pset *s, struct pset_ctx *ctx, const char *spec)
{
	const char *epoch;
	char *dir;
	int r;

	memset(s, 0, sizeof(*s));
	s->spec = display_safe(spec);
	if (!*spec) {
		r = errorf("empty set name");
	} else if (is_db_dir(spec)) {
		r = open_dir(s, spec, NULL, &ctx->view_opts);
	} else if (split_dir_epoch(spec, &dir, &epoch)) {
		r = open_dir(s, dir, epoch, &ctx->view_opts);
		free(dir);
	} else if (is_dir(spec) && strchr(spec, '/')) {
		r = errorf("'%s' is a directory but not a dcpi database", s->spec);
	} else {
		if (!ctx->db && !(ctx->db = db_open(db_default_path(ctx->db_path), DB_READ)))
			r = -1;
		else
			r = open_one(s, ctx->db, spec, &ctx->view_opts);
	}
	if (r)
		pset_release(s);
	return r;
}

int pset_open_epoch(struct pset *s, struct db *db, uint32_t seq, const struct epoch_view_opts *o)
{
	char name[16];

	memset(s, 0, sizeof(*s));
	snprintf(name, sizeof(name), "%" PRIu32, seq);
	s->spec = xstrdup(name);
	if (open_one(s, db, name, o)) {
		pset_release(s);
		return -1;
	}
	return 0;
}

void pset_release(struct pset *s)
{
	for (size_t i = 0; i < s->n_epochs; i++)
		epoch_view_release(&s->epochs[i].view);
	free(s->epochs);
	if (s->own_db)
		db_close(s->own_db);
	free(s->spec);
	free(s->desc);
	memset(s, 0, sizeof(*s));
}

uint64_t pset_total(const struct pset *s, enum dcpi_event ev)
{
	uint64_t t = 0;

	for (size_t i = 0; i < s->n_epochs; i++)
		t += s->epochs[i].view.totals[ev];
	return t;
}

enum dcpi_event pset_default_event(struct pset *const *sets, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < sets[i]->n_epochs; k++)
			if (sets[i]->epochs[k].view.n_events)
				return sets[i]->epochs[k].view.events[0];
	return EVENT_CYCLES;
}

/* The first epoch whose metadata lists ev, or NULL. */
static const struct epoch_view *view_with_event(struct pset *const *sets, size_t n,
						enum dcpi_event ev)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < sets[i]->n_epochs; k++) {
			const struct epoch_view *v = &sets[i]->epochs[k].view;

			if (v->meta_ok && epoch_meta_event(&v->meta, ev))
				return v;
		}
	return NULL;
}

const char *pset_event_label(struct pset *const *sets, size_t n, enum dcpi_event ev, char *buf,
			     size_t size)
{
	const struct epoch_view *v = view_with_event(sets, n, ev);

	if (v)
		return epoch_view_event_label(v, ev, buf, size);
	snprintf(buf, size, "%s", event_name(ev));
	return buf;
}

enum dcpi_event pset_event_used(struct pset *const *sets, size_t n, enum dcpi_event ev)
{
	const struct epoch_view *v = view_with_event(sets, n, ev);

	return v ? epoch_meta_event(&v->meta, ev)->used : ev;
}

/* ---- normalisation ------------------------------------------------------ */

static const char *const norm_names[] = { "none", "total", "period" };

const char *pset_norm_name(enum pset_norm norm)
{
	return (unsigned)norm < ARRAY_SIZE(norm_names) ? norm_names[norm] : "?";
}

int pset_norm_lookup(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(norm_names); i++)
		if (!strcmp(name, norm_names[i]))
			return (int)i;
	return -1;
}

/* True if every epoch with samples of ev records its period in ns. */
static bool periods_in_ns(const struct pset *s, enum dcpi_event ev)
{
	for (size_t i = 0; i < s->n_epochs; i++) {
		const struct epoch_view *v = &s->epochs[i].view;
		const struct epoch_event *e = v->meta_ok ? epoch_meta_event(&v->meta, ev) : NULL;

		if (v->totals[ev] && (!e || !e->period_in_ns))
			return false;
	}
	return true;
}

/* The sample-weighted mean period of ev (ns or cycles); 0 if an epoch lacks one. */
static double set_period(const struct pset *s, enum dcpi_event ev, bool ns)
{
	double sum = 0, w = 0;

	for (size_t i = 0; i < s->n_epochs; i++) {
		const struct epoch_view *v = &s->epochs[i].view;
		const struct epoch_event *e = v->meta_ok ? epoch_meta_event(&v->meta, ev) : NULL;
		double p;

		if (!v->totals[ev])
			continue;
		p = !e ? 0 : ns ? (double)e->period : epoch_meta_period_cycles(&v->meta, ev);
		if (p <= 0)
			return 0;
		sum += p * (double)v->totals[ev];
		w += (double)v->totals[ev];
	}
	return w > 0 ? sum / w : 0;
}

static int period_factors(struct pset *const *sets, size_t n, enum dcpi_event ev, double *f)
{
	bool ns = true;
	double mean = 0;
	size_t with = 0;

	for (size_t i = 0; i < n; i++)
		ns &= periods_in_ns(sets[i], ev);
	for (size_t i = 0; i < n; i++) {
		f[i] = set_period(sets[i], ev, ns);
		if (f[i] <= 0 && pset_total(sets[i], ev))
			return errorf("cannot normalise by period: %s records no sampling period "
				      "for %s", sets[i]->desc, event_name(ev));
		if (f[i] > 0) {
			mean += f[i];
			with++;
		}
	}
	for (size_t i = 0; i < n; i++)
		f[i] = with ? f[i] / (mean / (double)with) : 0;
	return 0;
}

int pset_norm_factors(struct pset *const *sets, size_t n, enum dcpi_event ev,
		      enum pset_norm norm, const uint64_t *totals, double *f)
{
	double mean = 0;

	if (norm == PSET_NORM_PERIOD)
		return period_factors(sets, n, ev, f);
	for (size_t i = 0; i < n; i++)
		mean += (double)totals[i];
	mean = n ? mean / (double)n : 0;
	for (size_t i = 0; i < n; i++)
		f[i] = norm == PSET_NORM_NONE ? 1 : totals[i] ? mean / (double)totals[i] : 0;
	return 0;
}

const char *pset_level_name(enum pset_level level)
{
	static const char *const names[] = { "images", "procedures", "instructions" };

	return (unsigned)level < ARRAY_SIZE(names) ? names[level] : "?";
}

/* ---- rows: a string-keyed index ----------------------------------------- */

/* Maps byte strings to indices 0..n-1 in the order they were added (the keys in an arena). */
struct strindex_key {
	const char *key;     /* with a NUL after its len bytes */
	size_t len;
};

struct strindex {
	struct u64map map;  /* hash (probed on collision) -> index + 1 */
	struct strindex_key *v;
	size_t n, alloc;
	struct arena *mem;  /* where keys are copied */
};

static void strindex_release(struct strindex *x)
{
	free(x->v);
	u64map_release(&x->map);
}

/* The index of key, added if new (*created says which). */
static size_t strindex_get(struct strindex *x, const char *key, size_t len, bool *created)
{
	uint64_t h = hash_bytes(HASH_FNV_INIT, key, len);

	for (;; h++) {
		uint64_t *slot = u64map_slot(&x->map, h);
		const struct strindex_key *k;

		if (!*slot) {
			char *copy = arena_memdup(x->mem, key, len + 1);

			copy[len] = '\0';
			ALLOC_GROW(x->v, x->n + 1, x->alloc);
			x->v[x->n].key = copy;
			x->v[x->n].len = len;
			*slot = ++x->n;
			*created = true;
			return x->n - 1;
		}
		k = &x->v[*slot - 1];
		if (k->len == len && !memcmp(k->key, key, len)) {
			*created = false;
			return (size_t)*slot - 1;
		}
	}
}

/* What an image is across sets. */
struct image_info {
	char *build;          /* the image key (build-id) where first seen */
	size_t set;           /* ... in this set */
	char *other;          /* a different key, or NULL */
	size_t other_set;
	char *path;
};

struct rows_priv {
	struct pset *const *sets;
	struct arena mem;         /* the rows' names, keys, counts, texts; image paths */
	struct strindex rows;
	struct strindex images;   /* image match key -> infos */
	struct image_info *infos;
	size_t alloc_infos;
	struct strindex warned;   /* image match keys warned about */
	struct strindex paths;    /* the image paths of rows, once each */
};

/* path, copied once for every row that names it. */
static const char *intern_path(struct rows_priv *pv, const char *path)
{
	bool created;
	size_t i = strindex_get(&pv->paths, path, strlen(path), &created);

	return pv->paths.v[i].key;
}

static void image_match_key(const struct db_image *rec, struct strbuf *sb)
{
	const char *p = rec->path;

	strbuf_addstr(sb, image_kind_name(rec->kind));
	strbuf_addch(sb, '\0');
	if (rec->kind == IMAGE_ANON) {
		const char *close = strstr(p, "] ");

		if (close)
			p = close + 2;  /* "[anon:PID] COMM" -> COMM */
	}
	strbuf_addstr(sb, p);
}

static bool has_builds(enum image_kind kind)
{
	return kind == IMAGE_FILE || kind == IMAGE_VDSO || kind == IMAGE_MODULE ||
	       kind == IMAGE_KERNEL;
}

/* Records that set holds image rec (and whether it is another build). */
static void note_image(struct pset_rows *t, size_t set, const struct db_image *rec)
{
	struct rows_priv *pv = t->priv;
	struct strbuf key = STRBUF_INIT;
	struct image_info *info;
	bool created;
	size_t i;

	image_match_key(rec, &key);
	i = strindex_get(&pv->images, key.buf, key.len, &created);
	strbuf_release(&key);
	if (created) {
		ALLOC_GROW(pv->infos, i + 1, pv->alloc_infos);
		info = &pv->infos[i];
		memset(info, 0, sizeof(*info));
		info->build = xstrdup(rec->key);
		info->set = set;
		info->path = xstrdup(rec->path);
	}
	info = &pv->infos[i];
	if (has_builds(rec->kind) && !info->other && strcmp(info->build, rec->key)) {
		info->other = xstrdup(rec->key);
		info->other_set = set;
	}
}

/* Warns once per image (over all sets) that it cannot be named. */
static void warn_image(struct pset_rows *t, struct epoch_view *v, size_t i)
{
	struct rows_priv *pv = t->priv;
	struct image *img = epoch_view_image(v, i);
	struct strbuf key = STRBUF_INIT;
	bool created;

	if (!img->syms_why && image_procs(img)->n && !img->forced)
		return;
	image_match_key(v->images[i].rec, &key);
	strindex_get(&pv->warned, key.buf, key.len, &created);
	strbuf_release(&key);
	if (created)
		epoch_view_warn_image(v, i);
}

/* The row of key, made with name and image when new. */
static struct pset_row *get_row(struct pset_rows *t, const struct strbuf *key, const char *name,
				const char *image)
{
	struct rows_priv *pv = t->priv;
	struct pset_row *r;
	bool created;
	size_t i = strindex_get(&pv->rows, key->buf, key->len, &created);

	if (!created)
		return &t->rows[i];
	ALLOC_GROW(t->rows, t->n_rows + 1, t->alloc);
	r = &t->rows[t->n_rows++];
	memset(r, 0, sizeof(*r));
	r->name = arena_strdup(&pv->mem, name);
	r->image = (char *)intern_path(pv, image);
	r->counts = arena_calloc(&pv->mem, t->n_sets ? t->n_sets : 1, sizeof(*r->counts));
	r->key = (char *)pv->rows.v[i].key;
	r->keylen = key->len;
	return r;
}

/* ---- rows of images, procedures, instructions ---------------------------- */

static void image_rows(struct pset_rows *t, size_t set, struct epoch_view *v)
{
	struct strbuf key = STRBUF_INIT;

	for (size_t i = 0; i < v->n_images; i++) {
		const struct db_image *rec = v->images[i].rec;
		uint64_t n = v->images[i].samples[t->event];

		if (!n)
			continue;
		note_image(t, set, rec);
		strbuf_setlen(&key, 0);
		image_match_key(rec, &key);
		get_row(t, &key, rec->path, rec->path)->counts[set] += n;
	}
	strbuf_release(&key);
}

/* 0 for the first procedure of its name in the image (by address), 1 for the next... */
static unsigned name_ordinal(struct image *img, const struct proc *p)
{
	const struct proc *same[64];
	size_t n = image_procs_by_name(img, p->name, same, ARRAY_SIZE(same));
	unsigned k = 0;

	for (size_t i = 0; i < n && i < ARRAY_SIZE(same); i++)
		k += same[i]->start < p->start;
	return k;
}

/* A procedure's samples in an image (proc NULL: samples outside every procedure). */
struct proc_count {
	const struct proc *proc;
	uint64_t count;
};

/*
 * The samples of image i of v by procedure, as procprof_build() makes its
 * rows, for t's event: in the order of their addresses (the profile's).
 */
static size_t count_procs(struct pset_rows *t, struct epoch_view *v, size_t i,
			  struct proc_count **out, size_t *alloc)
{
	struct image *img = epoch_view_image(v, i);
	const struct profile *prof = epoch_view_profile(v, i, t->event);
	const struct proc *last = NULL;
	uint64_t got = profile_total(prof), want = v->images[i].samples[t->event];
	struct u64map at;   /* proc pointer (0: none) -> index + 1 in out */
	size_t n = 0;

	u64map_init(&at);
	for (size_t k = 0; k <= prof->n; k++) {
		const struct proc *p = NULL;
		uint64_t addr, count, *slot;

		if (k < prof->n) {
			count = prof->v[k].count;
			if (image_offset_to_addr(img, prof->v[k].offset, &addr)) {
				if (last && addr >= last->start && addr < last->end)
					p = last;
				else
					p = last = image_proc_at(img, addr);
			}
		} else if (want > got) {
			count = want - got;  /* the header counts them, the profile lacks them */
		} else {
			break;
		}
		slot = u64map_slot(&at, (uint64_t)(uintptr_t)p);
		if (!*slot) {
			ALLOC_GROW(*out, n + 1, *alloc);
			(*out)[n] = (struct proc_count){ p, 0 };
			*slot = ++n;
		}
		(*out)[*slot - 1].count += count;
	}
	u64map_release(&at);
	return n;
}

static void proc_rows_of_image(struct pset_rows *t, size_t set, struct epoch_view *v, size_t i,
			       struct proc_count **pc, size_t *alloc)
{
	const struct db_image *rec = v->images[i].rec;
	struct image *img = epoch_view_image(v, i);
	const char *unnamed = image_unnamed(img);
	size_t n = count_procs(t, v, i, pc, alloc);
	struct strbuf key = STRBUF_INIT;

	for (size_t k = 0; k < n; k++) {
		const struct proc *p = (*pc)[k].proc;
		const char *pname = p ? p->name : unnamed;
		unsigned ord = p ? name_ordinal(img, p) : 0;
		struct pset_row *out;
		char *name;

		if (!(*pc)[k].count)
			continue;
		note_image(t, set, rec);
		if (!p)
			warn_image(t, v, i);
		strbuf_setlen(&key, 0);
		image_match_key(rec, &key);
		strbuf_addch(&key, '\0');
		strbuf_addstr(&key, pname);
		strbuf_addf(&key, "%c%u", '\0', ord);
		/* the second procedure of a name in an image is NAME#2 */
		name = ord ? xasprintf("%s#%u", pname, ord + 1) : NULL;
		out = get_row(t, &key, name ? name : pname, rec->path);
		free(name);
		if (p && !out->has_addr) {
			out->addr = p->start;
			out->has_addr = true;
		}
		out->counts[set] += (*pc)[k].count;
	}
	strbuf_release(&key);
}

/* Rows of every image of v by procedure, image after image, the images opened in parallel. */
static void proc_rows(struct pset_rows *t, size_t set, struct epoch_view *v)
{
	struct proc_count *pc = NULL;
	size_t alloc = 0;

	epoch_view_open_images(v, NULL);
	for (size_t i = 0; i < v->n_images; i++)
		if (v->images[i].samples[t->event])
			proc_rows_of_image(t, set, v, i, &pc, &alloc);
	free(pc);
}

/* "name+0xOFF" for an address in p, "IMAGE+0xADDR" outside procedures. */
static char *insn_name(struct image *img, const struct proc *p, uint64_t addr)
{
	if (p)
		return xasprintf("%s+0x%" PRIx64, p->name, addr - p->start);
	return xasprintf("%s+0x%" PRIx64, img->base ? img->base : "?", addr);
}

static void insn_rows_of_image(struct pset_rows *t, size_t set, struct epoch_view *v, size_t i)
{
	const struct db_image *rec = v->images[i].rec;
	struct image *img = epoch_view_image(v, i);
	const struct profile *prof = epoch_view_profile(v, i, t->event);
	const struct proc *last = NULL;
	struct strbuf key = STRBUF_INIT;

	note_image(t, set, rec);
	for (size_t k = 0; k < prof->n; k++) {
		uint64_t addr, off = prof->v[k].offset;
		bool mapped = image_offset_to_addr(img, off, &addr);
		struct pset_row *r;
		char *name;

		if (mapped && !(last && addr >= last->start && addr < last->end))
			last = image_proc_at(img, addr);
		if (!mapped)
			warn_image(t, v, i);
		strbuf_setlen(&key, 0);
		strbuf_addstr(&key, rec->key);
		strbuf_addf(&key, "%c%c%" PRIx64, '\0', mapped ? 'a' : 'o', mapped ? addr : off);
		name = mapped ? insn_name(img, last, addr)
			      : xasprintf("%s@offset 0x%" PRIx64, image_unnamed(img), off);
		r = get_row(t, &key, name, rec->path);
		free(name);
		r->addr = mapped ? addr : 0;
		r->has_addr = mapped;
		r->counts[set] += prof->v[k].count;
	}
	strbuf_release(&key);
}

static void insn_rows(struct pset_rows *t, size_t set, struct epoch_view *v)
{
	for (size_t i = 0; i < v->n_images; i++)
		if (v->images[i].samples[t->event])
			insn_rows_of_image(t, set, v, i);
}

static void rows_init(struct pset_rows *t, struct pset *const *sets, size_t n,
		      enum dcpi_event ev, enum pset_level level)
{
	struct rows_priv *pv = XNEW(struct rows_priv);

	memset(t, 0, sizeof(*t));
	t->event = ev;
	t->level = level;
	t->n_sets = n;
	t->totals = xcalloc(n ? n : 1, sizeof(*t->totals));
	for (size_t i = 0; i < n; i++)
		t->totals[i] = pset_total(sets[i], ev);
	pv->sets = sets;
	pv->rows.mem = pv->images.mem = pv->warned.mem = pv->paths.mem = &pv->mem;
	t->priv = pv;
}

static void add_note(struct pset_rows *t, char *note)
{
	t->notes = xreallocarray(t->notes, t->n_notes + 1, sizeof(*t->notes));
	t->notes[t->n_notes++] = note;
}

/* "build-id 1a2b3c4d5e6f..." or "file identity h0123..." for an image key. */
static void add_build(struct strbuf *sb, const char *key)
{
	size_t len = strlen(key);

	if (key[0] == 'h' && len == 17)
		strbuf_addstr(sb, "no build-id, another file");
	else
		strbuf_addf(sb, "build-id %.12s%s", key, len > 12 ? "..." : "");
}

/* Flags rows of images that differ between sets; one note per image. */
static void finish_builds(struct pset_rows *t)
{
	struct rows_priv *pv = t->priv;
	struct strbuf key = STRBUF_INIT;

	for (size_t i = 0; i < pv->images.n; i++) {
		struct image_info *info = &pv->infos[i];
		struct strbuf sb = STRBUF_INIT;
		char *path;

		if (!info->other)
			continue;
		path = display_safe(info->path);
		strbuf_addf(&sb, "%s is not the same binary in every set (", path);
		add_build(&sb, info->build);
		strbuf_addf(&sb, " in %s, ", pv->sets[info->set]->spec);
		add_build(&sb, info->other);
		strbuf_addf(&sb, " in %s)", pv->sets[info->other_set]->spec);
		add_note(t, strbuf_detach(&sb, NULL));
		free(path);
	}
	for (size_t r = 0; r < t->n_rows; r++) {
		struct pset_row *row = &t->rows[r];
		size_t klen = strnlen(row->key, row->keylen);
		size_t plen = klen < row->keylen ? strlen(row->key + klen + 1) : 0;
		bool created;
		size_t i;

		if (t->level == PSET_INSTRUCTIONS)
			continue;  /* keyed by build: never mixed */
		strbuf_setlen(&key, 0);
		strbuf_add(&key, row->key, klen < row->keylen ? klen + 1 + plen : klen);
		i = strindex_get(&pv->images, key.buf, key.len, &created);
		if (created)
			BUG("row of an unknown image");
		row->builds_differ = pv->infos[i].other != NULL;
	}
	strbuf_release(&key);
}

int pset_rows_build(struct pset_rows *t, struct pset *const *sets, size_t n, enum dcpi_event ev,
		    enum pset_level level)
{
	rows_init(t, sets, n, ev, level);
	for (size_t s = 0; s < n; s++) {
		for (size_t e = 0; e < sets[s]->n_epochs; e++) {
			struct epoch_view *v = &sets[s]->epochs[e].view;

			if (level == PSET_IMAGES)
				image_rows(t, s, v);
			else if (level == PSET_PROCEDURES)
				proc_rows(t, s, v);
			else
				insn_rows(t, s, v);
		}
	}
	finish_builds(t);
	return 0;
}

/* ---- rows of one procedure ------------------------------------------------ */

struct found_proc {
	size_t set;
	struct epoch_view *view;
	struct proc_ref ref;
};

struct proc_search {
	struct found_proc *v;
	size_t n, alloc;
};

/* Finds spec in every epoch of every set; -1 (reported) if ambiguous somewhere. */
static int find_proc(struct pset *const *sets, size_t n, const char *spec, struct proc_search *f)
{
	for (size_t s = 0; s < n; s++) {
		for (size_t e = 0; e < sets[s]->n_epochs; e++) {
			struct epoch_view *v = &sets[s]->epochs[e].view;
			struct proc_ref *refs, one;
			size_t k = proc_lookup_all(v, spec, NULL, &refs);

			if (k == 1) {
				ALLOC_GROW(f->v, f->n + 1, f->alloc);
				f->v[f->n].set = s;
				f->v[f->n].view = v;
				f->v[f->n].ref = refs[0];
				f->n++;
			}
			free(refs);
			if (k > 1)
				return proc_lookup(v, spec, NULL, &one);  /* reports the candidates */
		}
	}
	if (!f->n) {
		char *safe = display_safe(spec);

		errorf("no procedure '%s' in any set%s", safe,
		       n == 2 ? " (neither A nor B has it)" : "");
		free(safe);
		return -1;
	}
	return 0;
}

static const struct db_image *found_rec(const struct found_proc *fp)
{
	return fp->view->images[fp->ref.image].rec;
}

/* NULL if every found procedure is the same code, else why not (allocated). */
static char *why_unaligned(struct pset *const *sets, const struct proc_search *f)
{
	const struct found_proc *a = &f->v[0];
	struct strbuf sb = STRBUF_INIT;
	char *path;

	for (size_t i = 1; i < f->n; i++) {
		const struct found_proc *b = &f->v[i];

		if (!strcmp(found_rec(a)->key, found_rec(b)->key) &&
		    a->ref.proc->start == b->ref.proc->start && a->ref.proc->end == b->ref.proc->end)
			continue;
		path = display_safe(found_rec(a)->path);
		if (strcmp(found_rec(a)->path, found_rec(b)->path)) {
			char *other = display_safe(found_rec(b)->path);

			strbuf_addf(&sb, "different binaries (%s in %s, %s in %s)", path,
				    sets[a->set]->spec, other, sets[b->set]->spec);
			free(other);
			free(path);
			return strbuf_detach(&sb, NULL);
		}
		strbuf_addf(&sb, "different builds of %s (", path);
		add_build(&sb, found_rec(a)->key);
		strbuf_addf(&sb, " in %s, ", sets[a->set]->spec);
		add_build(&sb, found_rec(b)->key);
		strbuf_addf(&sb, " in %s)", sets[b->set]->spec);
		if (!strcmp(found_rec(a)->key, found_rec(b)->key))
			strbuf_addstr(&sb, ": the procedure's range differs");
		free(path);
		return strbuf_detach(&sb, NULL);
	}
	return NULL;
}

/* The procedure's own row: its samples per set. */
static void whole_proc_row(struct pset_rows *t, const struct proc_search *f)
{
	struct rows_priv *pv = t->priv;
	struct pset_row *r = arena_calloc(&pv->mem, 1, sizeof(*r));
	const struct found_proc *a = &f->v[0];

	r->name = arena_strdup(&pv->mem, a->ref.proc->name);
	r->image = (char *)intern_path(pv, found_rec(a)->path);
	r->addr = a->ref.proc->start;
	r->has_addr = true;
	r->counts = arena_calloc(&pv->mem, t->n_sets ? t->n_sets : 1, sizeof(*r->counts));
	r->key = arena_strdup(&pv->mem, "");
	for (size_t i = 0; i < f->n; i++)
		r->counts[f->v[i].set] += proc_ref_samples(f->v[i].view, &f->v[i].ref, t->event);
	t->proc = r;
}

static struct pset_row *insn_row(struct pset_rows *t, uint64_t addr, const struct found_proc *fp)
{
	struct strbuf key = STRBUF_INIT;
	struct pset_row *r;
	char *name;

	strbuf_addf(&key, "%" PRIx64, addr);
	name = xasprintf("%s+0x%" PRIx64, fp->ref.proc->name, addr - fp->ref.proc->start);
	r = get_row(t, &key, name, found_rec(fp)->path);
	r->addr = addr;
	r->has_addr = true;
	free(name);
	strbuf_release(&key);
	return r;
}

/* Every instruction of the procedure, from the first epoch that can decode it. */
static void decoded_rows(struct pset_rows *t, const struct proc_search *f)
{
	for (size_t i = 0; i < f->n; i++) {
		const struct found_proc *fp = &f->v[i];
		struct image *img = epoch_view_image(fp->view, fp->ref.image);
		struct insn *insns;
		size_t n;

		if (!image_has_code(img, NULL) || image_decode(img, fp->ref.proc, &insns, &n))
			continue;
		for (size_t k = 0; k < n; k++)
			insn_row(t, insns[k].addr, fp)->text =
				arena_strdup(&((struct rows_priv *)t->priv)->mem, insns[k].text);
		free(insns);
		return;
	}
	t->no_code = true;
}

static int cmp_addr(const void *a, const void *b)
{
	const struct pset_row *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void sampled_rows(struct pset_rows *t, const struct proc_search *f)
{
	for (size_t i = 0; i < f->n; i++) {
		const struct found_proc *fp = &f->v[i];
		struct image *img = epoch_view_image(fp->view, fp->ref.image);
		const struct profile *prof = epoch_view_profile(fp->view, fp->ref.image, t->event);
		const struct proc *p = fp->ref.proc;
		uint64_t lo, hi;

		if (!image_addr_to_offset(img, p->start, &lo) ||
		    !image_addr_to_offset(img, p->end - 1, &hi))
			continue;
		for (size_t k = profile_lower_bound(prof, lo); k < prof->n && prof->v[k].offset <= hi;
		     k++)
			insn_row(t, p->start + (prof->v[k].offset - lo), fp)->counts[fp->set] +=
				prof->v[k].count;
	}
}

int pset_rows_build_proc(struct pset_rows *t, struct pset *const *sets, size_t n,
			 enum dcpi_event ev, const char *spec)
{
	struct proc_search f = { NULL, 0, 0 };

	rows_init(t, sets, n, ev, PSET_INSTRUCTIONS);
	if (find_proc(sets, n, spec, &f)) {
		free(f.v);
		pset_rows_release(t);
		return -1;
	}
	for (size_t i = 0; i < f.n; i++)
		note_image(t, f.v[i].set, found_rec(&f.v[i]));
	whole_proc_row(t, &f);
	t->unaligned = why_unaligned(sets, &f);
	if (t->unaligned) {
		t->level = PSET_PROCEDURES;
		t->rows = XNEW(struct pset_row);
		t->alloc = t->n_rows = 1;
		t->rows[0] = *t->proc;  /* the same strings and counts: the arena's */
		t->rows[0].builds_differ = true;
	} else {
		decoded_rows(t, &f);
		sampled_rows(t, &f);
		if (t->n_rows > 1)
			qsort(t->rows, t->n_rows, sizeof(*t->rows), cmp_addr);
	}
	free(f.v);
	return 0;
}

void pset_rows_release(struct pset_rows *t)
{
	struct rows_priv *pv = t->priv;

	free(t->rows);
	for (size_t i = 0; i < t->n_notes; i++)
		free(t->notes[i]);
	free(t->notes);
	free(t->totals);
	free(t->unaligned);
	if (pv) {
		for (size_t i = 0; i < pv->images.n; i++) {
			free(pv->infos[i].build);
			free(pv->infos[i].other);
			free(pv->infos[i].path);
		}
		free(pv->infos);
		strindex_release(&pv->rows);
		strindex_release(&pv->images);
		strindex_release(&pv->warned);
		strindex_release(&pv->paths);
		arena_release(&pv->mem);
		free(pv);
	}
	memset(t, 0, sizeof(*t));
}

void pset_damage_json(struct pset *const *sets, size_t n, struct json_writer *w)
{
	struct db **dbs;
	size_t m = 0, alloc = 0;

	for (size_t i = 0; i < n; i++)
		m += sets[i]->n_epochs;
	dbs = xcalloc(m + 1, sizeof(*dbs));
	for (size_t i = 0; i < n; i++)
		for (size_t e = 0; e < sets[i]->n_epochs; e++)
			dbs[alloc++] = sets[i]->epochs[e].db;
	db_damage_json(dbs, alloc, w);
	free(dbs);
}
