/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model/fu.h - functional-unit classes of instructions.  Shared by the
 * model tables, the scheduler, the culprit analysis and the offline table
 * generator (model/gen/), so it depends on nothing.
 *
 * A class says what kind of execution resource an instruction needs; the
 * processor model says how many such units there are and how long they stay
 * busy.  Classes are assigned from the mnemonic (and, for moves, from the
 * operand kinds) by model/gen/gen-model.c.
 */
#ifndef DCPI_MODEL_FU_H
#define DCPI_MODEL_FU_H

#define MODEL_FU_LIST(X)                                                          \
	X(NONE, "none")         /* nop, endbr, zero idiom, eliminated move */        \
	X(ALU, "alu")           /* integer add/logic/shift/lea/cmov/setcc/bit ops */ \
	X(MUL, "mul")           /* integer multiply */                               \
	X(DIV, "div")           /* integer divide */                                 \
	X(BRANCH, "branch")     /* jumps, calls, returns */                          \
	X(LOAD, "load")         /* pure loads: mov from memory, pop, broadcasts */   \
	X(STORE, "store")       /* pure stores: mov to memory, push */               \
	X(FP_ADD, "fp-add")     /* FP add/sub/min/max/compare */                     \
	X(FP_MUL, "fp-mul")     /* FP multiply, FMA, SIMD integer multiply */        \
	X(FP_DIV, "fp-div")     /* FP divide and square root */                      \
	X(VEC, "vec")           /* SIMD integer and logic, moves between registers */\
	X(SHUFFLE, "shuffle")   /* shuffles, permutes, inserts, extracts, packs */   \
	X(CVT, "cvt")           /* conversions */                                    \
	X(X87, "x87")           /* x87 stack arithmetic */                           \
	X(STRING, "string")     /* rep movs/stos/cmps/scas: variable length */       \
	X(SYSTEM, "system")     /* fences, serialising, privileged, microcoded */

enum model_fu {
#define MODEL_FU_ENUM(name, str) FU_##name,
	MODEL_FU_LIST(MODEL_FU_ENUM)
#undef MODEL_FU_ENUM
	FU__COUNT
};

#endif
