/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dcpictl status: what the collector is doing, as text or JSON. */
#include "config.h"
#include "collect/collector-int.h"
#include "collect/emu-worker.h"
#include "collect/procinfo.h"
#include "core/die.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "core/timeutil.h"
#include "core/xalloc.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

struct status {
	double uptime, cpu_secs;
	double worker_secs;     /* the unwinding worker's CPU (this one and those before it) */
	bool has_worker;
	double emulate_secs;    /* the emulating workers' (running, gone, the service's) */
	double total_secs;      /* the daemon's own and its workers' */
	double held_secs;       /* the time it held other threads stopped */
	uint64_t stops;
	long online;            /* CPUs online: the machine's share is of uptime x these */
	uint64_t rss, peak_rss, structures, db_bytes;
	struct shash_stats hash, shadow;
};

/*
 * Resident memory now and at its peak, from /proc/self/status (VmRSS,
 * VmHWM): the kernel's high-water mark counts what getrusage's ru_maxrss
 * only catches up with at times, so a peak below the current size is not
 * shown.  The peak is never below the current figure.
 */
static void rss_bytes(uint64_t *rss, uint64_t *peak)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long long kb;

	if (f) {
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "VmRSS: %llu kB", &kb) == 1)
				*rss = (uint64_t)kb * 1024;
			else if (sscanf(line, "VmHWM: %llu kB", &kb) == 1 && (uint64_t)kb * 1024 > *peak)
				*peak = (uint64_t)kb * 1024;
		}
		fclose(f);
	}
	if (*peak < *rss)
		*peak = *rss;
}

