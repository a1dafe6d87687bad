/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/emu-worker.c - the emulating worker (collect/emu-worker.h): its
 * loop, and the collector's side of the protocol.
 */
#include "config.h"
#include "collect/emu-worker.h"
#include "collect/emu-engine.h"
#include "collect/pagecheck.h"
#include "collect/procinfo.h"
#include "collect/sandbox.h"
#include "core/die.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "core/testpoint.h"
#include "core/timeutil.h"
#include "core/xalloc.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
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

/* The reader: a read the thread made, its bytes from the collector. */
static int64_t read_file(void *ctx, uint32_t fd, uint64_t offset, uint64_t count, uint8_t *buf)
{
	struct wk *w = ctx;
	struct emu_header h;
	const uint8_t *data;
	const char *why;
	int64_t n;

	strbuf_setlen(&w->out, 0);
	emu_encode_read_req(&w->out, ++w->seq, fd, offset, count);
	if (sandbox_send_all(w->sock, w->out.buf, w->out.len))
		_exit(0);
	read_msg(w, &h);
	if (h.type != EMU_MSG_DATA || emu_decode_data(w->in, h.len, count, &n, &data, &why))
		_exit(0);
	if (n > 0)
		memcpy(buf, data, (size_t)n);
	return n;
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
	struct emu_pager pager = { fetch, read_file, w };
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
	struct emu_pager pager = { fetch, read_file, w };

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
		tr.read_fd = -1;
	}
	forget_mem(w);
	answer(w, h->seq, &res, &tr);
	emu_result_release(&res);
	emu_trail_result_release(&tr);
	emu_trail_req_release(&req);
}

void emu_worker_seal(void)
{
	sandbox_seal(worker_syscalls, ARRAY_SIZE(worker_syscalls));
}

/*
 * Whether unicorn can have its code buffer: writable and executable
 * memory, which a unit's MemoryDenyWriteExecute= refuses (EPERM from its
 * seccomp filter, EACCES from the kernel's PR_SET_MDWE).
 */
static bool exec_memory(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED)
		return false;
	munmap(p, 4096);
	return true;
}

/* Says whether it can emulate; exits if it cannot. */
static void hello(struct wk *w)
{
	struct strbuf sb = STRBUF_INIT;
	enum emu_hello_status st = EMU_HELLO_OK;

	if (!exec_memory()) {
		st = EMU_HELLO_NO_EXEC;
	} else {
		make_spare(w);
		if (!w->spare)
			st = EMU_HELLO_NO_ENGINE;
	}
	emu_encode_hello(&sb, st);
	send_out(w, &sb);
	if (st != EMU_HELLO_OK)
		_exit(0);
}

