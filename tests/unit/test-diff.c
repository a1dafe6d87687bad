/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of analysis/{pset,setstats,diff}: profile sets, rows
 * across sets, dcpistats' summaries and dcpidiff's verdicts, on databases
 * built here with known counts.
 *
 * Procedures are kernel symbols (the epoch's kallsyms file names them), so
 * no binary is needed.  Expected p-values were computed independently with
 * mpmath at 40 digits: the exact two-sided binomial test (outcomes no more
 * likely than the observed one), Student's t from the regularised
 * incomplete beta function, and Benjamini-Hochberg by hand.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff.h"
#include "analysis/pset.h"
#include "analysis/setstats.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "db/auxfile.h"
#include "db/db.h"

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))
/* relative closeness, for p-values */
#define assert_rel(a, b, rel) assert_true(fabs((double)(a) - (double)(b)) <= (rel) * fabs((double)(b)))

#define KBASE 0xffffffff81000000ull
enum { ALPHA, BETA, GAMMA, DELTA, N_PROCS };

static unsigned reported;
static void quiet(enum report_level level, const char *msg)
{
	(void)level;
	(void)msg;
	reported++;
}

/* ---- fixtures -------------------------------------------------------------- */

static char *root;   /* a temporary directory holding the databases */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	char tmpl[] = "/tmp/dcpi-unit-diff-XXXXXX";

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	root = xstrdup(tmpl);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(root);
	return 0;
}

static struct db *new_db(const char *name)
{
	char *path = xasprintf("%s/%s", root, name);
	struct db *db = db_open(path, DB_CREATE | DB_NOSYNC);

	assert_non_null(db);
	free(path);
	return db;
}

/*
 * Adds an epoch whose kernel image has counts[p] samples of cycles (clock,
 * period_ns) in procedure p: two thirds at its first instruction, the rest
 * at +4.
 */
static uint32_t add_epoch(struct db *db, const char *label, const uint64_t counts[N_PROCS],
			  uint64_t period_ns)
{
	static const char ksyms[] = "ffffffff81000000 T alpha\nffffffff81000100 T beta\n"
				    "ffffffff81000200 t gamma\nffffffff81000300 T delta\n"
				    "ffffffff81000400 T _etext\n";
	struct image_index idx = IMAGE_INDEX_INIT;
	struct db_profile_id id;
	struct epoch_meta m;
	struct epoch_event *e;
	struct db_image img;
	struct profile p;
	uint32_t seq;

	epoch_meta_init(&m);
	epoch_meta_set_label(&m, label);
	e = epoch_meta_add_event(&m, EVENT_CYCLES);
	e->used = EVENT_CLOCK;
	e->period = period_ns;
	e->period_in_ns = true;
	assert_int_equal(db_epoch_create(db, &m), 0);
	seq = m.seq;
	memset(&img, 0, sizeof(img));
	strcpy(img.key, "kernel");
	img.kind = IMAGE_KERNEL;
	img.path = (char *)"[kernel.kallsyms]";
	image_index_put(&idx, &img);
	assert_int_equal(db_images_store(db, seq, &idx), 0);
	assert_int_equal(db_aux_store(db, seq, "kallsyms", ksyms, strlen(ksyms)), 0);
	profile_init(&p);
	for (int k = 0; k < N_PROCS; k++) {
		if (counts[k] - counts[k] / 3)
			profile_add(&p, KBASE + 0x100 * (uint64_t)k, counts[k] - counts[k] / 3);
		if (counts[k] / 3)
			profile_add(&p, KBASE + 0x100 * (uint64_t)k + 4, counts[k] / 3);
	}
	profile_normalize(&p);
	assert_int_equal(db_profile_id_set(&id, "kernel", EVENT_CYCLES, false, 0), 0);
	if (p.n)
		assert_int_equal(db_profile_merge(db, seq, &id, &p), 0);
	assert_int_equal(db_epoch_close(db, seq, 0), 0);
	profile_release(&p);
	image_index_release(&idx);
	epoch_meta_release(&m);
	return seq;
}

static struct pset *open_set(struct pset_ctx *ctx, const char *spec)
{
	struct pset *s = XNEW(struct pset);

