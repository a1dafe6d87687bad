/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/collector.c - the collector's life (set-up, epochs, ticks, the
 * end) and the sample path: records in time order to the side-band and the
 * per-CPU hashes, evictions resolved into the store.  Options are in
 * options.c, the events and rings in events.c, calibration in
 * calibrate.c, the reports in status.c.
 */
#include "config.h"
#include "collect/collector.h"
#include "collect/calib.h"
#include "collect/collector-int.h"
#include "collect/order.h"
#include "collect/perf.h"
#include "collect/perfrec.h"
#include "collect/procs.h"
#include "collect/emu-worker.h"
#include "collect/unwind-worker.h"
#include "core/cli.h"
#include "core/die.h"
#include "core/hash.h"
#include "core/strbuf.h"
#include "core/timeutil.h"
#include "core/xalloc.h"

#include <asm/perf_regs.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

static void consume(void *ctx, const struct shash_entry *v, size_t n);
static void fill_meta(void *ctx, struct epoch_meta *m);

/* The event whose samples give values: the time event, else the first. */
static size_t values_event(const struct collector *c)
{
	int t = collector_time_event(c);

	return t >= 0 ? (size_t)t : 0;
}

/*
 * --values: every event records the user registers (one sample format per
 * ring).
 */
static void setup_values(struct collector *c)
{
	if (!c->opt.values)
		return;
	c->fmt.sample_type |= PERF_SAMPLE_REGS_USER;
	c->fmt.regs_user |= CVALUES_PERF_REGS;
	c->values_ev = values_event(c);
	c->values = XNEW(struct cvalues);
	cvalues_init(c->values, c->opt.values_bytes, c->rng);
}

/*
 * --bursts: budgeted bursts of sampled threads (not offline): emulated,
 * their worker forked now (before the hash tables exist, as the unwinding
 * worker is), with the samples' registers for the windows; or single steps.
 */
static void setup_bursts(struct collector *c)
{
	int t;

	if (!(c->opt.burst_budget > 0) || c->offline)
		return;
	if (c->opt.burst_step) {
		c->bursts = XNEW(struct bursts);
		bursts_init(c->bursts, c->opt.burst_budget, BURST_DEFAULT_STEPS, c->opt.pid);
		return;
	}
	/* Its workers: forked, or the dcpi-emulate service's (--emulate-socket). */
	emu_worker_configure(&(struct emu_worker_opts){ c->opt.emulate_socket, NULL, NULL, false, -1 });
	if (!(c->emb = emburst_new(c->opt.burst_budget, c->opt.burst_limit, c->opt.pid, c->rng)))
		return;
	if (c->opt.burst_deadline_ms)
		c->emb->deadline_ns = (int64_t)c->opt.burst_deadline_ms * 1000000;
	c->fmt.sample_type |= PERF_SAMPLE_REGS_USER;
	c->fmt.regs_user |= CVALUES_PERF_REGS | 1ull << PERF_REG_X86_IP;
	c->values_ev = values_event(c);
	if ((t = collector_time_event(c)) >= 0 && c->ev[t].spec.time)
		emburst_set_period(c->emb, c->ev[t].mean);
}

/*
 * Whose values --values and --bursts record (collect/whose.h): the users
 * given, else dcpirun's invoker (dcpid: nobody's, said once).  Offline
 * collectors' records come from no real process: no filter.
 */
static void setup_whose(struct collector *c)
{
	/* Files holding values: the writer's alone unless --values-mode opens them. */
	db_set_values_mode(c->db, c->opt.values_mode);
	if ((!c->opt.values && !(c->opt.burst_budget > 0)) || c->offline)
		return;
	c->whose = XNEW(struct whose);
	whose_init(c->whose);
	if (c->opt.values_users)
		whose_parse(c->whose, c->opt.values_users);
	else if (c->opt.pid > 0)
		whose_add(c->whose, getuid());
	if (whose_none(c->whose))
		warning("--values and --bursts record the registers of no process: --values-users "
			"names whose (see dcpid(8))");
}

static void discard(void *ctx, const struct shash_entry *v, size_t n)
{
	(void)ctx, (void)v, (void)n;
}

/* Everything but the perf events. */
static struct collector *collector_alloc(const struct collect_options *o, struct db *db)
{
	struct collector *c = XNEW(struct collector);

	c->opt = *o;
	c->db = db;
	c->rng = hash_u64((uint64_t)time_now_ns() ^ ((uint64_t)getpid() << 32)) | 1;
	c->time_ev = -1;
	c->fmt.sample_type = PERF_COLLECT_SAMPLE_TYPE;
	order_init(&c->order);
	procs_init(&c->procs);
	c->procs.per_process = o->per_process;
	c->procs.n_per_process = o->n_per_process;
	c->procs.lazy_scan = true;
	store_init(&c->store, db, &c->procs, &o->store, fill_meta, c);
	return c;
}

