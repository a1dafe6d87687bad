/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dcpi-test-helper - exposes database internals to test scripts (git's
 * t/helper approach).
 *
 *   build DIR [FILE]       build a fixture database from a text description
 *   check DIR              read every file of every epoch; print one line per
 *                          profile ("SEQ KEY EVENT PID ENTRIES TOTAL"); exit 1
 *                          if anything is unreadable
 *   merge-loop DIR SEED    merge random increments forever (crash tests)
 *   read-loop DIR SECONDS  load every profile in a loop; exit 1 on any error
 *   encode-profile KEY EVENT < "OFFSET COUNT" lines > profile bytes
 *   synth DIR N PROFILES   add N synthetic epochs, one a day up to now (labelled
 *                          "even"/"odd" by number), each with PROFILES
 *                          profiles of 1000 offsets and an image index naming
 *                          one of N/50+1 binary snapshots (fake ELF files
 *                          holding their build-id note): retention tests
 *   dump DIR [EPOCH]       print an epoch (default latest) line by line:
 *                          "image KEY KIND BUILD-ID PATH" for each image, then
 *                          "sample KEY EVENT PID OFFSET COUNT" for each offset
 *                          of each profile (PID 0: all processes; hex offsets)
 *   paths DIR [EPOCH]      print an epoch's path profiles (db/paths.h): its totals
 *                          ("summary NAME VALUE" for each), then for each image
 *                          with one "paths KEY PATH" and its records, offsets hex:
 *                          "totals BURSTS INSNS DETAILED WINDOWS WINDOW_INSNS",
 *                          "block OFF BYTES INSNS COUNT WCOUNT",
 *                          "edge FROM TO|elsewhere COUNT",
 *                          "value OFF SAMPLES REG=VALUE:COUNT...",
 *                          "conflict LOAD STORE KIND COUNT", "stop OFF REASON
 *                          COUNT", "window B1 B2|elsewhere INSNS HERE NS"
 *   stacks DIR [EPOCH]     print an epoch's stack table, one line per sample:
 *                          "stack EVENT COUNT TGID TID COMM END KEY+0xOFF..."
 *                          (frames from the sampled one outwards)
 *   utable FILE [OUT]      build FILE's unwind table: print "fdes N rows N
 *                          unsupported N"; write the encoded table to OUT
 *
 * Fixture description (build), one directive a line, '#' comments:
 *   epoch [label=L] [start=ISO] [end=ISO] [host=H] [mhz=M] [model=TEXT]
 *         [cpu=VENDOR/FAMILY/MODEL]
 *   event NAME [used=NAME] [period=N] [unit=ns|events] [freq=HZ]
 *   counter NAME VALUE
 *   image KEY|auto path=PATH [kind=file] [buildid=HEX] [size=N] [mtime=NS]
 *         [dev=N] [ino=N]
 *   profile KEY EVENT [pid=N]
 *   OFFSET COUNT           (lines after profile; hex with 0x or decimal)
 *   stack EVENT COUNT TGID TID COMM END KEY+OFF...
 *                          a sampled stack (the format "stacks" prints;
 *                          frames from the sampled one outwards)
 *   values KEY             a value profile of image KEY (db/values.h)
 *   OFFSET SAMPLES REG=VALUE:COUNT...   (lines after values: exact hot lists)
 * A fixture never takes anything from the machine that builds it (what a
 * golden file shows must not depend on the host): an epoch is from host
 * "fixture", kernel "fixture", 2 CPUs, model "fixture CPU" at 1000 MHz, of an
 * unknown vendor (the generic processor model) unless it says otherwise;
 * cpu=AuthenticAMD/25/17 is a Zen 4 (the znver4 model), the family and model
 * as /proc/cpuinfo gives them.
 * Paths may use the escapes of docs/db-format.md (\n, \x20, ...).  Event
 * sample counts in the metadata are the sums of the profiles unless the
 * event line says samples=N.
 */
