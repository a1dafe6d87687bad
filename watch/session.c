/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * watch/session.c - uprobes and counters through perf_event_open(2)
 * (watch/session.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "collect/order.h"
#include "collect/perf.h"
#include "core/die.h"
#include "core/timeutil.h"
#include "core/u64map.h"
#include "core/xalloc.h"
#include "watch/session.h"

#ifndef PERF_REG_X86_SP
#define PERF_REG_X86_SP 7
#endif
#define PERF_REG_ARM64_SP 31

#define SAMPLE_TYPE \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | \
	 PERF_SAMPLE_READ | PERF_SAMPLE_REGS_USER)
#define READ_FORMAT (PERF_FORMAT_GROUP | PERF_FORMAT_ID)
/* Records older than this behind the clock are handed on (rings are read at most this late). */
#define ORDER_SLACK_NS 20000000

/* ---- events by name ---------------------------------------------------------- */

static const struct {
	const char *name, *alias;
	uint32_t type;
	uint64_t config;
} perf_event_names[] = {
	{ "task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "alignment-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "cycles", "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
};

int watch_evspec_lookup(const char *name, struct watch_evspec *ev)
{
	struct perf_event_attr attr;
	int fd;

	for (size_t i = 0; i < sizeof(perf_event_names) / sizeof(perf_event_names[0]); i++) {
		if (strcmp(name, perf_event_names[i].name) &&
		    (!perf_event_names[i].alias || strcmp(name, perf_event_names[i].alias)))
			continue;
		memset(ev, 0, sizeof(*ev));
		snprintf(ev->name, sizeof(ev->name), "%s", perf_event_names[i].name);
		ev->type = perf_event_names[i].type;
		ev->config = perf_event_names[i].config;
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = ev->type;
		attr.config = ev->config;
		attr.disabled = 1;
		attr.exclude_kernel = 1;
		if ((fd = perf_open(&attr, 0, -1, -1)) < 0)
			return errorf("event '%s' cannot be counted here: %s", name,
				      errno == ENOENT ? "this machine has no such counter (no PMU?)"
						      : perf_strerror(errno, false));
		close(fd);
		return 0;
	}
	return errorf("unknown event '%s' (try task-clock, page-faults, context-switches, "
		      "cpu-migrations, cycles, instructions, cache-misses, branch-misses)", name);
}

/* ---- the session --------------------------------------------------------------- */

enum id_role { ID_COUNTER = 1, ID_SWITCH, ID_POINT };

struct group {
	int cpu;
	int leader;              /* task-clock */
	int *fds;                /* every event of the group */
	size_t nfds;
};

struct watch_session {
	struct watch_session_opts o;
	struct watch_agg *agg;
	struct perf_ring *rings; /* one per CPU */
	size_t nrings;
	struct group *groups;
	size_t ngroups;
	struct u64map ids;       /* event id -> role << 32 | index */
	struct order_queue q;
	uint32_t *kprobe_type;   /* NULL until needed */
	char *tracefs;           /* where uprobe_events is, if the probes are trace events */
	uint64_t *tp_ids;        /* their trace event ids, per point */
	bool *tp_made;           /* which points have a trace event to remove */
	bool inherit;            /* the probes follow new threads and processes */
	uint64_t lost, garbled;
	unsigned sp_reg;         /* index of the stack pointer in the sampled registers */
	uint64_t regs_mask;
	bool warned_order;
};

static uint32_t pmu_type(const char *pmu)
{
	char path[128];
	FILE *f;
	unsigned t;
	int ok;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", pmu);
	if (!(f = fopen(path, "re")))
		return 0;
	ok = fscanf(f, "%u", &t) == 1;
	fclose(f);
	return ok ? t : 0;
}

static void attr_common(struct perf_event_attr *a, bool inherit)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->inherit = inherit;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->read_format = READ_FORMAT;
	a->exclude_hv = 1;
}

