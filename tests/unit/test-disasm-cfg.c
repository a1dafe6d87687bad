/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of disasm/cfg.c and disasm/cycleq.c: cycle equivalence against
 * its definition on random graphs (parallel edges included), and the
 * control-flow graphs and frequency classes of hand-picked shapes compiled
 * from tests/programs/shapes.c at -O0 and -O2, PIE and not, stripped and
 * not: if/else, nested loops, a switch through a jump table, noreturn
 * calls, a tail call and a loop that never exits.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/die.h"
#include "core/xalloc.h"
#include "disasm/cfg.h"
#include "disasm/cycleq.h"
#include "disasm/image.h"

static void quiet(enum report_level level, const char *msg)
{
	(void)level;
	(void)msg;
}

/* ---- cycle equivalence against its definition ---------------------------------- */

/*
 * In a strongly connected graph two distinct edges are cycle equivalent iff
 * removing both disconnects the (undirected) graph.
 */
static bool connected_without(size_t n, size_t m, const uint32_t *from, const uint32_t *to,
			      size_t a, size_t b)
{
	uint8_t seen[64] = { 0 };
	uint32_t stack[64];
	size_t sp = 0, count = 1;

	seen[0] = 1;
	stack[sp++] = 0;
	while (sp) {
		uint32_t v = stack[--sp];

		for (size_t e = 0; e < m; e++) {
			uint32_t w;

			if (e == a || e == b || (from[e] != v && to[e] != v))
				continue;
			w = from[e] == v ? to[e] : from[e];
			if (!seen[w]) {
				seen[w] = 1;
				count++;
				stack[sp++] = w;
			}
		}
	}
	return count == n;
}

