/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The collector against programs and workers written to break it: a stop
 * that never waits past its deadline, threads in state D left alone,
 * signals of the program's own delivered, exits reaped
 * (collect/tracestop.h); whose values are recorded (collect/whose.h).
 */
#include "config.h"
#include "collect/tracestop.h"
#include "collect/whose.h"
#include "core/timeutil.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

static bool can_ptrace(void)
{
	return geteuid() == 0;
}

/* A child spinning until killed. */
static pid_t spinner(void)
{
	pid_t p = fork();

	assert_true(p >= 0);
	if (!p)
		for (;;)
			__asm__ volatile("" ::: "memory");
	return p;
}

/* The TracerPid of pid (0: not traced). */
static long tracer_of(pid_t pid)
{
	char path[64], line[256];
	long t = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	assert_non_null(f = fopen(path, "r"));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %ld", &t) == 1)
			break;
	fclose(f);
	return t;
}

/* Kills and reaps a child of ours (the tracer may have reaped it). */
static void end_child(struct tracer *t, pid_t p)
{
	int status;

	kill(p, SIGKILL);
	for (int i = 0; i < 2000 && !tracer_wait_child(t, p, &status); i++)
		usleep(1000);
}

static void test_stop_and_release(void **state)
{
	struct tracer t;
	pid_t p;
	int sig = -1;

	(void)state;
	if (!can_ptrace())
		skip();
	memset(&t, 0, sizeof(t));
	p = spinner();
	assert_int_equal(tracer_stop(&t, p, &sig), 0);
	assert_int_equal(sig, 0);
	assert_int_equal(tracer_of(p), getpid());
	tracer_release(&t, p, 0);
	assert_int_equal(tracer_of(p), 0);
	assert_int_equal(t.st.stops, 1);
	assert_true(t.st.held_ns > 0);
	end_child(&t, p);
	tracer_clear(&t);
}

/* A vfork parent waits in state D: not stopped at all, not even seized. */
static void test_vfork_parent_not_stopped(void **state)
{
	struct tracer t;
	pid_t p;
	int sig, fd[2];
	char c;

	(void)state;
	if (!can_ptrace())
		skip();
	memset(&t, 0, sizeof(t));
	assert_int_equal(pipe(fd), 0);
	p = fork();
	assert_true(p >= 0);
	if (!p) {
		pid_t c2;

		close(fd[0]);
		if (write(fd[1], "x", 1) != 1)
			_exit(1);
		c2 = vfork();
		if (!c2) {
			struct timespec ts = { 1, 0 };

			syscall(SYS_nanosleep, &ts, NULL);
			syscall(SYS_exit, 0);
		}
		waitpid(c2, NULL, 0);
		_exit(0);
	}
	close(fd[1]);
	assert_int_equal(read(fd[0], &c, 1), 1);
	close(fd[0]);
	usleep(200000);         /* in its vfork by now */
	{
		int64_t t0 = time_monotonic_ns();

		assert_int_equal(tracer_stop(&t, p, &sig), -1);
		assert_true(time_monotonic_ns() - t0 < 100 * 1000000LL);
	}
	assert_int_equal(t.st.blocked, 1);
	assert_int_equal(tracer_of(p), 0);
	end_child(&t, p);
	tracer_clear(&t);
}

/*
 * A stop that does not come in time is abandoned, and the thread let go by
 * tracer_poll() as soon as it stops: with no time at all to wait, most
 * stops are late.
 */
static void test_late_stop_let_go(void **state)
{
	struct tracer t;
	pid_t p;
	int sig;

	(void)state;
	if (!can_ptrace())
		skip();
	memset(&t, 0, sizeof(t));
	p = spinner();
	for (int i = 0; i < 200 && !t.st.late; i++) {
		if (!tracer_stop_within(&t, p, 0, &sig))
			tracer_release(&t, p, 0);
		for (int k = 0; k < 1000 && tracer_pending(&t); k++) {
			tracer_poll(&t);
			usleep(100);
		}
	}
	assert_true(t.st.late > 0);
	assert_int_equal(tracer_pending(&t), 0);
	assert_int_equal(t.st.late_released, t.st.late);
	assert_int_equal(tracer_of(p), 0);
	end_child(&t, p);
	tracer_clear(&t);
}

/* A child raising SIGTRAP back to back: each one arrives, counted by its handler. */
static volatile sig_atomic_t traps;

static void on_trap(int sig)
{
	(void)sig;
	traps++;
}