void emu_worker_serve(int sock)
{
	struct wk w;

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
	emu_worker_seal();
	hello(&w);
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

static void worker_main(int sock, void *ctx)
{
	(void)ctx;
	emu_worker_serve(sock);
}

/* ---- the collector's side ---------------------------------------------------------------- */

/*
 * What the collector awaits: nothing (IDLE; READY: a burst prepared), that
 * it is prepared (PREPARE), a burst's answer (BURST), a trail's two
 * (TRAIL: the burst's, then TRAIL_REST: the trail's); pages are served
 * meanwhile.
 */
enum { IDLE, PREPARE, READY, BURST, TRAIL, TRAIL_REST };

#define NO_UID ((uid_t)-1)
/* Users whose back-off is remembered. */
#define BACKOFF_USERS 64
/* Bytes read from a worker in one look: a flood waits for the loop's next turn. */
#define POLL_BYTES ((size_t)4 << 20)
/* Bytes a request may receive in all: its answers and page requests. */
#define REQUEST_BYTES (2 * (EMU_HEADER_SIZE + EMU_MAX_PAYLOAD) + ((size_t)16 << 20))
/* A worker's hello awaited at start. */
#define HELLO_WAIT_NS (2000 * 1000000LL)
const struct sandbox_limits emu_worker_limits = { (uint64_t)32 << 30, 1800 };

/* A worker process: forked, or the service's, for one user's bursts. */
struct emu_proc {
	struct sandbox sb;              /* forked: its pid and socket; service: the socket (pid 0) */
	bool service;
	bool attached;                  /* played by the caller (emu_worker_opts.attach): no process */
	pid_t pid;                      /* forked: the fork's; service: the kernel's (SO_PASSCRED) */
	int pidfd;                      /* service: of pid, to kill it if it hangs; -1 */
	uid_t uid;                      /* whose bursts it follows; NO_UID: nobody's yet */
	bool hello;                     /* its hello came: it runs, sealed */
	int64_t used;                   /* last request (the least recently used goes first) */
	int64_t cpu_ns;                 /* service: its CPU last seen */
	int64_t gone_cpu_ns;            /* forked workers of this slot that are gone */
	struct strbuf in;               /* bytes received: from in_off on, not handled yet */
	size_t in_off;
};

struct emu_backoff {
	uid_t uid;
	unsigned failures;              /* in a row */
	int64_t until;                  /* no worker for it before */
	int64_t last;
};

struct emu_worker {
	bool lend_memory;               /* requests go with the process's memory */
	struct emu_worker_opts opt;
	struct emu_proc p[EMU_WORKER_PROCS];
	struct emu_backoff bo[BACKOFF_USERS];
	size_t n_bo;
	struct emu_proc *cur;           /* the request's worker */
	enum emu_cause off;             /* bursts off for good: why (EMU_CAUSE__COUNT: on) */
	uint32_t seq;
	int busy;                       /* IDLE, PREPARE, READY, BURST, TRAIL, TRAIL_REST */
	struct emu_burst_req asked;     /* the burst's bounds (no snapshot) */
	struct emu_trail_req trail_asked;       /* the trail's (no points) */
	pid_t pid;                      /* the process pages come from */
	int pidfd;
	int64_t deadline;
	struct strbuf out;              /* what the worker has not taken yet */
	size_t out_off;
	int pass;                       /* a descriptor to pass with out's first byte, else -1 */
	struct pagecheck pc;
	size_t received;                /* bytes the request received */
	uint64_t read_bytes;            /* bytes of the thread's files it had read */
	uint8_t *pages;                 /* room for a request's pages */
	int64_t gone_cpu_ns;            /* service workers gone */
	struct emu_worker_file files[EMU_MAX_FILES];    /* the burst's files, served in order */
	size_t n_files;
	uint8_t *read_buf;              /* EMU_MAX_READ */
	struct emu_worker_stats st;
};

static struct emu_worker_opts configured;

void emu_worker_configure(const struct emu_worker_opts *o)
{
	configured = *o;
}

const char *emu_cause_key(enum emu_cause c)
{
	static const char *const keys[EMU_CAUSE__COUNT] = {
		[EMU_CAUSE_NO_EXEC] = "no_exec", [EMU_CAUSE_NO_ENGINE] = "no_engine",
		[EMU_CAUSE_START] = "start", [EMU_CAUSE_BACKOFF] = "backoff", [EMU_CAUSE_DIED] = "died",
		[EMU_CAUSE_SIGSYS] = "sigsys", [EMU_CAUSE_TIMEOUT] = "timeout",
		[EMU_CAUSE_PROTOCOL] = "protocol", [EMU_CAUSE_PAGES] = "pages", [EMU_CAUSE_GONE] = "gone",
	};

	return (unsigned)c < EMU_CAUSE__COUNT ? keys[c] : "?";
}

const char *emu_cause_name(enum emu_cause c)
{
	static const char *const names[EMU_CAUSE__COUNT] = {
		[EMU_CAUSE_NO_EXEC] = "no executable memory (MemoryDenyWriteExecute)",
		[EMU_CAUSE_NO_ENGINE] = "the emulator would not start",
		[EMU_CAUSE_START] = "the worker could not start",
		[EMU_CAUSE_BACKOFF] = "backing off after failures",
		[EMU_CAUSE_DIED] = "the worker died",
		[EMU_CAUSE_SIGSYS] = "a forbidden system call (SIGSYS)",
		[EMU_CAUSE_TIMEOUT] = "timed out",
		[EMU_CAUSE_PROTOCOL] = "broke the protocol",
		[EMU_CAUSE_PAGES] = "too many pages asked for",
		[EMU_CAUSE_GONE] = "the process was gone",
	};

	return (unsigned)c < EMU_CAUSE__COUNT ? names[c] : "?";
}

/* ---- worker processes ---- */

/* The CPU a process has used (ns), from its CPU clock; 0 if it is gone. */
static int64_t cpu_of(pid_t pid)
{
	struct timespec t;
	clockid_t clock;

	if (pid <= 0 || clock_getcpuclockid(pid, &clock) || clock_gettime(clock, &t))
		return 0;
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static bool proc_alive(const struct emu_proc *p)
{
	return p->sb.fd >= 0;
}

/* A new worker in slot p: forked, or connected to the service.  0, or -1. */
static int proc_start(struct emu_worker *w, struct emu_proc *p)
{
	int one = 1;

	p->service = w->opt.service != NULL;
	p->attached = false;
	p->pid = 0;
	p->pidfd = -1;
	p->uid = NO_UID;
	p->hello = false;
	p->cpu_ns = 0;
	strbuf_setlen(&p->in, 0);
	p->in_off = 0;
	if (w->opt.attach) {
		/* The one worker a fuzz target plays: its socket, once. */
		if (w->opt.attach_fd < 0)
			return -1;
		p->service = p->attached = true;
		p->sb.fd = w->opt.attach_fd;
		p->sb.pid = 0;
		w->opt.attach_fd = -1;
	} else if (p->service) {
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		int fd;

		if (strlen(w->opt.service) >= sizeof(a.sun_path) ||
		    (fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
			return -1;
		strcpy(a.sun_path, w->opt.service);
		if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
			close(fd);
			return -1;
		}
		p->sb.fd = fd;
		p->sb.pid = 0;
	} else {
		if (sandbox_spawn(&p->sb, "dcpi-emulate", w->opt.main ? w->opt.main : worker_main,
				  w->opt.main ? w->opt.ctx : NULL, &emu_worker_limits))
			return -1;
		p->pid = p->sb.pid;
	}
	/* Never blocks; the sender's pid from the kernel with what it sends. */
	fcntl(p->sb.fd, F_SETFL, fcntl(p->sb.fd, F_GETFL) | O_NONBLOCK);
	setsockopt(p->sb.fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
	w->st.starts++;
	return 0;
}

/*
 * Ends the worker in slot p (hard: it failed, and may hang: killed; else
 * a service's ends with its connection); returns the signal it died of by
 * itself, or 0.
 */
static int proc_end(struct emu_worker *w, struct emu_proc *p, bool hard)
{
	int died = 0;

	if (!proc_alive(p))
		return 0;
	if (p->service) {
		int64_t cpu = cpu_of(p->pid);

		w->gone_cpu_ns += cpu > p->cpu_ns ? cpu : p->cpu_ns;
		close(p->sb.fd);
		p->sb.fd = -1;
		/* A hung one would not see the end of its socket: the kernel's pid, by its pidfd. */
		if (p->pidfd >= 0 && hard)
			syscall(SYS_pidfd_send_signal, p->pidfd, SIGKILL, NULL, 0);
		if (p->pidfd >= 0)
			close(p->pidfd);
	} else {
		int64_t cpu = cpu_of(p->pid);

		died = sandbox_stop(&p->sb, "an emulating worker");
		p->gone_cpu_ns += cpu;
	}
	p->pidfd = -1;
	p->pid = 0;
	p->uid = NO_UID;
	strbuf_setlen(&p->in, 0);
	p->in_off = 0;
	return died;
}

static int proc_stop(struct emu_worker *w, struct emu_proc *p)
{
	return proc_end(w, p, true);
}

/* The worker's process as the kernel names it, from what it sent (service workers). */
static int take_pid(struct emu_proc *p, pid_t sender)
{
	if (sender <= 0 || p->attached)
		return 0;
	if (!p->pid) {
		p->pid = sender;
		p->pidfd = (int)syscall(SYS_pidfd_open, sender, 0);
		return 0;
	}
	return sender == p->pid ? 0 : -1;
}

/* What was handled goes from p's input (once a look: never a move a message). */
static void compact(struct emu_proc *p)
{
	if (!p->in_off)
		return;
	memmove(p->in.buf, p->in.buf + p->in_off, p->in.len - p->in_off);
	strbuf_setlen(&p->in, p->in.len - p->in_off);
	p->in_off = 0;
}

/*
 * Reads what is there from p, without waiting, POLL_BYTES at most: 1 if
 * something came, 0 if nothing, -1 at its end (it died) or on an error.
 */
static int proc_read(struct emu_proc *p, size_t *received)
{
	size_t got = 0;

	compact(p);
	while (got < POLL_BYTES) {
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(4 * sizeof(int))];
		} u;
		struct iovec iov;
		struct msghdr m;
		ssize_t n;

		strbuf_grow(&p->in, 1 << 16);
		iov = (struct iovec){ p->in.buf + p->in.len, p->in.alloc - p->in.len - 1 };
		sandbox_msg(&m, &iov, u.b, sizeof(u.b));
		n = recvmsg(p->sb.fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		/* A worker passes no descriptor: whatever came is closed. */
		if (n >= 0)
			sandbox_msg_fds(&m, NULL);
		if (n <= 0)
			return -1;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
			struct ucred cr;

			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_CREDENTIALS ||
			    c->cmsg_len < CMSG_LEN(sizeof(struct ucred)))
				continue;
			memcpy(&cr, CMSG_DATA(c), sizeof(cr));
			if (take_pid(p, cr.pid))
				return -1;
		}
		strbuf_setlen(&p->in, p->in.len + (size_t)n);
		got += (size_t)n;
	}
	*received += got;
	return got > 0;
}

/* ---- back-off ---- */

static struct emu_backoff *backoff_of(struct emu_worker *w, uid_t uid, bool make)
{
	size_t i, oldest = 0;

	for (i = 0; i < w->n_bo; i++)
		if (w->bo[i].uid == uid)
			return &w->bo[i];
	if (!make)
		return NULL;
	if (w->n_bo < BACKOFF_USERS) {
		i = w->n_bo++;
	} else {
		for (i = 1; i < w->n_bo; i++)
			if (w->bo[i].last < w->bo[oldest].last)
				oldest = i;
		i = oldest;
	}
	w->bo[i] = (struct emu_backoff){ uid, 0, 0, 0 };
	return &w->bo[i];
}

static void backoff_failed(struct emu_worker *w, uid_t uid)
{
	struct emu_backoff *b = backoff_of(w, uid, true);
	int64_t wait = EMU_BACKOFF_NS;

	for (unsigned k = 0; k < b->failures && wait < EMU_BACKOFF_MAX_NS; k++)
		wait *= 2;
	b->failures++;
	b->last = time_monotonic_ns();
	b->until = b->last + (wait < EMU_BACKOFF_MAX_NS ? wait : EMU_BACKOFF_MAX_NS);
}

static void backoff_done(struct emu_worker *w, uid_t uid)
{
	struct emu_backoff *b = backoff_of(w, uid, false);

	if (b)
		b->failures = 0, b->until = 0;
}

static bool backing_off(struct emu_worker *w, uid_t uid)
{
	struct emu_backoff *b = backoff_of(w, uid, false);

	return b && time_monotonic_ns() < b->until;
}

/* ---- the pool ---- */

/* A slot for a new worker: an empty one, else the least recently used (stopped). */
static struct emu_proc *free_slot(struct emu_worker *w)
{
	struct emu_proc *lru = NULL;

	for (size_t i = 0; i < EMU_WORKER_PROCS; i++) {
		struct emu_proc *p = &w->p[i];

		if (!proc_alive(p))
			return p;
		if (p != w->cur && (!lru || p->used < lru->used))
			lru = p;
	}
	if (lru)
		proc_end(w, lru, false);
	return lru;
}

/* A spare worker, nobody's yet, if there is room for one. */
static void keep_spare(struct emu_worker *w)
{
	struct emu_proc *p = NULL;

	if (w->off != EMU_CAUSE__COUNT)
		return;
	for (size_t i = 0; i < EMU_WORKER_PROCS; i++) {
		if (proc_alive(&w->p[i]) && w->p[i].uid == NO_UID)
			return;
		if (!proc_alive(&w->p[i]) && !p)
			p = &w->p[i];
	}
	if (p && proc_start(w, p))
		w->st.lost[EMU_CAUSE_START]++, proc_stop(w, p);
}

/*
 * The worker for uid's bursts: its own, or (unless its user's worker
 * failed lately) the spare or a new one.  NULL with *cause.
 */
static struct emu_proc *proc_for(struct emu_worker *w, uid_t uid, enum emu_cause *cause)
{
	struct emu_proc *p = NULL;

	for (size_t i = 0; i < EMU_WORKER_PROCS && !p; i++)
		if (proc_alive(&w->p[i]) && w->p[i].uid == uid)
			p = &w->p[i];
	if (!p && backing_off(w, uid)) {
		*cause = EMU_CAUSE_BACKOFF;
		return NULL;
	}
	for (size_t i = 0; i < EMU_WORKER_PROCS && !p; i++)
		if (proc_alive(&w->p[i]) && w->p[i].uid == NO_UID)
			p = &w->p[i];
	if (!p) {
		p = free_slot(w);
		if (!p || proc_start(w, p)) {
			if (p)
				proc_stop(w, p);
			backoff_failed(w, uid);
			*cause = EMU_CAUSE_START;
			return NULL;
		}
	}
	p->uid = uid;
	p->used = time_monotonic_ns();
	return p;
}

/* Waits (until deadline) for p's hello and handles it; 0 if it came. */
static int wait_hello(struct emu_worker *w, struct emu_proc *p, int64_t deadline);

struct emu_worker *emu_worker_start(bool lend_memory)
{
	struct emu_worker *w = XNEW(struct emu_worker);

	w->lend_memory = lend_memory;
	w->opt = configured;
	w->off = EMU_CAUSE__COUNT;
	w->pidfd = -1;
	w->pass = -1;
	w->pc.fd = -1;
	strbuf_init(&w->out, 0);
	for (size_t i = 0; i < EMU_WORKER_PROCS; i++) {
		w->p[i].sb.fd = -1;
		w->p[i].pidfd = -1;
		w->p[i].uid = NO_UID;
		strbuf_init(&w->p[i].in, 0);
	}
	w->pages = xmalloc((size_t)EMU_MAX_PAGE_REQ * EMU_PAGE_SIZE);
	keep_spare(w);
	if (!proc_alive(&w->p[0]))
		warning(w->opt.service ? "cannot connect to the emulating service at '%s': bursts wait "
					 "for it" : "cannot start the emulating worker%s: bursts wait for it",
			w->opt.service ? w->opt.service : "");
	else
		/* A worker played by the caller has sent what it sends: one look. */
		wait_hello(w, &w->p[0], time_monotonic_ns() + (w->opt.attach ? 0 : HELLO_WAIT_NS));
	return w;
}

void emu_worker_stop(struct emu_worker *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < EMU_WORKER_PROCS; i++) {
		proc_end(w, &w->p[i], false);
		strbuf_release(&w->p[i].in);
	}
	if (w->pass >= 0)
		close(w->pass);
	if (w->pidfd >= 0)
		close(w->pidfd);
	pagecheck_end(&w->pc);
	strbuf_release(&w->out);
	free(w->pages);
	free(w->read_buf);
	free(w);
}

