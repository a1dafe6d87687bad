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
	e->view = XNEW(struct epoch_view);
	e->own = true;
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

	s->n_epochs = 1;
	if (epoch_view_open(e->view, db, name, o))
		return -1;
	path = display_safe(db->path);
	add_epoch_desc(&sb, e->view);
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
		if (epoch_view_open(e->view, db, name, o)) {
			epoch_view_release(e->view);  /* reported; left out */
			free(e->view);
		} else {
			s->n_epochs++;
		}
	}
	if (!s->n_epochs)
		errorf(n ? "database '%s': no epoch can be read" : "database '%s' has no epochs",
		       path);
	else if (s->n_epochs == 1)
		s->desc = xasprintf("%s (its epoch %" PRIu32 ")", path, s->epochs[0].view->seq);
	else
		s->desc = xasprintf("%s (%zu epochs, %" PRIu32 "-%" PRIu32 ", summed)", path,
				    s->n_epochs, s->epochs[0].view->seq,
				    s->epochs[s->n_epochs - 1].view->seq);
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

void pset_borrow_epoch(struct pset *s, struct epoch_view *v)
{
	struct strbuf sb = STRBUF_INIT;
	char name[16], *path = display_safe(v->db->path);

	memset(s, 0, sizeof(*s));
	snprintf(name, sizeof(name), "%" PRIu32, v->seq);
	s->spec = xstrdup(name);
	s->epochs = XNEW(struct pset_epoch);
	s->epochs[0] = (struct pset_epoch){ v->db, v, false };
	s->n_epochs = 1;
	add_epoch_desc(&sb, v);
	strbuf_addf(&sb, " of %s", path);
	s->desc = strbuf_detach(&sb, NULL);
	free(path);
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
	for (size_t i = 0; i < s->n_epochs; i++) {
		if (!s->epochs[i].own)
			continue;
		epoch_view_release(s->epochs[i].view);
		free(s->epochs[i].view);
	}
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
		t += s->epochs[i].view->totals[ev];
	return t;
}

enum dcpi_event pset_default_event(struct pset *const *sets, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < sets[i]->n_epochs; k++)
			if (sets[i]->epochs[k].view->n_events)
				return sets[i]->epochs[k].view->events[0];
	return EVENT_CYCLES;
}