static void attr_sampling(struct watch_session *s, struct perf_event_attr *a)
{
	a->sample_period = 1;
	a->sample_type = SAMPLE_TYPE;
	if (s->o.pid < 0) {
		a->sample_type &= ~(uint64_t)PERF_SAMPLE_READ;
		a->read_format = 0;
	}
	a->sample_regs_user = s->regs_mask;
	a->sample_id_all = 1;
	a->watermark = 1;
	a->wakeup_watermark = 16384;
}

/* The context switches, every one sampled, with the comm and task records. */
static void attr_switches(struct watch_session *s, struct perf_event_attr *a, bool inherit)
{
	attr_common(a, inherit);
	attr_sampling(s, a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	a->comm = 1;
	a->task = 1;
}

static void id_add(struct watch_session *s, int fd, enum id_role role, uint32_t index)
{
	uint64_t id;

	if (perf_event_id(fd, &id))
		die_errno("PERF_EVENT_IOC_ID");
	*u64map_slot(&s->ids, id) = (uint64_t)role << 32 | index;
}

static void group_add(struct group *g, int fd)
{
	g->fds = xreallocarray(g->fds, g->nfds + 1, sizeof(*g->fds));
	g->fds[g->nfds++] = fd;
}

/* Closes every event of the group. */
static void group_close(struct group *g)
{
	for (size_t i = 0; i < g->nfds; i++)
		close(g->fds[i]);
	free(g->fds);
}

static const char *point_name(const struct watch_session *s, const struct watch_point *p)
{
	return s->o.plan->t[p->target].spec;
}

/* ---- probes as trace events -------------------------------------------------------- */

/*
 * The uprobe event source takes the binary's path as a pointer into the
 * caller's memory, and reads it again whenever an inherited copy of the
 * event is made: at every fork and thread creation in the watched tree,
 * in that process's memory, where the pointer means nothing (the kernel
 * fails the fork with EFAULT).  So the probes are made as trace events
 * (tracefs uprobe_events, as perf probe does), which inherit by number.
 */
static const char *const tracefs_dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

static char *find_tracefs(void)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < 2; i++) {
			char *f = xasprintf("%s/uprobe_events", tracefs_dirs[i]);

			if (!access(f, W_OK)) {
				free(f);
				return xstrdup(tracefs_dirs[i]);
			}
			free(f);
		}
		/* Not mounted: mount it where the kernel expects it (root only). */
		if (pass == 0 && mount("nodev", tracefs_dirs[0], "tracefs", 0, NULL))
			break;
	}
	return NULL;
}

static int uprobe_events_write(const char *tracefs, const char *line)
{
	char *f = xasprintf("%s/uprobe_events", tracefs);
	/* O_APPEND: opening it for writing without would delete every uprobe event there is. */
	int fd = open(f, O_WRONLY | O_APPEND | O_CLOEXEC), r = 0;

	free(f);
	if (fd < 0)
		return -1;
	if (write(fd, line, strlen(line)) != (ssize_t)strlen(line))
		r = -1;
	close(fd);
	return r;
}

static int read_u64_file(const char *path, uint64_t *v)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%" SCNu64, v) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

/* Removes the trace events of dcpiwatch processes that died without removing theirs. */
static void remove_stale(const char *tracefs)
{
	char *dir = xasprintf("%s/events", tracefs);
	DIR *d = opendir(dir);
	struct dirent *e;
	int pid;

	free(dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		char *sub, *line;
		DIR *g;
		struct dirent *ev;

		if (sscanf(e->d_name, "dcpiwatch_%d", &pid) != 1 || pid <= 0 ||
		    !kill(pid, 0) || errno != ESRCH)
			continue;
		sub = xasprintf("%s/events/%s", tracefs, e->d_name);
		if ((g = opendir(sub))) {
			while ((ev = readdir(g)))
				if (ev->d_name[0] == 'p') {
					line = xasprintf("-:%s/%s\n", e->d_name, ev->d_name);
					uprobe_events_write(tracefs, line);
					free(line);
				}
			closedir(g);
		}
		free(sub);
	}
	closedir(d);
}

