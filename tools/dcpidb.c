/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dcpidb - a profile database's upkeep, offline:
 *
 *   dcpidb [-d DIR] check [--quick] [--json]   verify every file, name what is damaged
 *   dcpidb [-d DIR] info [--json]              epochs with their sizes
 *   dcpidb [-d DIR] prune [--keep N] [--max-size SIZE] [--older-than DAYS] [--label L] [-n]
 *   dcpidb [-d DIR] gc [-n]                    remove unused snapshots and orphaned temps
 *
 * check and info only read (a running dcpid is fine); prune and gc take the
 * writer lock.  The work is done by db/check.h and db/upkeep.h.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/incomplete.h"
#include "analysis/procprof.h"
#include "core/cli.h"
#include "core/die.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "core/timeutil.h"
#include "analysis/calc-cache.h"
#include "db/check.h"
#include "db/damage.h"
#include "db/db.h"
#include "db/upkeep.h"
#include "tools/tool.h"

#define NS_PER_DAY (86400.0 * 1e9)

static const char *db_path;
static bool json, dry_run, quick;
static struct db_retention retention;  /* prune's */

/* ---- check ------------------------------------------------------------------------ */

struct findings {
	struct json_writer *w;
};

static void print_finding(void *ctx, enum db_check_severity s, const char *path, const char *msg)
{
	struct findings *f = ctx;

	if (!f->w) {
		printf("%-7s %s: %s\n", db_check_severity_name(s), path, msg);
		return;
	}
	json_object_begin(f->w);
	json_key(f->w, "severity"), json_string(f->w, db_check_severity_name(s));
	json_key(f->w, "path"), json_string(f->w, path);
	json_key(f->w, "message"), json_string(f->w, msg);
	json_object_end(f->w);
}

static void check_summary(const struct db_check_stats *st, int r)
{
	printf("%s: %zu epochs, %zu files (%zu profiles, %zu blobs, %zu records, %zu snapshots): ",
	       r ? "damaged" : "sound", st->epochs, st->files, st->profiles, st->blobs,
	       st->records, st->snapshots);
	printf("%zu error%s, %zu warning%s, %zu note%s\n", st->findings[DB_CHECK_ERROR],
	       st->findings[DB_CHECK_ERROR] == 1 ? "" : "s", st->findings[DB_CHECK_WARNING],
	       st->findings[DB_CHECK_WARNING] == 1 ? "" : "s", st->findings[DB_CHECK_NOTE],
	       st->findings[DB_CHECK_NOTE] == 1 ? "" : "s");
}

static void check_json(struct json_writer *w, const struct db_check_stats *st, int r)
{
	json_key(w, "sound"), json_bool(w, r == 0);
	JSON_U64_MEMBERS(w, { "epochs", st->epochs }, { "files", st->files },
			 { "profiles", st->profiles }, { "blobs", st->blobs },
			 { "records", st->records }, { "snapshots", st->snapshots },
			 { "errors", st->findings[DB_CHECK_ERROR] },
			 { "warnings", st->findings[DB_CHECK_WARNING] },
			 { "notes", st->findings[DB_CHECK_NOTE] });
}

static int cmd_check(struct db *db)
{
	struct db_check_stats st;
	struct json_writer w;
	struct findings f = { json ? &w : NULL };
	int r;

	if (json) {
		json_init(&w, stdout, true);
		json_object_begin(&w);
		json_key(&w, "database"), json_string(&w, db->path);
		json_key(&w, "findings"), json_array_begin(&w);
	}
	db_check_calc_payload = calc_cache_check_payload;
	r = db_check(db, quick ? DB_CHECK_QUICK : 0, print_finding, &f, &st);
	if (r < 0)
		return -1;
	if (json) {
		json_array_end(&w);
		check_json(&w, &st, r);
		json_object_end(&w);
		json_finish(&w);
	} else {
		check_summary(&st, r);
	}
	return r;
}

/* ---- info ------------------------------------------------------------------------- */

static void time_text(struct strbuf *sb, int64_t ns)
{
	if (ns)
		strbuf_add_time_short(sb, ns);
	else
		strbuf_addstr(sb, "-");
}

