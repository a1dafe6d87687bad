/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/elfsyms.c - symbol tables, PLT stubs and FDE ranges into a proctab.
 */
#include "config.h"

#include "disasm/elfsyms.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/u64map.h"
#include "core/xalloc.h"
#include "disasm/decode.h"
#include "disasm/ehframe.h"
#include "disasm/elffile.h"
#include "disasm/proctab.h"

#ifndef STT_GNU_IFUNC
#define STT_GNU_IFUNC 10
#endif
#ifndef R_AARCH64_JUMP_SLOT
#define R_AARCH64_JUMP_SLOT 1026
#define R_AARCH64_GLOB_DAT 1025
#endif

struct symctx {
	struct proctab *tab;
	const struct elffile *code;   /* the file whose sections say what is code */
	unsigned extra;               /* flags for every symbol (PROC_DYNSYM) */
};

static void add_symbol(void *vctx, const struct elf_sym *s)
{
	struct symctx *ctx = vctx;
	unsigned flags = ctx->extra;

	if (!s->name[0] || s->shndx == SHN_UNDEF || s->shndx == SHN_ABS || !s->value)
		return;
	if (s->name[0] == '$')            /* aarch64/arm mapping symbols */
		return;
	if (s->type == STT_NOTYPE) {
		if (!s->size || s->bind == STB_LOCAL)
			return;
	} else if (s->type != STT_FUNC && s->type != STT_GNU_IFUNC) {
		return;
	}
	if (!elffile_is_code(ctx->code, s->value))
		return;
	if (s->bind == STB_GLOBAL)
		flags |= PROC_GLOBAL;
	else if (s->bind == STB_WEAK)
		flags |= PROC_WEAK;
	proctab_add(ctx->tab, s->value, s->size, s->name, flags);
}

static int load_symtab(struct proctab *tab, const struct elffile *ef, const struct elffile *code,
		       unsigned type, unsigned extra)
{
	struct symctx ctx = { tab, code, extra };
	int r = 0;

	for (size_t i = 0; i < ef->n_secs; i++)
		if (ef->secs[i].type == type)
			r |= elffile_symbols(ef, &ef->secs[i], add_symbol, &ctx);
	return r;
}

/* ---- PLT ----------------------------------------------------------------- */

struct pltctx {
	const struct elffile *ef;
	size_t symsec;
	struct u64map slots;          /* GOT slot address -> dynsym index */
	size_t *order;                /* .rela.plt symbol indices, in order */
	size_t n_order, alloc_order;
	bool in_rela_plt;
};

static void add_reloc(void *vctx, const struct elf_rel *r)
{
	struct pltctx *c = vctx;
	bool x86 = c->ef->arch == ARCH_X86_64;
	bool slot = x86 ? r->type == R_X86_64_JUMP_SLOT || r->type == R_X86_64_GLOB_DAT
			: r->type == R_AARCH64_JUMP_SLOT || r->type == R_AARCH64_GLOB_DAT;

	if (!slot || !r->sym)
		return;
	*u64map_slot(&c->slots, r->offset) = r->sym;
	if (c->in_rela_plt) {
		ALLOC_GROW(c->order, c->n_order + 1, c->alloc_order);
		c->order[c->n_order++] = r->sym;
	}
}

static void add_plt_name(struct proctab *tab, const struct pltctx *c, uint64_t start,
			 uint64_t size, size_t sym)
{
	const char *name = elffile_symbol_name(c->ef, c->symsec, sym);
	char *full;

	if (!name || !name[0])
		return;
	full = xasprintf("%s@plt", name);
	proctab_add(tab, start, size, full, PROC_PLT);
	free(full);
}

/* x86-64: each entry either jumps through its GOT slot or pushes its relocation index. */
static void x86_plt_section(struct proctab *tab, struct pltctx *c, struct decoder *dec,
			    const struct elf_section *sec)
{
	size_t len, ent = sec->entsize == 8 || sec->entsize == 16 ? sec->entsize : 16;
	const uint8_t *p = elffile_section_bytes(c->ef, sec, &len);
	bool is_plt = !strcmp(sec->name, ".plt");

	if (!p)
		return;
	for (size_t e = is_plt ? ent : 0; e + ent <= len && e < (1u << 24); e += ent) {
		uint64_t slot_sym = 0;
		bool named = false;

		for (size_t off = 0; off < ent && !named;) {
			struct insn in;

			off += decode_one(dec, p + e + off, ent - off, sec->addr + e + off, &in);
			if ((in.kind == INSN_IJUMP) && (in.flags & INSN_F_RIP_REL) &&
			    u64map_get(&c->slots, in.mem_addr, &slot_sym)) {
				add_plt_name(tab, c, sec->addr + e, ent, (size_t)slot_sym);
				named = true;
			} else if (is_plt && in.cs_id && !strncmp(in.text, "push ", 5) &&
				   (in.opsig & 3) == OPK_IMM) {
				uint64_t idx = strtoull(in.text + 5, NULL, 0);

				if (idx < c->n_order) {
					add_plt_name(tab, c, sec->addr + e, ent, c->order[idx]);
					named = true;
				}
			}
		}
	}
}