bool emu_worker_usable(const struct emu_worker *w)
{
	return w && w->off == EMU_CAUSE__COUNT;
}

enum emu_cause emu_worker_off(const struct emu_worker *w)
{
	return w ? w->off : EMU_CAUSE__COUNT;
}

bool emu_worker_can_take(struct emu_worker *w, pid_t pid)
{
	uid_t uid;

	if (!emu_worker_usable(w)) {
		if (w)
			w->st.not_started[w->off]++;
		return false;
	}
	if (!procinfo_owner(pid, &uid) && backing_off(w, uid)) {
		bool has = false;

		for (size_t i = 0; i < EMU_WORKER_PROCS; i++)
			has |= proc_alive(&w->p[i]) && w->p[i].uid == uid;
		if (!has) {
			w->st.not_started[EMU_CAUSE_BACKOFF]++;
			return false;
		}
	}
	return true;
}

const struct emu_worker_stats *emu_worker_stats(const struct emu_worker *w)
{
	return &w->st;
}

bool emu_worker_owns(const struct emu_worker *w, pid_t pid)
{
	if (!w || pid <= 0)
		return false;
	for (size_t i = 0; i < EMU_WORKER_PROCS; i++)
		if (proc_alive(&w->p[i]) && w->p[i].pid == pid)
			return true;
	return false;
}

