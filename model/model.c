/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model/model.c - table lookup with the models' rules, and the choice of a
 * model from the CPU an epoch was recorded on.  The models themselves are
 * in model/models.c, the tables in model/table-*.c.
 */
#include "config.h"

#include <capstone/capstone.h>
#include <string.h>

#include "core/search.h"
#include "core/xalloc.h"
#include "db/meta.h"
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
	    eliminated_move(m, in, t)) {
		t->eliminated = true;
		t->latency = 0;
		t->n_groups = 0;
		t->rthroughput = 0;
		if (in->flags & INSN_F_NOP)
			t->fu = FU_NONE;
		t->flags &= ~ME_UNMODELED;
	}
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

/* ---- choosing a model ------------------------------------------------------ */

/* AMD family 19h model ranges of Zen 4 (Genoa, Raphael, Phoenix, Bergamo/Siena). */
static bool amd_zen4(int model)
{
	return (model >= 0x10 && model <= 0x1f) || (model >= 0x60 && model <= 0x7f) ||
	       (model >= 0xa0 && model <= 0xaf);
}

/*
 * AMD family 1Ah model ranges of Zen 5 (Linux's): Turin, Granite Ridge and
 * Strix Halo have 512-bit vector pipes, Strix and Krackan Point 256-bit ones.
 */
static const char *amd_zen5(int model)
{
	if ((model >= 0x20 && model <= 0x2f) || (model >= 0x60 && model <= 0x6f))
		return "znver5-256";
	if ((model >= 0x00 && model <= 0x1f) || (model >= 0x40 && model <= 0x4f) ||
	    (model >= 0x70 && model <= 0x7f))
		return "znver5";
	return NULL;
}

static const struct cpu_model *amd_model(int family, int model, bool *exact)
{
	const char *zen5;

	if (family == 0x19) {
		*exact = true;
		return cpu_model_by_name(amd_zen4(model) ? "znver4" : "znver3");
	}
	if (family == 0x1a) {
		zen5 = amd_zen5(model);
		*exact = zen5 != NULL;
		return cpu_model_by_name(zen5 ? zen5 : "znver5");  /* later: the closest known */
	}
	return NULL;
}

/* Intel family 6 models of the Skylake family (client, server, and their refreshes). */
static const struct cpu_model *intel_model(int family, int model, bool *exact)
{
	static const int skylake_family[] = { 0x4e, 0x5e, 0x55, 0x8e, 0x9e, 0xa5, 0xa6 };
	static const int later[] = { 0x66, 0x6a, 0x6c, 0x7d, 0x7e, 0x8c, 0x8d, 0xa7, 0x8f,
				     0x97, 0x9a, 0xb7, 0xba, 0xbf, 0xcf };

	if (family != 6)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(skylake_family); i++)
		if (model == skylake_family[i]) {
			*exact = true;
			return cpu_model_by_name("skylake");
		}
	for (size_t i = 0; i < ARRAY_SIZE(later); i++)
		if (model == later[i])  /* Ice Lake and later: Skylake is the closest */
			return cpu_model_by_name("skylake");
	return NULL;
}

const struct cpu_model *cpu_model_for_cpu(const char *vendor, int family, int model,
					  bool *exact)
{
	const struct cpu_model *m = NULL;
	bool dummy;

	if (!exact)
		exact = &dummy;
	*exact = false;
	if (vendor && !strcmp(vendor, "AuthenticAMD"))
		m = amd_model(family, model, exact);
	else if (vendor && !strcmp(vendor, "GenuineIntel"))
		m = intel_model(family, model, exact);
	return m ? m : cpu_model_generic();
}

const struct cpu_model *cpu_model_for(const struct epoch_meta *meta, bool *exact)
{
	if (!meta) {
		if (exact)
			*exact = false;
		return cpu_model_generic();
	}
	return cpu_model_for_cpu(meta->cpu_vendor, meta->cpu_family, meta->cpu_model_id, exact);
}

const struct cpu_model *cpu_model_by_name(const char *name)
{
	for (size_t i = 0; name && cpu_models[i]; i++)
		if (!strcmp(cpu_models[i]->name, name))
			return cpu_models[i];
	return NULL;
}

const struct cpu_model *cpu_model_generic(void)
{
	return cpu_model_by_name("generic-x86-64");
}
