/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/emu-avx.c - instructions unicorn 2.0.1 refuses, done in software
 * (collect/emu-avx.h).  capstone 4 decodes popcnt, pclmulqdq and movbe; it
 * does not know half of the AVX-512 instructions glibc's string functions
 * use (kmovd, vpcmpub, vptestnmb, vpternlogd...), so VEX and EVEX
 * instructions are decoded here, for the opcodes done.
 */
#include "config.h"
#include "collect/emu-avx.h"
#include "db/values.h"

#include <string.h>

/* ---- registers ------------------------------------------------------------------------ */

static const int gpr_uc[16] = {
	UC_X86_REG_RAX, UC_X86_REG_RCX, UC_X86_REG_RDX, UC_X86_REG_RBX, UC_X86_REG_RSP,
	UC_X86_REG_RBP, UC_X86_REG_RSI, UC_X86_REG_RDI, UC_X86_REG_R8, UC_X86_REG_R9,
	UC_X86_REG_R10, UC_X86_REG_R11, UC_X86_REG_R12, UC_X86_REG_R13, UC_X86_REG_R14,
	UC_X86_REG_R15,
};

static uint64_t gpr(uc_engine *uc, unsigned r)
{
	uint64_t v = 0;

	if (uc)
		uc_reg_read(uc, gpr_uc[r & 15], &v);
	return v;
}

/* Writes a general register as an instruction of operand size bytes would (32 bits zero-extend). */
static void set_gpr(uc_engine *uc, unsigned r, uint64_t v, unsigned size)
{
	uint64_t old = 0;

	if (size == 2 || size == 1) {
		uc_reg_read(uc, gpr_uc[r & 15], &old);
		v = (old & ~(size == 2 ? 0xffffull : 0xffull)) | (v & (size == 2 ? 0xffffull : 0xffull));
	} else if (size == 4) {
		v &= 0xffffffffull;
	}
	uc_reg_write(uc, gpr_uc[r & 15], &v);
}

/* Vector register r, its first n bytes (the rest of out zeroed). */
static void vget(uc_engine *uc, struct emu_vregs *v, unsigned r, uint8_t *out)
{
	memcpy(out, v->z[r], 64);
	if (r < 16)
		uc_reg_read(uc, UC_X86_REG_XMM0 + (int)r, out);
}

/* Vector register r becomes val's first n bytes, the rest zeroed (VEX and EVEX writes). */
static void vset(uc_engine *uc, struct emu_vregs *v, unsigned r, const uint8_t *val, unsigned n)
{
	uint8_t x[64] = { 0 };

	memcpy(x, val, n);
	memcpy(v->z[r], x, 64);
	if (r < 16)
		uc_reg_write(uc, UC_X86_REG_XMM0 + (int)r, x);
}

static void set_flags(uc_engine *uc, bool zf, bool cf)
{
	uint64_t f = 0;

	uc_reg_read(uc, UC_X86_REG_EFLAGS, &f);
	f &= ~(uint64_t)0x8d5;
	f |= (zf ? 0x40 : 0) | (cf ? 0x1 : 0);
	uc_reg_write(uc, UC_X86_REG_EFLAGS, &f);
}

/* ---- decoding VEX and EVEX ---------------------------------------------------------------- */

struct avx {
	bool evex;
	unsigned map;           /* 1: 0F, 2: 0F38, 3: 0F3A */
	unsigned pp;            /* 0: none, 1: 66, 2: F3, 3: F2 */
	bool w;
	unsigned vl;            /* vector bytes: 16, 32, 64 */
	unsigned op;
	unsigned reg;           /* ModRM.reg extended (0-31) */
	unsigned rm;            /* ModRM.rm extended, a register operand */
	unsigned vvvv;          /* the second source (0-31) */
	unsigned aaa;           /* EVEX opmask */
	bool z, bcast;
	bool mem;               /* the rm operand is memory at addr */
	uint64_t addr;
	int imm;                /* the immediate byte, -1 if none yet */
	unsigned len;           /* bytes */
	const uint8_t *p, *end; /* where decoding is */
	unsigned disp_at;       /* offset of a disp8, to scale it (EVEX), or 0 */
	int32_t disp;
};