/* -g: the recorder of stacks, and rings that can hold their copies. */
static void setup_callgraph(struct collector *c, bool offline)
{
	struct perf_event_attr attr;

	if (c->opt.callgraph.mode == CALLGRAPH_NONE)
		return;
	/*
	 * A process tree's samples can wait in its rings for the tables they
	 * need; a whole machine's cannot (they would be lost): the daemon's go
	 * on while tables are made.
	 */
	c->cg = callchain_new(&c->opt.callgraph, &c->procs, &c->store, offline,
			      c->opt.pid >= 0 ? (int64_t)UNWIND_WORKER_TIMEOUT_MS * 1000000 : 0);
	if (c->opt.callgraph.mode == CALLGRAPH_DWARF && !c->opt.ring_pages_given)
		c->opt.ring_pages = c->opt.pid >= 0 ? CALLGRAPH_DWARF_RING_PAGES :
						      CALLGRAPH_DWARF_RING_PAGES_SYSTEM;
	/* One sample format per ring: the stacks' fields join those of --values. */
	memset(&attr, 0, sizeof(attr));
	attr.sample_type = c->fmt.sample_type;
	attr.sample_regs_user = c->fmt.regs_user;
	callchain_attr(c->cg, &attr);
	c->fmt.sample_type = attr.sample_type;
	c->fmt.regs_user = attr.sample_regs_user;
}

static void setup_cpus(struct collector *c, const int *cpus, size_t n)
{
	const struct collect_options *o = &c->opt;

	c->ncpu = n;
	c->cpu = xcalloc(n, sizeof(*c->cpu));
	for (size_t k = 0; k < n; k++) {
		struct ccpu *cc = &c->cpu[k];

		cc->cpu = cpus ? cpus[k] : (int)k;
		cc->ring.fd = -1;
		shash_init(&cc->hash, o->hash, o->hash_bytes, o->overflow_entries, consume, c);
		if (o->hash_compare) {
			/* The other policy, same memory, same samples: statistics only. */
			cc->shadow = XNEW(struct shash);
			shash_init(cc->shadow, o->hash == SHASH_RR4 ? SHASH_STF6 : SHASH_RR4,
				   o->hash_bytes, o->overflow_entries, discard, NULL);
		}
	}
	c->started = c->window_start = time_monotonic_ns();
}

struct collector *collector_new(const struct collect_options *o, struct db *db)
{
	struct collector *c = collector_alloc(o, db);
	size_t n;
	int *cpus;

	if (collector_choose_events(c) || perf_online_cpus(&cpus, &n)) {
		collector_free(c);
		return NULL;
	}
	setup_values(c);
	setup_bursts(c);
	setup_whose(c);
	/*
	 * The unwinding worker is forked before the hash tables exist: every
	 * page this process has at a fork faults at its next write (copy on
	 * write), and the tables are written all the time.
	 */
	setup_callgraph(c, false);
	setup_cpus(c, cpus, n);
	free(cpus);
	if (collector_open_events(c)) {
		collector_free(c);
		return NULL;
	}
	return c;
}

struct collector *collector_new_offline(const struct collect_options *o, struct db *db,
					size_t ncpu)
{
	struct collector *c = collector_alloc(o, db);

	c->offline = true;
	for (size_t i = 0; i < o->n_events; i++) {
		struct cevent *e = &c->ev[c->n_ev++];

		e->spec.event = e->spec.used = o->events[i];
		e->spec.time = event_is_time(o->events[i]);
		collector_set_period(e, o);
		*u64map_slot(&c->id_event, i + 1) = c->n_ev;
	}
	setup_values(c);
	setup_cpus(c, NULL, ncpu);
	setup_callgraph(c, true);
	return c;
}

void collector_feed(struct collector *c, size_t k, const void *rec, size_t len)
{
	if (k >= c->ncpu)
		BUG("collector_feed: no CPU %zu", k);
	order_push(&c->order, (int)k, perf_rec_time(rec, len), rec, len);
}

void collector_free(struct collector *c)
{
	if (!c)
		return;
	for (size_t k = 0; k < c->ncpu; k++) {
		collector_close_cpu(&c->cpu[k], c->n_ev);
		shash_release(&c->cpu[k].hash);
		if (c->cpu[k].shadow) {
			shash_release(c->cpu[k].shadow);
			free(c->cpu[k].shadow);
		}
	}
	free(c->cpu);
	u64map_release(&c->id_event);
	order_release(&c->order);
	callchain_free(c->cg);
	store_release(&c->store);
	procs_release(&c->procs);
	if (c->values) {
		cvalues_release(c->values);
		free(c->values);
	}
	if (c->bursts) {
		bursts_release(c->bursts);
		free(c->bursts);
	}
	emburst_free(c->emb);
	if (c->whose) {
		whose_release(c->whose);
		free(c->whose);
	}
	free(c);
}

/* ---- epochs ------------------------------------------------------------------ */

/*
 * The time-enabled and time-running totals of event i, whose ratio is the
 * fraction of the time the event was counted (multiplexing).  System-wide,
 * each CPU's event is enabled all the time: sum both.  For a process tree,
 * each CPU's event is "enabled" whenever the tree runs anywhere but runs
 * only while it is on that CPU: the enabled time is one CPU's, the running
 * time the sum.
 */
