/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/emu-worker.c - the emulating worker (collect/emu-worker.h): its
 * loop, and the collector's side of the protocol.
 */
#include "config.h"
#include "collect/emu-worker.h"
#include "collect/emu-engine.h"
#include "collect/sandbox.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/testpoint.h"
#include "core/timeutil.h"
#include "core/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* ---- the worker's side ------------------------------------------------------------------ */

/*
 * Engines kept, one per address space: translations and the pages a burst
 * starts with are an address space's (a daemon follows threads of many).
 */
#define WORKER_ENGINES 4

struct wk {
	int sock;
	int mem;                        /* the process's /proc/PID/mem, passed with the request; -1 */
	uint8_t page[EMU_PAGE_SIZE];
	uint8_t *in;                    /* the payload of the message read last */
	size_t in_size;
	struct strbuf out;              /* room for a page request, kept (the pager runs in a fault) */
	struct emu_page *pages;
	struct emu_page *snap;          /* a burst's copy of memory at the stop (EMU_MAX_SNAP) */
	struct emu_engine *eng[WORKER_ENGINES];    /* by address space, the last used first */
	size_t n_eng;
	struct emu_engine *spare;       /* a fresh one, made while nothing waits */
	uint32_t seq;
};

/*
 * What the worker may do once sealed: read and answer on its socket,
 * allocate memory, executable too (unicorn translates into it), put a
 * fault's page in place, stop itself at a test point, exit.
 */
static const int worker_syscalls[] = {
	SYS_read, SYS_recvfrom, SYS_recvmsg, SYS_write, SYS_sendto, SYS_sendmsg, SYS_close,
	SYS_mmap, SYS_munmap, SYS_mremap, SYS_mprotect, SYS_madvise, SYS_brk, SYS_futex,
	SYS_rt_sigprocmask, SYS_rt_sigaction, SYS_getpid, SYS_gettid, SYS_tgkill,
	SYS_restart_syscall, SYS_clock_gettime, SYS_getrandom, SYS_sysinfo, SYS_pread64,
};

/* The next message from the collector; exits the worker at the end or on garbage. */
static void read_msg(struct wk *w, struct emu_header *h)
{
	uint8_t hb[EMU_HEADER_SIZE];
	int passed;

	if (sandbox_recv_fd(w->sock, hb, sizeof(hb), &passed) ||
	    emu_header_decode(hb, EMU_REQ_MAGIC, h) || h->len > w->in_size ||
	    sandbox_recv_all(w->sock, w->in, h->len))
		_exit(0);
	/* A request's process memory comes with it (and goes with its answer). */
	if (passed >= 0 && h->type != EMU_MSG_BURST && h->type != EMU_MSG_TRAIL)
		close(passed);
	else if (passed >= 0) {
		if (w->mem >= 0)
			close(w->mem);
		w->mem = passed;
	}
}

static void forget_mem(struct wk *w)
{
	if (w->mem >= 0)
		close(w->mem);
	w->mem = -1;
}

/* The pager: a page request, and the pages back (it may run in a fault's handler). */
static int fetch(void *ctx, struct emu_engine *e, const uint64_t *addr, size_t n)
{
	struct wk *w = ctx;
	struct emu_header h;
	const char *why;
	size_t got;

	if (n > EMU_MAX_PAGE_REQ)
		n = EMU_MAX_PAGE_REQ;
	/*
	 * With the process's memory passed: read here, a system call a page
	 * (a round trip to the collector waits for it to get a CPU, 1-3 ms on
	 * a loaded host: xz's bursts of 50000 instructions took 100-150 ms
	 * of the clock for 10 of the worker's CPU).  A page that cannot be
	 * read (unmapped, the process gone: 0 bytes) reads as nothing.
	 */
	if (w->mem >= 0) {
		for (size_t i = 0; i < n; i++) {
			ssize_t r = pread(w->mem, w->page, EMU_PAGE_SIZE, (off_t)addr[i]);

			emu_engine_fill(e, addr[i], r == EMU_PAGE_SIZE ? w->page : NULL);
		}
		return 0;
	}
	strbuf_setlen(&w->out, 0);
	emu_encode_page_req(&w->out, ++w->seq, addr, n);
	if (sandbox_send_all(w->sock, w->out.buf, w->out.len))
		_exit(0);
	read_msg(w, &h);
	if (h.type != EMU_MSG_PAGES ||
	    emu_decode_pages(w->in, h.len, w->pages, EMU_MAX_PAGE_REQ, &got, &why))
		_exit(0);
	for (size_t i = 0; i < got; i++)
		emu_engine_fill(e, w->pages[i].addr, w->pages[i].ok ? w->pages[i].data : NULL);
	return 0;
}