static int make_trace_events(struct watch_session *s)
{
	const struct watch_plan *plan = s->o.plan;
	char group[32];

	snprintf(group, sizeof(group), "dcpiwatch_%d", (int)getpid());
	s->tp_ids = xcalloc(plan->np, sizeof(*s->tp_ids));
	s->tp_made = xcalloc(plan->np, sizeof(*s->tp_made));
	remove_stale(s->tracefs);
	for (size_t i = 0; i < plan->np; i++) {
		const struct watch_point *p = &plan->p[i];
		const struct watch_target *t = &plan->t[p->target];
		const char *path = p->role == WP_TO ? t->path_b : t->path;
		char *line, *idf;

		if (p->ksym || strpbrk(path, " \t\n:"))
			return -1;
		line = xasprintf("%c:%s/p%zu %s:%#" PRIx64 "\n", p->role == WP_RETURN ? 'r' : 'p',
				 group, i, path, p->offset);
		if (uprobe_events_write(s->tracefs, line)) {
			warning_errno("cannot make the probe '%.*s'", (int)strlen(line) - 1, line);
			free(line);
			return -1;
		}
		free(line);
		s->tp_made[i] = true;
		idf = xasprintf("%s/events/%s/p%zu/id", s->tracefs, group, i);
		if (read_u64_file(idf, &s->tp_ids[i])) {
			warning_errno("cannot read '%s'", idf);
			free(idf);
			return -1;
		}
		free(idf);
	}
	return 0;
}

static void remove_trace_events(struct watch_session *s)
{
	char group[32];

	if (!s->tp_made)
		return;
	snprintf(group, sizeof(group), "dcpiwatch_%d", (int)getpid());
	for (size_t i = 0; i < s->o.plan->np; i++)
		if (s->tp_made[i]) {
			char *line = xasprintf("-:%s/p%zu\n", group, i);

			if (uprobe_events_write(s->tracefs, line))
				warning_errno("cannot remove the probe %s/p%zu", group, i);
			free(line);
		}
	free(s->tp_made);
	free(s->tp_ids);
	s->tp_made = NULL;
	s->tp_ids = NULL;
}

/* Trace events when tracefs lets us make them; else the uprobe event source, without inherit. */
static void choose_probes(struct watch_session *s)
{
	bool kernel = false;

	for (size_t i = 0; i < s->o.plan->np; i++)
		kernel |= s->o.plan->p[i].ksym != NULL;
	s->inherit = s->o.pid > 0;
	if (!s->inherit || kernel)
		return;
	if ((s->tracefs = find_tracefs()) && !make_trace_events(s))
		return;
	remove_trace_events(s);
	s->inherit = false;
	warning("cannot make the probes as trace events (tracefs%s): threads and processes "
		"started while watching are not watched", s->tracefs ? "" : " not writable");
}

static int probe_attr(struct watch_session *s, const struct watch_point *p,
		      struct perf_event_attr *a, bool inherit)
{
	const struct watch_target *t = &s->o.plan->t[p->target];
	static uint32_t uprobe_type;