	assert_int_equal(pset_open(s, ctx, spec), 0);
	return s;
}

static void close_set(struct pset *s)
{
	pset_release(s);
	free(s);
}

static const struct pset_row *find_prow(const struct pset_rows *t, const char *name)
{
	for (size_t i = 0; i < t->n_rows; i++)
		if (!strcmp(t->rows[i].name, name))
			return &t->rows[i];
	fail_msg("no row '%s'", name);
	return NULL;
}

/* Row i of d, in its order (a copy: rows are computed when read). */
static struct diff_row row_at(const struct diff *d, size_t i)
{
	struct diff_row r;

	diff_row_get(d, i, &r);
	return r;
}

/* The row named name (valid until the next call). */
static const struct diff_row *find_row(const struct diff *d, const char *name)
{
	static struct diff_row found;

	for (size_t i = 0; i < d->n_rows; i++) {
		found = row_at(d, i);
		if (!strcmp(found.name, name))
			return &found;
	}
	fail_msg("no row '%s'", name);
	return NULL;
}

/* ---- sets ---------------------------------------------------------------------- */

static void sets_resolve_and_sum(void **state)
{
	static const uint64_t c1[N_PROCS] = { 10, 20, 0, 0 }, c2[N_PROCS] = { 5, 0, 7, 0 };
	struct pset_ctx ctx = PSET_CTX_INIT;
	struct db *db = new_db("sets");
	struct pset *s, bad;
	char *path = xasprintf("%s/sets", root), *spec;

	(void)state;
	add_epoch(db, "one", c1, 1000);
	add_epoch(db, "two", c2, 1000);
	ctx.db_path = path;
	s = open_set(&ctx, "one");
	assert_int_equal(s->n_epochs, 1);
	assert_int_equal(pset_total(s, EVENT_CYCLES), 30);
	assert_non_null(strstr(s->desc, "epoch 1 (one) of"));
	close_set(s);
	s = open_set(&ctx, "latest");
	assert_int_equal(pset_total(s, EVENT_CYCLES), 12);
	close_set(s);
	/* a directory: every epoch summed */
	s = open_set(&ctx, path);
	assert_int_equal(s->n_epochs, 2);
	assert_int_equal(pset_total(s, EVENT_CYCLES), 42);
	assert_non_null(strstr(s->desc, "2 epochs, 1-2, summed"));
	close_set(s);
	/* DIR:EPOCH */
	spec = xasprintf("%s:1", path);
	s = open_set(&ctx, spec);
	assert_int_equal(pset_total(s, EVENT_CYCLES), 30);
	close_set(s);
	free(spec);
	/* bad names: reported, -1 */
	reported = 0;
	set_report_routine(quiet);
	assert_int_equal(pset_open(&bad, &ctx, "three"), -1);
	assert_int_equal(pset_open(&bad, &ctx, ""), -1);
	spec = xasprintf("%s/", root);
	assert_int_equal(pset_open(&bad, &ctx, spec), -1);  /* a directory, not a database */
	free(spec);
	set_report_routine(NULL);
	assert_int_equal(reported, 3);
	pset_ctx_release(&ctx);
	db_close(db);
	free(path);
}

