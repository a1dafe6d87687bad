/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disasm-bench - how fast images open and procedures decode.
 *
 *   disasm-bench [BINARY]      (default: the C library this program runs with)
 *
 * Reports, side by side in one run (best of 3 for each step):
 *   capstone        bare cs_disasm_iter over the executable sections, with
 *                   detail and cs_regs_access: the floor
 *   open+symbols    image_open + the procedure table (symbols, PLT, FDEs)
 *   decode all      every procedure through image_decode (struct insn filled)
 *   cfg+classes all every procedure's CFG (jump tables, noreturn analysis)
 *                   and frequency classes
 *   one procedure   open a fresh image and decode one procedure: what a
 *                   dcpilist pays (lazy: no whole-image work)
 * The ratio decode/capstone shows the cost of dcpi's own work per
 * instruction.  Run with DCPI_DEBUG_DIR=/nonexistent to leave debug files out.
 */
#include "config.h"

#include <capstone/capstone.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "core/timeutil.h"
#include "core/xalloc.h"
#include "disasm/elffile.h"
#include "disasm/image.h"

#define RUNS 3

static struct image *open_image(const char *path)
{
	struct db_image rec;

	memset(&rec, 0, sizeof(rec));
	rec.kind = IMAGE_FILE;
	rec.path = (char *)path;
	return image_open(&rec, NULL);
}

static double bare_capstone(const char *path, size_t *ninsn)
{
	struct elffile *ef = elffile_open(path);
	csh h;
	cs_insn *ci;
	int64_t t0;

	if (!ef || cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		die("cannot open '%s'", path);
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	ci = cs_malloc(h);
	*ninsn = 0;
	t0 = time_monotonic_ns();
	for (size_t i = 0; i < ef->n_secs; i++) {
		const struct elf_section *s = &ef->secs[i];
		const uint8_t *p;
		size_t len;
		uint64_t addr = s->addr;

		if (!(s->flags & 4 /* SHF_EXECINSTR */) || !(p = elffile_section_bytes(ef, s, &len)))
			continue;
		while (len) {
			cs_regs r, w;
			uint8_t nr, nw;

			if (cs_disasm_iter(h, &p, &len, &addr, ci)) {
				cs_regs_access(h, ci, r, &nr, w, &nw);
				(*ninsn)++;
			} else {
				p++;
				len--;
				addr++;
			}
		}
	}
	t0 = time_monotonic_ns() - t0;
	cs_free(ci, 1);
	cs_close(&h);
	elffile_close(ef);
	return (double)t0 / 1e9;
}

struct run {
	double open, decode, cfg, one;
	size_t procs, insns, blocks, missing;
};

static void run_once(const char *path, struct run *r)
{
	struct image *img;
	struct proctab *t;
	int64_t t0 = time_monotonic_ns();
	size_t mid;

	memset(r, 0, sizeof(*r));
	img = open_image(path);
	t = image_procs(img);
	r->open = (double)(time_monotonic_ns() - t0) / 1e9;
	r->procs = t->n;
	t0 = time_monotonic_ns();
	for (size_t i = 0; i < t->n; i++) {
		struct insn *v;
		size_t n;

		if (!image_decode(img, &t->v[i], &v, &n))
			r->insns += n;
		free(v);
	}
	r->decode = (double)(time_monotonic_ns() - t0) / 1e9;
	t0 = time_monotonic_ns();
	for (size_t i = 0; i < t->n; i++) {
		struct cfg cfg;

		if (image_cfg(img, &t->v[i], &cfg))
			continue;
		cfg_classify(&cfg);
		r->blocks += cfg.n_blocks - 1;
		r->missing += (cfg.flags & CFG_MISSING_EDGES) != 0;
		cfg_release(&cfg);
	}
	r->cfg = (double)(time_monotonic_ns() - t0) / 1e9;
	mid = t->n / 2;
	image_free(img);
	/* lazy path: a fresh image, one procedure */
	t0 = time_monotonic_ns();
	img = open_image(path);
	t = image_procs(img);
	if (t->n) {
		struct cfg cfg;

		if (!image_cfg(img, &t->v[mid < t->n ? mid : 0], &cfg)) {
			cfg_classify(&cfg);
			cfg_release(&cfg);
		}
	}
	r->one = (double)(time_monotonic_ns() - t0) / 1e9;
	image_free(img);
}

static const char *default_binary(void)
{
	Dl_info info;

	if (dladdr((void *)printf, &info) && info.dli_fname)
		return info.dli_fname;
	return "/lib/x86_64-linux-gnu/libc.so.6";
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : default_binary();
	struct run best, r;
	double cs = 1e9;
	size_t csn = 0;

	set_progname(argv[0]);
	for (int i = 0; i < RUNS; i++) {
		double t = bare_capstone(path, &csn);

		cs = t < cs ? t : cs;
		run_once(path, &r);
		if (!i) {
			best = r;
		} else {
			best.open = r.open < best.open ? r.open : best.open;
			best.decode = r.decode < best.decode ? r.decode : best.decode;
			best.cfg = r.cfg < best.cfg ? r.cfg : best.cfg;
			best.one = r.one < best.one ? r.one : best.one;
		}
	}
	printf("%s: %zu procedures, %zu instructions, %zu basic blocks, %zu with missing edges\n",
	       path, best.procs, best.insns, best.blocks, best.missing);
	printf("  capstone (bare, %zu insns) %8.3f s  %6.2f M insn/s\n", csn, cs, (double)csn / cs / 1e6);
	printf("  open+symbols               %8.3f s\n", best.open);
	printf("  decode all                 %8.3f s  %6.2f M insn/s  (%.2fx capstone)\n", best.decode,
	       (double)best.insns / best.decode / 1e6, best.decode / cs);
	printf("  cfg+classes all            %8.3f s  %6.2f M insn/s\n", best.cfg,
	       (double)best.insns / best.cfg / 1e6);
	printf("  open + one procedure       %8.3f s\n", best.one);
	return 0;
}