static void info_text(struct db *db, const struct db_census *c)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "database %s: ", db->path);
	strbuf_add_size(&sb, c->total_bytes);
	strbuf_addf(&sb, " in %zu epoch%s", c->n, c->n == 1 ? "" : "s");
	if (c->current)
		strbuf_addf(&sb, ", current %" PRIu32, c->current);
	printf("%s\n\n%8s  %-20s %-19s  %-19s  %6s  %10s\n", sb.buf, "epoch", "label", "start (UTC)",
	       "end", "files", "size");
	for (size_t i = 0; i < c->n; i++) {
		const struct db_epoch_usage *e = &c->epochs[i];
		struct strbuf start = STRBUF_INIT, end = STRBUF_INIT, size = STRBUF_INIT;

		if (e->meta_ok) {
			time_text(&start, e->start_ns);
			if (e->end_ns)
				time_text(&end, e->end_ns);
			else
				strbuf_addstr(&end, "(open)");
		} else {
			strbuf_addstr(&start, "(unreadable meta)");
		}
		strbuf_add_size(&size, e->bytes);
		printf("%8" PRIu32 "%c %-20s %-19s  %-19s  %6" PRIu64 "  %10s\n", e->seq,
		       e->seq == c->current ? '*' : ' ', e->label ? e->label : "", start.buf,
		       end.buf, e->files, size.buf);
		strbuf_release(&start);
		strbuf_release(&end);
		strbuf_release(&size);
	}
	strbuf_reset(&sb);
	strbuf_add_size(&sb, c->binaries_bytes);
	printf("\nbinaries: %zu snapshot%s, %s\n", c->n_binaries, c->n_binaries == 1 ? "" : "s",
	       sb.buf);
	if (c->n_unwind) {
		strbuf_reset(&sb);
		strbuf_add_size(&sb, c->unwind_bytes);
		printf("unwind tables: %zu cached, %s\n", c->n_unwind, sb.buf);
	}
	if (c->n_calc) {
		strbuf_reset(&sb);
		strbuf_add_size(&sb, c->calc_bytes);
		printf("analyses: %zu cached, %s\n", c->n_calc, sb.buf);
	}
	if (c->n_temps) {
		strbuf_reset(&sb);
		strbuf_add_size(&sb, c->temp_bytes);
		printf("temporary files of a writer that stopped: %zu, %s (dcpidb gc removes them)\n",
		       c->n_temps, sb.buf);
	}
	strbuf_release(&sb);
}

static void json_time(struct json_writer *w, const char *key, int64_t ns)
{
	struct strbuf sb = STRBUF_INIT;

	json_key(w, key);
	if (ns) {
		strbuf_add_time_iso(&sb, ns);
		json_string(w, sb.buf);
	} else {
		json_null(w);
	}
	strbuf_release(&sb);
}

static void info_json(struct db *db, const struct db_census *c)
{
	struct json_writer w;

	json_init(&w, stdout, true);
	json_object_begin(&w);
	json_key(&w, "database"), json_string(&w, db->path);
	json_key(&w, "bytes"), json_u64(&w, c->total_bytes);
	json_key(&w, "current"), c->current ? json_u64(&w, c->current) : json_null(&w);
	json_key(&w, "epochs"), json_array_begin(&w);
	for (size_t i = 0; i < c->n; i++) {
		const struct db_epoch_usage *e = &c->epochs[i];

		json_object_begin(&w);
		json_key(&w, "epoch"), json_u64(&w, e->seq);
		json_key(&w, "label"), json_string(&w, e->label);
		json_key(&w, "meta_ok"), json_bool(&w, e->meta_ok);
		json_time(&w, "start", e->start_ns);
		json_time(&w, "end", e->end_ns);
		json_key(&w, "files"), json_u64(&w, e->files);
		json_key(&w, "bytes"), json_u64(&w, e->bytes);
		json_object_end(&w);
	}
	json_array_end(&w);
	JSON_U64_MEMBERS(&w, { "snapshots", c->n_binaries }, { "snapshot_bytes", c->binaries_bytes },
			 { "unwind_tables", c->n_unwind }, { "unwind_table_bytes", c->unwind_bytes },
			 { "analyses", c->n_calc }, { "analysis_bytes", c->calc_bytes },
			 { "temps", c->n_temps }, { "temp_bytes", c->temp_bytes });
	db_damage_json(&db, 1, &w);
	json_object_end(&w);
	json_finish(&w);
}

static int cmd_info(struct db *db)
{
	struct db_census c;

	if (db_census_take(db, &c))
		return -1;
	/* an epoch whose meta cannot be read: said and recorded, as the reports do */
	for (size_t i = 0; i < c.n; i++) {
		struct epoch_meta m;

		if (!c.epochs[i].meta_ok && !db_meta_load(db, c.epochs[i].seq, &m))
			epoch_meta_release(&m);
	}
	if (json) {
		info_json(db, &c);
	} else {
		struct draw d;

		info_text(db, &c);
		draw_init_file(&d, stdout, 0);
		incomplete_draw(&db, 1, &d, NULL);
		draw_file_finish(&d);
	}
	db_census_release(&c);
	return 0;
}