/* ModRM (and SIB, displacement): the rm operand. */
static int modrm(uc_engine *uc, struct avx *a, uint64_t rip, bool rex_x, bool rex_b, bool evex_x,
		 uint64_t seg)
{
	uint8_t m, mod, rm;

	if (a->p >= a->end)
		return -1;
	m = *a->p++;
	mod = m >> 6;
	a->reg = (m >> 3 & 7) | (a->reg & ~7u);
	rm = m & 7;
	if (mod == 3) {
		a->mem = false;
		a->rm = rm | (rex_b ? 8 : 0) | (evex_x ? 16 : 0);
		return 0;
	}
	a->mem = true;
	a->addr = seg;
	if (rm == 4) {
		uint8_t sib, base, index;

		if (a->p >= a->end)
			return -1;
		sib = *a->p++;
		base = (sib & 7) | (rex_b ? 8 : 0);
		index = (sib >> 3 & 7) | (rex_x ? 8 : 0);
		if (index != 4)
			a->addr += gpr(uc, index) << (sib >> 6);
		if ((sib & 7) == 5 && mod == 0) {
			if (a->end - a->p < 4)
				return -1;
			memcpy(&a->disp, a->p, 4);
			a->p += 4;
		} else {
			a->addr += gpr(uc, base);
		}
	} else if (rm == 5 && mod == 0) {
		if (a->end - a->p < 4)
			return -1;
		memcpy(&a->disp, a->p, 4);
		a->p += 4;
		a->disp_at = ~0u;       /* rip-relative: added once the length is known */
		a->addr += rip;
	} else {
		a->addr += gpr(uc, rm | (rex_b ? 8 : 0));
	}
	if (mod == 1) {
		if (a->p >= a->end)
			return -1;
		a->disp = (int8_t)*a->p++;
		a->disp_at = 1;
	} else if (mod == 2) {
		if (a->end - a->p < 4)
			return -1;
		memcpy(&a->disp, a->p, 4);
		a->p += 4;
	}
	return 0;
}

/* The unit of an EVEX disp8: the memory operand's size (an element's for scalars and broadcasts). */
static int64_t disp_unit(const struct avx *a)
{
	unsigned op = a->map << 8 | a->op;

	if (a->bcast)
		return a->w ? 8 : 4;
	switch (op) {
	case 0x16e: case 0x17e: case 0x1d6:                     /* vmovd, vmovq */
		return a->w || op == 0x1d6 ? 8 : 4;
	case 0x278: return 1;                                   /* vpbroadcastb */
	case 0x279: return 2;
	case 0x258: case 0x218: return 4;
	case 0x259: return 8;
	default: return a->vl;
	}
}

/*
 * Decodes a VEX or EVEX instruction at buf (rip's bytes): 0, or -1 if it
 * is not one.  Segment prefixes fs/gs before it are taken.
 */
static int decode(uc_engine *uc, const uint8_t *buf, size_t n, uint64_t rip, struct avx *a)
{
	bool rex_r, rex_x, rex_b, evex_x = false;
	uint64_t seg = 0;
	const uint8_t *start = buf;

	memset(a, 0, sizeof(*a));
	a->p = buf;
	a->end = buf + n;
	a->imm = -1;
	while (a->p < a->end && (*a->p == 0x64 || *a->p == 0x65)) {
		if (uc)
			uc_reg_read(uc, *a->p == 0x64 ? UC_X86_REG_FS_BASE : UC_X86_REG_GS_BASE, &seg);
		a->p++;
	}
	if (a->end - a->p < 3)
		return -1;
	if (*a->p == 0xc5) {
		uint8_t b1 = a->p[1];

		rex_r = !(b1 & 0x80), rex_x = rex_b = false;
		a->vvvv = (~b1 >> 3) & 15;
		a->vl = b1 & 4 ? 32 : 16;
		a->pp = b1 & 3;
		a->map = 1;
		a->p += 2;
	} else if (*a->p == 0xc4) {
		uint8_t b1 = a->p[1], b2 = a->p[2];

		rex_r = !(b1 & 0x80), rex_x = !(b1 & 0x40), rex_b = !(b1 & 0x20);
		a->map = b1 & 31;
		a->w = b2 & 0x80;
		a->vvvv = (~b2 >> 3) & 15;
		a->vl = b2 & 4 ? 32 : 16;
		a->pp = b2 & 3;
		a->p += 3;
	} else if (*a->p == 0x62) {
		uint8_t p0, p1, p2;

		if (a->end - a->p < 4)
			return -1;
		p0 = a->p[1], p1 = a->p[2], p2 = a->p[3];
		if ((p0 & 0x0c) || !(p1 & 4))
			return -1;
		a->evex = true;
		rex_r = !(p0 & 0x80), rex_x = !(p0 & 0x40), rex_b = !(p0 & 0x20);
		evex_x = rex_x;
		a->reg = p0 & 0x10 ? 0 : 16;            /* R' */
		a->map = p0 & 3;
		a->w = p1 & 0x80;
		a->vvvv = ((~p1 >> 3) & 15) | (p2 & 8 ? 0 : 16);
		a->pp = p1 & 3;
		a->z = p2 & 0x80;
		a->vl = 16u << ((p2 >> 5) & 3);
		a->bcast = p2 & 0x10;
		a->aaa = p2 & 7;
		a->p += 4;
		if (a->vl > 64)
			return -1;
	} else {
		return -1;
	}
	if (a->map < 1 || a->map > 3 || a->p >= a->end)
		return -1;
	a->op = *a->p++;
	a->reg |= rex_r ? 8 : 0;
	if (modrm(uc, a, rip, rex_x, rex_b, evex_x, seg))
		return -1;
	/* An immediate byte: the 0F3A map's. */
	if (a->map == 3) {
		if (a->p >= a->end)
			return -1;
		a->imm = *a->p++;
	}
	a->len = (unsigned)(a->p - start);
	if (a->mem) {
		int64_t d = a->disp;

		/* EVEX's compressed disp8 is in units of the memory operand. */
		if (a->evex && a->disp_at == 1)
			d *= disp_unit(a);
		a->addr += (uint64_t)d;
		if (a->disp_at == ~0u)
			a->addr += a->len;
	}
	return 0;
}