static void rows_match_across_sets(void **state)
{
	static const uint64_t c1[N_PROCS] = { 10, 20, 0, 0 }, c2[N_PROCS] = { 5, 0, 7, 0 };
	struct pset_ctx ctx = PSET_CTX_INIT;
	struct db *db = new_db("rows");
	char *path = xasprintf("%s/rows", root);
	const struct pset_row *r;
	struct pset *sets[2];
	struct pset_rows t;

	(void)state;
	add_epoch(db, "one", c1, 1000);
	add_epoch(db, "two", c2, 1000);
	ctx.db_path = path;
	sets[0] = open_set(&ctx, "one");
	sets[1] = open_set(&ctx, "two");
	assert_int_equal(pset_rows_build(&t, sets, 2, EVENT_CYCLES, PSET_PROCEDURES), 0);
	assert_int_equal(t.n_rows, 3);   /* alpha, beta, gamma */
	r = find_prow(&t, "alpha");
	assert_string_equal(r->image, "[kernel.kallsyms]");
	assert_true(r->has_addr);
	assert_int_equal(r->addr, KBASE);
	assert_int_equal(r->counts[0], 10);
	assert_int_equal(r->counts[1], 5);
	r = find_prow(&t, "gamma");
	assert_int_equal(r->counts[0], 0);
	assert_int_equal(r->counts[1], 7);
	assert_int_equal(t.n_notes, 0);
	pset_rows_release(&t);
	/* images */
	assert_int_equal(pset_rows_build(&t, sets, 2, EVENT_CYCLES, PSET_IMAGES), 0);
	assert_int_equal(t.n_rows, 1);
	assert_int_equal(t.rows[0].counts[0], 30);
	assert_int_equal(t.rows[0].counts[1], 12);
	pset_rows_release(&t);
	/* instructions: two per sampled procedure where count / 3 > 0 */
	assert_int_equal(pset_rows_build(&t, sets, 2, EVENT_CYCLES, PSET_INSTRUCTIONS), 0);
	assert_int_equal(t.n_rows, 6);
	r = find_prow(&t, "alpha+0x4");
	assert_int_equal(r->addr, KBASE + 4);
	assert_int_equal(r->counts[0], 3);
	assert_int_equal(r->counts[1], 1);
	pset_rows_release(&t);
	/* one procedure's instructions: the kernel has no code, sampled addresses only */
	assert_int_equal(pset_rows_build_proc(&t, sets, 2, EVENT_CYCLES, "alpha"), 0);
	assert_null(t.unaligned);
	assert_true(t.no_code);
	assert_int_equal(t.n_rows, 2);
	assert_int_equal(t.rows[0].addr, KBASE);
	assert_int_equal(t.rows[0].counts[0], 7);
	assert_int_equal(t.proc->counts[0], 10);
	assert_int_equal(t.proc->counts[1], 5);
	pset_rows_release(&t);
	reported = 0;
	set_report_routine(quiet);
	assert_int_equal(pset_rows_build_proc(&t, sets, 2, EVENT_CYCLES, "nosuch"), -1);
	set_report_routine(NULL);
	assert_int_equal(reported, 1);
	close_set(sets[0]);
	close_set(sets[1]);
	pset_ctx_release(&ctx);
	db_close(db);
	free(path);
}

/* ---- dcpistats ------------------------------------------------------------------ */

static void setstats_figure3(void **state)
{
	static const uint64_t c[3][N_PROCS] = { { 100, 50, 0, 0 }, { 300, 50, 0, 10 },
						{ 200, 50, 0, 0 } };
	struct pset_ctx ctx = PSET_CTX_INIT;
	struct setstats_opts o = SETSTATS_OPTS_INIT;
	struct db *db = new_db("stats");
	char *path = xasprintf("%s/stats", root);
	struct pset *sets[3];
	struct setstats st;

	(void)state;
	for (int i = 0; i < 3; i++)
		add_epoch(db, (const char *[]){ "r1", "r2", "r3" }[i], c[i], 1000);
	ctx.db_path = path;
	for (int i = 0; i < 3; i++)
		sets[i] = open_set(&ctx, (const char *[]){ "r1", "r2", "r3" }[i]);
	assert_int_equal(setstats_build(&st, sets, 3, &o), 0);
	assert_int_equal(st.n, 3);
	/* delta: one set of three, range% 100; alpha: (300-100)/600; beta: 0 */
	assert_string_equal(st.v[0].row->name, "delta");
	assert_near(st.v[0].s.range_pct, 100, 1e-12);
	assert_int_equal(st.v[0].n, 1);
	assert_string_equal(st.v[1].row->name, "alpha");
	assert_near(st.v[1].s.range_pct, 100.0 * 200 / 600, 1e-12);
	assert_near(st.v[1].s.sum, 600, 1e-12);
	assert_near(st.v[1].sum_pct, 100.0 * 600 / 760, 1e-12);
	assert_near(st.v[1].s.mean, 200, 1e-12);
	assert_near(st.v[1].s.stddev, 100, 1e-12);
	assert_near(st.v[1].s.min, 100, 1e-12);
	assert_near(st.v[1].s.max, 300, 1e-12);
	assert_int_equal(st.v[1].n, 3);
	assert_string_equal(st.v[2].row->name, "beta");
	assert_near(st.v[2].s.range_pct, 0, 1e-12);
	setstats_release(&st);
	/* scaled to the mean total (760 / 3): set 2 (360) shrinks, set 1 (150) grows */
	o.norm = PSET_NORM_TOTAL;
	assert_int_equal(setstats_build(&st, sets, 3, &o), 0);
	assert_near(st.factors[0], 760.0 / 3 / 150, 1e-12);
	assert_near(st.factors[1], 760.0 / 3 / 360, 1e-12);
	assert_near(st.total, 760, 1e-9);
	/* beta (50 in each set) varies now: 50 * 760/3/150 down to 50 * 760/3/360 */
	assert_string_equal(st.v[1].row->name, "beta");
	assert_near(st.v[1].s.max, 50 * 760.0 / 3 / 150, 1e-9);
	assert_near(st.v[1].s.min, 50 * 760.0 / 3 / 360, 1e-9);
	assert_string_equal(st.v[2].row->name, "alpha");
	assert_near(st.v[2].s.min, 100 * 760.0 / 3 / 150, 1e-9);
	setstats_release(&st);
	for (int i = 0; i < 3; i++)
		close_set(sets[i]);
	pset_ctx_release(&ctx);
	db_close(db);
	free(path);
}

