/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model/sched-prep.c - the static scheduler's instructions, prepared once
 * per procedure (model/sched-int.h): their registers (a memory operand's
 * address, the data), macro-fusion, their timing from the model with what
 * its table cannot say (loads, lea, scaled indices), memory operand texts
 * interned.
 */
#include "config.h"

#include <capstone/capstone.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "core/hash.h"
#include "core/idmap.h"
#include "core/xalloc.h"
#include "model/sched-int.h"

/* ---- registers ----------------------------------------------------------- */

static const char *const gpr_names[16][5] = {
	{ "rax", "eax", "ax", "al", "ah" },   { "rcx", "ecx", "cx", "cl", "ch" },
	{ "rdx", "edx", "dx", "dl", "dh" },   { "rbx", "ebx", "bx", "bl", "bh" },
	{ "rsp", "esp", "sp", "spl", NULL },  { "rbp", "ebp", "bp", "bpl", NULL },
	{ "rsi", "esi", "si", "sil", NULL },  { "rdi", "edi", "di", "dil", NULL },
	{ "r8", "r8d", "r8w", "r8b", NULL },  { "r9", "r9d", "r9w", "r9b", NULL },
	{ "r10", "r10d", "r10w", "r10b", NULL }, { "r11", "r11d", "r11w", "r11b", NULL },
	{ "r12", "r12d", "r12w", "r12b", NULL }, { "r13", "r13d", "r13w", "r13b", NULL },
	{ "r14", "r14d", "r14w", "r14b", NULL }, { "r15", "r15d", "r15w", "r15b", NULL },
};

const char *sched_reg_name(unsigned reg)
{
	static const char *const vec[32] = {
		"xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
		"xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15",
		"xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23",
		"xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31",
	};
	static const char *const mask[8] = { "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7" };

	if (reg < 16)
		return gpr_names[reg][0];
	switch (reg) {
	case DREG_PC: return "rip";
	case DREG_FLAGS: return "flags";
	case DREG_X87: return "st";
	case DREG_MXCSR: return "mxcsr";
	case DREG_SEG: return "seg";
	}
	if (reg >= DREG_V0 && reg < DREG_V0 + 32)
		return vec[reg - DREG_V0];
	if (reg >= DREG_K0 && reg < DREG_K0 + 8)
		return mask[reg - DREG_K0];
	return "?";
}

/* The normalised register named s[0..len), or -1. */
static int x86_reg_number(const char *s, size_t len)
{
	char name[8];

	if (len == 0 || len >= sizeof(name))
		return -1;
	memcpy(name, s, len);
	name[len] = 0;
	for (unsigned r = 0; r < 16; r++)
		for (unsigned k = 0; k < 5; k++)
			if (gpr_names[r][k] && gpr_names[r][k][0] == name[0] &&
			    !strcmp(gpr_names[r][k], name))
				return (int)r;
	if (len >= 4 && (!strncmp(name, "xmm", 3) || !strncmp(name, "ymm", 3) ||
			 !strncmp(name, "zmm", 3)) && isdigit((unsigned char)name[3]))
		return DREG_V0 + atoi(name + 3);
	return -1;
}

/*
 * The memory operand of an Intel-syntax text: the text between the
 * brackets into mem (empty if none) and its registers into addr.
 */
static void parse_mem(const char *text, char *mem, size_t memsz, struct regset *addr)
{
	const char *open = strchr(text, '['), *close = open ? strchr(open, ']') : NULL;
	size_t n;

	memset(addr, 0, sizeof(*addr));
	mem[0] = 0;
	if (!open || !close)
		return;
	n = (size_t)(close - open - 1);
	if (n >= memsz)
		n = memsz - 1;
	memcpy(mem, open + 1, n);
	mem[n] = 0;
	for (const char *p = open + 1; p < close;) {
		if (isalpha((unsigned char)*p)) {
			const char *q = p;
			int r;

			while (q < close && isalnum((unsigned char)*q))
				q++;
			r = x86_reg_number(p, (size_t)(q - p));
			if (r >= 0)
				regset_add(addr, (unsigned)r);
			p = q;
		} else {
			p++;
		}
	}
}