	attr_common(a, inherit);
	attr_sampling(s, a);
	if (s->tp_ids) {
		a->type = PERF_TYPE_TRACEPOINT;
		a->config = s->tp_ids[p - s->o.plan->p];
		return 0;
	}
	if (p->ksym) {
		if (!s->kprobe_type) {
			s->kprobe_type = xmalloc(sizeof(*s->kprobe_type));
			*s->kprobe_type = pmu_type("kprobe");
		}
		if (!*s->kprobe_type)
			return errorf("'%s': kernel functions need kprobes, and this kernel has none "
				      "(no kprobe event source in /sys/bus/event_source/devices: "
				      "built without CONFIG_KPROBES)", t->spec);
		a->type = *s->kprobe_type;
		a->config1 = (uint64_t)(uintptr_t)p->ksym;
		a->config = p->role == WP_RETURN;
		return 0;
	}
	if (!uprobe_type && !(uprobe_type = pmu_type("uprobe")))
		return errorf("this kernel has no uprobes (no uprobe event source in "
			      "/sys/bus/event_source/devices: built without CONFIG_UPROBE_EVENTS)");
	a->type = uprobe_type;
	a->config = p->role == WP_RETURN;
	a->config1 = (uint64_t)(uintptr_t)(p->role == WP_TO ? t->path_b : t->path);
	a->config2 = p->offset;
	return 0;
}

static int open_error(struct watch_session *s, const char *what, int err)
{
	if (err == EACCES || err == EPERM)
		return errorf("cannot open %s: %s: uprobes%s need CAP_PERFMON or CAP_SYS_ADMIN "
			      "(run as root, or grant the capability)%s",
			      what, strerror(err), s->o.pid < 0 ? " and -a" : "",
			      s->o.pid > 0 ? "; and a process must be one you may trace" : "");
	if (err == ESRCH)
		return errorf("cannot open %s: the process is gone", what);
	return errorf("cannot open %s: %s", what, perf_strerror(err, s->o.pid < 0));
}

/* The ring of this CPU: the first switches event opened on it maps it. */
static int attach_output(struct watch_session *s, size_t ri, int fd)
{
	if (s->rings[ri].fd < 0) {
		if (perf_ring_map(&s->rings[ri], fd, s->rings[ri].cpu, s->o.ring_pages))
			return -1;
		return 0;
	}
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->rings[ri].fd))
		return errorf_errno("cannot share the ring buffer of CPU %d", s->rings[ri].cpu);
	return 0;
}

/*
 * The probes of every point in group g (of pid, or -1: every process, on
 * g's CPU; in the group of group_fd, or -1), their samples into ring ri;
 * then g joins the session.  -1 after saying why (the caller closes g's
 * descriptors).
 */
static int open_points(struct watch_session *s, struct group *g, size_t ri, pid_t pid,
		       int group_fd, bool inherit)
{
	struct perf_event_attr a;
	int fd;

	for (size_t i = 0; i < s->o.plan->np; i++) {
		const struct watch_point *p = &s->o.plan->p[i];

		if (probe_attr(s, p, &a, inherit))
			return -1;
		if ((fd = perf_open(&a, pid, g->cpu, group_fd)) < 0) {
			char *what = xasprintf("a probe at %#" PRIx64 " of '%s'", p->vaddr,
					       point_name(s, p));

			open_error(s, what, errno);
			free(what);
			return -1;
		}
		group_add(g, fd);
		id_add(s, fd, ID_POINT, (uint32_t)i);
		if (attach_output(s, ri, fd))
			return -1;
	}
	s->groups = xreallocarray(s->groups, s->ngroups + 1, sizeof(*s->groups));
	s->groups[s->ngroups++] = *g;
	return 0;
}

/*
 * System-wide: uprobes grouped with counters on a CPU never fire (Linux
 * 6.18), so every event stands alone and no sample reads counters.  The
 * on-CPU time comes from the samples' times instead: a thread has run from
 * the previous sample on its CPU (every switch is sampled) to its own.
 */
static int open_cpu(struct watch_session *s, size_t ri)
{
	struct perf_event_attr a;
	struct group g = { s->rings[ri].cpu, -1, NULL, 0 };

	attr_switches(s, &a, false);
	if ((g.leader = perf_open(&a, -1, g.cpu, -1)) < 0)
		return open_error(s, "the context-switch counter", errno);
	group_add(&g, g.leader);
	id_add(s, g.leader, ID_SWITCH, 0);
	if (attach_output(s, ri, g.leader))
		goto fail;
	if (open_points(s, &g, ri, -1, -1, false))
		goto fail;
	return 0;
fail:
	group_close(&g);
	return -1;
}