#include "config.h"
#include "core/cli.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/timeutil.h"
#include "core/utf8.h"
#include "core/xalloc.h"
#include "db/binaries.h"
#include "db/db.h"
#include "db/meta.h"
#include "db/paths.h"
#include "db/stacks.h"
#include "db/symfile.h"
#include "unwind/utable.h"
#include "db/values.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
	"usage: dcpi-test-helper build DIR [FILE]\n"
	"       dcpi-test-helper check DIR\n"
	"       dcpi-test-helper merge-loop DIR SEED\n"
	"       dcpi-test-helper read-loop DIR SECONDS\n"
	"       dcpi-test-helper encode-profile KEY EVENT\n"
	"       dcpi-test-helper synth DIR N PROFILES\n"
	"       dcpi-test-helper dump DIR [EPOCH]\n"
	"       dcpi-test-helper stacks DIR [EPOCH]\n"
	"       dcpi-test-helper utable FILE [OUT]\n"
	"       dcpi-test-helper symfile DIR EPOCH NAME\n"
	"       dcpi-test-helper symfile-store DIR EPOCH NAME <TEXT\n";

/* ---- build ------------------------------------------------------------ */

struct builder {
	struct db *db;
	uint32_t seq;            /* current epoch, 0 before the first */
	struct epoch_meta meta;
	bool explicit_samples[EVENT__COUNT];
	struct image_index images;
	struct db_profile_id prof;
	bool in_profile;
	struct profile p;
	struct stack_table stacks;
	char vkey[64];           /* a value profile being built (values KEY), or "" */
	struct values_profile vp;
	int lineno;
};

/* Returns the value of "name=value" among toks, or NULL. */
static const char *opt(char **toks, int n, const char *name)
{
	size_t len = strlen(name);

	for (int i = 0; i < n; i++)
		if (!strncmp(toks[i], name, len) && toks[i][len] == '=')
			return toks[i] + len + 1;
	return NULL;
}

static uint64_t num(struct builder *b, const char *s)
{
	uint64_t v;

	if (cli_parse_u64(s, &v))
		die("line %d: bad number '%s'", b->lineno, s);
	return v;
}

static char *unescape(struct builder *b, const char *s)
{
	struct strbuf sb = STRBUF_INIT;

	if (strbuf_add_unescaped(&sb, s, strlen(s)))
		die("line %d: bad escape in '%s'", b->lineno, s);
	return strbuf_detach(&sb, NULL);
}

static void flush_values(struct builder *b)
{
	if (!b->vkey[0])
		return;
	values_profile_sort(&b->vp);
	if (db_values_merge(b->db, b->seq, b->vkey, &b->vp))
		die("cannot store value profile");
	values_profile_release(&b->vp);
	b->vkey[0] = '\0';
}

/* "OFFSET SAMPLES REG=VALUE:COUNT...": one record, its lists exact. */
static void values_line(struct builder *b, char **t, int n)
{
	struct values_rec *r = values_profile_add(&b->vp, num(b, t[0]));

	r->samples = num(b, t[1]);
	for (int i = 2; i < n; i++) {
		char *eq = strchr(t[i], '='), *colon = eq ? strchr(eq, ':') : NULL;
		struct hotlist *h;
		int reg;

		if (!colon)
			die("line %d: bad value '%s' (REG=VALUE:COUNT)", b->lineno, t[i]);
		*eq = *colon = '\0';
		if ((reg = values_reg_lookup(t[i])) < 0)
			die("line %d: bad register '%s'", b->lineno, t[i]);
		h = &r->h[reg];
		if (h->n >= h->cap)
			die("line %d: too many values of %s", b->lineno, t[i]);
		h->e[h->n].value = num(b, eq + 1);
		h->e[h->n++].count = num(b, colon + 1);
		r->mask |= 1u << reg;
	}
}

static void flush_profile(struct builder *b)
{
	flush_values(b);
	if (!b->in_profile)
		return;
	profile_normalize(&b->p);
	if (db_profile_merge(b->db, b->seq, &b->prof, &b->p))
		die("cannot store profile");
	if (!b->prof.per_pid && !b->explicit_samples[b->prof.event]) {
		struct epoch_event *e = epoch_meta_add_event(&b->meta, b->prof.event);

		e->samples += profile_total(&b->p);
	}
	b->p.n = 0;
	b->in_profile = false;
}

static void finish_epoch(struct builder *b)
{
	flush_profile(b);
	if (!b->seq)
		return;
	if (b->stacks.n_samples && db_stacks_merge(b->db, b->seq, &b->stacks, true))
		die("cannot store the stacks of epoch %" PRIu32, b->seq);
	stack_table_clear(&b->stacks);
	if (db_images_store(b->db, b->seq, &b->images) || db_meta_store(b->db, &b->meta))
		die("cannot finish epoch %" PRIu32, b->seq);
	image_index_release(&b->images);
	epoch_meta_release(&b->meta);
	memset(b->explicit_samples, 0, sizeof(b->explicit_samples));
}