int64_t emu_worker_cpu_ns(const struct emu_worker *w)
{
	return w->cur && proc_alive(w->cur) ? cpu_of(w->cur->pid) : 0;
}

int64_t emu_worker_total_cpu_ns(const struct emu_worker *w)
{
	int64_t t = w->gone_cpu_ns;

	for (size_t i = 0; i < EMU_WORKER_PROCS; i++) {
		const struct emu_proc *p = &w->p[i];
		int64_t cpu = proc_alive(p) ? cpu_of(p->pid) : 0;

		t += p->gone_cpu_ns + (cpu > p->cpu_ns ? cpu : p->cpu_ns);
	}
	return t;
}

int64_t emu_worker_reaped_cpu_ns(const struct emu_worker *w)
{
	int64_t t = 0;

	for (size_t i = 0; i < EMU_WORKER_PROCS; i++)
		t += w->p[i].gone_cpu_ns;
	return t;
}

size_t emu_worker_procs(const struct emu_worker *w)
{
	size_t n = 0;

	for (size_t i = 0; i < EMU_WORKER_PROCS; i++)
		n += proc_alive(&w->p[i]);
	return n;
}

/* ---- a request ---- */

/* The request ends: its worker goes on, or not. */
static void request_end(struct emu_worker *w)
{
	w->busy = IDLE;
	w->out_off = 0;
	strbuf_setlen(&w->out, 0);
	if (w->pass >= 0)
		close(w->pass);
	w->pass = -1;
	w->st.outside += w->pc.outside;
	pagecheck_end(&w->pc);
}

