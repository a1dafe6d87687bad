/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model/model.h - processor models: per-instruction timing tables and the
 * machine facts the scheduler (model/sched.h) and the culprit analysis need.
 *
 * A model is a struct cpu_model: widths, buffer sizes, load-use latency,
 * unit counts, fusion rules, plus a generated table (model/table-*.c) of
 * per-instruction latency, micro-ops, reciprocal throughput, execution
 * units and functional-unit class, keyed by (capstone instruction id,
 * operand signature, widest operand size) exactly as disasm/ fills struct
 * insn.  docs/model.md says where every number comes from; the tables are
 * made offline by model/gen/generate.sh from llvm-mca (LLVM 14 and 19).
 *
 * Models are static data: nothing here allocates or needs releasing.
 */
#ifndef DCPI_MODEL_MODEL_H
#define DCPI_MODEL_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "disasm/insn.h"
#include "model/fu.h"

struct epoch_meta;

/* ---- generated tables ---------------------------------------------------- */

enum model_entry_flags {
	ME_LOAD = (1 << 0),       /* llvm-mca: mayLoad */
	ME_STORE = (1 << 1),      /* llvm-mca: mayStore */
	ME_UNMODELED = (1 << 2),  /* llvm-mca: hasUnmodeledSideEffects (numbers are guesses) */
};

#define MODEL_MAX_GROUPS 3

/*
 * A set of interchangeable execution units (bit u = units[u] of the table)
 * and how many unit-cycles the instruction occupies in it: {ALU0..ALU3, 1}
 * is one op on any ALU, {ALU0, 17} a 17-cycle divide blocking ALU0.
 */
struct model_unit_group {
	uint32_t mask;
	uint8_t cycles;
};

/* One instruction form. */
struct model_entry {
	uint16_t cs_id;           /* capstone instruction id */
	uint8_t opsig, opsize;    /* as in struct insn */
	uint8_t latency;          /* cycles from issue to result (loads included) */
	uint8_t uops;             /* macro-ops (AMD) or micro-ops (Intel), llvm-mca's count */
	uint16_t rthroughput;     /* reciprocal throughput, hundredths of a cycle */
	uint8_t flags;            /* enum model_entry_flags */
	uint8_t fu;               /* enum model_fu */
	uint8_t n_groups;
	struct model_unit_group groups[MODEL_MAX_GROUPS];
};

/* Timing used for an instruction a table does not have, per class. */
struct model_default {
	uint8_t latency, uops;
	uint16_t rthroughput;     /* hundredths of a cycle */
};

/* A generated table, sorted by (cs_id, opsig, opsize). */
struct model_table {
	const char *name;         /* "znver3" */
	const char *llvm_cpu;     /* the -mcpu given to llvm-mca */
	const struct model_entry *entries;
	size_t n_entries;
	const char *const *units; /* execution units (memory pipes excluded) */
	size_t n_units;
	struct model_default defaults[FU__COUNT]; /* medians of the table's classes */
};

extern const struct model_table model_table_znver3;
extern const struct model_table model_table_znver4;
extern const struct model_table model_table_skylake;
extern const struct model_table model_table_goldencove;

/* Capstone x86 ids: model_x86_class[id] = enum model_fu | MODEL_X86_MOVE. */
#define MODEL_X86_NIDS 1501
#define MODEL_X86_MOVE 0x80
extern const unsigned char model_x86_class[MODEL_X86_NIDS];

/* ---- models -------------------------------------------------------------- */

/* Which flag-setting instructions fuse with a following conditional jump. */
enum model_fusion {
	FUSION_NONE,
	FUSION_INTEL_SNB,  /* Sandy Bridge..Skylake: test/and any jcc; cmp/add/sub no jo/js/jp; inc/dec je..jle */
	FUSION_AMD_ZEN3,   /* Zen 3/4/5: test/and/or/xor/cmp/add/sub/inc/dec with any flag jcc */
};

/*
 * A core wider than the CPU its table was made for (Zen 5 on the znver3
 * table): an instruction whose unit group is exactly `table` (a mask of the
 * table's units) takes `model` instead (a mask of the model's units, which
 * are the table's followed by the model's own, struct cpu_model.units).
 */
struct model_unit_widen {
	uint32_t table, model;
};

