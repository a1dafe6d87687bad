/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the counts from paths (analysis/pathview.h,
 * analysis/calc-paths.c) and of the values bursts saw written
 * (analysis/valprof.h): path profiles built by hand, as emulated bursts
 * record them (translation blocks that run across join points and end at
 * calls, edges from the last instruction of each), on real machine code
 * whose true counts are known by construction.
 */
#include "config.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/calc.h"
#include "analysis/calc-draw.h"
#include "analysis/listing.h"
#include "analysis/freq.h"
#include "analysis/pathview.h"
#include "analysis/valprof.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "db/meta.h"
#include "disasm/decode.h"
#include "disasm/image.h"
#include "disasm/proctab.h"
#include "tests/unit/own-image.h"

#define assert_rel(a, b, rel) assert_true(fabs((double)(a) - (double)(b)) <= (rel) * fabs((double)(b)))

#define BASE 0x1000

/*
 * A loop of N iterations with a 50/50 diamond and a call (wl-branchy's
 * shape):
 *
 * 0x1000  xor ecx, ecx         block 0 (entry)
 * 0x1002  test cl, 1           block 1 (head)
 * 0x1005  je 0x100c
 * 0x1007  add rax, rax         block 2 (arm A: odd)
 * 0x100a  jmp 0x100f
 * 0x100c  add rbx, rbx         block 3 (arm B: even; falls into the join)
 * 0x100f  inc ecx              block 4 (join)
 * 0x1011  call 0x101b          (outside: the call does not end the block)
 * 0x1016  cmp ecx, edi
 * 0x1018  jne 0x1002
 * 0x101a  ret                  block 5
 *
 * Per iteration 7.5 instructions in the procedure on average.
 */
static const uint8_t diamond[] = {
	0x31, 0xc9,
	0xf6, 0xc1, 0x01,
	0x74, 0x05,
	0x48, 0x01, 0xc0,
	0xeb, 0x03,
	0x48, 0x01, 0xdb,
	0xff, 0xc1,
	0xe8, 0x05, 0x00, 0x00, 0x00,
	0x39, 0xf9,
	0x75, 0xe8,
	0xc3,
};

struct synth {
	struct image img;
	struct proc proc;
	struct epoch_meta meta;
};

static void build_cfg(const uint8_t *code, size_t len, struct cfg *cfg)
{
	struct decoder *d = decoder_new(ARCH_X86_64);
	struct insn *v = NULL;
	size_t n = 0, alloc = 0;

	assert_non_null(d);
	decode_range(d, code, len, BASE, &v, &n, &alloc);
	decoder_free(d);
	cfg_build(cfg, v, n, BASE, BASE + len, ARCH_X86_64, NULL);
	cfg_classify(cfg);
}

/* The listing of code (no samples yet); offsets are addresses (an anonymous image). */
static void synth_listing(struct synth *sy, struct calc *c, const uint8_t *code, size_t len)
{
	struct listing *l = &c->list;
	struct epoch_event *ev;

	memset(sy, 0, sizeof(*sy));
	memset(c, 0, sizeof(*c));
	sy->img.rec.path = (char *)"/synthetic/prog";
	sy->img.rec.kind = IMAGE_ANON;
	sy->img.state = IMAGE_MISSING;   /* no bytes to read: the CFG is built here */
	sy->img.base = "prog";
	sy->proc = (struct proc){ BASE, BASE + len, "diamond", "diamond", 0, 0, 0 };
	epoch_meta_init(&sy->meta);
	sy->meta.cpu_vendor = xstrdup("AuthenticAMD");
	sy->meta.cpu_family = 25;
	sy->meta.cpu_model_id = 17;
	sy->meta.cpu_mhz = 1000;
	ev = epoch_meta_add_event(&sy->meta, EVENT_CYCLES);
	ev->used = EVENT_CLOCK;
	ev->period = 100000;        /* ns: 100000 cycles a sample at 1000 MHz */
	ev->period_in_ns = true;
	l->img = &sy->img;
	l->ref.proc = &sy->proc;
	l->events[0] = EVENT_CYCLES;
	l->n_events = 1;
	build_cfg(code, len, &l->cfg);
	l->n_insns = l->cfg.n_insns;
	l->insns = xcalloc(l->n_insns, sizeof(*l->insns));
	for (size_t i = 0; i < l->n_insns; i++) {
		l->insns[i].insn = &l->cfg.insns[i];
		l->insns[i].block = cfg_block_at(&l->cfg, l->cfg.insns[i].addr);
	}
}