static void send_out(struct wk *w, struct strbuf *sb)
{
	if (sandbox_send_all(w->sock, sb->buf, sb->len))
		_exit(0);
	strbuf_release(sb);
}

/*
 * The engine of address space `space`: a kept one, or a fresh one (the
 * spare, made beforehand: starting two unicorn engines takes 15-40 ms here,
 * which a stopped thread should not wait for) in place of the one used
 * longest ago.
 */
static struct emu_engine *engine_for(struct wk *w, uint64_t space)
{
	struct emu_pager pager = { fetch, w };
	struct emu_engine *e = NULL;
	size_t i;

	for (i = 0; i < w->n_eng && emu_engine_space(w->eng[i]) != space; i++)
		;
	if (i < w->n_eng) {
		e = w->eng[i];
	} else {
		if (w->spare) {
			e = w->spare;
			w->spare = NULL;
			emu_engine_bind(e, space);
		} else if (!(e = emu_engine_new(space, &pager))) {
			return NULL;
		}
		if (w->n_eng == WORKER_ENGINES)
			emu_engine_free(w->eng[--w->n_eng]);
		i = w->n_eng++;
	}
	memmove(w->eng + 1, w->eng, i * sizeof(*w->eng));
	w->eng[0] = e;
	return e;
}

/* The engine holding a prepared burst, or NULL. */
static struct emu_engine *prepared_engine(struct wk *w)
{
	for (size_t i = 0; i < w->n_eng; i++)
		if (emu_engine_prepared(w->eng[i]))
			return w->eng[i];
	return NULL;
}

/* Nothing waits: make the next engine now. */
static void make_spare(struct wk *w)
{
	struct emu_pager pager = { fetch, w };

	if (!w->spare)
		w->spare = emu_engine_new(0, &pager);
}

/* The burst's answer, then the trail's if it had one. */
static void answer(struct wk *w, uint32_t seq, struct emu_result *res, struct emu_trail_result *tr)
{
	struct strbuf sb = STRBUF_INIT;

	emu_encode_result(&sb, seq, res);
	if (tr)
		emu_encode_trail_result(&sb, seq, tr);
	send_out(w, &sb);
}

/*
 * A burst: prepared, to be followed with its trail (its thread has gone
 * on, the trail's samples are to come); or, without one, followed now.
 */
static void do_burst(struct wk *w, const struct emu_header *h)
{
	struct emu_burst_req req;
	struct emu_result res;
	struct emu_engine *e;
	const char *why;

	if (emu_decode_burst(w->in, h->len, &req, w->snap, &why))
		_exit(0);
	TEST_POINT("emulate-burst");
	/* One at a time: a burst prepared before is forgotten. */
	for (size_t i = 0; i < w->n_eng; i++)
		emu_engine_drop_prepared(w->eng[i]);
	memset(&res, 0, sizeof(res));
	if (!(e = engine_for(w, req.space))) {
		res.end = PATHS_END_FAULT;
		res.end_pc = req.st.rip;
	} else if (req.keep) {
		struct strbuf sb = STRBUF_INIT;

		emu_engine_prepare(e, &req);
		forget_mem(w);
		emu_encode_empty(&sb, EMU_REP_MAGIC, EMU_MSG_PREPARED, h->seq);
		send_out(w, &sb);
		make_spare(w);
		return;
	} else {
		emu_engine_burst(e, &req, &res);
	}
	forget_mem(w);
	answer(w, h->seq, &res, NULL);
	emu_result_release(&res);
	make_spare(w);
}