static void read_times(struct collector *c, size_t i, uint64_t *enabled, uint64_t *running)
{
	bool tree = c->opt.pid >= 0;

	*enabled = *running = 0;
	for (size_t k = 0; k < c->ncpu; k++) {
		struct perf_counts pc;
		uint64_t en, run;

		if (!c->cpu[k].fd || c->cpu[k].fd[i] < 0 || perf_read_counts(c->cpu[k].fd[i], &pc))
			continue;
		en = pc.enabled;
		run = pc.running;
		if (!tree)
			*enabled += en;
		else if (en > *enabled)
			*enabled = en;
		*running += run;
	}
	/* Inherited events fold their times in as they exit: never above 1. */
	if (tree && *running > *enabled)
		*enabled = *running;
}

/*
 * The mean sampling period of this epoch.  For the clock the kernel's
 * PERIOD field keeps the period the timer started with (it is not updated
 * by PERF_EVENT_IOC_PERIOD), so measure it for a process tree: time counted
 * over samples.  System-wide, the requested mean.
 */
uint64_t collector_mean_period(struct collector *c, size_t i)
{
	struct cevent *e = &c->ev[i];
	uint64_t en, run;

	uint64_t all = 0, lost, n;

	if (!e->period_n)
		return e->freq ? 0 : e->mean;
	if (!e->spec.time)
		return e->period_sum / e->period_n;
	/* System-wide, a CPU that idles runs its event but takes no samples
	 * (measured: twice the period on a half-idle machine); a busy one
	 * samples at the period drawn. */
	if (c->opt.pid < 0)
		return e->mean;
	read_times(c, i, &en, &run);
	if (run <= e->running_base)
		return e->mean;
	/* Lost samples were taken too: give this event its share of them. */
	for (size_t j = 0; j < c->n_ev; j++)
		all += c->ev[j].period_n;
	lost = collector_lost(c) - c->epoch_lost;
	n = e->period_n + (uint64_t)((double)lost * (double)e->period_n / (double)all);
	return (run - e->running_base) / n;
}

void collector_hash_totals(struct collector *c, struct shash_stats *t, bool shadow)
{
	memset(t, 0, sizeof(*t));
	for (size_t k = 0; k < c->ncpu; k++) {
		const struct shash_stats *s;

		if (shadow && !c->cpu[k].shadow)
			continue;
		s = shadow ? &c->cpu[k].shadow->st : &c->cpu[k].hash.st;

		t->samples += s->samples;
		t->hits += s->hits;
		t->evictions += s->evictions;
		t->saturations += s->saturations;
		t->overflows += s->overflows;
	}
}

uint64_t collector_cpu_lost(struct collector *c, size_t k)
{
	uint64_t kernel = 0;

	for (size_t i = 0; c->cpu[k].fd && i < c->n_ev; i++) {
		struct perf_counts pc;

		if (c->cpu[k].fd[i] >= 0 && !perf_read_counts(c->cpu[k].fd[i], &pc))
			kernel += pc.lost;
	}
	return kernel > c->cpu[k].lost ? kernel : c->cpu[k].lost;
}

uint64_t collector_lost(struct collector *c)
{
	uint64_t n = 0;

	for (size_t k = 0; k < c->ncpu; k++)
		n += collector_cpu_lost(c, k);
	return n;
}

/* Remembers where this run's counters stood when the epoch began. */
static void mark_epoch_start(struct collector *c)
{
	struct shash_stats t;

	collector_hash_totals(c, &t, false);
	c->epoch_lost = collector_lost(c);
	c->epoch_throttled = c->throttled;
	c->epoch_hash_samples = t.samples;
	c->epoch_hash_hits = t.hits;
	c->epoch_evictions = t.evictions;
	collector_hash_totals(c, &t, true);
	c->epoch_shadow_hits = t.hits;
	c->epoch_shadow_evictions = t.evictions;
	for (size_t i = 0; i < c->n_ev; i++) {
		c->ev[i].period_sum = c->ev[i].period_n = 0;
		read_times(c, i, &c->ev[i].enabled_base, &c->ev[i].running_base);
	}
}

static void set_counter(struct collector *c, struct epoch_meta *m, const char *name, uint64_t v)
{
	epoch_meta_set_counter(m, name, store_base_counter(&c->store, name) + v);
}