/* aarch64: a 32-byte header, then 16-byte entries in .rela.plt order. */
static void a64_plt_section(struct proctab *tab, struct pltctx *c, const struct elf_section *sec)
{
	if (strcmp(sec->name, ".plt"))
		return;
	for (size_t i = 0; i < c->n_order && 32 + 16 * (i + 1) <= sec->size; i++)
		add_plt_name(tab, c, sec->addr + 32 + 16 * i, 16, c->order[i]);
}

static int load_plt(struct proctab *tab, const struct elffile *ef)
{
	struct pltctx c;
	struct decoder *dec = NULL;
	int r = 0;

	memset(&c, 0, sizeof(c));
	c.ef = ef;
	u64map_init(&c.slots);
	for (size_t i = 0; i < ef->n_secs; i++) {
		const struct elf_section *s = &ef->secs[i];

		if ((s->type != SHT_RELA && s->type != SHT_REL) || !(s->flags & SHF_ALLOC))
			continue;
		if (c.symsec && s->link != c.symsec)
			continue;
		c.symsec = s->link;
		c.in_rela_plt = !strcmp(s->name, ".rela.plt") || !strcmp(s->name, ".rel.plt");
		r |= elffile_relocs(ef, s, add_reloc, &c);
	}
	if (c.slots.size && ef->arch_known) {
		if (ef->arch == ARCH_X86_64)
			dec = decoder_new(ARCH_X86_64);
		for (size_t i = 0; i < ef->n_secs; i++) {
			const struct elf_section *s = &ef->secs[i];

			if (strncmp(s->name, ".plt", 4) || !(s->flags & SHF_EXECINSTR))
				continue;
			if (dec)
				x86_plt_section(tab, &c, dec, s);
			else if (ef->arch == ARCH_AARCH64)
				a64_plt_section(tab, &c, s);
		}
	}
	decoder_free(dec);
	u64map_release(&c.slots);
	free(c.order);
	return r;
}

/* ---- FDE ranges ---------------------------------------------------------- */

static int load_fdes(struct proctab *tab, const struct elffile *ef, const char *base)
{
	const struct elf_section *sec = elffile_section(ef, ".eh_frame");
	struct fde_range *v = NULL;
	size_t n = 0, alloc = 0, len;
	const uint8_t *p;
	int r;

	if (!sec || !(p = elffile_section_bytes(ef, sec, &len)))
		return 0;
	r = ehframe_parse(p, len, sec->addr, ef->is64, ef->little, &v, &n, &alloc);
	for (size_t i = 0; i < n; i++) {
		char name[300];

		if (!elffile_is_code(ef, v[i].start))
			continue;
		snprintf(name, sizeof(name), "%s+0x%llx", base, (unsigned long long)v[i].start);
		proctab_add(tab, v[i].start, v[i].end - v[i].start, name, PROC_FDE);
	}
	free(v);
	return r;
}

/* ---- together ------------------------------------------------------------ */

static uint64_t section_end(void *ctx, uint64_t addr)
{
	const struct elf_section *s = elffile_section_at(ctx, addr);

	return s ? s->addr + s->size : addr + 1;
}

int elfsyms_load(struct proctab *tab, const struct elffile *bin, const struct elffile *dbg,
		 const char *base)
{
	int r = bin->sections_bad ? -1 : 0;

	if (dbg && elffile_section(dbg, ".symtab"))
		r |= load_symtab(tab, dbg, bin, SHT_SYMTAB, 0);
	else
		r |= load_symtab(tab, bin, bin, SHT_SYMTAB, 0);
	r |= load_symtab(tab, bin, bin, SHT_DYNSYM, PROC_DYNSYM);
	r |= load_plt(tab, bin);
	r |= load_fdes(tab, bin, base);
	proctab_finish(tab, section_end, (void *)bin);
	return r ? -1 : 0;
}
