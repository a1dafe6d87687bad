/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dcpid - the dcpi daemon: samples every CPU and keeps the profile
 * database up to date.
 *
 *   dcpid [-d DIR] [-e EVENTS] [-F HZ|-c PERIOD] [--foreground] [--socket PATH] ...
 *         [--max-size SIZE] [--max-age DAYS] [--config FILE]
 *
 * With --max-size or --max-age it removes the oldest epochs (and the
 * binary snapshots no epoch uses any more) after every flush and at least
 * once a minute (db/upkeep.h: never the current epoch, crash-safely).
 * --config reads the same options from a root-owned file (core/cli.h
 * cli_config_load); SIGHUP flushes and re-reads its retention settings.
 *
 * It never runs another program and never parses ELF or DWARF; its
 * database is fixed at start; one instance per database (the database's
 * writer lock).  Controlled through a Unix socket (collect/ctl.h, dcpictl).
 */
#include "config.h"
#include "collect/collector.h"
#include "collect/ctl.h"
#include "core/cli.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/timeutil.h"
#include "core/xalloc.h"
#include "db/db.h"
#include "db/upkeep.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <syslog.h>
#include <unistd.h>

#define MAX_CLIENTS 8
#define CLIENT_TIMEOUT_NS (2 * (int64_t)1000000000)
/* Retention runs after every flush and at least this often. */
#define RETAIN_INTERVAL_NS (60 * (int64_t)1000000000)
#define NS_PER_DAY (86400.0 * 1e9)

struct client {
	int fd;
	bool denied;                /* SO_PEERCRED said no: answer with an error */
	uid_t uid;
	int64_t deadline;
	char buf[CTL_REQUEST_MAX + 1];
	size_t len;
};

struct daemon {
	const char *dir, *socket, *label, *config;
	bool foreground, new_epoch;
	uint64_t max_size;          /* --max-size (0: none) */
	double max_age_days;        /* --max-age (0: none) */
	struct collect_retention retention;
	int64_t next_retain;        /* monotonic ns; 0: no retention */
	uint32_t warned_over;       /* the epoch the over-limit warning was given for */
	struct ctl_access access;
	struct collect_options opt;
	struct db *db;
	struct collector *c;
	int listen_fd, sigfd;
	struct client clients[MAX_CLIENTS];
	bool quit, finished;
	int status;                 /* exit status */
	struct strbuf *capture;     /* error messages for the current request */
};

static struct daemon *the_daemon;

/* ---- setup ------------------------------------------------------------------ */

static int group_option(const struct cli_option *o, const char *name)
{
	struct daemon *d = o->value;
	struct group *g = getgrnam(name);
	uint64_t v;

	if (g)
		d->access.gid = g->gr_gid;
	else if (!cli_parse_range(name, 0, UINT32_MAX - 1, &v))
		d->access.gid = (gid_t)v;
	else
		return errorf("unknown group '%s'", name);
	d->access.has_group = true;
	return 0;
}

/* dcpid's option table over d (a macro: parse_args and the reload both need one). */
#define DCPID_OPTIONS(d) {                                                                  \
	OPT_DB(&(d)->dir),                                                                  \
	COLLECT_OPTIONS(&(d)->opt),                                                         \
	OPT_BOOL('f', "foreground", &(d)->foreground,                                       \
		 "stay in the foreground and log to stderr (for systemd)"),                 \
	OPT_STRING(0, "socket", &(d)->socket, "PATH",                                       \
		   "the control socket (default: " CTL_DEFAULT_SOCKET ")"),                 \
	OPT_CALLBACK(0, "group", (d), "GROUP", "let GROUP use the socket too (mode 0660)",  \
		     group_option),                                                         \
	OPT_STRING(0, "label", &(d)->label, "L", "start a new epoch labelled L"),           \
	OPT_BOOL(0, "new-epoch", &(d)->new_epoch,                                           \
		 "start a new epoch (default: continue the current one)"),                  \
	OPT_GROUP("Retention (oldest epochs first; never the current one):"),               \
	OPT_SIZE(0, "max-size", &(d)->max_size, "SIZE",                                     \
		 "keep the database under SIZE (bytes, or K, M, G, T)"),                    \
	OPT_DOUBLE(0, "max-age", &(d)->max_age_days, "DAYS",                                \
		   "remove epochs that ended more than DAYS ago", 0, "number of days"),     \
	OPT_STRING(0, "config", &(d)->config, "FILE",                                       \
		   "read options from FILE first (root's, writable by no one\n"             \
		   "else; NAME = VALUE lines; SIGHUP re-reads its retention)"),             \
	OPT_END()                                                                           \
}