/* What synth_listing() made, let go. */
static void synth_release(struct synth *sy, struct calc *c)
{
	calc_release(c);
	epoch_meta_release(&sy->meta);
}

static long block_of(const struct calc *c, uint64_t addr)
{
	long b = cfg_block_at(&c->list.cfg, addr);

	assert_true(b >= 0);
	return b;
}

static long edge_of(const struct cfg *cfg, long from, long to)
{
	for (size_t e = 0; e < cfg->n_edges; e++)
		if ((long)cfg->edges[e].from == from && (long)cfg->edges[e].to == to)
			return (long)e;
	fail_msg("no edge %ld -> %ld", from, to);
	return -1;
}

/*
 * What the emulator records of `iters` iterations of the diamond loop
 * entered once and left once, in 5000 bursts (count) and, `wfactor` times
 * as often, in matched windows (wcount): its translation blocks and the
 * edges from their last instructions.
 */
static void diamond_paths(struct paths_profile *p, uint64_t iters, uint64_t wfactor)
{
	uint64_t h = iters / 2, w = wfactor;

	paths_profile_init(p);
	/* xor, test, je: through the join at 0x1002 */
	paths_add_block(p, 0x1000, 7, 3, 1, 0);
	paths_add_block(p, 0x1002, 5, 2, iters - 1, w * iters);
	paths_add_block(p, 0x1007, 5, 2, h, w * h);
	/* add rbx; inc; call: through the join at 0x100f, cut at the call */
	paths_add_block(p, 0x100c, 10, 3, h, w * h);
	paths_add_block(p, 0x100f, 7, 2, h, w * h);
	/* after the callee's return: a translation block that starts inside a CFG block */
	paths_add_block(p, 0x1016, 4, 2, iters, w * iters);
	paths_add_block(p, 0x101a, 1, 1, 1, 0);
	paths_add_edge(p, 0x1005, 0x1007, h);
	paths_add_edge(p, 0x1005, 0x100c, h);
	paths_add_edge(p, 0x100a, 0x100f, h);
	paths_add_edge(p, 0x1011, 0x101b, iters);       /* the call */
	paths_add_edge(p, 0x1018, 0x1002, iters - 1);
	paths_add_edge(p, 0x1018, 0x101a, 1);
	paths_add_edge(p, 0x101a, PATHS_ELSEWHERE, 1);
	p->bursts = 5000;
	p->insns = iters * 15 / 2 + 2;
	paths_profile_normalize(p);
}