/* ---- calibration -------------------------------------------------------------- */
/* The store's callback before each meta write: events and counters. */
static void fill_meta(void *ctx, struct epoch_meta *m)
{
	struct collector *c = ctx;
	struct shash_stats t;

	for (size_t i = 0; i < c->n_ev; i++) {
		struct cevent *ce = &c->ev[i];
		struct epoch_event *e = epoch_meta_add_event(m, ce->spec.event);
		uint64_t en, run;

		e->used = ce->spec.used;
		e->period_in_ns = ce->spec.time;
		e->freq_hz = c->opt.period ? 0 : c->opt.freq_hz;
		e->period = collector_mean_period(c, i);
		read_times(c, i, &en, &run);
		if (en >= ce->enabled_base && run >= ce->running_base) {
			e->time_enabled = en - ce->enabled_base;
			e->time_running = run - ce->running_base;
		}
	}
	collector_fill_calib(c, m);
	if (c->emb) {
		/* What bursts and windows are on disk: the continued epoch's, and this run's. */
		struct paths_summary sum;

		paths_summary_from_meta(&c->store.base, &sum);
		paths_summary_add(&sum, &c->emb->written);
		paths_summary_to_meta(&sum, m);
	}
	if (c->cg)
		callchain_fill_meta(c->cg, m);
	ladder_to_meta(&c->ladder, m);
	collector_hash_totals(c, &t, false);
	c->lost_stored = collector_lost(c);
	set_counter(c, m, "lost", c->lost_stored - c->epoch_lost);
	set_counter(c, m, "throttled", c->throttled - c->epoch_throttled);
	set_counter(c, m, "hash_samples", t.samples - c->epoch_hash_samples);
	set_counter(c, m, "hash_hits", t.hits - c->epoch_hash_hits);
	set_counter(c, m, "hash_evictions", t.evictions - c->epoch_evictions);
	if (c->opt.hash_compare) {
		collector_hash_totals(c, &t, true);
		set_counter(c, m, "hash_compare_hits", t.hits - c->epoch_shadow_hits);
		set_counter(c, m, "hash_compare_evictions", t.evictions - c->epoch_shadow_evictions);
	}
}

int collector_begin(struct collector *c, const struct store_epoch_opts *eo)
{
	c->calib_base_taken = false;
	mark_epoch_start(c);
	c->run_lost = c->epoch_lost;
	if (store_begin(&c->store, eo))
		return -1;
	if (c->cg)
		callchain_begin(c->cg);
	return 0;
}

int collector_enable(struct collector *c)
{
	if (c->offline)
		return 0;
	for (size_t k = 0; k < c->ncpu; k++)
		for (size_t i = 0; i < c->n_ev; i++)
			if (ioctl(c->cpu[k].fd[i], PERF_EVENT_IOC_ENABLE, 0))
				return errorf_errno("cannot enable sampling on CPU %d",
						    c->cpu[k].cpu);
	c->enabled = true;
	return 0;
}

void collector_scan(struct collector *c)
{
	procs_scan(&c->procs, 0);
}

size_t collector_pollfds(struct collector *c, struct pollfd *fds, size_t max)
{
	size_t n = 0;

	for (size_t k = 0; k < c->ncpu && n < max; k++) {
		if (c->cpu[k].hup || c->cpu[k].ring.fd < 0)
			continue;
		fds[n].fd = c->cpu[k].ring.fd;
		fds[n].events = POLLIN;
		fds[n].revents = 0;
		n++;
	}
	/* A window being emulated: the worker's page requests wake the loop. */
	if (c->emb && n < max && emburst_fd(c->emb) >= 0) {
		fds[n].fd = emburst_fd(c->emb);
		fds[n].events = POLLIN;
		fds[n].revents = 0;
		n++;
	}
	/* Unwind tables being made: their answers wake the loop too. */
	if (c->cg && n < max && callchain_pollfd(c->cg) >= 0) {
		fds[n].fd = callchain_pollfd(c->cg);
		fds[n].events = POLLIN;
		fds[n].revents = 0;
		n++;
	}
	return n;
}

void collector_polled(struct collector *c, const struct pollfd *fds, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!(fds[i].revents & (POLLHUP | POLLERR)))
			continue;
		for (size_t k = 0; k < c->ncpu; k++)
			if (c->cpu[k].ring.fd == fds[i].fd)
				c->cpu[k].hup = true;
	}
}

/* ---- the sample path ----------------------------------------------------------- */

static bool kernel_address(uint64_t pc)
{
	return pc >> 63;
}

/* Merges resolved counts into the store. */
static void account(struct collector *c, unsigned ev, unsigned slot, struct addr_space *as,
		    uint64_t pc, uint64_t count)
{
	uint32_t image;
	uint64_t off;

	if (slot == SLOT_KERNEL) {
		store_add(&c->store, c->procs.kernel_image, ev, 0, pc, count);
		return;
	}
	if (slot == SLOT_UNKNOWN || !as || !procs_resolve(&c->procs, as, pc, &image, &off)) {
		/* Samples of unknown processes were counted when they came. */
		if (slot != SLOT_UNKNOWN)
			c->unknown += count;
		store_add(&c->store, c->procs.unknown_image, ev, 0, pc, count);
		return;
	}
	store_add(&c->store, image, ev, as->pid, off, count);
}

/* The shash consumer: evicted and drained entries. */
static void consume(void *ctx, const struct shash_entry *v, size_t n)
{
	struct collector *c = ctx;

	for (size_t i = 0; i < n; i++) {
		unsigned slot = shash_key_slot(v[i].key);
		struct addr_space *as = slot >= SLOT_FIRST ? procs_slot_space(&c->procs, slot) : NULL;

		if (slot >= SLOT_FIRST && !as)
			BUG("sample hash entry for free slot %u", slot);
		account(c, shash_key_event(v[i].key), slot, as, shash_key_pc(v[i].key), v[i].count);
	}
}

