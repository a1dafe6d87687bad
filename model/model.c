/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model/model.c - table lookup with the models' rules.  The models
 * themselves are in model/models.c, the tables in model/table-*.c, the
 * choice of a model for an epoch in model/choose.c.
 */
#include "config.h"

#include <capstone/capstone.h>
#include <stdlib.h>
#include <string.h>

#include "core/search.h"
#include "core/xalloc.h"
#include "model/model.h"

/* The tables are keyed by capstone 4.0's instruction ids: another capstone
 * numbers them differently and needs model/gen/generate.sh run again. */
_Static_assert(X86_INS_ENDING == MODEL_X86_NIDS,
	       "model tables were generated for another capstone: run model/gen/generate.sh");

const char *model_fu_name(enum model_fu fu)
{
	static const char *const names[] = {
#define MODEL_FU_STR(name, str) str,
		MODEL_FU_LIST(MODEL_FU_STR)
#undef MODEL_FU_STR
	};

	return (unsigned)fu < ARRAY_SIZE(names) ? names[fu] : "?";
}

const char *model_unit_name(const struct cpu_model *m, unsigned u)
{
	if (m && m->units && u < m->n_units)
		return m->units[u];
	if (m && m->table && u < m->table->n_units)
		return m->table->units[u];
	return "?";
}

unsigned model_n_units(const struct cpu_model *m)
{
	if (m->units)
		return m->n_units;
	return m->table ? (unsigned)m->table->n_units : 0;
}

enum model_fu model_x86_id_class(unsigned cs_id)
{
	if (cs_id == 0 || cs_id >= MODEL_X86_NIDS)
		return FU_ALU;
	return (enum model_fu)(model_x86_class[cs_id] & ~MODEL_X86_MOVE);
}

static int key_cmp(const struct model_entry *e, unsigned id, unsigned opsig, unsigned opsize)
{
	if (e->cs_id != id)
		return e->cs_id < id ? -1 : 1;
	if (e->opsig != opsig)
		return e->opsig < opsig ? -1 : 1;
	if (e->opsize != opsize)
		return e->opsize < opsize ? -1 : 1;
	return 0;
}

/* Index of the first entry >= key. */
static size_t lower_bound(const struct model_table *t, unsigned id, unsigned opsig,
			  unsigned opsize)
{
	return LOWER_BOUND(t->n_entries, k, key_cmp(&t->entries[k], id, opsig, opsize) < 0);
}

const struct model_entry *model_table_find(const struct model_table *t, unsigned cs_id,
					   unsigned opsig, unsigned opsize)
{
	size_t i;

	if (!t)
		return NULL;
	i = lower_bound(t, cs_id, opsig, opsize);
	if (i < t->n_entries && !key_cmp(&t->entries[i], cs_id, opsig, opsize))
		return &t->entries[i];
	return NULL;
}

static bool sig_has_mem(unsigned opsig)
{
	for (unsigned i = 0; i < 4; i++)
		if ((opsig >> (2 * i) & 3) == OPK_MEM)
			return true;
	return false;
}

static bool sig_has_regmem(unsigned opsig)
{
	for (unsigned i = 0; i < 4; i++) {
		unsigned k = opsig >> (2 * i) & 3;

		if (k == OPK_REG || k == OPK_MEM)
			return true;
	}
	return false;
}

/*
 * Distance between two forms of one instruction: a different operand
 * signature costs more than a different size, and losing or gaining a
 * memory operand most (its latency includes a load or not).
 */
static unsigned form_distance(const struct model_entry *e, unsigned opsig, unsigned opsize)
{
	unsigned d = 0;

	if (sig_has_mem(e->opsig) != sig_has_mem(opsig))
		d += 1000;
	if (e->opsig != opsig)
		d += 100;
	d += e->opsize > opsize ? e->opsize - opsize : opsize - e->opsize;
	return d;
}

/* The nearest form of the same instruction, or NULL if the table has none. */
static const struct model_entry *find_near(const struct model_table *t, const struct insn *in)
{
	const struct model_entry *best = NULL;
	unsigned best_d = ~0u;

	for (size_t i = lower_bound(t, in->cs_id, 0, 0);
	     i < t->n_entries && t->entries[i].cs_id == in->cs_id; i++) {
		unsigned d = form_distance(&t->entries[i], in->opsig, in->opsize);

		if (d < best_d) {
			best_d = d;
			best = &t->entries[i];
		}
	}
	return best;
}