/* ---- fusion ----------------------------------------------------------------- */

enum jcc_kind { JCC_NONE, JCC_OSP, JCC_CARRY, JCC_ZERO, JCC_SIGNED };

static enum jcc_kind jcc_kind(unsigned id)
{
	switch (id) {
	case X86_INS_JO: case X86_INS_JNO: case X86_INS_JS: case X86_INS_JNS:
	case X86_INS_JP: case X86_INS_JNP:
		return JCC_OSP;
	case X86_INS_JB: case X86_INS_JAE: case X86_INS_JBE: case X86_INS_JA:
		return JCC_CARRY;
	case X86_INS_JE: case X86_INS_JNE:
		return JCC_ZERO;
	case X86_INS_JL: case X86_INS_JGE: case X86_INS_JLE: case X86_INS_JG:
		return JCC_SIGNED;
	default:
		return JCC_NONE;
	}
}

static bool sig_has(unsigned opsig, enum insn_opkind k)
{
	for (unsigned i = 0; i < 4; i++)
		if ((opsig >> (2 * i) & 3) == k)
			return true;
	return false;
}

/* Sandy Bridge..Skylake ([corsix]): no fusion with a memory operand and an immediate. */
static bool fuses_intel(unsigned id, enum jcc_kind j, unsigned opsig)
{
	if (sig_has(opsig, OPK_MEM) && sig_has(opsig, OPK_IMM))
		return false;
	switch (id) {
	case X86_INS_TEST: case X86_INS_AND:
		return true;
	case X86_INS_CMP: case X86_INS_ADD: case X86_INS_SUB:
		return j != JCC_OSP;
	case X86_INS_INC: case X86_INS_DEC:
		return j == JCC_ZERO || j == JCC_SIGNED;
	default:
		return false;
	}
}

/* Zen 3 and later ([corsix]): these with any flag-testing jcc. */
static bool fuses_zen3(unsigned id)
{
	switch (id) {
	case X86_INS_TEST: case X86_INS_AND: case X86_INS_OR: case X86_INS_XOR:
	case X86_INS_CMP: case X86_INS_ADD: case X86_INS_SUB: case X86_INS_INC: case X86_INS_DEC:
		return true;
	default:
		return false;
	}
}

bool sched_macro_fused(const struct cpu_model *m, const struct insn *first,
			const struct insn *jcc)
{
	enum jcc_kind j;

	if (m->arch != ARCH_X86_64 || jcc->kind != INSN_CJUMP || first->kind != INSN_OTHER)
		return false;
	if (first->addr + first->len != jcc->addr || (first->flags & INSN_F_LOCK))
		return false;
	j = jcc_kind(jcc->cs_id);
	if (j == JCC_NONE || !regset_has(&first->writes, DREG_FLAGS))
		return false;
	switch (m->fusion) {
	case FUSION_INTEL_SNB:
		return fuses_intel(first->cs_id, j, first->opsig);
	case FUSION_AMD_ZEN3:
		return fuses_zen3(first->cs_id);
	default:
		return false;
	}
}

/* ---- per-instruction preparation ---------------------------------------------- */

static bool is_stack_op(unsigned id)
{
	return id == X86_INS_PUSH || id == X86_INS_POP || id == X86_INS_CALL || id == X86_INS_RET;
}