static void pathview_maps_translation_blocks(void **state)
{
	struct synth sy;
	struct calc c;
	struct paths_profile p;
	struct pathview pv;
	const struct cfg *cfg;
	long head, arm_a, arm_b, join, ret;

	(void)state;
	synth_listing(&sy, &c, diamond, sizeof(diamond));
	cfg = &c.list.cfg;
	head = block_of(&c, 0x1002);
	arm_a = block_of(&c, 0x1007);
	arm_b = block_of(&c, 0x100c);
	join = block_of(&c, 0x100f);
	ret = block_of(&c, 0x101a);
	diamond_paths(&p, 1000, 0);
	pathview_build(&pv, &c.list, &p);
	assert_true(pv.present);
	/* every instruction as often as the translation blocks spanning it */
	assert_int_equal(pv.count[cfg_insn_at(cfg, 0x1000)], 1);
	assert_int_equal(pv.count[cfg_insn_at(cfg, 0x1002)], 1000);
	assert_int_equal(pv.count[cfg_insn_at(cfg, 0x100c)], 500);
	assert_int_equal(pv.count[cfg_insn_at(cfg, 0x100f)], 1000);
	assert_int_equal(pv.count[cfg_insn_at(cfg, 0x1016)], 1000);
	assert_int_equal(pv.followed, 2 + 1000 * 15 / 2);
	assert_rel(pathview_block_count(&pv, cfg, (size_t)join, false), 1000, 1e-12);
	/* branch outcomes, a jump, and the joins translation blocks ran across */
	assert_int_equal(pv.ecount[edge_of(cfg, head, arm_a)], 500);
	assert_int_equal(pv.ecount[edge_of(cfg, head, arm_b)], 500);
	assert_int_equal(pv.ecount[edge_of(cfg, arm_a, join)], 500);
	assert_int_equal(pv.ecount[edge_of(cfg, arm_b, join)], 500);   /* no branch: run across */
	assert_int_equal(pv.ecount[edge_of(cfg, 0, head)], 1);
	assert_int_equal(pv.ecount[edge_of(cfg, join, head)], 999);
	assert_int_equal(pv.ecount[edge_of(cfg, join, ret)], 1);
	assert_int_equal(pv.ecount[edge_of(cfg, ret, (long)cfg->exit)], 1);
	assert_int_equal(pv.calls, 1000);
	pathview_release(&pv);
	/* nothing recorded: nothing present */
	pathview_build(&pv, &c.list, NULL);
	assert_false(pv.present);
	pathview_release(&pv);
	paths_profile_release(&p);
	synth_release(&sy, &c);
}

/*
 * Samples: s per instruction of the loop's nine (the counts from paths do
 * not use where they fall).
 */
static void loop_samples(struct calc *c, uint64_t s)
{
	for (size_t i = 0; i < c->list.n_insns; i++) {
		uint64_t a = c->list.insns[i].insn->addr;

		if (a < 0x1002 || a >= 0x101a)
			continue;
		c->list.insns[i].samples[EVENT_CYCLES] = s;
		c->list.totals[EVENT_CYCLES] += s;
	}
}

/* Matched windows that began in the procedure: n of them, each `here` instructions. */
static void add_windows(struct paths_profile *p, unsigned n, uint64_t here, double spread)
{
	struct hotlist_rng rng = HOTLIST_RNG_INIT(7);

	for (unsigned k = 0; k < n; k++) {
		struct paths_window w = { 0x1002, 0x1016, here, here, 100000 };

		w.here = w.insns = (uint64_t)((double)here * (1 + spread * ((k & 1) ? 1 : -1)));
		paths_add_window(p, &w, &rng);
	}
}

/*
 * 225 matched windows of 2000 iterations each (4e5 of them in all), 2250
 * samples in the procedure: 10 samples a window, 4e6 iterations.  The arms
 * come out at half the head (their outcomes), the head at the iterations,
 * from the windows alone: no model, no cycles per sample.
 */