static void do_trail(struct wk *w, const struct emu_header *h)
{
	struct emu_trail_req req;
	struct emu_trail_result tr;
	struct emu_result res;
	struct emu_engine *e;
	const char *why;

	if (emu_decode_trail(w->in, h->len, &req, &why))
		_exit(0);
	if ((e = prepared_engine(w))) {
		emu_engine_follow(e, &req, &res, &tr);
	} else {
		memset(&res, 0, sizeof(res));
		memset(&tr, 0, sizeof(tr));
		res.end = PATHS_END_FAULT;
		tr.miss = PATHS_MISS_LOST;
	}
	forget_mem(w);
	answer(w, h->seq, &res, &tr);
	emu_result_release(&res);
	emu_trail_result_release(&tr);
	emu_trail_req_release(&req);
}

static void worker_main(int sock, void *ctx)
{
	struct wk w;

	(void)ctx;
	memset(&w, 0, sizeof(w));
	w.sock = sock;
	w.mem = -1;
	w.in_size = EMU_MAX_PAYLOAD;
	w.in = xmalloc(w.in_size);
	w.pages = xcalloc(EMU_MAX_PAGE_REQ, sizeof(*w.pages));
	w.snap = xcalloc(EMU_MAX_SNAP, sizeof(*w.snap));
	strbuf_init(&w.out, EMU_HEADER_SIZE + EMU_MAX_PAGE_REQ * 12);
	if (emu_engine_setup())
		_exit(1);
	sandbox_seal(worker_syscalls, ARRAY_SIZE(worker_syscalls));
	make_spare(&w);
	for (;;) {
		struct emu_header h;

		read_msg(&w, &h);
		if (h.type == EMU_MSG_BURST)
			do_burst(&w, &h);
		else if (h.type == EMU_MSG_TRAIL)
			do_trail(&w, &h);
		else if (h.type == EMU_MSG_DROP) {
			struct emu_engine *e = prepared_engine(&w);

			if (e)
				emu_engine_drop_prepared(e);
		} else {
			_exit(0);
		}
	}
}

/* ---- the collector's side ---------------------------------------------------------------- */

/*
 * What the collector awaits: nothing (IDLE; READY: a burst prepared), that
 * it is prepared (PREPARE), a burst's answer (BURST), a trail's two
 * (TRAIL: the burst's, then TRAIL_REST: the trail's); pages are served
 * meanwhile.
 */
enum { IDLE, PREPARE, READY, BURST, TRAIL, TRAIL_REST };

struct emu_worker {
	struct sandbox sb;
	bool gave_up;
	bool lend_memory;               /* requests go with the process's memory */
	uint32_t seq;
	int busy;                       /* IDLE, PREPARE, READY, BURST, TRAIL, TRAIL_REST */
	uint32_t trail_n;               /* the trail's points (its answer is bounded by them) */
	pid_t pid;                      /* the process pages come from */
	int pidfd;
	int64_t deadline;
	struct strbuf in;               /* bytes received, not a whole message yet */
	struct strbuf out;
	uint8_t *pages;                 /* room for a request's pages */
	struct emu_worker_stats st;
};

static int spawn(struct emu_worker *w)
{
	if (w->gave_up || w->st.starts >= EMU_WORKER_MAX_STARTS) {
		if (!w->gave_up)
			warning("the emulating worker failed %u times: no more bursts",
				EMU_WORKER_MAX_STARTS);
		w->gave_up = true;
		return -1;
	}
	if (sandbox_spawn(&w->sb, "dcpi-emulate", worker_main, NULL)) {
		warning_errno("cannot start the emulating worker");
		w->gave_up = true;
		return -1;
	}
	w->st.starts++;
	strbuf_setlen(&w->in, 0);
	return 0;
}

