/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * core/die.h - error reporting for every dcpi program and for libdcpi.
 *
 * Conventions (git's): recoverable errors are reported with errorf() and the
 * function returns -1; fatal ones call die(); broken invariants BUG().
 * Messages start lowercase, have no full stop, quote their subject, error
 * first:  errorf("cannot open '%s'", path)  ->  "dcpiprof: error: cannot open 'x'".
 *
 * Messages go to stderr, prefixed with the program name, unless a report
 * routine is installed (dcpi-tui shows them in its status line instead).
 */
#ifndef DCPI_CORE_DIE_H
#define DCPI_CORE_DIE_H

#include <stdarg.h>
#include <stddef.h>

/* Sets the name used as message prefix (basename of argv0). */
void set_progname(const char *argv0);
const char *progname(void);

/* Severity given to a report routine. */
enum report_level { REPORT_WARNING, REPORT_ERROR, REPORT_FATAL };

/*
 * A report routine receives each formatted message (without prefix or
 * newline).  NULL restores the default (stderr).  For REPORT_FATAL the
 * program exits with status 1 after the routine returns.
 */
typedef void (*report_fn)(enum report_level level, const char *msg);
void set_report_routine(report_fn fn);

/* Reports an error; always returns -1 so callers can `return errorf(...)`. */
int errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Like errorf() with ": strerror(errno)" appended. */
int errorf_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warning_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void die_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Broken invariant: prints file and line, then aborts. */
#define BUG(...) bug_at(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void bug_at(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Counts errorf() calls since start (tests and tools use it for exit status). */
unsigned error_count(void);

/*
 * Messages kept to be said later, in order: what work done on another
 * thread reported (core/workpool.h keeps a task's, and each item's of a
 * batch), said again by whoever collects it, where it belongs (the status
 * line of dcpi-tui, stderr after the output before it).  While a thread
 * captures into a log, its errorf() and warning() go to the log (counted
 * by error_count() as they happen), not to the report routine; die() is
 * said at once.  One thread writes a log at a time.
 *
 *   struct report_log log = REPORT_LOG_INIT;
 *   struct report_log *prev = report_capture(&log);
 *   ... work that may report ...
 *   report_capture(prev);
 *   report_log_replay(&log);      // said now, on this thread, in order
 */
struct report_msg {
	enum report_level level;
	char *text;
};

struct report_log {
	struct report_msg *v;
	size_t n, alloc;
};

#define REPORT_LOG_INIT { NULL, 0, 0 }

/* This thread's messages go to log from now on (NULL: said); returns the log before. */
struct report_log *report_capture(struct report_log *log);
/* The log this thread captures into, or NULL. */
struct report_log *report_capture_log(void);
/*
 * Says log's messages again on this thread (into the log it captures
 * into, if any), in order, without counting them again, and empties log.
 */
void report_log_replay(struct report_log *log);
/* Forgets every message of log (and frees them). */
void report_log_clear(struct report_log *log);
/* The text of log's last message, or dflt. */
const char *report_log_last(const struct report_log *log, const char *dflt);

#endif
