/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm/jumptab.c - forward symbolic evaluation of the path to an
 * indirect jump (see jumptab.h).
 */
#include "config.h"

#include "disasm/jumptab.h"

#include <capstone/capstone.h>
#include <stdlib.h>
#include <string.h>

#define MAX_VARS 96
#define MAX_STORES 32
#define NGPR 16

/* k + s * var; known false: nothing can be said (two variables mixed). */
struct val {
	bool known;
	bool kaddr;             /* k is an address (from lea rip or an absolute displacement) */
	int64_t k, s;
	int v;                  /* -1 when s == 0 */
};

enum var_kind { V_REG, V_MEM, V_LOAD, V_OPAQUE };

struct var {
	enum var_kind kind;
	unsigned reg;           /* V_REG */
	struct val addr;        /* V_MEM, V_LOAD: the address loaded from */
	unsigned size;          /* V_MEM, V_LOAD: bytes */
	uint64_t table;         /* V_LOAD: address of entry 0 */
	int index;              /* V_LOAD: the index variable */
	bool bounded;
	uint64_t lo, hi;
};

struct stored {
	struct val addr;
	unsigned size;
	struct val value;
};

struct eval {
	struct var vars[MAX_VARS];
	int n_vars;
	struct val regs[NGPR];
	bool reg_set[NGPR];
	struct stored stores[MAX_STORES];
	int n_stores;
	bool cmp_valid;
	struct val cmp_val;
	uint64_t cmp_imm;
	int need_reg;           /* a window-start register holding a table base, or -1 */
	bool saw_index_load;    /* a load with a scaled index: table-like */
	int (*read)(void *, uint64_t, void *, size_t);
	void *ctx;
};

static const struct val UNKNOWN = { false, false, 0, 0, -1 };

static struct val konst(int64_t k, bool kaddr)
{
	struct val v = { true, kaddr, k, 0, -1 };

	return v;
}

static struct val of_var(int var)
{
	struct val v = { var >= 0, false, 0, 1, var };

	return v;
}

static int new_var(struct eval *e, enum var_kind kind)
{
	if (e->n_vars >= MAX_VARS)
		return -1;
	memset(&e->vars[e->n_vars], 0, sizeof(e->vars[0]));
	e->vars[e->n_vars].kind = kind;
	e->vars[e->n_vars].index = -1;
	return e->n_vars++;
}

static struct val opaque(struct eval *e)
{
	return of_var(new_var(e, V_OPAQUE));
}

static bool same_val(const struct val *a, const struct val *b)
{
	return a->known && b->known && a->k == b->k && a->s == b->s && a->v == b->v;
}

static struct val get_reg(struct eval *e, unsigned r)
{
	int v;

	if (r >= NGPR)
		return UNKNOWN;
	if (!e->reg_set[r]) {
		v = new_var(e, V_REG);
		if (v >= 0)
			e->vars[v].reg = r;
		e->regs[r] = of_var(v);
		e->reg_set[r] = true;
	}
	return e->regs[r];
}

static void set_reg(struct eval *e, unsigned r, struct val v)
{
	if (r < NGPR) {
		e->regs[r] = v;
		e->reg_set[r] = true;
	}
}

/* a window-start register mixed with another variable: maybe a table base */
static void note_base(struct eval *e, const struct val *a, const struct val *b)
{
	if (a->known && a->s == 1 && a->v >= 0 && e->vars[a->v].kind == V_REG && !a->k &&
	    b->known && b->v >= 0)
		e->need_reg = (int)e->vars[a->v].reg;
}

/* The interval of k + s * var, if var is bounded; false otherwise. */
static bool interval(const struct eval *e, const struct val *a, int64_t *lo, int64_t *hi)
{
	const struct var *x = &e->vars[a->v];
	int64_t l, h;

	if (!x->bounded || x->hi > (1u << 20) || a->s < -8 || a->s > 8)
		return false;
	l = a->k + a->s * (int64_t)x->lo;
	h = a->k + a->s * (int64_t)x->hi;
	*lo = l < h ? l : h;
	*hi = l < h ? h : l;
	return true;
}

/* Two bounded variables combined: a new variable bounded by interval arithmetic. */
static struct val add_intervals(struct eval *e, const struct val *a, const struct val *b)
{
	int64_t alo, ahi, blo, bhi;
	int v;

	if (!interval(e, a, &alo, &ahi) || !interval(e, b, &blo, &bhi) || alo + blo < 0 ||
	    (v = new_var(e, V_OPAQUE)) < 0)
		return UNKNOWN;
	e->vars[v].bounded = true;
	e->vars[v].lo = (uint64_t)(alo + blo);
	e->vars[v].hi = (uint64_t)(ahi + bhi);
	return of_var(v);
}