/* ---- memory -------------------------------------------------------------------------- */

/* Element i (size es) of a masked access: selected by mask register aaa (0: all). */
static bool selected(const struct emu_vregs *v, unsigned aaa, unsigned i)
{
	return !aaa || (v->k[aaa] >> i & 1);
}

/*
 * Reads the vector operand: a register, or vl bytes of memory (with a mask
 * in a load, only the elements selected are read: masked-off ones may be
 * on a page that is not there, as glibc's string functions expect).
 */
static int load(uc_engine *uc, struct emu_vregs *v, const struct avx *a, unsigned es,
		const struct emu_avx_mem *m, bool masked, uint8_t *out)
{
	memset(out, 0, 64);
	if (!a->mem) {
		vget(uc, v, a->rm, out);
		return 0;
	}
	if (a->bcast) {
		uint8_t e[8];

		if (m->read(m->ctx, a->addr, e, es))
			return -1;
		for (unsigned i = 0; i < a->vl; i += es)
			memcpy(out + i, e, es);
		return 0;
	}
	if (!masked || !a->aaa)
		return m->read(m->ctx, a->addr, out, a->vl);
	for (unsigned i = 0; i < a->vl / es; i++)
		if (selected(v, a->aaa, i) && m->read(m->ctx, a->addr + i * es, out + i * es, es))
			return -1;
	return 0;
}

/* Writes the result to the destination register, merging or zeroing what the mask leaves. */
static void write_masked(uc_engine *uc, struct emu_vregs *v, const struct avx *a, unsigned dst,
			 unsigned es, const uint8_t *res)
{
	uint8_t out[64];

	vget(uc, v, dst, out);
	for (unsigned i = 0; i < a->vl / es; i++) {
		if (selected(v, a->aaa, i))
			memcpy(out + i * es, res + i * es, es);
		else if (a->z)
			memset(out + i * es, 0, es);
	}
	vset(uc, v, dst, out, a->vl);
}

/* ---- the instructions ----------------------------------------------------------------- */

static uint64_t elem(const uint8_t *x, unsigned i, unsigned es)
{
	uint64_t e = 0;

	memcpy(&e, x + i * es, es);
	return e;
}

static int64_t selem(const uint8_t *x, unsigned i, unsigned es)
{
	uint64_t e = elem(x, i, es);
	unsigned sh = 64 - 8 * es;

	return (int64_t)(e << sh) >> sh;
}

/* A compare predicate (vpcmp's immediate): 0 eq, 1 lt, 2 le, 3 false, 4 ne, 5 nlt, 6 nle, 7 true. */
static bool pred(unsigned p, int64_t x, int64_t y, uint64_t ux, uint64_t uy, bool sign)
{
	bool lt = sign ? x < y : ux < uy, eq = ux == uy;

	switch (p & 7) {
	case 0: return eq;
	case 1: return lt;
	case 2: return lt || eq;
	case 3: return false;
	case 4: return !eq;
	case 5: return !lt;
	case 6: return !lt && !eq;
	default: return true;
	}
}