static void prepare_regs(const struct cpu_model *m, struct proto *p, char *mem, size_t memsz)
{
	const struct insn *in = p->in;

	mem[0] = 0;
	if (sig_has(in->opsig, OPK_MEM) || (p->t.flags & (ME_LOAD | ME_STORE)))
		parse_mem(in->text, mem, memsz, &p->addr);
	p->data = in->reads;
	p->data.w[0] &= ~p->addr.w[0];
	p->data.w[1] &= ~p->addr.w[1];
	p->stack_op = m->stack_engine && m->arch == ARCH_X86_64 && is_stack_op(in->cs_id);
	if (p->stack_op) {
		p->addr.w[0] &= ~(1ull << DREG_RSP);
		p->data.w[0] &= ~(1ull << DREG_RSP);
	}
	if (in->flags & INSN_F_ZERO_IDIOM || in->flags & INSN_F_NOP) {
		memset(&p->addr, 0, sizeof(p->addr));
		memset(&p->data, 0, sizeof(p->data));
	}
	p->data.w[DREG_PC >> 6] &= ~(1ull << (DREG_PC & 63));
	p->addr.w[DREG_PC >> 6] &= ~(1ull << (DREG_PC & 63));
}

/* The part of a load's latency spent loading (the rest is the operation). */
static unsigned load_part(const struct cpu_model *m, const struct proto *p)
{
	unsigned ld;

	if (!(p->t.flags & ME_LOAD))
		return 0;
	if (p->t.fu == FU_LOAD || p->t.fu == FU_BRANCH)
		return p->t.latency;
	ld = p->in->opsize >= 16 ? m->vec_load_latency : m->load_latency;
	return ld < p->t.latency ? ld : p->t.latency;
}

/* The terms of a memory operand's text: "r15 + rsi + 0x10" has 3. */
static unsigned mem_terms(const char *mem)
{
	unsigned n = *mem ? 1 : 0;

	for (const char *c = mem + 1; *mem && *c; c++)
		if ((*c == '+' || *c == '-') && c[-1] == ' ')
			n++;
	return n;
}

/*
 * What the table's key (no addressing mode) cannot say: a load through a
 * scaled index takes m->scaled_index_latency more.  Added in a loop's
 * steady state only, where a recurrence through the load shows its whole
 * latency; a block scheduled cold already overstates the latency of its
 * loads (the core ran them ahead of entry), and adding to it made those
 * estimates worse (docs/analysis.md, "Accuracy").
 */
static unsigned address_latency(const struct cpu_model *m, const struct proto *p, const char *mem)
{
	if (p->load_lat && m->scaled_index_latency &&
	    (strchr(mem, '*') || (m->index3_latency && mem_terms(mem) >= 3)))
		return m->scaled_index_latency;
	return 0;
}

/*
 * A lea computes on an ALU, which llvm-mca's znver3 table does not say
 * and its Golden Cove tables put on one port only (m->lea_units,
 * m->lea_units_replace); with three components (base, index, displacement) it is
 * slower and, on Zen, two ops (m->lea3_latency, m->lea3_units).
 */
static void lea_timing(const struct cpu_model *m, struct proto *p, const char *mem)
{
	struct model_timing *t = &p->t;

	if (p->in->cs_id != X86_INS_LEA || (t->flags & (ME_LOAD | ME_STORE)))
		return;
	if (m->lea_units && (!t->n_groups || m->lea_units_replace)) {
		t->groups[0] = (struct model_unit_group){ m->lea_units, 1 };
		t->n_groups = 1;
	}
	if (!m->lea3_latency || mem_terms(mem) < 3)
		return;
	if (t->latency < m->lea3_latency)
		t->latency = m->lea3_latency;
	if (m->lea3_units && t->n_groups < MODEL_MAX_GROUPS) {
		t->groups[t->n_groups++] = (struct model_unit_group){
			m->lea3_units, (uint8_t)(m->lea3_cycles ? m->lea3_cycles : 1) };
		t->uops++;
	}
}

/* ---- prepared instructions ------------------------------------------------------ */

static uint32_t intern_mem(struct sched_prep *sp, const char *mem)
{
	uint64_t h;

	if (!mem[0])
		return 0;
	h = hash_bytes(HASH_FNV_INIT, mem, strlen(mem));
	for (uint32_t id = idmap_first(&sp->mems, h); id != IDMAP_NONE; id = idmap_next(&sp->mems, id))
		if (!strcmp(sp->mem_text[id], mem))
			return id + 1;
	ALLOC_GROW(sp->mem_text, sp->n_mem + 1, sp->mem_alloc);
	memcpy(sp->mem_text[sp->n_mem], mem, MEM_TEXT);
	idmap_add(&sp->mems, h, (uint32_t)sp->n_mem);
	return (uint32_t)++sp->n_mem;
}