/*
 * The request failed: its worker goes (its user's next one after a
 * back-off), and why is counted.  A worker that died by itself says how.
 */
static int fail(struct emu_worker *w, enum emu_cause cause, const char **why, const char *msg)
{
	struct emu_proc *p = w->cur;

	*why = msg;
	if (p) {
		uid_t uid = p->uid;
		int sig = proc_stop(w, p);

		if (cause == EMU_CAUSE_DIED && sig == SIGSYS)
			cause = EMU_CAUSE_SIGSYS;
		if (uid != NO_UID)
			backoff_failed(w, uid);
	}
	w->st.failures++;
	w->st.lost[cause]++;
	w->cur = NULL;
	request_end(w);
	return -1;
}

/* Bursts off for good (the workers cannot emulate here): said once. */
static void turn_off(struct emu_worker *w, enum emu_cause cause)
{
	if (w->off != EMU_CAUSE__COUNT)
		return;
	w->off = cause;
	if (cause == EMU_CAUSE_NO_EXEC)
		warning("the emulating worker cannot have executable memory (the unit's "
			"MemoryDenyWriteExecute=yes): no bursts; the dcpi-emulate socket service "
			"(--emulate-socket) emulates under a unit of its own");
	else
		warning("the emulating worker says %s: no bursts", emu_cause_name(cause));
}

/* A hello: 0 if the worker can emulate; else bursts are off and it goes. */
static int on_hello(struct emu_worker *w, struct emu_proc *p, const uint8_t *payload, size_t len)
{
	enum emu_hello_status st;
	const char *why;

	if (p->hello || emu_decode_hello(payload, len, &st, &why))
		return -1;
	p->hello = true;
	if (st == EMU_HELLO_OK)
		return 0;
	turn_off(w, st == EMU_HELLO_NO_EXEC ? EMU_CAUSE_NO_EXEC : EMU_CAUSE_NO_ENGINE);
	return -2;
}

