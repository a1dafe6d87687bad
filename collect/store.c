/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "collect/store.h"
#include "collect/kallsyms.h"
#include "core/die.h"
#include "core/hash.h"
#include "core/strbuf.h"
#include "core/timeutil.h"
#include "core/xalloc.h"
#include "db/symfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PERF_MAP_MAX (16u << 20)
#define KALLSYMS_INTERVAL_NS (60 * (int64_t)1000000000)
#define RETRY_MAX_NS (60 * (int64_t)1000000000)

void store_config_init(struct store_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->write_interval_ns = 60 * (int64_t)1000000000;
	cfg->write_budget = 4;
	cfg->max_entries = 4u << 20;
	cfg->kallsyms = true;
	cfg->perf_maps = true;
}

void store_init(struct store *s, struct db *db, struct procs *procs,
		const struct store_config *cfg, store_meta_fn fill_meta, void *ctx)
{
	memset(s, 0, sizeof(*s));
	s->db = db;
	s->procs = procs;
	s->cfg = *cfg;
	s->fill_meta = fill_meta;
	s->fill_ctx = ctx;
	epoch_meta_init(&s->meta);
	epoch_meta_init(&s->base);
	image_index_init(&s->index);
}

static void drop_tables(struct store *s)
{
	for (size_t i = 0; i < s->n; i++)
		u64map_release(&s->t[i].counts);
	free(s->t);
	s->t = NULL;
	s->n = s->alloc = 0;
	u64map_release(&s->lookup);
	s->entries = 0;
	s->dirty = 0;
}

void store_release(struct store *s)
{
	drop_tables(s);
	epoch_meta_release(&s->meta);
	epoch_meta_release(&s->base);
	image_index_release(&s->index);
	u64map_release(&s->kaddrs);
	free(s->kranges);
	memset(s, 0, sizeof(*s));
}

/* ---- epochs -------------------------------------------------------------- */

static void reset_epoch_state(struct store *s)
{
	drop_tables(s);
	image_index_release(&s->index);
	image_index_init(&s->index);
	s->index_dirty = false;
	memset(s->written, 0, sizeof(s->written));
	s->written_unknown = s->written_kernel = 0;
	u64map_clear(&s->kaddrs);
	s->kallsyms_stale = false;
	free(s->kranges);
	s->kranges = NULL;
	s->nkranges = 0;
	s->gen++;
}