static void timing_from_entry(struct model_timing *t, const struct model_entry *e)
{
	t->latency = e->latency;
	t->uops = e->uops;
	t->rthroughput = e->rthroughput / 100.0;
	t->fu = (enum model_fu)e->fu;
	t->flags = e->flags;
	t->n_groups = e->n_groups;
	memcpy(t->groups, e->groups, sizeof(t->groups));
}

/* 512-bit ops as two 256-bit halves: the units are busy twice as long. */
static void double_pump(struct model_timing *t)
{
	t->rthroughput *= 2;
	for (unsigned g = 0; g < t->n_groups; g++)
		t->groups[g].cycles = (uint8_t)(t->groups[g].cycles * 2);
}

/* Class default for an instruction no table has. */
static void timing_default(const struct cpu_model *m, const struct insn *in,
			   struct model_timing *t)
{
	unsigned char c = in->cs_id < MODEL_X86_NIDS ? model_x86_class[in->cs_id] : FU_ALU;
	enum model_fu fu = (enum model_fu)(c & ~MODEL_X86_MOVE);
	const struct model_default *d;

	if (m->arch != ARCH_X86_64)
		fu = (in->flags & INSN_F_LOAD) ? FU_LOAD : (in->flags & INSN_F_STORE) ? FU_STORE :
		     insn_is_control(in) ? FU_BRANCH : FU_ALU;
	else if ((c & MODEL_X86_MOVE) && (in->flags & INSN_F_LOAD))
		fu = FU_LOAD;
	else if ((c & MODEL_X86_MOVE) && (in->flags & INSN_F_STORE))
		fu = FU_STORE;
	d = m->table ? &m->table->defaults[fu] : NULL;
	t->latency = d ? d->latency : 1;
	t->uops = d && d->uops ? d->uops : 1;
	t->rthroughput = d ? d->rthroughput / 100.0 : 1;
	t->fu = fu;
	t->flags = 0;
	t->n_groups = 0;
	if (in->flags & INSN_F_LOAD) {
		t->flags |= ME_LOAD;
		if (fu != FU_LOAD)
			t->latency += in->opsize >= 16 ? m->vec_load_latency : m->load_latency;
	}
	if (in->flags & INSN_F_STORE)
		t->flags |= ME_STORE;
}

/* A 512-bit form on a model that runs it as two 256-bit halves. */
static bool double_pumped(const struct cpu_model *m, const struct insn *in,
			  struct model_timing *t)
{
	const struct model_entry *e;

	if (!m->zmm_double_pumped || in->opsize != 64)
		return false;
	e = model_table_find(m->table, in->cs_id, in->opsig, 32);
	if (!e)
		return false;
	timing_from_entry(t, e);
	double_pump(t);
	return true;
}

/*
 * The exact entry.  Tables key immediate-only forms (jcc, call, push imm)
 * with size 0, as insn.h defines opsize (widest register or memory
 * operand); a decoder that counts the immediate's size still finds them.
 */
static const struct model_entry *find_exact(const struct model_table *t, const struct insn *in)
{
	const struct model_entry *e = model_table_find(t, in->cs_id, in->opsig, in->opsize);

	if (!e && in->opsize && !sig_has_regmem(in->opsig))
		e = model_table_find(t, in->cs_id, in->opsig, 0);
	return e;
}

static enum model_match find_timing(const struct cpu_model *m, const struct insn *in,
				    struct model_timing *t)
{
	const struct model_entry *e = find_exact(m->table, in);

	if (e) {
		timing_from_entry(t, e);
		return MODEL_EXACT;
	}
	if (m->table && double_pumped(m, in, t))
		return MODEL_NEAR;
	e = m->table ? find_near(m->table, in) : NULL;
	if (e) {
		timing_from_entry(t, e);
		if (m->zmm_double_pumped && in->opsize == 64 && e->opsize < 64)
			double_pump(t);
		return MODEL_NEAR;
	}
	timing_default(m, in, t);
	return MODEL_DEFAULT;
}

