/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * unwind/cfi.c - .eh_frame CIE/FDE walking and the CFA program interpreter.
 */
#include "config.h"

#include "unwind/cfi.h"

#include <string.h>

enum {
	PE_ABSPTR = 0x00, PE_ULEB128 = 0x01, PE_UDATA2 = 0x02, PE_UDATA4 = 0x03,
	PE_UDATA8 = 0x04, PE_SLEB128 = 0x09, PE_SDATA2 = 0x0a, PE_SDATA4 = 0x0b,
	PE_SDATA8 = 0x0c, PE_PCREL = 0x10, PE_ALIGNED = 0x50, PE_INDIRECT = 0x80,
	PE_OMIT = 0xff,
};

/* ---- a bounded reader ----------------------------------------------------- */

struct rd {
	const uint8_t *buf;
	size_t pos, end;        /* end: limit of the current record */
	bool little, is64, bad;
};

static uint64_t rd_uint(struct rd *r, unsigned size)
{
	uint64_t v = 0;

	if (r->bad || r->pos > r->end || r->end - r->pos < size) {
		r->bad = true;
		return 0;
	}
	for (unsigned i = 0; i < size; i++) {
		unsigned shift = r->little ? 8 * i : 8 * (size - 1 - i);

		v |= (uint64_t)r->buf[r->pos + i] << shift;
	}
	r->pos += size;
	return v;
}

static uint64_t rd_leb(struct rd *r, bool is_signed)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;

	while (!r->bad) {
		if (r->pos >= r->end) {
			r->bad = true;
			return 0;
		}
		b = r->buf[r->pos++];
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
		if (shift > 70)
			r->bad = true;
	}
	if (is_signed && shift < 64 && (b & 0x40))
		v |= ~0ull << shift;
	return v;
}

static uint64_t rd_uleb(struct rd *r)
{
	return rd_leb(r, false);
}

static int64_t rd_sleb(struct rd *r)
{
	return (int64_t)rd_leb(r, true);
}

static uint64_t sext(uint64_t v, unsigned bytes)
{
	unsigned bits = 8 * bytes;

	return bits < 64 && (v >> (bits - 1)) & 1 ? v | (~0ull << bits) : v;
}

/*
 * Reads a pointer with encoding enc at the current position.  *ok is
 * cleared for encodings that cannot be resolved from the section alone.
 */
static uint64_t rd_encoded(struct rd *r, unsigned enc, uint64_t sec_addr, bool *ok)
{
	uint64_t base = 0, v;
	unsigned psize = r->is64 ? 8 : 4;

	if (enc == PE_OMIT)
		return 0;
	switch (enc & 0x70) {
	case 0:
		break;
	case PE_PCREL:
		base = sec_addr + r->pos;
		break;
	case PE_ALIGNED:
		r->pos = (r->pos + psize - 1) & ~(size_t)(psize - 1);
		break;
	default:
		*ok = false;  /* textrel, datarel, funcrel */
	}
	switch (enc & 0x0f) {
	case PE_ABSPTR: v = rd_uint(r, psize); break;
	case PE_ULEB128: v = rd_uleb(r); break;
	case PE_UDATA2: v = rd_uint(r, 2); break;
	case PE_UDATA4: v = rd_uint(r, 4); break;
	case PE_UDATA8: v = rd_uint(r, 8); break;
	case PE_SLEB128: v = (uint64_t)rd_sleb(r); break;
	case PE_SDATA2: v = sext(rd_uint(r, 2), 2); break;
	case PE_SDATA4: v = sext(rd_uint(r, 4), 4); break;
	case PE_SDATA8: v = rd_uint(r, 8); break;
	default:
		r->bad = true;
		return 0;
	}
	if (enc & PE_INDIRECT)
		*ok = false;
	if (!r->is64 && (enc & 0x0f) == PE_ABSPTR)
		base &= 0xffffffffu;
	v += base;
	return r->is64 ? v : v & 0xffffffffu;
}

/* ---- CIEs and FDEs -------------------------------------------------------- */