static int wait_hello(struct emu_worker *w, struct emu_proc *p, int64_t deadline)
{
	size_t received = 0;

	for (;;) {
		struct pollfd pf = { p->sb.fd, POLLIN, 0 };
		struct emu_header h;
		int64_t left = deadline - time_monotonic_ns();

		if (p->in.len - p->in_off >= EMU_HEADER_SIZE) {
			const char *at = p->in.buf + p->in_off;

			if (emu_header_decode(at, EMU_REP_MAGIC, &h) || h.type != EMU_MSG_HELLO)
				break;
			if (p->in.len - p->in_off < EMU_HEADER_SIZE + h.len)
				goto more;
			if (on_hello(w, p, (const uint8_t *)at + EMU_HEADER_SIZE, h.len))
				break;
			p->in_off += EMU_HEADER_SIZE + h.len;
			return 0;
		}
more:
		if (left <= 0)
			return -1;      /* not yet: seen when it is used */
		if (poll(&pf, 1, (int)(left / 1000000) + 1) < 0 && errno != EINTR)
			break;
		if (proc_read(p, &received) < 0)
			break;
	}
	proc_stop(w, p);
	return -1;
}

/* Writes what the worker has not taken yet, as far as it takes it: 0, or -1 (it is gone). */
static int flush_out(struct emu_worker *w)
{
	int fd = w->cur->sb.fd;

	while (w->out_off < w->out.len) {
		struct iovec iov = { w->out.buf + w->out_off, w->out.len - w->out_off };
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(int))];
		} u;
		struct msghdr m;
		ssize_t n;

		sandbox_msg(&m, &iov, w->pass >= 0 ? u.b : NULL, sizeof(u.b));
		if (w->pass >= 0)
			sandbox_msg_pass(&m, w->pass);
		n = sendmsg(fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0)
			return -1;
		if (w->pass >= 0) {
			close(w->pass);
			w->pass = -1;
		}
		w->out_off += (size_t)n;
	}
	w->out_off = 0;
	strbuf_setlen(&w->out, 0);
	return 0;
}

/* True if the process pages come from has exited (its pid may be another's now). */
static bool exited(int pidfd)
{
	struct pollfd p = { pidfd, POLLIN, 0 };

	return pidfd >= 0 && poll(&p, 1, 0) > 0;
}

/*
 * The pages asked for, of the request's process only, inside its readable
 * mappings (collect/pagecheck.h), read with one process_vm_readv for the
 * lot (again after each page that could not be read), and queued.  0, or
 * -1 with *cause.
 */
static int serve_pages(struct emu_worker *w, const uint8_t *payload, size_t len,
		       enum emu_cause *cause)
{
	uint64_t addr[EMU_MAX_PAGE_REQ];
	struct emu_page pg[EMU_MAX_PAGE_REQ];
	struct iovec local[EMU_MAX_PAGE_REQ], remote[EMU_MAX_PAGE_REQ];
	size_t idx[EMU_MAX_PAGE_REQ];
	bool ok[EMU_MAX_PAGE_REQ];
	const char *why;
	size_t n, m = 0, i = 0;

