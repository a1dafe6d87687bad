/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analysis/listing.c - a procedure's instructions with samples,
 * blocks and source; the dcpilist report.
 */
#include "config.h"

#include "analysis/listing.h"
#include "analysis/valinsn.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "disasm/insntext.h"
#include "disasm/decode.h"
#include "disasm/srcfile.h"

static void set_columns(struct listing *l, const struct listing_opts *o)
{
	if (o->events) {
		for (size_t c = 0; c < o->n_events && c < EVENT__COUNT; c++)
			l->events[l->n_events++] = o->events[c];
	} else {
		memcpy(l->events, l->view->events, l->view->n_events * sizeof(l->events[0]));
		l->n_events = l->view->n_events;
	}
}

static void attribute_samples(struct listing *l)
{
	const struct proc *p = l->ref.proc;
	uint64_t lo, hi;

	if (!image_addr_to_offset(l->img, p->start, &lo) ||
	    !image_addr_to_offset(l->img, p->end - 1, &hi))
		return;
	for (size_t c = 0; c < l->n_events; c++) {
		enum dcpi_event ev = l->events[c];
		const struct profile *prof = epoch_view_profile(l->view, l->ref.image, ev);

		size_t i = 0;  /* the instructions and the records both go up */

		for (size_t k = profile_lower_bound(prof, lo); k < prof->n && prof->v[k].offset <= hi;
		     k++) {
			uint64_t addr = p->start + (prof->v[k].offset - lo);

			while (i < l->n_insns && l->cfg.insns[i].addr < addr)
				i++;
			l->totals[ev] += prof->v[k].count;
			if (i == l->n_insns || l->cfg.insns[i].addr != addr)
				l->stray[ev] += prof->v[k].count;
			else
				l->insns[i].samples[ev] += prof->v[k].count;
		}
	}
}

static const struct src_inline *innermost(const struct listing *l, uint64_t addr)
{
	const struct src_inline *best = NULL;

	for (size_t i = 0; i < l->n_inlines; i++)
		if (addr >= l->inlines[i].lo && addr < l->inlines[i].hi &&
		    (!best || l->inlines[i].depth > best->depth))
			best = &l->inlines[i];
	return best;
}

static void attach_source(struct listing *l, const struct listing_opts *o)
{
	struct dwarf_info *dw = image_dwarf(l->img, &l->src_why);
	const struct src_line *prev = NULL;
	size_t r = 0;

	if (!dw) {
		if (!l->src_why)
			l->src_why = "no DWARF line information (compiled without -g, or no debug file)";
		return;
	}
	if (dwarf_info_lines(dw, l->ref.proc->start, l->ref.proc->end, &l->lines, &l->n_lines))
		l->src_why = "malformed DWARF line table";
	dwarf_info_inlines(dw, l->ref.proc->start, l->ref.proc->end, &l->inlines, &l->n_inlines);
	l->comp_dir = dwarf_info_comp_dir(dw, l->ref.proc->start);
	if (!l->n_lines && !l->src_why)
		l->src_why = "no line information for this procedure";
	for (size_t i = 0; i < l->n_insns; i++) {
		struct listing_insn *li = &l->insns[i];
		uint64_t a = li->insn->addr;

		while (r + 1 < l->n_lines && l->lines[r + 1].addr <= a)
			r++;
		li->line = r < l->n_lines && l->lines[r].addr <= a && !l->lines[r].end_seq
				   ? &l->lines[r] : NULL;
		li->inl = innermost(l, a);
		li->new_line = li->line && (!prev || prev->line != li->line->line ||
					    strcmp(prev->file, li->line->file));
		if (li->line)
			prev = li->line;
		if (li->line && o->src)
			li->src_text = srcfiles_line(o->src, li->line->file, l->comp_dir,
						     li->line->line);
	}
}

