/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "analysis/invariants.h"
#include "analysis/listing.h"
#include "analysis/lookup.h"
#include "core/die.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "present/draw.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The semi-invariant instructions of procedure p of image i, appended. */
static void scan_proc(struct invariants *inv, struct epoch_view *v, size_t i, const struct proc *p)
{
	struct listing_opts lo = LISTING_OPTS_INIT;
	struct proc_ref ref = { i, p };
	struct listing l;
	struct valprof vp;

	if (listing_build(&l, v, &ref, &lo))
		return;
	valprof_build(&vp, &l, epoch_view_values(v, i), &epoch_view_paths(v, i)->values);
	for (size_t k = 0; k < vp.n; k++) {
		const struct valprof_item *best = valprof_invariant(&vp.insns[k], inv->opts.min_share);
		struct invariant *r;

		if (!best || best->samples < inv->opts.min_samples)
			continue;
		ALLOC_GROW(inv->v, inv->n + 1, inv->alloc);
		r = &inv->v[inv->n++];
		r->image = i;
		r->proc = p;
		r->addr = l.insns[k].insn->addr;
		r->text = xstrdup(l.insns[k].insn->text);
		r->vi = vp.insns[k];
		r->best = (unsigned)(best - vp.insns[k].it);
	}
	valprof_release(&vp);
	listing_release(&l);
}

/*
 * Every procedure of image i holding an offset with enough value samples,
 * or written values bursts saw often enough (the two lists merged by
 * offset, so that each procedure is scanned once).
 */
static void scan_image(struct invariants *inv, struct epoch_view *v, size_t i)
{
	const struct values_profile *vals = epoch_view_values(v, i);
	const struct values_profile *wr = &epoch_view_paths(v, i)->values;
	const struct proc *last = NULL;
	struct image *img;
	size_t a = 0, b = 0;

	if (!vals->n && !wr->n)
		return;
	img = epoch_view_image(v, i);
	if (!image_has_code(img, NULL) || image_load_procs(img)) {
		epoch_view_warn_image(v, i);
		return;
	}
	while (a < vals->n || b < wr->n) {
		const struct values_rec *rec = b >= wr->n || (a < vals->n && vals->v[a].offset <= wr->v[b].offset)
					       ? &vals->v[a++] : &wr->v[b++];
		const struct proc *p;
		uint64_t addr;

		if (rec->samples < inv->opts.min_samples || !image_offset_to_addr(img, rec->offset, &addr) ||
		    !(p = image_proc_at(img, addr)) || p == last)
			continue;
		last = p;
		scan_proc(inv, v, i, p);
	}
}

static uint64_t row_samples(const struct invariant *r)
{
	return r->vi.it[r->best].samples;
}