/* Options the configuration file cannot set: the unit's command line fixes them. */
static const char *const not_in_config[] = { "db", "socket", "config", "foreground", NULL };

static const struct cli_command dcpid_command = {
	.usage = "dcpid [-d DIR] [-e EVENTS] [-F HZ|-c PERIOD] [--foreground] [--socket PATH] [OPTIONS]",
	.about = "Samples every CPU and keeps the profile database DIR up to date.",
	.max_args = -1,
};

/* The --config argument, found before the real parse so that the command line wins. */
static const char *config_arg(int argc, char **argv)
{
	const char *path = NULL;

	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strncmp(argv[i], "--config=", 9))
			path = argv[i] + 9;
		else if (!strcmp(argv[i], "--config") && i + 1 < argc)
			path = argv[++i];
	}
	return path;
}

static void set_retention(struct daemon *d)
{
	struct db_retention *r = &d->retention.limits;

	r->max_bytes = d->max_size;
	r->max_age_ns = (int64_t)llround(d->max_age_days * NS_PER_DAY);
}

static void parse_args(struct daemon *d, int argc, char **argv)
{
	int first;
	const struct cli_option options[] = DCPID_OPTIONS(d);
	struct cli_command cmd = dcpid_command;
	const char *config = config_arg(argc, argv);

	cmd.options = options;
	if (config && cli_config_load(&cmd, config, not_in_config))
		exit(1);
	first = cli_parse(argc, argv, &cmd);
	if (first < argc)
		die("unexpected argument '%s' (dcpid runs no command; see dcpirun)", argv[first]);
	/* SIGHUP re-reads it after the daemon has changed to /. */
	if (config && !(d->config = realpath(config, NULL)))
		die_errno("cannot resolve '%s'", config);
	if (d->label && collect_check_label(d->label))
		exit(1);
	if (d->label)
		d->new_epoch = true;
	set_retention(d);
}

/*
 * SIGHUP: re-reads the retention settings of the configuration file (the
 * rest takes a restart); a bad file keeps the settings in force.
 */
static void reload_retention(struct daemon *d)
{
	struct daemon scratch;
	const struct cli_option options[] = DCPID_OPTIONS(&scratch);
	struct cli_command cmd = dcpid_command;

	if (!d->config)
		return;
	memset(&scratch, 0, sizeof(scratch));
	collect_options_init(&scratch.opt);
	cmd.options = options;
	if (cli_config_load(&cmd, d->config, not_in_config)) {
		warning("keeping the retention in force: %s could not be read", d->config);
		return;
	}
	d->max_size = scratch.max_size;
	d->max_age_days = scratch.max_age_days;
	set_retention(d);
}

/* Continue the current epoch if an earlier dcpid was writing it. */
static uint32_t epoch_to_continue(struct daemon *d)
{
	struct epoch_meta m;
	uint32_t cur;
	bool ours;

	if (d->new_epoch || db_epoch_current(d->db, &cur) || !cur || db_meta_load(d->db, cur, &m))
		return 0;
	ours = !m.command;  /* dcpirun's epochs name their command */
	epoch_meta_release(&m);
	return ours ? cur : 0;
}

static void syslog_report(enum report_level level, const char *msg)
{
	static const int prio[] = { LOG_WARNING, LOG_ERR, LOG_CRIT };

	if (the_daemon && the_daemon->capture && level != REPORT_WARNING)
		strbuf_addf(the_daemon->capture, "%s%s", the_daemon->capture->len ? "; " : "", msg);
	syslog(prio[level], "%s", msg);
}

