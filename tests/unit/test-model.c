/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of model/: the models, table lookups and the static basic-block
 * scheduler on small hand-built blocks with known schedules (the chooser:
 * test-model-choose.c). */
#include "config.h"

#include <capstone/capstone.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "collect/calib.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "disasm/decode.h"
#include "disasm/image.h"
#include "model/model.h"
#include "model/sched.h"
#include "tests/unit/own-image.h"

/* ---- building instructions by hand ---------------------------------------- */

#define SIG1(a) (OPK_##a)
#define SIG2(a, b) (OPK_##a | OPK_##b << 2)
#define SIG3(a, b, c) (OPK_##a | OPK_##b << 2 | OPK_##c << 4)
#define REGS(...) ((const int[]){ __VA_ARGS__, -1 })
#define NONE REGS(-1)

enum { RAX = DREG_RAX, RCX = DREG_RCX, RDX = DREG_RDX, RBX = DREG_RBX, RSP = DREG_RSP,
       RSI = DREG_RSI, RDI = DREG_RDI, R8 = DREG_R8, R9 = DREG_R9, R10 = DREG_R10,
       R11 = DREG_R11, R12 = DREG_R12, R13 = DREG_R13, FL = DREG_FLAGS, V0 = DREG_V0 };

static uint64_t next_addr = 0x1000;

/* An instruction at the next address (4 bytes long). */
static struct insn I(unsigned id, const char *text, unsigned opsig, unsigned nops,
		     unsigned opsize, const int *rd, const int *wr, unsigned flags)
{
	struct insn in;

	memset(&in, 0, sizeof(in));
	in.addr = next_addr;
	in.len = 4;
	next_addr += 4;
	in.kind = INSN_OTHER;
	in.cs_id = id;
	in.opsig = (uint8_t)opsig;
	in.nops = (uint8_t)nops;
	in.opsize = (uint8_t)opsize;
	in.flags = (uint16_t)flags;
	for (; *rd >= 0; rd++)
		regset_add(&in.reads, (unsigned)*rd);
	for (; *wr >= 0; wr++)
		regset_add(&in.writes, (unsigned)*wr);
	snprintf(in.text, sizeof(in.text), "%s", text);
	return in;
}

static struct insn add_rr(int dst, int src, const char *text)
{
	return I(X86_INS_ADD, text, SIG2(REG, REG), 2, 8, REGS(dst, src), REGS(dst, FL), 0);
}

static struct insn jcc(unsigned id, uint64_t target)
{
	struct insn in = I(id, "jne 0x1000", SIG1(IMM), 1, 0, REGS(FL), NONE, 0);

	in.kind = INSN_CJUMP;
	in.target = target;
	return in;
}

static const struct cpu_model *zen4(void)
{
	return cpu_model_by_name("znver4");
}

static void sched(const struct cpu_model *m, const struct insn *b, size_t n,
		  const struct sched_entry *e, struct block_schedule *s)
{
	assert_int_equal(schedule_block(m, b, n, e, s), 0);
}

static void dump(const struct block_schedule *s, const struct insn *b)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < s->n; i++) {
		strbuf_reset(&sb);
		sched_describe(s, i, &sb);
		printf("# %2zu %-28s D%-3d S%-3d C%-3d R%-3d %s\n", i, b[i].text, s->insn[i].dispatch,
		       s->insn[i].issue, s->insn[i].complete, s->insn[i].retire, sb.buf);
	}
	printf("# cycles %.2f, %u issue points\n", s->cycles, s->issue_points);
	strbuf_release(&sb);
}

static void models_are_sane(void **state)
{
	(void)state;

	for (size_t i = 0; cpu_models[i]; i++) {
		const struct cpu_model *m = cpu_models[i];

		assert_ptr_equal(cpu_model_by_name(m->name), m);
		assert_non_null(m->table);
		assert_true(m->dispatch_width >= 1 && m->retire_width >= 1 && m->rob_size >= 32);
		assert_int_equal(m->cache_line, 64);
		assert_true(m->int_dividers >= 1 && m->store_queue > 0 && m->load_latency >= 3);
		assert_true(m->description && m->provenance);
		/* the table is sorted and its unit masks name real units */
		for (size_t k = 1; k < m->table->n_entries; k++) {
			const struct model_entry *a = &m->table->entries[k - 1];
			const struct model_entry *b = &m->table->entries[k];

			assert_true(a->cs_id < b->cs_id ||
				    (a->cs_id == b->cs_id && (a->opsig < b->opsig ||
				     (a->opsig == b->opsig && a->opsize < b->opsize))));
			for (unsigned g = 0; g < b->n_groups; g++)
				assert_true(b->groups[g].mask >> m->table->n_units == 0);
		}
		/* a model's own units extend its table's; widened groups name them */
		assert_true(model_n_units(m) >= m->table->n_units && model_n_units(m) <= 32);
		assert_true(!m->units || m->n_units == model_n_units(m));
		for (size_t k = 0; k < m->n_widen; k++)
			assert_true(m->widen[k].table >> m->table->n_units == 0 &&
				    m->widen[k].model >> model_n_units(m) == 0 && m->widen[k].model);
		assert_true((m->lea_units | m->lea3_units) >> model_n_units(m) == 0);
		assert_true(m->taken_per_cycle >= 1);
	}
	assert_null(cpu_model_by_name("pentium4"));
}

/* ---- lookups ------------------------------------------------------------------ */

static void lookup_basic(void **state)
{
	const struct cpu_model *m = zen4();
	struct insn add = add_rr(RAX, RBX, "add rax, rbx");
	struct insn imul = I(X86_INS_IMUL, "imul rax, rcx", SIG2(REG, REG), 2, 8,
			     REGS(RAX, RCX), REGS(RAX, FL), 0);
	struct insn load = I(X86_INS_MOV, "mov rax, qword ptr [rbx]", SIG2(REG, MEM), 2, 8,
			     REGS(RBX), REGS(RAX), INSN_F_LOAD);
	struct insn addm = I(X86_INS_ADD, "add rax, qword ptr [rbx]", SIG2(REG, MEM), 2, 8,
			     REGS(RAX, RBX), REGS(RAX, FL), INSN_F_LOAD);
	struct insn divq = I(X86_INS_DIV, "div rcx", SIG1(REG), 1, 8, REGS(RAX, RDX, RCX),
			     REGS(RAX, RDX, FL), 0);
	struct model_timing t;
	(void)state;

	assert_int_equal(model_lookup(m, &add, &t), MODEL_EXACT);
	assert_int_equal(t.latency, 1);
	assert_int_equal(t.fu, FU_ALU);
	assert_true(t.rthroughput > 0.2 && t.rthroughput < 0.3);
	assert_int_equal(t.n_groups, 1);
	assert_int_equal(model_lookup(m, &imul, &t), MODEL_EXACT);
	assert_int_equal(t.latency, 3);
	assert_int_equal(t.fu, FU_MUL);
	assert_int_equal(model_lookup(m, &load, &t), MODEL_EXACT);
	assert_int_equal(t.latency, 4);  /* llvm-mca's 5, re-based to the measured 4 */
	assert_int_equal(t.fu, FU_LOAD);
	assert_true(t.flags & ME_LOAD);
	assert_int_equal(model_lookup(m, &addm, &t), MODEL_EXACT);
	assert_int_equal(t.latency, 5);  /* load 4 + add 1 */
	assert_int_equal(model_lookup(m, &divq, &t), MODEL_EXACT);
	assert_int_equal(t.fu, FU_DIV);
	assert_int_equal(t.latency, 10); /* Zen 4 override (measured) */
	assert_int_equal(model_lookup(cpu_model_by_name("znver3"), &divq, &t), MODEL_EXACT);
	assert_int_equal(t.latency, 17); /* llvm-mca znver3 */
	/* an immediate-only form is found whether or not the decoder counts the
	 * immediate's size in opsize */
	{
		struct insn j = jcc(X86_INS_JNE, 0x1000);

		assert_int_equal(model_lookup(m, &j, &t), MODEL_EXACT);
		assert_int_equal(t.fu, FU_BRANCH);
		j.opsize = 8;
		assert_int_equal(model_lookup(m, &j, &t), MODEL_EXACT);
	}
	assert_non_null(model_table_find(m->table, X86_INS_ADD, SIG2(REG, REG), 8));
	assert_null(model_table_find(m->table, X86_INS_ADD, SIG2(REG, REG), 3));
	assert_string_equal(model_fu_name(FU_FP_DIV), "fp-div");
	assert_string_equal(model_unit_name(m, 0), "Zn4ALU0");
	assert_string_equal(model_unit_name(m, 999), "?");
}