static int build(struct listing *l, struct epoch_view *v, const struct proc_ref *ref,
		 const struct listing_opts *o, struct cfg *cfg)
{
	static const struct listing_opts defaults = LISTING_OPTS_INIT;
	const char *why;

	if (!o)
		o = &defaults;
	memset(l, 0, sizeof(*l));
	if (cfg) {
		l->cfg = *cfg;  /* taken over, whatever happens */
		memset(cfg, 0, sizeof(*cfg));
	}
	l->view = v;
	l->ref = *ref;
	l->img = epoch_view_image(v, ref->image);
	set_columns(l, o);
	if (!image_has_code(l->img, &why)) {
		char *name = display_safe(ref->proc->name), *path = display_safe(l->img->rec.path);

		errorf("cannot list '%s' in '%s': %s", name, path, why);
		free(name);
		free(path);
		return -1;
	}
	if (!cfg) {
		if (image_cfg(l->img, ref->proc, &l->cfg))
			return -1;
		cfg_classify(&l->cfg);
	}
	l->n_insns = l->cfg.n_insns;
	l->insns = xcalloc(l->n_insns ? l->n_insns : 1, sizeof(*l->insns));
	for (size_t i = 0; i < l->n_insns; i++) {
		l->insns[i].insn = &l->cfg.insns[i];
		l->insns[i].block = -1;
	}
	/* each block's instructions: what cfg_block_at() says of each, block by block */
	for (size_t b = 0; b < l->cfg.exit; b++) {
		const struct cfg_block *blk = &l->cfg.blocks[b];

		for (uint32_t i = blk->first; i < blk->first + blk->n_insns && i < l->n_insns; i++)
			l->insns[i].block = (long)b;
	}
	attribute_samples(l);
	if (o->source)
		attach_source(l, o);
	return 0;
}

int listing_build(struct listing *l, struct epoch_view *v, const struct proc_ref *ref,
		  const struct listing_opts *o)
{
	return build(l, v, ref, o, NULL);
}

int listing_build_cfg(struct listing *l, struct epoch_view *v, const struct proc_ref *ref,
		      const struct listing_opts *o, struct cfg *cfg)
{
	return build(l, v, ref, o, cfg);
}

void listing_release(struct listing *l)
{
	cfg_release(&l->cfg);
	free(l->insns);
	free(l->lines);
	free(l->inlines);
	memset(l, 0, sizeof(*l));
}

size_t listing_operands(struct listing *l)
{
	struct decoder *dec = NULL;
	size_t n = 0;

	if (!l->img || !image_has_code(l->img, NULL))
		return 0;
	for (size_t i = 0; i < l->cfg.n_insns; i++) {
		struct insn *in = &l->cfg.insns[i], tmp;
		uint8_t code[16];

		if (in->opds_known)
			continue;
		if (!dec && !(dec = image_decoder(l->img)))
			break;
		if (in->len > sizeof(code) || image_read(l->img, in->addr, code, in->len))
			continue;
		decode_one(dec, code, in->len, in->addr, &tmp);
		in->opds_known = tmp.opds_known;
		in->n_opds = tmp.n_opds;
		memcpy(in->opd, tmp.opd, sizeof(in->opd));
		n++;
	}
	return n;
}

long listing_insn_holding(const struct listing *l, uint64_t addr)
{
	long i = cfg_insn_at(&l->cfg, addr);

	for (size_t k = 0; i < 0 && k < l->n_insns; k++)
		if (addr >= l->insns[k].insn->addr && addr < l->insns[k].insn->addr + l->insns[k].insn->len)
			i = (long)k;
	return i;
}

/* ---- text --------------------------------------------------------------------- */

static void block_line(const struct listing *l, long b, struct draw *d)
{
	const struct cfg *cfg = &l->cfg;
	const struct cfg_block *blk = &cfg->blocks[b];

	draw_printf(d, STYLE_BLOCK, "  ; block %ld, class %d", b, blk->cls);
	if (blk->flags & CFG_BLOCK_UNREACHABLE)
		draw_text(d, STYLE_WARNING, ", unreachable");
	if (blk->flags & CFG_BLOCK_NO_EXIT)
		draw_text(d, STYLE_WARNING, ", never exits");
	draw_text(d, STYLE_BLOCK, "; ");
	listing_draw_preds(l, d, (size_t)b, STYLE_BLOCK);
	draw_eol(d);
}