/* Full-register moves that cores with move elimination rename away. */
static bool renamable_move(unsigned id, unsigned opsize)
{
	switch (id) {
	case X86_INS_MOV:
		return opsize >= 4;  /* 8- and 16-bit moves merge into the old value */
	case X86_INS_MOVAPS: case X86_INS_MOVAPD: case X86_INS_MOVUPS: case X86_INS_MOVUPD:
	case X86_INS_MOVDQA: case X86_INS_MOVDQU: case X86_INS_VMOVAPS: case X86_INS_VMOVAPD:
	case X86_INS_VMOVUPS: case X86_INS_VMOVUPD: case X86_INS_VMOVDQA: case X86_INS_VMOVDQU:
		return true;
	default:
		return false;
	}
}

/*
 * A register-to-register move the model renames away: the table says 0
 * cycles (llvm-mca models elimination on znver3), or it is a full-register
 * move (llvm-mca's Intel models time those as 1).
 */
static bool eliminated_move(const struct cpu_model *m, const struct insn *in,
			    const struct model_timing *t)
{
	if (!m->move_elimination || in->nops != 2 || in->opsig != (OPK_REG | OPK_REG << 2) ||
	    (t->flags & ME_UNMODELED))
		return false;
	return t->latency == 0 || (m->arch == ARCH_X86_64 && renamable_move(in->cs_id, in->opsize));
}

/*
 * A dependent add of a small immediate the core folds at rename (Golden
 * Cove: add/sub r64, imm8 and inc/dec r64, which llvm-mca-19 times as no
 * micro-op): no unit and no latency, the register passes its source's
 * timing on.  The immediate's value, not its encoding, decides.
 */
static bool folded_add_imm(const struct cpu_model *m, const struct insn *in)
{
	const char *c;
	char *end;
	long long v;

	if (!m->fold_add_imm || m->arch != ARCH_X86_64 || in->opsize != 8 ||
	    (in->flags & (INSN_F_LOCK | INSN_F_LOAD | INSN_F_STORE)))
		return false;
	switch (in->cs_id) {
	case X86_INS_INC: case X86_INS_DEC:
		return in->opsig == OPK_REG;
	case X86_INS_ADD: case X86_INS_SUB:
		if (in->opsig != (OPK_REG | OPK_IMM << 2) || !(c = strrchr(in->text, ',')))
			return false;
		v = strtoll(c + 1, &end, 0);
		return end != c + 1 && !*end && v >= -128 && v <= 127;
	default:
		return false;
	}
}

/*
 * On a folding model the table times add/sub r64, imm as no micro-op,
 * whatever the immediate (llvm-mca encodes its text with the shortest
 * one): an add the core does not fold runs as the register form does.
 */
static void unfolded_add_imm(const struct cpu_model *m, const struct insn *in,
			     struct model_timing *t)
{
	const struct model_entry *e;

	if (!m->fold_add_imm || t->n_groups || t->eliminated || sig_has_mem(in->opsig) ||
	    (in->cs_id != X86_INS_ADD && in->cs_id != X86_INS_SUB))
		return;
	e = model_table_find(m->table, in->cs_id, OPK_REG | OPK_REG << 2, in->opsize);
	if (!e)
		return;
	t->uops = e->uops;
	t->rthroughput = e->rthroughput / 100.0;
	t->n_groups = e->n_groups;
	memcpy(t->groups, e->groups, sizeof(t->groups));
}

static void apply_override(const struct cpu_model *m, const struct insn *in,
			   struct model_timing *t)
{
	for (size_t i = 0; i < m->n_overrides; i++) {
		const struct model_override *o = &m->overrides[i];
		unsigned busy = (o->rthroughput + 50) / 100;

		if (o->cs_id != in->cs_id || t->match == MODEL_DEFAULT ||
		    (o->opsig && o->opsig != in->opsig))
			continue;
		t->latency = o->latency + (!(t->flags & ME_LOAD) ? 0 :
					   in->opsize >= 16 ? m->vec_load_latency : m->load_latency);
		t->rthroughput = o->rthroughput / 100.0;
		for (unsigned g = 0; g < t->n_groups; g++)
			if (t->groups[g].cycles > busy)
				t->groups[g].cycles = (uint8_t)(busy ? busy : 1);
		return;
	}
}

