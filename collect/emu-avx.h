/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/emu-avx.h - instructions unicorn 2.0.1 refuses, done in software
 * by the burst emulator (collect/emu-engine.h) when the translator stops
 * at one, so that a burst goes on.
 *
 * unicorn 2.0.1 is QEMU 5's translator: no AVX, AVX2 or AVX-512, and
 * neither popcnt, pclmulqdq nor movbe.  glibc picks its string functions
 * (memcpy, memset, memcmp, strlen, memchr...) by the CPU, here the EVEX
 * (AVX-512) ones, so that without these a burst of any program ends at its
 * first call to one (measured: 73% of xz's bursts ended at vmovdqu8 in
 * memcmp).  Done here, for 128, 256 and 512 bits: the moves (masked and
 * zero-masked, a masked access touching only the elements it selects, as
 * the hardware's, which glibc relies on at page ends), broadcasts, compares
 * into mask registers or vectors, vptestm/nm, vpmovmskb, vptest, the logic
 * and byte arithmetic of those functions, the mask registers' moves and
 * tests, vzeroupper and vzeroall; popcnt, pclmulqdq and movbe.
 *
 * The state beyond unicorn's (the upper 384 bits of zmm0-15, zmm16-31, the
 * mask registers) is kept here.  It starts at zero: a burst gets the SSE
 * state of the thread (PTRACE_GETFPREGS), not its AVX state, which the
 * functions above never read before they write it.
 */
#ifndef DCPI_COLLECT_EMU_AVX_H
#define DCPI_COLLECT_EMU_AVX_H

#include <capstone/capstone.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unicorn/unicorn.h>

struct emu_vregs {
	uint8_t z[32][64];      /* zmm0-31; bytes 0-15 of zmm0-15 are unicorn's xmm0-15 */
	uint64_t k[8];
};

/*
 * The memory an instruction reads or writes, through the engine (which
 * fetches a page it has not got): 0, or -1 if it cannot be read.
 */
struct emu_avx_mem {
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	int (*write)(void *ctx, uint64_t addr, const void *buf, size_t len);
	void *ctx;
};

/*
 * Does the instruction at rip, its bytes buf[0..n) (capstone's decoding in
 * `in`, NULL if it has none), on uc's registers, v and memory: 1 if done
 * (*len: its length; rip is the caller's to move past it), 0 if it is not
 * one done here, -1 if it could not access its memory.
 */
int emu_avx_do(uc_engine *uc, csh cs, const cs_insn *in, const uint8_t *buf, size_t n,
	       uint64_t rip, struct emu_vregs *v, const struct emu_avx_mem *mem, unsigned *len);

/*
 * The length of the VEX or EVEX instruction at buf (what capstone 4 cannot
 * decode): 0, or -1 if it is not one.  *trap: one unicorn would not refuse
 * but do wrong (the mask-register instructions in VEX's 0F map, which
 * QEMU 5 takes for cmovcc and setcc): the emulator must stop before it.
 */
int emu_avx_length(const uint8_t *buf, size_t n, unsigned *len, bool *trap);

#endif