struct cie {
	size_t off;             /* offset of the CIE record, SIZE_MAX if none */
	unsigned fde_enc;
	bool has_aug_data;      /* 'z': FDEs carry an augmentation length */
	bool ok;
	const uint8_t *insns;
	size_t n_insns;
	uint64_t code_align;
	int64_t data_align;
	unsigned ra_reg;
	bool signal_frame;
};

/* Reads a record's length; sets r->end to its end.  Returns its id size. */
static unsigned record_start(struct rd *r, size_t len, uint64_t *rlen)
{
	unsigned idsize = 4;

	*rlen = rd_uint(r, 4);
	if (*rlen == 0xffffffffu) {
		*rlen = rd_uint(r, 8);
		idsize = 8;
	}
	if (r->bad || *rlen > len - r->pos) {
		r->bad = true;
		return 0;
	}
	r->end = r->pos + (size_t)*rlen;
	return idsize;
}

static int cie_augmentation(struct rd *r, const char *aug, uint64_t sec_addr, struct cie *c)
{
	size_t auglen, aug_end;
	bool ok = true;

	c->has_aug_data = true;
	auglen = rd_uleb(r);
	if (r->bad || auglen > r->end - r->pos)
		return -1;
	aug_end = r->pos + auglen;
	for (const char *a = aug + 1; *a && !r->bad && r->pos <= aug_end; a++) {
		if (*a == 'R') {
			c->fde_enc = (unsigned)rd_uint(r, 1);
		} else if (*a == 'P') {
			unsigned enc = (unsigned)rd_uint(r, 1);

			rd_encoded(r, enc, sec_addr, &ok);
		} else if (*a == 'L') {
			rd_uint(r, 1);
		} else if (*a == 'S') {
			c->signal_frame = true;
		} else if (*a != 'B' && *a != 'G') {
			break;  /* unknown: the length lets us skip the rest */
		}
	}
	if (r->bad || aug_end > r->end)
		return -1;
	r->pos = aug_end;
	return 0;
}

/* What a CIE's id field holds: 0 in .eh_frame, all ones in .debug_frame. */
static uint64_t cie_id(const struct cfi_section *s, unsigned idsize)
{
	return !s->debug_frame ? 0 : idsize == 8 ? UINT64_MAX : 0xffffffffu;
}

static int parse_cie(const struct cfi_section *s, size_t off, struct cie *c)
{
	struct rd r = { s->buf, off, s->len, s->little, s->is64, false };
	const char *aug;
	size_t auglen;
	unsigned version, idsize;
	uint64_t rlen;

	memset(c, 0, sizeof(*c));
	c->off = off;
	c->fde_enc = PE_ABSPTR;
	idsize = record_start(&r, s->len, &rlen);
	if (r.bad || rd_uint(&r, idsize) != cie_id(s, idsize))
		return -1;
	version = (unsigned)rd_uint(&r, 1);
	if (r.bad || (version != 1 && version != 3 && version != 4))
		return -1;
	aug = (const char *)s->buf + r.pos;
	auglen = strnlen(aug, r.end - r.pos);
	if (auglen == r.end - r.pos)
		return -1;
	r.pos += auglen + 1;
	if (strstr(aug, "eh"))
		rd_uint(&r, s->is64 ? 8 : 4);
	if (version == 4)
		rd_uint(&r, 2);  /* address size, segment size */
	c->code_align = rd_uleb(&r);
	c->data_align = rd_sleb(&r);
	c->ra_reg = version == 1 ? (unsigned)rd_uint(&r, 1) : (unsigned)rd_uleb(&r);
	if (r.bad)
		return -1;
	if (aug[0] == 'z' && cie_augmentation(&r, aug, s->addr, c))
		return -1;
	c->insns = s->buf + r.pos;
	c->n_insns = r.end - r.pos;
	c->ok = true;
	return 0;
}