/* Compares of vvvv and rm into mask register reg (EVEX) or vector reg (VEX). */
static int compare(uc_engine *uc, struct emu_vregs *v, const struct avx *a,
		   const struct emu_avx_mem *m, unsigned es, unsigned p, bool sign, int test)
{
	uint8_t x[64], y[64], res[64] = { 0 };
	uint64_t k = 0;

	vget(uc, v, a->vvvv, x);
	if (load(uc, v, a, es, m, false, y))
		return -1;
	for (unsigned i = 0; i < a->vl / es; i++) {
		bool t;

		if (test)
			t = (elem(x, i, es) & elem(y, i, es)) ? test > 0 : test < 0;
		else
			t = pred(p, selem(x, i, es), selem(y, i, es), elem(x, i, es), elem(y, i, es), sign);
		if (t && selected(v, a->aaa, i)) {
			k |= 1ull << i;
			memset(res + i * es, 0xff, es);
		}
	}
	if (a->evex)
		v->k[a->reg & 7] = k;
	else
		vset(uc, v, a->reg, res, a->vl);
	return 1;
}

/* Two-source operations, element by element: the logic and byte arithmetic of glibc's functions. */
static int binary(uc_engine *uc, struct emu_vregs *v, const struct avx *a,
		  const struct emu_avx_mem *m, unsigned es, int kind)
{
	uint8_t x[64], y[64], r[64] = { 0 };

	vget(uc, v, a->vvvv, x);
	if (load(uc, v, a, es, m, false, y))
		return -1;
	for (unsigned i = 0; i < a->vl / es; i++) {
		uint64_t p = elem(x, i, es), q = elem(y, i, es), o;

		switch (kind) {
		case 'a': o = p & q; break;
		case 'n': o = ~p & q; break;
		case 'o': o = p | q; break;
		case 'x': o = p ^ q; break;
		case 'm': o = p < q ? p : q; break;
		case '+': o = p + q; break;
		case '-': o = p - q; break;
		case 's':               /* vpshufb: within each 16-byte lane */
			o = (q & 0x80) ? 0 : x[(i & ~15u) + (q & 15)];
			break;
		default: return 0;
		}
		memcpy(r + i * es, &o, es);
	}
	write_masked(uc, v, a, a->reg, es, r);
	return 1;
}

/* vpternlogd/q: each bit of the result from the three sources' bits, through imm's table. */
static int ternlog(uc_engine *uc, struct emu_vregs *v, const struct avx *a,
		   const struct emu_avx_mem *m, unsigned es)
{
	uint8_t d[64], x[64], y[64], r[64];

	vget(uc, v, a->reg, d);
	vget(uc, v, a->vvvv, x);
	if (load(uc, v, a, es, m, false, y))
		return -1;
	for (unsigned i = 0; i < a->vl; i++) {
		r[i] = 0;
		for (unsigned b = 0; b < 8; b++) {
			unsigned idx = (unsigned)((d[i] >> b & 1) << 2 | (x[i] >> b & 1) << 1 | (y[i] >> b & 1));

			r[i] |= (uint8_t)(((unsigned)a->imm >> idx & 1) << b);
		}
	}
	write_masked(uc, v, a, a->reg, es, r);
	return 1;
}

static int move(uc_engine *uc, struct emu_vregs *v, const struct avx *a,
		const struct emu_avx_mem *m, unsigned es, bool store)
{
	uint8_t x[64];

	if (!store) {
		if (load(uc, v, a, es, m, true, x))
			return -1;
		write_masked(uc, v, a, a->reg, es, x);
		return 1;
	}
	vget(uc, v, a->reg, x);
	if (!a->mem) {
		write_masked(uc, v, a, a->rm, es, x);
		return 1;
	}
	for (unsigned i = 0; i < a->vl / es; i++)
		if (selected(v, a->aaa, i) && !a->aaa)
			return m->write(m->ctx, a->addr, x, a->vl) ? -1 : 1;
		else if (selected(v, a->aaa, i) && m->write(m->ctx, a->addr + i * es, x + i * es, es))
			return -1;
	return 1;
}