/* ---- prune and gc ----------------------------------------------------------------- */

static void say_size(const char *before, uint64_t bytes, const char *after)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_add_size(&sb, bytes);
	printf("%s%s%s", before, sb.buf, after);
	strbuf_release(&sb);
}

static void list_snapshot(void *ctx, const char *hex, uint64_t bytes)
{
	(void)ctx;
	if (!strncmp(hex, "unwind/", 7))
		printf("%s cached unwind table %s (", dry_run ? "would remove" : "removing", hex + 7);
	else if (!strncmp(hex, "calc/", 5))
		printf("%s cached analysis %s (", dry_run ? "would remove" : "removing", hex + 5);
	else
		printf("%s snapshot %s (", dry_run ? "would remove" : "removing", hex);
	say_size("", bytes, ")\n");
}

/* Removes the snapshots no epoch uses; the temps went when the database was opened. */
static int collect_snapshots(struct db *db, struct db_prune_stats *st)
{
	return db_binaries_gc(db, dry_run, st, list_snapshot, NULL) < 0 ? -1 : 0;
}

/* One pass: plans, says, removes.  *n gets the number of epochs planned. */
static int prune_pass(struct db *db, const struct db_retention *r, struct db_prune_stats *st,
		      size_t *n, struct db_prune_plan *plan)
{
	struct db_census c;
	int ret = 0;

	if (db_census_take(db, &c))
		return -1;
	db_prune_plan_make(&c, r, 0, time_now_ns(), plan);
	for (size_t i = 0, j = 0; i < plan->n; i++) {
		while (c.epochs[j].seq != plan->seqs[i])
			j++;
		printf("%s epoch %" PRIu32 "%s%s%s (", dry_run ? "would remove" : "removing",
		       plan->seqs[i], c.epochs[j].label ? " '" : "",
		       c.epochs[j].label ? c.epochs[j].label : "", c.epochs[j].label ? "'" : "");
		say_size("", c.epochs[j].bytes, ")\n");
	}
	*n += plan->n;
	if (!dry_run && plan->n)
		ret = db_epochs_remove(db, plan->seqs, plan->n, st);
	if (!ret && (plan->n || !dry_run))
		ret = collect_snapshots(db, st);
	db_census_release(&c);
	return ret;
}

static int cmd_prune(struct db *db)
{
	const struct db_retention *r = &retention;
	struct db_prune_stats st = { 0 };
	struct db_prune_plan plan = { 0 };
	uint64_t left = 0;
	size_t n = 0;
	int ret = 0;

	/* As db_retain: the directory keeps some blocks; a size limit may take a second pass. */
	for (int pass = 0; pass < 4 && !ret; pass++) {
		size_t before = n;

		db_prune_plan_release(&plan);
		ret = prune_pass(db, r, &st, &n, &plan);
		left = dry_run ? plan.bytes_after : db_disk_usage(db);
		if (dry_run || n == before || !r->max_bytes || left <= r->max_bytes)
			break;
	}
	if (r->max_bytes && left > r->max_bytes) {
		struct strbuf sb = STRBUF_INIT;

		strbuf_add_size(&sb, r->max_bytes);
		warning("'%s' stays above %s: the latest and current epochs are kept", db->path, sb.buf);
		strbuf_release(&sb);
	}
	printf("%s %zu epoch%s and %" PRIu64 " snapshot%s", dry_run ? "would remove" : "removed",
	       n, n == 1 ? "" : "s", st.binaries, st.binaries == 1 ? "" : "s");
	say_size(": ", left, " left\n");
	db_prune_plan_release(&plan);
	return ret;
}

static int cmd_gc(struct db *db, size_t temps, uint64_t temp_bytes)
{
	struct db_prune_stats st = { 0 };
	int r = collect_snapshots(db, &st);

	printf("%s %" PRIu64 " unused snapshot%s", dry_run ? "would remove" : "removed", st.binaries,
	       st.binaries == 1 ? "" : "s");
	say_size(" (", st.binary_bytes, ")");
	printf(" and %zu orphaned temporary file%s", temps, temps == 1 ? "" : "s");
	say_size(" (", temp_bytes, ")");
	if (st.unwind_tables) {
		printf("; %" PRIu64 " unused cached unwind table%s", st.unwind_tables,
		       st.unwind_tables == 1 ? "" : "s");
		say_size(" (", st.unwind_bytes, ")");
	}
	if (st.calc_files) {
		printf("; %" PRIu64 " unused cached analys%s", st.calc_files,
		       st.calc_files == 1 ? "is" : "es");
		say_size(" (", st.calc_bytes, ")");
	}
	printf("\n");
	return r;
}