int cfi_walk(const struct cfi_section *s, cfi_fde_fn fn, void *ctx)
{
	struct cie cie = { .off = SIZE_MAX };
	size_t off = 0;

	while (off < s->len) {
		struct rd r = { s->buf, off, s->len, s->little, s->is64, false };
		struct cfi_fde f;
		size_t id_pos, cie_off;
		unsigned idsize;
		uint64_t rlen, id;
		bool ok = true;

		idsize = record_start(&r, s->len, &rlen);
		if (r.bad)
			return -1;
		if (rlen == 0)
			break;  /* terminator */
		id_pos = r.pos;
		id = rd_uint(&r, idsize);
		if (r.bad)
			return -1;
		off = r.end;
		if (id == cie_id(s, idsize))
			continue;  /* a CIE */
		/*
		 * An FDE: id is the distance back to its CIE (.eh_frame), or
		 * the CIE's offset in the section (.debug_frame).
		 */
		if (s->debug_frame ? id >= s->len : id > id_pos)
			return -1;
		cie_off = s->debug_frame ? (size_t)id : id_pos - (size_t)id;
		if (cie.off != cie_off && parse_cie(s, cie_off, &cie))
			return -1;
		if (!cie.ok)
			continue;
		memset(&f, 0, sizeof(f));
		f.start = rd_encoded(&r, cie.fde_enc, s->addr, &ok);
		f.end = f.start + rd_encoded(&r, cie.fde_enc & 0x0f, s->addr, &ok);
		if (cie.has_aug_data) {
			uint64_t n = rd_uleb(&r);

			if (n > r.end - r.pos)
				r.bad = true;
			else
				r.pos += (size_t)n;
		}
		if (r.bad)
			return -1;
		if (!ok || f.end <= f.start)
			continue;
		f.insns = s->buf + r.pos;
		f.n_insns = r.end - r.pos;
		f.cie_insns = cie.insns;
		f.n_cie_insns = cie.n_insns;
		f.code_align = cie.code_align;
		f.data_align = cie.data_align;
		f.ra_reg = cie.ra_reg;
		f.signal_frame = cie.signal_frame;
		if (fn(ctx, &f))
			break;
	}
	return 0;
}

/* ---- the CFA program -------------------------------------------------------- */

enum { REG_RBP = 6, REG_RSP = 7, REG_RA = 16 };

/* The rule of one register. */
enum rkind { R_SAME, R_UNDEF, R_OFFSET, R_DEREF_RBP, R_OTHER };

struct rrule {
	uint8_t kind;
	int64_t off;
};

struct cstate {
	uint8_t cfa;            /* enum cfi_cfa */
	int64_t cfa_off;
	struct rrule rbp, ra;
};

#define STATE_STACK 16

struct interp {
	const struct cfi_fde *f;
	struct cstate st, init;         /* current; after the CIE's program */
	struct cstate stack[STATE_STACK];
	unsigned depth;
	uint64_t loc;
	bool emitted;
	struct cfi_row last;
	cfi_row_fn fn;
	void *ctx;
	bool stopped;                   /* an unsupported instruction: no more rows */
};

static struct rrule *reg_rule(struct cstate *s, uint64_t reg)
{
	return reg == REG_RBP ? &s->rbp : reg == REG_RA ? &s->ra : NULL;
}