void listing_draw_preds(const struct listing *l, struct draw *d, size_t b, enum style st)
{
	const struct cfg *cfg = &l->cfg;
	const struct cfg_block *blk = &cfg->blocks[b];

	draw_text(d, st, "from ");
	if (b == cfg->entry)
		draw_text(d, st, "entry");
	else if (!blk->n_pred)
		draw_text(d, st, "nowhere");
	for (uint32_t k = 0; k < blk->n_pred; k++) {
		const struct cfg_edge *e = &cfg->edges[cfg->pred[blk->pred + k]];

		if (k || b == cfg->entry)
			draw_text(d, st, ", ");
		if (e->from == cfg->exit)
			draw_printf(d, st, "outside (%s)", cfg_edge_kind_name(e->kind));
		else if (e->kind == CFG_FALLTHROUGH)
			draw_printf(d, st, "%u", e->from);
		else
			draw_printf(d, st, "%u (%s)", e->from, cfg_edge_kind_name(e->kind));
	}
}

void listing_draw_insn(const struct insn *in, struct draw *d)
{
	static const enum style styles[] = {
		[INSN_PART_MNEMONIC] = STYLE_MNEMONIC, [INSN_PART_REGISTER] = STYLE_REGISTER,
		[INSN_PART_IMMEDIATE] = STYLE_IMMEDIATE, [INSN_PART_SIZE] = STYLE_DIM,
		[INSN_PART_TARGET] = STYLE_TARGET, [INSN_PART_OTHER] = STYLE_NORMAL,
	};
	struct insn_part p[INSN_PARTS_MAX];
	size_t n = insn_parts(in, p, INSN_PARTS_MAX);

	for (size_t k = 0; k < n; k++) {
		draw_textn(d, styles[p[k].kind], in->text + p[k].off, p[k].len);
		if (p[k].kind == INSN_PART_MNEMONIC && k + 1 < n && p[k].len < 7)
			draw_space(d, STYLE_NORMAL, (int)(7 - p[k].len));
	}
}

void listing_draw_title(const struct listing *l, struct draw *d)
{
	char *name = display_safe(l->ref.proc->name), *path = display_safe(l->img->rec.path);

	draw_printf(d, STYLE_SECTION, "Procedure %s in %s, epoch %" PRIu32, name, path,
		    l->view ? l->view->seq : 0);
	free(name);
	free(path);
}

void listing_draw_range(const struct listing *l, struct draw *d, size_t n_insns, size_t n_blocks)
{
	draw_printf(d, STYLE_NORMAL, "  0x%" PRIx64 "-0x%" PRIx64 ", %zu instructions, %zu basic blocks",
		    l->ref.proc->start, l->ref.proc->end, n_insns, n_blocks);
	if (l->cfg.flags & CFG_MISSING_EDGES)
		draw_text(d, STYLE_WARNING, " (missing edges)");
}

void listing_draw_forced(const struct listing *l, struct draw *d)
{
	char *why = display_safe(l->img->why ? l->img->why : "?");

	draw_printf(d, STYLE_WARNING, "  warning: %s", why);
	free(why);
}

static void header(const struct listing *l, struct draw *d, size_t nblocks)
{
	const struct epoch_view *v = l->view;
	char label[40];

	listing_draw_title(l, d);
	draw_eol(d);
	listing_draw_range(l, d, l->n_insns, nblocks);
	draw_eol(d);
	for (size_t c = 0; c < l->n_events; c++) {
		enum dcpi_event ev = l->events[c];

		draw_printf(d, STYLE_NORMAL, "  %s: %" PRIu64 " samples",
			    epoch_view_event_label(v, ev, label, sizeof(label)), l->totals[ev]);
		if (v->totals[ev])
			draw_printf(d, STYLE_NORMAL, " (%.2f%% of the epoch)",
				    100.0 * (double)l->totals[ev] / (double)v->totals[ev]);
		if (l->stray[ev])
			draw_printf(d, STYLE_WARNING, ", %" PRIu64 " not at an instruction start",
				    l->stray[ev]);
		draw_eol(d);
	}
	if (l->img->forced && l->img->why) {
		listing_draw_forced(l, d);
		draw_eol(d);
	}
}