static int broadcast(uc_engine *uc, struct emu_vregs *v, const struct avx *a,
		     const struct emu_avx_mem *m, unsigned es, bool from_gpr)
{
	uint8_t e[64] = { 0 }, r[64];

	if (from_gpr) {
		uint64_t g = gpr(uc, a->rm);

		memcpy(e, &g, 8);
	} else if (a->mem) {
		if (m->read(m->ctx, a->addr, e, es))
			return -1;
	} else {
		vget(uc, v, a->rm, e);
	}
	for (unsigned i = 0; i < a->vl; i += es)
		memcpy(r + i, e, es);
	write_masked(uc, v, a, a->reg, es, r);
	return 1;
}

/* The mask-register instructions (VEX, map 0F): kmov, kortest, ktest, kxnor, kor... */
static int mask_op(uc_engine *uc, struct emu_vregs *v, const struct avx *a,
		   const struct emu_avx_mem *m)
{
	/* Width: w b q d as pp/W say (0F 90-93: kmovd/q's pp differ by direction). */
	unsigned bits = a->w ? (a->pp == 1 ? 32 : 64) : (a->pp == 1 ? 8 : 16);
	uint64_t mask = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
	uint64_t x = v->k[a->vvvv & 7], y = a->mem ? 0 : v->k[a->rm & 7];

	switch (a->op) {
	case 0x90:                      /* kmov k, k/m */
		if (a->mem && m->read(m->ctx, a->addr, &y, bits / 8))
			return -1;
		v->k[a->reg & 7] = y & mask;
		return 1;
	case 0x91:                      /* kmov m, k */
		return a->mem && !m->write(m->ctx, a->addr, &v->k[a->reg & 7], bits / 8) ? 1 : -1;
	case 0x92:                      /* kmov k, r: F2 W0 d, F2 W1 q, 66 W0 b, none W0 w */
		bits = a->pp == 3 ? (a->w ? 64 : 32) : a->pp == 1 ? 8 : 16;
		mask = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
		v->k[a->reg & 7] = gpr(uc, a->rm) & mask;
		return 1;
	case 0x93:                      /* kmov r, k */
		bits = a->pp == 3 ? (a->w ? 64 : 32) : a->pp == 1 ? 8 : 16;
		mask = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
		set_gpr(uc, a->reg, v->k[a->rm & 7] & mask, bits == 64 ? 8 : 4);
		return 1;
	case 0x98:                      /* kortest */
		x = (v->k[a->reg & 7] | y) & mask;
		set_flags(uc, !x, x == mask);
		return 1;
	case 0x99:                      /* ktest */
		x = v->k[a->reg & 7] & mask;
		set_flags(uc, !(x & y), !(~x & y & mask));
		return 1;
	case 0x41: v->k[a->reg & 7] = x & y & mask; return 1;             /* kand */
	case 0x42: v->k[a->reg & 7] = ~x & y & mask; return 1;            /* kandn */
	case 0x44: v->k[a->reg & 7] = ~y & mask; return 1;                /* knot */
	case 0x45: v->k[a->reg & 7] = (x | y) & mask; return 1;           /* kor */
	case 0x46: v->k[a->reg & 7] = ~(x ^ y) & mask; return 1;          /* kxnor */
	case 0x47: v->k[a->reg & 7] = (x ^ y) & mask; return 1;           /* kxor */
	case 0x4a: v->k[a->reg & 7] = (x + y) & mask; return 1;           /* kadd */
	case 0x4b:                      /* kunpckbw, kunpckwd, kunpckdq: halves of the double width */
		bits = a->pp == 1 ? 8 : a->w ? 32 : 16;
		v->k[a->reg & 7] = (x << bits | (y & ((1ull << bits) - 1)));
		return 1;
	default:
		return 0;
	}
}

/*
 * vmovd/vmovq between the low element and a general register or memory;
 * size | 16: vmovq's forms whose register operand is a vector register.
 */
static int move_scalar(uc_engine *uc, struct emu_vregs *v, const struct avx *a,
		       const struct emu_avx_mem *m, bool to_vec, unsigned size)
{
	uint8_t x[64] = { 0 }, y[64];
	bool vec = size & 16;
	uint64_t g;

	size &= 15;
	if (to_vec) {
		if (a->mem) {
			if (m->read(m->ctx, a->addr, x, size))
				return -1;
		} else if (vec) {
			vget(uc, v, a->rm, y);
			memcpy(x, y, size);
		} else {
			g = gpr(uc, a->rm);
			memcpy(x, &g, size);
		}
		vset(uc, v, a->reg, x, 16);
		return 1;
	}
	vget(uc, v, a->reg, x);
	if (a->mem)
		return m->write(m->ctx, a->addr, x, size) ? -1 : 1;
	if (vec) {
		memset(x + size, 0, 64 - size);
		vset(uc, v, a->rm, x, 16);
		return 1;
	}
	memcpy(&g, x, 8);
	set_gpr(uc, a->rm, g, size == 8 ? 8 : 4);
	return 1;
}