static void do_epoch(struct builder *b, char **t, int n)
{
	const char *v;
	int64_t end = 0;

	finish_epoch(b);
	epoch_meta_init(&b->meta);
	b->meta.host = xstrdup("fixture");
	b->meta.kernel = xstrdup("fixture");
	b->meta.cpu_model = xstrdup("fixture CPU");
	b->meta.cpu_mhz = 1000;
	b->meta.ncpus = 2;
	if ((v = opt(t, n, "cpu"))) {
		char vendor[64];

		if (sscanf(v, "%63[^/]/%d/%d", vendor, &b->meta.cpu_family,
			   &b->meta.cpu_model_id) != 3)
			die("line %d: bad cpu '%s' (VENDOR/FAMILY/MODEL)", b->lineno, v);
		b->meta.cpu_vendor = xstrdup(vendor);
	}
	if ((v = opt(t, n, "label")))
		epoch_meta_set_label(&b->meta, v);
	if ((v = opt(t, n, "start")) && time_parse_iso(v, &b->meta.start_ns))
		die("line %d: bad start time", b->lineno);
	if ((v = opt(t, n, "end")) && time_parse_iso(v, &end))
		die("line %d: bad end time", b->lineno);
	if ((v = opt(t, n, "host"))) {
		free(b->meta.host);
		b->meta.host = unescape(b, v);
	}
	if ((v = opt(t, n, "model"))) {
		free(b->meta.cpu_model);
		b->meta.cpu_model = unescape(b, v);
	}
	if ((v = opt(t, n, "mhz")))
		b->meta.cpu_mhz = strtod(v, NULL);
	if (db_epoch_create(b->db, &b->meta))
		die("cannot create epoch");
	b->meta.end_ns = end ? end : b->meta.start_ns + 60 * (int64_t)1000000000;
	b->seq = b->meta.seq;
}

static void do_event(struct builder *b, char **t, int n)
{
	int ev = n > 1 ? event_lookup(t[1]) : -1, used;
	struct epoch_event *e;
	const char *v;

	if (ev < 0 || !b->seq)
		die("line %d: bad event line", b->lineno);
	e = epoch_meta_add_event(&b->meta, (enum dcpi_event)ev);
	if ((v = opt(t, n, "used"))) {
		if ((used = event_lookup(v)) < 0)
			die("line %d: bad event '%s'", b->lineno, v);
		e->used = (enum dcpi_event)used;
	}
	e->period = (v = opt(t, n, "period")) ? num(b, v) : 1000000;
	v = opt(t, n, "unit");
	e->period_in_ns = v ? !strcmp(v, "ns") : e->used == EVENT_CLOCK;
	e->freq_hz = (v = opt(t, n, "freq")) ? num(b, v) : 0;
	if ((v = opt(t, n, "samples"))) {
		e->samples = num(b, v);
		b->explicit_samples[ev] = true;
	}
}

static void do_image(struct builder *b, char **t, int n)
{
	struct db_image img;
	const char *v;
	int kind;

	memset(&img, 0, sizeof(img));
	if (n < 2 || !b->seq || !(v = opt(t, n, "path")))
		die("line %d: bad image line", b->lineno);
	img.path = unescape(b, v);
	if ((v = opt(t, n, "buildid")) && image_parse_build_id(&img, v))
		die("line %d: bad build-id", b->lineno);
	img.size = (v = opt(t, n, "size")) ? num(b, v) : 0;
	img.mtime_ns = (v = opt(t, n, "mtime")) ? (int64_t)num(b, v) : 0;
	img.dev = (v = opt(t, n, "dev")) ? num(b, v) : 0;
	img.ino = (v = opt(t, n, "ino")) ? num(b, v) : 0;
	if ((v = opt(t, n, "kind"))) {
		if ((kind = image_kind_lookup(v)) < 0)
			die("line %d: bad kind", b->lineno);
		img.kind = (enum image_kind)kind;
	}
	if (strcmp(t[1], "auto")) {
		if (!image_key_valid(t[1]))
			die("line %d: bad key '%s'", b->lineno, t[1]);
		strcpy(img.key, t[1]);
	} else if (img.build_id_len) {
		image_key_from_build_id(img.key, img.build_id, img.build_id_len);
	} else {
		image_key_from_path(img.key, img.path, img.dev, img.ino);
	}
	image_index_put(&b->images, &img);
	printf("%s\n", img.key);
	free(img.path);
}

