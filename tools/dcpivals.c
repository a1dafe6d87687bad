/*
 * dcpivals - the semi-invariant instructions of an epoch: those whose
 * written register or accessed address holds one value most of the time
 * (seed 004: "find semi-invariant values for prefetching, specialization,
 * speculation"), hottest first.  Needs value profiles (dcpirun --values,
 * dcpid --values); the per-instruction values come from analysis/valprof.h,
 * as dcpicalc --values and dcpilist --values show them.
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/epochview.h"
#include "analysis/listing.h"
#include "analysis/lookup.h"
#include "analysis/valprof.h"
#include "core/cli.h"
#include "core/die.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "core/utf8.h"
#include "core/xalloc.h"

static const char usage[] =
	"usage: dcpivals [-d DIR] [-E EPOCH] [-i IMAGE] [--min-share PCT] [-n N] [--limit N]\n"
	"                [--force] [--json]\n"
	"\n"
	"The semi-invariant instructions of an epoch, hottest first: those whose\n"
	"written register or accessed address holds one value at least PCT% of\n"
	"the time they were sampled (value profiles: dcpirun --values).\n"
	"\n"
	"  -d, --db DIR          the database (default: $DCPI_DB, else ./dcpi.db)\n"
	"  -E, --epoch EPOCH     number, label, latest (default) or latest~N\n"
	"  -i, --image IMAGE     this image only (a path, a file name or a key)\n"
	"  -m, --min-share PCT   the most common value's share, at least (default 90)\n"
	"  -n, --min-samples N   value samples at the instruction, at least (default 8)\n"
	"  -l, --limit N         at most N instructions (default: all)\n"
	"      --force           use binaries that changed since they were profiled\n"
	"      --debug-dir DIR   where separate debug files are (default /usr/lib/debug)\n"
	"      --json            the same as JSON, with every value shown\n";

enum { OPT_FORCE = CLI_OPT__FIRST_FREE, OPT_DEBUG_DIR };

struct args {
	const char *db, *epoch, *image, *debug_dir;
	double min_share;
	uint64_t min_samples, limit;
	bool force, json;
};

struct row {
	size_t image;
	const struct proc *proc;
	uint64_t addr;
	char *text;
	struct valprof_insn vi;
	unsigned best;                      /* the item of vi with the invariant value */
};

struct rows {
	struct row *v;
	size_t n, alloc;
};

static void parse_args(int argc, char **argv, struct args *a)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "epoch", required_argument, NULL, 'E' },
		{ "image", required_argument, NULL, 'i' },
		{ "min-share", required_argument, NULL, 'm' },
		{ "min-samples", required_argument, NULL, 'n' },
		{ "limit", required_argument, NULL, 'l' },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ "json", no_argument, NULL, CLI_OPT_JSON },
		CLI_LONGOPTS_COMMON,
		{ NULL, 0, NULL, 0 }
	};
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "d:E:i:m:n:l:", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': a->db = optarg; break;
		case 'E': a->epoch = optarg; break;
		case 'i': a->image = optarg; break;
		case 'm':
			if (cli_parse_range(optarg, 1, 100, &v))
				die("bad share '%s' (a percentage, 1 to 100)", optarg);
			a->min_share = (double)v / 100;
			break;
		case 'n':
			if (cli_parse_range(optarg, 1, UINT32_MAX, &a->min_samples))
				die("bad sample count '%s'", optarg);
			break;
		case 'l':
			if (cli_parse_range(optarg, 1, UINT32_MAX, &a->limit))
				die("bad limit '%s'", optarg);
			break;
		case OPT_FORCE: a->force = true; break;
		case OPT_DEBUG_DIR: a->debug_dir = optarg; break;
		case CLI_OPT_JSON: a->json = true; break;
		case CLI_OPT_HELP: cli_usage(usage, 0);
		case CLI_OPT_VERSION: cli_version();
		default: cli_usage(usage, 1);
		}
	}
	if (optind != argc)
		cli_usage(usage, 1);
}

/* The semi-invariant instructions of one procedure, appended to rows. */
static void scan_proc(struct epoch_view *v, const struct args *a, size_t i, const struct proc *p,
		      struct rows *rows)
{
	struct listing_opts lo = LISTING_OPTS_INIT;
	struct proc_ref ref = { i, p };
	struct listing l;
	struct valprof vp;

	if (listing_build(&l, v, &ref, &lo))
		return;
	valprof_build(&vp, &l, epoch_view_values(v, i));
	for (size_t k = 0; k < vp.n; k++) {
		const struct valprof_item *best = valprof_invariant(&vp.insns[k], a->min_share);
		struct row *r;

		if (!best || best->samples < a->min_samples)
			continue;
		ALLOC_GROW(rows->v, rows->n + 1, rows->alloc);
		r = &rows->v[rows->n++];
		r->image = i;
		r->proc = p;
		r->addr = l.insns[k].insn->addr;
		r->text = xstrdup(l.insns[k].insn->text);
		r->vi = vp.insns[k];
		r->best = (unsigned)(best - vp.insns[k].it);
	}
	valprof_release(&vp);
	listing_release(&l);
}