/*
 * The registers --values asks for (CVALUES_PERF_REGS, in bit order) out of
 * a sample's, which may carry more (-g's unwinding registers): false if the
 * sample has not got them all (a kernel thread's).
 */
static bool values_regs(const struct perf_rec_format *fmt, const struct perf_rec *r,
			uint64_t *out)
{
	unsigned k = 0, j = 0;

	if (r->u.sample.n_regs != (unsigned)__builtin_popcountll(fmt->regs_user))
		return false;
	for (unsigned bit = 0; bit < 64; bit++) {
		if (!(fmt->regs_user >> bit & 1))
			continue;
		if (CVALUES_PERF_REGS >> bit & 1)
			out[j++] = r->u.sample.regs[k];
		k++;
	}
	return j == CVALUES_PERF_NREGS;
}

/* --values: the registers of a sample of the values event, aggregated at its offset. */
static void on_values(struct collector *c, const struct perf_rec *r, struct addr_space *as)
{
	uint64_t perf[CVALUES_PERF_NREGS], regs[VALUES_NREGS], off;
	uint32_t image;

	/* A kernel sample leaves the thread's user registers as they were. */
	if (!r->u.sample.user)
		return;
	if (c->whose && !whose_allowed(c->whose, (pid_t)r->pid, (int64_t)r->time)) {
		c->values->st.refused++;
		c->whose->st.samples_refused++;
		cvalues_break(c->values, r->tid);
		return;
	}
	if (!as || !values_regs(&c->fmt, r, perf) ||
	    !procs_resolve(&c->procs, as, r->u.sample.ip, &image, &off)) {
		c->values->st.unresolved++;
		cvalues_break(c->values, r->tid);
		return;
	}
	cvalues_from_perf(perf, regs);
	cvalues_sample(c->values, r->tid, r->time, image, off, regs);
}

/* The user rip of a sample in the kernel (its registers at entry), or 0. */
static uint64_t user_ip(const struct perf_rec_format *fmt, const struct perf_rec *r)
{
	unsigned k = 0;

	if (!(fmt->regs_user >> PERF_REG_X86_IP & 1) ||
	    r->u.sample.n_regs != (unsigned)__builtin_popcountll(fmt->regs_user))
		return 0;
	for (unsigned bit = 0; bit < PERF_REG_X86_IP; bit++)
		k += fmt->regs_user >> bit & 1;
	return r->u.sample.regs[k];
}

/*
 * Emulated bursts: the trails wait for their thread's next samples, user
 * or in the kernel (then with the user registers at its entry).
 */
static void on_burst_sample(struct collector *c, struct ccpu *cc, const struct perf_rec *r)
{
	uint64_t perf[CVALUES_PERF_NREGS], regs[VALUES_NREGS];
	bool have = values_regs(&c->fmt, r, perf);
	uint64_t ip = r->u.sample.user ? r->u.sample.ip : user_ip(&c->fmt, r);

	if (have)
		cvalues_from_perf(perf, regs);
	emburst_sample(c->emb, (unsigned)(cc - c->cpu), (uint32_t)r->tid, r->time,
		       r->u.sample.user, ip, have && ip ? regs : NULL, &c->procs);
}

static void on_sample(struct collector *c, struct ccpu *cc, const struct perf_rec *r,
		      const void *rec, size_t len)
{
	uint64_t ip = r->u.sample.ip, v;
	struct addr_space *as = NULL;
	struct cevent *e;
	unsigned slot, ev;

	if (!u64map_get(&c->id_event, r->id, &v)) {
		c->stray++;
		return;
	}
	e = &c->ev[v - 1];
	ev = e->spec.event;
	e->samples++;
	e->period_sum += r->u.sample.period;
	e->period_n++;
	cc->samples++;
	c->samples++;
	if (c->cg)
		callchain_sample(c->cg, r, rec, len, c->fmt.sample_type, c->fmt.regs_user, ev);
	slot = SLOT_FIRST;  /* a known process: its own slot, below */
	if (r->u.sample.kernel || (!r->u.sample.user && kernel_address(ip))) {
		slot = SLOT_KERNEL;
		c->kernel++;
	} else if (!r->u.sample.user || !(as = procs_lookup(&c->procs, r->pid))) {
		slot = SLOT_UNKNOWN;
		c->unknown++;
	}
	if (c->values && v - 1 == c->values_ev)
		on_values(c, r, as);
	if (c->emb && v - 1 == c->values_ev)
		on_burst_sample(c, cc, r);
	/* The next burst's thread: the latest sampled in user mode of a process whose values may be had. */
	if ((c->bursts || c->emb) && as && r->u.sample.user &&
	    (!c->whose || whose_allowed(c->whose, (pid_t)r->pid, (int64_t)r->time))) {
		c->burst_pid = (pid_t)r->pid;
		c->burst_tid = (pid_t)r->tid;
	}
	if (slot == SLOT_FIRST && !(slot = procs_slot(&c->procs, as))) {
		account(c, ev, SLOT_FIRST, as, ip, 1);  /* every slot in use */
		return;
	}
	if (!shash_pc_packable(ip)) {
		account(c, ev, slot, as, ip, 1);
		return;
	}
	shash_count(&cc->hash, shash_key(ev, slot, ip));
	if (cc->shadow)
		shash_count(cc->shadow, shash_key(ev, slot, ip));
}