static int open_group(struct watch_session *s, pid_t pid, size_t ri)
{
	struct perf_event_attr a;
	struct group g = { s->rings[ri].cpu, -1, NULL, 0 };
	bool inherit = s->inherit;
	int cpu = g.cpu, fd;

	if (pid < 0)
		return open_cpu(s, ri);
	attr_common(&a, inherit);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	if ((g.leader = perf_open(&a, pid, cpu, -1)) < 0)
		return open_error(s, "the task-clock counter", errno);
	group_add(&g, g.leader);
	id_add(s, g.leader, ID_COUNTER, 0);
	for (unsigned k = 0; k < s->o.nevents; k++) {
		attr_common(&a, inherit);
		a.type = s->o.events[k].type;
		a.config = s->o.events[k].config;
		if ((fd = perf_open(&a, pid, cpu, g.leader)) < 0)
			goto fail_event;
		group_add(&g, fd);
		id_add(s, fd, ID_COUNTER, k + 1);
	}
	attr_switches(s, &a, inherit);
	if ((fd = perf_open(&a, pid, cpu, g.leader)) < 0)
		goto fail_switch;
	group_add(&g, fd);
	id_add(s, fd, ID_SWITCH, 0);
	if (attach_output(s, ri, fd))
		goto fail;
	if (open_points(s, &g, ri, pid, g.leader, inherit))
		goto fail;
	return 0;
fail_event:
	open_error(s, s->o.events[g.nfds - 1].name, errno);
	goto fail;
fail_switch:
	open_error(s, "the context-switch counter", errno);
fail:
	group_close(&g);
	return -1;
}

/* The threads of pid now (for -p); sorted, caller frees. */
static size_t list_threads(pid_t pid, pid_t **out)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	size_t n = 0;

	*out = NULL;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return 0;
	while ((e = readdir(d)))
		if (e->d_name[0] >= '0' && e->d_name[0] <= '9') {
			*out = xreallocarray(*out, n + 1, sizeof(**out));
			(*out)[n++] = (pid_t)atoi(e->d_name);
		}
	closedir(d);
	return n;
}

static void thread_comm(struct watch_session *s, pid_t pid, pid_t tid)
{
	char path[96], comm[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	if ((f = fopen(path, "re"))) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	watch_agg_comm(s->agg, (uint32_t)pid, (uint32_t)tid, comm);
}

/* -p: every thread, until a scan finds no new one (threads made meanwhile are inherited). */
static int open_threads(struct watch_session *s)
{
	pid_t *done = NULL, *now;
	size_t ndone = 0, n;
	bool added;

	do {
		added = false;
		n = list_threads(s->o.pid, &now);
		if (!n && !ndone) {
			free(now);
			return errorf("no process %d", (int)s->o.pid);
		}
		for (size_t i = 0; i < n; i++) {
			bool seen = false;

			for (size_t k = 0; k < ndone; k++)
				seen |= done[k] == now[i];
			if (seen)
				continue;
			for (size_t r = 0; r < s->nrings; r++)
				if (open_group(s, now[i], r)) {
					free(now);
					free(done);
					return -1;
				}
			thread_comm(s, s->o.pid, now[i]);
			done = xreallocarray(done, ndone + 1, sizeof(*done));
			done[ndone++] = now[i];
			added = true;
		}
		free(now);
	} while (added);
	free(done);
	return 0;
}

static void raise_nofile(size_t want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

struct watch_session *watch_session_open(const struct watch_session_opts *opts,
					 struct watch_agg *agg)
{
	struct watch_session *s = xcalloc(1, sizeof(*s));
	int *cpus;
	size_t ncpus;

	s->o = *opts;
	s->agg = agg;
	u64map_init(&s->ids);
	order_init(&s->q);
#if defined(__aarch64__)
	s->regs_mask = 1ull << PERF_REG_ARM64_SP;
#else
	s->regs_mask = 1ull << PERF_REG_X86_SP;
#endif
	if (perf_online_cpus(&cpus, &ncpus)) {
		free(s);
		return NULL;
	}
	s->rings = xcalloc(ncpus, sizeof(*s->rings));
	s->nrings = ncpus;
	for (size_t i = 0; i < ncpus; i++) {
		s->rings[i].fd = -1;
		s->rings[i].cpu = cpus[i];
	}
	free(cpus);
	raise_nofile(4096 + ncpus * (8 + opts->nevents + opts->plan->np) * 8);
	choose_probes(s);
	if (opts->pid > 0 && opts->attach) {
		if (open_threads(s))
			goto fail;
	} else {
		for (size_t r = 0; r < s->nrings; r++)
			if (open_group(s, opts->pid, r))
				goto fail;
	}
	return s;
fail:
	watch_session_free(s);
	return NULL;
}

void watch_session_free(struct watch_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nrings; i++)
		if (s->rings[i].fd >= 0)
			perf_ring_unmap(&s->rings[i]);
	for (size_t i = 0; i < s->ngroups; i++)
		group_close(&s->groups[i]);
	free(s->groups);
	remove_trace_events(s);
	free(s->tracefs);
	free(s->rings);
	free(s->kprobe_type);
	u64map_release(&s->ids);
	order_release(&s->q);
	free(s);
}

size_t watch_session_pollfds(struct watch_session *s, struct pollfd *fds, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nrings && n < max; i++)
		if (s->rings[i].fd >= 0) {
			fds[n].fd = s->rings[i].fd;
			fds[n].events = POLLIN;
			fds[n].revents = 0;
			n++;
		}
	return n;
}