static void to_row(const struct interp *in, uint64_t start, struct cfi_row *row)
{
	const struct cstate *s = &in->st;

	memset(row, 0, sizeof(*row));
	row->start = start;
	row->cfa = s->cfa;
	row->cfa_off = (int32_t)s->cfa_off;
	if (s->cfa_off != row->cfa_off)
		row->cfa = CFI_CFA_UNSUPPORTED;
	if (s->ra.kind == R_UNDEF)
		row->cfa = CFI_CFA_END;
	else if (s->ra.kind != R_OFFSET || s->ra.off != -8 || in->f->ra_reg != REG_RA ||
		 in->f->signal_frame)
		row->cfa = CFI_CFA_UNSUPPORTED;
	switch (s->rbp.kind) {
	case R_SAME:
	case R_UNDEF:
		row->rbp = CFI_RBP_SAME;
		break;
	case R_OFFSET:
	case R_DEREF_RBP:
		row->rbp = s->rbp.kind == R_OFFSET ? CFI_RBP_AT_CFA : CFI_RBP_DEREF_RBP;
		row->rbp_off = (int32_t)s->rbp.off;
		if (s->rbp.off != row->rbp_off)
			row->rbp = CFI_RBP_UNKNOWN;
		break;
	default:
		row->rbp = CFI_RBP_UNKNOWN;
	}
	/*
	 * A signal trampoline (glibc's __restore_rt): its rules are
	 * expressions over the ucontext the kernel put at rsp, which the
	 * unwinder reads by the kernel's layout instead.
	 */
	if (in->f->signal_frame) {
		row->cfa = CFI_CFA_SIGNAL;
		row->rbp = CFI_RBP_SAME;
	}
	if (row->cfa == CFI_CFA_END || row->cfa == CFI_CFA_UNSUPPORTED || row->cfa == CFI_CFA_SIGNAL)
		row->cfa_off = 0;
	if (row->rbp == CFI_RBP_SAME || row->rbp == CFI_RBP_UNKNOWN)
		row->rbp_off = 0;
}

static void emit(struct interp *in, uint64_t start, const struct cfi_row *row)
{
	if (in->emitted && row->cfa == in->last.cfa && row->rbp == in->last.rbp &&
	    row->cfa_off == in->last.cfa_off && row->rbp_off == in->last.rbp_off)
		return;
	in->fn(in->ctx, row);
	in->last = *row;
	in->last.start = start;
	in->emitted = true;
}

/* The current rule holds from loc on: pass it on if it changed. */
static void flush(struct interp *in)
{
	struct cfi_row row;

	if (in->loc >= in->f->end)
		return;
	to_row(in, in->loc, &row);
	emit(in, in->loc, &row);
}

/* Moves on by delta code units (ignored in a CIE's program: rows start at the FDE). */
static void advance(struct interp *in, uint64_t delta, bool in_cie)
{
	if (in_cie)
		return;
	flush(in);
	delta *= in->f->code_align;
	in->loc = in->loc + delta < in->loc ? in->f->end : in->loc + delta;
}

/* DW_CFA_def_cfa_expression: the two forms compilers emit on x86-64. */
static void cfa_expression(struct cstate *s, const uint8_t *e, size_t n)
{
	static const uint8_t plt[] = { 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a };
	static const uint8_t plt_tail[] = { 0x2a, 0x33, 0x24, 0x22 };
	struct rd r = { e, 0, n, true, true, false };

	s->cfa = CFI_CFA_UNSUPPORTED;
	s->cfa_off = 0;
	/* rsp + 8 + ((rip & 15) >= K) << 3: a PLT entry. */
	if (n == sizeof(plt) + 1 + sizeof(plt_tail) && !memcmp(e, plt, sizeof(plt)) &&
	    e[sizeof(plt)] >= 0x30 && e[sizeof(plt)] <= 0x4f &&
	    !memcmp(e + sizeof(plt) + 1, plt_tail, sizeof(plt_tail))) {
		s->cfa = CFI_CFA_PLT;
		s->cfa_off = e[sizeof(plt)] - 0x30;
		return;
	}
	/* DW_OP_breg7 N; DW_OP_deref; DW_OP_plus_uconst 8: the entry's rsp in a slot. */
	if (n >= 5 && e[0] == 0x77) {
		int64_t off;

		r.pos = 1;
		off = rd_sleb(&r);
		if (!r.bad && r.pos == n - 3 && e[n - 3] == 0x06 && e[n - 2] == 0x23 &&
		    e[n - 1] == 0x08) {
			s->cfa = CFI_CFA_DEREF_RSP;
			s->cfa_off = off;
		}
		return;
	}
	/* DW_OP_breg6 N; DW_OP_deref: a realigned stack. */
	if (n >= 3 && e[0] == 0x76) {
		int64_t off;

		r.pos = 1;
		off = rd_sleb(&r);
		if (!r.bad && r.pos == n - 1 && e[n - 1] == 0x06) {
			s->cfa = CFI_CFA_DEREF_RBP;
			s->cfa_off = off;
		}
	}
}