static void lookup_rules(void **state)
{
	const struct cpu_model *m = zen4();
	struct insn zero = I(X86_INS_XOR, "xor eax, eax", SIG2(REG, REG), 2, 4, REGS(RAX),
			     REGS(RAX, FL), INSN_F_ZERO_IDIOM);
	struct insn nop = I(X86_INS_NOP, "nop dword ptr [rax]", SIG1(MEM), 1, 4, REGS(RAX),
			    NONE, INSN_F_NOP);
	struct insn mov = I(X86_INS_MOV, "mov rax, rcx", SIG2(REG, REG), 2, 8, REGS(RCX),
			    REGS(RAX), 0);
	struct insn zmm = I(X86_INS_VADDPS, "vaddps zmm0, zmm1, zmm2", SIG3(REG, REG, REG), 3,
			    64, REGS(V0 + 1, V0 + 2), REGS(V0), 0);
	struct insn ymm = zmm;
	struct insn lockadd = I(X86_INS_ADD, "lock add qword ptr [rbx], rax", SIG2(MEM, REG), 2,
				8, REGS(RBX, RAX), REGS(FL), INSN_F_LOAD | INSN_F_STORE | INSN_F_LOCK);
	struct model_timing t, ty;
	(void)state;

	model_lookup(m, &zero, &t);
	assert_true(t.eliminated);
	assert_int_equal(t.latency, 0);
	assert_int_equal(t.n_groups, 0);
	model_lookup(m, &nop, &t);
	assert_true(t.eliminated);
	assert_int_equal(t.fu, FU_NONE);
	model_lookup(m, &mov, &t);
	assert_true(t.eliminated);    /* move elimination */
	ymm.opsize = 32;
	/* 512-bit operations on 256-bit pipes: Zen 4's table says so itself */
	assert_int_equal(model_lookup(m, &ymm, &ty), MODEL_EXACT);
	assert_int_equal(model_lookup(m, &zmm, &t), MODEL_EXACT);
	assert_int_equal(t.latency, ty.latency);
	assert_int_equal(t.groups[0].cycles, 2 * ty.groups[0].cycles);
	/* the znver3 table has no 512-bit forms: a double-pumped model takes the
	 * 256-bit form's, twice (mobile Zen 5); a full-width one as they are */
	{
		const struct cpu_model *z3 = cpu_model_by_name("znver3");
		const struct cpu_model *half = cpu_model_by_name("znver5-256");

		assert_int_equal(model_lookup(half, &ymm, &ty), MODEL_EXACT);
		assert_int_equal(model_lookup(half, &zmm, &t), MODEL_NEAR);
		assert_int_equal(t.latency, ty.latency);
		assert_true(t.rthroughput > 1.9 * ty.rthroughput);
		assert_int_equal(t.groups[0].cycles, 2 * ty.groups[0].cycles);
		assert_int_equal(model_lookup(z3, &ymm, &ty), MODEL_EXACT);
		assert_int_equal(model_lookup(z3, &zmm, &t), MODEL_NEAR);
		assert_int_equal(t.groups[0].cycles, ty.groups[0].cycles);
	}
	model_lookup(m, &lockadd, &t);
	assert_true(t.latency >= m->lock_latency);
}

/*
 * Zen 5 on the znver3 table: six ALUs, three multipliers, the measured
 * latencies (model/gen/measure.c on family 1Ah model 2), full-width 512-bit
 * operations except on the mobile variant.
 */