static void cycleq_random(void **state)
{
	uint32_t from[128], to[128];
	int cls[128];
	unsigned seed = 12345;

	for (int iter = 0; iter < 3000; iter++) {
		size_t n, m = 0;
		uint32_t perm[32];

		seed = seed * 1103515245 + 12345;
		n = 2 + (seed >> 16) % 10;
		for (size_t i = 0; i < n; i++)
			perm[i] = (uint32_t)i;
		for (size_t i = n - 1; i > 0; i--) {
			size_t j;
			uint32_t t;

			seed = seed * 1103515245 + 12345;
			j = (seed >> 16) % (i + 1);
			t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
		/* a Hamiltonian cycle makes it strongly connected; then extra (parallel) edges */
		for (size_t i = 0; i < n; i++) {
			from[m] = perm[i];
			to[m++] = perm[(i + 1) % n];
		}
		seed = seed * 1103515245 + 12345;
		for (size_t k = (seed >> 16) % (2 * n); k > 0; k--) {
			uint32_t a, b;

			seed = seed * 1103515245 + 12345;
			a = (seed >> 16) % n;
			seed = seed * 1103515245 + 12345;
			b = (seed >> 16) % n;
			if (a != b) {
				from[m] = a;
				to[m++] = b;
			}
		}
		assert_true(cycleq_classes(n, m, from, to, 0, cls) > 0);
		for (size_t a = 0; a < m; a++)
			for (size_t b = a + 1; b < m; b++)
				assert_int_equal(cls[a] == cls[b],
						 !connected_without(n, m, from, to, a, b));
	}
}

static void cycleq_rejects(void **state)
{
	uint32_t from[] = { 0, 1, 1 }, to[] = { 1, 0, 1 };
	uint32_t bf[] = { 0, 1 }, bt[] = { 1, 2 };
	int cls[3];

	assert_int_equal(cycleq_classes(2, 3, from, to, 0, cls), -1);  /* self-loop */
	assert_int_equal(cycleq_classes(3, 2, bf, bt, 0, cls), -1);    /* bridges */
	assert_int_equal(cycleq_classes(3, 2, from, to, 0, cls), -1);  /* node 2 unconnected */
}

/* ---- shapes --------------------------------------------------------------------- */

static struct image *open_program(const char *name)
{
	const char *b = getenv("top_builddir");
	char *path = xasprintf("%s/tests/programs/%s", b ? b : ".", name);
	struct db_image rec;
	struct image_opts o;
	struct image *img;

	memset(&rec, 0, sizeof(rec));
	memset(&o, 0, sizeof(o));
	rec.kind = IMAGE_FILE;
	rec.path = path;
	o.debug_dir = "/nonexistent";
	img = image_open(&rec, &o);
	free(path);
	assert_int_equal(img->state, IMAGE_OK);
	return img;
}

/* The CFG of fn in img; fn may be found through the unstripped twin's address. */
static void cfg_of(struct image *img, const struct proc *p, struct cfg *cfg)
{
	assert_non_null(p);
	assert_int_equal(image_cfg(img, p, cfg), 0);
	cfg_classify(cfg);
	assert_true(cfg->flags & CFG_CLASSIFIED);
}

static const struct proc *named(struct image *img, const char *name)
{
	const struct proc *p[4];

	return image_procs_by_name(img, name, p, 4) == 1 ? p[0] : NULL;
}

static size_t reachable_blocks(const struct cfg *cfg)
{
	size_t n = 0;

	for (size_t b = 0; b < cfg->exit; b++)
		n += !(cfg->blocks[b].flags & CFG_BLOCK_UNREACHABLE);
	return n;
}

static long block_with(const struct cfg *cfg, enum insn_kind kind)
{
	for (size_t b = 0; b < cfg->exit; b++) {
		const struct cfg_block *blk = &cfg->blocks[b];

		if (blk->n_insns && cfg->insns[blk->first + blk->n_insns - 1].kind == kind &&
		    !(blk->flags & CFG_BLOCK_UNREACHABLE))
			return (long)b;
	}
	return -1;
}

static size_t edges_of_kind(const struct cfg *cfg, enum cfg_edge_kind kind)
{
	size_t n = 0;

	for (size_t e = 0; e < cfg->n_edges; e++)
		n += cfg->edges[e].kind == kind && !(cfg->blocks[cfg->edges[e].from].flags & CFG_BLOCK_UNREACHABLE);
	return n;
}

/* Classes are consistent: every class of a block is also what its edges say. */
static void check_flow_classes(const struct cfg *cfg)
{
	for (size_t b = 0; b < cfg->exit; b++) {
		const struct cfg_block *blk = &cfg->blocks[b];

		if (blk->flags & CFG_BLOCK_UNREACHABLE)
			continue;
		/* a block with one successor edge has that edge's frequency (and class) */
		if (blk->n_succ == 1 && !(cfg->flags & CFG_MISSING_EDGES) && !(blk->flags & CFG_BLOCK_NO_EXIT))
			assert_int_equal(cfg->edges[cfg->succ[blk->succ]].cls, blk->cls);
		if (blk->n_pred == 1 && b != cfg->entry && !(cfg->flags & CFG_MISSING_EDGES))
			assert_int_equal(cfg->edges[cfg->pred[blk->pred]].cls, blk->cls);
	}
}

static void if_else_O0(void **state)
{
	struct image *img = open_program("shapes-O0");
	struct cfg cfg;
	long ret;
	int arms[2], k = 0;

	cfg_of(img, named(img, "if_else"), &cfg);
	assert_false(cfg.flags & CFG_MISSING_EDGES);
	/* entry, then, else, join */
	assert_int_equal(reachable_blocks(&cfg), 4);
	ret = block_with(&cfg, INSN_RET);
	assert_true(ret > 0);
	assert_int_equal(cfg.blocks[ret].cls, cfg.blocks[cfg.entry].cls);
	assert_int_equal(cfg.blocks[cfg.exit].cls, cfg.blocks[cfg.entry].cls);
	for (size_t b = 0; b < cfg.exit; b++)
		if ((long)b != ret && b != cfg.entry)
			arms[k++] = cfg.blocks[b].cls;
	assert_int_equal(k, 2);
	assert_int_not_equal(arms[0], arms[1]);
	assert_int_not_equal(arms[0], cfg.blocks[cfg.entry].cls);
	assert_int_not_equal(arms[1], cfg.blocks[cfg.entry].cls);
	check_flow_classes(&cfg);
	cfg_release(&cfg);
	image_free(img);
}

/* Loops: back edges go to a block at or before their source. */
static void nested_loops_in(const char *prog)
{
	struct image *img = open_program(prog);
	struct cfg cfg;
	long ret;
	int heads[8];
	size_t nh = 0;

	cfg_of(img, named(img, "nested_loops"), &cfg);
	assert_false(cfg.flags & CFG_MISSING_EDGES);
	ret = block_with(&cfg, INSN_RET);
	assert_int_equal(cfg.blocks[ret].cls, cfg.blocks[cfg.entry].cls);
	for (size_t e = 0; e < cfg.n_edges; e++) {
		const struct cfg_edge *ed = &cfg.edges[e];

		if (ed->to != cfg.exit && cfg.blocks[ed->to].start <= cfg.blocks[ed->from].start &&
		    nh < 8)
			heads[nh++] = cfg.blocks[ed->to].cls;
	}
	/* two loops: their heads run n and n*m times, the entry once */
	assert_int_equal(nh, 2);
	assert_int_not_equal(heads[0], heads[1]);
	assert_int_not_equal(heads[0], cfg.blocks[cfg.entry].cls);
	assert_int_not_equal(heads[1], cfg.blocks[cfg.entry].cls);
	check_flow_classes(&cfg);
	cfg_release(&cfg);
	image_free(img);
}

static void nested_loops_all(void **state)
{
	nested_loops_in("shapes-O0");
	nested_loops_in("shapes-O2");
	nested_loops_in("shapes-O2-nopie");
}

static void switch_in(const char *prog, const char *twin)
{
	struct image *img = open_program(prog), *tw = twin ? open_program(twin) : NULL;
	const struct proc *p = tw ? image_proc_at(img, named(tw, "switch_table")->start)
				  : named(img, "switch_table");
	struct cfg cfg;
	long ij;
	int cls[16];
	size_t n = 0;

	print_message("# %s: %s\n", prog, p ? p->name : "?");
	cfg_of(img, p, &cfg);
	assert_false(cfg.flags & CFG_MISSING_EDGES);
	assert_true(cfg.flags & CFG_JUMP_TABLES);
	ij = block_with(&cfg, INSN_IJUMP);
	assert_true(ij >= 0);
	assert_true(cfg.blocks[ij].flags == 0 || !(cfg.blocks[ij].flags & CFG_BLOCK_UNREACHABLE));
	/* eight cases, eight targets, each its own class */
	for (uint32_t k = 0; k < cfg.blocks[ij].n_succ; k++) {
		const struct cfg_edge *e = &cfg.edges[cfg.succ[cfg.blocks[ij].succ + k]];

		assert_int_equal(e->kind, CFG_SWITCH);
		if (n < 16)
			cls[n++] = cfg.blocks[e->to].cls;
	}
	assert_true(n >= 8);
	for (size_t a = 0; a < n; a++) {
		assert_int_not_equal(cls[a], cfg.blocks[cfg.entry].cls);
		for (size_t b = a + 1; b < n; b++)
			assert_int_not_equal(cls[a], cls[b]);
	}
	cfg_release(&cfg);
	image_free(img);
	image_free(tw);
}

static void switch_tables(void **state)
{
	switch_in("shapes-O2", NULL);
	switch_in("shapes-O2-nopie", NULL);
	switch_in("shapes-O0", NULL);
	switch_in("shapes-O2-strip", "shapes-O2");
}

static void noreturn_in(const char *prog, const char *twin)
{
	struct image *img = open_program(prog), *tw = twin ? open_program(twin) : NULL;
	const struct proc *p = tw ? image_proc_at(img, named(tw, "checked")->start)
				  : named(img, "checked");
	struct cfg cfg;
	size_t nr = 0;

	cfg_of(img, p, &cfg);
	nr = edges_of_kind(&cfg, CFG_NORETURN);
	/* exit@plt and fatal() (a local function, found noreturn by analysis) */
	if (nr < 2) {
		/* GCC may move the cold calls to checked.cold: count there too */
		for (size_t e = 0; e < cfg.n_edges; e++) {
			const struct cfg_edge *ed = &cfg.edges[e];
			const struct proc *q;
			struct cfg cold;

			if (ed->kind != CFG_TAIL_CALL || !ed->target ||
			    !(q = image_proc_at(img, ed->target)) || q == p)
				continue;
			cfg_of(img, q, &cold);
			nr += edges_of_kind(&cold, CFG_NORETURN);
			cfg_release(&cold);
		}
	}
	assert_true(nr >= 2);
	/* calls that return do not end blocks: no call-return edges in checked */
	assert_false(cfg.flags & CFG_MISSING_EDGES);
	check_flow_classes(&cfg);
	cfg_release(&cfg);
	image_free(img);
	image_free(tw);
}

static void noreturn_calls(void **state)
{
	noreturn_in("shapes-O0", NULL);
	noreturn_in("shapes-O2", NULL);
	noreturn_in("shapes-O2-strip", "shapes-O2");
}

static void tail_call(void **state)
{
	struct image *img = open_program("shapes-O2");
	struct cfg cfg;
	const struct proc *callee = named(img, "if_else");

	cfg_of(img, named(img, "tail_caller"), &cfg);
	assert_int_equal(edges_of_kind(&cfg, CFG_TAIL_CALL), 1);
	for (size_t e = 0; e < cfg.n_edges; e++)
		if (cfg.edges[e].kind == CFG_TAIL_CALL) {
			assert_int_equal(cfg.edges[e].target, callee->start);
			assert_int_equal(cfg.edges[e].to, cfg.exit);
		}
	assert_int_equal(edges_of_kind(&cfg, CFG_RETURN), 0);
	assert_false(image_noreturn(img, named(img, "tail_caller")->start));
	cfg_release(&cfg);
	image_free(img);
}

static void infinite_loop_in(const char *prog)
{
	struct image *img = open_program(prog);
	struct cfg cfg;
	const struct proc *spin = named(img, "spin"), *mainp = named(img, "main");
	size_t exitless = 0;

	cfg_of(img, spin, &cfg);
	assert_true(cfg.flags & CFG_EXITLESS);
	assert_false(cfg.flags & CFG_MISSING_EDGES);
	assert_int_equal(edges_of_kind(&cfg, CFG_RETURN), 0);
	for (size_t b = 0; b < cfg.exit; b++)
		exitless += (cfg.blocks[b].flags & CFG_BLOCK_NO_EXIT) != 0;
	assert_true(exitless >= 2);
	/* real classes, not one per block and edge */
	assert_true(cfg.n_classes < cfg.n_blocks + cfg.n_edges);
	check_flow_classes(&cfg);
	cfg_release(&cfg);
	/* spin never returns: main's call to it ends a block */
	assert_true(image_noreturn(img, spin->start));
	cfg_of(img, mainp, &cfg);
	{
		bool found = false;

		for (size_t e = 0; e < cfg.n_edges; e++)
			found |= cfg.edges[e].kind == CFG_NORETURN && cfg.edges[e].target == spin->start;
		assert_true(found);
	}
	cfg_release(&cfg);
	image_free(img);
}

static void infinite_loop(void **state)
{
	infinite_loop_in("shapes-O0");
	infinite_loop_in("shapes-O2");
}

/*
 * Every procedure of every build: no crash, consistent classes, and no
 * missing edges: shapes.c has no construct whose control flow cannot be
 * followed (its switches compile to jump tables the decoder reads).
 */
static void all_procedures(void **state)
{
	static const char *const progs[] = { "shapes-O0", "shapes-O2", "shapes-O2-nopie",
					     "shapes-O2-strip", "shapes-O2-nog" };
	size_t missing = 0, procs = 0;

	for (size_t i = 0; i < ARRAY_SIZE(progs); i++) {
		struct image *img = open_program(progs[i]);
		struct proctab *t = image_procs(img);

		for (size_t k = 0; k < t->n; k++) {
			struct cfg cfg;

			cfg_of(img, &t->v[k], &cfg);
			for (size_t e = 0; e < cfg.n_edges; e++)
				assert_true(cfg.edges[e].cls >= 0 && (size_t)cfg.edges[e].cls < cfg.n_classes);
			for (size_t b = 0; b < cfg.n_blocks; b++)
				assert_true(cfg.blocks[b].cls >= 0 && (size_t)cfg.blocks[b].cls < cfg.n_classes);
			if (t->v[k].flags & PROC_PLT)
				assert_int_equal(edges_of_kind(&cfg, CFG_TAIL_CALL), 1);
			if (cfg.flags & CFG_MISSING_EDGES) {
				print_message("# %s %s: missing edges: %s\n", progs[i], t->v[k].name,
					      cfg.missing_why);
				missing++;
			}
			procs++;
			cfg_release(&cfg);
		}
		image_free(img);
	}
	assert_true(procs >= 5 * 8);
	assert_int_equal(missing, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cycleq_random),
		cmocka_unit_test(cycleq_rejects),
		cmocka_unit_test(if_else_O0),
		cmocka_unit_test(nested_loops_all),
		cmocka_unit_test(switch_tables),
		cmocka_unit_test(noreturn_calls),
		cmocka_unit_test(tail_call),
		cmocka_unit_test(infinite_loop),
		cmocka_unit_test(all_procedures),
	};

	set_report_routine(quiet);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