/* DW_CFA_expression for a register: only rbp saved at rbp + N is followed. */
static void reg_expression(struct cstate *s, uint64_t reg, const uint8_t *e, size_t n)
{
	struct rrule *rr = reg_rule(s, reg);
	struct rd r = { e, 1, n, true, true, false };
	int64_t off;

	if (!rr)
		return;
	rr->kind = R_OTHER;
	if (reg != REG_RBP || n < 2 || e[0] != 0x76)
		return;
	off = rd_sleb(&r);
	if (!r.bad && r.pos == n) {
		rr->kind = R_DEREF_RBP;
		rr->off = off;
	}
}

static void set_cfa_reg(struct cstate *s, uint64_t reg)
{
	s->cfa = reg == REG_RSP ? CFI_CFA_RSP : reg == REG_RBP ? CFI_CFA_RBP :
		 reg < 16 ? CFI_CFA_REG + (int)reg : CFI_CFA_UNSUPPORTED;
}

static void set_offset(struct cstate *s, uint64_t reg, int64_t off)
{
	struct rrule *rr = reg_rule(s, reg);

	if (rr) {
		rr->kind = R_OFFSET;
		rr->off = off;
	}
}

static void set_kind(struct cstate *s, uint64_t reg, enum rkind k)
{
	struct rrule *rr = reg_rule(s, reg);

	if (rr)
		rr->kind = (uint8_t)k;
}

static void restore(struct interp *in, uint64_t reg)
{
	struct rrule *rr = reg_rule(&in->st, reg);

	if (rr)
		*rr = *reg_rule(&in->init, reg);
}

/* a * b with wraparound (hostile programs): an absurd offset is refused later. */
static int64_t scale(uint64_t a, int64_t b)
{
	return (int64_t)(a * (uint64_t)b);
}

/* Reads a block (uleb length + bytes) into *e, *n. */
static void rd_block(struct rd *r, const uint8_t **e, size_t *n)
{
	uint64_t len = rd_uleb(r);

	if (r->bad || len > r->end - r->pos) {
		r->bad = true;
		return;
	}
	*e = r->buf + r->pos;
	*n = (size_t)len;
	r->pos += (size_t)len;
}