static void stderr_report(enum report_level level, const char *msg)
{
	static const char *const prefix[] = { "warning: ", "error: ", "fatal: " };

	if (the_daemon && the_daemon->capture && level != REPORT_WARNING)
		strbuf_addf(the_daemon->capture, "%s%s", the_daemon->capture->len ? "; " : "", msg);
	fprintf(stderr, "%s: %s%s\n", progname(), prefix[level], msg);
}

/*
 * Classic daemon: the parent waits until the child is ready (or failed) so
 * that start-up errors still reach the terminal, then exits.
 */
static int daemonize(int *ready_fd)
{
	int p[2];
	pid_t pid;
	char status = 1;

	if (pipe2(p, O_CLOEXEC))
		die_errno("cannot create a pipe");
	fflush(NULL);
	if ((pid = fork()) < 0)
		die_errno("cannot fork");
	if (pid) {
		close(p[1]);
		if (read(p[0], &status, 1) != 1)
			status = 1;
		_exit(status);
	}
	close(p[0]);
	setsid();
	*ready_fd = p[1];
	return 0;
}

static void detach(struct daemon *d, int ready_fd)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	char ok = 0;
	char buf[32];

	/* The lock file names the writer: now this process. */
	snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(d->db->lockfd, 0) || pwrite(d->db->lockfd, buf, strlen(buf), 0) < 0)
		warning_errno("cannot update the lock file of '%s'", d->dir);
	openlog("dcpid", LOG_PID, LOG_DAEMON);
	set_report_routine(syslog_report);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		close(null);
	}
	if (chdir("/"))
		warning_errno("cannot chdir to /");
	if (write(ready_fd, &ok, 1) != 1)
		warning_errno("cannot tell the parent that dcpid is ready");
	close(ready_fd);
}

static int setup_signals(void)
{
	sigset_t mask;
	int fd;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	/* A thread whose burst stop came late stops at last: let it go at once (tracer_poll). */
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if ((fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) < 0)
		die_errno("signalfd");
	return fd;
}

/* ---- retention --------------------------------------------------------------- */

/* What the daemon did of its own accord: to the journal (stderr) or syslog. */
static void __attribute__((format(printf, 2, 3))) notice(struct daemon *d, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (d->foreground)
		fprintf(stderr, "%s: %s\n", progname(), sb.buf);
	else
		syslog(LOG_NOTICE, "%s", sb.buf);
	strbuf_release(&sb);
}

/*
 * Applies --max-size and --max-age: after every flush, at each new epoch
 * and at least once a minute.  Failures are warnings: it runs again.
 */
static void retain(struct daemon *d)
{
	struct collect_retention *r = &d->retention;
	struct db_prune_stats before = r->removed;
	struct collect_summary s;
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	int64_t t0 = time_monotonic_ns();
	uint64_t bytes = 0;

	if (db_retention_empty(&r->limits)) {
		d->next_retain = 0;
		return;
	}
	d->next_retain = time_monotonic_ns() + RETAIN_INTERVAL_NS;
	collector_summary(d->c, &s);
	if (db_retain(d->db, &r->limits, s.epoch, &r->removed, &bytes))
		warning("the retention of '%s' did not finish (it runs again within a minute)",
			d->dir);
	if (r->removed.epochs != before.epochs || r->removed.binaries != before.binaries) {
		r->last_ns = time_now_ns();
		strbuf_add_size(&a, r->removed.epoch_bytes - before.epoch_bytes +
				r->removed.binary_bytes - before.binary_bytes);
		strbuf_add_size(&b, bytes);
		notice(d, "retention: removed %" PRIu64 " epochs up to %" PRIu32 " and %" PRIu64
		       " snapshots (%s) in %.0f ms; '%s' uses %s", r->removed.epochs - before.epochs,
		       r->removed.last_seq, r->removed.binaries - before.binaries, a.buf,
		       (double)(time_monotonic_ns() - t0) / 1e6, d->dir, b.buf);
	}
	r->over_limit = r->limits.max_bytes && bytes > r->limits.max_bytes;
	if (r->over_limit && d->warned_over != s.epoch) {
		strbuf_reset(&a);
		strbuf_reset(&b);
		strbuf_add_size(&a, bytes);
		strbuf_add_size(&b, r->limits.max_bytes);
		warning("'%s' uses %s, more than --max-size %s: what is left is the current "
			"epoch %" PRIu32 ", which stays", d->dir, a.buf, b.buf, s.epoch);
		d->warned_over = s.epoch;
	}
	strbuf_release(&a);
	strbuf_release(&b);
}