struct emu_worker *emu_worker_start(bool lend_memory)
{
	struct emu_worker *w = XNEW(struct emu_worker);

	w->lend_memory = lend_memory;
	w->sb.fd = -1;
	w->pidfd = -1;
	strbuf_init(&w->in, 0);
	strbuf_init(&w->out, 0);
	w->pages = xmalloc((size_t)EMU_MAX_PAGE_REQ * EMU_PAGE_SIZE);
	if (spawn(w)) {
		emu_worker_stop(w);
		return NULL;
	}
	return w;
}

void emu_worker_stop(struct emu_worker *w)
{
	if (!w)
		return;
	sandbox_stop(&w->sb, "the emulating worker");
	strbuf_release(&w->in);
	strbuf_release(&w->out);
	free(w->pages);
	free(w);
}

bool emu_worker_usable(const struct emu_worker *w)
{
	return w && !w->gave_up;
}

const struct emu_worker_stats *emu_worker_stats(const struct emu_worker *w)
{
	return &w->st;
}

bool emu_worker_owns(const struct emu_worker *w, pid_t pid)
{
	return w && pid > 0 && pid == w->sb.pid;
}

int64_t emu_worker_cpu_ns(const struct emu_worker *w)
{
	struct timespec t;
	clockid_t clock;

	if (!w->sb.pid || clock_getcpuclockid(w->sb.pid, &clock) || clock_gettime(clock, &t))
		return 0;
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The request failed: the worker goes (a new one starts with the next request). */
static int fail(struct emu_worker *w, const char **why, const char *msg)
{
	*why = msg;
	w->st.failures++;
	sandbox_stop(&w->sb, "the emulating worker");
	w->busy = IDLE;
	strbuf_setlen(&w->in, 0);
	return -1;
}

static int send_msg(struct emu_worker *w)
{
	int r = sandbox_send_all(w->sb.fd, w->out.buf, w->out.len);

	strbuf_setlen(&w->out, 0);
	return r;
}

/* True if the process pages come from has exited (its pid may be another's now). */
static bool exited(int pidfd)
{
	struct pollfd p = { pidfd, POLLIN, 0 };

	return pidfd >= 0 && poll(&p, 1, 0) > 0;
}

/*
 * A request goes with the process's memory, /proc/PID/mem open for
 * reading, so that the worker reads the pages itself: exactly the access it
 * needs (what it could ask for page by page anyway, of the process it
 * follows only; the descriptor is closed with the answer).  Checked alive
 * after the open, so that it is that process and not another with its pid.
 * Without it (not lent, or the open failed), the worker asks for pages.
 */
static int send_with_mem(struct emu_worker *w, pid_t pid, int pidfd)
{
	char path[40];
	int mem, r;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	mem = w->lend_memory ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (mem >= 0 && exited(pidfd)) {
		close(mem);
		mem = -1;
	}
	r = sandbox_send_fd(w->sb.fd, w->out.buf, w->out.len, mem);
	strbuf_setlen(&w->out, 0);
	if (mem >= 0)
		close(mem);
	return r;
}

/*
 * The pages asked for, read from the process: one process_vm_readv for the
 * lot, again after each page that could not be read.
 */
static int serve_pages(struct emu_worker *w, const uint8_t *payload, size_t len)
{
	uint64_t addr[EMU_MAX_PAGE_REQ];
	struct emu_page pg[EMU_MAX_PAGE_REQ];
	struct iovec local[EMU_MAX_PAGE_REQ], remote[EMU_MAX_PAGE_REQ];
	const char *why;
	size_t n, i = 0;

	if (emu_decode_page_req(payload, len, addr, EMU_MAX_PAGE_REQ, &n, &why))
		return -1;
	for (size_t k = 0; k < n; k++) {
		local[k] = (struct iovec){ w->pages + k * EMU_PAGE_SIZE, EMU_PAGE_SIZE };
		remote[k] = (struct iovec){ (void *)addr[k], EMU_PAGE_SIZE };
		pg[k] = (struct emu_page){ addr[k], false, NULL };
	}
	while (i < n) {
		ssize_t got = process_vm_readv(w->pid, local + i, n - i, remote + i, n - i, 0);
		size_t whole = got > 0 ? (size_t)got / EMU_PAGE_SIZE : 0;

		for (size_t k = i; k < i + whole; k++) {
			pg[k].ok = true;
			pg[k].data = local[k].iov_base;
		}
		i += whole + 1;         /* the one that failed stays unreadable */
	}
	if (exited(w->pidfd))
		for (size_t k = 0; k < n; k++)
			pg[k] = (struct emu_page){ addr[k], false, NULL };
	for (size_t k = 0; k < n; k++)
		w->st.unreadable += !pg[k].ok;
	w->st.pages += n;
	w->st.page_requests++;
	emu_encode_pages(&w->out, ++w->seq, pg, n);
	return send_msg(w);
}

/*
 * Reads what the worker sent (waiting until deadline if block) and handles
 * whole messages: page requests served, the answer of type `want` (its
 * payload copied to answer) ends it.  Returns 1 with the answer, 0 if none
 * yet, -1 on failure (*why).
 */
static int pump(struct emu_worker *w, uint32_t want, bool block, struct strbuf *answer,
		const char **why)
{
	for (;;) {
		struct emu_header h;

		while (w->in.len >= EMU_HEADER_SIZE) {
			if (emu_header_decode(w->in.buf, EMU_REP_MAGIC, &h))
				return fail(w, why, "the emulating worker sent garbage (restarted)");
			if (w->in.len < EMU_HEADER_SIZE + h.len)
				break;
			if (h.type == EMU_MSG_PAGE_REQ) {
				if (serve_pages(w, (const uint8_t *)w->in.buf + EMU_HEADER_SIZE, h.len))
					return fail(w, why, "the emulating worker asked for bad pages (restarted)");
			} else if (h.type == want) {
				strbuf_setlen(answer, 0);
				strbuf_add(answer, w->in.buf + EMU_HEADER_SIZE, h.len);
			} else {
				return fail(w, why, "the emulating worker broke the protocol (restarted)");
			}
			memmove(w->in.buf, w->in.buf + EMU_HEADER_SIZE + h.len,
				w->in.len - EMU_HEADER_SIZE - h.len);
			strbuf_setlen(&w->in, w->in.len - EMU_HEADER_SIZE - h.len);
			if (h.type == want)
				return 1;
		}
		{
			struct pollfd p = { w->sb.fd, POLLIN, 0 };
			int64_t left = w->deadline - time_monotonic_ns();
			ssize_t n;
			int pr;

			if (left <= 0)
				return fail(w, why, "the emulating worker did not answer in time (restarted)");
			pr = poll(&p, 1, block ? (int)(left / 1000000) + 1 : 0);
			if (pr < 0 && errno != EINTR)
				return fail(w, why, "cannot wait for the emulating worker");
			if (pr <= 0) {
				if (!block)
					return 0;
				continue;
			}
			strbuf_grow(&w->in, 1 << 16);
			n = recv(w->sb.fd, w->in.buf + w->in.len, w->in.alloc - w->in.len - 1, MSG_DONTWAIT);
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0)
				return fail(w, why, "the emulating worker died (restarted)");
			if (w->in.len + (size_t)n > EMU_HEADER_SIZE + EMU_MAX_PAYLOAD + (1 << 16))
				return fail(w, why, "the emulating worker sent too much (restarted)");
			strbuf_setlen(&w->in, w->in.len + (size_t)n);
		}
	}
}