struct cpu_model {
	const char *name;          /* "znver4", "znver3", "skylake", "generic-x86-64" */
	const char *description;   /* one line for reports */
	const char *provenance;    /* where the numbers come from (one paragraph) */
	enum insn_arch arch;
	const struct model_table *table;

	/* Front end and retirement (macro-ops on AMD, fused-domain uops on Intel). */
	unsigned dispatch_width;   /* renamed/dispatched per cycle */
	unsigned retire_width;     /* retired per cycle */
	unsigned rob_size;         /* in flight, dispatched and not retired */
	unsigned taken_per_cycle;  /* taken branches per cycle */
	enum model_fusion fusion;
	bool move_elimination;     /* reg-reg moves renamed away (latency 0, no unit) */
	bool stack_engine;         /* push/pop/call/ret do not wait for rsp */
	bool microfusion;          /* a load-op or store counts as one dispatch slot */
	bool zmm_double_pumped;    /* 512-bit ops: the 256-bit form's timing, twice the unit cycles */
	bool fold_add_imm;         /* add/sub r64, imm8 and inc/dec r64 folded at rename:
				      no unit, no latency (Golden Cove) */

	/* Execution units, if not the table's: names (the table's units first, in its
	   order, then more) and the groups that spread over the added units. */
	const char *const *units;
	unsigned n_units;
	const struct model_unit_widen *widen;
	size_t n_widen;

	/* Memory. */
	unsigned load_latency;     /* L1 hit load-to-use, integer register, simple address */
	unsigned scaled_index_latency; /* more for an address with a scaled index (*2, *4, *8);
					  the scheduler adds it in a loop's steady state only */
	bool index3_latency;       /* ... and for base + index + displacement too */
	unsigned vec_load_latency; /* the same into a vector register */
	int table_load_bias;       /* table latency of pure loads minus load_latency (llvm-mca's +1) */
	unsigned store_forward_latency; /* store to a load of the same address */
	unsigned lock_latency;     /* a locked read-modify-write, uncontended */
	uint32_t lea_units;        /* units (table mask) of a lea the table gives none, 0: none */
	bool lea_units_replace;    /* ... and of every lea (the table's are wrong) */
	unsigned lea3_latency;     /* lea base + index + displacement (0: the table's) */
	uint32_t lea3_units;       /* its second op's units (0: one op) */
	unsigned lea3_cycles;      /* unit-cycles of that second op (0: 1) */
	unsigned gpr_to_vec_latency; /* movd/movq xmm, r (0: the table's) */
	unsigned vec_to_gpr_latency; /* movd/movq r, xmm (0: the table's) */
	unsigned loads_per_cycle, stores_per_cycle;
	bool stores_share_load_pipes; /* a store also takes one of the loads_per_cycle pipes
					 (Zen 5: 4 memory ops a cycle, at most 2 stores) */
	unsigned vec_simple_latency; /* one-cycle vector ops writing a vector register
					(integer, logic, shuffle, FP min/max; 0: the table's) */
	unsigned fp_add_latency;   /* FP add/sub, the table's 3 (0: the table's) */
	unsigned load_queue, store_queue; /* entries */
	unsigned cache_line;       /* bytes */

	/* Corrections of the table (measured on this CPU), may be NULL. */
	const struct model_override *overrides;
	size_t n_overrides;

	/* Facts the culprit analysis asks about. */
	unsigned int_dividers, int_multipliers, fp_dividers;
	unsigned mispredict_penalty; /* cycles, common case */
};

/*
 * A correction of the table for one instruction on one model (all its forms,
 * or those of one operand signature; a memory form adds the model's load
 * latency), with its reason.
 */
struct model_override {
	uint16_t cs_id;
	uint8_t latency;          /* register form */
	uint16_t rthroughput;     /* hundredths of a cycle */
	const char *why;
	uint8_t opsig;            /* only this operand signature (0: every form) */
};

/* Every model dcpi knows, NULL-terminated, the generic one last. */
extern const struct cpu_model *const cpu_models[];

/*
 * Why a model was chosen for an epoch (cpu_model_choose).  exact: the
 * CPU's identification names a core the model is made for, and nothing the
 * epoch recorded contradicts it; otherwise the model is the closest one,
 * and the reason says what chose it.
 */
struct model_choice {
	const struct cpu_model *model;
	bool exact;
	char reason[256];         /* one line: "AuthenticAMD family 26 model 2 is Zen 5 (...)" */
};

