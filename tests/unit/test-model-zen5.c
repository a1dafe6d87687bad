/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the Zen 5 model (znver5): the loops of model/gen/loops.h,
 * which model/gen/measure.c timed on a Zen 5 (AMD EPYC, family 1Ah model 2),
 * decoded from this program and scheduled in their steady state; the
 * schedule must agree with what was measured where the model claims to
 * model it, never exceed it (M is a best case), and differ from Zen 4's
 * where the cores differ.  Nothing is timed here: the figures are the
 * recorded measurements (docs/model.md, "Measured on this machine"). */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <capstone/capstone.h>

#include "core/strbuf.h"
#include "disasm/decode.h"
#include "model/model.h"
#include "model/sched.h"

#if defined(__x86_64__)
#include "model/gen/loops.h"
ML_DEFINE_LOOPS;
#define HAVE_LOOPS 1
#endif

/*
 * Measured on family 1Ah model 2 (`./measure ml_`, best of several runs):
 * cycles per iteration (4 bodies + dec/jnz).  `close`: the model must be
 * within 10% of it; otherwise the schedule is only a lower bound (the core
 * does worse than its unit counts say; docs/model.md says why).  `zen4`:
 * the znver4 schedule of the same loop, where it differs.
 */
static const struct expect {
	const char *name;
	double measured;
	bool close;
	double zen4;       /* 0: not checked */
} expects[] = {
	{ "ml_add_chain", 4, true, 4 },
	{ "ml_load", 16, true, 16 },
	{ "ml_load_d320", 16, true, 0 },
	{ "ml_load_bi", 16, true, 0 },
	{ "ml_load_bi2", 19.5, true, 20 },
	{ "ml_load_bi8", 20, true, 20 },
	{ "ml_load_bid", 19.5, true, 16 },  /* base + index + displacement: 5 on Zen 5 */
	{ "ml_load_bi8d", 19.5, true, 0 },
	{ "ml_lea_bi", 4, true, 0 },
	{ "ml_lea_bi4", 4, true, 0 },
	{ "ml_lea_bd", 4, true, 0 },
	{ "ml_lea_bid", 8, true, 0 },
	{ "ml_lea_bi4d", 8, true, 0 },
	{ "ml_lea_tp", 8.2, true, 12.25 },     /* 6 ALUs (Zen 4: 4) */
	{ "ml_lea3_tp", 24, true, 0 },
	{ "ml_lea3_rol", 6.35, true, 0 },
	{ "ml_movi_tp", 8, true, 24.25 },
	{ "ml_add_tp", 9.4, false, 12.25 },    /* 12 chains: 5 a cycle, not 6 */
	{ "ml_imul_tp", 15.8, true, 48 },   /* 3 multipliers (Zen 4: 1) */
	{ "ml_imul", 12, true, 12 },
	{ "ml_load_tp", 12.2, true, 16 },   /* 4 loads a cycle (Zen 4: 3) */
	{ "ml_ld4st2", 6, true, 5.25 },        /* 4 memory pipes, at most 2 stores */
	{ "ml_ld2st2", 4, true, 0 },
	{ "ml_fwd", 4, true, 8 },           /* memory renaming: add 1 + 0 */
	{ "ml_div", 44.4, true, 40 },
	{ "ml_idiv", 48, true, 0 },
	{ "ml_div_tp", 28, true, 0 },
	{ "ml_lock", 78, true, 32 },
	{ "ml_jmp", 9.1, true, 17 },        /* 2 taken branches a cycle (Zen 4: 1) */
	{ "ml_vaddps", 8, true, 12 },       /* FP add: 2 cycles (Zen 4: 3) */
	{ "ml_vaddps_z", 8, true, 12 },
	{ "ml_vaddps_ytp", 16, true, 0 },
	{ "ml_vaddps_ztp", 16, true, 32 },  /* 512-bit pipes (Zen 4: two halves) */
	{ "ml_vpaddd", 8, true, 4 },        /* simple vector integer ops: 2 (Zen 4: 1) */
	{ "ml_movq_rt", 28, true, 20 },
	{ "ml_vecld", 36.5, true, 36 },
};

#ifdef HAVE_LOOPS
static const struct measured_loop *find_loop(const char *name)
{
	for (size_t i = 0; i < sizeof(measured_loops) / sizeof(measured_loops[0]); i++)
		if (!strcmp(measured_loops[i].name, name))
			return &measured_loops[i];
	fail_msg("no loop %s", name);
	return NULL;
}

/* The instructions the loop executes, in order (the int3 after a jump is skipped). */
static size_t decode_loop(const struct measured_loop *l, struct insn **v, size_t *alloc)
{
	struct decoder *d = decoder_new(ARCH_X86_64);
	size_t n = 0, k = 0;

	assert_non_null(d);
	decode_range(d, l->body, (size_t)(l->end - l->body), 0x401000, v, &n, alloc);
	decoder_free(d);
	for (size_t i = 0; i < n; i++) {
		assert_int_not_equal((*v)[i].kind, INSN_INVALID);
		if ((*v)[i].cs_id != X86_INS_INT3)
			(*v)[k++] = (*v)[i];
	}
	return k;
}

static double loop_cycles(const char *model, const struct insn *v, size_t n, bool show)
{
	struct block_schedule s = BLOCK_SCHEDULE_INIT;
	struct sched_entry loop = { SCHED_ENTRY_LOOP, NULL, 0 };
	struct strbuf sb = STRBUF_INIT;
	double c;

	assert_int_equal(schedule_block(cpu_model_by_name(model), v, n, &loop, &s), 0);
	for (size_t i = 0; show && i < s.n; i++) {
		strbuf_reset(&sb);
		sched_describe(&s, i, &sb);
		printf("#   %-34s %s\n", v[i].text, sb.buf);
	}
	c = s.cycles;
	strbuf_release(&sb);
	block_schedule_release(&s);
	return c;
}
#endif

static void measured_loops_scheduled(void **state)
{
#ifdef HAVE_LOOPS
	struct insn *v = NULL;
	size_t alloc = 0;
	unsigned bad = 0;
	(void)state;

	for (size_t i = 0; i < sizeof(expects) / sizeof(expects[0]); i++) {
		const struct expect *x = &expects[i];
		size_t n = decode_loop(find_loop(x->name), &v, &alloc);
		double z5 = loop_cycles("znver5", v, n, false), z4 = loop_cycles("znver4", v, n, false);
		bool ok = z5 <= x->measured * 1.05 &&
			  (!x->close || (z5 >= x->measured * 0.9 && z5 <= x->measured * 1.1)) &&
			  (!x->zen4 || (z4 > x->zen4 - 0.01 && z4 < x->zen4 + 0.01));

		printf("# %-14s measured %6.2f  znver5 %6.2f  znver4 %6.2f%s\n", x->name, x->measured,
		       z5, z4, ok ? "" : "  <-- wrong");
		if (!ok) {
			loop_cycles("znver5", v, n, true);
			bad++;
		}
	}
	free(v);
	assert_int_equal(bad, 0);
#else
	(void)state;
	skip();
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(measured_loops_scheduled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