static void on_mmap(struct collector *c, const struct perf_rec *r)
{
	struct map_info mi;

	if (!(r->u.mmap.prot & 4 /* PROT_EXEC */) && r->type == PERF_RECORD_MMAP2)
		return;
	memset(&mi, 0, sizeof(mi));
	mi.start = r->u.mmap.start;
	mi.len = r->u.mmap.len;
	mi.pgoff = r->u.mmap.pgoff;
	mi.path = r->u.mmap.filename;
	if (r->u.mmap.has_build_id) {
		mi.build_id = r->u.mmap.build_id;
		mi.build_id_len = r->u.mmap.build_id_len;
	}
	mi.has_inode = r->u.mmap.has_inode && r->u.mmap.ino;
	mi.dev = makedev(r->u.mmap.maj, r->u.mmap.min);
	mi.ino = r->u.mmap.ino;
	procs_mmap(&c->procs, r->pid, &mi);
	if (c->cg)
		callchain_mapped(c->cg, r->pid, mi.start);
}

static void dispatch(void *ctx, int k, const void *rec, size_t len)
{
	struct collector *c = ctx;
	struct ccpu *cc = &c->cpu[k];
	struct perf_rec r;
	const char *why;

	c->records++;
	if (perf_rec_parse_fmt(rec, len, &c->fmt, &r, &why)) {
		c->bad_records++;
		return;
	}
	switch (r.kind) {
	case PERF_REC_SAMPLE:
		on_sample(c, cc, &r, rec, len);
		break;
	case PERF_REC_MMAP:
		on_mmap(c, &r);
		break;
	case PERF_REC_COMM:
		if (r.u.comm.exec && c->whose)
			whose_forget(c->whose, (pid_t)r.pid);
		if (r.u.comm.exec)
			procs_exec(&c->procs, r.pid, r.u.comm.comm);
		else if (r.pid == r.tid)
			procs_comm(&c->procs, r.pid, r.u.comm.comm);
		break;
	case PERF_REC_FORK:
		if (r.u.task.pid != r.u.task.ppid)
			procs_fork(&c->procs, r.u.task.pid, r.u.task.ppid);
		break;
	case PERF_REC_EXIT:
		if (r.u.task.pid == r.u.task.tid)
			procs_exit(&c->procs, r.u.task.pid);
		if (r.u.task.pid == r.u.task.tid && c->whose)
			whose_forget(c->whose, (pid_t)r.u.task.pid);
		if (c->values)
			cvalues_forget(c->values, r.u.task.tid);
		break;
	case PERF_REC_LOST:
	case PERF_REC_LOST_SAMPLES:
		cc->lost += r.u.lost.lost;
		c->lost += r.u.lost.lost;
		break;
	case PERF_REC_THROTTLE:
		cc->throttled++;
		c->throttled++;
		break;
	default:
		break;
	}
}

static void on_record(void *ctx, int k, const struct perf_event_header *h)
{
	struct collector *c = ctx;
	uint64_t t = perf_rec_time(h, h->size);

	if (c->cg && callchain_queue(c->cg, &c->order, k, t, h, c->fmt.sample_type, c->fmt.regs_user))
		return;
	order_push(&c->order, k, t, h, h->size);
}

static void flush_overflows(struct collector *c)
{
	for (size_t k = 0; k < c->ncpu; k++)
		shash_flush_overflow(&c->cpu[k].hash);
}

void collector_read(struct collector *c, bool final)
{
	/* Anything stamped before this instant is in the rings by now. */
	uint64_t watermark = final ? UINT64_MAX :
				     (uint64_t)(time_monotonic_ns() - c->opt.slack_ns);

	for (size_t k = 0; k < c->ncpu; k++)
		if (c->cpu[k].ring.base)
			perf_ring_read(&c->cpu[k].ring, on_record, c, &c->garbled);
	if (c->cg)
		callchain_poll(c->cg);
	order_flush(&c->order, watermark, dispatch, c);
	flush_overflows(c);
}

static void drain(struct collector *c)
{
	for (size_t k = 0; k < c->ncpu; k++) {
		shash_drain(&c->cpu[k].hash);
		if (c->cpu[k].shadow)
			shash_drain(c->cpu[k].shadow);
	}
	procs_drained(&c->procs);
	c->drains++;
}

static void update_rates(struct collector *c, int64_t now)
{
	double secs = (double)(now - c->window_start) / 1e9;

	if (secs < 10)
		return;
	for (size_t k = 0; k < c->ncpu; k++) {
		c->cpu[k].rate = (double)(c->cpu[k].samples - c->cpu[k].window_samples) / secs;
		c->cpu[k].window_samples = c->cpu[k].samples;
	}
	c->window_start = now;
}

/*
 * --values: merges the value tables into the epoch, on the store's write
 * interval (or sooner when they pass half their memory cap), or now.
 */