static void counts_from_windows(void **state)
{
	struct synth sy;
	struct calc c;
	struct paths_profile p;
	struct calc_opts o = CALC_OPTS_INIT;
	long head, arm_a, arm_b, join;
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	synth_listing(&sy, &c, diamond, sizeof(diamond));
	head = block_of(&c, 0x1002);
	arm_a = block_of(&c, 0x1007);
	arm_b = block_of(&c, 0x100c);
	join = block_of(&c, 0x100f);
	diamond_paths(&p, 100000, 4);   /* bursts saw 1e5 iterations; windows 4e5 */
	add_windows(&p, 225, 2000 * 15 / 2, 0.02);
	loop_samples(&c, 250);
	pathview_build(&c.paths, &c.list, &p);
	assert_int_equal(calc_from_listing(&c, &sy.meta, NULL, &o), 0);
	assert_int_equal(c.pscale.source, CALC_PSCALE_WINDOWS);
	assert_rel(c.pscale.windows, 225, 1e-9);
	/* 10 samples a window stand for the 4e5 iterations of the windows: 4e6 x 7.5 instructions */
	assert_rel(c.pscale.insns, 4e6 * 7.5, 0.01);
	assert_rel(c.pscale.per_sample, 4e6 * 7.5 / 2250, 0.01);
	assert_rel(c.blocks[head].execs, 4e6, 0.01);
	assert_rel(c.blocks[join].execs, 4e6, 0.01);
	assert_rel(c.blocks[arm_a].execs, 2e6, 0.01);
	assert_rel(c.blocks[arm_b].execs, 2e6, 0.01);
	assert_int_equal(c.blocks[head].how, CALC_HOW_PATHS);
	assert_int_equal(c.blocks[arm_a].how, CALC_HOW_PATHS);
	assert_int_equal(c.blocks[head].conf, CALC_CONF_HIGH);
	assert_true(c.blocks[head].est.rel_error > 0 && c.blocks[head].est.rel_error < 0.03);
	/* the edges: the arms' */
	assert_rel(c.edges[edge_of(&c.list.cfg, head, arm_b)].execs, 2e6, 0.01);
	/* dcpicalc's header says where the scale came from */
	{
		struct calc_lines lines;
		struct draw d;

		calc_render(&c, &lines, 0);
		draw_init_text(&d, &sb, DRAW_UNBOUNDED, DRAW_UTF8);
		for (size_t k = 0; k < lines.n; k++) {
			if (lines.v[k].kind != CALC_LINE_HEADER)
				continue;
			calc_draw_line(&c, &lines.v[k], &d);
			strbuf_addch(&sb, '\n');
		}
		calc_lines_release(&lines);
		assert_non_null(strstr(sb.buf, "bursts: 7.5e+05 instructions followed here"));
		assert_non_null(strstr(sb.buf, "counts from paths: 3"));
		assert_non_null(strstr(sb.buf, "instructions ran here, 133"));
		assert_non_null(strstr(sb.buf, ": matched windows 3"));
		assert_non_null(strstr(sb.buf, "(225.0 began in its region, +-2%)"));
	}
	strbuf_release(&sb);
	paths_profile_release(&p);
	synth_release(&sy, &c);
}

/*
 * Few windows: the same counts, but medium or low confidence; and the
 * relative error the confidence rests on grows as the windows get fewer
 * and vary more.
 */
static void confidence_from_windows(void **state)
{
	struct synth sy;
	struct calc c;
	struct paths_profile p;
	struct calc_opts o = CALC_OPTS_INIT;
	double err[2];
	unsigned n[2] = { 200, 6 };

	(void)state;
	for (int k = 0; k < 2; k++) {
		synth_listing(&sy, &c, diamond, sizeof(diamond));
		diamond_paths(&p, 100000, 4);
		add_windows(&p, n[k], 2000 * 15 / 2 * 200 / n[k], 0.2);
		loop_samples(&c, 250);
		pathview_build(&c.paths, &c.list, &p);
		assert_int_equal(calc_from_listing(&c, &sy.meta, NULL, &o), 0);
		err[k] = c.blocks[block_of(&c, 0x1002)].est.rel_error;
		if (k)
			assert_int_equal(c.blocks[block_of(&c, 0x1002)].conf, CALC_CONF_LOW);
		paths_profile_release(&p);
		synth_release(&sy, &c);
	}
	assert_true(err[1] > 2 * err[0]);
}

/*
 * No window ran the procedure: the shares still come from the paths, the
 * scale from the model's estimates of the classes (low confidence,
 * "paths-shares"); the arms stay at half the head.
 */
