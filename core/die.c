/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "core/die.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *prog = "dcpi";
static report_fn report_routine;
static _Atomic unsigned n_errors; /* errors may come from worker threads */
static _Thread_local struct report_log *capture;

void set_progname(const char *argv0)
{
	const char *slash = argv0 ? strrchr(argv0, '/') : NULL;

	if (argv0 && *argv0)
		prog = slash ? slash + 1 : argv0;
}

const char *progname(void)
{
	return prog;
}

void set_report_routine(report_fn fn)
{
	report_routine = fn;
}

unsigned error_count(void)
{
	return n_errors;
}

/* Out of memory where xalloc cannot be used (it reports through here). */
static _Noreturn void no_memory(void)
{
	fprintf(stderr, "%s: fatal: out of memory keeping a message\n", prog);
	exit(1);
}

/* Keeps a copy of msg at the end of log. */
static void log_add(struct report_log *log, enum report_level level, const char *msg)
{
	char *text = strdup(msg);

	if (!text)
		no_memory();
	if (log->n == log->alloc) {
		size_t alloc = log->alloc ? 2 * log->alloc : 4;
		struct report_msg *v = realloc(log->v, alloc * sizeof(*v));

		if (!v)
			no_memory();
		log->v = v;
		log->alloc = alloc;
	}
	log->v[log->n++] = (struct report_msg){ level, text };
}

/* Says msg: into this thread's log, to the report routine, or on stderr. */
static void say(enum report_level level, const char *msg)
{
	static const char *const prefix[] = { "warning: ", "error: ", "fatal: " };

	if (capture && level != REPORT_FATAL) {
		log_add(capture, level, msg);
		return;
	}
	if (report_routine) {
		report_routine(level, msg);
		return;
	}
	fflush(stdout);
	fprintf(stderr, "%s: %s%s\n", prog, prefix[level], msg);
}

static void vreport(enum report_level level, int errnum, const char *fmt, va_list ap)
{
	char msg[4096];
	size_t len;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (errnum) {
		len = strlen(msg);
		snprintf(msg + len, sizeof(msg) - len, ": %s", strerror(errnum));
	}
	say(level, msg);
}

#define REPORT(level, errnum)                        \
	do {                                         \
		va_list ap;                          \
		va_start(ap, fmt);                   \
		vreport((level), (errnum), fmt, ap); \
		va_end(ap);                          \
	} while (0)

int errorf(const char *fmt, ...)
{
	n_errors++;
	REPORT(REPORT_ERROR, 0);
	return -1;
}

int errorf_errno(const char *fmt, ...)
{
	int e = errno;

	n_errors++;
	REPORT(REPORT_ERROR, e);
	errno = e;
	return -1;
}

void warning(const char *fmt, ...)
{
	REPORT(REPORT_WARNING, 0);
}

void warning_errno(const char *fmt, ...)
{
	int e = errno;

	REPORT(REPORT_WARNING, e);
	errno = e;
}

void die(const char *fmt, ...)
{
	REPORT(REPORT_FATAL, 0);
	exit(1);
}

void die_errno(const char *fmt, ...)
{
	int e = errno;

	REPORT(REPORT_FATAL, e);
	exit(1);
}

void bug_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: BUG: %s:%d: ", prog, file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

struct report_log *report_capture(struct report_log *log)
{
	struct report_log *prev = capture;

	capture = log;
	return prev;
}

struct report_log *report_capture_log(void)
{
	return capture;
}

void report_log_replay(struct report_log *log)
{
	/* a log may be replayed into itself: take its messages first */
	struct report_log take = *log;

	memset(log, 0, sizeof(*log));
	for (size_t i = 0; i < take.n; i++)
		say(take.v[i].level, take.v[i].text);
	report_log_clear(&take);
}

void report_log_clear(struct report_log *log)
{
	for (size_t i = 0; i < log->n; i++)
		free(log->v[i].text);
	free(log->v);
	memset(log, 0, sizeof(*log));
}

const char *report_log_last(const struct report_log *log, const char *dflt)
{
	return log->n ? log->v[log->n - 1].text : dflt;
}