/* Runs one instruction.  Returns -1 on a malformed program. */
static int step(struct interp *in, struct rd *r, bool in_cie)
{
	struct cstate *s = &in->st;
	int64_t da = in->f->data_align;
	uint8_t op = (uint8_t)rd_uint(r, 1), lo = op & 0x3f;
	const uint8_t *e = NULL;
	uint64_t reg, v;
	size_t n = 0;

	if (r->bad)
		return -1;
	switch (op >> 6) {
	case 1:
		advance(in, lo, in_cie);
		return 0;
	case 2:
		set_offset(s, lo, scale(rd_uleb(r), da));
		return r->bad ? -1 : 0;
	case 3:
		if (!in_cie)
			restore(in, lo);
		return 0;
	}
	switch (op) {
	case 0x00: /* nop */
		break;
	case 0x02: advance(in, rd_uint(r, 1), in_cie); break;
	case 0x03: advance(in, rd_uint(r, 2), in_cie); break;
	case 0x04: advance(in, rd_uint(r, 4), in_cie); break;
	case 0x05: /* offset_extended */
		reg = rd_uleb(r);
		set_offset(s, reg, scale(rd_uleb(r), da));
		break;
	case 0x11: /* offset_extended_sf */
		reg = rd_uleb(r);
		set_offset(s, reg, scale((uint64_t)rd_sleb(r), da));
		break;
	case 0x06: /* restore_extended */
		reg = rd_uleb(r);
		if (!in_cie)
			restore(in, reg);
		break;
	case 0x07: set_kind(s, rd_uleb(r), R_UNDEF); break;
	case 0x08: set_kind(s, rd_uleb(r), R_SAME); break;
	case 0x09: /* register */
		reg = rd_uleb(r);
		rd_uleb(r);
		set_kind(s, reg, R_OTHER);
		break;
	case 0x0a: /* remember_state */
		if (in->depth >= STATE_STACK)
			return -1;
		in->stack[in->depth++] = *s;
		break;
	case 0x0b: /* restore_state: the CFA rule is not part of it in DWARF, but
		    * every producer means it to be (GCC restores it itself) */
		if (!in->depth)
			return -1;
		*s = in->stack[--in->depth];
		break;
	case 0x0c: /* def_cfa */
		set_cfa_reg(s, rd_uleb(r));
		s->cfa_off = (int64_t)rd_uleb(r);
		break;
	case 0x12: /* def_cfa_sf */
		set_cfa_reg(s, rd_uleb(r));
		s->cfa_off = scale((uint64_t)rd_sleb(r), da);
		break;
	case 0x0d: /* def_cfa_register */
		set_cfa_reg(s, rd_uleb(r));
		break;
	case 0x0e: /* def_cfa_offset */
		v = rd_uleb(r);
		s->cfa_off = (int64_t)v;
		break;
	case 0x13: /* def_cfa_offset_sf */
		s->cfa_off = scale((uint64_t)rd_sleb(r), da);
		break;
	case 0x0f: /* def_cfa_expression */
		rd_block(r, &e, &n);
		if (!r->bad)
			cfa_expression(s, e, n);
		break;
	case 0x10: /* expression */
		reg = rd_uleb(r);
		rd_block(r, &e, &n);
		if (!r->bad)
			reg_expression(s, reg, e, n);
		break;
	case 0x16: /* val_expression */
		reg = rd_uleb(r);
		rd_block(r, &e, &n);
		set_kind(s, reg, R_OTHER);
		break;
	case 0x14: /* val_offset */
	case 0x15: /* val_offset_sf */
		reg = rd_uleb(r);
		if (op == 0x14)
			rd_uleb(r);
		else
			rd_sleb(r);
		set_kind(s, reg, R_OTHER);
		break;
	case 0x2e: /* GNU_args_size */
		rd_uleb(r);
		break;
	case 0x2f: /* GNU_negative_offset_extended */
		reg = rd_uleb(r);
		set_offset(s, reg, scale(0 - rd_uleb(r), da));
		break;
	default: /* set_loc and anything unknown: stop here */
		in->stopped = true;
		return 0;
	}
	return r->bad ? -1 : 0;
}

static int run(struct interp *in, const uint8_t *insns, size_t n, bool in_cie)
{
	struct rd r = { insns, 0, n, true, true, false };

	while (r.pos < r.end && !in->stopped && in->loc < in->f->end)
		if (step(in, &r, in_cie))
			return -1;
	return 0;
}

int cfi_fde_rows(const struct cfi_fde *f, cfi_row_fn fn, void *ctx)
{
	struct interp in;
	struct cfi_row row;
	int r;

	memset(&in, 0, sizeof(in));
	in.f = f;
	in.fn = fn;
	in.ctx = ctx;
	in.loc = f->start;
	in.st.cfa = CFI_CFA_UNSUPPORTED;
	in.st.rbp.kind = R_SAME;
	in.st.ra.kind = R_OTHER;
	r = run(&in, f->cie_insns, f->n_cie_insns, true);
	in.init = in.st;
	in.depth = 0;
	if (!r)
		r = run(&in, f->insns, f->n_insns, false);
	if (r || in.stopped) {
		in.st.cfa = CFI_CFA_UNSUPPORTED;
		in.st.ra.kind = R_OFFSET;
		in.st.ra.off = -8;
	}
	flush(&in);
	memset(&row, 0, sizeof(row));
	row.start = f->end;
	row.cfa = CFI_CFA_NONE;
	fn(ctx, &row);
	return r;
}