char *listing_source_text(const char *text)
{
	struct strbuf sb = STRBUF_INIT;
	size_t col = 0;
	char *safe;

	for (const char *p = text; *p; p++) {
		if (*p == '\t') {
			do
				strbuf_addch(&sb, ' ');
			while (++col % 8);
		} else {
			strbuf_addch(&sb, *p);
			col++;
		}
	}
	strbuf_rtrim(&sb);
	safe = display_safe(sb.buf);
	strbuf_release(&sb);
	return safe;
}

void listing_draw_source(const struct listing_insn *li, struct draw *d)
{
	const char *file = li->line->file, *slash = strrchr(file, '/');
	char *f = display_safe(slash ? slash + 1 : file);

	draw_printf(d, STYLE_SOURCE, "%s:%" PRIu32, f, li->line->line);
	if (li->src_text) {
		char *t = listing_source_text(li->src_text);

		draw_printf(d, STYLE_SOURCE, *t ? ":  %s" : ":", t);
		free(t);
	}
	free(f);
}

static void source_line(const struct listing_insn *li, struct draw *d)
{
	draw_space(d, STYLE_NORMAL, 8);
	listing_draw_source(li, d);
	if (li->inl) {
		char *n = display_safe(li->inl->name);

		draw_printf(d, STYLE_LABEL, "   [inlined %s]", n);
		free(n);
	}
	draw_eol(d);
}

/* Column widths: the address, and each event's (its label or its total). */
static int listing_widths(const struct listing *l, size_t *w)
{
	int aw = 4;
	char label[40];

	for (size_t i = 0; i < l->n_insns; i++) {
		int n = snprintf(NULL, 0, "%" PRIx64, l->insns[i].insn->addr);

		if (n > aw)
			aw = n;
	}
	for (size_t c = 0; c < l->n_events; c++) {
		enum dcpi_event ev = l->events[c];

		w[c] = strlen(epoch_view_event_label(l->view, ev, label, sizeof(label)));
		if ((size_t)draw_digits(l->totals[ev]) > w[c])
			w[c] = (size_t)draw_digits(l->totals[ev]);
	}
	return aw;
}

static void insn_line(const struct listing *l, const struct listing_insn *li, int aw,
		      const size_t *w, struct draw *d, const struct valprof_insn *vals)
{
	draw_printf(d, STYLE_ADDRESS, "  %*" PRIx64, aw, li->insn->addr);
	for (size_t c = 0; c < l->n_events; c++) {
		uint64_t n = li->samples[l->events[c]], total = l->totals[l->events[c]];

		draw_printf(d, draw_share_style(total ? (double)n / (double)total : 0, n),
			    "  %*" PRIu64, (int)w[c], n);
	}
	draw_printf(d, STYLE_NORMAL, "  %s", li->insn->text);
	if (vals) {
		draw_text(d, STYLE_NORMAL, "  ");
		valprof_draw(vals, d);
	}
	draw_eol(d);
}

void listing_draw(const struct listing *l, struct draw *d, unsigned flags)
{
	size_t w[EVENT__COUNT], nblocks = l->cfg.n_blocks ? l->cfg.n_blocks - 1 : 0;
	char label[40];
	long cur_block = -1;
	int aw;

	header(l, d, nblocks);
	if ((flags & LISTING_SOURCE) && l->src_why) {
		draw_printf(d, STYLE_DIM, "  (no source: %s)", l->src_why);
		draw_eol(d);
	}
	draw_eol(d);
	aw = listing_widths(l, w);
	draw_printf(d, STYLE_HEADER, "  %*s", aw, "Addr");
	for (size_t c = 0; c < l->n_events; c++)
		draw_printf(d, STYLE_HEADER, "  %*s", (int)w[c],
			    epoch_view_event_label(l->view, l->events[c], label, sizeof(label)));
	draw_text(d, STYLE_HEADER, "  Instruction");
	draw_eol(d);
	for (size_t i = 0; i < l->n_insns; i++) {
		const struct listing_insn *li = &l->insns[i];

		if ((flags & LISTING_BLOCKS) && li->block != cur_block && li->block >= 0) {
			cur_block = li->block;
			block_line(l, cur_block, d);
		}
		if ((flags & LISTING_SOURCE) && li->new_line)
			source_line(li, d);
		insn_line(l, li, aw, w, d, l->values && i < l->values->n && l->values->insns[i].n ?
				  &l->values->insns[i] : NULL);
	}
}