static int do_vex(uc_engine *uc, struct emu_vregs *v, const struct avx *a,
		  const struct emu_avx_mem *m)
{
	unsigned op = a->op, dq = a->w ? 8 : 4;

	if (a->map == 1) {
		if (!a->evex && (op == 0x90 || op == 0x91 || op == 0x92 || op == 0x93 || op == 0x98 ||
				 op == 0x99 || (op >= 0x41 && op <= 0x4b)))
			return mask_op(uc, v, a, m);
		if (op == 0x77 && !a->evex) {           /* vzeroupper (L0), vzeroall (L1) */
			for (unsigned r = 0; r < 16; r++) {
				uint8_t x[64];

				vget(uc, v, r, x);
				if (a->vl == 32)
					memset(x, 0, 16);
				vset(uc, v, r, x, 16);
			}
			return 1;
		}
		switch (a->pp << 8 | op) {
		case 0x110: case 0x128:                 /* load forms */
		case 0x16f: case 0x26f: case 0x36f:
			return move(uc, v, a, m, a->pp == 3 ? (a->w ? 2 : 1) : a->evex ? dq : 1, false);
		case 0x111: case 0x129:                 /* store forms */
		case 0x17f: case 0x27f: case 0x37f: case 0x1e7:
			return move(uc, v, a, m, a->pp == 3 ? (a->w ? 2 : 1) : a->evex ? dq : 1, true);
		case 0x010: case 0x028: return move(uc, v, a, m, 4, false);         /* vmovups/aps */
		case 0x011: case 0x029: return move(uc, v, a, m, 4, true);
		case 0x174: return compare(uc, v, a, m, 1, 0, false, 0);             /* vpcmpeqb */
		case 0x175: return compare(uc, v, a, m, 2, 0, false, 0);
		case 0x176: return compare(uc, v, a, m, 4, 0, false, 0);
		case 0x164: return compare(uc, v, a, m, 1, 6, true, 0);              /* vpcmpgtb */
		case 0x1db: return binary(uc, v, a, m, a->evex ? dq : 8, 'a');
		case 0x1df: return binary(uc, v, a, m, a->evex ? dq : 8, 'n');
		case 0x1eb: return binary(uc, v, a, m, a->evex ? dq : 8, 'o');
		case 0x1ef: return binary(uc, v, a, m, a->evex ? dq : 8, 'x');
		case 0x1da: return binary(uc, v, a, m, 1, 'm');                      /* vpminub */
		case 0x1fc: return binary(uc, v, a, m, 1, '+');
		case 0x1f8: return binary(uc, v, a, m, 1, '-');
		case 0x16e: return move_scalar(uc, v, a, m, true, a->w ? 8 : 4);    /* vmovd/q x, r/m */
		case 0x17e: return move_scalar(uc, v, a, m, false, a->w ? 8 : 4);   /* vmovd/q r/m, x */
		case 0x27e: return move_scalar(uc, v, a, m, true, 8 | 16);          /* vmovq x, x/m */
		case 0x1d6: return move_scalar(uc, v, a, m, false, 8 | 16);         /* vmovq x/m, x */
		case 0x1d7: {                                                        /* vpmovmskb */
			uint8_t x[64];
			uint64_t r = 0;

			if (a->mem)
				return 0;
			vget(uc, v, a->rm, x);
			for (unsigned i = 0; i < a->vl; i++)
				r |= (uint64_t)(x[i] >> 7) << i;
			set_gpr(uc, a->reg, r, 4);
			return 1;
		}
		default:
			return 0;
		}
	}
	if (a->map == 2 && a->pp == 1) {
		switch (op) {
		case 0x00: return binary(uc, v, a, m, 1, 's');                      /* vpshufb */
		case 0x3b: return binary(uc, v, a, m, 4, 'm');                      /* vpminud */
		case 0x78: return broadcast(uc, v, a, m, 1, false);
		case 0x79: return broadcast(uc, v, a, m, 2, false);
		case 0x58: return broadcast(uc, v, a, m, 4, false);
		case 0x59: return broadcast(uc, v, a, m, 8, false);
		case 0x18: return broadcast(uc, v, a, m, 4, false);                 /* vbroadcastss */
		case 0x7a: return a->evex ? broadcast(uc, v, a, m, 1, true) : 0;
		case 0x7b: return a->evex ? broadcast(uc, v, a, m, 2, true) : 0;
		case 0x7c: return a->evex ? broadcast(uc, v, a, m, dq, true) : 0;
		case 0x26: return a->evex ? compare(uc, v, a, m, a->w ? 2 : 1, 0, false, 1) : 0;
		case 0x27: return a->evex ? compare(uc, v, a, m, dq, 0, false, 1) : 0;
		case 0x17: {                                                        /* vptest */
			uint8_t x[64], y[64];
			bool zf = true, cf = true;

			if (a->evex)
				return 0;
			vget(uc, v, a->reg, x);
			if (load(uc, v, a, 1, m, false, y))
				return -1;
			for (unsigned i = 0; i < a->vl; i++) {
				zf &= !(x[i] & y[i]);
				cf &= !(~x[i] & y[i]);
			}
			set_flags(uc, zf, cf);
			return 1;
		}
		default:
			return 0;
		}
	}
	if (a->map == 2 && a->pp == 2 && a->evex) {                                 /* vptestnm */
		if (op == 0x26)
			return compare(uc, v, a, m, a->w ? 2 : 1, 0, false, -1);
		if (op == 0x27)
			return compare(uc, v, a, m, dq, 0, false, -1);
		return 0;
	}
	if (a->map == 3 && a->pp == 1 && a->evex) {
		switch (op) {
		case 0x3f: return compare(uc, v, a, m, a->w ? 2 : 1, (unsigned)a->imm, true, 0);
		case 0x3e: return compare(uc, v, a, m, a->w ? 2 : 1, (unsigned)a->imm, false, 0);
		case 0x1f: return compare(uc, v, a, m, dq, (unsigned)a->imm, true, 0);
		case 0x1e: return compare(uc, v, a, m, dq, (unsigned)a->imm, false, 0);
		case 0x25: return ternlog(uc, v, a, m, dq);
		default: return 0;
		}
	}
	return 0;
}

