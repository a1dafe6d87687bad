/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The collector against programs and workers written to break it: a stop
 * that never waits past its deadline, threads in state D left alone,
 * signals of the program's own delivered, exits reaped
 * (collect/tracestop.h); whose values are recorded (collect/whose.h).
 */
#include "config.h"
#include "collect/emu-proto.h"
#include "collect/emu-worker.h"
#include "collect/sandbox.h"
#include "collect/tracestop.h"
#include "collect/whose.h"
#include "core/strbuf.h"
#include "core/timeutil.h"
#include "core/xalloc.h"
#include "tests/helper/mdwe-filter.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

/* A test of stops: root's (it traces its children), with a fresh tracer. */
static void begin(struct tracer *t)
{
	if (geteuid() != 0)
		skip();
	memset(t, 0, sizeof(*t));
}

/* A child with a pipe to talk to it: the child's 0, the parent the child's pid. */
static pid_t fork_piped(int fd[2])
{
	pid_t p;

	assert_int_equal(pipe(fd), 0);
	p = fork();
	assert_true(p >= 0);
	return p;
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
	begin(&t);
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
	begin(&t);
	if (!(p = fork_piped(fd))) {
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
	begin(&t);
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
	int fd[2], status = 0, sig;
	unsigned got = 0;
	bool ended = false;
	pid_t p;

	(void)state;
	begin(&t);
	if (!(p = fork_piped(fd))) {
		unsigned n = 20000, c;

		signal(SIGTRAP, on_trap);
		for (unsigned i = 0; i < n; i++)
			__asm__ volatile("int3");
		c = (unsigned)traps;
		_exit(write(fd[1], &c, sizeof(c)) == sizeof(c) && c == n ? 0 : 1);
	}
	close(fd[1]);
	t.watch = p;
	for (int i = 0; i < 100 && !t.reaped; i++) {
		if (!tracer_stop(&t, p, &sig))
			tracer_release(&t, p, sig);
		usleep(200);
	}
	/* Its count, then its end (a minute at most on a loaded host): never left running. */
	if (read(fd[0], &got, sizeof(got)) != (ssize_t)sizeof(got))
		got = 0;
	close(fd[0]);
	for (int i = 0; i < 60000 && !(ended = tracer_wait_child(&t, p, &status)); i++)
		usleep(1000);
	if (!ended)
		end_child(&t, p);
	tracer_clear(&t);
	assert_true(ended && WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(got, 20000);
	assert_true(t.st.stops > 0);
}

/* Killed while held: reaped by the tracer, its status kept for its parent (dcpirun). */
static void test_killed_while_held_is_reaped(void **state)
{
	struct tracer t;
	int sig, status = 0;
	pid_t p;

	(void)state;
	begin(&t);
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


/* ---- a worker written to break the collector ------------------------------------------ */

enum hostile {
	H_OK,                   /* answers every burst with an empty result */
	H_FORGED_INSNS,         /* more instructions than asked for */
	H_FORGED_VALUES,        /* a value written 2^40 times by 10 instructions */
	H_OUTSIDE,              /* pages outside every mapping, then an empty result */
	H_FLOOD_PAGES,          /* page requests without end, replies unread */
	H_NO_READ,              /* a page request, then never reads nor answers */
	H_GARBAGE,              /* bytes that are no message */
	H_SIGSYS,               /* a system call its filter forbids */
	H_NO_EXEC,              /* says it has no executable memory */
};

/* Pages of this program: the forked worker has them too (an address the collector reads). */
static uint8_t mapped[64 * 4096] __attribute__((aligned(4096)));

static int read_req(int sock, struct emu_header *h, uint8_t *buf, size_t size)
{
	uint8_t hb[EMU_HEADER_SIZE];
	int passed;

	if (sandbox_recv_fd(sock, hb, sizeof(hb), &passed))
		return -1;
	if (passed >= 0)
		close(passed);
	if (emu_header_decode(hb, EMU_REQ_MAGIC, h) || h->len > size ||
	    sandbox_recv_all(sock, buf, h->len))
		return -1;
	return 0;
}

static void send_sb(int sock, struct strbuf *sb)
{
	if (sandbox_send_all(sock, sb->buf, sb->len))
		_exit(0);
	strbuf_reset(sb);
}

static void hostile_main(int sock, void *ctx)
{
	enum hostile mode = *(const enum hostile *)ctx;
	uint8_t *buf = xmalloc(EMU_MAX_PAYLOAD);
	struct strbuf sb = STRBUF_INIT;
	struct emu_header h;
	uint64_t addr[EMU_MAX_PAGE_REQ];

	if (mode == H_SIGSYS)
		emu_worker_seal();
	emu_encode_hello(&sb, mode == H_NO_EXEC ? EMU_HELLO_NO_EXEC : EMU_HELLO_OK);
	send_sb(sock, &sb);
	if (mode == H_SIGSYS)
		syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
	for (int i = 0; i < EMU_MAX_PAGE_REQ; i++)
		addr[i] = (uint64_t)(uintptr_t)mapped + (uint64_t)(i % 64) * 4096;
	while (!read_req(sock, &h, buf, EMU_MAX_PAYLOAD)) {
		struct emu_result r;
		struct emu_block_rec b = { (uint64_t)(uintptr_t)mapped, 4, 1, 0 };
		struct emu_value_rec v = { (uint64_t)(uintptr_t)mapped, 0, 42, (uint64_t)1 << 40 };

		memset(&r, 0, sizeof(r));
		switch (mode) {
		case H_FORGED_INSNS:
			b.count = r.insns = (uint64_t)1 << 30;
			r.blocks = &b, r.n_blocks = 1;
			break;
		case H_FORGED_VALUES:
			b.count = r.insns = r.detailed = 10;
			r.blocks = &b, r.n_blocks = 1;
			r.values = &v, r.n_values = 1;
			break;
		case H_OUTSIDE: {
			uint64_t out[2] = { 4096, (uint64_t)1 << 46 };
			struct emu_page pg[2];
			size_t n;
			const char *why;

			emu_encode_page_req(&sb, 1, out, 2);
			send_sb(sock, &sb);
			if (read_req(sock, &h, buf, EMU_MAX_PAYLOAD) ||
			    emu_decode_pages(buf, h.len, pg, 2, &n, &why) || n != 2 || pg[0].ok || pg[1].ok)
				_exit(1);       /* the collector read them: the test sees it die */
			break;
		}
		case H_FLOOD_PAGES:
		case H_NO_READ:
			do {
				emu_encode_page_req(&sb, 1, addr, EMU_MAX_PAGE_REQ);
				send_sb(sock, &sb);
			} while (mode == H_FLOOD_PAGES);
			for (;;)
				pause();
		case H_GARBAGE:
			memset(buf, 0xab, 65536);
			for (;;)
				if (sandbox_send_all(sock, buf, 65536))
					_exit(0);
		default:
			break;
		}
		emu_encode_result(&sb, h.seq, &r);
		send_sb(sock, &sb);
	}
	_exit(0);
}

static double cpu_secs(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

struct outcome {
	int got;                /* emu_worker_poll's: 1 answered, -1 failed */
	double secs, cpu;       /* the request's time, the collector's CPU in it */
	struct emu_worker_stats st;
};

/* One burst of pid (this process by default) to a worker of this mode, deadline_ms at most. */
static struct outcome one_burst(enum hostile mode, pid_t pid, int64_t deadline_ms)
{
	static enum hostile m;
	struct emu_burst_req req;
	struct outcome o;
	struct emu_worker *w;
	struct emu_answer a;
	const char *why;
	int64_t t0;
	double c0;

	m = mode;
	emu_worker_configure(&(struct emu_worker_opts){ NULL, hostile_main, &m, false, -1 });
	w = emu_worker_start(false);
	memset(&req, 0, sizeof(req));
	req.st.rip = (uint64_t)(uintptr_t)mapped;
	req.limit = 1000, req.detail = 100, req.time_us = 1000;
	memset(&o, 0, sizeof(o));
	t0 = time_monotonic_ns();
	c0 = cpu_secs();
	o.got = emu_worker_burst(w, &req, pid ? pid : getpid(), -1, NULL, t0 + deadline_ms * 1000000);
	while (!o.got) {
		o.got = emu_worker_poll(w, &a, &why);
		if (o.got > 0)
			emu_answer_release(&a);
		else if (!o.got)
			usleep(200);
	}
	o.secs = (double)(time_monotonic_ns() - t0) / 1e9;
	o.cpu = cpu_secs() - c0;
	o.st = *emu_worker_stats(w);
	emu_worker_stop(w);
	emu_worker_configure(&(struct emu_worker_opts){ NULL, NULL, NULL, false, -1 });
	return o;
}

static void test_worker_answers(void **state)
{
	struct outcome o = one_burst(H_OK, 0, 1000);

	(void)state;
	assert_int_equal(o.got, 1);
	assert_int_equal(o.st.failures, 0);
}

/* Counts over the request's are refused: nothing forged reaches the collector. */
static void test_worker_forged_counts(void **state)
{
	struct outcome o;

	(void)state;
	o = one_burst(H_FORGED_INSNS, 0, 1000);
	assert_int_equal(o.got, -1);
	assert_int_equal(o.st.lost[EMU_CAUSE_PROTOCOL], 1);
	o = one_burst(H_FORGED_VALUES, 0, 1000);
	assert_int_equal(o.got, -1);
	assert_int_equal(o.st.lost[EMU_CAUSE_PROTOCOL], 1);
	assert_true(o.cpu < 0.5);
}

/* Pages outside the process's mappings are never read: answered unreadable, counted. */
static void test_worker_pages_outside(void **state)
{
	struct outcome o = one_burst(H_OUTSIDE, 0, 2000);

	(void)state;
	assert_int_equal(o.got, 1);
	assert_int_equal(o.st.outside, 2);
	assert_int_equal(o.st.unreadable, 2);
}

/* A flood of page requests stops at the request's budget, within the CPU it may take. */
static void test_worker_page_flood(void **state)
{
	struct outcome o = one_burst(H_FLOOD_PAGES, 0, 5000);

	(void)state;
	print_message("flood: %.3f s, collector CPU %.3f s, %llu pages\n", o.secs, o.cpu,
		      (unsigned long long)o.st.pages);
	assert_int_equal(o.got, -1);
	assert_int_equal(o.st.lost[EMU_CAUSE_PAGES], 1);
	assert_true(o.st.pages <= EMU_PAGE_BUDGET);
	assert_true(o.secs < 4.0);
	assert_true(o.cpu < 2.0);
}

/* A worker that never reads what it asked for: the collector never blocks, it gives up on time. */
static void test_worker_never_reads(void **state)
{
	struct outcome o = one_burst(H_NO_READ, 0, 300);

	(void)state;
	print_message("never reads: %.3f s, collector CPU %.3f s\n", o.secs, o.cpu);
	assert_int_equal(o.got, -1);
	assert_int_equal(o.st.lost[EMU_CAUSE_TIMEOUT], 1);
	assert_true(o.secs >= 0.3 && o.secs < 1.5);
	assert_true(o.cpu < 0.5);
}

static void test_worker_garbage(void **state)
{
	struct outcome o = one_burst(H_GARBAGE, 0, 2000);

	(void)state;
	assert_int_equal(o.got, -1);
	assert_int_equal(o.st.lost[EMU_CAUSE_PROTOCOL], 1);
	assert_true(o.secs < 1.5);
}

/* A system call the worker's filter forbids kills it with SIGSYS, counted as such. */
static void test_worker_sigsys(void **state)
{
	struct outcome o;

	(void)state;
	/*
	 * The sanitizers' build installs no filter (sandbox.c).  cmocka's
	 * skip() prints "not ok # SKIP", which automake counts as a failure:
	 * say why and return.
	 */
#if defined(__SANITIZE_ADDRESS__)
	print_message("# SKIP: the sanitizers' build installs no system call filter\n");
	return;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
	print_message("# SKIP: the sanitizers' build installs no system call filter\n");
	return;
#endif
#endif
	o = one_burst(H_SIGSYS, 0, 2000);
	assert_int_equal(o.got, -1);
	assert_int_equal(o.st.lost[EMU_CAUSE_SIGSYS], 1);
}

/* A worker that cannot emulate here: bursts off, with the cause. */
static void test_worker_no_exec(void **state)
{
	static enum hostile m = H_NO_EXEC;
	struct emu_worker *w;

	(void)state;
	emu_worker_configure(&(struct emu_worker_opts){ NULL, hostile_main, &m, false, -1 });
	w = emu_worker_start(false);
	assert_false(emu_worker_usable(w));
	assert_int_equal(emu_worker_off(w), EMU_CAUSE_NO_EXEC);
	assert_false(emu_worker_can_take(w, getpid()));
	assert_int_equal(emu_worker_stats(w)->not_started[EMU_CAUSE_NO_EXEC], 1);
	emu_worker_stop(w);
	emu_worker_configure(&(struct emu_worker_opts){ NULL, NULL, NULL, false, -1 });
}

/*
 * The real worker, in a process under the filter systemd's
 * MemoryDenyWriteExecute=yes installs (tests/helper/mdwe-filter.h): it
 * says it has no executable memory, and bursts are off.
 */
static void test_real_worker_under_mdwe(void **state)
{
	int status;
	pid_t p;

	(void)state;
	p = fork();
	assert_true(p >= 0);
	if (!p) {
		struct emu_burst_req req;
		struct emu_worker *w;
		struct emu_answer a;
		const char *why;

		if (mdwe_filter_install())
			_exit(3);
		w = emu_worker_start(false);
		/* A loaded host may take longer than the start's wait: a burst finds out too. */
		memset(&req, 0, sizeof(req));
		req.st.rip = (uint64_t)(uintptr_t)mapped;
		req.limit = 1000, req.detail = 100, req.time_us = 1000;
		if (emu_worker_usable(w) &&
		    !emu_worker_burst(w, &req, getpid(), -1, NULL, time_monotonic_ns() + 20000000000LL))
			while (!emu_worker_poll(w, &a, &why))
				usleep(1000);
		_exit(emu_worker_off(w) == EMU_CAUSE_NO_EXEC ? 0 : 1);
	}
	assert_int_equal(waitpid(p, &status, 0), p);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* And without the filter it can. */
	{
		struct emu_worker *w = emu_worker_start(false);

		assert_true(emu_worker_usable(w));
		emu_worker_stop(w);
	}
}

/* One worker a user: another user's bursts go to a worker of their own. */
static void test_worker_per_user(void **state)
{
	static enum hostile m = H_OK;
	struct emu_burst_req req;
	struct emu_worker *w;
	struct emu_answer a;
	const char *why;
	pid_t other;

	(void)state;
	if (geteuid() != 0)
		skip();
	other = fork();
	assert_true(other >= 0);
	if (!other) {
		if (setresuid(65534, 65534, 65534))
			_exit(1);
		for (;;)
			pause();
	}
	usleep(50000);
	emu_worker_configure(&(struct emu_worker_opts){ NULL, hostile_main, &m, false, -1 });
	w = emu_worker_start(false);
	memset(&req, 0, sizeof(req));
	req.st.rip = (uint64_t)(uintptr_t)mapped;
	req.limit = 1000, req.detail = 100, req.time_us = 1000;
	for (int k = 0; k < 2; k++) {
		int got = 0;

		assert_int_equal(emu_worker_burst(w, &req, k ? other : getpid(), -1, NULL,
						  time_monotonic_ns() + 2000000000LL), 0);
		while (!(got = emu_worker_poll(w, &a, &why)))
			usleep(200);
		assert_int_equal(got, 1);
		emu_answer_release(&a);
	}
	/* Both users' workers, and a spare. */
	assert_true(emu_worker_procs(w) >= 2);
	assert_int_equal(emu_worker_stats(w)->failures, 0);
	emu_worker_stop(w);
	emu_worker_configure(&(struct emu_worker_opts){ NULL, NULL, NULL, false, -1 });
	kill(other, SIGKILL);
	waitpid(other, NULL, 0);
}

/* A user whose worker failed waits a back-off, not forever. */
static void test_worker_backoff(void **state)
{
	static enum hostile m = H_GARBAGE;
	struct emu_burst_req req;
	struct emu_worker *w;
	struct emu_answer a;
	const char *why;
	int got = 0;

	(void)state;
	emu_worker_configure(&(struct emu_worker_opts){ NULL, hostile_main, &m, false, -1 });
	w = emu_worker_start(false);
	memset(&req, 0, sizeof(req));
	req.st.rip = (uint64_t)(uintptr_t)mapped;
	req.limit = 1000, req.detail = 100, req.time_us = 1000;
	assert_true(emu_worker_can_take(w, getpid()));
	assert_int_equal(emu_worker_burst(w, &req, getpid(), -1, NULL, time_monotonic_ns() + 2000000000LL), 0);
	while (!(got = emu_worker_poll(w, &a, &why)))
		usleep(200);
	assert_int_equal(got, -1);
	assert_false(emu_worker_can_take(w, getpid()));
	assert_int_equal(emu_worker_stats(w)->not_started[EMU_CAUSE_BACKOFF], 1);
	{
		struct timespec ts = { EMU_BACKOFF_NS / 1000000000, EMU_BACKOFF_NS % 1000000000 + 100000000 };

		nanosleep(&ts, NULL);
	}
	assert_true(emu_worker_can_take(w, getpid()));
	emu_worker_stop(w);
	emu_worker_configure(&(struct emu_worker_opts){ NULL, NULL, NULL, false, -1 });
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
		cmocka_unit_test(test_worker_answers),
		cmocka_unit_test(test_worker_forged_counts),
		cmocka_unit_test(test_worker_pages_outside),
		cmocka_unit_test(test_worker_page_flood),
		cmocka_unit_test(test_worker_never_reads),
		cmocka_unit_test(test_worker_garbage),
		cmocka_unit_test(test_worker_sigsys),
		cmocka_unit_test(test_worker_no_exec),
		cmocka_unit_test(test_real_worker_under_mdwe),
		cmocka_unit_test(test_worker_per_user),
		cmocka_unit_test(test_worker_backoff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