static void do_profile(struct builder *b, char **t, int n)
{
	const char *v = opt(t, n, "pid");
	int ev = n > 2 ? event_lookup(t[2]) : -1;

	flush_profile(b);
	if (ev < 0 || !b->seq)
		die("line %d: bad profile line", b->lineno);
	if (db_profile_id_set(&b->prof, t[1], (enum dcpi_event)ev, v != NULL,
			      v ? (uint32_t)num(b, v) : 0))
		die("line %d: bad profile key", b->lineno);
	b->in_profile = true;
}

static void do_stack(struct builder *b, char **t, int n)
{
	uint32_t frames[64], stack, thread;
	int ev = n > 1 ? event_lookup(t[1]) : -1, end = -1;

	if (ev < 0 || !b->seq || n < 8 || n - 7 > 64)
		die("line %d: bad stack line", b->lineno);
	for (int e = 0; e < STACK_END__COUNT; e++)
		if (!strcmp(t[6], stack_end_name((enum stack_end)e)))
			end = e;
	if (end < 0)
		die("line %d: bad stack end '%s'", b->lineno, t[6]);
	for (int i = 7; i < n; i++) {
		char *plus = strchr(t[i], '+');

		if (!plus)
			die("line %d: bad frame '%s'", b->lineno, t[i]);
		*plus = '\0';
		frames[i - 7] = stack_table_frame(&b->stacks, stack_table_image(&b->stacks, t[i]),
						  num(b, plus + 1));
	}
	stack = stack_table_stack(&b->stacks, frames, (size_t)(n - 7), (enum stack_end)end);
	thread = stack_table_thread(&b->stacks, (uint32_t)num(b, t[3]), (uint32_t)num(b, t[4]),
				    t[5]);
	stack_table_add(&b->stacks, stack, thread, (enum dcpi_event)ev, num(b, t[2]));
}

static void build_line(struct builder *b, char *line)
{
	char *t[72], *save = NULL, *tok;
	int n = 0;

	line[strcspn(line, "#\n")] = '\0';
	for (tok = strtok_r(line, " \t", &save); tok && n < 72; tok = strtok_r(NULL, " \t", &save))
		t[n++] = tok;
	if (!n)
		return;
	if (!strcmp(t[0], "epoch")) {
		do_epoch(b, t, n);
	} else if (!strcmp(t[0], "event")) {
		do_event(b, t, n);
	} else if (!strcmp(t[0], "counter") && n == 3 && b->seq) {
		epoch_meta_set_counter(&b->meta, t[1], num(b, t[2]));
	} else if (!strcmp(t[0], "image")) {
		do_image(b, t, n);
	} else if (!strcmp(t[0], "profile")) {
		do_profile(b, t, n);
	} else if (!strcmp(t[0], "stack")) {
		flush_profile(b);
		do_stack(b, t, n);
	} else if (!strcmp(t[0], "values") && n == 2 && b->seq) {
		flush_profile(b);
		snprintf(b->vkey, sizeof(b->vkey), "%s", t[1]);
	} else if (b->vkey[0] && n >= 2) {
		values_line(b, t, n);
	} else if (b->in_profile && n == 2) {
		profile_add(&b->p, num(b, t[0]), num(b, t[1]));
	} else {
		die("line %d: cannot parse '%s'", b->lineno, t[0]);
	}
}

static int cmd_build(const char *dir, const char *file)
{
	struct builder b;
	FILE *in = file ? fopen(file, "r") : stdin;
	char *line = NULL;
	size_t cap = 0;

	if (!in)
		die_errno("cannot open '%s'", file);
	memset(&b, 0, sizeof(b));
	stack_table_init(&b.stacks);
	if (!(b.db = db_open(dir, DB_CREATE | DB_NOSYNC)))
		return 1;
	while (getline(&line, &cap, in) > 0) {
		b.lineno++;
		build_line(&b, line);
	}
	finish_epoch(&b);
	free(line);
	profile_release(&b.p);
	stack_table_release(&b.stacks);
	db_close(b.db);
	if (file)
		fclose(in);
	return 0;
}

/* ---- check ------------------------------------------------------------ */