static void test_own_sigtrap_delivered(void **state)
{
	struct tracer t;
	int fd[2], status, sig;
	unsigned got = 0;
	pid_t p;

	(void)state;
	if (!can_ptrace())
		skip();
	memset(&t, 0, sizeof(t));
	assert_int_equal(pipe(fd), 0);
	p = fork();
	assert_true(p >= 0);
	if (!p) {
		unsigned n = 200000, c;

		signal(SIGTRAP, on_trap);
		for (unsigned i = 0; i < n; i++)
			__asm__ volatile("int3");
		c = (unsigned)traps;
		_exit(write(fd[1], &c, sizeof(c)) == sizeof(c) && c == n ? 0 : 1);
	}
	close(fd[1]);
	t.watch = p;
	for (int i = 0; i < 300; i++) {
		if (!tracer_stop(&t, p, &sig))
			tracer_release(&t, p, sig);
		usleep(200);
	}
	assert_int_equal(read(fd[0], &got, sizeof(got)), (ssize_t)sizeof(got));
	close(fd[0]);
	for (int i = 0; i < 5000 && !tracer_wait_child(&t, p, &status); i++)
		usleep(1000);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(got, 200000);
	assert_true(t.st.stops > 0);
	tracer_clear(&t);
}

/* Killed while held: reaped by the tracer, its status kept for its parent (dcpirun). */
static void test_killed_while_held_is_reaped(void **state)
{
	struct tracer t;
	int sig, status = 0;
	pid_t p;

	(void)state;
	if (!can_ptrace())
		skip();
	memset(&t, 0, sizeof(t));
	p = spinner();
	t.watch = p;
	assert_int_equal(tracer_stop(&t, p, &sig), 0);
	kill(p, SIGKILL);
	usleep(20000);
	tracer_release(&t, p, 0);
	for (int i = 0; i < 1000 && !tracer_wait_child(&t, p, &status); i++)
		usleep(1000);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	assert_int_equal(tracer_pending(&t), 0);
	tracer_clear(&t);
}

/* ---- whose values -------------------------------------------------------------------- */

static void test_whose_parse(void **state)
{
	struct whose w;
	char buf[64];

	(void)state;
	whose_init(&w);
	assert_true(whose_none(&w));
	whose_describe(&w, buf, sizeof(buf));
	assert_string_equal(buf, "nobody's");
	assert_int_equal(whose_parse(&w, "root,65534"), 0);
	assert_false(whose_none(&w));
	assert_int_equal(w.n_uids, 2);
	assert_int_equal(whose_parse(&w, "no-such-user-here"), -1);
	assert_int_equal(whose_parse(&w, "all"), 0);
	assert_true(w.all);
	whose_describe(&w, buf, sizeof(buf));
	assert_string_equal(buf, "all users");
	whose_release(&w);
}

/* A child that made itself non-dumpable: refused; one that did not: allowed. */
static void test_whose_dumpable(void **state)
{
	struct whose w;
	int fd[2], go[2];
	pid_t p[2];
	char c;

	(void)state;
	whose_init(&w);
	whose_add(&w, geteuid());
	for (int k = 0; k < 2; k++) {
		assert_int_equal(pipe(fd), 0);
		assert_int_equal(pipe(go), 0);
		p[k] = fork();
		assert_true(p[k] >= 0);
		if (!p[k]) {
			close(fd[0]);
			close(go[1]);
			if (k == 1)
				prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
			if (write(fd[1], "x", 1) != 1 || read(go[0], &c, 1) < 0)
				_exit(1);
			_exit(0);
		}
		close(fd[1]);
		close(go[0]);
		assert_int_equal(read(fd[0], &c, 1), 1);
		close(fd[0]);
		assert_true(whose_check(&w, p[k]) == (k == 0));
		/* A cached verdict is good for the samples before it. */
		assert_true(whose_allowed(&w, p[k], time_monotonic_ns() - 1000000) == (k == 0));
		close(go[1]);
		waitpid(p[k], NULL, 0);
	}
	assert_true(w.st.not_dumpable + w.st.not_chosen >= 1);
	/* Another user's process (init's, root's): not chosen unless root is. */
	if (geteuid() != 0)
		assert_false(whose_check(&w, 1));
	whose_release(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stop_and_release),
		cmocka_unit_test(test_vfork_parent_not_stopped),
		cmocka_unit_test(test_late_stop_let_go),
		cmocka_unit_test(test_own_sigtrap_delivered),
		cmocka_unit_test(test_killed_while_held_is_reaped),
		cmocka_unit_test(test_whose_parse),
		cmocka_unit_test(test_whose_dumpable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