static int hotter(const void *x, const void *y)
{
	const struct invariant *a = x, *b = y;

	if (row_samples(a) != row_samples(b))
		return row_samples(a) > row_samples(b) ? -1 : 1;
	if (a->image != b->image)
		return a->image < b->image ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

int invariants_build(struct invariants *inv, struct epoch_view *v,
		     const struct invariants_opts *o)
{
	memset(inv, 0, sizeof(*inv));
	inv->opts = *o;
	inv->seq = v->seq;
	for (size_t i = 0; i < v->n_images; i++) {
		if (o->image && !epoch_view_image_matches(v, i, o->image))
			continue;
		inv->any_values |= epoch_view_values(v, i)->n > 0 || epoch_view_paths(v, i)->values.n > 0;
		scan_image(inv, v, i);
	}
	if (!inv->any_values && !error_count()) {
		if (o->image)
			warning("no value profile of '%s' in epoch %" PRIu32, o->image, v->seq);
		else
			warning("epoch %" PRIu32 " has no value profiles (record with dcpirun --values)",
				v->seq);
	}
	if (inv->n > 1)
		qsort(inv->v, inv->n, sizeof(*inv->v), hotter);
	if (o->limit && inv->n > o->limit) {
		for (size_t k = o->limit; k < inv->n; k++)
			free(inv->v[k].text);
		inv->n = o->limit;
	}
	return 0;
}

void invariants_release(struct invariants *inv)
{
	for (size_t k = 0; k < inv->n; k++)
		free(inv->v[k].text);
	free(inv->v);
	memset(inv, 0, sizeof(*inv));
}

static const char *image_name(const struct epoch_view *v, size_t i)
{
	const char *path = v->images[i].rec->path, *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

void invariants_draw(const struct invariants *inv, struct draw *d, const struct epoch_view *v)
{
	static const struct draw_col head[] = {
		{ "Samples", 8, ALIGN_RIGHT }, { "Procedure", 28, ALIGN_LEFT },
		{ "Image", 12, ALIGN_LEFT }, { "Instruction", 34, ALIGN_LEFT },
	};

	draw_printf(d, STYLE_TITLE, "Semi-invariant instructions of epoch %" PRIu32
		    " (most common value >= %.0f%%, >= %" PRIu64 " value samples), hottest first",
		    inv->seq, 100 * inv->opts.min_share, inv->opts.min_samples);
	draw_eol(d);
	draw_eol(d);
	draw_columns(d, STYLE_HEADER, head, ARRAY_SIZE(head), STYLE_NORMAL, 2);
	draw_space(d, STYLE_NORMAL, 2);
	draw_text(d, STYLE_HEADER, "Values");
	draw_eol(d);
	for (size_t k = 0; k < inv->n; k++) {
		const struct invariant *r = &inv->v[k];
		char *name = display_safe(r->proc->name), *img = display_safe(image_name(v, r->image));
		char *text = display_safe(r->text);
		struct strbuf where = STRBUF_INIT;

		strbuf_addf(&where, "%s+0x%" PRIx64, name, r->addr - r->proc->start);
		draw_printf(d, STYLE_NORMAL, "%8" PRIu64, row_samples(r));
		draw_space(d, STYLE_NORMAL, 2);
		draw_field(d, STYLE_NORMAL, where.buf, 28, ALIGN_LEFT);
		draw_space(d, STYLE_NORMAL, 2);
		draw_field(d, STYLE_DIM, img, 12, ALIGN_LEFT_TAIL);
		draw_space(d, STYLE_NORMAL, 2);
		draw_field(d, STYLE_NORMAL, text, 34, ALIGN_LEFT);
		draw_space(d, STYLE_NORMAL, 2);
		valprof_draw(&r->vi, d);
		draw_eol(d);
		strbuf_release(&where);
		free(name);
		free(img);
		free(text);
	}
	if (!inv->n) {
		draw_text(d, STYLE_DIM, "(none)");
		draw_eol(d);
	}
}

void invariants_json(const struct invariants *inv, struct json_writer *w,
		     const struct epoch_view *v)
{
	json_object_begin(w);
	json_key(w, "epoch"), json_u64(w, inv->seq);
	json_key(w, "min_share"), json_double(w, inv->opts.min_share, 4);
	json_key(w, "min_samples"), json_u64(w, inv->opts.min_samples);
	json_key(w, "instructions"), json_array_begin(w);
	for (size_t k = 0; k < inv->n; k++) {
		const struct invariant *r = &inv->v[k];
		const struct valprof_item *best = &r->vi.it[r->best];
		char hex[24];

		json_object_begin(w);
		json_key(w, "image"), json_string(w, v->images[r->image].rec->path);
		json_key(w, "procedure"), json_string(w, r->proc->name);
		json_key(w, "addr"), json_hex(w, r->addr);
		json_key(w, "text"), json_string(w, r->text);
		json_key(w, "samples"), json_u64(w, best->samples);
		json_key(w, "reg"), json_string(w, best->name);
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)best->v[0].value);
		json_key(w, "value"), json_string(w, hex);
		json_key(w, "share"), json_double(w, best->v[0].share, 4);
		json_key(w, "values"), valprof_json(&r->vi, w);
		json_object_end(w);
	}
	json_array_end(w);
	db_damage_json(&v->db, 1, w);
	json_object_end(w);
}