	*cause = EMU_CAUSE_PROTOCOL;
	if (emu_decode_page_req(payload, len, addr, EMU_MAX_PAGE_REQ, &n, &why))
		return -1;
	*cause = EMU_CAUSE_PAGES;
	if (pagecheck_pages(&w->pc, addr, n, ok))
		return -1;
	for (size_t k = 0; k < n; k++) {
		pg[k] = (struct emu_page){ addr[k], false, NULL };
		if (!ok[k])
			continue;
		local[m] = (struct iovec){ w->pages + m * EMU_PAGE_SIZE, EMU_PAGE_SIZE };
		remote[m] = (struct iovec){ (void *)addr[k], EMU_PAGE_SIZE };
		idx[m++] = k;
	}
	while (i < m) {
		ssize_t got = process_vm_readv(w->pid, local + i, m - i, remote + i, m - i, 0);
		size_t whole = got > 0 ? (size_t)got / EMU_PAGE_SIZE : 0;

		for (size_t k = i; k < i + whole; k++) {
			pg[idx[k]].ok = true;
			pg[idx[k]].data = local[k].iov_base;
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
	return 0;
}

/*
 * A read the thread made, served: only of a file the burst named, only at
 * the position the file had at the stop and the reads served since (the
 * bytes the thread read next, nothing else of the file), at most
 * EMU_MAX_READ at a time, within the request's budget.  0, or -1 with *cause.
 */
static int serve_read(struct emu_worker *w, const uint8_t *payload, size_t len,
		      enum emu_cause *cause)
{
	struct emu_worker_file *f = NULL;
	uint64_t offset, count;
	uint32_t fd;
	const char *why;
	ssize_t n = -1;

	*cause = EMU_CAUSE_PROTOCOL;
	if (emu_decode_read_req(payload, len, &fd, &offset, &count, &why))
		return -1;
	for (size_t i = 0; i < w->n_files; i++)
		if (w->files[i].fd == fd)
			f = &w->files[i];
	if (!f || offset != f->pos)
		return -1;
	/* The bytes read count against the request's budget as pages would. */
	*cause = EMU_CAUSE_PAGES;
	if ((w->read_bytes += count) > (uint64_t)EMU_PAGE_BUDGET * EMU_PAGE_SIZE)
		return -1;
	if (!w->read_buf)
		w->read_buf = xmalloc(EMU_MAX_READ);
	if (!exited(w->pidfd))
		n = pread(f->local, w->read_buf, (size_t)count, (off_t)offset);
	if (n > 0)
		f->pos += (uint64_t)n;
	w->st.reads++;
	emu_encode_data(&w->out, ++w->seq, n < 0 ? -1 : n, w->read_buf);
	return 0;
}

/*
 * Without waiting: writes what is queued, reads what has come, handles the
 * whole messages (a hello, page requests served, the answer of type
 * `want`, its payload copied to answer).  Returns 1 with the answer, 0 if
 * none yet, -1 on failure (*why).
 */
static int pump(struct emu_worker *w, uint32_t want, struct strbuf *answer, const char **why)
{
	struct emu_proc *p = w->cur;
	enum emu_cause cause;
	int r;

	if (!p || !proc_alive(p))
		return fail(w, EMU_CAUSE_DIED, why, "the emulating worker is gone");
	if (flush_out(w))
		return fail(w, EMU_CAUSE_DIED, why, "the emulating worker died (replaced)");
	r = proc_read(p, &w->received);
	for (;;) {
		struct emu_header h;
		const char *at = p->in.buf + p->in_off;
		const uint8_t *payload = (const uint8_t *)at + EMU_HEADER_SIZE;
		size_t left = p->in.len - p->in_off;

		if (left < EMU_HEADER_SIZE)
			break;
		if (emu_header_decode(at, EMU_REP_MAGIC, &h))
			return fail(w, EMU_CAUSE_PROTOCOL, why, "the emulating worker sent garbage (replaced)");
		if (left < EMU_HEADER_SIZE + h.len)
			break;
		if (h.type == EMU_MSG_HELLO) {
			int hr = on_hello(w, p, payload, h.len);

			if (hr == -2)
				return fail(w, w->off, why, emu_cause_name(w->off));
			if (hr)
				return fail(w, EMU_CAUSE_PROTOCOL, why, "the emulating worker broke the protocol (replaced)");
		} else if (!p->hello) {
			return fail(w, EMU_CAUSE_PROTOCOL, why, "the emulating worker did not say hello (replaced)");
		} else if (h.type == EMU_MSG_PAGE_REQ) {
			if (serve_pages(w, payload, h.len, &cause))
				return fail(w, cause, why, cause == EMU_CAUSE_PAGES ?
					    "the emulating worker asked for too many pages (replaced)" :
					    "the emulating worker asked for bad pages (replaced)");
		} else if (h.type == EMU_MSG_READ_REQ) {
			if (serve_read(w, payload, h.len, &cause))
				return fail(w, cause, why, cause == EMU_CAUSE_PAGES ?
					    "the emulating worker asked for too many bytes (replaced)" :
					    "the emulating worker asked for a bad read (replaced)");
		} else if (h.type == want && w->busy != READY) {
			strbuf_setlen(answer, 0);
			strbuf_add(answer, payload, h.len);
			p->in_off += EMU_HEADER_SIZE + h.len;
			return 1;
		} else {
			return fail(w, EMU_CAUSE_PROTOCOL, why, "the emulating worker broke the protocol (replaced)");
		}
		p->in_off += EMU_HEADER_SIZE + h.len;
	}
	if (r < 0)
		return fail(w, EMU_CAUSE_DIED, why, "the emulating worker died (replaced)");
	if (w->received > REQUEST_BYTES)
		return fail(w, EMU_CAUSE_PROTOCOL, why, "the emulating worker sent too much (replaced)");
	if (flush_out(w))
		return fail(w, EMU_CAUSE_DIED, why, "the emulating worker died (replaced)");
	if (time_monotonic_ns() > w->deadline)
		return fail(w, EMU_CAUSE_TIMEOUT, why, "the emulating worker did not answer in time (replaced)");
	return 0;
}

/*
 * A request goes with the process's memory, /proc/PID/mem open for
 * reading, so that the worker reads the pages itself: exactly the access it
 * needs (what it could ask for page by page anyway, of the process it
 * follows only; the descriptor is closed with the answer).  Checked alive
 * after the open, so that it is that process and not another with its pid.
 * Without it (not lent, or the open failed), the worker asks for pages.
 */
static void lend(struct emu_worker *w, pid_t pid, int pidfd)
{
	char path[40];
	int mem;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	mem = w->lend_memory ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (mem >= 0 && exited(pidfd)) {
		close(mem);
		mem = -1;
	}
	w->pass = mem;
}

/* Starts a request with process pid's pages (checked from now). */
static void request_begin(struct emu_worker *w, pid_t pid, int pidfd, int64_t deadline)
{
	w->pid = pid;
	w->pidfd = pidfd;
	w->deadline = deadline;
	w->received = 0;
	w->read_bytes = 0;
	pagecheck_begin(&w->pc, pid, EMU_PAGE_BUDGET);
}

int emu_worker_burst(struct emu_worker *w, const struct emu_burst_req *req, pid_t pid, int pidfd,
		     const int *local, int64_t deadline)
{
	enum emu_cause cause;
	const char *why;
	uid_t uid;

	if (w->busy != IDLE || !emu_worker_usable(w))
		return -1;
	if (procinfo_owner(pid, &uid)) {
		w->st.lost[EMU_CAUSE_GONE]++;
		return -1;
	}
	if (!(w->cur = proc_for(w, uid, &cause))) {
		w->st.lost[cause]++;
		return -1;
	}
	request_begin(w, pid, pidfd, deadline);
	w->n_files = req->n_files;
	for (size_t i = 0; i < req->n_files; i++)
		w->files[i] = (struct emu_worker_file){ req->files[i].fd, req->files[i].pos, local[i] };
	w->asked = *req;
	w->asked.n_snap = 0;
	w->asked.snap = NULL;
	w->busy = req->keep ? PREPARE : BURST;
	emu_encode_burst(&w->out, ++w->seq, req);
	lend(w, pid, pidfd);
	if (flush_out(w))
		return fail(w, EMU_CAUSE_DIED, &why, "the emulating worker died (replaced)");
	return 0;
}

int emu_worker_trail(struct emu_worker *w, const struct emu_trail_req *req, pid_t pid,
		     int pidfd, int64_t deadline)
{
	const char *why;

	if (w->busy != READY || !w->cur || !proc_alive(w->cur))
		return -1;
	request_begin(w, pid, pidfd, deadline);
	w->trail_asked = *req;
	w->trail_asked.pt = NULL;
	w->busy = TRAIL;
	emu_encode_trail(&w->out, ++w->seq, req);
	lend(w, pid, pidfd);
	if (flush_out(w))
		return fail(w, EMU_CAUSE_DIED, &why, "the emulating worker died (replaced)");
	return 0;
}

/* A request answered: its user's worker is sound again; a spare is made if there is room. */
static void answered_well(struct emu_worker *w)
{
	if (w->cur && w->cur->uid != NO_UID)
		backoff_done(w, w->cur->uid);
	keep_spare(w);
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
		r = pump(w, 0, &answer, why);
		w->deadline = deadline;
		strbuf_release(&answer);
		return r < 0 ? -1 : 0;
	}
	r = pump(w, want, &answer, why);
	if (r == 1 && busy == PREPARE) {
		w->busy = READY;
		strbuf_release(&answer);
		return 0;
	}
	if (r == 1) {
		out->kind = busy == TRAIL_REST ? EMU_ANSWER_TRAIL : EMU_ANSWER_BURST;
		if (busy == TRAIL_REST ? emu_decode_trail_result(answer.buf, answer.len,
								 w->trail_asked.n, &out->trail, why) ||
					 emu_trail_result_check(&out->trail, &w->trail_asked, why)
				       : emu_decode_result(answer.buf, answer.len, &out->burst, why) ||
					 emu_result_check(&out->burst, &w->asked, why)) {
			emu_answer_release(out);
			r = fail(w, EMU_CAUSE_PROTOCOL, why,
				 busy == TRAIL_REST ? "the emulating worker sent a bad trail (replaced)"
						    : "the emulating worker sent a bad result (replaced)");
		} else if (busy == TRAIL) {
			w->busy = TRAIL_REST;
		} else {
			request_end(w);
			answered_well(w);
		}
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
	return w && w->busy != IDLE && w->cur ? w->cur->sb.fd : -1;
}

void emu_worker_drop(struct emu_worker *w)
{
	const char *why;

	if (!w || (w->busy != IDLE && w->busy != READY) || !w->cur || !proc_alive(w->cur))
		return;
	request_end(w);
	emu_encode_drop(&w->out, ++w->seq);
	/* A drop is small: if the worker would not take it now, the next request finds out. */
	if (flush_out(w))
		fail(w, EMU_CAUSE_DIED, &why, "the emulating worker died (replaced)");
}

/* ---- reports ---- */

void emu_worker_causes(const struct emu_worker *w, bool not_started, struct strbuf *out)
{
	const uint64_t *n = not_started ? w->st.not_started : w->st.lost;
	bool any = false;

	for (int c = 0; c < EMU_CAUSE__COUNT; c++) {
		if (!n[c])
			continue;
		strbuf_addf(out, "%s%" PRIu64 " %s", any ? ", " : "", n[c], emu_cause_name((enum emu_cause)c));
		any = true;
	}
}

static void causes_object(struct json_writer *j, const char *key, const uint64_t *n)
{
	json_key(j, key), json_object_begin(j);
	for (int c = 0; c < EMU_CAUSE__COUNT; c++)
		if (n[c])
			json_key(j, emu_cause_key((enum emu_cause)c)), json_u64(j, n[c]);
	json_object_end(j);
}

void emu_worker_causes_json(const struct emu_worker *w, struct json_writer *j)
{
	json_key(j, "off");
	if (w->off != EMU_CAUSE__COUNT)
		json_string(j, emu_cause_key(w->off));
	else
		json_null(j);
	causes_object(j, "lost_causes", w->st.lost);
	causes_object(j, "not_started", w->st.not_started);
	JSON_U64_MEMBERS(j, { "pages_outside", w->st.outside }, { "worker_processes", emu_worker_procs(w) });
}