static void lookup_zen5(void **state)
{
	const struct cpu_model *m = cpu_model_by_name("znver5"), *m256 = cpu_model_by_name("znver5-256");
	struct insn add = add_rr(RAX, RBX, "add rax, rbx");
	struct insn imul = I(X86_INS_IMUL, "imul rax, rcx", SIG2(REG, REG), 2, 8,
			     REGS(RAX, RCX), REGS(RAX, FL), 0);
	struct insn movi = I(X86_INS_MOV, "mov eax, 1", SIG2(REG, IMM), 2, 4, NONE, REGS(RAX), 0);
	struct insn load = I(X86_INS_MOV, "mov rax, qword ptr [rbx]", SIG2(REG, MEM), 2, 8,
			     REGS(RBX), REGS(RAX), INSN_F_LOAD);
	struct insn divq = I(X86_INS_DIV, "div rcx", SIG1(REG), 1, 8, REGS(RAX, RDX, RCX),
			     REGS(RAX, RDX, FL), 0);
	struct insn vadd = I(X86_INS_VADDPS, "vaddps ymm0, ymm1, ymm2", SIG3(REG, REG, REG), 3,
			     32, REGS(V0 + 1, V0 + 2), REGS(V0), 0);
	struct insn vaddm = I(X86_INS_VADDPS, "vaddps ymm0, ymm1, ymmword ptr [rbx]",
			      SIG3(REG, REG, MEM), 3, 32, REGS(V0 + 1, RBX), REGS(V0), INSN_F_LOAD);
	struct insn vpadd = I(X86_INS_VPADDD, "vpaddd ymm0, ymm1, ymm2", SIG3(REG, REG, REG), 3,
			      32, REGS(V0 + 1, V0 + 2), REGS(V0), 0);
	struct insn vmul = I(X86_INS_VMULPS, "vmulps ymm0, ymm1, ymm2", SIG3(REG, REG, REG), 3,
			     32, REGS(V0 + 1, V0 + 2), REGS(V0), 0);
	struct insn zmm = I(X86_INS_VADDPS, "vaddps zmm0, zmm1, zmm2", SIG3(REG, REG, REG), 3,
			    64, REGS(V0 + 1, V0 + 2), REGS(V0), 0);
	struct insn g2v = I(X86_INS_VMOVQ, "vmovq xmm0, rax", SIG2(REG, REG), 2, 16, REGS(RAX),
			    REGS(V0), 0);
	struct model_timing t, t4;
	(void)state;

	assert_int_equal(m->dispatch_width, 8);
	assert_int_equal(m->rob_size, 448);
	assert_int_equal(m->taken_per_cycle, 2);
	assert_int_equal(m->loads_per_cycle, 4);
	assert_int_equal(m->mispredict_penalty, 15);
	assert_int_equal(model_n_units(m), 11);
	assert_string_equal(model_unit_name(m, 9), "Zn5ALU4");
	assert_string_equal(model_unit_name(m, 0), "Zn5ALU0");
	/* any ALU: six of them */
	model_lookup(m, &add, &t);
	assert_int_equal(t.n_groups, 1);
	assert_int_equal(__builtin_popcount(t.groups[0].mask), 6);
	model_lookup(zen4(), &add, &t4);
	assert_int_equal(__builtin_popcount(t4.groups[0].mask), 4);
	/* three multipliers, latency 3 */
	model_lookup(m, &imul, &t);
	assert_int_equal(t.latency, 3);
	assert_int_equal(__builtin_popcount(t.groups[0].mask), 3);
	/* mov r,imm: one op on any ALU (the table: two ALU-cycles) */
	model_lookup(m, &movi, &t);
	assert_int_equal(t.groups[0].cycles, 1);
	assert_int_equal(__builtin_popcount(t.groups[0].mask), 6);
	model_lookup(zen4(), &movi, &t4);
	assert_int_equal(t4.groups[0].cycles, 2);
	/* loads 4, divide 11 (Zen 4: 10) */
	model_lookup(m, &load, &t);
	assert_int_equal(t.latency, 4);
	model_lookup(m, &divq, &t);
	assert_int_equal(t.latency, 11);
	assert_true(t.rthroughput > 6 && t.rthroughput < 7);
	/* FP add 2 (Zen 4: 3), from memory 2 + 7; simple vector integer 2 (Zen 4: 1);
	 * FP multiply unchanged */
	model_lookup(m, &vadd, &t);
	assert_int_equal(t.latency, 2);
	model_lookup(zen4(), &vadd, &t4);
	assert_int_equal(t4.latency, 3);
	model_lookup(m, &vaddm, &t);
	assert_int_equal(t.latency, 9);
	model_lookup(m, &vpadd, &t);
	assert_int_equal(t.latency, 2);
	model_lookup(zen4(), &vpadd, &t4);
	assert_int_equal(t4.latency, 1);
	model_lookup(m, &vmul, &t);
	model_lookup(zen4(), &vmul, &t4);
	assert_int_equal(t.latency, t4.latency);
	/* 512-bit: the 256-bit form's timing at full rate; twice the unit time
	 * on the 256-bit variant */
	assert_int_equal(model_lookup(m, &zmm, &t), MODEL_NEAR);
	assert_int_equal(model_lookup(m, &vadd, &t4), MODEL_EXACT);
	assert_int_equal(t.groups[0].cycles, t4.groups[0].cycles);
	assert_int_equal(t.latency, 2);
	model_lookup(m256, &zmm, &t);
	assert_int_equal(t.groups[0].cycles, 2 * t4.groups[0].cycles);
	/* general -> vector register */
	model_lookup(m, &g2v, &t);
	assert_int_equal(t.latency, 5);
}

/* An id no table has falls back to its class default, flagged. */
static void lookup_default(void **state)
{
	const struct cpu_model *m = zen4();
	const struct model_table *tab = m->table;
	unsigned id = 0;
	struct model_timing t;
	struct insn in;
	(void)state;

	for (unsigned cand = 1; cand < MODEL_X86_NIDS && !id; cand++) {
		bool present = false;

		if (model_x86_id_class(cand) != FU_FP_MUL)
			continue;
		for (size_t k = 0; k < tab->n_entries && !present; k++)
			present = tab->entries[k].cs_id == cand;
		if (!present)
			id = cand;
	}
	assert_true(id > 0);
	in = I(id, "v4fmaddps zmm0, zmm1, xmmword ptr [rbx]", SIG3(REG, REG, REG), 3, 64,
	       REGS(V0 + 1), REGS(V0), 0);
	assert_int_equal(model_lookup(m, &in, &t), MODEL_DEFAULT);
	assert_int_equal(t.fu, FU_FP_MUL);
	assert_int_equal(t.latency, tab->defaults[FU_FP_MUL].latency);
	in.flags = INSN_F_LOAD;
	in.opsig = SIG3(REG, REG, MEM);
	model_lookup(m, &in, &t);
	assert_int_equal(t.latency, tab->defaults[FU_FP_MUL].latency + m->vec_load_latency);
}

/* ---- the scheduler ------------------------------------------------------------- */

static void sched_dependence_chain(void **state)
{
	struct insn b[3];
	struct block_schedule s = BLOCK_SCHEDULE_INIT;
	(void)state;

	b[0] = add_rr(RAX, RBX, "add rax, rbx");
	b[1] = add_rr(RAX, RCX, "add rax, rcx");
	b[2] = add_rr(RAX, RDX, "add rax, rdx");
	sched(zen4(), b, 3, NULL, &s);
	dump(&s, b);
	assert_int_equal(s.entry, SCHED_ENTRY_COLD);
	assert_true(s.cycles == 3);
	assert_int_equal(s.issue_points, 3);
	for (int i = 0; i < 3; i++)
		assert_true(s.insn[i].m == 1 && s.insn[i].stall == 0);
	assert_int_equal(s.insn[0].reason, SCHED_LATENCY);
	assert_int_equal(s.insn[2].reason, SCHED_DEP);
	assert_int_equal(s.insn[2].reg, DREG_RAX);
	assert_int_equal(s.insn[2].producer.kind, SREF_BLOCK);
	assert_int_equal(s.insn[2].producer.index, 1);
	block_schedule_release(&s);
}

static struct insn mov_rr(int dst, int src)
{
	return I(X86_INS_MOV, "mov reg, reg", SIG2(REG, REG), 2, 8, REGS(src), REGS(dst), 0);
}