/* ---- complete (for the shell completion) ---------------------------------------------- */

static void complete_epochs(struct db *db, bool labels_only)
{
	struct db_census c;

	if (db_census_take(db, &c))
		return;
	if (!labels_only && c.n)
		printf("latest\n");
	for (size_t i = 0; i < c.n; i++) {
		if (!labels_only)
			printf("%" PRIu32 "\n", c.epochs[i].seq);
		if (c.epochs[i].label)
			printf("%s\n", c.epochs[i].label);
	}
	db_census_release(&c);
}

static int complete_procedures(const char *epoch)
{
	static struct tool t;
	struct procprof_opts po = PROCPROF_OPTS_INIT;
	struct procprof pp;

	t.db_path = db_path;
	t.epoch = epoch;
	t.color = CLI_COLOR_NEVER;        /* words for a completion, never escapes */
	tool_init(&t);
	po.quiet = true;
	if (tool_open(&t) || procprof_build(&pp, &t.view, &po))
		return tool_finish(&t, -1);
	for (size_t i = 0; i < pp.n_rows; i++)
		if (pp.rows[i].proc)
			printf("%s\n", procprof_name(&pp, i));
	procprof_release(&pp);
	return tool_finish(&t, 0);
}

/* ---- main ------------------------------------------------------------------------- */

static int verb_args(int argc, char **argv, const struct cli_command *cmd)
{
	return cli_parse(argc, argv, cmd);
}

static struct db *open_db(unsigned flags)
{
	struct db *db = db_open(db_default_path(db_path), flags);

	if (!db && (flags & DB_WRITE))
		fprintf(stderr, "hint: a running dcpid removes epochs itself (--max-size, --max-age)\n");
	return db;
}

/* Runs a verb on the database opened with flags: its exit status. */
static int on_db(unsigned flags, int (*verb)(struct db *db))
{
	struct db *db = open_db(flags);
	bool partial;
	int r;

	if (!db)
		return 1;
	r = verb(db);
	partial = db_damage_partial(db, 0);
	db_close(db);
	return tool_exit_status(r, partial);
}

static int run_check(int argc, char **argv)
{
	const struct cli_option options[] = {
		OPT_DB(&db_path),
		OPT_BOOL(0, "quick", &quick, "do not read the binary snapshots"),
		OPT_JSON(&json),
		OPT_END()
	};
	const struct cli_command cmd = {
		.usage = "dcpidb [-d DIR] check [--quick] [--json]",
		.about = "Verifies every file of the database (checksums and structure) and names\n"
			 "what is damaged.  Exit status 0: sound; 1: damaged (or unreadable).",
		.options = options,
	};

	verb_args(argc, argv, &cmd);
	return on_db(DB_READ, cmd_check);
}

static int run_info(int argc, char **argv)
{
	const struct cli_option options[] = {
		OPT_DB(&db_path),
		OPT_JSON(&json),
		OPT_END()
	};
	const struct cli_command cmd = {
		.usage = "dcpidb [-d DIR] info [--json]",
		.about = "Lists the epochs with their sizes, the snapshots and any temporary files.",
		.options = options,
	};

	verb_args(argc, argv, &cmd);
	return on_db(DB_READ, cmd_info);
}

static int run_prune(int argc, char **argv)
{
	struct db_retention *r = &retention;
	double days = 0;
	uint64_t keep = 0;
	const struct cli_option options[] = {
		OPT_DB(&db_path),
		OPT_U64(0, "keep", &keep, "N", "keep the N latest epochs (of those --label selects)",
			1, UINT32_MAX, "number of epochs"),
		OPT_SIZE(0, "max-size", &r->max_bytes, "SIZE",
			 "remove the oldest epochs until the database fits in SIZE\n"
			 "(bytes, or with K, M, G, T: powers of 1024)"),
		OPT_DOUBLE(0, "older-than", &days, "DAYS", "remove epochs that ended more than DAYS ago",
			   0, "number of days"),
		OPT_STRING(0, "label", &r->label, "L", "only epochs labelled L (alone: all of them)"),
		OPT_BOOL('n', "dry-run", &dry_run, "say what would be removed, remove nothing"),
		OPT_END()
	};
	const struct cli_command cmd = {
		.usage = "dcpidb [-d DIR] prune [--keep N] [--max-size SIZE] [--older-than DAYS]\n"
			 "                       [--label L] [-n]",
		.about = "Removes epochs, oldest first, and then the snapshots no epoch uses.  The\n"
			 "latest and the current epoch always stay.",
		.options = options,
	};

	verb_args(argc, argv, &cmd);
	r->keep = (uint32_t)keep;
	r->max_age_ns = (int64_t)llround(days * NS_PER_DAY);
	if (db_retention_empty(r))
		cli_usage_error(&cmd, "prune needs --keep, --max-size, --older-than or --label");
	return on_db(dry_run ? DB_READ : DB_WRITE, cmd_prune);
}