static int write_values(struct collector *c, int64_t now, bool force)
{
	int64_t interval = c->opt.store.write_interval_ns;

	int r = 0;

	if ((!c->values && !c->bursts && !c->emb) || !c->store.seq)
		return 0;
	if (!force && now < c->next_values_write && !(c->values && cvalues_pressed(c->values)) &&
	    !(c->emb && emburst_pressed(c->emb)))
		return 0;
	c->next_values_write = now + (interval > 0 ? interval : NS_PER_SEC);
	if (c->values && cvalues_write(c->values, c->db, c->store.seq, &c->procs))
		r = -1;
	if (c->bursts && bursts_write(c->bursts, c->db, c->store.seq))
		r = -1;
	if (c->emb && emburst_write(c->emb, c->db, c->store.seq, &c->procs))
		r = -1;
	return r;
}

/* True if pid is the collector's own process or one of its workers. */
static bool own_process(struct collector *c, pid_t pid)
{
	return pid == getpid() || (c->cg && pid == callchain_worker_pid(c->cg)) ||
	       (c->emb && emu_worker_owns(c->emb->worker, pid));
}

/* The tracer of whichever kind of bursts runs. */
static struct tracer *burst_tracer(struct collector *c)
{
	return c->bursts ? &c->bursts->tracer : c->emb ? &c->emb->tracer : NULL;
}

/* --bursts: one on the thread last sampled, when the budget allows. */
static void maybe_burst(struct collector *c, int64_t now)
{
	struct tracer *t = burst_tracer(c);

	if (t)
		tracer_poll(t);         /* late stops let go, exits reaped: never waited for */
	if (c->emb)
		emburst_poll(c->emb, &c->procs, now);
	if (!t || !c->burst_tid || !c->store.seq || t->reaped)
		return;
	/*
	 * Never the daemon's own processes (its workers), and only a process
	 * whose values may be recorded, looked at now (it may have made
	 * itself non-dumpable since its samples).
	 */
	if ((c->bursts ? bursts_due(c->bursts, now) : emburst_due(c->emb, now)) &&
	    (own_process(c, c->burst_pid) || !whose_check(c->whose, c->burst_pid))) {
		c->whose->st.bursts_refused++;
		c->burst_tid = 0;
		return;
	}
	/* Its user's worker backing off after failures: not stopped for nothing. */
	if (c->emb && emburst_due(c->emb, now) && !emu_worker_can_take(c->emb->worker, c->burst_pid)) {
		c->burst_tid = 0;
		return;
	}
	if (c->bursts && bursts_due(c->bursts, now))
		bursts_run(c->bursts, c->burst_pid, c->burst_tid, &c->procs, now);
	else if (c->emb && emburst_due(c->emb, now))
		emburst_run(c->emb, c->burst_pid, c->burst_tid, &c->procs);
	else
		return;
	c->burst_tid = 0;
}

bool collector_wait_child(struct collector *c, pid_t pid, int *status)
{
	struct tracer *t = burst_tracer(c);
	pid_t r;

	if (t)
		return tracer_wait_child(t, pid, status);
	do
		r = waitpid(pid, status, WNOHANG | __WALL);
	while (r < 0 && errno == EINTR);
	return r == pid && (WIFEXITED(*status) || WIFSIGNALED(*status));
}

int64_t collector_tick(struct collector *c, int64_t now)
{
	if (now >= c->next_redraw) {
		collector_redraw_periods(c);
		c->next_redraw = now + COLLECT_REDRAW_NS;
	}
	if (!c->next_drain)
		c->next_drain = now + c->opt.drain_ns;
	/*
	 * Drain on time, and early when many address spaces wait for it (many
	 * short-lived processes): a drain costs a pass over the tables, a
	 * retired space its mappings' memory until then.
	 */
	if (now >= c->next_drain || procs_slots_low(&c->procs, 64) ||
	    c->procs.n_retired >= COLLECT_MAX_RETIRED) {
		drain(c);
		c->next_drain = now + c->opt.drain_ns;
	}
	store_tick(&c->store, now);
	if (c->cg && callchain_due(c->cg, now, c->opt.store.write_interval_ns))
		callchain_write(c->cg, false);
	if ((c->values || c->bursts || c->emb) && !c->next_values_write)
		c->next_values_write = now + c->opt.store.write_interval_ns;
	maybe_burst(c, now);
	write_values(c, now, false);
	update_rates(c, now);
	return c->next_redraw < c->next_drain ? c->next_redraw : c->next_drain;
}

/* Stacks go to disk with the rest (their images indexed first). */
static int write_stacks(struct collector *c, bool final)
{
	return c->cg ? callchain_write(c->cg, final) : 0;
}

int collector_flush(struct collector *c)
{
	int r;

	collector_read(c, false);
	drain(c);
	r = write_stacks(c, false);
	if (store_flush(&c->store))
		r = -1;
	return write_values(c, time_monotonic_ns(), true) || r ? -1 : 0;
}