static int cmd_check(const char *dir)
{
	struct db *db = db_open(dir, DB_READ);
	struct db_epoch_list epochs;
	int bad = 0;

	if (!db)
		return 1;
	if (db_epochs_list(db, &epochs)) {
		db_close(db);
		return 1;
	}
	for (size_t i = 0; i < epochs.n; i++) {
		struct image_index idx;
		struct db_profile_id *ids;
		size_t n;
		uint32_t seq = epochs.v[i].seq;

		bad |= !epochs.v[i].meta_ok;
		bad |= db_images_load(db, seq, &idx) != 0;
		image_index_release(&idx);
		if (db_profiles_list(db, seq, &ids, &n)) {
			bad = 1;
			continue;
		}
		for (size_t j = 0; j < n; j++) {
			struct profile p = PROFILE_INIT;

			if (db_profile_load(db, seq, &ids[j], &p)) {
				bad = 1;
				continue;
			}
			printf("%" PRIu32 " %s %s %" PRIu32 " %zu %" PRIu64 "\n", seq, ids[j].key,
			       event_name(ids[j].event), ids[j].pid, p.n, profile_total(&p));
			profile_release(&p);
		}
		free(ids);
	}
	db_epoch_list_release(&epochs);
	db_close(db);
	return bad;
}

/* ---- merge-loop / read-loop (crash and concurrency tests) -------------- */

static int cmd_merge_loop(const char *dir, const char *seed_s)
{
	struct db *db = db_open(dir, DB_CREATE | DB_WAIT);
	uint32_t seq;
	unsigned seed = (unsigned)strtoul(seed_s, NULL, 10);
	static const char *const keys[] = { "aaaa", "bbbb", "cccc" };

	if (!db)
		return 1;
	if (db_epoch_current(db, &seq) || !seq) {
		struct epoch_meta m;

		epoch_meta_init(&m);
		epoch_meta_fill_host(&m);
		if (db_epoch_create(db, &m))
			return 1;
		seq = m.seq;
		epoch_meta_release(&m);
	}
	srand(seed);
	for (;;) {
		struct profile p = PROFILE_INIT;
		struct db_profile_id id;
		int n = 1 + rand() % 2000;

		for (int i = 0; i < n; i++)
			profile_add(&p, (uint64_t)(rand() % 100000), 1 + (uint64_t)(rand() % 5));
		profile_normalize(&p);
		db_profile_id_set(&id, keys[rand() % 3], EVENT_CYCLES, false, 0);
		if (db_profile_merge(db, seq, &id, &p))
			return 1;
		profile_release(&p);
	}
}

static int cmd_read_loop(const char *dir, const char *secs)
{
	struct db *db = db_open(dir, DB_READ);
	int64_t until = time_monotonic_ns() + (int64_t)atoi(secs) * 1000000000;
	unsigned long loads = 0;

	if (!db)
		return 1;
	while (time_monotonic_ns() < until) {
		uint32_t seq;
		struct db_profile_id *ids;
		size_t n;

		if (db_epoch_resolve(db, "latest", &seq) || db_profiles_list(db, seq, &ids, &n))
			return 1;
		for (size_t i = 0; i < n; i++) {
			struct profile p = PROFILE_INIT;

			if (db_profile_load(db, seq, &ids[i], &p) < 0)
				return 1;
			profile_release(&p);
			loads++;
		}
		free(ids);
	}
	printf("%lu loads\n", loads);
	db_close(db);
	return 0;
}

static int cmd_encode(const char *key, const char *event)
{
	struct profile p = PROFILE_INIT;
	struct profile_header h;
	struct strbuf out = STRBUF_INIT;
	unsigned long long off, cnt;
	int ev = event_lookup(event);

	if (ev < 0 || !image_key_valid(key))
		die("bad key or event");
	memset(&h, 0, sizeof(h));
	strcpy(h.key, key);
	h.event = (enum dcpi_event)ev;
	while (scanf("%lli %lli", &off, &cnt) == 2)
		profile_add(&p, off, cnt);
	profile_normalize(&p);
	profile_encode(&p, &h, &out);
	fwrite(out.buf, 1, out.len, stdout);
	strbuf_release(&out);
	profile_release(&p);
	return 0;
}

/* ---- synth ------------------------------------------------------------ */

/* A fake executable of 64 KiB holding the GNU build-id note of id. */
static void fake_binary(struct strbuf *out, const uint8_t *id, unsigned len)
{
	uint32_t note[3] = { 4, len, 3 };

	strbuf_reset(out);
	strbuf_add(out, "\177ELF", 4);
	while (out->len < 4096)
		strbuf_addch(out, 0);
	strbuf_add(out, note, sizeof(note));
	strbuf_add(out, "GNU", 4);
	strbuf_add(out, id, len);
	while (out->len < 65536)
		strbuf_addch(out, (char)(out->len * 7));
}