/* ---- popcnt, pclmulqdq, movbe (capstone decodes them) ---------------------------------- */

static int reg_of(csh cs, unsigned creg, unsigned *size)
{
	static const char *const names[16] = {
		"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
		"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
	};
	int r = values_reg_lookup(cs_reg_name(cs, creg));

	(void)size;
	if (r < 0 || r >= VREG_RFLAGS)
		return -1;
	for (int k = 0; k < 16; k++)
		if (values_reg_lookup(names[k]) == r)
			return k;
	return -1;
}

static uint64_t mem_address(uc_engine *uc, csh cs, const cs_insn *in, const cs_x86_op *op)
{
	uint64_t a = (uint64_t)op->mem.disp, s = 0;
	unsigned sz;
	int r;

	if (op->mem.base == X86_REG_RIP)
		a += in->address + in->size;
	else if (op->mem.base != X86_REG_INVALID && (r = reg_of(cs, op->mem.base, &sz)) >= 0)
		a += gpr(uc, (unsigned)r);
	if (op->mem.index != X86_REG_INVALID && (r = reg_of(cs, op->mem.index, &sz)) >= 0)
		a += gpr(uc, (unsigned)r) * (uint64_t)op->mem.scale;
	if (op->mem.segment == X86_REG_FS)
		uc_reg_read(uc, UC_X86_REG_FS_BASE, &s);
	else if (op->mem.segment == X86_REG_GS)
		uc_reg_read(uc, UC_X86_REG_GS_BASE, &s);
	return a + s;
}

static uint64_t bswap(uint64_t v, unsigned size)
{
	return size == 8 ? __builtin_bswap64(v) : size == 4 ? __builtin_bswap32((uint32_t)v) :
							     __builtin_bswap16((uint16_t)v);
}

/* The carry-less product of a and b (128 bits). */
static void clmul(uint64_t a, uint64_t b, uint64_t *lo, uint64_t *hi)
{
	*lo = *hi = 0;
	for (unsigned i = 0; i < 64; i++)
		if (b >> i & 1) {
			*lo ^= a << i;
			if (i)
				*hi ^= a >> (64 - i);
		}
}