/* A worker to send to: the running one, or a new one. */
static int ready(struct emu_worker *w)
{
	if (w->sb.pid > 0)
		return 0;
	return spawn(w);
}

int emu_worker_burst(struct emu_worker *w, const struct emu_burst_req *req, pid_t pid, int pidfd,
		     int64_t deadline)
{
	const char *why;

	if (w->busy != IDLE || ready(w))
		return -1;
	w->pid = pid;
	w->pidfd = pidfd;
	w->deadline = deadline;
	w->busy = req->keep ? PREPARE : BURST;
	emu_encode_burst(&w->out, ++w->seq, req);
	if (send_with_mem(w, pid, pidfd))
		return fail(w, &why, "the emulating worker died (restarted)");
	return 0;
}

int emu_worker_trail(struct emu_worker *w, const struct emu_trail_req *req, pid_t pid,
		     int pidfd, int64_t deadline)
{
	const char *why;

	if (w->busy != READY || w->sb.pid <= 0)
		return -1;
	w->pid = pid;
	w->pidfd = pidfd;
	w->deadline = deadline;
	w->busy = TRAIL;
	w->trail_n = req->n;
	emu_encode_trail(&w->out, ++w->seq, req);
	if (send_with_mem(w, pid, pidfd))
		return fail(w, &why, "the emulating worker died (restarted)");
	return 0;
}