int collector_new_epoch(struct collector *c, const char *label)
{
	collector_read(c, false);
	drain(c);
	if (write_stacks(c, true))
		return errorf("the stacks of epoch %" PRIu32 " could not be written; staying in it",
			      c->store.seq);
	/* The old epoch's values go to it; if they cannot, they are lost (reported). */
	if ((c->values || c->bursts || c->emb) &&
	    (store_flush(&c->store) || write_values(c, time_monotonic_ns(), true))) {
		if (c->values)
			cvalues_clear(c->values);
		if (c->bursts)
			bursts_clear(c->bursts);
		if (c->emb)
			emburst_clear(c->emb);
	}
	if (c->emb)
		emburst_new_epoch(c->emb);
	/*
	 * The old epoch is closed with the calibration it was sampled under,
	 * then the new one is measured: calibrating first put the new
	 * measurement into both epochs, merged with the old one.
	 */
	if (label && !epoch_label_valid(label))
		return errorf("invalid epoch label '%s' (1-64 characters, no spaces, not a number, "
			      "not starting with 'latest')", label);
	if (store_close(&c->store))
		return errorf("epoch %" PRIu32 " could not be flushed; staying in it", c->store.seq);
	collector_calibrate(c);
	c->calib_base_taken = false;
	if (store_begin(&c->store, &(struct store_epoch_opts){ 0, label, NULL }))
		return -1;
	mark_epoch_start(c);
	if (c->cg)
		callchain_begin(c->cg);
	return 0;
}

int collector_finish(struct collector *c)
{
	int r;

	collector_read(c, true);
	drain(c);
	r = write_stacks(c, true);
	if (store_flush(&c->store) || write_values(c, time_monotonic_ns(), true))
		r = -1;
	return store_close(&c->store) || r ? -1 : 0;
}

void collector_set_retention(struct collector *c, const struct collect_retention *r)
{
	c->retention = r;
}

/* ---- reports ---------------------------------------------------------------------- */

void collector_summary(struct collector *c, struct collect_summary *s)
{
	struct strbuf sb = STRBUF_INIT;

	memset(s, 0, sizeof(*s));
	s->epoch = c->store.seq;
	s->samples = c->samples;
	s->lost = (c->lost_stored ? c->lost_stored : collector_lost(c)) - c->run_lost;
	s->throttled = c->throttled;
	s->unknown = c->unknown;
	s->kernel = c->kernel;
	s->dropped = c->store.st.dropped;
	s->user_only = c->target.exclude_kernel;
	for (size_t i = 0; i < c->n_ev; i++) {
		strbuf_addf(&sb, "%s%s", i ? "," : "", event_name(c->ev[i].spec.event));
		if (c->ev[i].spec.used != c->ev[i].spec.event)
			strbuf_addf(&sb, "=%s", event_name(c->ev[i].spec.used));
	}
	snprintf(s->events, sizeof(s->events), "%s", sb.buf);
	strbuf_release(&sb);
	if (c->values) {
		s->value_samples = c->values->st.samples;
		s->value_pairs = c->values->st.pairs;
		s->value_dropped = c->values->st.dropped;
	}
	if (c->bursts) {
		int64_t el = time_monotonic_ns() - (c->bursts->started ? c->bursts->started : c->started);

		s->bursts = c->bursts->st.bursts;
		s->burst_steps = c->bursts->st.steps;
		s->burst_share = el > 0 ? (double)c->bursts->st.ns / (double)el : 0;
	}
	if (c->emb) {
		const struct emu_worker *w = emburst_worker(c->emb);
		struct strbuf causes = STRBUF_INIT;

		if (emu_worker_off(w) != EMU_CAUSE__COUNT)
			snprintf(s->burst_off, sizeof(s->burst_off), "%s", emu_cause_name(emu_worker_off(w)));
		emu_worker_causes(w, false, &causes);
		snprintf(s->burst_lost, sizeof(s->burst_lost), "%s", causes.len ? causes.buf : "");
		strbuf_reset(&causes);
		emu_worker_causes(w, true, &causes);
		snprintf(s->burst_not_tried, sizeof(s->burst_not_tried), "%s", causes.len ? causes.buf : "");
		strbuf_release(&causes);
		emburst_report(c->emb, c->started, &s->emulated);
		s->burst_emulated = true;
		s->bursts = s->emulated.bursts;
		s->burst_steps = s->emulated.insns;
		s->burst_share = s->emulated.share;
	}
	s->calib_cycles = c->calib.intervals ? c->calib.cycles : 0;
	s->calib_mhz = c->calib.mhz;
	s->calib_ns = c->calib_ns;
	snprintf(s->calib_how, sizeof(s->calib_how), "%s", c->calib.how);
	if (!c->calib.intervals ||
	    !epoch_calib_problem(&c->calib, s->calib_problem, sizeof(s->calib_problem)))
		s->calib_problem[0] = '\0';
	if (c->cg && c->opt.callgraph.mode != CALLGRAPH_THREADS) {
		const struct callchain_stats *cs = callchain_stats(c->cg);

		s->stacks = true;
		for (int i = 0; i < STACK_END__COUNT; i++)
			if (i != STACK_END_KERNEL)
				s->user_stacks += cs->ends[i];
		s->complete_stacks = cs->ends[STACK_END_COMPLETE];
		s->tables = cs->tables;
		s->tables_cached = cs->tables_cached;
		s->table_failures = cs->table_failures;
	}
}
