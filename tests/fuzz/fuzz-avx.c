/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: the burst emulator's own VEX and EVEX decoder and the
 * instructions it does in software (collect/emu-avx.h).  The bytes are
 * another program's code, so hostile input.  The input's first 15 bytes
 * are the instruction, the rest the registers (general registers as
 * addresses near a two-page buffer, so that loads and stores land in it,
 * at its edges or outside), the vector and mask registers.  Checked: a
 * length is within the bytes given, the instruction done has the length
 * the decoder gave, no access outside the buffer is made but through the
 * callbacks, which refuse it; ASan does the rest.
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "collect/emu-avx.h"

#include <stdlib.h>
#include <string.h>

#define BUF_BASE 0x10000ull
#define BUF_SIZE 8192u

struct fake_mem {
	uint8_t bytes[BUF_SIZE];
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake_mem *m = ctx;

	if (addr < BUF_BASE || addr - BUF_BASE > BUF_SIZE || len > BUF_SIZE - (addr - BUF_BASE))
		return -1;
	memcpy(buf, m->bytes + (addr - BUF_BASE), len);
	return 0;
}

static int fake_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	struct fake_mem *m = ctx;

	if (addr < BUF_BASE || addr - BUF_BASE > BUF_SIZE || len > BUF_SIZE - (addr - BUF_BASE))
		return -1;
	memcpy(m->bytes + (addr - BUF_BASE), buf, len);
	return 0;
}

static size_t take(const uint8_t **p, size_t *left, void *out, size_t n)
{
	size_t k = *left < n ? *left : n;

	memset(out, 0, n);
	memcpy(out, *p, k);
	*p += k;
	*left -= k;
	return k;
}

/* The engine and decoder are made once: only registers are used, all set below. */
static uc_engine *uc;
static csh cs;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int gprs[16] = {
		UC_X86_REG_RAX, UC_X86_REG_RCX, UC_X86_REG_RDX, UC_X86_REG_RBX, UC_X86_REG_RSP,
		UC_X86_REG_RBP, UC_X86_REG_RSI, UC_X86_REG_RDI, UC_X86_REG_R8, UC_X86_REG_R9,
		UC_X86_REG_R10, UC_X86_REG_R11, UC_X86_REG_R12, UC_X86_REG_R13, UC_X86_REG_R14,
		UC_X86_REG_R15,
	};
	uint8_t insn[15];
	const uint8_t *p = data;
	size_t left = size, n;
	struct emu_vregs v;
	struct fake_mem *m;
	struct emu_avx_mem mem;
	cs_insn *in = NULL;
	unsigned len = 0, done_len = 0;
	bool trap = false;
	int known, r;

	if (!uc && uc_open(UC_ARCH_X86, UC_MODE_64, &uc) != UC_ERR_OK)
		abort();
	if (!cs) {
		if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
			abort();
		cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	}
	n = take(&p, &left, insn, sizeof(insn));
	if (!n)
		return 0;
	for (unsigned i = 0; i < 16; i++) {
		uint16_t lo;
		uint64_t val;

		take(&p, &left, &lo, sizeof(lo));
		/* Most near the buffer; a high bit set: any value. */
		val = lo & 0x8000 ? (uint64_t)lo * 0x9e3779b97f4a7c15ull : BUF_BASE - 64 + (lo & 0x3fff);
		uc_reg_write(uc, gprs[i], &val);
	}
	{
		uint64_t flags = 0x202;

		uc_reg_write(uc, UC_X86_REG_RFLAGS, &flags);
	}
	memset(&v, 0, sizeof(v));
	take(&p, &left, v.k, sizeof(v.k));
	for (unsigned i = 0; i < 32 && left; i++)
		take(&p, &left, v.z[i], sizeof(v.z[i]));
	for (unsigned i = 0; i < 16; i++) {
		uint8_t x[16];

		memcpy(x, v.z[i], 16);
		uc_reg_write(uc, UC_X86_REG_XMM0 + (int)i, x);
	}
	m = malloc(sizeof(*m));
	if (!m)
		return 0;
	for (size_t i = 0; i < BUF_SIZE; i++)
		m->bytes[i] = (uint8_t)(i * 7 + 1);
	mem = (struct emu_avx_mem){ .read = fake_read, .write = fake_write, .ctx = m };

	known = emu_avx_length(insn, n, &len, &trap) == 0;
	if (known && (len < 2 || len > n))
		abort();

	/* Decoded here only (the VEX and EVEX ones). */
	r = emu_avx_do(uc, cs, NULL, insn, n, 0x400000, &v, &mem, &done_len);
	if (r < -1 || r > 1 || (r != 0 && !known) || (r == 1 && done_len != len))
		abort();

	/* With capstone's decoding too (popcnt, pclmulqdq, movbe). */
	if (cs_disasm(cs, insn, n, 0x400000, 1, &in) == 1) {
		done_len = 0;
		r = emu_avx_do(uc, cs, in, insn, n, 0x400000, &v, &mem, &done_len);
		if (r < -1 || r > 1 || (r == 1 && !known && done_len != in->size) || done_len > n)
			abort();
		cs_free(in, 1);
	}
	free(m);
	return 0;
}