static void shares_without_windows(void **state)
{
	struct synth sy;
	struct calc c;
	struct paths_profile p;
	struct calc_opts o = CALC_OPTS_INIT;
	long head, arm_a, arm_b;

	(void)state;
	synth_listing(&sy, &c, diamond, sizeof(diamond));
	head = block_of(&c, 0x1002);
	arm_a = block_of(&c, 0x1007);
	arm_b = block_of(&c, 0x100c);
	diamond_paths(&p, 100000, 0);
	loop_samples(&c, 250);
	pathview_build(&c.paths, &c.list, &p);
	assert_int_equal(calc_from_listing(&c, &sy.meta, NULL, &o), 0);
	assert_int_equal(c.pscale.source, CALC_PSCALE_MODEL);
	assert_int_equal(c.blocks[head].how, CALC_HOW_PATHS_SHARES);
	assert_int_equal(c.blocks[head].conf, CALC_CONF_LOW);
	assert_true(c.blocks[head].execs > 0);
	assert_rel(c.blocks[arm_a].execs, c.blocks[head].execs / 2, 1e-3);
	assert_rel(c.blocks[arm_b].execs, c.blocks[head].execs / 2, 1e-3);
	synth_release(&sy, &c);
	/* with the paths left out (--est paths=0), the model alone: not from paths */
	{
		struct est_params ep = EST_PARAMS_INIT;

		ep.paths = false;
		o.est = &ep;
		synth_listing(&sy, &c, diamond, sizeof(diamond));
		loop_samples(&c, 250);
		pathview_build(&c.paths, &c.list, &p);
		assert_int_equal(calc_from_listing(&c, &sy.meta, NULL, &o), 0);
		assert_int_equal(c.pscale.source, CALC_PSCALE_NONE);
		assert_int_not_equal(c.blocks[block_of(&c, 0x1002)].how, CALC_HOW_PATHS_SHARES);
		synth_release(&sy, &c);
	}
	paths_profile_release(&p);
}

/*
 * Values: what bursts saw an instruction write is shown as its values
 * (exact), even for the last instruction of a block, where the sample
 * registers cannot tell.
 */
static void values_written_in_bursts(void **state)
{
	struct synth sy;
	struct calc c;
	struct values_profile wr = VALUES_PROFILE_INIT;
	struct valprof vp;
	struct values_rec *r;
	struct hotlist_rng rng = HOTLIST_RNG_INIT(3);
	uint64_t regs[VALUES_NREGS] = { 0 };
	long add = -1, inc = -1;
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	synth_listing(&sy, &c, diamond, sizeof(diamond));
	/* add rax, rax wrote 0x40 95 times, 0x80 5 times; inc ecx wrote 1..20 */
	r = values_profile_add(&wr, 0x1007);
	for (int k = 0; k < 100; k++) {
		regs[VREG_RAX] = k < 95 ? 0x40 : 0x80;
		values_rec_sample(r, regs, 1u << VREG_RAX, &rng);
	}
	r = values_profile_add(&wr, 0x100f);
	for (int k = 0; k < 20; k++) {
		regs[VREG_RCX] = (uint64_t)k + 1;
		values_rec_sample(r, regs, 1u << VREG_RCX, &rng);
	}
	values_profile_sort(&wr);
	valprof_build(&vp, &c.list, NULL, &wr);
	assert_true(vp.present);
	add = cfg_insn_at(&c.list.cfg, 0x1007);
	inc = cfg_insn_at(&c.list.cfg, 0x100f);
	assert_int_equal(vp.insns[add].n, 1);
	assert_true(vp.insns[add].it[0].exact);
	assert_string_equal(vp.insns[add].it[0].name, "rax");
	assert_int_equal(vp.insns[add].it[0].samples, 100);
	assert_int_equal(vp.insns[add].it[0].v[0].value, 0x40);
	assert_rel(vp.insns[add].it[0].v[0].share, 0.95, 1e-9);
	valprof_format(&vp.insns[add], &sb);
	assert_string_equal(sb.buf, "rax:(95.0% 0x40) (5.0% 0x80)");
	/* twenty values once each: none common enough to show */
	assert_int_equal(vp.insns[inc].n, 0);
	valprof_release(&vp);
	strbuf_release(&sb);
	values_profile_release(&wr);
	synth_release(&sy, &c);
}