/* Every procedure of image i holding an offset with enough value samples. */
static void scan_image(struct epoch_view *v, const struct args *a, size_t i, struct rows *rows)
{
	const struct values_profile *vals = epoch_view_values(v, i);
	const struct proc *last = NULL;
	struct image *img;

	if (!vals->n)
		return;
	img = epoch_view_image(v, i);
	if (!image_has_code(img, NULL) || image_load_procs(img)) {
		epoch_view_warn_image(v, i);
		return;
	}
	for (size_t k = 0; k < vals->n; k++) {
		const struct proc *p;
		uint64_t addr;

		if (vals->v[k].samples < a->min_samples ||
		    !image_offset_to_addr(img, vals->v[k].offset, &addr) ||
		    !(p = image_proc_at(img, addr)) || p == last)
			continue;
		last = p;
		scan_proc(v, a, i, p, rows);
	}
}

static int hotter(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	uint64_t sa = a->vi.it[a->best].samples, sb = b->vi.it[b->best].samples;

	if (sa != sb)
		return sa > sb ? -1 : 1;
	if (a->image != b->image)
		return a->image < b->image ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static const char *image_name(const struct epoch_view *v, size_t i)
{
	const char *path = v->images[i].rec->path, *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static void print_text(const struct epoch_view *v, const struct args *a, const struct rows *rows)
{
	printf("Semi-invariant instructions of epoch %" PRIu32 " (most common value >= %.0f%%, "
	       ">= %" PRIu64 " value samples), hottest first\n\n", v->seq, 100 * a->min_share,
	       a->min_samples);
	printf("%8s  %-28s  %-8s  %-30s  %s\n", "Samples", "Procedure", "Image", "Instruction",
	       "Values");
	for (size_t k = 0; k < rows->n; k++) {
		const struct row *r = &rows->v[k];
		struct strbuf where = STRBUF_INIT, vals = STRBUF_INIT;
		char *name = display_safe(r->proc->name), *img = display_safe(image_name(v, r->image));
		char *text = display_safe(r->text);

		strbuf_addf(&where, "%s+0x%" PRIx64, name, r->addr - r->proc->start);
		valprof_format(&r->vi, &vals);
		printf("%8" PRIu64 "  %-28s  %-8s  %-30s  %s\n", r->vi.it[r->best].samples, where.buf, img,
		       text, vals.buf);
		strbuf_release(&where);
		strbuf_release(&vals);
		free(name);
		free(img);
		free(text);
	}
	if (!rows->n)
		printf("(none)\n");
}

static int print_json(const struct epoch_view *v, const struct args *a, const struct rows *rows)
{
	struct json_writer w;

	json_init(&w, stdout, true);
	json_object_begin(&w);
	json_key(&w, "epoch"), json_u64(&w, v->seq);
	json_key(&w, "min_share"), json_double(&w, a->min_share, 4);
	json_key(&w, "min_samples"), json_u64(&w, a->min_samples);
	json_key(&w, "instructions"), json_array_begin(&w);
	for (size_t k = 0; k < rows->n; k++) {
		const struct row *r = &rows->v[k];
		const struct valprof_item *best = &r->vi.it[r->best];
		char hex[24];

		json_object_begin(&w);
		json_key(&w, "image"), json_string(&w, v->images[r->image].rec->path);
		json_key(&w, "procedure"), json_string(&w, r->proc->name);
		json_key(&w, "addr"), json_hex(&w, r->addr);
		json_key(&w, "text"), json_string(&w, r->text);
		json_key(&w, "samples"), json_u64(&w, best->samples);
		json_key(&w, "reg"), json_string(&w, best->name);
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)best->v[0].value);
		json_key(&w, "value"), json_string(&w, hex);
		json_key(&w, "share"), json_double(&w, best->v[0].share, 4);
		json_key(&w, "values"), valprof_json(&r->vi, &w);
		json_object_end(&w);
	}
	json_array_end(&w);
	json_object_end(&w);
	return json_finish(&w);
}

static int run(struct epoch_view *v, const struct args *a)
{
	struct rows rows = { NULL, 0, 0 };
	bool any = false;
	int r;

	for (size_t i = 0; i < v->n_images; i++) {
		if (a->image && !epoch_view_image_matches(v, i, a->image))
			continue;
		any |= epoch_view_values(v, i)->n > 0;
		scan_image(v, a, i, &rows);
	}
	if (a->image && !any && !error_count())
		warning("no value profile of '%s' in epoch %" PRIu32, a->image, v->seq);
	else if (!any && !error_count())
		warning("epoch %" PRIu32 " has no value profiles (record with dcpirun --values)", v->seq);
	qsort(rows.v, rows.n, sizeof(*rows.v), hotter);
	if (a->limit && rows.n > a->limit)
		rows.n = a->limit;
	r = a->json ? print_json(v, a, &rows) : 0;
	if (!a->json)
		print_text(v, a, &rows);
	for (size_t k = 0; k < rows.n; k++)
		free(rows.v[k].text);
	free(rows.v);
	if (r || fflush(stdout) || ferror(stdout))
		return errorf("cannot write the report: write error");
	return 0;
}

int main(int argc, char **argv)
{
	struct args a = { 0 };
	struct epoch_view_opts vo = { 0 };
	struct epoch_view view;
	struct db *db;
	int r = 1;

	cli_init(argc, argv);
	a.min_share = VALPROF_INVARIANT;
	a.min_samples = VALPROF_MIN_SAMPLES;
	parse_args(argc, argv, &a);
	if (!(db = db_open(db_default_path(a.db), DB_READ)))
		return 1;
	vo.force = a.force;
	vo.debug_dir = a.debug_dir;
	if (!epoch_view_open(&view, db, a.epoch, &vo)) {
		r = run(&view, &a) ? 1 : 0;
		epoch_view_release(&view);
	}
	db_close(db);
	return r || error_count() ? 1 : 0;
}