/* ---- dcpidiff ------------------------------------------------------------------ */

struct two {
	struct pset_ctx ctx;
	struct db *db;
	char *path;
	struct pset *a[3], *b[3];
};

static void two_open(struct two *t, const char *name, const uint64_t (*ca)[N_PROCS], size_t na,
		     const uint64_t (*cb)[N_PROCS], size_t nb, const uint64_t *periods)
{
	memset(t, 0, sizeof(*t));
	t->db = new_db(name);
	t->path = xasprintf("%s/%s", root, name);
	t->ctx.db_path = t->path;
	for (size_t i = 0; i < na; i++) {
		char label[24];

		snprintf(label, sizeof(label), "a%zu", i + 1);
		add_epoch(t->db, label, ca[i], periods ? periods[0] : 1000);
		t->a[i] = open_set(&t->ctx, label);
	}
	for (size_t i = 0; i < nb; i++) {
		char label[24];

		snprintf(label, sizeof(label), "b%zu", i + 1);
		add_epoch(t->db, label, cb[i], periods ? periods[1] : 1000);
		t->b[i] = open_set(&t->ctx, label);
	}
}

static void two_close(struct two *t)
{
	for (size_t i = 0; i < 3; i++) {
		if (t->a[i])
			close_set(t->a[i]);
		if (t->b[i])
			close_set(t->b[i]);
	}
	pset_ctx_release(&t->ctx);
	db_close(t->db);
	free(t->path);
}

