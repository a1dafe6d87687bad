/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tests/bench/model-bench.c - how fast the static scheduler is: schedules
 * synthetic basic blocks (a mix of ALU, load, store, multiply and vector
 * instructions with dependences, ending in a fused compare and branch) with
 * the cold and the self-loop entry, and prints instructions per second.
 *
 *   model-bench [BLOCKS]
 */
#include "config.h"

#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/model.h"
#include "model/sched.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static unsigned rnd(unsigned *state)
{
	*state = *state * 1103515245u + 12345u;
	return *state >> 16;
}

/* One instruction of the mix, reading and writing random registers. */
static void make_insn(struct insn *in, uint64_t addr, unsigned *seed)
{
	unsigned a = rnd(seed) % 14, b = rnd(seed) % 14, kind = rnd(seed) % 10;

	memset(in, 0, sizeof(*in));
	in->addr = addr;
	in->len = 4;
	in->nops = 2;
	in->opsize = 8;
	regset_add(&in->reads, a);
	regset_add(&in->reads, b);
	regset_add(&in->writes, a);
	switch (kind) {
	case 0: case 1:
		in->cs_id = X86_INS_MOV;
		in->opsig = OPK_REG | OPK_MEM << 2;
		in->flags = INSN_F_LOAD;
		snprintf(in->text, sizeof(in->text), "mov r, qword ptr [r%u + 8]", b);
		break;
	case 2:
		in->cs_id = X86_INS_MOV;
		in->opsig = OPK_MEM | OPK_REG << 2;
		in->flags = INSN_F_STORE;
		memset(&in->writes, 0, sizeof(in->writes));
		snprintf(in->text, sizeof(in->text), "mov qword ptr [r%u + 16], r", b);
		break;
	case 3:
		in->cs_id = X86_INS_IMUL;
		in->opsig = OPK_REG | OPK_REG << 2;
		strcpy(in->text, "imul r, r");
		break;
	case 4:
		in->cs_id = X86_INS_VADDPS;
		in->opsig = OPK_REG | OPK_REG << 2 | OPK_REG << 4;
		in->nops = 3;
		in->opsize = 32;
		strcpy(in->text, "vaddps ymm, ymm, ymm");
		break;
	default:
		in->cs_id = X86_INS_ADD;
		in->opsig = OPK_REG | OPK_REG << 2;
		regset_add(&in->writes, DREG_FLAGS);
		strcpy(in->text, "add r, r");
	}
}

static void make_block(struct insn *b, size_t n, unsigned *seed)
{
	for (size_t i = 0; i + 2 < n; i++)
		make_insn(&b[i], 0x1000 + 4 * i, seed);
	memset(&b[n - 2], 0, 2 * sizeof(*b));
	b[n - 2].addr = 0x1000 + 4 * (n - 2);
	b[n - 2].len = 4;
	b[n - 2].cs_id = X86_INS_CMP;
	b[n - 2].opsig = OPK_REG | OPK_REG << 2;
	b[n - 2].nops = 2;
	b[n - 2].opsize = 8;
	regset_add(&b[n - 2].reads, DREG_RCX);
	regset_add(&b[n - 2].writes, DREG_FLAGS);
	strcpy(b[n - 2].text, "cmp rcx, rdx");
	b[n - 1].addr = 0x1000 + 4 * (n - 1);
	b[n - 1].len = 4;
	b[n - 1].kind = INSN_CJUMP;
	b[n - 1].target = 0x1000;
	b[n - 1].cs_id = X86_INS_JNE;
	b[n - 1].opsig = OPK_IMM;
	b[n - 1].nops = 1;
	regset_add(&b[n - 1].reads, DREG_FLAGS);
	strcpy(b[n - 1].text, "jne 0x1000");
}

static void run(const struct cpu_model *m, const struct sched_entry *e, size_t blocks,
		const char *what)
{
	struct block_schedule s = BLOCK_SCHEDULE_INIT;
	struct insn b[40];
	unsigned seed = 42;
	size_t insns = 0;
	double cycles = 0, t = now();

	for (size_t k = 0; k < blocks; k++) {
		size_t n = 3 + rnd(&seed) % 30;

		make_block(b, n, &seed);
		if (schedule_block(m, b, n, e, &s))
			exit(1);
		insns += n;
		cycles += s.cycles;
	}
	t = now() - t;
	printf("%-8s %-5s %8zu blocks %9zu insns %7.3f s  %6.2f us/insn  %5.2f cycles/insn\n",
	       m->name, what, blocks, insns, t, 1e6 * t / insns, cycles / insns);
	block_schedule_release(&s);
}

int main(int argc, char **argv)
{
	size_t blocks = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
	struct sched_entry loop = { SCHED_ENTRY_LOOP, NULL, 0 };

	run(cpu_model_by_name("znver4"), NULL, blocks, "cold");
	run(cpu_model_by_name("znver4"), &loop, blocks / 10, "loop");
	/* Zen 5: more units, and a 448-entry ROB for the loop's warm-up */
	run(cpu_model_by_name("znver5"), NULL, blocks, "cold");
	run(cpu_model_by_name("znver5"), &loop, blocks / 10, "loop");
	run(cpu_model_generic(), NULL, blocks, "cold");
	return 0;
}