static void sched_width(void **state)
{
	static const int dst[] = { RAX, RCX, RDX, RBX, RSI, RDI, R8, R9, R10, R11, R12, R13 };
	struct insn b[12];
	struct block_schedule s = BLOCK_SCHEDULE_INIT;
	(void)state;

	/* 12 independent adds: 4 ALUs, 3 cycles */
	for (int i = 0; i < 12; i++)
		b[i] = I(X86_INS_ADD, "add reg, 1", SIG2(REG, IMM), 2, 8, REGS(dst[i]),
			 REGS(dst[i], FL), 0);
	sched(zen4(), b, 12, NULL, &s);
	dump(&s, b);
	assert_true(s.cycles == 3);
	assert_int_equal(s.issue_points, 3);
	assert_true(s.insn[0].m == 1 && s.insn[4].m == 1 && s.insn[8].m == 1);
	assert_int_equal(s.insn[4].reason, SCHED_UNIT);
	assert_int_equal(s.insn[4].producer.kind, SREF_BLOCK);

	/* 4 adds and 2 eliminated moves a cycle: the 6-wide dispatch is the limit */
	for (int g = 0; g < 2; g++) {
		for (int i = 0; i < 4; i++)
			b[6 * g + i] = I(X86_INS_ADD, "add reg, 1", SIG2(REG, IMM), 2, 8,
					 REGS(dst[4 * g + i]), REGS(dst[4 * g + i], FL), 0);
		b[6 * g + 4] = mov_rr(g ? DREG_R14 : R8, RSI);
		b[6 * g + 5] = mov_rr(g ? DREG_R15 : R9, RDI);
	}
	b[4] = mov_rr(DREG_R12 + 2, RSI);
	sched(zen4(), b, 12, NULL, &s);
	dump(&s, b);
	assert_true(s.cycles == 2);
	assert_int_equal(s.issue_points, 2);
	assert_true(s.insn[0].m == 1 && s.insn[6].m == 1);
	assert_true(s.insn[4].flags & SCHED_F_ELIMINATED);
	assert_int_equal(s.insn[6].reason, SCHED_DISPATCH);
	for (int i = 1; i < 12; i++)
		if (i != 6)
			assert_true(s.insn[i].m == 0 && !s.insn[i].issue_point);
	/* the 4-wide generic core needs 3 cycles */
	sched(cpu_model_generic(), b, 12, NULL, &s);
	dump(&s, b);
	assert_true(s.cycles == 3);
	block_schedule_release(&s);
}

static void sched_divide(void **state)
{
	struct insn b[3];
	struct block_schedule s = BLOCK_SCHEDULE_INIT;
	(void)state;

	b[0] = I(X86_INS_XOR, "xor edx, edx", SIG2(REG, REG), 2, 4, REGS(RDX), REGS(RDX, FL),
		 INSN_F_ZERO_IDIOM);
	b[1] = I(X86_INS_DIV, "div rcx", SIG1(REG), 1, 8, REGS(RAX, RDX, RCX), REGS(RAX, RDX, FL),
		 0);
	b[2] = add_rr(RSI, RAX, "add rsi, rax");
	sched(zen4(), b, 3, NULL, &s);
	dump(&s, b);
	assert_true(s.insn[0].m == 0);
	assert_true(s.insn[0].flags & SCHED_F_ELIMINATED);
	assert_true(s.insn[1].m == 10);
	assert_true(s.insn[1].stall == 9);
	assert_int_equal(s.insn[1].reason, SCHED_LATENCY);
	assert_int_equal(s.insn[1].timing.fu, FU_DIV);
	assert_true(s.insn[2].m == 1);
	assert_int_equal(s.insn[2].reason, SCHED_DEP);
	assert_int_equal(s.insn[2].reg, DREG_RAX);
	assert_true(s.cycles == 11);

	/* two independent divides: the second waits for the divider */
	b[0] = I(X86_INS_DIV, "div rcx", SIG1(REG), 1, 8, REGS(RAX, RDX, RCX), REGS(RAX, RDX, FL), 0);
	b[1] = I(X86_INS_DIV, "div r8", SIG1(REG), 1, 8, REGS(R9, R10, R8), REGS(R9, R10, FL), 0);
	sched(zen4(), b, 2, NULL, &s);
	dump(&s, b);
	assert_true(s.insn[0].m == 10);
	assert_int_equal(s.insn[1].reason, SCHED_UNIT);
	assert_string_equal(model_unit_name(zen4(), s.insn[1].unit), "Zn4ALU0");
	assert_int_equal(s.insn[1].producer.index, 0);
	assert_true(s.insn[1].m == 7);  /* starts 7 cycles later (measured throughput) */
	block_schedule_release(&s);
}

static void sched_load_use(void **state)
{
	struct insn b[2];
	struct block_schedule s = BLOCK_SCHEDULE_INIT;
	(void)state;

	b[0] = I(X86_INS_MOV, "mov rax, qword ptr [rbx + 8]", SIG2(REG, MEM), 2, 8, REGS(RBX),
		 REGS(RAX), INSN_F_LOAD);
	b[1] = add_rr(RCX, RAX, "add rcx, rax");
	sched(zen4(), b, 2, NULL, &s);
	dump(&s, b);
	assert_true(s.insn[0].m == 4);
	assert_int_equal(s.insn[0].reason, SCHED_LATENCY);
	assert_int_equal(s.insn[0].timing.fu, FU_LOAD);
	assert_true(s.insn[1].m == 1);
	assert_int_equal(s.insn[1].reason, SCHED_DEP);
	assert_int_equal(s.insn[1].producer.index, 0);

	/* a load whose address comes from a slow producer: address before data */
	b[0] = I(X86_INS_IMUL, "imul rbx, rbx", SIG2(REG, REG), 2, 8, REGS(RBX), REGS(RBX, FL), 0);
	b[1] = I(X86_INS_ADD, "add rax, qword ptr [rbx]", SIG2(REG, MEM), 2, 8, REGS(RAX, RBX),
		 REGS(RAX, FL), INSN_F_LOAD);
	sched(zen4(), b, 2, NULL, &s);
	dump(&s, b);
	assert_true(s.insn[0].m == 3);
	assert_true(s.insn[1].m == 5);   /* load 4 + add 1 after rbx */
	assert_int_equal(s.insn[1].reason, SCHED_DEP);
	assert_int_equal(s.insn[1].reg, DREG_RBX);
	block_schedule_release(&s);
}

static void sched_zero_idiom(void **state)
{
	struct insn b[3];
	struct block_schedule s = BLOCK_SCHEDULE_INIT;
	(void)state;

	/* imul writes rax, then xor eax,eax breaks the dependence */
	b[0] = I(X86_INS_IMUL, "imul rax, rcx", SIG2(REG, REG), 2, 8, REGS(RAX, RCX),
		 REGS(RAX, FL), 0);
	b[1] = I(X86_INS_XOR, "xor eax, eax", SIG2(REG, REG), 2, 4, REGS(RAX), REGS(RAX, FL),
		 INSN_F_ZERO_IDIOM);
	b[2] = add_rr(RAX, RBX, "add rax, rbx");
	sched(zen4(), b, 3, NULL, &s);
	dump(&s, b);
	assert_true(s.insn[0].m == 3);
	assert_true(s.insn[1].m == 0);
	assert_true(s.insn[2].m == 0);  /* done long before the imul retires */
	assert_true(s.cycles == 3);
	/* without the idiom flag xor would wait for the imul */
	b[1].flags = 0;
	sched(zen4(), b, 3, NULL, &s);
	dump(&s, b);
	assert_true(s.cycles == 5);
	block_schedule_release(&s);
}