/* The CPU seconds (user and system) of process pid so far, from /proc; 0 if unknown. */
static double proc_cpu_secs(pid_t pid)
{
	char buf[1024];
	const char *p = procinfo_stat(pid, buf, sizeof(buf));
	unsigned long long ut = 0, st = 0;

	/* state, then fields 4..13, then utime stime */
	if (!p || sscanf(p, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* The tracer of whichever kind of bursts runs, or NULL. */
static const struct tracer *tracer_of(const struct collector *c)
{
	return c->bursts ? &c->bursts->tracer : c->emb ? &c->emb->tracer : NULL;
}

static void gather(struct collector *c, struct status *s)
{
	struct rusage ru;

	memset(s, 0, sizeof(*s));
	s->uptime = (double)(time_monotonic_ns() - c->started) / 1e9;
	if (!getrusage(RUSAGE_SELF, &ru)) {
		s->cpu_secs = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			      (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
		s->peak_rss = (uint64_t)ru.ru_maxrss * 1024;
	}
	rss_bytes(&s->rss, &s->peak_rss);
	s->online = sysconf(_SC_NPROCESSORS_ONLN);
	if (s->online < 1)
		s->online = (long)(c->ncpu ? c->ncpu : 1);
	/*
	 * The workers: children, those that ended in RUSAGE_CHILDREN (the
	 * emulating ones' part of it known apart); the emulating service's
	 * are not children, their pool counts them.
	 */
	{
		double children = 0, reaped_emu = 0;

		if (!getrusage(RUSAGE_CHILDREN, &ru))
			children = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
				   (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
		if (c->emb) {
			const struct emu_worker *w = emburst_worker(c->emb);

			s->emulate_secs = (double)emu_worker_total_cpu_ns(w) / 1e9;
			reaped_emu = (double)emu_worker_reaped_cpu_ns(w) / 1e9;
		}
		s->worker_secs = children > reaped_emu ? children - reaped_emu : 0;
		if (c->cg) {
			pid_t w = callchain_worker_pid(c->cg);

			s->has_worker = true;
			if (w > 0)
				s->worker_secs += proc_cpu_secs(w);
		}
	}
	s->total_secs = s->cpu_secs + s->worker_secs + s->emulate_secs;
	if (tracer_of(c)) {
		s->held_secs = (double)tracer_of(c)->st.held_ns / 1e9;
		s->stops = tracer_of(c)->st.stops;
	}
	s->structures = procs_bytes(&c->procs) + store_bytes(&c->store) + order_bytes(&c->order);
	for (size_t k = 0; k < c->ncpu; k++)
		s->structures += shash_bytes(&c->cpu[k].hash);
	if (c->values)
		s->structures += c->values->bytes;
	s->db_bytes = db_disk_usage(c->db);
	if (c->cg)
		s->structures += callchain_bytes(c->cg);
	collector_hash_totals(c, &s->hash, false);
	collector_hash_totals(c, &s->shadow, true);
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

/* A CPU's samples/s since the collector started: what its samples column adds up to. */
static double cpu_rate(const struct ccpu *cc, const struct status *s)
{
	return s->uptime > 0 ? (double)cc->samples / s->uptime : 0;
}

/* Its samples/s over the last whole 10-s window (since start before one ends). */
static double cpu_recent_rate(const struct ccpu *cc, const struct status *s)
{
	return cc->rate > 0 || s->uptime >= 10 ? cc->rate : cpu_rate(cc, s);
}

/* The daemon's CPU time as a share of the machine's (uptime x CPUs online). */
static double machine_share(double secs, const struct status *s)
{
	return s->uptime > 0 ? secs / (s->uptime * (double)s->online) : 0;
}

/* The clock dcpi converts clock samples with, in MHz, and where it came from. */
static double clock_mhz(const struct collector *c, const char **from)
{
	if (c->calib.intervals && c->calib.cycles > 0 && c->calib.period) {
		*from = "calibration";
		return c->calib.cycles * 1000.0 / (double)c->calib.period;
	}
	*from = c->store.meta.cpu_mhz > 0 ? "cpuinfo" : "none";
	return c->store.meta.cpu_mhz;
}

/* An event's samples/s since the collector started (all CPUs). */
static double event_rate(const struct cevent *e, const struct status *s)
{
	return s->uptime > 0 ? (double)e->samples / s->uptime : 0;
}

static void period_text(struct strbuf *sb, struct collector *c, size_t i)
{
	const struct cevent *e = &c->ev[i];
	uint64_t mean = collector_mean_period(c, i);

	if (e->freq)
		strbuf_addf(sb, "%" PRIu64 " Hz (kernel-adjusted)", e->mean);
	else if (e->spec.time)
		strbuf_addf(sb, "%.1f us", (double)mean / 1000.0);
	else
		strbuf_addf(sb, "%" PRIu64 " events", mean);
}

/* "retention: at most 1.00 GiB and 30 days; removed 3 epochs (12.0 MiB) ..." */
static void retention_text(const struct collect_retention *r, struct strbuf *o)
{
	const struct db_retention *l = &r->limits;

	strbuf_addstr(o, "\nretention: ");
	if (l->max_bytes) {
		strbuf_addstr(o, "at most ");
		strbuf_add_size(o, l->max_bytes);
	}
	if (l->max_age_ns)
		strbuf_addf(o, "%s%g days", l->max_bytes ? " and " : "epochs of the last ",
			    (double)l->max_age_ns / 86400e9);
	strbuf_addf(o, "; removed %" PRIu64 " epoch%s (", r->removed.epochs,
		    r->removed.epochs == 1 ? "" : "s");
	strbuf_add_size(o, r->removed.epoch_bytes);
	strbuf_addf(o, ") and %" PRIu64 " snapshot%s (", r->removed.binaries,
		    r->removed.binaries == 1 ? "" : "s");
	strbuf_add_size(o, r->removed.binary_bytes);
	strbuf_addstr(o, ") since start");
	if (r->last_ns) {
		strbuf_addf(o, ", up to epoch %" PRIu32 " at ", r->removed.last_seq);
		strbuf_add_time_short(o, r->last_ns);
	}
	if (r->over_limit)
		strbuf_addstr(o, "; over the limit: the current epoch alone exceeds it");
}

static void retention_json(struct json_writer *w, const struct collect_retention *r)
{
	struct strbuf sb = STRBUF_INIT;

	json_key(w, "retention"), json_object_begin(w);
	json_key(w, "max_bytes"), json_u64(w, r->limits.max_bytes);
	json_key(w, "max_age_days"), json_double(w, (double)r->limits.max_age_ns / 86400e9, 6);
	json_key(w, "removed_epochs"), json_u64(w, r->removed.epochs);
	json_key(w, "removed_epoch_bytes"), json_u64(w, r->removed.epoch_bytes);
	json_key(w, "removed_snapshots"), json_u64(w, r->removed.binaries);
	json_key(w, "removed_snapshot_bytes"), json_u64(w, r->removed.binary_bytes);
	json_key(w, "last_removed_epoch"), json_u64(w, r->removed.last_seq);
	json_key(w, "last_removal");
	if (r->last_ns) {
		strbuf_add_time_iso(&sb, r->last_ns);
		json_string(w, sb.buf);
	} else {
		json_null(w);
	}
	json_key(w, "over_limit"), json_bool(w, r->over_limit);
	json_object_end(w);
	strbuf_release(&sb);
}

/* "stops: 120 threads held 0.31 s (longest 4.1 ms); not stopped: 3 in state D, ..." */
static void stops_text(const struct tracer *t, struct strbuf *o)
{
	const struct tracer_stats *ts = &t->st;

	strbuf_addf(o, "stops: %" PRIu64 " threads held %.3f s in all (longest %.1f ms); not stopped: %"
		    PRIu64 " in state D (a vfork, FUSE, I/O), %" PRIu64 " refused, %" PRIu64 " late (%"
		    PRIu64 " let go since, %zu still seized); %" PRIu64 " exited while held, %" PRIu64
		    " of their own signals delivered\n", ts->stops, (double)ts->held_ns / 1e9,
		    (double)ts->longest_ns / 1e6, ts->blocked, ts->refused, ts->late,
		    ts->late_released, tracer_pending(t), t->gone, ts->signals);
}

static void stops_json(const struct tracer *t, struct json_writer *w)
{
	const struct tracer_stats *ts = &t->st;

	json_key(w, "stops"), json_object_begin(w);
	JSON_U64_MEMBERS(w, { "stopped", ts->stops }, { "blocked", ts->blocked },
			 { "refused", ts->refused }, { "late", ts->late },
			 { "late_released", ts->late_released }, { "pending", tracer_pending(t) },
			 { "gone", t->gone }, { "signals", ts->signals });
	json_key(w, "held_s"), json_double(w, (double)ts->held_ns / 1e9, 6);
	json_key(w, "longest_s"), json_double(w, (double)ts->longest_ns / 1e9, 6);
	json_object_end(w);
}

/* "emulating workers: 2 running; lost: 1 timed out; not tried: ..." */
static void emulation_text(const struct emu_worker *w, struct strbuf *o)
{
	size_t mark;

	strbuf_addf(o, "emulating workers: %zu running, %" PRIu64 " started", emu_worker_procs(w),
		    emu_worker_stats(w)->starts);
	if (emu_worker_off(w) != EMU_CAUSE__COUNT)
		strbuf_addf(o, "; bursts off: %s", emu_cause_name(emu_worker_off(w)));
	strbuf_addstr(o, "; lost: ");
	mark = o->len;
	emu_worker_causes(w, false, o);
	if (o->len == mark)
		strbuf_addstr(o, "none");
	strbuf_addstr(o, "; not tried: ");
	mark = o->len;
	emu_worker_causes(w, true, o);
	if (o->len == mark)
		strbuf_addstr(o, "none");
	strbuf_addf(o, "; %" PRIu64 " pages asked for outside the process's mappings (not read)\n",
		    emu_worker_stats(w)->outside);
}

/* "values of: alice, bob (dumpable processes); not recorded: ..." */
static void whose_text(const struct whose *w, struct strbuf *o)
{
	char who[256];

	whose_describe(w, who, sizeof(who));
	strbuf_addf(o, "values of: %s (dumpable processes only); not recorded: %" PRIu64 " value "
		    "samples, %" PRIu64 " bursts (%" PRIu64 " looks: %" PRIu64 " not dumpable, %" PRIu64
		    " of other users)\n", who, w->st.samples_refused, w->st.bursts_refused,
		    w->st.checks, w->st.not_dumpable, w->st.not_chosen);
}

static void whose_json(const struct whose *w, struct json_writer *j)
{
	char who[256];

	whose_describe(w, who, sizeof(who));
	json_key(j, "values_of"), json_object_begin(j);
	json_key(j, "users"), json_string(j, who);
	json_key(j, "all"), json_bool(j, w->all);
	JSON_U64_MEMBERS(j, { "samples_refused", w->st.samples_refused },
			 { "bursts_refused", w->st.bursts_refused }, { "checks", w->st.checks },
			 { "not_dumpable", w->st.not_dumpable }, { "not_chosen", w->st.not_chosen });
	json_object_end(j);
}

static void text_report(struct collector *c, const struct status *s, struct strbuf *o)
{
	const struct epoch_meta *m = &c->store.meta;

	strbuf_addf(o, "dcpid %s, pid %ld, up ", PACKAGE_VERSION, (long)getpid());
	strbuf_add_duration(o, (int64_t)(s->uptime * 1e9));
	strbuf_addf(o, "\ndatabase %s: ", c->db->path);
	strbuf_add_size(o, s->db_bytes);
	strbuf_addf(o, ", epoch %" PRIu32, c->store.seq);
	if (m->label)
		strbuf_addf(o, " '%s'", m->label);
	if (c->retention && !db_retention_empty(&c->retention->limits))
		retention_text(c->retention, o);
	strbuf_addstr(o, "\n\nevent         counted as  mean period          samples  rate/s\n");
	for (size_t i = 0; i < c->n_ev; i++) {
		struct strbuf p = STRBUF_INIT;

		period_text(&p, c, i);
		strbuf_addf(o, "%-13s %-11s %-17s %10" PRIu64 " %7.0f\n",
			    event_name(c->ev[i].spec.event), event_name(c->ev[i].spec.used), p.buf,
			    c->ev[i].samples, event_rate(&c->ev[i], s));
		strbuf_release(&p);
	}
	if (c->calib.intervals) {
		char why[160];
		const char *problem = epoch_calib_problem(&c->calib, why, sizeof(why));

		strbuf_addf(o, "calibrated: 1 sample = %.1f cycles (%s clock %.1f MHz, imul %.1f MHz, "
			    "%" PRIu64 " intervals, %.0f ms)%s%s\n", c->calib.cycles,
			    !strcmp(c->calib.how, "imul") ? "imul" : "register-add", c->calib.mhz,
			    c->calib.imul_mhz, c->calib.intervals, (double)c->calib_ns / 1e6,
			    problem ? "; " : "", problem ? problem : "");
	}
	{
		const char *from;
		double mhz = clock_mhz(c, &from);
		char a[40], b[40];

		if (!strcmp(from, "calibration"))
			strbuf_addf(o, "clock: %.1f MHz, from the calibration (the cycles a clock sample "
				    "stands for); /proc/cpuinfo says %s MHz\n", mhz,
				    json_double_text(c->store.meta.cpu_mhz, b, sizeof(b)));
		else if (mhz > 0)
			strbuf_addf(o, "clock: %s MHz, from /proc/cpuinfo (not calibrated)\n",
				    json_double_text(mhz, a, sizeof(a)));
	}
	strbuf_addstr(o, "\ncpu       samples  rate/s  last 10 s        lost  throttled\n");
	for (size_t k = 0; k < c->ncpu; k++) {
		const struct ccpu *cc = &c->cpu[k];

		strbuf_addf(o, "%-4d %12" PRIu64 " %7.0f %10.0f %11" PRIu64 " %10" PRIu64 "\n",
			    cc->cpu, cc->samples, cpu_rate(cc, s), cpu_recent_rate(cc, s),
			    collector_cpu_lost(c, k), cc->throttled);
	}
	strbuf_addf(o, "all  %12" PRIu64 " %7.0f %10s %11" PRIu64 " %10" PRIu64 "\n", c->samples,
		    s->uptime > 0 ? (double)c->samples / s->uptime : 0, "", collector_lost(c),
		    c->throttled);
	strbuf_addstr(o, "(rate/s: samples / time up; last 10 s: the rate over the last whole "
		      "10-second window)\n");
	strbuf_addf(o, "\nunknown %.3f%% (%" PRIu64 " samples), kernel %.1f%%, dropped %" PRIu64 "\n",
		    100 * ratio(c->unknown, c->samples), c->unknown,
		    100 * ratio(c->kernel, c->samples), c->store.st.dropped);
	strbuf_addf(o, "hash: %s, %zu buckets x %u per CPU, hit rate %.1f%%, evictions %" PRIu64
		    ", overflow buffers %" PRIu64 ", drains %" PRIu64 "\n",
		    shash_kind_name(c->opt.hash), c->ncpu ? c->cpu[0].hash.nbuckets : 0,
		    shash_ways(c->opt.hash), 100 * ratio(s->hash.hits, s->hash.samples),
		    s->hash.evictions, s->hash.overflows, c->drains);
	if (c->opt.hash_compare)
		strbuf_addf(o, "hash compared: %s would hit %.1f%% with %" PRIu64 " evictions\n",
			    shash_kind_name(c->cpu[0].shadow->kind),
			    100 * ratio(s->shadow.hits, s->shadow.samples), s->shadow.evictions);
	if (c->cg)
		callchain_status(c->cg, o);
	/* What it costs in all: itself, its workers, and the time it held threads stopped. */
	strbuf_addf(o, "overhead: %.3f%% of the machine's CPU (%.2f s: dcpid %.2f s, its unwinding "
		    "worker %.2f s, its emulating workers %.2f s); threads held stopped %.3f s (%" PRIu64
		    " stops)\n", 100 * machine_share(s->total_secs, s), s->total_secs, s->cpu_secs,
		    s->worker_secs, s->emulate_secs, s->held_secs, s->stops);
	strbuf_addf(o, "daemon: %.3f%% of the machine's CPU (%.2f s of %ld CPUs x %.0f s), %.2f us "
		    "per sample; memory %.1f MB resident (peak %.1f MB, tables %.1f MB)\n",
		    100 * machine_share(s->cpu_secs, s), s->cpu_secs, s->online, s->uptime,
		    s->cpu_secs * 1e6 / (double)(c->samples ? c->samples : 1),
		    (double)s->rss / 1e6, (double)s->peak_rss / 1e6, (double)s->structures / 1e6);
	if (s->has_worker)
		strbuf_addf(o, "unwinding worker: %.3f%% of the machine's CPU (%.2f s), %.2f us per "
			    "sample\n", 100 * machine_share(s->worker_secs, s), s->worker_secs,
			    s->worker_secs * 1e6 / (double)(c->samples ? c->samples : 1));
	strbuf_addf(o, "profiles: %zu in memory (%zu dirty, %" PRIu64 " offsets), %" PRIu64
		    " written, %" PRIu64 " write failures\n",
		    c->store.n, c->store.dirty, c->store.entries, c->store.st.writes,
		    c->store.st.write_failures);
	if (c->values) {
		const struct cvalues_stats *vs = &c->values->st;

		strbuf_addf(o, "values: %" PRIu64 " samples with registers (%" PRIu64 " paired), %" PRIu64
			    " outside known images, %" PRIu64 " dropped at the %.0f MB cap; %.1f MB in "
			    "memory, %" PRIu64 " written (%" PRIu64 " writes, %" PRIu64 " failures)\n",
			    vs->samples, vs->pairs, vs->unresolved, vs->dropped,
			    (double)c->values->max_bytes / 1e6, (double)c->values->bytes / 1e6,
			    vs->written_samples, vs->writes, vs->write_failures);
	}
	if (c->bursts) {
		const struct burst_stats *bs = &c->bursts->st;
		double el = (double)(time_monotonic_ns() - (c->bursts->started ? c->bursts->started
										   : c->started));

		strbuf_addf(o, "bursts: %" PRIu64 " of %" PRIu64 " steps, %.2f%% of the time (budget "
			    "%.0f%%), %" PRIu64 " refused, %" PRIu64 " ended at a system call, %" PRIu64
			    " by a signal, %" PRIu64 " not stepped (SIGTRAP blocked or ignored), %" PRIu64
			    " written\n",
			    bs->bursts, bs->steps, el > 0 ? 100 * (double)bs->ns / el : 0,
			    100 * c->bursts->budget, bs->refused, bs->syscalls, bs->signals,
			    bs->trap_masked, bs->written);
	}
	if (c->emb) {
		emburst_status_text(c->emb, c->started, o);
		emulation_text(emburst_worker(c->emb), o);
	}
	if (tracer_of(c))
		stops_text(tracer_of(c), o);
	if (c->whose)
		whose_text(c->whose, o);
	strbuf_addf(o, "processes: %" PRIu64 " forks, %" PRIu64 " execs, %" PRIu64 " exits, %" PRIu64
		    " mmaps, %zu images; records %" PRIu64 " (%" PRIu64 " malformed, %" PRIu64
		    " out of order)\n",
		    c->procs.st.forks, c->procs.st.execs, c->procs.st.exits, c->procs.st.mmaps,
		    c->procs.n_images, c->records, c->bad_records, c->order.late);
}

static void json_events(struct json_writer *w, struct collector *c, const struct status *s)
{
	json_key(w, "events"), json_array_begin(w);
	for (size_t i = 0; i < c->n_ev; i++) {
		const struct cevent *e = &c->ev[i];

		json_object_begin(w);
		json_key(w, "event"), json_string(w, event_name(e->spec.event));
		json_key(w, "used"), json_string(w, event_name(e->spec.used));
		json_key(w, "period"), json_u64(w, collector_mean_period(c, i));
		json_key(w, "unit"), json_string(w, e->freq ? "hz" : e->spec.time ? "ns" : "events");
		json_key(w, "samples"), json_u64(w, e->samples);
		json_key(w, "rate"), json_double(w, event_rate(e, s), 6);
		json_object_end(w);
	}
	json_array_end(w);
	json_key(w, "cpus"), json_array_begin(w);
	for (size_t k = 0; k < c->ncpu; k++) {
		const struct ccpu *cc = &c->cpu[k];

		json_object_begin(w);
		json_key(w, "cpu"), json_i64(w, cc->cpu);
		json_key(w, "samples"), json_u64(w, cc->samples);
		json_key(w, "rate"), json_double(w, cpu_rate(cc, s), 6);
		json_key(w, "recent_rate"), json_double(w, cpu_recent_rate(cc, s), 6);
		json_key(w, "lost"), json_u64(w, collector_cpu_lost(c, k));
		json_key(w, "throttled"), json_u64(w, cc->throttled);
		json_object_end(w);
	}
	json_array_end(w);
}

static void json_hash(struct json_writer *w, struct collector *c, const struct status *s)
{
	json_key(w, "hash"), json_object_begin(w);
	json_key(w, "kind"), json_string(w, shash_kind_name(c->opt.hash));
	json_key(w, "buckets_per_cpu"), json_u64(w, c->ncpu ? c->cpu[0].hash.nbuckets : 0);
	json_key(w, "ways"), json_u64(w, shash_ways(c->opt.hash));
	json_key(w, "samples"), json_u64(w, s->hash.samples);
	json_key(w, "hits"), json_u64(w, s->hash.hits);
	json_key(w, "hit_rate"), json_double(w, ratio(s->hash.hits, s->hash.samples), 6);
	json_key(w, "evictions"), json_u64(w, s->hash.evictions);
	json_key(w, "overflow_buffers"), json_u64(w, s->hash.overflows);
	json_key(w, "drains"), json_u64(w, c->drains);
	json_object_end(w);
	if (c->opt.hash_compare) {
		json_key(w, "hash_compare"), json_object_begin(w);
		json_key(w, "kind"), json_string(w, shash_kind_name(c->cpu[0].shadow->kind));
		json_key(w, "hits"), json_u64(w, s->shadow.hits);
		json_key(w, "hit_rate"), json_double(w, ratio(s->shadow.hits, s->shadow.samples), 6);
		json_key(w, "evictions"), json_u64(w, s->shadow.evictions);
		json_object_end(w);
	}
}

static void json_report(struct collector *c, const struct status *s, FILE *f)
{
	struct json_writer w;

	json_init(&w, f, true);
	json_object_begin(&w);
	json_key(&w, "version"), json_string(&w, PACKAGE_VERSION);
	json_key(&w, "pid"), json_i64(&w, getpid());
	json_key(&w, "uptime_s"), json_double(&w, s->uptime, 6);
	json_key(&w, "database"), json_string(&w, c->db->path);
	json_key(&w, "database_bytes"), json_u64(&w, s->db_bytes);
	if (c->retention && !db_retention_empty(&c->retention->limits))
		retention_json(&w, c->retention);
	json_key(&w, "epoch"), json_u64(&w, c->store.seq);
	json_key(&w, "label"), json_string(&w, c->store.meta.label);
	json_events(&w, c, s);
	if (c->calib.intervals) {
		json_key(&w, "calibration"), json_object_begin(&w);
		json_key(&w, "cycles_per_sample"), json_double(&w, c->calib.cycles, 1);
		json_key(&w, "mhz"), json_double(&w, c->calib.mhz, 1);
		json_key(&w, "intervals"), json_u64(&w, c->calib.intervals);
		json_key(&w, "cost_ms"), json_double(&w, (double)c->calib_ns / 1e6, 3);
		json_key(&w, "method"), json_string(&w, c->calib.how);
		json_key(&w, "imul_mhz"), json_double(&w, c->calib.imul_mhz, 1);
		json_key(&w, "tsc_mhz"), json_double(&w, c->calib.tsc_mhz, 1);
		json_key(&w, "error"), json_double(&w, c->calib.error, 4);
		json_object_end(&w);
	}
	{
		const char *from;
		double mhz = clock_mhz(c, &from);

		json_key(&w, "clock"), json_object_begin(&w);
		json_key(&w, "mhz"), json_double(&w, mhz, 0);
		json_key(&w, "from"), json_string(&w, from);
		json_key(&w, "cpuinfo_mhz"), json_double(&w, c->store.meta.cpu_mhz, 0);
		json_object_end(&w);
	}
	json_key(&w, "samples"), json_u64(&w, c->samples);
	json_key(&w, "lost"), json_u64(&w, collector_lost(c));
	json_key(&w, "throttled"), json_u64(&w, c->throttled);
	json_key(&w, "unknown"), json_u64(&w, c->unknown);
	json_key(&w, "unknown_fraction"), json_double(&w, ratio(c->unknown, c->samples), 6);
	json_key(&w, "kernel"), json_u64(&w, c->kernel);
	json_key(&w, "dropped"), json_u64(&w, c->store.st.dropped);
	json_hash(&w, c, s);
	if (c->cg)
		callchain_status_json(c->cg, &w);
	json_key(&w, "cpu_seconds"), json_double(&w, s->cpu_secs, 6);
	json_key(&w, "cpu_us_per_sample"),
		json_double(&w, s->cpu_secs * 1e6 / (double)(c->samples ? c->samples : 1), 6);
	json_key(&w, "cpu_share"), json_double(&w, machine_share(s->cpu_secs, s), 0);
	json_key(&w, "cpus_online"), json_i64(&w, s->online);
	json_key(&w, "overhead"), json_object_begin(&w);
	json_key(&w, "cpu_seconds"), json_double(&w, s->total_secs, 6);
	json_key(&w, "cpu_share"), json_double(&w, machine_share(s->total_secs, s), 0);
	json_key(&w, "dcpid_s"), json_double(&w, s->cpu_secs, 6);
	json_key(&w, "unwinding_s"), json_double(&w, s->worker_secs, 6);
	json_key(&w, "emulating_s"), json_double(&w, s->emulate_secs, 6);
	json_key(&w, "held_stopped_s"), json_double(&w, s->held_secs, 6);
	json_key(&w, "stops"), json_u64(&w, s->stops);
	json_object_end(&w);
	if (s->has_worker) {
		json_key(&w, "worker"), json_object_begin(&w);
		json_key(&w, "cpu_seconds"), json_double(&w, s->worker_secs, 0);
		json_key(&w, "cpu_share"), json_double(&w, machine_share(s->worker_secs, s), 0);
		json_key(&w, "cpu_us_per_sample"),
			json_double(&w, s->worker_secs * 1e6 / (double)(c->samples ? c->samples : 1), 0);
		json_object_end(&w);
	}
	json_key(&w, "rss_bytes"), json_u64(&w, s->rss);
	json_key(&w, "peak_rss_bytes"), json_u64(&w, s->peak_rss);
	json_key(&w, "table_bytes"), json_u64(&w, s->structures);
	json_key(&w, "profiles_in_memory"), json_u64(&w, c->store.n);
	json_key(&w, "profiles_dirty"), json_u64(&w, c->store.dirty);
	json_key(&w, "offsets_in_memory"), json_u64(&w, c->store.entries);
	json_key(&w, "profile_writes"), json_u64(&w, c->store.st.writes);
	json_key(&w, "write_failures"), json_u64(&w, c->store.st.write_failures);
	if (c->values) {
		const struct cvalues_stats *vs = &c->values->st;

		json_key(&w, "values"), json_object_begin(&w);
		json_key(&w, "samples"), json_u64(&w, vs->samples);
		json_key(&w, "pairs"), json_u64(&w, vs->pairs);
		json_key(&w, "unresolved"), json_u64(&w, vs->unresolved);
		json_key(&w, "dropped"), json_u64(&w, vs->dropped);
		json_key(&w, "bytes"), json_u64(&w, c->values->bytes);
		json_key(&w, "max_bytes"), json_u64(&w, c->values->max_bytes);
		json_key(&w, "written_samples"), json_u64(&w, vs->written_samples);
		json_key(&w, "writes"), json_u64(&w, vs->writes);
		json_key(&w, "write_failures"), json_u64(&w, vs->write_failures);
		json_object_end(&w);
	}
	if (c->bursts) {
		const struct burst_stats *bs = &c->bursts->st;
		double el = (double)(time_monotonic_ns() - (c->bursts->started ? c->bursts->started
										   : c->started));

		json_key(&w, "bursts"), json_object_begin(&w);
		json_key(&w, "mode"), json_string(&w, "step");
		json_key(&w, "bursts"), json_u64(&w, bs->bursts);
		json_key(&w, "steps"), json_u64(&w, bs->steps);
		json_key(&w, "time_share"), json_double(&w, el > 0 ? (double)bs->ns / el : 0, 6);
		json_key(&w, "stopped_s"), json_double(&w, (double)bs->ns / 1e9, 6);
		json_key(&w, "elapsed_s"), json_double(&w, el / 1e9, 6);
		json_key(&w, "budget"), json_double(&w, c->bursts->budget, 4);
		json_key(&w, "refused"), json_u64(&w, bs->refused);
		json_key(&w, "syscalls"), json_u64(&w, bs->syscalls);
		json_key(&w, "signals"), json_u64(&w, bs->signals);
		json_key(&w, "trap_masked"), json_u64(&w, bs->trap_masked);
		json_key(&w, "gone"), json_u64(&w, c->bursts->tracer.gone);
		json_key(&w, "written"), json_u64(&w, bs->written);
		json_object_end(&w);
	}
	if (c->emb) {
		json_key(&w, "bursts"), json_object_begin(&w);
		emburst_status_json(c->emb, c->started, &w);
		json_object_end(&w);
		json_key(&w, "emulation"), json_object_begin(&w);
		emu_worker_causes_json(emburst_worker(c->emb), &w);
		json_object_end(&w);
	}
	if (tracer_of(c))
		stops_json(tracer_of(c), &w);
	if (c->whose)
		whose_json(c->whose, &w);
	json_key(&w, "images"), json_u64(&w, c->procs.n_images);
	json_key(&w, "records"), json_u64(&w, c->records);
	json_key(&w, "malformed_records"), json_u64(&w, c->bad_records);
	json_key(&w, "late_records"), json_u64(&w, c->order.late);
	json_object_end(&w);
	json_finish(&w);
}

void collector_status(struct collector *c, struct strbuf *out, bool json)
{
	struct status s;

	gather(c, &s);
	if (json) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		if (!f)
			die_errno("open_memstream");
		json_report(c, &s, f);
		fclose(f);
		strbuf_add(out, buf, len);
		free(buf);
	} else {
		text_report(c, &s, out);
	}
}