/* ---- records ------------------------------------------------------------------------ */

/* The time of a record (samples: after identifier and tid; others: sample_id_all's). */
static uint64_t record_time(const struct perf_event_header *h)
{
	const uint8_t *b = (const uint8_t *)h;

	if (h->type == PERF_RECORD_SAMPLE)
		return h->size >= 32 ? *(const uint64_t *)(b + 24) : 0;
	/* sample_id: tid, time, cpu, identifier */
	return h->size >= 8 + 32 ? *(const uint64_t *)(b + h->size - 24) : 0;
}

static void queue_record(void *ctx, int cpu, const struct perf_event_header *h)
{
	struct watch_session *s = ctx;

	if (h->type == PERF_RECORD_LOST) {
		const uint64_t *u = (const uint64_t *)(h + 1);

		if (h->size >= 8 + 16)
			s->lost += u[1];
		return;
	}
	if (h->type != PERF_RECORD_SAMPLE && h->type != PERF_RECORD_COMM &&
	    h->type != PERF_RECORD_EXIT)
		return;
	order_push(&s->q, cpu, record_time(h), h, h->size);
}

static bool parse_sample(struct watch_session *s, const uint8_t *b, size_t len,
			 struct watch_sample *out)
{
	const uint64_t *u = (const uint64_t *)(b + 8), *end = (const uint64_t *)(b + len);
	uint64_t id, role, nr, idx;

	memset(out, 0, sizeof(*out));
	if (len < 8 + 8 * 5)
		return false;
	id = u[0];
	out->pid = (uint32_t)u[1];
	out->tid = (uint32_t)(u[1] >> 32);
	out->time = u[2];
	out->cpu = (uint32_t)u[3];
	/* System-wide: no counters; the CPU's "counter" is the clock. */
	nr = s->o.pid < 0 ? 0 : u[4];
	u += s->o.pid < 0 ? 4 : 5;
	if (s->o.pid < 0)
		out->vals[0] = out->time;
	if (nr > 4096 || (size_t)(end - u) < 2 * nr + 1)
		return false;
	for (uint64_t i = 0; i < nr; i++, u += 2)
		if (u64map_get(&s->ids, u[1], &idx) && idx >> 32 == ID_COUNTER &&
		    (uint32_t)idx < WATCH_MAX_VALS)
			out->vals[(uint32_t)idx] = u[0];
	/* regs_user: abi, then the stack pointer (abi 0: a kernel thread, no user registers) */
	if (end - u >= 2 && u[0])
		out->sp = u[1];
	if (!u64map_get(&s->ids, id, &role))
		return false;
	if (role >> 32 == ID_POINT)
		out->point = (int)(uint32_t)role;
	else if (role >> 32 == ID_SWITCH)
		out->point = -1;
	else
		return false;
	return true;
}