/*
 * Decode once: the address a value profile gives a load comes from the
 * operands the listing's decode kept (this image has no bytes to decode
 * again), and from nothing else: an instruction without them (as the
 * analysis cache gives them back) has no address.
 */
static void values_read_from_the_listings_decode(void **state)
{
	static const uint8_t code[] = { 0x48, 0x8b, 0x43, 0x08,   /* mov rax, qword ptr [rbx + 8] */
					0xc3 };                   /* ret */
	uint64_t regs[VALUES_NREGS] = { [VREG_RBX] = 0x5000 };
	struct hotlist_rng rng = HOTLIST_RNG_INIT(5);
	struct values_profile prof = VALUES_PROFILE_INIT;
	struct strbuf sb = STRBUF_INIT;
	struct values_rec *r;
	struct valprof vp;
	struct synth sy;
	struct calc c;
	(void)state;

	synth_listing(&sy, &c, code, sizeof(code));
	assert_true(c.list.cfg.insns[0].opds_known);
	r = values_profile_add(&prof, BASE);
	for (int k = 0; k < 50; k++)
		values_rec_sample(r, regs, 1u << VREG_RBX, &rng);
	values_profile_sort(&prof);
	valprof_build(&vp, &c.list, &prof, NULL);
	valprof_format(valprof_insn_at(&vp, 0), &sb);
	assert_string_equal(sb.buf, "addr:(100.0% 0x5008)");
	valprof_release(&vp);
	/* without the operands kept, nothing decodes them again */
	for (size_t i = 0; i < c.list.cfg.n_insns; i++)
		c.list.cfg.insns[i].opds_known = false;
	valprof_build(&vp, &c.list, &prof, NULL);
	assert_int_equal(valprof_insn_at(&vp, 0)->n, 0);
	/* and the listing cannot give them: the image has no bytes */
	assert_int_equal(listing_operands(&c.list), 0);
	valprof_release(&vp);
	strbuf_release(&sb);
	values_profile_release(&prof);
	synth_release(&sy, &c);
}

/*
 * The operands a listing decodes for instructions read back from the
 * analysis cache (which keeps none) are those the first decode kept, each
 * instruction decoded once: this test's own code.
 */
static void listing_decodes_missing_operands(void **state)
{
	struct image *img = own_image();
	struct proctab *tab = image_procs(img);
	size_t checked = 0;
	(void)state;

	for (size_t k = 0; k < tab->n && checked < 5000; k++) {
		struct listing l;
		struct insn *kept;

		memset(&l, 0, sizeof(l));
		if (image_cfg(img, &tab->v[k], &l.cfg))
			continue;
		l.img = img;
		kept = xmemdup(l.cfg.insns, l.cfg.n_insns * sizeof(*kept));
		for (size_t i = 0; i < l.cfg.n_insns; i++) {
			assert_true(kept[i].opds_known);
			memset(l.cfg.insns[i].opd, 0, sizeof(l.cfg.insns[i].opd));
			l.cfg.insns[i].n_opds = 0;
			l.cfg.insns[i].opds_known = false;
		}
		assert_int_equal(listing_operands(&l), l.cfg.n_insns);
		assert_int_equal(listing_operands(&l), 0);  /* once */
		for (size_t i = 0; i < l.cfg.n_insns; i++) {
			struct insn_ops a, b;

			assert_true(insn_operands(&kept[i], &a));
			assert_true(insn_operands(&l.cfg.insns[i], &b));
			assert_memory_equal(&a, &b, sizeof(a));
			checked++;
		}
		free(kept);
		cfg_release(&l.cfg);
	}
	print_message("%zu instructions\n", checked);
	assert_true(checked > 1000);
	image_free(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pathview_maps_translation_blocks),
		cmocka_unit_test(counts_from_windows),
		cmocka_unit_test(confidence_from_windows),
		cmocka_unit_test(shares_without_windows),
		cmocka_unit_test(values_written_in_bursts),
		cmocka_unit_test(values_read_from_the_listings_decode),
		cmocka_unit_test(listing_decodes_missing_operands),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