static void diff_poisson_exact(void **state)
{
	static const uint64_t ca[1][N_PROCS] = { { 500, 300, 200, 0 } };
	static const uint64_t cb[1][N_PROCS] = { { 500, 600, 290, 100 } };
	struct diff_opts o = DIFF_OPTS_INIT;
	const struct diff_row *r;
	struct two t;
	struct diff d;

	(void)state;
	two_open(&t, "poisson", ca, 1, cb, 1, NULL);
	assert_int_equal(diff_build(&d, t.a, 1, t.b, 1, &o), 0);
	assert_int_equal(d.method, DIFF_POISSON);
	assert_int_equal(d.total_a, 1000);
	assert_int_equal(d.total_b, 1490);
	assert_int_equal(d.n_rows, 4);
	assert_int_equal(d.n_tested, 4);
	r = find_row(&d, "alpha");
	assert_int_equal(r->a, 500);
	assert_int_equal(r->b, 500);
	assert_near(r->share_a, 50, 1e-12);
	assert_near(r->share_b, 100.0 * 500 / 1490, 1e-12);
	assert_near(r->delta, 100.0 * 500 / 1490 - 50, 1e-12);
	assert_near(r->ratio, 1000.0 / 1490, 1e-12);
	assert_rel(r->p, 3.45680679154072e-10, 1e-6);
	assert_rel(r->q, 6.91361358308144e-10, 1e-6);
	assert_true(r->significant);
	assert_string_equal(diff_verdict(&d, r), "changed");
	r = find_row(&d, "beta");
	assert_rel(r->p, 2.80939437254892e-5, 1e-6);
	assert_rel(r->q, 3.74585916339855e-5, 1e-6);
	assert_true(r->significant);
	r = find_row(&d, "gamma");
	assert_rel(r->p, 0.782256638962335, 1e-6);
	assert_rel(r->q, 0.782256638962335, 1e-6);
	assert_false(r->significant);
	assert_string_equal(diff_verdict(&d, r), "~");
	r = find_row(&d, "delta");
	assert_int_equal(r->status, DIFF_APPEARED);
	assert_true(isinf(r->ratio));
	assert_rel(r->p, 8.3116506232174e-23, 1e-6);
	assert_rel(r->q, 3.32466024928696e-22, 1e-6);
	assert_string_equal(diff_verdict(&d, r), "appeared");
	/* sorted: significant by |delta| (alpha 16.4, beta 10.3, delta 6.7), then gamma */
	assert_string_equal(row_at(&d, 0).name, "alpha");
	assert_string_equal(row_at(&d, 1).name, "beta");
	assert_string_equal(row_at(&d, 2).name, "delta");
	assert_string_equal(row_at(&d, 3).name, "gamma");
	assert_int_equal(d.n_significant, 3);
	/* swapped: the same tests, the other way round */
	diff_swap(&d);
	r = find_row(&d, "delta");
	assert_int_equal(r->status, DIFF_DISAPPEARED);
	assert_int_equal(r->a, 100);
	assert_near(r->ratio, 0, 0);
	assert_rel(r->q, 3.32466024928696e-22, 1e-6);
	assert_string_equal(diff_verdict(&d, r), "disappeared");
	r = find_row(&d, "alpha");
	assert_near(r->ratio, 1490.0 / 1000, 1e-12);
	assert_near(r->delta, 50 - 100.0 * 500 / 1490, 1e-12);
	diff_release(&d);
	two_close(&t);
}

static void diff_welch_and_prediction(void **state)
{
	static const uint64_t ca[3][N_PROCS] = { { 500, 500, 0, 0 }, { 520, 480, 0, 0 },
						 { 480, 520, 0, 0 } };
	static const uint64_t cb[3][N_PROCS] = { { 400, 600, 0, 0 }, { 450, 550, 0, 0 },
						 { 420, 580, 0, 0 } };
	struct diff_opts o = DIFF_OPTS_INIT;
	const struct diff_row *r;
	struct two t;
	struct diff d;

	(void)state;
	two_open(&t, "welch", ca, 3, cb, 3, NULL);
	assert_int_equal(diff_build(&d, t.a, 3, t.b, 3, &o), 0);
	assert_int_equal(d.method, DIFF_WELCH);
	r = find_row(&d, "alpha");
	assert_int_equal(r->a, 1500);
	assert_int_equal(r->b, 1270);
	assert_near(r->share_a, 50, 1e-12);
	assert_near(r->sd_a, 2, 1e-12);
	assert_near(r->share_b, 42.3333333333333, 1e-10);
	assert_near(r->sd_b, 2.51661147842358, 1e-10);
	assert_rel(r->p, 0.0160361900101246, 1e-6);
	assert_rel(r->q, 0.0160361900101246, 1e-6);
	assert_true(r->significant);
	r = find_row(&d, "beta");
	assert_rel(r->p, 0.0160361900101246, 1e-6);
	assert_true(r->significant);
	diff_release(&d);
	/* one set against three: the prediction interval is wide with 2 df */
	assert_int_equal(diff_build(&d, t.a, 1, t.b, 3, &o), 0);
	assert_int_equal(d.method, DIFF_PREDICTION);
	r = find_row(&d, "alpha");
	assert_rel(r->p, 0.118638084974751, 1e-6);
	assert_false(r->significant);
	assert_string_equal(diff_verdict(&d, r), "~");
	diff_release(&d);
	two_close(&t);
}