static int do_scalar(uc_engine *uc, csh cs, const cs_insn *in, struct emu_vregs *v,
		     const struct emu_avx_mem *m)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *d = &x->operands[0], *s = &x->operands[1];
	unsigned size = d->size, sz;
	uint64_t val = 0;
	int r;

	if (in->id == X86_INS_POPCNT && x->op_count == 2 && d->type == X86_OP_REG &&
	    (r = reg_of(cs, d->reg, &sz)) >= 0) {
		uint64_t flags;

		if (s->type == X86_OP_REG && reg_of(cs, s->reg, &sz) >= 0)
			val = gpr(uc, (unsigned)reg_of(cs, s->reg, &sz));
		else if (s->type != X86_OP_MEM || m->read(m->ctx, mem_address(uc, cs, in, s), &val, size))
			return s->type == X86_OP_MEM ? -1 : 0;
		if (size < 8)
			val &= (1ull << (8 * size)) - 1;
		set_gpr(uc, (unsigned)r, (uint64_t)__builtin_popcountll(val), size);
		uc_reg_read(uc, UC_X86_REG_EFLAGS, &flags);
		flags &= ~(uint64_t)0x8d5;
		flags |= val ? 0 : 0x40;
		uc_reg_write(uc, UC_X86_REG_EFLAGS, &flags);
		return 1;
	}
	if (in->id == X86_INS_MOVBE && x->op_count == 2) {
		if (d->type == X86_OP_REG && s->type == X86_OP_MEM && (r = reg_of(cs, d->reg, &sz)) >= 0) {
			if (m->read(m->ctx, mem_address(uc, cs, in, s), &val, size))
				return -1;
			set_gpr(uc, (unsigned)r, bswap(val, size), size);
			return 1;
		}
		if (d->type == X86_OP_MEM && s->type == X86_OP_REG && (r = reg_of(cs, s->reg, &sz)) >= 0) {
			val = bswap(gpr(uc, (unsigned)r), s->size);
			return m->write(m->ctx, mem_address(uc, cs, in, d), &val, s->size) ? -1 : 1;
		}
		return 0;
	}
	if (in->id == X86_INS_PCLMULQDQ && x->op_count == 3 && d->type == X86_OP_REG &&
	    x->operands[2].type == X86_OP_IMM && d->reg >= X86_REG_XMM0 && d->reg <= X86_REG_XMM15) {
		uint8_t a[64], b[64];
		uint64_t p[2], q[2], res[2];
		int imm = (int)x->operands[2].imm;

		vget(uc, v, (unsigned)(d->reg - X86_REG_XMM0), a);
		if (s->type == X86_OP_REG && s->reg >= X86_REG_XMM0 && s->reg <= X86_REG_XMM15)
			vget(uc, v, (unsigned)(s->reg - X86_REG_XMM0), b);
		else if (s->type != X86_OP_MEM || m->read(m->ctx, mem_address(uc, cs, in, s), b, 16))
			return s->type == X86_OP_MEM ? -1 : 0;
		memcpy(p, a, 16);
		memcpy(q, b, 16);
		clmul(p[imm & 1], q[(imm >> 4) & 1], &res[0], &res[1]);
		/* Legacy SSE: the upper part of the register stays. */
		memcpy(a, res, 16);
		uc_reg_write(uc, UC_X86_REG_XMM0 + (d->reg - X86_REG_XMM0), a);
		return 1;
	}
	return 0;
}

/* The mask-register instructions in VEX's 0F map: QEMU 5 takes them for cmovcc and setcc. */
static bool mistaken(const struct avx *a)
{
	return !a->evex && a->map == 1 &&
	       ((a->op >= 0x41 && a->op <= 0x4b) || (a->op >= 0x90 && a->op <= 0x93) ||
		a->op == 0x98 || a->op == 0x99);
}

int emu_avx_length(const uint8_t *buf, size_t n, unsigned *len, bool *trap)
{
	struct avx a;

	if (decode(NULL, buf, n, 0, &a))
		return -1;
	*len = a.len;
	*trap = mistaken(&a);
	return 0;
}

int emu_avx_do(uc_engine *uc, csh cs, const cs_insn *in, const uint8_t *buf, size_t n,
	       uint64_t rip, struct emu_vregs *v, const struct emu_avx_mem *mem, unsigned *len)
{
	struct avx a;
	int r;

	if (!decode(uc, buf, n, rip, &a)) {
		*len = a.len;
		if ((r = do_vex(uc, v, &a, mem)))
			return r;
	}
	if (!in || !in->detail)
		return 0;
	*len = in->size;
	return do_scalar(uc, cs, in, v, mem);
}