static struct val add(struct eval *e, struct val a, struct val b)
{
	struct val r;

	if (!a.known || !b.known)
		return UNKNOWN;
	if (a.s && b.s && a.v != b.v) {
		note_base(e, &a, &b);
		note_base(e, &b, &a);
		return add_intervals(e, &a, &b);
	}
	r.known = true;
	r.k = (int64_t)((uint64_t)a.k + (uint64_t)b.k);
	r.s = a.s + b.s;
	r.v = r.s ? (a.s ? a.v : b.v) : -1;
	r.kaddr = a.kaddr != b.kaddr;
	return r;
}

static struct val scale(struct val a, int64_t m)
{
	if (!a.known)
		return a;
	a.k = (int64_t)((uint64_t)a.k * (uint64_t)m);
	a.s *= m;
	a.kaddr = a.kaddr && m == 1;
	if (!a.s)
		a.v = -1;
	return a;
}

/* The address of a memory operand. */
static struct val address(struct eval *e, const struct insn *in, const struct insn_operand *op)
{
	struct val a, idx;

	if (op->base == DREG_PC)
		return konst((int64_t)in->mem_addr, true);
	a = op->base != DREG_NONE ? get_reg(e, op->base) : konst(0, false);
	if (op->index != DREG_NONE) {
		idx = scale(get_reg(e, op->index), op->scale ? op->scale : 1);
		if (idx.known && idx.s)
			e->saw_index_load = true;
		a = add(e, a, idx);
	}
	if (a.known) {
		a.k += op->disp;
		if (op->base == DREG_NONE && op->disp >= 0x1000 && (a.s || op->index == DREG_NONE))
			a.kaddr = true;
	}
	return a;
}

static struct val load_mem(struct eval *e, struct val a, unsigned size)
{
	int v;

	if (!a.known)
		return opaque(e);
	for (int i = e->n_stores; i-- > 0;)
		if (e->stores[i].size == size && same_val(&e->stores[i].addr, &a))
			return e->stores[i].value;
	if (a.kaddr && a.v >= 0 && a.s == (int64_t)size && (size == 1 || size == 2 || size == 4 || size == 8)) {
		if ((v = new_var(e, V_LOAD)) < 0)
			return UNKNOWN;
		e->vars[v].addr = a;
		e->vars[v].size = size;
		e->vars[v].table = (uint64_t)a.k;
		e->vars[v].index = a.v;
		return of_var(v);
	}
	for (int i = 0; i < e->n_vars; i++)
		if (e->vars[i].kind == V_MEM && e->vars[i].size == size && same_val(&e->vars[i].addr, &a))
			return of_var(i);
	if ((v = new_var(e, V_MEM)) < 0)
		return UNKNOWN;
	e->vars[v].addr = a;
	e->vars[v].size = size;
	return of_var(v);
}

static void store_mem(struct eval *e, struct val a, unsigned size, struct val value)
{
	if (!a.known) {
		e->n_stores = 0;  /* a store anywhere: forget what memory held */
		return;
	}
	for (int i = 0; i < e->n_stores; i++)
		if (e->stores[i].size == size && same_val(&e->stores[i].addr, &a)) {
			e->stores[i].value = value;
			return;
		}
	if (e->n_stores < MAX_STORES) {
		e->stores[e->n_stores].addr = a;
		e->stores[e->n_stores].size = size;
		e->stores[e->n_stores].value = value;
		e->n_stores++;
	}
}

static struct val operand(struct eval *e, const struct insn *in, const struct insn_operand *op)
{
	switch (op->kind) {
	case OPK_REG: return get_reg(e, op->reg);
	case OPK_IMM: return konst(op->imm, false);
	case OPK_MEM: return load_mem(e, address(e, in, op), op->size ? op->size : 8);
	default: return UNKNOWN;
	}
}

/* Unsigned k + v <= imm on the fall-through path: v in [-k, imm - k]. */
static void bound(struct eval *e, struct val a, uint64_t imm)
{
	struct var *var;
	uint64_t lo, hi;

	if (!a.known || a.s != 1 || a.v < 0)
		return;
	var = &e->vars[a.v];
	if (a.k <= 0) {
		lo = (uint64_t)-a.k;
		hi = imm + (uint64_t)-a.k;
	} else {
		if ((uint64_t)a.k > imm)
			return;
		lo = 0;
		hi = imm - (uint64_t)a.k;
	}
	if (!var->bounded || hi - lo < var->hi - var->lo) {
		var->bounded = true;
		var->lo = lo;
		var->hi = hi;
	}
}