static int run_gc(int argc, char **argv)
{
	const struct cli_option options[] = {
		OPT_DB(&db_path),
		OPT_BOOL('n', "dry-run", &dry_run, "say what would be removed, remove nothing"),
		OPT_END()
	};
	const struct cli_command cmd = {
		.usage = "dcpidb [-d DIR] gc [-n]",
		.about = "Removes the binary snapshots no epoch uses and the temporary files of\n"
			 "writers that stopped.",
		.options = options,
	};
	struct db_census c;
	struct db *db;
	int r;

	verb_args(argc, argv, &cmd);
	/* Count the temps first: opening for writing removes them. */
	if (!(db = open_db(DB_READ)))
		return 1;
	if (db_census_take(db, &c)) {
		db_close(db);
		return 1;
	}
	if (!dry_run) {
		db_close(db);
		if (!(db = open_db(DB_WRITE))) {
			db_census_release(&c);
			return 1;
		}
	}
	r = cmd_gc(db, c.n_temps, c.temp_bytes);
	db_census_release(&c);
	db_close(db);
	return r ? 1 : 0;
}

static int run_complete(int argc, char **argv)
{
	const char *epoch = NULL;
	const struct cli_option options[] = {
		OPT_DB(&db_path),
		OPT_EPOCH(&epoch),
		OPT_ARGUMENT("epochs|labels|procedures", "what to list"),
		OPT_END()
	};
	const struct cli_command cmd = {
		.usage = "dcpidb [-d DIR] complete [-E EPOCH] epochs|labels|procedures",
		.about = "Lists words for shell completion, one a line (quietly: nothing on an error).",
		.options = options,
		.min_args = 1,
		.max_args = 1,
	};
	int first = verb_args(argc, argv, &cmd);
	const char *what = argv[first];
	struct db *db;

	if (!strcmp(what, "procedures"))
		return complete_procedures(epoch) ? 1 : 0;
	if (strcmp(what, "epochs") && strcmp(what, "labels"))
		cli_usage_error(&cmd, NULL);
	if (!(db = db_open(db_default_path(db_path), DB_READ)))
		return 1;
	complete_epochs(db, !strcmp(what, "labels"));
	db_close(db);
	return 0;
}

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} verbs[] = {
	{ "check", run_check }, { "info", run_info }, { "prune", run_prune }, { "gc", run_gc },
	{ "complete", run_complete },
};

int main(int argc, char **argv)
{
	const struct cli_option options[] = {
		OPT_DB(&db_path),
		OPT_GROUP("Commands (dcpidb COMMAND --help says more):"),
		OPT_ARGUMENT("check", "verify every file, name what is damaged (exit 1 if any)"),
		OPT_ARGUMENT("info", "the epochs with their sizes, the snapshots"),
		OPT_ARGUMENT("prune", "remove old epochs (--keep, --max-size, --older-than, --label)"),
		OPT_ARGUMENT("gc", "remove unused snapshots and orphaned temporary files"),
		OPT_END()
	};
	const struct cli_command cmd = {
		.usage = "dcpidb [-d DIR] check|info|prune|gc [OPTIONS]",
		.about = "Checks and tends a profile database offline.",
		.options = options,
		.flags = CLI_STOP_AT_ARG,
		.min_args = 1,
		.max_args = -1,
	};
	char name[64];
	int first;

	cli_init(argc, argv);
	first = cli_parse(argc, argv, &cmd);
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		if (strcmp(argv[first], verbs[i].name))
			continue;
		/* getopt names argv[0] in its messages. */
		snprintf(name, sizeof(name), "dcpidb %s", verbs[i].name);
		argv[first] = name;
		return verbs[i].run(argc - first, argv + first);
	}
	cli_usage_error(&cmd, "unknown command");
}