static void handle(void *ctx, int cpu, const void *rec, size_t len)
{
	struct watch_session *s = ctx;
	const struct perf_event_header *h = rec;
	const uint32_t *w = (const uint32_t *)(h + 1);
	struct watch_sample smp;

	(void)cpu;
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		if (parse_sample(s, rec, len, &smp))
			watch_agg_sample(s->agg, &smp);
		else
			s->garbled += len;
		break;
	case PERF_RECORD_COMM:
		if (len > 8 + 8 + 1) {
			char comm[32];
			size_t n = len - 16 < sizeof(comm) - 1 ? len - 16 : sizeof(comm) - 1;

			memcpy(comm, w + 2, n);
			comm[n] = 0;
			watch_agg_comm(s->agg, w[0], w[1], comm);
		}
		break;
	case PERF_RECORD_EXIT:
		/* pid, ppid, tid, ptid, time */
		if (len >= 8 + 24)
			watch_agg_exit(s->agg, w[0], w[2], *(const uint64_t *)(w + 4));
		break;
	}
}

void watch_session_read(struct watch_session *s, bool drain)
{
	uint64_t now = (uint64_t)time_monotonic_ns();

	for (size_t i = 0; i < s->nrings; i++)
		if (s->rings[i].fd >= 0)
			perf_ring_read(&s->rings[i], queue_record, s, &s->garbled);
	order_flush(&s->q, drain ? UINT64_MAX : now - ORDER_SLACK_NS, handle, s);
	if (s->q.late && !s->warned_order) {
		warning("%" PRIu64 " records arrived after later ones were handled (a loaded "
			"machine?): some calls may pair wrongly", s->q.late);
		s->warned_order = true;
	}
}

void watch_session_counts(const struct watch_session *s, struct watch_session_counts *c)
{
	c->lost = s->lost;
	c->garbled = s->garbled;
	c->late = s->q.late;
}

int watch_session_hits(struct watch_session *s, uint64_t *hits)
{
	size_t np = s->o.plan->np, nmax = 2 * (np + s->o.nevents + 4) + 1;
	uint64_t *buf = xcalloc(nmax, sizeof(*buf));
	int r = 0;

	memset(hits, 0, np * sizeof(*hits));
	for (size_t i = 0; i < s->ngroups; i++) {
		ssize_t got;
		uint64_t idx;

		if (s->o.pid < 0) {
			/* every event alone: probes are fds 1.. in plan order */
			for (size_t k = 1; k < s->groups[i].nfds && k <= np; k++) {
				uint64_t v;

				if (read(s->groups[i].fds[k], &v, sizeof(v)) == (ssize_t)sizeof(v))
					hits[k - 1] += v;
			}
			continue;
		}
		got = read(s->groups[i].leader, buf, nmax * sizeof(*buf));
		if (got < 8 || (size_t)got < (1 + 2 * buf[0]) * 8) {
			r = errorf_errno("cannot read the probes' counts");
			break;
		}
		for (uint64_t k = 0; k < buf[0]; k++)
			if (u64map_get(&s->ids, buf[2 + 2 * k], &idx) && idx >> 32 == ID_POINT &&
			    (uint32_t)idx < np)
				hits[(uint32_t)idx] += buf[1 + 2 * k];
	}
	free(buf);
	return r;
}