static void synth_epoch(struct db *db, int64_t start, unsigned profiles, unsigned snap,
			struct strbuf *bin)
{
	struct image_index idx = IMAGE_INDEX_INIT;
	struct db_image img;
	struct strbuf hex = STRBUF_INIT;
	struct epoch_meta m;
	uint64_t total = 0;

	epoch_meta_init(&m);
	epoch_meta_fill_host(&m);
	m.start_ns = start;
	if (db_epoch_create(db, &m))
		die("cannot create an epoch");
	epoch_meta_set_label(&m, m.seq % 2 ? "odd" : "even");
	memset(&img, 0, sizeof(img));
	img.kind = IMAGE_FILE;
	img.path = "/usr/bin/synthetic";
	img.build_id_len = 20;
	memset(img.build_id, 0, sizeof(img.build_id));
	img.build_id[0] = 0x5e;
	img.build_id[19] = (uint8_t)snap;
	img.build_id[18] = (uint8_t)(snap >> 8);
	image_key_from_build_id(img.key, img.build_id, img.build_id_len);
	image_index_put(&idx, &img);
	strbuf_add_build_id(&hex, &img);
	if (!db_binary_exists(db, hex.buf)) {
		fake_binary(bin, img.build_id, img.build_id_len);
		if (db_binary_store(db, hex.buf, bin->buf, bin->len))
			die("cannot store a snapshot");
	}
	if (db_images_store(db, m.seq, &idx))
		die("cannot store an image index");
	for (unsigned k = 0; k < profiles; k++) {
		struct profile p = PROFILE_INIT;
		struct db_profile_id id;

		for (uint64_t o = 0; o < 1000; o++)
			profile_add(&p, o * 16 + k, 1 + (o * 31 + m.seq) % 7);
		profile_normalize(&p);
		db_profile_id_set(&id, img.key, EVENT_CYCLES, k > 0, k);
		if (db_profile_store(db, m.seq, &id, &p))
			die("cannot store a profile");
		if (!k)
			total += profile_total(&p);
		profile_release(&p);
	}
	epoch_meta_add_event(&m, EVENT_CYCLES)->samples = total;
	m.end_ns = start + 86399 * (int64_t)1000000000;
	if (db_meta_store(db, &m))
		die("cannot store an epoch's meta");
	epoch_meta_release(&m);
	image_index_release(&idx);
	strbuf_release(&hex);
}

static int cmd_synth(const char *dir, const char *n_s, const char *prof_s)
{
	struct db *db = db_open(dir, DB_CREATE | DB_NOSYNC);
	const int64_t day = 86400 * (int64_t)1000000000;
	unsigned n = (unsigned)strtoul(n_s, NULL, 10), profiles = (unsigned)strtoul(prof_s, NULL, 10);
	int64_t now = time_now_ns();
	struct strbuf bin = STRBUF_INIT;

	if (!db)
		return 1;
	for (unsigned i = 0; i < n; i++)
		synth_epoch(db, now - (int64_t)(n - i) * day, profiles ? profiles : 1, i / 50, &bin);
	strbuf_release(&bin);
	db_close(db);
	return 0;
}

/* ---- dump ------------------------------------------------------------- */

static int cmd_dump(const char *dir, const char *epoch)
{
	struct db *db = db_open(dir, DB_READ);
	struct image_index idx;
	struct db_profile_id *ids;
	size_t n;
	uint32_t seq;
	int bad = 0;

	if (!db || db_epoch_resolve(db, epoch, &seq) || db_images_load(db, seq, &idx))
		return 1;
	for (size_t i = 0; i < idx.n; i++) {
		struct strbuf sb = STRBUF_INIT;

		strbuf_add_build_id(&sb, &idx.v[i]);
		printf("image %s %s %s %s\n", idx.v[i].key, image_kind_name(idx.v[i].kind),
		       sb.len ? sb.buf : "-", idx.v[i].path);
		strbuf_release(&sb);
	}
	image_index_release(&idx);
	if (db_profiles_list(db, seq, &ids, &n))
		return 1;
	for (size_t j = 0; j < n; j++) {
		struct profile p = PROFILE_INIT;

		if (db_profile_load(db, seq, &ids[j], &p)) {
			bad = 1;
			continue;
		}
		for (size_t k = 0; k < p.n; k++)
			printf("sample %s %s %" PRIu32 " 0x%" PRIx64 " %" PRIu64 "\n", ids[j].key,
			       event_name(ids[j].event), ids[j].pid, p.v[k].offset, p.v[k].count);
		profile_release(&p);
	}
	free(ids);
	db_close(db);
	return bad;
}