static void sched_fused_branch(void **state)
{
	struct insn b[3];
	struct block_schedule s = BLOCK_SCHEDULE_INIT;
	(void)state;

	next_addr = 0x2000;
	b[0] = I(X86_INS_IMUL, "imul rax, rdx", SIG2(REG, REG), 2, 8, REGS(RAX, RDX),
		 REGS(RAX, FL), 0);
	b[1] = I(X86_INS_CMP, "cmp rax, rcx", SIG2(REG, REG), 2, 8, REGS(RAX, RCX), REGS(FL), 0);
	b[2] = jcc(X86_INS_JNE, 0x2000);
	sched(zen4(), b, 3, NULL, &s);
	dump(&s, b);
	assert_true(s.insn[2].flags & SCHED_F_FUSED);
	assert_false(s.insn[1].flags & SCHED_F_FUSED);
	assert_true(s.insn[2].m == 0);
	assert_true(s.insn[0].m == 3 && s.insn[1].m == 1);
	assert_true(s.cycles == 4);
	/* Skylake does not fuse cmp with jo; Zen 3+ does */
	b[2] = jcc(X86_INS_JO, 0x2000);
	b[2].addr = b[1].addr + b[1].len;
	sched(cpu_model_by_name("skylake"), b, 3, NULL, &s);
	assert_false(s.insn[2].flags & SCHED_F_FUSED);
	sched(zen4(), b, 3, NULL, &s);
	assert_true(s.insn[2].flags & SCHED_F_FUSED);
	/* not adjacent: no fusion */
	b[2].addr += 4;
	sched(zen4(), b, 3, NULL, &s);
	assert_false(s.insn[2].flags & SCHED_F_FUSED);
	block_schedule_release(&s);
}

static void sched_store(void **state)
{
	struct insn b[3];
	struct block_schedule s = BLOCK_SCHEDULE_INIT;
	(void)state;

	b[0] = I(X86_INS_IMUL, "imul rax, rcx", SIG2(REG, REG), 2, 8, REGS(RAX, RCX),
		 REGS(RAX, FL), 0);
	b[1] = I(X86_INS_MOV, "mov qword ptr [rsp + 8], rax", SIG2(MEM, REG), 2, 8,
		 REGS(RSP, RAX), NONE, INSN_F_STORE);
	b[2] = I(X86_INS_MOV, "mov rdx, qword ptr [rsp + 8]", SIG2(REG, MEM), 2, 8, REGS(RSP),
		 REGS(RDX), INSN_F_LOAD);
	sched(zen4(), b, 3, NULL, &s);
	dump(&s, b);
	assert_true(s.insn[0].m == 3);
	/* the store retires when its data is there: with the imul */
	assert_true(s.insn[1].m == 1);
	assert_int_equal(s.insn[1].reason, SCHED_DEP);
	assert_int_equal(s.insn[1].timing.fu, FU_STORE);
	/* the reload gets the stored value (Zen 4 renames memory: same cycle) */
	assert_int_equal(s.insn[2].complete, s.insn[1].complete);
	assert_true(s.insn[2].m == 0);
	/* Skylake forwards through the store buffer in 5 cycles */
	sched(cpu_model_by_name("skylake"), b, 3, NULL, &s);
	dump(&s, b);
	assert_int_equal(s.insn[2].reason, SCHED_MEMDEP);
	assert_int_equal(s.insn[2].producer.index, 1);
	assert_true(s.insn[2].m == 4);
	/* a different address: no dependence */
	snprintf(b[2].text, sizeof(b[2].text), "mov rdx, qword ptr [rsp + 16]");
	sched(zen4(), b, 3, NULL, &s);
	assert_int_not_equal(s.insn[2].reason, SCHED_MEMDEP);
	block_schedule_release(&s);
}

/*
 * The collector's calibration loop (collect/calib.h) claims one cycle per
 * dependent add, 8 an iteration, on every x86-64 core: its real bytes,
 * decoded, in the steady state of every model.
 */
static void calib_loop_cycles(void **state)
{
	struct decoder *d;
	struct insn *v = NULL;
	size_t n = 0, alloc = 0;
	struct block_schedule s = BLOCK_SCHEDULE_INIT;
	struct sched_entry loop = { SCHED_ENTRY_LOOP, NULL, 0 };
	(void)state;

	if (!calib_supported())
		skip();
	assert_non_null(d = decoder_new(ARCH_X86_64));
	decode_range(d, calib_loop_body, (size_t)(calib_loop_end - calib_loop_body), 0x1000, &v,
		     &n, &alloc);
	assert_int_equal(n, 10);  /* 8 adds, dec, jnz */
	for (size_t k = 0; cpu_models[k]; k++) {
		sched(cpu_models[k], v, n, &loop, &s);
		print_message("%s: %.2f cycles an iteration\n", cpu_models[k]->name, s.cycles);
		assert_true(s.cycles > 7.99 && s.cycles < 8.01);
	}
	/* and the loop computes what it says */
	assert_true(calib_loop(3, 5) == 5 + 24);
	block_schedule_release(&s);
	free(v);
	decoder_free(d);
}

/*
 * Golden Cove folds dependent add-immediates in the renamer (a Sapphire
 * Rapids-class host: 3.85 `add $1, %rax` a cycle, 1 for `add %rbx, %rax`):
 * add/sub r64 of an immediate that fits a byte, and inc/dec r64, cost no
 * latency there, and nothing else does.  The loop is the collector's
 * add-immediate signature (collect/calib.c): 8 dependent `add rax, 1`,
 * `dec rdi`, `jnz`.  Its schedule gives the signature the chooser reads as
 * folded (above 1.5 a cycle) on the model it chooses, and 1 a cycle on the
 * others.
 */
static double addimm_loop(const struct cpu_model *m, unsigned id, const char *text,
			  unsigned opsig, unsigned opsize)
{
	struct insn b[10];
	struct block_schedule s = BLOCK_SCHEDULE_INIT;
	struct sched_entry loop = { SCHED_ENTRY_LOOP, NULL, 0 };
	double c;

	next_addr = 0x7000;
	for (int k = 0; k < 8; k++)
		b[k] = I(id, text, opsig, opsig == SIG1(REG) ? 1 : 2, opsize, REGS(RAX),
			 REGS(RAX, FL), 0);
	b[8] = I(X86_INS_DEC, "dec rdi", SIG1(REG), 1, 8, REGS(RDI), REGS(RDI, FL), 0);
	b[9] = jcc(X86_INS_JNE, 0x7000);
	sched(m, b, 10, &loop, &s);
	c = s.cycles;
	if (m->fold_add_imm && !strcmp(text, "add rax, 1")) {
		dump(&s, b);
		assert_true(s.insn[0].flags & SCHED_F_ELIMINATED);
	}
	block_schedule_release(&s);
	return c;
}

static void sched_folded_add_imm(void **state)
{
	const struct cpu_model *gc = cpu_model_by_name("goldencove");
	struct model_timing t;
	struct insn add = I(X86_INS_ADD, "add rax, 1", SIG2(REG, IMM), 2, 8, REGS(RAX),
			    REGS(RAX, FL), 0);
	(void)state;

	assert_non_null(gc);
	assert_true(gc->fold_add_imm);
	model_lookup(gc, &add, &t);
	assert_true(t.eliminated);
	assert_int_equal(t.latency, 0);
	assert_int_equal(t.n_groups, 0);
	for (size_t k = 0; cpu_models[k]; k++) {
		const struct cpu_model *m = cpu_models[k];
		double c = addimm_loop(m, X86_INS_ADD, "add rax, 1", SIG2(REG, IMM), 8);

		print_message("%s: 8 add rax, 1: %.2f cycles an iteration, %.2f a cycle\n", m->name,
			      c, 8 / c);
		assert_int_equal(m->fold_add_imm, m == gc);
		if (m->fold_add_imm)  /* 9 macro-ops, 6 a cycle: 2 cycles, 4 adds a cycle */
			assert_true(8 / c > 1.5 && c > 1.99 && c < 2.01);
		else
			assert_true(c > 7.99 && c < 8.01);
	}
	/* the same on Golden Cove with inc and sub of a small immediate (folded), a
	 * large immediate or a 32-bit register (not: one cycle each) */
	assert_true(addimm_loop(gc, X86_INS_INC, "inc rax", SIG1(REG), 8) < 2.01);
	assert_true(addimm_loop(gc, X86_INS_SUB, "sub rax, -0x80", SIG2(REG, IMM), 8) < 2.01);
	assert_true(addimm_loop(gc, X86_INS_ADD, "add rax, 0x80", SIG2(REG, IMM), 8) > 7.99);
	assert_true(addimm_loop(gc, X86_INS_ADD, "add eax, 1", SIG2(REG, IMM), 4) > 7.99);
	assert_true(addimm_loop(gc, X86_INS_ADD, "add rax, rbx", SIG2(REG, REG), 8) > 7.99);
}

