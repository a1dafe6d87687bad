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

size_t proc_lookup_all(struct epoch_view *v, const char *spec, const char *image,
		       struct proc_ref **out)
{
	struct found f = { NULL, 0, 0 };
	const char *at = strrchr(spec, '@');

	search(v, spec, image, NULL, &f);
	if (!f.n && at && at[1] && at > spec && any_image(v, at + 1)) {
		char *name = xstrndup(spec, (size_t)(at - spec));

		search(v, name, image, at + 1, &f);
		free(name);
	}
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

/* Why images that could hold the procedure have no names ("; 'X' cannot be named: ..."). */
static void unnamed_images(struct epoch_view *v, const char *image, struct strbuf *sb)
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
		strbuf_addf(sb, "; '%s' cannot be named: %s", path, safe);
		if (img->state == IMAGE_CHANGED)
			strbuf_addstr(sb, " (--force uses it anyway)");
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

int proc_lookup(struct epoch_view *v, const char *spec, const char *image, struct proc_ref *out)
{
	struct proc_ref *refs;
	size_t n = proc_lookup_all(v, spec, image, &refs);
	struct strbuf sb = STRBUF_INIT;
	char *safe = display_safe(spec);
	enum dcpi_event ev = v->n_events ? v->events[0] : EVENT_CYCLES;
	int r = 0;

	if (n == 1) {
		*out = refs[0];
	} else if (!n) {
		if (image && !any_image(v, image)) {
			char *si = display_safe(image);

			r = errorf("no image '%s' in epoch %" PRIu32, si, v->seq);
			free(si);
		} else {
			unnamed_images(v, image, &sb);
			r = errorf("no procedure '%s' in epoch %" PRIu32 "%s%s", safe, v->seq,
				   image ? " in that image" : "", sb.buf);
		}
	} else {
		sort_view = v;
		qsort(refs, n, sizeof(*refs), by_samples);
		sort_view = NULL;
		for (size_t i = 0; i < n && i < 20; i++) {
			strbuf_addstr(&sb, "\n  ");
			proc_ref_describe(v, &refs[i], &sb);
			strbuf_addf(&sb, ", %" PRIu64 " %s samples", proc_ref_samples(v, &refs[i], ev),
				    event_name(ev));
		}
		if (n > 20)
			strbuf_addf(&sb, "\n  ... and %zu more", n - 20);
		r = errorf("'%s' is ambiguous (%zu procedures); say NAME@IMAGE or give an address:%s",
			   safe, n, sb.buf);
	}
	strbuf_release(&sb);
	free(safe);
	free(refs);
	return r;
}