/* ---- requests ------------------------------------------------------------------ */

static void reply(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

static void reply_error(int fd, const char *msg)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "error %s\n", msg);
	reply(fd, sb.buf, sb.len);
	strbuf_release(&sb);
}

/* Runs one request; the reply body goes to out, errors are captured. */
static int execute(struct daemon *d, const struct ctl_request *req, struct strbuf *out)
{
	switch (req->verb) {
	case CTL_STATUS:
		collector_status(d->c, out, req->json);
		return 0;
	case CTL_FLUSH:
		if (collector_flush(d->c))
			return -1;
		retain(d);
		strbuf_addstr(out, "flushed\n");
		return 0;
	case CTL_EPOCH: {
		struct collect_summary s;

		if (collector_new_epoch(d->c, req->label[0] ? req->label : NULL))
			return -1;
		retain(d);
		collector_summary(d->c, &s);
		strbuf_addf(out, "epoch %" PRIu32 "\n", s.epoch);
		return 0;
	}
	case CTL_QUIT:
		/* Answer once everything is on disk. */
		d->quit = d->finished = true;
		if (collector_finish(d->c)) {
			d->status = 1;
			return -1;
		}
		strbuf_addstr(out, "stopped\n");
		return 0;
	}
	return -1;
}

static void handle_request(struct daemon *d, struct client *cl)
{
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	struct ctl_request req;
	const char *why;

	if (cl->denied) {
		warning("refused a control request from uid %ld", (long)(int)cl->uid);
		reply_error(cl->fd, "permission denied");
	} else if (ctl_parse(cl->buf, cl->len, &req, &why)) {
		reply_error(cl->fd, why);
	} else {
		d->capture = &err;
		if (execute(d, &req, &out)) {
			reply_error(cl->fd, err.len ? err.buf : "request failed");
		} else {
			reply(cl->fd, "ok\n", 3);
			reply(cl->fd, out.buf, out.len);
		}
		d->capture = NULL;
	}
	strbuf_release(&out);
	strbuf_release(&err);
}

static void drop_client(struct client *cl)
{
	close(cl->fd);
	cl->fd = -1;
}

static void read_client(struct daemon *d, struct client *cl)
{
	ssize_t n = read(cl->fd, cl->buf + cl->len, sizeof(cl->buf) - cl->len);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0)
		cl->len += (size_t)n;
	if (n > 0 && !memchr(cl->buf, '\n', cl->len) && cl->len < sizeof(cl->buf))
		return;
	/* A line, a full buffer, or the end: answer (bad requests get an error). */
	if (cl->len) {
		struct timeval tv = { 2, 0 };

		/* Replies are written blocking, but never wait long for a reader. */
		fcntl(cl->fd, F_SETFL, fcntl(cl->fd, F_GETFL) & ~O_NONBLOCK);
		setsockopt(cl->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		handle_request(d, cl);
	}
	drop_client(cl);
}