static bool reads_or_writes(const struct regset *rs, unsigned first, unsigned count)
{
	for (unsigned r = first; r < first + count; r++)
		if (regset_has(rs, r))
			return true;
	return false;
}

/* movd/movq between a general and a vector register: the crossing's latency. */
static void cross_domain(const struct cpu_model *m, const struct insn *in,
			 struct model_timing *t)
{
	unsigned lat = 0;

	if (m->arch != ARCH_X86_64 || in->cs_id >= MODEL_X86_NIDS ||
	    !(model_x86_class[in->cs_id] & MODEL_X86_MOVE) || in->opsig != (OPK_REG | OPK_REG << 2))
		return;
	if (reads_or_writes(&in->reads, DREG_GPR0, 16) && reads_or_writes(&in->writes, DREG_V0, 32))
		lat = m->gpr_to_vec_latency;
	else if (reads_or_writes(&in->reads, DREG_V0, 32) && reads_or_writes(&in->writes, DREG_GPR0, 16))
		lat = m->vec_to_gpr_latency;
	if (lat > t->latency)
		t->latency = lat;
}

/* A wider core: unit groups of the table spread over the model's added units. */
static void widen_units(const struct cpu_model *m, struct model_timing *t)
{
	for (unsigned g = 0; g < t->n_groups; g++)
		for (size_t k = 0; k < m->n_widen; k++)
			if (t->groups[g].mask == m->widen[k].table) {
				t->groups[g].mask = m->widen[k].model;
				break;
			}
}

/*
 * Vector latencies that differ from the table's CPU as a class: FP add/sub
 * (3 cycles in the table) and the one-cycle vector operations that write a
 * vector register.  A memory form keeps its load part.
 */
static void vector_latency(const struct cpu_model *m, const struct insn *in,
			   struct model_timing *t)
{
	unsigned ld = (t->flags & ME_LOAD) ? m->vec_load_latency : 0, op;

	if (m->arch != ARCH_X86_64 || t->eliminated || t->latency < ld ||
	    !reads_or_writes(&in->writes, DREG_V0, 32))
		return;
	op = t->latency - ld;
	if (m->fp_add_latency && t->fu == FU_FP_ADD && op == 3)
		t->latency = ld + m->fp_add_latency;
	else if (m->vec_simple_latency && op == 1 &&
		 (t->fu == FU_VEC || t->fu == FU_SHUFFLE || t->fu == FU_FP_ADD) &&
		 !(in->cs_id < MODEL_X86_NIDS && (model_x86_class[in->cs_id] & MODEL_X86_MOVE)))
		t->latency = ld + m->vec_simple_latency;
}

static void apply_rules(const struct cpu_model *m, const struct insn *in, struct model_timing *t)
{
	apply_override(m, in, t);
	widen_units(m, t);
	cross_domain(m, in, t);
	if (t->fu == FU_LOAD && (t->flags & ME_LOAD) && m->table_load_bias && t->latency > 1) {
		int lat = (int)t->latency - m->table_load_bias;

		t->latency = lat < 1 ? 1 : (unsigned)lat;
	}
	if ((in->flags & INSN_F_LOCK) && t->latency < m->lock_latency)
		t->latency = m->lock_latency;
	if (m->microfusion && (t->flags & ME_LOAD) && t->uops >= 2)
		t->uops--;
	if (m->microfusion && (t->flags & ME_STORE) && (t->flags & ME_LOAD) && t->uops >= 3)
		t->uops--;
	if ((in->flags & (INSN_F_NOP | INSN_F_ZERO_IDIOM)) || t->fu == FU_NONE ||
	    eliminated_move(m, in, t) || folded_add_imm(m, in)) {
		t->eliminated = true;
		t->latency = 0;
		t->n_groups = 0;
		t->rthroughput = 0;
		if (in->flags & INSN_F_NOP)
			t->fu = FU_NONE;
		t->flags &= ~ME_UNMODELED;
	}
	unfolded_add_imm(m, in, t);
	vector_latency(m, in, t);
	if (!t->uops)
		t->uops = 1;
}

enum model_match model_lookup(const struct cpu_model *m, const struct insn *in,
			      struct model_timing *t)
{
	memset(t, 0, sizeof(*t));
	t->match = find_timing(m, in, t);
	apply_rules(m, in, t);
	return t->match;
}