static void diff_normalised_by_period(void **state)
{
	/* B sampled half as often and ran beta twice as long: alpha's time is the same */
	static const uint64_t ca[1][N_PROCS] = { { 500, 500, 0, 0 } };
	static const uint64_t cb[1][N_PROCS] = { { 250, 500, 0, 0 } };
	static const uint64_t periods[2] = { 1000, 2000 };
	struct diff_opts o = DIFF_OPTS_INIT;
	const struct diff_row *r;
	struct two t;
	struct diff d;

	(void)state;
	two_open(&t, "period", ca, 1, cb, 1, periods);
	assert_int_equal(diff_build(&d, t.a, 1, t.b, 1, &o), 0);
	r = find_row(&d, "alpha");
	assert_near(r->ratio, (250.0 / 750) / 0.5, 1e-12);
	assert_rel(r->p, 1.00378715269249e-7, 1e-6);
	assert_true(r->significant);
	diff_release(&d);
	o.norm = PSET_NORM_PERIOD;
	assert_int_equal(diff_build(&d, t.a, 1, t.b, 1, &o), 0);
	assert_near(d.factors[0], 1000.0 / 1500, 1e-12);
	assert_near(d.factors[1], 2000.0 / 1500, 1e-12);
	r = find_row(&d, "alpha");
	assert_near(r->ratio, 1, 1e-12);
	assert_near(r->effect, 0, 1e-12);
	assert_near(r->delta, 100.0 / 3 - 50, 1e-12);  /* shares still shown */
	assert_rel(r->p, 1, 1e-12);
	assert_false(r->significant);
	r = find_row(&d, "beta");
	assert_near(r->ratio, 2, 1e-12);
	/* effect: (1000 - 500) * 2/3 ... in points of the mean total (875) */
	assert_near(r->effect, 100.0 * (500 * 4.0 / 3 - 500 * 2.0 / 3) / 875, 1e-9);
	assert_rel(r->p, 2.04131037053142e-27, 1e-6);
	assert_true(r->significant);
	/* the same rows normalised again, both ways: the figures of a diff built so */
	{
		struct diff e;
		struct diff_opts total = DIFF_OPTS_INIT;

		assert_int_equal(diff_build(&e, t.a, 1, t.b, 1, &total), 0);
		assert_int_equal(diff_renorm(&e, PSET_NORM_PERIOD), 0);
		assert_int_equal(e.n_rows, d.n_rows);
		for (size_t i = 0; i < d.n_rows; i++) {
			struct diff_row x = row_at(&e, i), y = row_at(&d, i);

			assert_string_equal(x.name, y.name);
			assert_near(x.effect, y.effect, 1e-12);
			assert_near(x.q, y.q, 1e-12);
			assert_int_equal(x.significant, y.significant);
		}
		assert_int_equal(diff_renorm(&e, PSET_NORM_TOTAL), 0);
		r = find_row(&e, "alpha");
		assert_near(r->ratio, (250.0 / 750) / 0.5, 1e-12);
		assert_true(r->significant);
		diff_release(&e);
	}
	diff_release(&d);
	two_close(&t);
}