/* The first epoch whose metadata lists ev, or NULL. */
static const struct epoch_view *view_with_event(struct pset *const *sets, size_t n,
						enum dcpi_event ev)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < sets[i]->n_epochs; k++) {
			const struct epoch_view *v = sets[i]->epochs[k].view;

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
		const struct epoch_view *v = s->epochs[i].view;
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
		const struct epoch_view *v = s->epochs[i].view;
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

/* An image of a set's epoch: a member of the image it is across sets. */
struct image_member {
	size_t set, epoch;
	struct epoch_view *view;
	size_t image;         /* in view */
	bool unnamed;         /* it has samples outside its procedures (warned after) */
};

/* What an image is across sets (the images of one path). */
struct image_info {
	char *build;          /* the image key (build-id) where first seen */
	size_t set;           /* ... in this set */
	char *other;          /* a different key, or NULL */
	size_t other_set;
	char *path;
	struct image_member *members; /* procedures: where it has samples */
	size_t n_members, alloc_members;
};

struct rows_priv {
	struct pset *const *sets;
	struct arena mem;         /* names made up, keys, instruction texts, image paths */
	struct strindex rows;     /* images and instructions: a row's key -> row */
	struct strindex images;   /* image match key -> infos */
	struct image_info *infos;
	size_t alloc_infos;
	struct strindex warned;   /* image match keys warned about */
	struct strindex paths;    /* the image paths of rows, once each */
	size_t alloc_rows;
	struct profile scratch;   /* the profile of the image at hand (epoch_view_profile_pass) */
	struct u64map unique;     /* image pointer -> 1 + whether its names are all different */
	uint32_t *image_row_info; /* images: per row, its info */
};

/* path, copied once for every row that names it; *index: its place among the paths. */
static const char *intern_path(struct rows_priv *pv, const char *path, uint32_t *index)
{
	bool created;
	size_t i = strindex_get(&pv->paths, path, strlen(path), &created);

	if (index)
		*index = (uint32_t)i;
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

/* Records that set holds image rec (and whether it is another build); its info's index. */
static size_t note_image(struct pset_rows *t, size_t set, const struct db_image *rec)
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
	return i;
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

/* Room for n rows more (the worst case of an image: no copy of a million rows as they grow). */
static void reserve_rows(struct pset_rows *t, size_t n)
{
	struct rows_priv *pv = t->priv;

	if (t->n_rows + n <= pv->alloc_rows)
		return;
	pv->alloc_rows = t->n_rows + n > 2 * pv->alloc_rows ? t->n_rows + n : 2 * pv->alloc_rows;
	t->rows = xreallocarray(t->rows, pv->alloc_rows, sizeof(*t->rows));
	t->counts = xreallocarray(t->counts, pv->alloc_rows, t->n_sets * sizeof(*t->counts));
}

/* A new row named name (kept as it is: the caller's to keep alive) in image path. */
static size_t new_row(struct pset_rows *t, const char *name, const char *path)
{
	struct rows_priv *pv = t->priv;
	size_t r = t->n_rows;
	struct pset_row *row;

	reserve_rows(t, 1);
	row = &t->rows[t->n_rows++];
	memset(row, 0, sizeof(*row));
	row->name = name;
	row->image = intern_path(pv, path, &row->path);
	memset(&t->counts[r * t->n_sets], 0, t->n_sets * sizeof(*t->counts));
	return r;
}

/* The row of key (images, instructions), made with name and image when new. */
static size_t get_row(struct pset_rows *t, const struct strbuf *key, const char *name,
		      const char *image)
{
	struct rows_priv *pv = t->priv;
	bool created;
	size_t i = strindex_get(&pv->rows, key->buf, key->len, &created);

	return created ? new_row(t, arena_strdup(&pv->mem, name), image) : i;
}

/* Row r's counts (valid until the next row is made). */
static uint64_t *counts_of(struct pset_rows *t, size_t r)
{
	return &t->counts[r * t->n_sets];
}

/* ---- rows of images, procedures, instructions ---------------------------- */

static void image_rows(struct pset_rows *t, size_t set, struct epoch_view *v)
{
	struct rows_priv *pv = t->priv;
	struct strbuf key = STRBUF_INIT;

	for (size_t i = 0; i < v->n_images; i++) {
		const struct db_image *rec = v->images[i].rec;
		uint64_t n = v->images[i].samples[t->event];
		size_t info, r;

		if (!n)
			continue;
		info = note_image(t, set, rec);
		strbuf_setlen(&key, 0);
		image_match_key(rec, &key);
		r = get_row(t, &key, rec->path, rec->path);
		counts_of(t, r)[set] += n;
		pv->image_row_info = xreallocarray(pv->image_row_info, t->n_rows, sizeof(uint32_t));
		pv->image_row_info[r] = (uint32_t)info;
	}
	strbuf_release(&key);
}

/* Records that procedure k answers to name: false if another one does too. */
static bool alone(struct u64map *seen, const char *name, size_t k)
{
	uint64_t *slot = u64map_slot(seen, hash_bytes(HASH_FNV_INIT, name, strlen(name)));
	bool first = !*slot || *slot == k + 1;

	*slot = k + 1;
	return first;
}

/*
 * True if no two procedures of img answer to the same name (their names,
 * symbol names and aliases, as image_procs_by_name() finds them): then
 * each is the first of its name.  Found once per image by hashing its
 * names, not by sorting them (a by-name index for each of 10,000 images).
 */
static bool names_unique(struct rows_priv *pv, struct image *img)
{
	uint64_t *known = u64map_slot(&pv->unique, (uint64_t)(uintptr_t)img);
	struct proctab *tab;
	struct u64map seen = U64MAP_INIT;  /* hash of a name -> procedure + 1 */
	bool unique = true;

	if (*known)
		return *known == 2;
	tab = image_procs(img);
	for (size_t k = 0; k < tab->n && unique; k++) {
		const struct proc *p = &tab->v[k];

		unique = alone(&seen, p->name, k) && (p->sym == p->name || alone(&seen, p->sym, k));
		for (uint32_t a = 0; a < p->n_aliases && unique; a++)
			unique = alone(&seen, tab->aliases[p->alias_first + a], k);
	}
	u64map_release(&seen);
	*u64map_slot(&pv->unique, (uint64_t)(uintptr_t)img) = unique ? 2 : 1;
	return unique;
}

/* 0 for the first procedure of its name in the image (by address), 1 for the next... */
static unsigned name_ordinal(struct rows_priv *pv, struct image *img, const struct proc *p)
{
	const struct proc *same[64];
	size_t n;
	unsigned k = 0;

	/* a gap between procedures (IMAGE+0xADDR) is not in the table: looked up */
	if (p >= image_procs(img)->v && p < image_procs(img)->v + image_procs(img)->n &&
	    names_unique(pv, img))
		return 0;
	n = image_procs_by_name(img, p->name, same, ARRAY_SIZE(same));
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
	const struct profile *prof = epoch_view_profile_pass(v, i, t->event,
							     &((struct rows_priv *)t->priv)->scratch);
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

/* A row of one image: a name and which of that name it is. */
struct named {
	const char *name;
	unsigned ord;
};

/* The name of a row of NAME, the ord-th of that name in its image (0: NAME; 1: NAME#2...). */
static const char *row_name(struct rows_priv *pv, const char *name, unsigned ord)
{
	char *s;
	const char *kept;

	if (!ord)
		return name;  /* the symbol table's, or a placeholder: it outlives the rows */
	s = xasprintf("%s#%u", name, ord + 1);
	kept = arena_strdup(&pv->mem, s);
	free(s);
	return kept;
}

/*
 * The rows of one image across sets (info g): the procedures of each of
 * its members, matched by name (the Nth of a name in the image, by
 * address, is NAME#N), made image by image: no key of a million rows.
 */
static void proc_rows_of_image(struct pset_rows *t, size_t g, struct proc_count **pc,
			       size_t *alloc)
{
	struct rows_priv *pv = t->priv;
	struct image_info *info = &pv->infos[g];
	struct u64map at = U64MAP_INIT;  /* hash of (name, ord), probed -> row + 1 */
	struct named *keys = NULL;       /* per row of the image: what it matches */
	size_t first = t->n_rows, alloc_keys = 0;

	for (size_t m = 0; m < info->n_members; m++) {
		const struct image_member *mb = &info->members[m];
		struct image *img = epoch_view_image(mb->view, mb->image);
		const struct db_image *rec = mb->view->images[mb->image].rec;
		size_t n = count_procs(t, mb->view, mb->image, pc, alloc);
		const char *unnamed = image_unnamed(img);

		reserve_rows(t, n);
		for (size_t k = 0; k < n; k++) {
			const struct proc *p = (*pc)[k].proc;
			struct named want = { p ? p->name : unnamed, p ? name_ordinal(pv, img, p) : 0 };
			uint64_t h = hash_bytes(hash_u64(want.ord), want.name, strlen(want.name));
			struct pset_row *row;
			size_t r;

			if (!(*pc)[k].count)
				continue;
			if (!p)
				info->members[m].unnamed = true;
			for (;; h++) {
				uint64_t *slot = u64map_slot(&at, h);

				if (!*slot) {
					r = new_row(t, row_name(pv, want.name, want.ord), rec->path);
					t->rows[r].builds_differ = info->other != NULL;
					ALLOC_GROW(keys, r - first + 1, alloc_keys);
					keys[r - first] = want;
					*slot = r + 1;
					break;
				}
				r = *slot - 1;
				if (keys[r - first].ord == want.ord && !strcmp(keys[r - first].name, want.name))
					break;
			}
			row = &t->rows[r];
			if (p && !row->has_addr) {
				row->addr = p->start;
				row->has_addr = true;
			}
			counts_of(t, r)[mb->set] += (*pc)[k].count;
		}
	}
	u64map_release(&at);
	free(keys);
}

static int cmp_member(const void *a, const void *b)
{
	const struct image_member *x = a, *y = b;

	if (x->set != y->set)
		return x->set < y->set ? -1 : 1;
	if (x->epoch != y->epoch)
		return x->epoch < y->epoch ? -1 : 1;
	return (x->image > y->image) - (x->image < y->image);
}

/* The images with unnamed samples warned about, set after set, epoch after epoch, in order. */
static void warn_unnamed(struct pset_rows *t)
{
	struct rows_priv *pv = t->priv;
	struct image_member *v = NULL;
	size_t n = 0, alloc = 0;

	for (size_t g = 0; g < pv->images.n; g++)
		for (size_t m = 0; m < pv->infos[g].n_members; m++)
			if (pv->infos[g].members[m].unnamed) {
				ALLOC_GROW(v, n + 1, alloc);
				v[n++] = pv->infos[g].members[m];
			}
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_member);
	for (size_t k = 0; k < n; k++)
		warn_image(t, v[k].view, v[k].image);
	free(v);
}

/*
 * Rows of every image of every set by procedure: the images of each epoch
 * opened in parallel, then, image by image across sets, their procedures.
 */
static void proc_rows(struct pset_rows *t, struct pset *const *sets, size_t n)
{
	struct rows_priv *pv = t->priv;
	struct proc_count *pc = NULL;
	size_t alloc = 0;

	for (size_t s = 0; s < n; s++) {
		for (size_t e = 0; e < sets[s]->n_epochs; e++) {
			struct epoch_view *v = sets[s]->epochs[e].view;

			epoch_view_open_images(v, NULL);
			for (size_t i = 0; i < v->n_images; i++) {
				struct image_info *info;
				size_t g;

				if (!v->images[i].samples[t->event])
					continue;
				g = note_image(t, s, v->images[i].rec);  /* may move infos */
				info = &pv->infos[g];
				ALLOC_GROW(info->members, info->n_members + 1, info->alloc_members);
				info->members[info->n_members++] = (struct image_member){ s, e, v, i, false };
			}
		}
	}
	for (size_t g = 0; g < pv->images.n; g++)
		proc_rows_of_image(t, g, &pc, &alloc);
	free(pc);
	warn_unnamed(t);
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
	const struct profile *prof = epoch_view_profile_pass(v, i, t->event,
							     &((struct rows_priv *)t->priv)->scratch);
	const struct proc *last = NULL;
	struct strbuf key = STRBUF_INIT;

	note_image(t, set, rec);
	for (size_t k = 0; k < prof->n; k++) {
		uint64_t addr, off = prof->v[k].offset;
		bool mapped = image_offset_to_addr(img, off, &addr);
		struct pset_row *r;
		size_t row;
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
		row = get_row(t, &key, name, rec->path);  /* may move the rows */
		r = &t->rows[row];
		free(name);
		r->addr = mapped ? addr : 0;
		r->has_addr = mapped;
		counts_of(t, row)[set] += prof->v[k].count;
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
	u64map_init(&pv->unique);
	profile_init(&pv->scratch);
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
	/* procedures know theirs; instructions are keyed by build: never mixed */
	for (size_t r = 0; t->level == PSET_IMAGES && r < t->n_rows; r++)
		t->rows[r].builds_differ = pv->infos[pv->image_row_info[r]].other != NULL;
}

/* The rows made: their counts where they end up, the room reserved for more given back. */
static void finish_rows(struct pset_rows *t)
{
	struct rows_priv *pv = t->priv;

	if (t->n_rows && t->n_rows < pv->alloc_rows) {
		t->rows = xreallocarray(t->rows, t->n_rows, sizeof(*t->rows));
		t->counts = xreallocarray(t->counts, t->n_rows, t->n_sets * sizeof(*t->counts));
		pv->alloc_rows = t->n_rows;
	}
	for (size_t r = 0; r < t->n_rows; r++)
		t->rows[r].counts = counts_of(t, r);
}

int pset_rows_build(struct pset_rows *t, struct pset *const *sets, size_t n, enum dcpi_event ev,
		    enum pset_level level)
{
	rows_init(t, sets, n, ev, level);
	if (level == PSET_PROCEDURES)
		proc_rows(t, sets, n);
	for (size_t s = 0; s < n && level != PSET_PROCEDURES; s++) {
		for (size_t e = 0; e < sets[s]->n_epochs; e++) {
			struct epoch_view *v = sets[s]->epochs[e].view;

			if (level == PSET_IMAGES)
				image_rows(t, s, v);
			else
				insn_rows(t, s, v);
		}
	}
	finish_builds(t);
	finish_rows(t);
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
			struct epoch_view *v = sets[s]->epochs[e].view;
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
	r->image = intern_path(pv, found_rec(a)->path, &r->path);
	r->addr = a->ref.proc->start;
	r->has_addr = true;
	r->counts = arena_calloc(&pv->mem, t->n_sets ? t->n_sets : 1, sizeof(*r->counts));
	for (size_t i = 0; i < f->n; i++)
		r->counts[f->v[i].set] += proc_ref_samples(f->v[i].view, &f->v[i].ref, t->event);
	t->proc = r;
}

/* The row of the instruction at addr (valid until the next row is made). */
static struct pset_row *insn_row(struct pset_rows *t, uint64_t addr, const struct found_proc *fp)
{
	struct strbuf key = STRBUF_INIT;
	struct pset_row *r;
	size_t i;
	char *name;

	strbuf_addf(&key, "%" PRIx64, addr);
	name = xasprintf("%s+0x%" PRIx64, fp->ref.proc->name, addr - fp->ref.proc->start);
	i = get_row(t, &key, name, found_rec(fp)->path);  /* may move the rows */
	r = &t->rows[i];
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

/* The instructions by address, their counts with them. */
static void sort_by_addr(struct pset_rows *t)
{
	uint64_t *counts;

	finish_rows(t);  /* each row points at its counts: they follow it */
	if (t->n_rows < 2)
		return;
	qsort(t->rows, t->n_rows, sizeof(*t->rows), cmp_addr);
	counts = xreallocarray(NULL, t->n_rows, t->n_sets * sizeof(*counts));
	for (size_t r = 0; r < t->n_rows; r++) {
		memcpy(&counts[r * t->n_sets], t->rows[r].counts, t->n_sets * sizeof(*counts));
		t->rows[r].counts = &counts[r * t->n_sets];
	}
	free(t->counts);
	t->counts = counts;
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
		     k++) {
			struct pset_row *r = insn_row(t, p->start + (prof->v[k].offset - lo), fp);

			counts_of(t, (size_t)(r - t->rows))[fp->set] += prof->v[k].count;
		}
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
		t->n_rows = 1;
		t->rows[0] = *t->proc;  /* the same strings and counts: the arena's */
		t->rows[0].builds_differ = true;
	} else {
		decoded_rows(t, &f);
		sampled_rows(t, &f);
		sort_by_addr(t);
	}
	free(f.v);
	return 0;
}

void pset_rows_release(struct pset_rows *t)
{
	struct rows_priv *pv = t->priv;

	free(t->rows);
	free(t->counts);
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
			free(pv->infos[i].members);
		}
		free(pv->infos);
		free(pv->image_row_info);
		u64map_release(&pv->unique);
		profile_release(&pv->scratch);
		strindex_release(&pv->rows);
		strindex_release(&pv->images);
		strindex_release(&pv->warned);
		strindex_release(&pv->paths);
		arena_release(&pv->mem);
		free(pv);
	}
	memset(t, 0, sizeof(*t));
}

size_t pset_rows_n_paths(const struct pset_rows *t)
{
	return t->priv ? ((const struct rows_priv *)t->priv)->paths.n : 0;
}

const char *pset_rows_path(const struct pset_rows *t, uint32_t path)
{
	return ((const struct rows_priv *)t->priv)->paths.v[path].key;
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