/* ---- path profiles ---------------------------------------------------------- */

static void print_offset(uint64_t v)
{
	if (v == PATHS_ELSEWHERE)
		printf(" elsewhere");
	else
		printf(" 0x%" PRIx64, v);
}

static void print_paths(const struct paths_profile *p)
{
	printf("totals %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", p->bursts,
	       p->insns, p->detailed, p->windows, p->window_insns);
	for (size_t i = 0; i < p->n_blocks; i++)
		printf("block 0x%" PRIx64 " %" PRIu32 " %" PRIu32 " %" PRIu64 " %" PRIu64 "\n",
		       p->blocks[i].offset, p->blocks[i].bytes, p->blocks[i].insns, p->blocks[i].count,
		       p->blocks[i].wcount);
	for (size_t i = 0; i < p->n_edges; i++) {
		printf("edge 0x%" PRIx64, p->edges[i].from);
		print_offset(p->edges[i].to);
		printf(" %" PRIu64 "\n", p->edges[i].count);
	}
	for (size_t i = 0; i < p->values.n; i++) {
		const struct values_rec *r = &p->values.v[i];

		printf("value 0x%" PRIx64 " %" PRIu64, r->offset, r->samples);
		for (unsigned k = 0; k < VALUES_NREGS; k++)
			for (size_t j = 0; (r->mask >> k & 1) && j < r->h[k].n; j++)
				printf(" %s=0x%" PRIx64 ":%.0f", values_reg_name(k), r->h[k].e[j].value,
				       hotlist_estimate(&r->h[k], j));
		printf("\n");
	}
	for (size_t i = 0; i < p->n_conflicts; i++)
		printf("conflict 0x%" PRIx64 " 0x%" PRIx64 " %s %" PRIu64 "\n", p->conflicts[i].load,
		       p->conflicts[i].store, paths_conflict_name(p->conflicts[i].kind),
		       p->conflicts[i].count);
	for (size_t i = 0; i < p->n_stops; i++)
		printf("stop 0x%" PRIx64 " %s %" PRIu64 "\n", p->stops[i].offset,
		       paths_end_name(p->stops[i].reason), p->stops[i].count);
	for (size_t i = 0; i < p->n_win; i++) {
		printf("window 0x%" PRIx64, p->win[i].b1);
		print_offset(p->win[i].b2);
		printf(" %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", p->win[i].insns, p->win[i].here,
		       p->win[i].ns);
	}
}

static void print_summary(const struct epoch_meta *m)
{
	for (size_t i = 0; i < m->n_counters; i++)
		if (!strncmp(m->counters[i].name, "paths_", 6))
			printf("summary %s %" PRIu64 "\n", m->counters[i].name + 6, m->counters[i].value);
}

static int cmd_paths(const char *dir, const char *epoch)
{
	struct db *db = db_open(dir, DB_READ);
	struct image_index idx;
	struct epoch_meta m;
	uint32_t seq;
	int bad = 0;

	if (!db || db_epoch_resolve(db, epoch, &seq) || db_images_load(db, seq, &idx))
		return 1;
	epoch_meta_init(&m);
	if (db_meta_load(db, seq, &m))
		bad = 1;
	print_summary(&m);
	epoch_meta_release(&m);
	for (size_t i = 0; i < idx.n; i++) {
		struct paths_profile p;
		int r;

		paths_profile_init(&p);
		if ((r = db_paths_load(db, seq, idx.v[i].key, &p)) < 0)
			bad = 1;
		if (!r) {
			printf("paths %s %s\n", idx.v[i].key, idx.v[i].path);
			print_paths(&p);
		}
		paths_profile_release(&p);
	}
	image_index_release(&idx);
	db_close(db);
	return bad;
}

/* ---- stacks, unwind tables ------------------------------------------------ */