/*
 * The model for the CPU an epoch was recorded on, chosen by what the core
 * does as well as by what it says it is (model/choose.c, docs/model.md
 * "How the model is chosen"):
 *  - the identification (meta->cpu_vendor, cpu_family, cpu_model_id),
 *    which a virtual machine may mask;
 *  - the CPU's flags (meta->cpu_flags): avx512fp16 or AMX name Sapphire
 *    Rapids' class, avx_vnni without avx512f Alder Lake's, on AMD avx_vnni
 *    or avx512_vp2intersect Zen 5, avx512f Zen 4;
 *  - the core's signatures (meta->core_sig): add-immediates that fold in
 *    the renamer (above 1.5 a cycle) make it a Golden Cove-class core; the
 *    load-to-use and divide latencies tell cores apart where the
 *    identification does not.
 * An epoch without flags or signatures (older databases) is chosen for
 * by what it has, and the reason says so.  meta NULL: the generic model.
 * Fills *out (may be NULL) and returns out->model, never NULL.
 */
const struct cpu_model *cpu_model_choose(const struct epoch_meta *meta, struct model_choice *out);
/* cpu_model_choose()'s model; *exact (may be NULL) is the choice's exact. */
const struct cpu_model *cpu_model_for(const struct epoch_meta *meta, bool *exact);
/*
 * The model from the identification alone (vendor as in /proc/cpuinfo):
 * *exact (may be NULL) false when it is the closest or the generic one.
 */
const struct cpu_model *cpu_model_for_cpu(const char *vendor, int family, int model,
					  bool *exact);
/* A model by name ("znver4"...), or NULL. */
const struct cpu_model *cpu_model_by_name(const char *name);
/* The generic x86-64 model. */
const struct cpu_model *cpu_model_generic(void);

/* ---- lookup --------------------------------------------------------------- */

/* How good a timing is. */
enum model_match {
	MODEL_EXACT,    /* the table has this instruction form */
	MODEL_NEAR,     /* the same instruction in another form (size, register/memory) */
	MODEL_DEFAULT,  /* not in the table: the class's default (flagged in reports) */
};

/* The timing of one instruction on one model, after the model's rules. */
struct model_timing {
	unsigned latency;         /* issue to result, cycles */
	unsigned uops;            /* dispatch slots (after micro-fusion) */
	double rthroughput;       /* cycles */
	enum model_fu fu;
	unsigned flags;           /* enum model_entry_flags */
	enum model_match match;
	struct model_unit_group groups[MODEL_MAX_GROUPS]; /* execution units */
	unsigned n_groups;
	bool eliminated;          /* handled at rename: nop, zero idiom, eliminated move */
};

/*
 * Looks up the timing of `in` on model m, applying the model's rules:
 *  - nops and zero idioms (INSN_F_NOP, INSN_F_ZERO_IDIOM) take no unit and
 *    have latency 0; so do register-to-register moves the table times as 0
 *    when m->move_elimination;
 *  - pure loads (FU_LOAD) are re-based to m->load_latency (table_load_bias);
 *  - m->overrides replace the table's latency and throughput;
 *  - locked instructions take at least m->lock_latency;
 *  - moves between general and vector registers take the model's
 *    crossing latency (the table's key cannot tell them from vector moves);
 *  - a form the table lacks comes from the nearest form of the same
 *    instruction (a 512-bit form from the 256-bit one on double-pumped
 *    models), else from the class default (MODEL_DEFAULT).
 * Returns the match quality (also in t->match).
 */
enum model_match model_lookup(const struct cpu_model *m, const struct insn *in,
			      struct model_timing *t);

/* The exact table entry for a key, or NULL. */
const struct model_entry *model_table_find(const struct model_table *t, unsigned cs_id,
					   unsigned opsig, unsigned opsize);

/* The class of a capstone x86 id in its register form (FU_ALU if unknown). */
enum model_fu model_x86_id_class(unsigned cs_id);

/* "alu", "div"... */
const char *model_fu_name(enum model_fu fu);

/* The name of execution unit u of model m ("Zn3ALU0"), or "?". */
const char *model_unit_name(const struct cpu_model *m, unsigned u);
/* How many execution units model m has (its table's, or its own list). */
unsigned model_n_units(const struct cpu_model *m);

#endif