static void accept_clients(struct daemon *d)
{
	int fd;

	while ((fd = accept4(d->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct client *cl = NULL;
		uid_t uid;
		/*
		 * A refused peer still gets its request read, then an error:
		 * closing on unread data would reset the connection instead.
		 */
		bool denied = !ctl_peer_allowed(fd, &d->access, &uid);

		for (size_t i = 0; i < MAX_CLIENTS && !cl; i++)
			if (d->clients[i].fd < 0)
				cl = &d->clients[i];
		if (!cl) {
			reply_error(fd, "too many control connections");
			close(fd);
			continue;
		}
		cl->fd = fd;
		cl->denied = denied;
		cl->uid = uid;
		cl->len = 0;
		cl->deadline = time_monotonic_ns() + CLIENT_TIMEOUT_NS;
	}
}

/* ---- the main loop ------------------------------------------------------------- */

static void handle_signals(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue;       /* it woke the loop: the collector's tick looks */
		if (si.ssi_signo == SIGHUP) {
			reload_retention(d);
			if (collector_flush(d->c))
				warning("flush on SIGHUP failed");
			retain(d);
		} else {
			d->quit = true;
		}
	}
}

static void serve(struct daemon *d)
{
	struct pollfd fds[1024 + 2 + MAX_CLIENTS];

	while (!d->quit) {
		int64_t now = time_monotonic_ns(), next = collector_tick(d->c, now);

		if (d->next_retain && now >= d->next_retain)
			retain(d);
		if (d->next_retain && d->next_retain < next)
			next = d->next_retain;
		size_t n = collector_pollfds(d->c, fds, 1024), base = n;
		int timeout = next > now ? (int)((next - now) / 1000000) + 1 : 0;

		fds[n++] = (struct pollfd){ d->sigfd, POLLIN, 0 };
		fds[n++] = (struct pollfd){ d->listen_fd, POLLIN, 0 };
		for (size_t i = 0; i < MAX_CLIENTS; i++)
			if (d->clients[i].fd >= 0)
				fds[n++] = (struct pollfd){ d->clients[i].fd, POLLIN, 0 };
		if (poll(fds, n, timeout) < 0 && errno != EINTR)
			die_errno("poll");
		collector_polled(d->c, fds, base);
		collector_read(d->c, false);
		handle_signals(d);
		accept_clients(d);
		now = time_monotonic_ns();
		for (size_t i = 0; i < MAX_CLIENTS && !d->quit; i++) {
			struct client *cl = &d->clients[i];

			if (cl->fd < 0)
				continue;
			/*
			 * What the client sent is read first: an iteration that took
			 * longer than the deadline (a flush, a burst, a loaded
			 * machine) must not drop a request that is waiting (closing
			 * on unread data resets the connection).
			 */
			read_client(d, cl);
			if (cl->fd >= 0 && now > cl->deadline)
				drop_client(cl);
		}
	}
}

int main(int argc, char **argv)
{
	struct daemon d;
	struct store_epoch_opts eo = { 0, NULL, NULL };
	int ready_fd = -1;

	cli_init(argc, argv);
	memset(&d, 0, sizeof(d));
	the_daemon = &d;
	d.socket = CTL_DEFAULT_SOCKET;
	d.access.uid = geteuid();
	for (size_t i = 0; i < MAX_CLIENTS; i++)
		d.clients[i].fd = -1;
	collect_options_init(&d.opt);
	parse_args(&d, argc, argv);
	d.dir = db_default_path(d.dir);
	set_report_routine(stderr_report);

	if (!(d.db = db_open(d.dir, DB_CREATE)))
		return 1;
	/*
	 * Fork before the events are opened: their ring buffers are mapped
	 * VM_DONTCOPY and would not survive.  The writer lock (flock) does.
	 */
	if (!d.foreground)
		daemonize(&ready_fd);
	if (!(d.c = collector_new(&d.opt, d.db)))
		return 1;
	if ((d.listen_fd = ctl_listen(d.socket, &d.access)) < 0)
		return 1;
	d.sigfd = setup_signals();
	eo.continue_seq = epoch_to_continue(&d);
	eo.label = d.label;
	/* Before the events are enabled: the loop must not be sampled by them too. */
	collector_calibrate(d.c);
	if (collector_begin(d.c, &eo) || collector_enable(d.c)) {
		unlink(d.socket);
		return 1;
	}
	collector_scan(d.c);
	collector_set_retention(d.c, &d.retention);
	retain(&d);
	if (!d.foreground)
		detach(&d, ready_fd);
	serve(&d);
	/* A quit request has flushed already; SIGTERM and SIGINT have not. */
	if (!d.finished && collector_finish(d.c))
		d.status = 1;
	unlink(d.socket);
	collector_free(d.c);
	db_close(d.db);
	return d.status;
}
