/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/lookup.c - procedures by name, name@image or address.
 */
#include "config.h"

#include "analysis/lookup.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"

#define MAX_PER_IMAGE 256

struct found {
	struct proc_ref *v;
	size_t n, alloc;
};

static void add(struct found *f, size_t image, const struct proc *p)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->v[i].image == image && f->v[i].proc == p)
			return;
	ALLOC_GROW(f->v, f->n + 1, f->alloc);
	f->v[f->n].image = image;
	f->v[f->n].proc = p;
	f->n++;
}

static bool image_wanted(const struct epoch_view *v, size_t i, const char *a, const char *b)
{
	return (!a || epoch_view_image_matches(v, i, a)) && (!b || epoch_view_image_matches(v, i, b));
}

static bool any_image(const struct epoch_view *v, const char *spec)
{
	for (size_t i = 0; i < v->n_images; i++)
		if (epoch_view_image_matches(v, i, spec))
			return true;
	return false;
}

bool lookup_parse_address(const char *s, bool bare_hex, uint64_t *addr)
{
	const char *digits = s;
	char *end;

	if (!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2))
		digits = s + 2;
	else if (!bare_hex)
		return false;
	if (!isxdigit((unsigned char)*digits))
		return false;
	errno = 0;
	*addr = strtoull(digits, &end, 16);
	return !errno && !*end;
}

static void by_address(struct epoch_view *v, uint64_t addr, const char *f1, const char *f2,
		       struct found *f)
{
	for (size_t i = 0; i < v->n_images; i++) {
		const struct proc *p;

		if (!image_wanted(v, i, f1, f2))
			continue;
		if ((p = image_proc_at(epoch_view_image(v, i), addr)))
			add(f, i, p);
	}
}

static void by_name(struct epoch_view *v, const char *name, const char *f1, const char *f2,
		    struct found *f)
{
	const struct proc *buf[MAX_PER_IMAGE];

	for (size_t i = 0; i < v->n_images; i++) {
		size_t n;

		if (!image_wanted(v, i, f1, f2))
			continue;
		n = image_procs_by_name(epoch_view_image(v, i), name, buf, MAX_PER_IMAGE);
		for (size_t k = 0; k < n && k < MAX_PER_IMAGE; k++)
			add(f, i, buf[k]);
	}
}

/* "ns::f" for "ns::f(int)": demangled names without their parameters. */
static void by_base_name(struct epoch_view *v, const char *name, const char *f1, const char *f2,
			 struct found *f)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < v->n_images; i++) {
		struct proctab *t;

		if (!image_wanted(v, i, f1, f2))
			continue;
		t = image_procs(epoch_view_image(v, i));
		for (size_t k = 0; k < t->n; k++)
			if (t->v[k].name != t->v[k].sym && !strncmp(t->v[k].name, name, len) &&
			    t->v[k].name[len] == '(')
				add(f, i, &t->v[k]);
	}
}

static void search(struct epoch_view *v, const char *what, const char *f1, const char *f2,
		   struct found *f)
{
	uint64_t addr;

	if (lookup_parse_address(what, false, &addr)) {
		by_address(v, addr, f1, f2, f);
		return;
	}
	by_name(v, what, f1, f2, f);
	if (!f->n)
		by_base_name(v, what, f1, f2, f);
}

const char *proc_spec_image(const struct epoch_view *v, const char *spec, size_t *name_len)
{
	const char *at = strrchr(spec, '@');

	if (!at || !at[1] || at == spec || !any_image(v, at + 1))
		return NULL;
	*name_len = (size_t)(at - spec);
	return at + 1;
}

size_t proc_lookup_all(struct epoch_view *v, const char *spec, const char *image,
		       struct proc_ref **out)
{
	struct found f = { NULL, 0, 0 };
	const char *at;
	size_t len;

	/* NAME in IMAGE reads IMAGE's symbols alone, not every image's */
	if ((at = proc_spec_image(v, spec, &len))) {
		char *name = xstrndup(spec, len);

		search(v, name, image, at, &f);
		free(name);
	}
	if (!f.n)
		search(v, spec, image, NULL, &f);
	*out = f.v;
	return f.n;
}

uint64_t proc_ref_samples(struct epoch_view *v, const struct proc_ref *ref, enum dcpi_event ev)
{
	struct image *img = epoch_view_image(v, ref->image);
	const struct profile *prof = epoch_view_profile(v, ref->image, ev);
	uint64_t lo, hi, sum = 0;

	if (!image_addr_to_offset(img, ref->proc->start, &lo) ||
	    !image_addr_to_offset(img, ref->proc->end - 1, &hi))
		return 0;
	for (size_t k = profile_lower_bound(prof, lo); k < prof->n && prof->v[k].offset <= hi; k++)
		sum += prof->v[k].count;
	return sum;
}

void proc_ref_describe(const struct epoch_view *v, const struct proc_ref *ref, struct strbuf *sb)
{
	char *name = display_safe(ref->proc->name);
	char *path = display_safe(v->images[ref->image].rec->path);

	strbuf_addf(sb, "%s@%s (0x%" PRIx64 ")", name, path, ref->proc->start);
	free(name);
	free(path);
}

static void add_part(char ***v, size_t *n, char *s)
{
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[(*n)++] = s;
}