static void conditional(struct eval *e, unsigned id)
{
	if (!e->cmp_valid)
		return;
	if (id == X86_INS_JA)
		bound(e, e->cmp_val, e->cmp_imm);
	else if (id == X86_INS_JAE && e->cmp_imm)
		bound(e, e->cmp_val, e->cmp_imm - 1);
}

static void clobber(struct eval *e, const struct insn *in)
{
	for (unsigned r = 0; r < NGPR; r++)
		if (regset_has(&in->writes, r))
			set_reg(e, r, opaque(e));
}

static bool dst_reg(const struct insn_ops *o, unsigned *r)
{
	if (o->n < 1 || o->op[0].kind != OPK_REG || o->op[0].reg >= NGPR)
		return false;
	*r = o->op[0].reg;
	return true;
}

static void step(struct eval *e, const struct insn *in, const struct insn_ops *o)
{
	unsigned d;
	struct val v;

	if (in->kind == INSN_CJUMP) {
		conditional(e, in->cs_id);
		return;
	}
	if (in->kind == INSN_CALL || in->kind == INSN_ICALL) {
		static const unsigned caller_saved[] = { DREG_RAX, DREG_RCX, DREG_RDX, DREG_RSI,
							 DREG_RDI, DREG_R8,  DREG_R9,  DREG_R10,
							 DREG_R11 };

		for (size_t i = 0; i < sizeof(caller_saved) / sizeof(caller_saved[0]); i++)
			set_reg(e, caller_saved[i], opaque(e));
		e->n_stores = 0;
		e->cmp_valid = false;
		return;
	}
	if (in->cs_id == X86_INS_CMP && o->n == 2 && o->op[1].kind == OPK_IMM) {
		e->cmp_val = operand(e, in, &o->op[0]);
		e->cmp_imm = (uint64_t)o->op[1].imm;
		if (o->op[0].size && o->op[0].size < 8)
			e->cmp_imm &= (1ull << (8 * o->op[0].size)) - 1;
		e->cmp_valid = true;
		return;
	}
	if (regset_has(&in->writes, DREG_FLAGS))
		e->cmp_valid = false;
	if (o->n == 2 && o->op[0].kind == OPK_MEM &&
	    (in->cs_id == X86_INS_MOV || in->cs_id == X86_INS_MOVABS)) {
		store_mem(e, address(e, in, &o->op[0]), o->op[0].size, operand(e, in, &o->op[1]));
		return;
	}
	if (in->cs_id == X86_INS_XCHG && o->n == 2 && o->op[0].kind == OPK_REG &&
	    o->op[1].kind == OPK_REG && o->op[0].reg < NGPR && o->op[1].reg < NGPR &&
	    o->op[0].size >= 4) {
		struct val a = get_reg(e, o->op[0].reg), b = get_reg(e, o->op[1].reg);

		set_reg(e, o->op[0].reg, b);
		set_reg(e, o->op[1].reg, a);
		return;
	}
	if (in->cs_id == X86_INS_CDQE) {
		set_reg(e, DREG_RAX, get_reg(e, DREG_RAX));  /* sign extension: same value */
		return;
	}
	if (!dst_reg(o, &d) || o->op[0].size < 4) {
		clobber(e, in);
		if (o->n >= 1 && o->op[0].kind == OPK_MEM && (in->flags & INSN_F_STORE))
			e->n_stores = 0;
		return;
	}
	switch (in->cs_id) {
	case X86_INS_MOV:
	case X86_INS_MOVABS:
	case X86_INS_MOVSXD:
	case X86_INS_MOVSX:
	case X86_INS_MOVZX:
		v = o->n == 2 ? operand(e, in, &o->op[1]) : UNKNOWN;
		break;
	case X86_INS_LEA:
		v = o->n == 2 && o->op[1].kind == OPK_MEM ? address(e, in, &o->op[1]) : UNKNOWN;
		break;
	case X86_INS_ADD:
		v = o->n == 2 ? add(e, get_reg(e, d), operand(e, in, &o->op[1])) : UNKNOWN;
		break;
	case X86_INS_SUB:
		v = o->n == 2 ? add(e, get_reg(e, d), scale(operand(e, in, &o->op[1]), -1)) : UNKNOWN;
		break;
	case X86_INS_SHL:
		v = o->n == 2 && o->op[1].kind == OPK_IMM && o->op[1].imm >= 0 && o->op[1].imm < 8
			    ? scale(get_reg(e, d), 1ll << o->op[1].imm) : opaque(e);
		break;
	case X86_INS_AND:
		if (o->n == 2 && o->op[1].kind == OPK_IMM && o->op[1].imm >= 0 && o->op[1].imm < 65536) {
			int var = new_var(e, V_OPAQUE);

			if (var >= 0) {
				e->vars[var].bounded = true;
				e->vars[var].lo = 0;
				e->vars[var].hi = (uint64_t)o->op[1].imm;
			}
			v = of_var(var);
		} else {
			v = opaque(e);
		}
		break;
	case X86_INS_XOR:
		v = in->flags & INSN_F_ZERO_IDIOM ? konst(0, false) : opaque(e);
		break;
	default:
		clobber(e, in);
		return;
	}
	clobber(e, in);  /* implicit writes (cdq writes rdx, ...) */
	set_reg(e, d, v);
}

