/*
 * model/models.c - the processor models: machine facts with their sources.
 * The per-instruction numbers are in the generated tables (model/table-*.c);
 * docs/model.md has the full provenance.  Sources cited below:
 *
 *  [SOG19h]  AMD Software Optimization Guide for AMD Family 19h Processors
 *            (pub. 56665, Zen 3), as quoted in LLVM's X86ScheduleZnver3.td.
 *  [SOGZen4] AMD Software Optimization Guide for the AMD Family 19h (Zen 4)
 *            Microarchitecture (pub. 57647), as quoted in LLVM 16's
 *            X86ScheduleZnver4.td (read for its facts; LLVM 14 has no znver4).
 *  [LLVM-SKL] LLVM's X86SchedSkylakeClient.td (SchedMachineModel).
 *  [Intel]   Intel 64 and IA-32 Architectures Optimization Reference Manual,
 *            Skylake chapter (4 uops allocated and retired per cycle per thread,
 *            2 loads and 1 store per cycle).
 *  [corsix]  P. Cawley, "x86 macro-op fusion notes" (corsix.org): which
 *            flag-setting instructions fuse with which jcc, per core.
 *  [measured] model/gen/measure.c on this project's machines (AMD EPYC,
 *            family 25 model 17, Zen 4), docs/model.md "Measured".
 */
#include "config.h"

#include <capstone/capstone.h>

#include "core/xalloc.h"
#include "model/model.h"

/*
 * Zen 4 measured (model/gen/measure.c): div r32 and r64 with a small
 * quotient take 10 cycles and start every 7, idiv r64 9 (llvm-mca's znver3:
 * 13-17, both); 15-16 with a 62-bit quotient.  M_i wants the best case.
 */
static const struct model_override znver4_overrides[] = {
	{ X86_INS_DIV, 10, 700, "measured: small quotient" },
	{ X86_INS_IDIV, 9, 700, "measured: small quotient, with cqo" },
};

static const struct cpu_model znver4 = {
	.name = "znver4",
	.description = "AMD Zen 4 (family 19h models 10h-1Fh, 60h-7Fh, A0h-AFh)",
	.provenance = "llvm-mca-14 -mcpu=znver3 table (LLVM 14 has no znver4); 512-bit forms "
		      "from the 256-bit ones at half throughput; machine facts from AMD's Zen 4 "
		      "optimization guide as quoted by LLVM 16's znver4 model, and measured",
	.arch = ARCH_X86_64,
	.table = &model_table_znver3,
	.dispatch_width = 6,        /* [SOGZen4] 2.9.8 */
	.retire_width = 8,          /* [SOG19h] 2.10.3 says 8; [SOGZen4] as quoted says 9 */
	.rob_size = 320,            /* [SOGZen4] 2.10.3 */
	.taken_per_cycle = 1,
	.fusion = FUSION_AMD_ZEN3,  /* [corsix] Zen 3+ */
	.move_elimination = true,   /* llvm-mca times reg-reg moves as 0 on znver3 */
	.stack_engine = true,
	.microfusion = false,       /* the table already counts macro-ops */
	.zmm_double_pumped = true,  /* [SOGZen4] 512-bit ops on 256-bit pipes; [measured] */
	.load_latency = 4,          /* [SOGZen4] 2.12; [measured] 4 for [r] and [r+d] */
	.scaled_index_latency = 1,  /* [measured] [r+r*2], [r+r*8], [r+r*8+d]: 5; [r+r]: 4 */
	.vec_load_latency = 7,      /* [SOGZen4] 2.12 */
	.table_load_bias = 1,       /* llvm-mca-14 znver3: mov r64,[m] = 5 */
	.store_forward_latency = 1, /* [measured] store + reload of [r]: 1 cycle (memory renaming) */
	.lock_latency = 8,          /* [measured] lock xadd, uncontended, L1 */
	.lea_units = 0xf,           /* [measured] lea r,[r+r]: 4 a cycle, with adds 4 a cycle */
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

static const struct cpu_model skylake = {
	.name = "skylake",
	.description = "Intel Skylake family (Skylake, Kaby/Coffee/Comet Lake, Skylake-SP)",
	.provenance = "llvm-mca-14 -mcpu=skylake table; machine facts from Intel's optimization "
		      "manual and LLVM's Skylake model",
	.arch = ARCH_X86_64,
	.table = &model_table_skylake,
	.dispatch_width = 4,        /* [Intel] (LLVM says 6: its decode width) */
	.retire_width = 4,          /* [Intel], per thread */
	.rob_size = 224,            /* [LLVM-SKL] */
	.taken_per_cycle = 1,
	.fusion = FUSION_INTEL_SNB, /* [corsix] */
	.move_elimination = true,
	.stack_engine = true,
	.microfusion = true,        /* llvm-mca counts unfused-domain uops */
	.load_latency = 4,          /* [Intel] simple addressing; LLVM uses 5 */
	.scaled_index_latency = 1,  /* [Intel] 5 with an index (4 only for base + small disp) */
	.vec_load_latency = 6,
	.table_load_bias = 1,       /* llvm-mca-14 skylake: mov r64,[m] = 5 */
	.store_forward_latency = 5,
	.lock_latency = 18,
	.loads_per_cycle = 2,
	.stores_per_cycle = 1,
	.load_queue = 72,
	.store_queue = 56,
	.cache_line = 64,
	.int_dividers = 1,
	.int_multipliers = 1,
	.fp_dividers = 1,
	.mispredict_penalty = 14,   /* [LLVM-SKL] */
};

/*
 * The fallback: a 4-wide core with the Skylake table, the fusion rules every
 * recent x86 core shares, and the smaller of the known buffer sizes.
 */
static const struct cpu_model generic_x86_64 = {
	.name = "generic-x86-64",
	.description = "generic modern x86-64 core (4-wide, Skylake-like timings)",
	.provenance = "llvm-mca-14 -mcpu=skylake table; conservative machine facts common to "
		      "the known models",
	.arch = ARCH_X86_64,
	.table = &model_table_skylake,
	.dispatch_width = 4,
	.retire_width = 4,
	.rob_size = 224,
	.taken_per_cycle = 1,
	.fusion = FUSION_INTEL_SNB,
	.move_elimination = true,
	.stack_engine = true,
	.microfusion = true,
	.load_latency = 4,
	.scaled_index_latency = 1,  /* both vendors' */
	.vec_load_latency = 6,
	.table_load_bias = 1,
	.store_forward_latency = 5,
	.lock_latency = 18,
	.loads_per_cycle = 2,
	.stores_per_cycle = 1,
	.load_queue = 72,
	.store_queue = 56,
	.cache_line = 64,
	.int_dividers = 1,
	.int_multipliers = 1,
	.fp_dividers = 1,
	.mispredict_penalty = 14,
};

const struct cpu_model *const cpu_models[] = {
	&znver4, &znver3, &skylake, &generic_x86_64, NULL
};