/* Why images that could hold the procedure have no names ("'X' cannot be named: ..."). */
static void unnamed_images(struct epoch_view *v, const char *image, struct lookup_failure *f)
{
	size_t shown = 0;

	for (size_t i = 0; i < v->n_images && shown < 3; i++) {
		struct image *img;
		const char *why;
		char *path, *safe;

		if (image && !epoch_view_image_matches(v, i, image))
			continue;
		img = epoch_view_image(v, i);
		if (image_procs(img)->n || img->state == IMAGE_NOTHING)
			continue;
		why = img->syms_why ? img->syms_why : img->why;
		if (!why)
			continue;
		path = display_safe(img->rec.path);
		safe = display_safe(why);
		add_part(&f->clauses, &f->n_clauses,
			 xasprintf("'%s' cannot be named: %s%s", path, safe,
				   img->state == IMAGE_CHANGED ? " (--force uses it anyway)" : ""));
		free(path);
		free(safe);
		shown++;
	}
}

static struct epoch_view *sort_view;

static int by_samples(const void *a, const void *b)
{
	const struct proc_ref *x = a, *y = b;
	enum dcpi_event ev = sort_view->n_events ? sort_view->events[0] : EVENT_CYCLES;
	uint64_t sx = proc_ref_samples(sort_view, x, ev), sy = proc_ref_samples(sort_view, y, ev);

	if (sx != sy)
		return sx > sy ? -1 : 1;
	return x->image != y->image ? (x->image < y->image ? -1 : 1)
				    : (x->proc->start < y->proc->start ? -1 : 1);
}

/* The candidates of an ambiguous spec, hottest first: how to name each one. */
static void candidates(struct epoch_view *v, struct proc_ref *refs, size_t n,
		       struct lookup_failure *f)
{
	enum dcpi_event ev = v->n_events ? v->events[0] : EVENT_CYCLES;
	struct strbuf sb = STRBUF_INIT;

	sort_view = v;
	qsort(refs, n, sizeof(*refs), by_samples);
	sort_view = NULL;
	add_part(&f->clauses, &f->n_clauses, xstrdup("say NAME@IMAGE or give an address:"));
	for (size_t i = 0; i < n && i < 20; i++) {
		strbuf_reset(&sb);
		proc_ref_describe(v, &refs[i], &sb);
		strbuf_addf(&sb, ", %" PRIu64 " %s samples", proc_ref_samples(v, &refs[i], ev),
			    event_name(ev));
		add_part(&f->items, &f->n_items, strbuf_detach(&sb, NULL));
	}
	if (n > 20)
		add_part(&f->items, &f->n_items, xasprintf("... and %zu more", n - 20));
	strbuf_release(&sb);
}

int proc_lookup_why(struct epoch_view *v, const char *spec, const char *image,
		    struct proc_ref *out, struct lookup_failure *f)
{
	struct proc_ref *refs;
	size_t n = proc_lookup_all(v, spec, image, &refs);
	char *safe = display_safe(spec);

	memset(f, 0, sizeof(*f));
	if (n == 1) {
		*out = refs[0];
	} else if (!n && image && !any_image(v, image)) {
		char *si = display_safe(image);

		f->kind = LOOKUP_NO_IMAGE;
		f->what = xasprintf("no image '%s' in epoch %" PRIu32, si, v->seq);
		free(si);
	} else if (!n) {
		f->kind = LOOKUP_NO_PROC;
		f->what = xasprintf("no procedure '%s' in epoch %" PRIu32 "%s", safe, v->seq,
				    image ? " in that image" : "");
		unnamed_images(v, image, f);
	} else {
		f->kind = LOOKUP_AMBIGUOUS;
		f->what = xasprintf("'%s' is ambiguous (%zu procedures)", safe, n);
		candidates(v, refs, n, f);
	}
	free(safe);
	free(refs);
	return f->kind == LOOKUP_FOUND ? 0 : -1;
}

void lookup_failure_text(const struct lookup_failure *f, struct strbuf *sb)
{
	strbuf_addstr(sb, f->what ? f->what : "");
	for (size_t k = 0; k < f->n_clauses; k++)
		strbuf_addf(sb, "; %s", f->clauses[k]);
	for (size_t k = 0; k < f->n_items; k++)
		strbuf_addf(sb, "\n  %s", f->items[k]);
}

void lookup_failure_lines(const struct lookup_failure *f, struct strbuf *sb)
{
	strbuf_addf(sb, "%s%s\n", f->what ? f->what : "", f->n_clauses ? ";" : "");
	for (size_t k = 0; k < f->n_clauses; k++)
		strbuf_addf(sb, "%s%s\n", f->clauses[k], k + 1 < f->n_clauses ? ";" : "");
	for (size_t k = 0; k < f->n_items; k++)
		strbuf_addf(sb, "%s\n", f->items[k]);
}

void lookup_failure_release(struct lookup_failure *f)
{
	for (size_t k = 0; k < f->n_clauses; k++)
		free(f->clauses[k]);
	for (size_t k = 0; k < f->n_items; k++)
		free(f->items[k]);
	free(f->clauses);
	free(f->items);
	free(f->what);
	memset(f, 0, sizeof(*f));
}

int proc_lookup(struct epoch_view *v, const char *spec, const char *image, struct proc_ref *out)
{
	struct lookup_failure f;
	struct strbuf sb = STRBUF_INIT;
	int r = 0;

	if (proc_lookup_why(v, spec, image, out, &f)) {
		lookup_failure_text(&f, &sb);
		r = errorf("%s", sb.buf);
	}
	strbuf_release(&sb);
	lookup_failure_release(&f);
	return r;
}