/* The index range of variable v (for a byte-table index: from the table's contents). */
static bool var_range(struct eval *e, int v, uint64_t *lo, uint64_t *hi, int depth)
{
	struct var *x = &e->vars[v];
	uint64_t ilo, ihi;
	uint8_t buf[256];
	unsigned max = 0;

	if (x->bounded) {
		*lo = x->lo;
		*hi = x->hi;
		return true;
	}
	if (x->kind != V_LOAD || x->size != 1 || depth > 2 || !e->read ||
	    !var_range(e, x->index, &ilo, &ihi, depth + 1) || ihi < ilo || ihi - ilo >= sizeof(buf))
		return false;
	if (e->read(e->ctx, x->table + ilo, buf, (size_t)(ihi - ilo + 1)))
		return false;
	for (uint64_t i = 0; i <= ihi - ilo; i++)
		if (buf[i] > max)
			max = buf[i];
	*lo = 0;
	*hi = max;
	return true;
}

static enum jumptab_result classify(struct eval *e, struct val t, struct jumptab *out)
{
	const struct var *x;

	if (t.known && !t.s) {
		out->table = (uint64_t)t.k;  /* lea rax, [rip + label]; jmp rax (or mov eax, imm) */
		return JT_CONST;
	}
	if (!t.known || t.s != 1 || t.v < 0)
		return e->need_reg >= 0 ? JT_NEED_BASE : JT_UNRESOLVED;
	x = &e->vars[t.v];
	if (x->kind != V_LOAD)
		return e->need_reg >= 0 ? JT_NEED_BASE : e->saw_index_load ? JT_UNRESOLVED : JT_TAIL;
	if (x->size == 8 && t.k == 0) {
		out->entsize = 8;
		out->relative = false;
	} else if (x->size == 4 && t.kaddr) {
		out->entsize = 4;
		out->relative = true;
		out->rel_base = (uint64_t)t.k;
	} else {
		return JT_UNRESOLVED;
	}
	out->table = x->table;
	if (!var_range(e, x->index, &out->lo, &out->hi, 0)) {
		out->lo = 1;
		out->hi = 0;
	}
	return JT_TABLE;
}

enum jumptab_result jumptab_analyse(const struct insn *w, const struct insn_ops *wops, size_t n,
				    const struct insn *jmp, const struct insn_ops *jops,
				    const struct jumptab_hint *hints, size_t n_hints,
				    int (*read)(void *ctx, uint64_t addr, void *buf, size_t size),
				    void *ctx, struct jumptab *out)
{
	struct eval *e = calloc(1, sizeof(*e));
	enum jumptab_result r;
	struct val t;

	memset(out, 0, sizeof(*out));
	if (!e)
		return JT_UNRESOLVED;
	e->need_reg = -1;
	e->read = read;
	e->ctx = ctx;
	for (size_t i = 0; i < n_hints; i++)
		set_reg(e, hints[i].reg, konst((int64_t)hints[i].value, true));
	for (size_t i = 0; i < n; i++)
		step(e, &w[i], &wops[i]);
	if (jops->n < 1) {
		free(e);
		return JT_UNRESOLVED;
	}
	if (jops->op[0].kind == OPK_MEM) {
		if (jops->op[0].base == DREG_PC && jops->op[0].index == DREG_NONE) {
			free(e);
			return JT_TAIL;  /* jmp [rip + slot]: through the GOT */
		}
		t = load_mem(e, address(e, jmp, &jops->op[0]), 8);
	} else if (jops->op[0].kind == OPK_REG) {
		t = get_reg(e, jops->op[0].reg);
	} else {
		t = UNKNOWN;
	}
	r = classify(e, t, out);
	if (r == JT_NEED_BASE) {
		out->need_reg = (unsigned)e->need_reg;
		out->fallback = e->saw_index_load || !t.known ? JT_UNRESOLVED : JT_TAIL;
	}
	free(e);
	return r;
}