static int cmd_stacks(const char *dir, const char *epoch)
{
	struct db *db = db_open(dir, DB_READ);
	struct stack_table t;
	uint32_t seq;
	int r;

	if (!db || db_epoch_resolve(db, epoch, &seq))
		return 1;
	if ((r = db_stacks_load(db, seq, &t)) != 0) {
		db_close(db);
		return 1;
	}
	for (size_t i = 0; i < t.n_samples; i++) {
		const struct stack_sample *s = &t.samples[i];
		const struct stack_thread *th = &t.threads[s->thread];
		const uint32_t *f = stack_table_frames(&t, s->stack);

		printf("stack %s %" PRIu64 " %" PRIu32 " %" PRIu32 " %s %s", event_name(s->event),
		       s->count, th->tgid, th->tid, t.comms[th->comm][0] ? t.comms[th->comm] : "-",
		       stack_end_name(t.stacks[s->stack].end));
		for (uint32_t k = 0; k < t.stacks[s->stack].depth; k++)
			printf(" %s+0x%" PRIx64, t.images[t.frames[f[k]].image], t.frames[f[k]].offset);
		printf("\n");
	}
	stack_table_release(&t);
	db_close(db);
	return 0;
}

static int cmd_utable(const char *file, const char *out)
{
	struct strbuf sb = STRBUF_INIT, enc = STRBUF_INIT;
	struct utable t;
	const char *why;
	FILE *f = fopen(file, "rb");
	char buf[65536];
	size_t n;

	if (!f)
		die_errno("cannot open '%s'", file);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, n);
	fclose(f);
	if (utable_build((const uint8_t *)sb.buf, sb.len, &t, &why))
		die("%s: %s", file, why);
	printf("fdes %" PRIu32 " rows %zu unsupported %" PRIu32 "\n", t.fdes, t.n, t.unsupported);
	if (out) {
		utable_encode(&t, &enc);
		if (!(f = fopen(out, "wb")) || fwrite(enc.buf, 1, enc.len, f) != enc.len || fclose(f))
			die_errno("cannot write '%s'", out);
	}
	utable_release(&t);
	strbuf_release(&sb);
	strbuf_release(&enc);
	return 0;
}

/* Prints the text of symbol file name (kallsyms, perf-PID.map) of an epoch. */
static int cmd_symfile(const char *dir, const char *epoch, const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	struct db *db = db_open(dir, DB_READ);
	uint32_t seq;
	int r;

	if (!db || db_epoch_resolve(db, epoch, &seq))
		return 1;
	r = db_symfile_load(db, seq, name, &sb);
	if (r < 0 || r == DB_SYMFILE_ABSENT)
		return r < 0 ? 1 : (errorf("no %s in epoch %s", name, epoch), 1);
	fwrite(sb.buf, 1, sb.len, stdout);
	strbuf_release(&sb);
	db_close(db);
	return 0;
}

/* Stores standard input as symbol file name of an epoch, in its container. */
static int cmd_symfile_store(const char *dir, const char *epoch, const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	struct db *db = db_open(dir, DB_WRITE);
	char buf[65536];
	uint32_t seq;
	size_t n;
	int r;

	if (!db || db_epoch_resolve(db, epoch, &seq) || symfile_kind_for_name(name) < 0)
		return 1;
	while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0)
		strbuf_add(&sb, buf, n);
	r = db_symfile_store(db, seq, name, sb.buf, sb.len);
	strbuf_release(&sb);
	db_close(db);
	return r ? 1 : 0;
}

int main(int argc, char **argv)
{
	cli_init(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "--help"))
		cli_usage(usage, 0);
	if (argc >= 3 && !strcmp(argv[1], "build"))
		return cmd_build(argv[2], argc > 3 ? argv[3] : NULL);
	if (argc == 3 && !strcmp(argv[1], "check"))
		return cmd_check(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "merge-loop"))
		return cmd_merge_loop(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "read-loop"))
		return cmd_read_loop(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "encode-profile"))
		return cmd_encode(argv[2], argv[3]);
	if (argc == 5 && !strcmp(argv[1], "synth"))
		return cmd_synth(argv[2], argv[3], argv[4]);
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "dump"))
		return cmd_dump(argv[2], argc == 4 ? argv[3] : NULL);
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "paths"))
		return cmd_paths(argv[2], argc == 4 ? argv[3] : "latest");
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "stacks"))
		return cmd_stacks(argv[2], argc == 4 ? argv[3] : NULL);
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "utable"))
		return cmd_utable(argv[2], argc == 4 ? argv[3] : NULL);
	if (argc == 5 && !strcmp(argv[1], "symfile"))
		return cmd_symfile(argv[2], argv[3], argv[4]);
	if (argc == 5 && !strcmp(argv[1], "symfile-store"))
		return cmd_symfile_store(argv[2], argv[3], argv[4]);
	cli_usage(usage, 1);
}