static void prepare(struct sched_prep *sp, struct proto *p, const struct insn *in)
{
	const struct cpu_model *m = sp->m;
	char mem[MEM_TEXT];

	memset(p, 0, sizeof(*p));
	p->in = in;
	if (m->arch == ARCH_X86_64 && in->cs_id >= MODEL_X86_NIDS) {
		p->bad = true;
		return;
	}
	model_lookup(m, in, &p->t);
	if (p->t.fu == FU_BRANCH && !(p->t.flags & ME_LOAD))
		p->t.latency = 1;  /* resolves in a cycle; llvm-mca's 100 for calls is a placeholder */
	memset(mem, 0, sizeof(mem));
	prepare_regs(m, p, mem, sizeof(mem));
	p->mem = intern_mem(sp, mem);
	p->serial = p->t.fu == FU_SYSTEM;
	p->call = in->kind == INSN_CALL || in->kind == INSN_ICALL;
	p->uncertain = p->t.match == MODEL_DEFAULT || p->t.fu == FU_STRING ||
		       p->t.fu == FU_SYSTEM || (in->flags & INSN_F_REP) ||
		       ((p->t.flags & ME_UNMODELED) && p->t.latency >= 100);
	/* a locked op needs all its operands before it starts (no early load) */
	p->load_lat = (in->flags & INSN_F_LOCK) ? 0 : load_part(m, p);
	p->loop_extra = address_latency(m, p, mem);
	lea_timing(m, p, mem);
	p->renamed = p->t.eliminated && !(in->flags & (INSN_F_ZERO_IDIOM | INSN_F_NOP));
	p->store = (p->t.flags & ME_STORE) && (p->mem || (in->flags & INSN_F_RIP_REL));
	p->writes = in->writes;
	p->writes.w[DREG_PC >> 6] &= ~(1ull << (DREG_PC & 63));
	if (p->stack_op)
		p->writes.w[DREG_RSP >> 6] &= ~(1ull << (DREG_RSP & 63));
}

void sched_prep_add(struct sched_prep *sp, const struct insn *insns, size_t n)
{
	ALLOC_GROW(sp->p, sp->n + n + 1, sp->alloc);
	for (size_t i = 0; i < n; i++)
		prepare(sp, &sp->p[sp->n++], &insns[i]);
}

struct sched_prep *sched_prep_new(const struct cpu_model *m, const struct insn *insns, size_t n)
{
	struct sched_prep *sp = xcalloc(1, sizeof(*sp));

	sp->m = m;
	sp->mems = (struct idmap)IDMAP_INIT;
	sched_prep_add(sp, insns, n);
	return sp;
}

void sched_prep_timing(const struct sched_prep *sp, size_t i, struct model_timing *t,
		       unsigned *loop_extra)
{
	if (i >= sp->n)
		BUG("sched_prep_timing: instruction %zu of %zu", i, sp->n);
	*t = sp->p[i].t;
	*loop_extra = sp->p[i].loop_extra;
}

void sched_prep_full_runs(struct sched_prep *sp, bool full)
{
	sp->full_runs = full;
}

void sched_prep_free(struct sched_prep *sp)
{
	if (!sp)
		return;
	free(sp->p);
	idmap_release(&sp->mems);
	free(sp->mem_text);
	free(sp->buf.e);
	free(sp->buf.seq);
	free(sp->buf.slots);
	free(sp->buf.busy);
	free(sp->buf.holder);
	free(sp->buf.dig);
	free(sp->buf.snap.v);
	free(sp->buf.now.v);
	for (unsigned k = 0; k < ARRAY_SIZE(sp->buf.ctx); k++)
		sched_ctx_free(sp->buf.ctx[k]);
	free(sp);
}
