/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model/models.c - the processor models: machine facts with their sources.
 * The per-instruction numbers are in the generated tables (model/table-*.c);
 * docs/model.md has the full provenance.  Sources cited below:
 *
 *  [SOG19h]  AMD Software Optimization Guide for AMD Family 19h Processors
 *            (pub. 56665, Zen 3), as quoted in LLVM's X86ScheduleZnver3.td.
 *  [SOGZen4] AMD Software Optimization Guide for the AMD Family 19h (Zen 4)
 *            Microarchitecture (pub. 57647), as quoted in LLVM's
 *            X86ScheduleZnver4.td (LLVM 16 and later; the znver4 table is
 *            llvm-mca-19's).
 *  [LLVM-SKL] LLVM's X86SchedSkylakeClient.td (SchedMachineModel).
 *  [Intel]   Intel 64 and IA-32 Architectures Optimization Reference Manual,
 *            Skylake chapter (4 uops allocated and retired per cycle per thread,
 *            2 loads and 1 store per cycle).
 *  [corsix]  P. Cawley, "x86 macro-op fusion notes" (corsix.org): which
 *            flag-setting instructions fuse with which jcc, per core.
 *  [SOGZen5] AMD Software Optimization Guide for the AMD Zen5 Microarchitecture
 *            (pub. 58455 rev. 1.00, August 2024), as quoted in LLVM 19's
 *            X86ScheduleZnver5.td (read for its facts; nothing copied).
 *  [C&C]     Chips and Cheese: "AMD's Strix Point: Zen 5 Hits Mobile" and
 *            "AMD's Ryzen 9950X: Zen 5 on Desktop" (2024): two taken branches a
 *            cycle (2-ahead predictor), 512-bit FP datapath on desktop/server,
 *            256-bit on mobile.
 *  [Linux]   arch/x86/kernel/cpu/amd.c: the Zen 5 model ranges of family 1Ah.
 *  [LLVM-SPR] LLVM 19's X86SchedSapphireRapids.td (SchedMachineModel: 6
 *            allocated a cycle, 512-entry reorder buffer, 5-cycle loads,
 *            mispredict penalty 14; vector loads 7), the model llvm-mca-19
 *            -mcpu=sapphirerapids times the goldencove table with.
 *  [GLC]     Intel's Architecture Day 2021 on Golden Cove as reported by
 *            Chips and Cheese, "Popping the Hood on Golden Cove" (2021) and
 *            AnandTech's Alder Lake deep dive: 6-wide decode and allocation,
 *            12 ports (5 integer ALUs, loads on 3, stores on 2), load
 *            buffer 192, store buffer 114, 5-cycle L1 data cache.
 *  [measured] model/gen/measure.c on this project's machines (AMD EPYC,
 *            family 25 model 17, Zen 4; AMD EPYC, family 26 model 2, Zen 5),
 *            docs/model.md "Measured"; on an Intel Xeon of the Sapphire
 *            Rapids class (KVM, family 6 model 167): dependent `add $1, %rax`
 *            15.4 a ns against 4.0 for `add %rbx, %rax` at 4.0 GHz (an imul
 *            chain's clock), the collector's signatures (collect/calib.c).
 */
#include "config.h"

#include <capstone/capstone.h>

#include "core/xalloc.h"
#include "model/model.h"

/*
 * Zen 4 measured (model/gen/measure.c): div r32 and r64 with a small
 * quotient take 10 cycles and start every 7, idiv r64 9 (llvm-mca-19's
 * znver4, as its znver3: 13-17, both); 15-16 with a 62-bit quotient.  M_i
 * wants the best case.
 */
static const struct model_override znver4_overrides[] = {
	{ X86_INS_DIV, 10, 700, "measured: small quotient", 0 },
	{ X86_INS_IDIV, 9, 700, "measured: small quotient, with cqo", 0 },
};

static const struct cpu_model znver4 = {
	.name = "znver4",
	.description = "AMD Zen 4 (family 19h models 10h-1Fh, 60h-7Fh, A0h-AFh)",
	.provenance = "llvm-mca-19 -mcpu=znver4 table; machine facts from AMD's Zen 4 "
		      "optimization guide as quoted by LLVM's znver4 model, and measured",
	.arch = ARCH_X86_64,
	.table = &model_table_znver4,
	.dispatch_width = 6,        /* [SOGZen4] 2.9.8 */
	.retire_width = 8,          /* [SOG19h] 2.10.3 says 8; [SOGZen4] as quoted says 9 */
	.rob_size = 320,            /* [SOGZen4] 2.10.3 */
	.taken_per_cycle = 1,
	.fusion = FUSION_AMD_ZEN3,  /* [corsix] Zen 3+ */
	.move_elimination = true,   /* llvm-mca-19 times reg-reg moves as 0 on znver4 */
	.stack_engine = true,
	.microfusion = false,       /* the table already counts macro-ops */
	.zmm_double_pumped = true,  /* [SOGZen4] 512-bit ops on 256-bit pipes; [measured]
				       (the table has most 512-bit forms so: for the others) */
	.load_latency = 4,          /* [SOGZen4] 2.12; [measured] 4 for [r] and [r+d] */
	.scaled_index_latency = 1,  /* [measured] [r+r*2], [r+r*8], [r+r*8+d]: 5; [r+r]: 4 */
	.vec_load_latency = 7,      /* [SOGZen4] 2.12 */
	.table_load_bias = 1,       /* llvm-mca-19 znver4: mov r64,[m] = 5 */
	.store_forward_latency = 1, /* [measured] store + reload of [r]: 1 cycle (memory renaming) */
	.lock_latency = 8,          /* [measured] lock xadd, uncontended, L1 */
	.lea_units = 0xf,           /* [measured] lea r,[r+r]: 4 a cycle, with adds 4 a cycle
				       (llvm-mca-19's znver4: no unit) */
	.lea3_latency = 2,          /* [measured] lea r,[r+r+d]: latency 2, 2 a cycle, and */
	.lea3_units = 0x6,          /*   with rol (ALU1/2) or adds: two ops, one on ALU1/2 */
	.gpr_to_vec_latency = 3,    /* [measured] vmovq xmm,r + vmovq r,xmm: 6; */
	.vec_to_gpr_latency = 2,    /*   vmovq xmm,[r] + vmovq r,xmm: 8.9 */
	.loads_per_cycle = 3,       /* [SOGZen4] 2.12: three memory ops per cycle; [measured] */
	.stores_per_cycle = 2,      /* [SOGZen4] 2.12; [measured] 2 to one line, 1 to two lines */
	.load_queue = 72,           /* [SOGZen4] 2.12 as quoted by LLVM */
	.store_queue = 64,          /* [SOGZen4] 2.12 */
	.cache_line = 64,
	.int_dividers = 1,          /* ALU0 [SOGZen4] 2.10.2 */
	.int_multipliers = 1,       /* ALU1 (LLVM znver4) */
	.fp_dividers = 1,           /* FP1 */
	.mispredict_penalty = 13,   /* [SOGZen4] 2.8, common case */
	.overrides = znver4_overrides,
	.n_overrides = ARRAY_SIZE(znver4_overrides),
};

/*
 * Zen 5 measured (family 1Ah model 2): div r64/r32 with a small quotient
 * 11 cycles, idiv r64 11 (12 with cqo), one every 6-7; 16-18 with a 62-bit
 * quotient.
 */
static const struct model_override znver5_overrides[] = {
	{ X86_INS_DIV, 11, 650, "measured: small quotient", 0 },
	{ X86_INS_IDIV, 11, 650, "measured: small quotient, with cqo", 0 },
	/* llvm-mca's znver3: two ALU-cycles (2 a cycle on 4 ALUs) */
	{ X86_INS_MOV, 1, 17, "measured: mov r,imm 6 a cycle", OPK_REG | OPK_IMM << 2 },
};

/*
 * Zen 5's units on the znver3 table: the table's nine (renamed), then the two
 * ALUs Zen 5 adds.  Integer groups spread over them as measured.
 */
static const char *const znver5_units[] = {
	"Zn5ALU0", "Zn5ALU1", "Zn5ALU2", "Zn5ALU3", "Zn5BRU", "Zn5FP2", "Zn5FP3", "Zn5FP0",
	"Zn5FP1", "Zn5ALU4", "Zn5ALU5",
};
#define ZN5_ALUS 0x60fu    /* ALU0-3, ALU4, ALU5 */
static const struct model_unit_widen znver5_widen[] = {
	{ 0xf, ZN5_ALUS },   /* any ALU: 6 [SOGZen5]; [measured] 6 mov-imm or andn a cycle */
	{ 0x9, ZN5_ALUS },   /* cmov/setcc (ALU0/3 on Zen 3): [measured] over 4 cmov a cycle */
	{ 0x6, 0x7 },        /* shifts/rotates: [measured] rol, shlx 3 a cycle (ALU0-2) */
	{ 0x2, 0x7 },        /* multiply: [measured] imul r,r 3 a cycle */
	{ 0x11, 0x608 },     /* branches: 3 units (ALU3-5) [SOGZen5] */
};

/*
 * Zen 5 (znver5): the znver3 table, six ALUs, four memory pipes, and what
 * was measured on family 1Ah model 2 (docs/model.md).  ZEN5_FACTS is shared
 * with the 256-bit mobile variant.
 */
#define ZEN5_FACTS                                                                        \
	.arch = ARCH_X86_64,                                                              \
	.table = &model_table_znver3,                                                     \
	.dispatch_width = 8,        /* [SOGZen5] 2.9.7; [measured] 6 mov-imm + 2 zero idioms a cycle */ \
	.retire_width = 8,          /* [SOGZen5] 2.10.3 */                                \
	.rob_size = 448,            /* [SOGZen5] 2.10.3 */                                \
	.taken_per_cycle = 2,       /* [C&C]; [measured] 1.9 jumps a cycle */             \
	.fusion = FUSION_AMD_ZEN3,  /* [corsix] Zen 3+, assumed unchanged */              \
	.move_elimination = true,                                                         \
	.stack_engine = true,                                                             \
	.units = znver5_units,                                                            \
	.n_units = ARRAY_SIZE(znver5_units),                                              \
	.widen = znver5_widen,                                                            \
	.n_widen = ARRAY_SIZE(znver5_widen),                                              \
	.load_latency = 4,          /* [SOGZen5] 2.6.2; [measured] [r], [r+8], [r+320], [r+r]: 4 */ \
	.scaled_index_latency = 1,  /* [measured] [r+r*2], [r+r*8], [r+r*8+8]: 5 */       \
	.index3_latency = true,     /* [measured] [r+r+8]: 5 */                           \
	.vec_load_latency = 7,      /* [SOGZen5] 2.6.2 */                                 \
	.table_load_bias = 1,       /* llvm-mca-14 znver3: mov r64,[m] = 5 */             \
	.store_forward_latency = 0, /* [measured] add + store + reload: 1 cycle (memory renaming) */ \
	.lock_latency = 20,         /* [measured] lock xadd, lock add, xchg [m],r: 20 */  \
	.lea_units = ZN5_ALUS,      /* [measured] lea r,[r+r], [r+r*4]: 6 or more a cycle */ \
	.lea3_latency = 2,          /* [measured] lea r,[r+r+8], [r+r*4+8]: 2, 2 a cycle, */ \
	.lea3_units = ZN5_ALUS,     /*   3 ALU-cycles each with rol or not (fit) */       \
	.lea3_cycles = 2,                                                                 \
	.gpr_to_vec_latency = 5,    /* [measured] vmovq xmm,r + vmovq r,xmm: 7; */        \
	.vec_to_gpr_latency = 2,    /*   vmovq xmm,[r] + vmovq r,xmm: 9.1 (load 7) */     \
	.loads_per_cycle = 4,       /* [SOGZen5]; [measured] 4 a cycle */                 \
	.stores_per_cycle = 2,      /* [SOGZen5]; [measured] 2 a cycle, one line or two */ \
	.stores_share_load_pipes = true, /* [measured] 4 loads + 2 stores: 1.5 cycles */  \
	.vec_simple_latency = 2,    /* [measured] vpand, vpxor, vpaddd, vpshufb, vmaxps: 2 */ \
	.fp_add_latency = 2,        /* [measured] vaddps x/y/zmm, vaddpd, addsd: 2 */      \
	.load_queue = 128,          /* [SOGZen5] as quoted by LLVM */                     \
	.store_queue = 104,         /* [SOGZen5] */                                       \
	.cache_line = 64,                                                                 \
	.int_dividers = 1,                                                                \
	.int_multipliers = 3,       /* [measured] imul r,r 3 a cycle */                   \
	.fp_dividers = 1,                                                                 \
	.mispredict_penalty = 15,   /* [SOGZen5] 2.8, common case; [measured] 14.8 */     \
	.overrides = znver5_overrides,                                                    \
	.n_overrides = ARRAY_SIZE(znver5_overrides)

static const struct cpu_model znver5 = {
	.name = "znver5",
	.description = "AMD Zen 5 (family 1Ah models 00h-1Fh, 40h-4Fh, 70h-7Fh: server, desktop)",
	.provenance = "llvm-mca-14 -mcpu=znver3 table (LLVM 14 has no znver5) widened to six "
		      "ALUs; machine facts from AMD's Zen 5 optimization guide as quoted by "
		      "LLVM 19's znver5 model, and measured on family 1Ah model 2",
	ZEN5_FACTS,
	.zmm_double_pumped = false, /* [C&C]; [measured] vaddps zmm 2 a cycle, as ymm */
};

static const struct cpu_model znver5_256 = {
	.name = "znver5-256",
	.description = "AMD Zen 5 with 256-bit vector pipes (family 1Ah models 20h-2Fh, "
		       "60h-6Fh: mobile)",
	.provenance = "as znver5, with 512-bit operations on 256-bit pipes (Chips and Cheese, "
		      "Strix Point); not measured on such a CPU",
	ZEN5_FACTS,
	.zmm_double_pumped = true,  /* [C&C] Strix Point */
};

static const struct cpu_model znver3 = {
	.name = "znver3",
	.description = "AMD Zen 3 (family 19h, other models)",
	.provenance = "llvm-mca-14 -mcpu=znver3 table; machine facts from AMD's family 19h "
		      "optimization guide as quoted by LLVM's znver3 model",
	.arch = ARCH_X86_64,
	.table = &model_table_znver3,
	.dispatch_width = 6,        /* [SOG19h] 2.9.6 */
	.retire_width = 8,          /* [SOG19h] 2.10.3 */
	.rob_size = 256,            /* [SOG19h] 2.10.3 */
	.taken_per_cycle = 1,
	.fusion = FUSION_AMD_ZEN3,
	.move_elimination = true,
	.stack_engine = true,
	.load_latency = 4,          /* [SOG19h] 2.12 */
	.scaled_index_latency = 1,  /* as measured on Zen 4 (assumed: the same load pipeline) */
	.vec_load_latency = 7,
	.table_load_bias = 1,
	.store_forward_latency = 1, /* assumed as measured on Zen 4 (memory renaming) */
	.lock_latency = 8,
	.lea_units = 0xf,           /* as measured on Zen 4 */
	.lea3_latency = 2,
	.lea3_units = 0x6,
	.gpr_to_vec_latency = 3,    /* assumed as measured on Zen 4 */
	.vec_to_gpr_latency = 2,
	.loads_per_cycle = 3,
	.stores_per_cycle = 2,
	.load_queue = 72,
	.store_queue = 64,
	.cache_line = 64,
	.int_dividers = 1,
	.int_multipliers = 1,
	.fp_dividers = 1,
	.mispredict_penalty = 13,   /* [SOG19h] 2.8 */
};

/*
 * Skylake's machine facts (skylake), which the fallback (generic_x86_64)
 * shares: the smaller of the known buffer sizes, the fusion rules every
 * recent x86 core has.
 */
#define SKYLAKE_FACTS                                                                     \
	.arch = ARCH_X86_64,                                                              \
	.table = &model_table_skylake,                                                    \
	.dispatch_width = 4,        /* [Intel] (LLVM says 6: its decode width) */         \
	.retire_width = 4,          /* [Intel], per thread */                             \
	.rob_size = 224,            /* [LLVM-SKL] */                                      \
	.taken_per_cycle = 1,                                                             \
	.fusion = FUSION_INTEL_SNB, /* [corsix] */                                        \
	.move_elimination = true,                                                         \
	.stack_engine = true,                                                             \
	.microfusion = true,        /* llvm-mca counts unfused-domain uops */             \
	.load_latency = 4,          /* [Intel] simple addressing; LLVM uses 5 */          \
	.scaled_index_latency = 1,  /* [Intel] 5 with an index (4 only for base + small disp) */ \
	.vec_load_latency = 6,                                                            \
	.table_load_bias = 1,       /* llvm-mca-14 skylake: mov r64,[m] = 5 */            \
	.store_forward_latency = 5,                                                       \
	.lock_latency = 18,                                                               \
	.loads_per_cycle = 2,                                                             \
	.stores_per_cycle = 1,                                                            \
	.load_queue = 72,                                                                 \
	.store_queue = 56,                                                                \
	.cache_line = 64,                                                                 \
	.int_dividers = 1,                                                                \
	.int_multipliers = 1,                                                             \
	.fp_dividers = 1,                                                                 \
	.mispredict_penalty = 14    /* [LLVM-SKL] */

static const struct cpu_model skylake = {
	.name = "skylake",
	.description = "Intel Skylake family (Skylake, Kaby/Coffee/Comet Lake, Skylake-SP)",
	.provenance = "llvm-mca-14 -mcpu=skylake table; machine facts from Intel's optimization "
		      "manual and LLVM's Skylake model",
	SKYLAKE_FACTS,
};

/*
 * The fallback: a 4-wide core with the Skylake table and Skylake's machine
 * facts (the scaled-index latency is both vendors').
 */
static const struct cpu_model generic_x86_64 = {
	.name = "generic-x86-64",
	.description = "generic modern x86-64 core (4-wide, Skylake-like timings)",
	.provenance = "llvm-mca-14 -mcpu=skylake table; conservative machine facts common to "
		      "the known models",
	SKYLAKE_FACTS,
};

/*
 * Golden Cove (Alder Lake and Raptor Lake P-cores, Sapphire Rapids,
 * Emerald Rapids): llvm-mca-19's Sapphire Rapids table with Golden Cove's
 * machine facts.  Its renamer folds dependent adds of small immediates: a
 * chain of `add $1, %rax` retires several a cycle ([measured], 3.85 a
 * cycle; llvm-mca-19 times add/sub r64, imm8 and inc/dec r64 as no
 * micro-op).  Not measured here: what this machine cannot run.
 */
static const struct cpu_model goldencove = {
	.name = "goldencove",
	.description = "Intel Golden Cove (Alder Lake, Raptor Lake P-cores; Sapphire Rapids, "
		       "Emerald Rapids)",
	.provenance = "llvm-mca-19 -mcpu=sapphirerapids table; machine facts from LLVM 19's "
		      "Sapphire Rapids model and Intel's Architecture Day 2021; add-immediate "
		      "folding measured on a Sapphire Rapids-class host",
	.arch = ARCH_X86_64,
	.table = &model_table_goldencove,
	.dispatch_width = 6,        /* [LLVM-SPR] IssueWidth 6 (allocation); [GLC] */
	.retire_width = 8,          /* assumed: no narrower than the 8 micro-ops a cycle the
				       micro-op cache delivers [GLC]; not measured */
	.rob_size = 512,            /* [LLVM-SPR], [GLC] */
	.taken_per_cycle = 1,
	.fusion = FUSION_INTEL_SNB, /* [corsix] Sandy Bridge..Skylake rules, assumed unchanged */
	.move_elimination = true,   /* llvm-mca-19 times reg-reg moves as no micro-op */
	.stack_engine = true,
	.microfusion = true,        /* llvm-mca-19 counts unfused-domain micro-ops (add r,[m]: 2) */
	.fold_add_imm = true,       /* [measured] 3.85 dependent add $1 a cycle; [LLVM-SPR] */
	.lea_units = 0x1f,          /* [GLC] lea on the five integer ports, one cycle */
	.lea_units_replace = true,  /*   ([LLVM-SPR] has port 1 only) */
	.load_latency = 5,          /* [LLVM-SPR] LoadLatency 5, any address; [GLC] */
	.vec_load_latency = 7,      /* [LLVM-SPR] WriteFLoadX 7 */
	.table_load_bias = 0,       /* llvm-mca-19 sapphirerapids: mov r64,[m] = 5 */
	.store_forward_latency = 5, /* assumed as Skylake; not measured */
	.lock_latency = 18,         /* assumed as Skylake; not measured */
	.loads_per_cycle = 3,       /* [GLC] ports 2, 3, 11 */
	.stores_per_cycle = 2,      /* [GLC] store data 4, 9; address 7, 8 */
	.load_queue = 192,          /* [GLC] */
	.store_queue = 114,         /* [GLC] */
	.cache_line = 64,
	.int_dividers = 1,          /* [LLVM-SPR] port 1 */
	.int_multipliers = 1,       /* [LLVM-SPR] port 1 */
	.fp_dividers = 1,           /* [LLVM-SPR] port 0 */
	.mispredict_penalty = 14,   /* [LLVM-SPR] */
};

const struct cpu_model *const cpu_models[] = {
	&znver5, &znver5_256, &znver4, &znver3, &goldencove, &skylake, &generic_x86_64, NULL
};
