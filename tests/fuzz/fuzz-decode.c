/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: the decoder wrapper and everything built on decoded code.
 * Byte 0 picks the architecture (bit 0: aarch64) and whether calls are
 * taken as noreturn (bit 1); the rest is machine code at 0x1000, which is
 * also what jump tables read.  Decodes it linearly, builds the CFG of the
 * whole buffer as one procedure, computes the classes, and checks the
 * invariants of both, and that each instruction's text parts
 * (disasm/insntext.h) cover its text in order.
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "core/die.h"
#include "disasm/cfg.h"
#include "disasm/decode.h"
#include "disasm/insntext.h"

#include <stdlib.h>
#include <string.h>

#define BASE 0x1000

struct buf {
	const uint8_t *data;
	size_t size;
	bool noreturn;
};

static int read_buf(void *ctx, uint64_t addr, void *out, size_t size)
{
	const struct buf *b = ctx;

	if (addr < BASE || addr - BASE > b->size || size > b->size - (addr - BASE))
		return -1;
	memcpy(out, b->data + (addr - BASE), size);
	return 0;
}

static bool noreturn(void *ctx, const struct insn *call)
{
	const struct buf *b = ctx;

	return b->noreturn && (call->target & 1);
}

static void check_parts(const struct insn *in)
{
	struct insn_part p[INSN_PARTS_MAX];
	size_t n = insn_parts(in, p, INSN_PARTS_MAX), end = 0;

	for (size_t k = 0; k < n; k++) {
		if (p[k].off != end || !p[k].len)
			abort();
		end += p[k].len;
	}
	if (end != strlen(in->text))
		abort();
}

static void check_insns(const struct insn *v, size_t n, size_t size)
{
	uint64_t at = BASE;

	for (size_t i = 0; i < n; i++) {
		if (v[i].addr != at || !v[i].len || v[i].len > 15 || !v[i].text[0] ||
		    strlen(v[i].text) >= INSN_TEXT_MAX)
			abort();
		check_parts(&v[i]);
		at += v[i].len;
	}
	if (at != BASE + size)
		abort();
}

static void check_cfg(const struct cfg *cfg)
{
	if (cfg->exit != cfg->n_blocks - 1 || cfg->entry != 0)
		abort();
	for (size_t e = 0; e < cfg->n_edges; e++) {
		const struct cfg_edge *ed = &cfg->edges[e];

		if (ed->from >= cfg->n_blocks || ed->to >= cfg->n_blocks || ed->cls < 0 ||
		    (size_t)ed->cls >= cfg->n_classes)
			abort();
	}
	for (size_t b = 0; b + 1 < cfg->n_blocks; b++) {
		const struct cfg_block *blk = &cfg->blocks[b];

		if (blk->cls < 0 || (size_t)blk->cls >= cfg->n_classes ||
		    blk->first + blk->n_insns > cfg->n_insns)
			abort();
		if (b && blk->start != cfg->blocks[b - 1].end)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf b;
	struct decoder *dec;
	struct insn *v = NULL;
	size_t n = 0, alloc = 0;
	struct cfg_env env;
	struct cfg cfg;

	if (size < 2 || size > 65536)
		return 0;
	b.data = data + 1;
	b.size = size - 1;
	b.noreturn = data[0] & 2;
	if (!(dec = decoder_new(data[0] & 1 ? ARCH_AARCH64 : ARCH_X86_64)))
		return 0;
	decode_range(dec, b.data, b.size, BASE, &v, &n, &alloc);
	check_insns(v, n, b.size);
	memset(&env, 0, sizeof(env));
	env.dec = dec;
	env.read = read_buf;
	env.noreturn = noreturn;
	env.ctx = &b;
	cfg_build(&cfg, v, n, BASE, BASE + b.size, decoder_arch(dec), &env);
	cfg_classify(&cfg);
	check_cfg(&cfg);
	cfg_release(&cfg);
	decoder_free(dec);
	return 0;
}