int emu_worker_poll(struct emu_worker *w, struct emu_answer *out, const char **why)
{
	struct strbuf answer = STRBUF_INIT;
	int r, busy = w->busy;
	uint32_t want = busy == TRAIL_REST ? EMU_MSG_TRAIL_RESULT :
			busy == PREPARE ? EMU_MSG_PREPARED : EMU_MSG_RESULT;

	memset(out, 0, sizeof(*out));
	*why = NULL;
	if (busy == IDLE)
		return 0;
	/* Prepared: nothing may come, and no deadline runs until the trail is sent. */
	if (busy == READY) {
		int64_t deadline = w->deadline;

		w->deadline = INT64_MAX;
		r = pump(w, 0, false, &answer, why);
		w->deadline = deadline;
		strbuf_release(&answer);
		return r < 0 ? -1 : 0;
	}
	r = pump(w, want, false, &answer, why);
	if (r == 1 && busy == PREPARE) {
		w->busy = READY;
		strbuf_release(&answer);
		return 0;
	}
	if (r == 1) {
		w->busy = busy == TRAIL ? TRAIL_REST : IDLE;
		out->kind = busy == TRAIL_REST ? EMU_ANSWER_TRAIL : EMU_ANSWER_BURST;
		if (busy == TRAIL_REST ? emu_decode_trail_result(answer.buf, answer.len, w->trail_n,
								 &out->trail, why)
				       : emu_decode_result(answer.buf, answer.len, &out->burst, why))
			r = fail(w, why, busy == TRAIL_REST ? "the emulating worker sent a bad trail (restarted)"
							    : "the emulating worker sent a bad result (restarted)");
	}
	strbuf_release(&answer);
	return r;
}

void emu_answer_release(struct emu_answer *a)
{
	if (a->kind == EMU_ANSWER_BURST)
		emu_result_release(&a->burst);
	else if (a->kind == EMU_ANSWER_TRAIL)
		emu_trail_result_release(&a->trail);
	memset(a, 0, sizeof(*a));
}

bool emu_worker_busy(const struct emu_worker *w)
{
	return w && w->busy != IDLE;
}

bool emu_worker_ready(const struct emu_worker *w)
{
	return w && w->busy == READY;
}

int emu_worker_fd(const struct emu_worker *w)
{
	return w && w->busy != IDLE ? w->sb.fd : -1;
}

void emu_worker_drop(struct emu_worker *w)
{
	if (!w || (w->busy != IDLE && w->busy != READY) || w->sb.pid <= 0)
		return;
	w->busy = IDLE;
	emu_encode_drop(&w->out, ++w->seq);
	if (send_msg(w)) {
		const char *why;

		fail(w, &why, "the emulating worker died (restarted)");
	}
}