static void sched_loop(void **state)
{
	struct insn b[3];
	struct block_schedule s = BLOCK_SCHEDULE_INIT;
	struct sched_entry loop = { SCHED_ENTRY_LOOP, NULL, 0 };
	(void)state;

	/* pointer chase: 4 cycles an iteration, all on the load */
	next_addr = 0x3000;
	b[0] = I(X86_INS_MOV, "mov rax, qword ptr [rax]", SIG2(REG, MEM), 2, 8, REGS(RAX),
		 REGS(RAX), INSN_F_LOAD);
	b[1] = I(X86_INS_DEC, "dec rcx", SIG1(REG), 1, 8, REGS(RCX), REGS(RCX, FL), 0);
	b[2] = jcc(X86_INS_JNE, 0x3000);
	sched(zen4(), b, 3, &loop, &s);
	dump(&s, b);
	assert_int_equal(s.entry, SCHED_ENTRY_LOOP);
	assert_true(s.iterations > 1);
	assert_true(s.cycles > 3.99 && s.cycles < 4.01);
	assert_true(s.insn[0].m > 3.99);
	assert_int_equal(s.insn[0].reason, SCHED_DEP);
	assert_int_equal(s.insn[0].producer.kind, SREF_PREV_ITER);
	assert_true(s.insn[2].flags & SCHED_F_FUSED);

	/* independent work: the loop runs at the front end's rate, the cold
	 * schedule charges the full load latency */
	b[0] = I(X86_INS_MOV, "mov rax, qword ptr [rbx]", SIG2(REG, MEM), 2, 8, REGS(RBX),
		 REGS(RAX), INSN_F_LOAD);
	sched(zen4(), b, 3, &loop, &s);
	dump(&s, b);
	assert_true(s.cycles > 0.99 && s.cycles < 1.01);  /* one taken branch a cycle */
	sched(zen4(), b, 3, NULL, &s);
	assert_true(s.cycles == 4);
	block_schedule_release(&s);
}

static void sched_predecessor(void **state)
{
	struct insn pred[1], b[2];
	struct block_schedule cold = BLOCK_SCHEDULE_INIT, warm = BLOCK_SCHEDULE_INIT;
	struct sched_entry e = { SCHED_ENTRY_PRED, pred, 1 };
	(void)state;

	next_addr = 0x4000;
	pred[0] = I(X86_INS_MOV, "mov rdi, qword ptr [rsi]", SIG2(REG, MEM), 2, 8, REGS(RSI),
		    REGS(RDI), INSN_F_LOAD);
	b[0] = I(X86_INS_IMUL, "imul rax, rcx", SIG2(REG, REG), 2, 8, REGS(RAX, RCX),
		 REGS(RAX, FL), 0);
	b[1] = add_rr(RDI, RAX, "add rdi, rax");
	sched(zen4(), b, 2, NULL, &cold);
	sched(zen4(), b, 2, &e, &warm);
	dump(&cold, b);
	dump(&warm, b);
	assert_true(cold.insn[0].m == 3 && cold.insn[1].m == 1);
	/* the imul overlaps the predecessor's load: M=0; the add waits for both */
	assert_int_equal(warm.entry, SCHED_ENTRY_PRED);
	assert_true(warm.insn[0].m == 0);
	assert_true(warm.insn[1].m == 1);
	assert_int_equal(warm.insn[1].reason, SCHED_DEP);
	assert_true(warm.insn[0].dispatch == -0 || warm.insn[0].dispatch <= 0);
	block_schedule_min(&cold, &warm);
	assert_true(cold.insn[0].m == 0 && cold.cycles == 1);
	block_schedule_release(&cold);
	block_schedule_release(&warm);
}

static void sched_lock_and_crossing(void **state)
{
	struct insn b[2];
	struct block_schedule s = BLOCK_SCHEDULE_INIT;
	struct sched_entry loop = { SCHED_ENTRY_LOOP, NULL, 0 };
	(void)state;

	/* a chain of lock xadd: the whole locked latency each (measured 8) */
	next_addr = 0x5000;
	b[0] = I(X86_INS_XADD, "lock xadd qword ptr [rdi], rax", SIG2(MEM, REG), 2, 8,
		 REGS(RDI, RAX), REGS(RAX, FL), INSN_F_LOAD | INSN_F_STORE | INSN_F_LOCK);
	sched(zen4(), b, 1, &loop, &s);
	dump(&s, b);
	assert_true(s.cycles > 7.99 && s.cycles < 8.01);
	/* general -> vector -> general: 3 + 2 on Zen 4 (measured pair: 6) */
	b[0] = I(X86_INS_VMOVQ, "vmovq xmm0, rax", SIG2(REG, REG), 2, 16, REGS(RAX),
		 REGS(V0), 0);
	b[1] = I(X86_INS_VMOVQ, "vmovq rax, xmm0", SIG2(REG, REG), 2, 16, REGS(V0),
		 REGS(RAX), 0);
	sched(zen4(), b, 2, &loop, &s);
	dump(&s, b);
	assert_true(s.insn[0].m > 2.99 && s.insn[0].m < 3.01);
	assert_true(s.insn[1].m > 1.99 && s.insn[1].m < 2.01);
	block_schedule_release(&s);
}

static void sched_call(void **state)
{
	struct insn b[4];
	struct block_schedule s = BLOCK_SCHEDULE_INIT;
	(void)state;

	b[0] = I(X86_INS_MOV, "mov rdi, qword ptr [rbx]", SIG2(REG, MEM), 2, 8, REGS(RBX),
		 REGS(RDI), INSN_F_LOAD);
	b[1] = I(X86_INS_CALL, "call 0x9000", SIG1(IMM), 1, 0, REGS(RSP), REGS(RSP),
		 INSN_F_STORE);
	b[1].kind = INSN_CALL;
	b[1].target = 0x9000;
	b[2] = add_rr(RCX, RDX, "add rcx, rdx");
	b[3] = add_rr(RSI, RDX, "add rsi, rdx");
	sched(zen4(), b, 4, NULL, &s);
	dump(&s, b);
	/* the call retires after the load; the callee runs; then the adds */
	assert_true(s.insn[0].m == 4);
	assert_true(s.insn[1].m == 0);
	assert_true(s.insn[2].flags & SCHED_F_AFTER_CALL);
	assert_false(s.insn[3].flags & SCHED_F_AFTER_CALL);
	assert_true(s.insn[2].m == 1);
	assert_int_equal(s.insn[2].reason, SCHED_DISPATCH);
	assert_true(s.insn[2].dispatch >= s.insn[1].retire);
	assert_true(s.cycles == 5);
	block_schedule_release(&s);
}