static void diff_minimum_effect(void **state)
{
	/* ten million samples: a 2% change is "significant" but too small to matter,
	 * and a tiny procedure that triples is too small to be tested at all */
	static const uint64_t ca[1][N_PROCS] = { { 1000000, 8999950, 0, 50 } };
	static const uint64_t cb[1][N_PROCS] = { { 1020000, 8979850, 0, 150 } };
	struct diff_opts o = DIFF_OPTS_INIT;
	const struct diff_row *r;
	struct two t;
	struct diff d;

	(void)state;
	two_open(&t, "effect", ca, 1, cb, 1, NULL);
	assert_int_equal(diff_build(&d, t.a, 1, t.b, 1, &o), 0);
	r = find_row(&d, "alpha");
	assert_true(r->tested);
	assert_true(r->q < 1e-3);
	assert_near(r->ratio, 1.02, 1e-12);
	assert_false(r->significant);
	r = find_row(&d, "delta");
	assert_near(r->ratio, 3, 1e-12);
	assert_false(r->tested);
	assert_near(r->q, 1, 0);
	assert_false(r->significant);
	assert_int_equal(d.n_significant, 0);
	diff_release(&d);
	/* the thresholds are options */
	o.min_ratio = 1.01;
	assert_int_equal(diff_build(&d, t.a, 1, t.b, 1, &o), 0);
	assert_true(find_row(&d, "alpha")->significant);
	diff_release(&d);
	o.min_ratio = 0.5;
	reported = 0;
	set_report_routine(quiet);
	assert_int_equal(diff_build(&d, t.a, 1, t.b, 1, &o), -1);
	set_report_routine(NULL);
	assert_int_equal(reported, 1);
	two_close(&t);
}

static void diff_empty_side_and_procedure(void **state)
{
	static const uint64_t ca[1][N_PROCS] = { { 0, 0, 0, 0 } };
	static const uint64_t cb[1][N_PROCS] = { { 30, 60, 0, 0 } };
	struct diff_opts o = DIFF_OPTS_INIT;
	struct two t;
	struct diff d;

	(void)state;
	two_open(&t, "empty", ca, 1, cb, 1, NULL);
	assert_int_equal(diff_build(&d, t.a, 1, t.b, 1, &o), 0);
	assert_int_equal(d.method, DIFF_UNTESTED);
	assert_int_equal(d.total_a, 0);
	assert_int_equal(d.n_rows, 2);
	assert_int_equal(d.n_significant, 0);
	assert_int_equal(row_at(&d, 0).status, DIFF_APPEARED);
	assert_string_equal(diff_verdict(&d, find_row(&d, row_at(&d, 0).name)), "-");
	diff_release(&d);
	/* a procedure on one side only */
	o.procedure = "beta";
	assert_int_equal(diff_build(&d, t.a, 1, t.b, 1, &o), 0);
	assert_true(d.has_proc);
	assert_int_equal(d.proc.a, 0);
	assert_int_equal(d.proc.b, 60);
	assert_int_equal(d.n_rows, 2);
	assert_int_equal(d.sort, DIFF_SORT_ADDRESS);
	assert_int_equal(row_at(&d, 0).addr, KBASE + 0x100);
	assert_int_equal(row_at(&d, 0).b, 40);
	assert_int_equal(row_at(&d, 1).b, 20);
	diff_release(&d);
	two_close(&t);
}

static void diff_epochs_for_the_tui(void **state)
{
	static const uint64_t ca[1][N_PROCS] = { { 500, 300, 200, 0 } };
	static const uint64_t cb[1][N_PROCS] = { { 500, 600, 290, 100 } };
	struct diff_opts o = DIFF_OPTS_INIT;
	struct diff_epochs *de = XNEW(struct diff_epochs);
	struct two t;

	(void)state;
	two_open(&t, "tui", ca, 1, cb, 1, NULL);
	assert_int_equal(diff_epochs_open(de, t.db, 1, 2, &o, NULL), 0);
	assert_int_equal(de->diff.n_rows, 4);
	assert_int_equal(de->diff.n_significant, 3);
	assert_string_equal(row_at(&de->diff, 0).name, "alpha");
	diff_epochs_release(de);
	reported = 0;
	set_report_routine(quiet);
	assert_int_equal(diff_epochs_open(de, t.db, 1, 9, &o, NULL), -1);
	set_report_routine(NULL);
	assert_int_equal(reported, 1);
	free(de);
	two_close(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sets_resolve_and_sum),
		cmocka_unit_test(rows_match_across_sets),
		cmocka_unit_test(setstats_figure3),
		cmocka_unit_test(diff_poisson_exact),
		cmocka_unit_test(diff_welch_and_prediction),
		cmocka_unit_test(diff_normalised_by_period),
		cmocka_unit_test(diff_minimum_effect),
		cmocka_unit_test(diff_empty_side_and_procedure),
		cmocka_unit_test(diff_epochs_for_the_tui),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