/* Recomputes the samples on disk from the profiles' headers. */
static int recount(struct store *s)
{
	struct db_image_totals *v;
	size_t n;

	if (db_image_totals(s->db, s->seq, &v, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		for (unsigned ev = 0; ev < EVENT__COUNT; ev++) {
			s->written[ev] += v[i].samples[ev];
			if (!strcmp(v[i].key, "unknown"))
				s->written_unknown += v[i].samples[ev];
			else if (!strcmp(v[i].key, "kernel"))
				s->written_kernel += v[i].samples[ev];
		}
	}
	free(v);
	return 0;
}

/* Marks the images already in a continued epoch's index as indexed. */
static void mark_indexed(struct store *s)
{
	for (size_t i = 0; i < s->index.n; i++) {
		/* Interning may move the image array: index it afterwards. */
		uint32_t k = procs_intern(s->procs, &s->index.v[i]);

		procs_cimage(s->procs, k)->store_gen = s->gen;
	}
}

/*
 * The kernel addresses already sampled in a continued epoch: the kallsyms
 * subset rewritten later must still cover them.
 */
static void load_kernel_addresses(struct store *s)
{
	for (unsigned ev = 0; ev < EVENT__COUNT; ev++) {
		struct db_profile_id id;
		struct profile p = PROFILE_INIT;
		int r;

		db_profile_id_set(&id, "kernel", (enum dcpi_event)ev, false, 0);
		/* A corrupt profile (reported) is set aside by the next merge. */
		r = db_profile_load(s->db, s->seq, &id, &p);
		for (size_t i = 0; r == 0 && i < p.n; i++)
			u64map_slot(&s->kaddrs, p.v[i].offset);
		profile_release(&p);
	}
}

static int continue_epoch(struct store *s, uint32_t seq)
{
	s->seq = seq;
	if (db_meta_load(s->db, seq, &s->meta) || db_images_load(s->db, seq, &s->index) ||
	    recount(s))
		return -1;
	if (s->cfg.kallsyms)
		load_kernel_addresses(s);
	s->meta.end_ns = 0;
	/* Keep what earlier runs counted (lost, throttled, ...) as a base. */
	epoch_meta_release(&s->base);
	epoch_meta_init(&s->base);
	for (size_t i = 0; i < s->meta.n_counters; i++)
		epoch_meta_set_counter(&s->base, s->meta.counters[i].name,
				       s->meta.counters[i].value);
	mark_indexed(s);
	return 0;
}

static int create_epoch(struct store *s, const char *label, char **command)
{
	epoch_meta_release(&s->meta);
	epoch_meta_init(&s->meta);
	epoch_meta_release(&s->base);
	epoch_meta_init(&s->base);
	epoch_meta_fill_host(&s->meta);
	if (label)
		epoch_meta_set_label(&s->meta, label);
	if (command) {
		size_t n = 0;

		while (command[n])
			n++;
		s->meta.command = xcalloc(n + 1, sizeof(char *));
		for (size_t i = 0; i < n; i++)
			s->meta.command[i] = xstrdup(command[i]);
	}
	if (s->fill_meta)
		s->fill_meta(s->fill_ctx, &s->meta);
	if (db_epoch_create(s->db, &s->meta))
		return -1;
	s->seq = s->meta.seq;
	return 0;
}

static int store_meta(struct store *s);

int store_begin(struct store *s, const struct store_epoch_opts *o)
{
	reset_epoch_state(s);
	/* The first rewrite of the kallsyms subset waits its interval too (or a flush). */
	s->last_kallsyms = time_monotonic_ns();
	if (o->continue_seq) {
		if (continue_epoch(s, o->continue_seq))
			return -1;
		/* Reopened: the epoch has no end until this writer stops. */
		return store_meta(s);
	}
	return create_epoch(s, o->label, o->command);
}

/* ---- tables -------------------------------------------------------------- */

static uint64_t table_key(uint32_t image, unsigned event, bool per_pid, uint32_t pid)
{
	return ((uint64_t)image << 32) | ((uint64_t)event << 28) | ((uint64_t)per_pid << 27) |
	       (pid & 0x7ffffff);
}

static struct ptable *table_for(struct store *s, uint32_t image, unsigned event, bool per_pid,
				uint32_t pid)
{
	uint64_t *slot = u64map_slot(&s->lookup, table_key(image, event, per_pid, pid));
	struct ptable *t;

	if (*slot)
		return &s->t[*slot - 1];
	ALLOC_GROW(s->t, s->n + 1, s->alloc);
	t = &s->t[s->n++];
	memset(t, 0, sizeof(*t));
	t->image = image;
	t->event = (uint8_t)event;
	t->per_pid = per_pid;
	t->pid = pid;
	*slot = s->n;
	return t;
}

/* Puts a newly sampled image into the epoch's index (stored before its profiles). */
static void index_image(struct store *s, uint32_t image)
{
	struct cimage *ci = procs_cimage(s->procs, image);

	if (ci->store_gen == s->gen)
		return;
	ci->store_gen = s->gen;
	image_index_put(&s->index, &ci->img);
	s->index_dirty = true;
}

static void add_to(struct store *s, struct ptable *t, uint64_t offset, uint64_t count)
{
	size_t before = t->counts.size;
	uint64_t *c = u64map_slot(&t->counts, offset);

	*c += count;
	s->entries += t->counts.size - before;
	t->total += count;
	if (!t->dirty_since) {
		t->dirty_since = time_monotonic_ns();
		s->dirty++;
	}
}

void store_note_frame(struct store *s, uint32_t image, uint64_t offset)
{
	index_image(s, image);
	if (image == s->procs->kernel_image && s->cfg.kallsyms) {
		size_t before = s->kaddrs.size;

		/* A new address needs a new subset unless a saved symbol holds it. */
		u64map_slot(&s->kaddrs, offset);
		if (s->kaddrs.size != before && !kallsyms_covered(s->kranges, s->nkranges, offset))
			s->kallsyms_stale = true;
	}
}

void store_add(struct store *s, uint32_t image, unsigned event, uint32_t pid, uint64_t offset,
	       uint64_t count)
{
	struct ptable *t = table_for(s, image, event, false, 0);

	if (s->entries >= s->cfg.max_entries && !u64map_get(&t->counts, offset, &(uint64_t){ 0 })) {
		s->st.dropped += count;
		return;
	}
	store_note_frame(s, image, offset);
	add_to(s, t, offset, count);
	if (pid && procs_cimage(s->procs, image)->per_process)
		add_to(s, table_for(s, image, event, true, pid), offset, count);
}

/* ---- writing ------------------------------------------------------------- */

static void fill_counts(struct store *s)
{
	if (s->fill_meta)
		s->fill_meta(s->fill_ctx, &s->meta);
	for (size_t i = 0; i < s->meta.n_events; i++) {
		struct epoch_event *e = &s->meta.events[i];

		e->samples = s->written[e->event];
	}
	epoch_meta_set_counter(&s->meta, "unknown", s->written_unknown);
	epoch_meta_set_counter(&s->meta, "kernel", s->written_kernel);
	epoch_meta_set_counter(&s->meta, "dropped",
			       store_base_counter(s, "dropped") + s->st.dropped);
}

/* Gives the memory of a burst of writes back to the system (the daemon lives long). */
static void trim(void)
{
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

static int store_meta(struct store *s)
{
	fill_counts(s);
	if (db_meta_store(s->db, &s->meta))
		return -1;
	s->st.meta_writes++;
	s->last_meta = time_monotonic_ns();
	return 0;
}

static int store_index(struct store *s)
{
	if (!s->index_dirty)
		return 0;
	if (db_images_store(s->db, s->seq, &s->index))
		return -1;
	s->index_dirty = false;
	s->st.index_writes++;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Saves the kallsyms lines the epoch's kernel samples need (if there are
 * new ones).  Each rewrite reads /proc/kallsyms (0.06-0.1 s here): between
 * flushes at most one per KALLSYMS_INTERVAL_NS, however often profiles are
 * written (stacks bring new kernel addresses all the time); force (a flush,
 * the end of an epoch) writes what is pending.
 */
static void store_kallsyms(struct store *s, bool force)
{
	struct strbuf sb = STRBUF_INIT;
	struct kallsyms_range *ranges = NULL;
	int64_t now = time_monotonic_ns();
	uint64_t *addrs, k, v;
	size_t n = 0, nranges = 0;

	if (!s->kallsyms_stale ||
	    (!force && s->last_kallsyms && now - s->last_kallsyms < KALLSYMS_INTERVAL_NS))
		return;
	s->last_kallsyms = now;
	addrs = xcalloc(s->kaddrs.size + 1, sizeof(*addrs));
	for (size_t i = 0; u64map_next(&s->kaddrs, &i, &k, &v);)
		addrs[n++] = k;
	qsort(addrs, n, sizeof(*addrs), cmp_u64);
	/*
	 * Hidden addresses (not root) leave the kernel unnamed: nothing to
	 * save, and no point in trying again before new addresses come.
	 */
	s->kallsyms_stale = false;
	if (kallsyms_subset("/proc/kallsyms", addrs, n, &sb, &ranges, &nranges) == 0) {
		if (db_symfile_store(s->db, s->seq, KSYMS_FILE, sb.buf, sb.len)) {
			s->kallsyms_stale = true;
			free(ranges);
		} else {
			s->st.aux_writes++;
			free(s->kranges);
			s->kranges = ranges;
			s->nkranges = nranges;
		}
	}
	free(addrs);
	strbuf_release(&sb);
	trim();
}

/*
 * True if a perf map may be copied: a regular file of its own (one link, so
 * not a hard link to someone else's file; symlinks are not followed), not
 * too big, and while the process lives, owned by its user or root (not a
 * map planted by another user).
 */
static bool perf_map_trusted(const struct stat *st, uint32_t pid)
{
	char proc[32];
	struct stat ps;

	if (!S_ISREG(st->st_mode) || st->st_nlink != 1 || st->st_size > PERF_MAP_MAX)
		return false;
	snprintf(proc, sizeof(proc), "/proc/%" PRIu32, pid);
	if (!stat(proc, &ps))
		return st->st_uid == ps.st_uid || st->st_uid == 0;
	return true;
}

/* Copies a JIT's symbol map for an anon image of process pid. */
static void store_perf_map(struct store *s, uint32_t pid)
{
	struct strbuf sb = STRBUF_INIT;
	char path[64], name[64];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/tmp/perf-%" PRIu32 ".map", pid);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || !perf_map_trusted(&st, pid)) {
		close(fd);
		return;
	}
	strbuf_grow(&sb, (size_t)st.st_size + 1);
	/* A map that grew past the limit, or failed to read, is kept as far as it was read. */
	strbuf_read_fd(&sb, fd, PERF_MAP_MAX);
	close(fd);
	snprintf(name, sizeof(name), "perf-%" PRIu32 ".map", pid);
	if (!db_symfile_store(s->db, s->seq, name, sb.buf, sb.len))
		s->st.aux_writes++;
	strbuf_release(&sb);
}

static void build_profile(const struct ptable *t, struct profile *p)
{
	uint64_t off, cnt;

	profile_init(p);
	for (size_t i = 0; u64map_next(&t->counts, &i, &off, &cnt);)
		profile_add(p, off, cnt);
	profile_normalize(p);
}

/* Writes one table; on success it is clean and empty. */
static int write_table(struct store *s, struct ptable *t, int64_t now)
{
	struct cimage *ci = procs_cimage(s->procs, t->image);
	struct db_profile_id id;
	struct profile p;
	int r;

	if (db_profile_id_set(&id, ci->img.key, (enum dcpi_event)t->event, t->per_pid, t->pid))
		BUG("invalid image key '%s'", ci->img.key);
	build_profile(t, &p);
	r = db_profile_merge(s->db, s->seq, &id, &p);
	profile_release(&p);
	if (r) {
		s->st.write_failures++;
		t->failures++;
		t->retry_at = now + (t->failures < 6 ? ((int64_t)1000000000 << t->failures) :
						       RETRY_MAX_NS);
		return -1;
	}
	s->st.writes++;
	if (!t->per_pid) {
		s->written[t->event] += t->total;
		if (t->image == s->procs->unknown_image)
			s->written_unknown += t->total;
		else if (t->image == s->procs->kernel_image)
			s->written_kernel += t->total;
	}
	s->entries -= t->counts.size;
	u64map_clear(&t->counts);
	t->total = 0;
	t->dirty_since = 0;
	t->failures = 0;
	t->retry_at = 0;
	s->dirty--;
	if (!t->per_pid && t->image == s->procs->kernel_image)
		store_kallsyms(s, false);
	if (!t->per_pid && ci->img.kind == IMAGE_ANON && s->cfg.perf_maps) {
		uint32_t pid;

		if (sscanf(ci->img.key, "anon-%" SCNu32, &pid) == 1)
			store_perf_map(s, pid);
	}
	return 0;
}

/* The dirty table that has waited longest and may be written at now, or NULL. */
static struct ptable *next_due(struct store *s, int64_t now, bool all)
{
	struct ptable *best = NULL;

	for (size_t i = 0; i < s->n; i++) {
		struct ptable *t = &s->t[i];

		if (!t->dirty_since || (t->retry_at && t->retry_at > now && !all))
			continue;
		if (!all && now - t->dirty_since < s->cfg.write_interval_ns)
			continue;
		if (!best || t->dirty_since < best->dirty_since)
			best = t;
	}
	return best;
}

int store_sync_aux(struct store *s)
{
	if (!s->seq)
		return 0;
	if (store_index(s))
		return -1;
	store_kallsyms(s, false);
	return 0;
}

size_t store_tick(struct store *s, int64_t now)
{
	size_t written = 0;
	unsigned budget = s->cfg.write_budget;
	bool pressed = s->entries >= s->cfg.max_entries / 2;
	struct ptable *t;

	if (!s->seq || !s->dirty)
		return 0;
	/* Over half the memory cap: write oldest first, whatever their age. */
	if (pressed)
		budget = budget ? budget * 4 : 0;
	while ((!budget || written < budget) && (t = next_due(s, now, pressed))) {
		if (t->retry_at > now)
			break;
		if (store_index(s) || write_table(s, t, now))
			break;
		written++;
	}
	if (written)
		store_meta(s);
	return written;
}

int store_flush(struct store *s)
{
	int64_t now = time_monotonic_ns();
	int r = 0;

	if (!s->seq)
		return 0;
	if (store_index(s))
		return -1;
	for (size_t i = 0; i < s->n; i++)
		if (s->t[i].dirty_since && write_table(s, &s->t[i], now))
			r = -1;
	store_kallsyms(s, true);
	if (store_meta(s))
		r = -1;
	trim();
	return r;
}

int store_close(struct store *s)
{
	int r = store_flush(s);

	if (!s->seq)
		return r;
	s->meta.end_ns = time_now_ns();
	if (s->meta.end_ns < s->meta.start_ns)
		s->meta.end_ns = s->meta.start_ns;
	if (store_meta(s))
		r = -1;
	return r;
}

uint64_t store_base_counter(const struct store *s, const char *name)
{
	return epoch_meta_counter(&s->base, name);
}

size_t store_bytes(const struct store *s)
{
	size_t n = sizeof(*s) + s->alloc * sizeof(*s->t) + s->lookup.cap * 17 + s->kaddrs.cap * 17;

	for (size_t i = 0; i < s->n; i++)
		n += s->t[i].counts.cap * 17;
	for (size_t i = 0; i < s->index.n; i++)
		n += sizeof(s->index.v[i]) + strlen(s->index.v[i].path) + 1;
	return n;
}