static void sched_describe_and_errors(void **state)
{
	struct insn b[2];
	struct block_schedule s = BLOCK_SCHEDULE_INIT;
	struct strbuf sb = STRBUF_INIT;
	(void)state;

	b[0] = I(X86_INS_MOV, "mov rax, qword ptr [rbx]", SIG2(REG, MEM), 2, 8, REGS(RBX),
		 REGS(RAX), INSN_F_LOAD);
	b[1] = add_rr(RCX, RAX, "add rcx, rax");
	sched(zen4(), b, 2, NULL, &s);
	sched_describe(&s, 0, &sb);
	assert_string_equal(sb.buf, "M=4 latency (load, 4 cycles)");
	strbuf_reset(&sb);
	sched_describe(&s, 1, &sb);
	assert_string_equal(sb.buf, "M=1 dependence on rax from #0");
	assert_string_equal(sched_reg_name(DREG_FLAGS), "flags");
	assert_string_equal(sched_reg_name(DREG_V0 + 3), "xmm3");
	assert_string_equal(sched_reason_name(SCHED_UNIT), "unit busy");
	assert_int_equal(schedule_block(zen4(), b, 0, NULL, &s), -1);
	/* a serialising instruction is flagged uncertain */
	b[0] = I(X86_INS_CPUID, "cpuid", 0, 0, 0, REGS(RAX, RCX), REGS(RAX, RBX, RCX, RDX), 0);
	sched(zen4(), b, 2, NULL, &s);
	assert_true(s.insn[0].flags & SCHED_F_UNCERTAIN);
	assert_int_equal(s.uncertain, 1);
	strbuf_release(&sb);
	block_schedule_release(&s);
}


/* ---- the memo of schedules ---------------------------------------------------- */

#define ALL_ENTRIES (1u << SCHED_ENTRY_COLD | 1u << SCHED_ENTRY_PRED | 1u << SCHED_ENTRY_LOOP)

static uint64_t memo_hits(void)
{
	struct sched_memo_stats st;

	sched_memo_get_stats(&st);
	return st.hits;
}

/* The schedule of b[0..n) with entry e, without the memo (what it holds kept). */
static void sched_unremembered(const struct cpu_model *m, const struct insn *b, size_t n,
			       const struct sched_entry *e, struct block_schedule *s)
{
	sched_memo_kinds(0);
	sched(m, b, n, e, s);
	sched_memo_kinds(ALL_ENTRIES);
}

/* insns[0..n) moved by delta: the same code elsewhere. */
static struct insn *moved(const struct insn *insns, size_t n, uint64_t delta)
{
	struct insn *v = xmemdup(insns, n * sizeof(*v));

	for (size_t i = 0; i < n; i++) {
		v[i].addr += delta;
		if (v[i].target)
			v[i].target += delta;
		if (v[i].flags & INSN_F_RIP_REL)
			v[i].mem_addr += delta;
	}
	return v;
}

/* Two schedules of one block are the same, field by field. */
static void assert_same_schedule(const struct block_schedule *a, const struct block_schedule *b)
{
	assert_int_equal(a->n, b->n);
	assert_true(a->cycles == b->cycles);
	assert_int_equal(a->issue_points, b->issue_points);
	assert_int_equal(a->iterations, b->iterations);
	assert_int_equal(a->uncertain, b->uncertain);
	for (size_t i = 0; i < a->n; i++) {
		const struct sched_insn *x = &a->insn[i], *y = &b->insn[i];

		assert_true(x->m == y->m && x->stall == y->stall);
		assert_int_equal(x->reason, y->reason);
		assert_int_equal(x->reg, y->reg);
		assert_int_equal(x->producer.kind, y->producer.kind);
		assert_int_equal(x->producer.index, y->producer.index);
		assert_int_equal(x->unit, y->unit);
		assert_int_equal(x->flags, y->flags);
		assert_int_equal(x->timing.latency, y->timing.latency);
		assert_int_equal(x->dispatch, y->dispatch);
		assert_int_equal(x->issue, y->issue);
		assert_int_equal(x->complete, y->complete);
		assert_int_equal(x->retire, y->retire);
	}
}

/*
 * Real code (this test's own, as compiled here): every block scheduled
 * from prepared instructions, cold, after the instructions before it and
 * as a loop, is what schedule_block() gives, and what every pass run
 * through the machine gives (no steady-state shortcut, no context kept
 * from a block to the next, no memo).  With every kind of entry
 * remembered, the same code moved elsewhere gets its schedule from the
 * memo, the same one.
 */
static void sched_prepared_is_exact(void **state)
{
	static const char *const models[] = { "znver5", "znver4", "skylake" };
	struct image *img = own_image();
	struct proctab *tab = image_procs(img);
	size_t blocks = 0, loops = 0;
	uint64_t before;
	(void)state;

	sched_memo_limit(64u << 20);
	sched_memo_kinds(ALL_ENTRIES);
	before = memo_hits();
	for (size_t k = 0; k < tab->n && blocks < 30000; k++) {
		struct cfg cfg;
		struct insn *far;

		if (image_cfg(img, &tab->v[k], &cfg))
			continue;
		far = moved(cfg.insns, cfg.n_insns, 0x100000);
		for (size_t mi = 0; mi < ARRAY_SIZE(models); mi++) {
			const struct cpu_model *m = cpu_model_by_name(models[mi]);
			struct sched_prep *fast = sched_prep_new(m, cfg.insns, cfg.n_insns);
			struct sched_prep *full = sched_prep_new(m, cfg.insns, cfg.n_insns);
			struct sched_prep *there = sched_prep_new(m, far, cfg.n_insns);

			sched_prep_full_runs(full, true);
			for (size_t b = 0; b < cfg.n_blocks; b++) {
				const struct cfg_block *blk = &cfg.blocks[b];
				uint32_t body[512], ctx[32];
				size_t n = blk->n_insns < 512 ? blk->n_insns : 512;
				size_t nc = blk->first < 32 ? blk->first : 32;

				if (!n)
					continue;
				for (size_t i = 0; i < n; i++)
					body[i] = blk->first + (uint32_t)i;
				for (size_t i = 0; i < nc; i++)
					ctx[i] = blk->first - (uint32_t)nc + (uint32_t)i;
				for (int kind = SCHED_ENTRY_COLD; kind <= SCHED_ENTRY_LOOP; kind++) {
					struct block_schedule a = BLOCK_SCHEDULE_INIT, c = BLOCK_SCHEDULE_INIT;
					struct block_schedule r = BLOCK_SCHEDULE_INIT, t = BLOCK_SCHEDULE_INIT;
					struct sched_entry e = { (enum sched_entry_kind)kind,
								 &cfg.insns[blk->first - nc], nc };
					uint64_t h;

					if (kind == SCHED_ENTRY_LOOP && (b + mi) % 2)
						continue;
					assert_int_equal(schedule_prepared(fast, body, n, e.kind, ctx, nc, &a), 0);
					assert_int_equal(schedule_prepared(full, body, n, e.kind, ctx, nc, &c), 0);
					sched_unremembered(m, &cfg.insns[blk->first], n, &e, &r);
					h = memo_hits();
					assert_int_equal(schedule_prepared(there, body, n, e.kind, ctx, nc, &t), 0);
					assert_true(memo_hits() > h);
					assert_same_schedule(&a, &c);
					assert_same_schedule(&a, &r);
					assert_same_schedule(&t, &c);
					loops += kind == SCHED_ENTRY_LOOP;
					/* the next block after the same code: from the machine kept */
					if (kind == SCHED_ENTRY_PRED && b + 1 < cfg.n_blocks &&
					    cfg.blocks[b + 1].n_insns) {
						uint32_t next = cfg.blocks[b + 1].first;

						assert_int_equal(schedule_prepared(fast, &next, 1, e.kind, ctx, nc, &a), 0);
						assert_int_equal(schedule_prepared(full, &next, 1, e.kind, ctx, nc, &c), 0);
						assert_same_schedule(&a, &c);
					}
					block_schedule_release(&a);
					block_schedule_release(&c);
					block_schedule_release(&r);
					block_schedule_release(&t);
				}
				blocks++;
			}
			sched_prep_free(fast);
			sched_prep_free(full);
			sched_prep_free(there);
		}
		free(far);
		cfg_release(&cfg);
	}
	print_message("%zu blocks, %zu loops, %llu schedules from the memo\n", blocks, loops,
		      (unsigned long long)(memo_hits() - before));
	assert_true(blocks > 1000);
	image_free(img);
	sched_memo_kinds(1u << SCHED_ENTRY_LOOP);
	sched_memo_limit(16u << 20);
}