/* ---- JSON ---------------------------------------------------------------------- */

void listing_samples_json(const struct listing *l, struct json_writer *w, const uint64_t *s)
{
	json_object_begin(w);
	for (size_t c = 0; c < l->n_events; c++) {
		json_key(w, event_name(l->events[c]));
		json_u64(w, s[l->events[c]]);
	}
	json_object_end(w);
}

static void json_insns(struct json_writer *w, const struct listing *l)
{
	json_key(w, "instructions");
	json_array_begin(w);
	for (size_t i = 0; i < l->n_insns; i++) {
		const struct listing_insn *li = &l->insns[i];

		json_object_begin(w);
		json_key(w, "address"), json_hex(w, li->insn->addr);
		json_key(w, "length"), json_u64(w, li->insn->len);
		json_key(w, "text"), json_string(w, li->insn->text);
		json_key(w, "kind"), json_string(w, insn_kind_name(li->insn->kind));
		json_key(w, "block"), json_i64(w, li->block);
		json_key(w, "samples");
		listing_samples_json(l, w, li->samples);
		if (li->line) {
			json_key(w, "file"), json_string(w, li->line->file);
			json_key(w, "line"), json_u64(w, li->line->line);
		}
		if (li->inl) {
			json_key(w, "inlined"), json_string(w, li->inl->name);
		}
		if (l->values) {
			json_key(w, "values");
			valprof_json(valprof_insn_at(l->values, i), w);
		}
		json_object_end(w);
	}
	json_array_end(w);
}

static void json_blocks(struct json_writer *w, const struct listing *l)
{
	const struct cfg *cfg = &l->cfg;

	json_key(w, "blocks");
	json_array_begin(w);
	for (size_t b = 0; b < cfg->n_blocks; b++) {
		const struct cfg_block *blk = &cfg->blocks[b];

		json_object_begin(w);
		json_key(w, "index"), json_u64(w, b);
		json_key(w, "start"), json_hex(w, blk->start);
		json_key(w, "end"), json_hex(w, blk->end);
		json_key(w, "class"), json_i64(w, blk->cls);
		json_key(w, "exit"), json_bool(w, b == cfg->exit);
		json_key(w, "reachable"), json_bool(w, !(blk->flags & CFG_BLOCK_UNREACHABLE));
		json_object_end(w);
	}
	json_array_end(w);
	json_key(w, "edges");
	json_array_begin(w);
	for (size_t e = 0; e < cfg->n_edges; e++) {
		json_object_begin(w);
		json_key(w, "from"), json_u64(w, cfg->edges[e].from);
		json_key(w, "to"), json_u64(w, cfg->edges[e].to);
		json_key(w, "kind"), json_string(w, cfg_edge_kind_name(cfg->edges[e].kind));
		json_key(w, "class"), json_i64(w, cfg->edges[e].cls);
		json_object_end(w);
	}
	json_array_end(w);
}

void listing_where_json(const struct listing *l, struct json_writer *w)
{
	json_key(w, "image"), json_string(w, l->img->rec.path);
	json_key(w, "start"), json_hex(w, l->ref.proc->start);
	json_key(w, "end"), json_hex(w, l->ref.proc->end);
	json_key(w, "missing_edges"), json_bool(w, (l->cfg.flags & CFG_MISSING_EDGES) != 0);
}

void listing_json(const struct listing *l, struct json_writer *w, unsigned flags)
{
	json_object_begin(w);
	json_key(w, "epoch"), json_u64(w, l->view->seq);
	json_key(w, "procedure"), json_string(w, l->ref.proc->name);
	json_key(w, "symbol"), json_string(w, l->ref.proc->sym);
	listing_where_json(l, w);
	json_key(w, "samples");
	listing_samples_json(l, w, l->totals);
	json_key(w, "stray_samples");
	listing_samples_json(l, w, l->stray);
	if (flags & LISTING_SOURCE)
		json_key(w, "source_unavailable"), json_string(w, l->src_why);
	json_insns(w, l);
	json_blocks(w, l);
	db_damage_json(&l->view->db, 1, w);
	json_object_end(w);
}