/*
 * A memo key tells contexts apart: the same block after two different
 * contexts, or cold and as a loop, is four schedules, each what the
 * machine gives without the memo; the same block after the same code at
 * another address is the schedule remembered.  And which memory an
 * instruction names is part of the key even where the instructions are
 * otherwise the same: a RIP-relative load of the address a store wrote
 * waits for it, one of another address does not.
 */
static void sched_memo_keys(void **state)
{
	const struct cpu_model *sky = cpu_model_by_name("skylake");
	struct insn ctx_a[2], ctx_b[2], b[2], *b2, *a2, st[2];
	struct block_schedule s = BLOCK_SCHEDULE_INIT, r = BLOCK_SCHEDULE_INIT;
	struct sched_entry cold = { SCHED_ENTRY_COLD, NULL, 0 }, loop = { SCHED_ENTRY_LOOP, NULL, 0 };
	struct sched_entry after_a = { SCHED_ENTRY_PRED, ctx_a, 2 };
	struct sched_entry after_b = { SCHED_ENTRY_PRED, ctx_b, 2 };
	struct sched_entry *entries[] = { &cold, &after_a, &after_b, &loop };
	double cycles[4];
	uint64_t h;
	(void)state;

	sched_memo_limit(16u << 20);
	sched_memo_kinds(ALL_ENTRIES);
	next_addr = 0x6000;
	/* context a computes rax slowly, context b leaves it alone */
	ctx_a[0] = I(X86_INS_IMUL, "imul rax, rcx", SIG2(REG, REG), 2, 8, REGS(RAX, RCX),
		     REGS(RAX, FL), 0);
	ctx_a[1] = I(X86_INS_IMUL, "imul rax, rcx", SIG2(REG, REG), 2, 8, REGS(RAX, RCX),
		     REGS(RAX, FL), 0);
	next_addr = 0x6000;
	ctx_b[0] = add_rr(RDX, RSI, "add rdx, rsi");
	ctx_b[1] = add_rr(RDX, RSI, "add rdx, rsi");
	b[0] = add_rr(RBX, RAX, "add rbx, rax");
	b[1] = add_rr(RBX, RDI, "add rbx, rdi");
	for (size_t k = 0; k < ARRAY_SIZE(entries); k++) {
		h = memo_hits();
		sched(zen4(), b, 2, entries[k], &s);
		assert_true(memo_hits() == h);  /* a key of its own */
		assert_int_equal(s.entry, entries[k]->kind);
		sched_unremembered(zen4(), b, 2, entries[k], &r);
		assert_same_schedule(&s, &r);
		cycles[k] = s.cycles;
	}
	assert_true(cycles[1] > cycles[2]);  /* the add waits for context a's imuls */
	/* the same block after the same code, both 0x10000 further */
	b2 = moved(b, 2, 0x10000);
	a2 = moved(ctx_a, 2, 0x10000);
	after_a.pred = a2;
	h = memo_hits();
	sched(zen4(), b2, 2, &after_a, &s);
	assert_true(memo_hits() == h + 1);
	after_a.pred = ctx_a;
	sched_unremembered(zen4(), b, 2, &after_a, &r);
	assert_same_schedule(&s, &r);

	/* a store, then a load of the same address or of another: RIP-relative */
	next_addr = 0x7000;
	st[0] = I(X86_INS_MOV, "mov dword ptr [rip + 0x100], eax", SIG2(MEM, REG), 2, 4, REGS(RAX),
		  NONE, INSN_F_STORE | INSN_F_RIP_REL);
	st[0].mem_addr = 0x7104;
	st[1] = I(X86_INS_MOV, "mov ebx, dword ptr [rip + 0xfc]", SIG2(REG, MEM), 2, 4, NONE,
		  REGS(RBX), INSN_F_LOAD | INSN_F_RIP_REL);
	st[1].mem_addr = 0x7104;
	h = memo_hits();
	sched(sky, st, 2, &cold, &s);
	assert_int_equal(s.insn[1].reason, SCHED_MEMDEP);
	st[1].mem_addr = 0x7204;
	sched(sky, st, 2, &cold, &s);
	assert_true(memo_hits() == h);
	assert_int_not_equal(s.insn[1].reason, SCHED_MEMDEP);
	sched_unremembered(sky, st, 2, &cold, &r);
	assert_same_schedule(&s, &r);

	free(b2);
	free(a2);
	block_schedule_release(&s);
	block_schedule_release(&r);
	sched_memo_kinds(1u << SCHED_ENTRY_LOOP);
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(models_are_sane),
		cmocka_unit_test(lookup_basic),
		cmocka_unit_test(lookup_rules),
		cmocka_unit_test(lookup_zen5),
		cmocka_unit_test(lookup_default),
		cmocka_unit_test(sched_dependence_chain),
		cmocka_unit_test(sched_width),
		cmocka_unit_test(sched_divide),
		cmocka_unit_test(sched_load_use),
		cmocka_unit_test(sched_zero_idiom),
		cmocka_unit_test(sched_fused_branch),
		cmocka_unit_test(sched_store),
		cmocka_unit_test(sched_loop),
		cmocka_unit_test(calib_loop_cycles),
		cmocka_unit_test(sched_folded_add_imm),
		cmocka_unit_test(sched_predecessor),
		cmocka_unit_test(sched_call),
		cmocka_unit_test(sched_lock_and_crossing),
		cmocka_unit_test(sched_describe_and_errors),
		cmocka_unit_test(sched_prepared_is_exact),
		cmocka_unit_test(sched_memo_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
