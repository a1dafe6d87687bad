/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/unwind-worker.c - the sandboxed table builder and its protocol.
 *
 * Requests and replies travel over a stream socket pair.  A request is 16
 * bytes (magic, sequence number, kind: a file, whose descriptor rides
 * along as SCM_RIGHTS, or the vdso); a reply is 16 bytes (magic, sequence
 * number, status, length) and then the encoded table, or a reason.
 */
#include "config.h"

#include "collect/unwind-worker.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/sandbox.h"
#include "core/die.h"
#include "core/endian.h"
#include "core/strbuf.h"
#include "core/timeutil.h"
#include "core/xalloc.h"

#define REQ_MAGIC 0x71527755u   /* "UwRq" */
#define REP_MAGIC 0x70527755u   /* "UwRp" */
#define MSG_SIZE 16
#define MAX_STARTS 4

enum { KIND_FILE = 1, KIND_VDSO = 2 };

struct unwind_worker {
	struct sandbox sb;              /* the worker process and its socket */
	uint32_t seq;
	unsigned starts;
	bool gave_up;
	uint32_t *pending;              /* requests sent, not answered, in order */
	size_t n_pending, alloc_pending;
	struct strbuf in;               /* bytes received, not yet a whole reply */
};

/* ---- the worker's side ---------------------------------------------------------- */

static sigjmp_buf bus_jump;

/* A file truncated under the worker's mapping: give up on that file only. */
static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(bus_jump, 1);
}

/*
 * What the worker may do once sealed: read its socket and the files it is
 * sent, allocate memory, answer, exit.
 */
static const int worker_syscalls[] = {
	SYS_read, SYS_recvmsg, SYS_sendto, SYS_write, SYS_close, SYS_fstat, SYS_newfstatat,
	SYS_mmap, SYS_munmap, SYS_mremap, SYS_brk, SYS_madvise, SYS_rt_sigprocmask, SYS_futex,
	SYS_getpid, SYS_gettid, SYS_tgkill, SYS_restart_syscall, SYS_lseek,
	/* glibc's qsort sizes its buffer by the machine's memory; malloc may seed */
	SYS_sysinfo, SYS_getrandom,
};

static void reply(int sock, uint32_t seq, uint32_t status, const void *data, size_t len)
{
	uint8_t h[MSG_SIZE];

	put_le32(h, REP_MAGIC);
	put_le32(h + 4, seq);
	put_le32(h + 8, status);
	put_le32(h + 12, (uint32_t)len);
	if (sandbox_send_all(sock, h, sizeof(h)) || sandbox_send_all(sock, data, len))
		_exit(0);
}

/* The running kernel's vdso, as mapped into this process: an ELF image. */
static int vdso_image(const uint8_t **buf, size_t *len)
{
	const uint8_t *p = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);

	if (!p || memcmp(p, "\177ELF", 4) || p[4] != 2)
		return -1;
	/* Its section headers come last. */
	*len = (size_t)(get_le64(p + 40) + (uint64_t)get_le16(p + 60) * get_le16(p + 58));
	*buf = p;
	return *len > 64 && *len < (1u << 20) ? 0 : -1;
}

static void build(int sock, uint32_t seq, const uint8_t *buf, size_t len)
{
	struct strbuf out = STRBUF_INIT;
	const char *why = "the binary changed while it was read";
	struct utable t = { 0 };

	if (sigsetjmp(bus_jump, 1) == 0 && !utable_build(buf, len, &t, &why)) {
		utable_encode(&t, &out);
		utable_release(&t);
		reply(sock, seq, 0, out.buf, out.len);
		strbuf_release(&out);
		return;
	}
	utable_release(&t);
	reply(sock, seq, 1, why, strlen(why));
}

static void serve_file(int sock, uint32_t seq, int fd)
{
	struct stat st;
	void *map;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < 64 ||
	    (uint64_t)st.st_size > UNWIND_WORKER_MAX_FILE) {
		reply(sock, seq, 1, "not a regular file of a possible size", 37);
		return;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		reply(sock, seq, 1, "cannot map the file", 19);
		return;
	}
	build(sock, seq, map, (size_t)st.st_size);
	munmap(map, (size_t)st.st_size);
}

/* Reads one request; returns its kind, 0 at the end. */
static int receive(int sock, uint32_t *seq, int *fd)
{
	uint8_t h[MSG_SIZE];
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { h, sizeof(h) };
	struct msghdr m = { NULL, 0, &iov, 1, cbuf, sizeof(cbuf), 0 };
	struct cmsghdr *cm;
	ssize_t n;

	*fd = -1;
	do
		n = recvmsg(sock, &m, MSG_WAITALL | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(h) || get_le32(h) != REQ_MAGIC)
		return 0;
	for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(int)))
			memcpy(fd, CMSG_DATA(cm), sizeof(int));
	*seq = get_le32(h + 4);
	return (int)get_le32(h + 8);
}

static void worker_main(int sock, void *ctx)
{
	struct sigaction sa;

	(void)ctx;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigbus;
	sigaction(SIGBUS, &sa, NULL);
	sandbox_seal(worker_syscalls, ARRAY_SIZE(worker_syscalls));
	for (;;) {
		const uint8_t *vdso;
		size_t vdso_len;
		uint32_t seq = 0;
		int fd, kind = receive(sock, &seq, &fd);

		if (!kind)
			_exit(0);
		if (kind == KIND_FILE && fd >= 0)
			serve_file(sock, seq, fd);
		else if (kind == KIND_VDSO && !vdso_image(&vdso, &vdso_len))
			build(sock, seq, vdso, vdso_len);
		else
			reply(sock, seq, 1, "bad request", 11);
		if (fd >= 0)
			close(fd);
	}
}

/* ---- the collector's side ------------------------------------------------------------ */

static int start_worker(struct unwind_worker *w)
{
	/* It maps whole binaries (a browser's is hundreds of MB) and holds their tables. */
	static const struct sandbox_limits limits = { (uint64_t)4 << 30, 3600 };

	if (sandbox_spawn(&w->sb, "dcpi-unwind", worker_main, NULL, &limits))
		return -1;
	w->starts++;
	return 0;
}

struct unwind_worker *unwind_worker_start(void)
{
	struct unwind_worker *w = XNEW(struct unwind_worker);

	w->sb.fd = -1;
	strbuf_init(&w->in, 0);
	if (start_worker(w)) {
		warning_errno("cannot start the unwinding worker");
		free(w);
		return NULL;
	}
	return w;
}

static void kill_worker(struct unwind_worker *w)
{
	sandbox_stop(&w->sb, "the unwinding worker");
}

void unwind_worker_stop(struct unwind_worker *w)
{
	if (!w)
		return;
	kill_worker(w);
	free(w->pending);
	strbuf_release(&w->in);
	free(w);
}

pid_t unwind_worker_pid(const struct unwind_worker *w)
{
	return w ? w->sb.pid : 0;
}

static int send_request(struct unwind_worker *w, int kind, int fd, uint32_t *seq)
{
	uint8_t h[MSG_SIZE] = { 0 };
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { h, sizeof(h) };
	struct msghdr m = { NULL, 0, &iov, 1, NULL, 0, 0 };
	ssize_t n;

	put_le32(h, REQ_MAGIC);
	put_le32(h + 4, ++w->seq);
	put_le32(h + 8, (uint32_t)kind);
	if (fd >= 0) {
		struct cmsghdr *cm;

		memset(cbuf, 0, sizeof(cbuf));
		m.msg_control = cbuf;
		m.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	do
		n = sendmsg(w->sb.fd, &m, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	*seq = w->seq;
	return n == (ssize_t)sizeof(h) ? 0 : -1;
}

/* The worker failed: every request it had is answered with a failure. */
static void fail_all(struct unwind_worker *w, unwind_reply_fn fn, void *ctx, const char *why)
{
	uint32_t *seqs = w->pending;
	size_t n = w->n_pending;

	kill_worker(w);
	w->pending = NULL;
	w->n_pending = w->alloc_pending = 0;
	strbuf_setlen(&w->in, 0);
	for (size_t i = 0; i < n; i++)
		fn(ctx, seqs[i], NULL, why);
	free(seqs);
}

int unwind_worker_request(struct unwind_worker *w, int fd, uint32_t *seq)
{
	if (w->sb.fd < 0 && (w->gave_up || w->starts >= MAX_STARTS || start_worker(w))) {
		w->gave_up = true;
		return -1;
	}
	if (send_request(w, fd < 0 ? KIND_VDSO : KIND_FILE, fd, seq)) {
		kill_worker(w);
		return -1;
	}
	ALLOC_GROW(w->pending, w->n_pending + 1, w->alloc_pending);
	w->pending[w->n_pending++] = *seq;
	return 0;
}

/*
 * Hands on the first complete reply in w->in, if there is one: returns 1,
 * 0 if more bytes are needed, -1 if the worker broke the protocol.
 */
static int take_reply(struct unwind_worker *w, unwind_reply_fn fn, void *ctx)
{
	const uint8_t *h = (const uint8_t *)w->in.buf;
	struct utable t;
	const char *bad;
	char why[300];
	uint32_t seq, status;
	size_t len;

	if (w->in.len < MSG_SIZE)
		return 0;
	seq = get_le32(h + 4);
	status = get_le32(h + 8);
	len = get_le32(h + 12);
	if (get_le32(h) != REP_MAGIC || !w->n_pending || seq != w->pending[0] ||
	    len > UNWIND_WORKER_MAX_REPLY || (status && len > 256))
		return -1;
	if (w->in.len < MSG_SIZE + len)
		return 0;
	memmove(w->pending, w->pending + 1, --w->n_pending * sizeof(*w->pending));
	if (status) {
		snprintf(why, sizeof(why), "%.*s", (int)len, (const char *)h + MSG_SIZE);
		for (char *p = why; *p; p++)
			if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
				*p = '?';
		fn(ctx, seq, NULL, why);
	} else if (utable_decode(h + MSG_SIZE, len, &t, &bad)) {
		return -1;
	} else {
		fn(ctx, seq, &t, NULL);
	}
	memmove(w->in.buf, w->in.buf + MSG_SIZE + len, w->in.len - MSG_SIZE - len);
	strbuf_setlen(&w->in, w->in.len - MSG_SIZE - len);
	return 1;
}

/* Reads what the worker sent, without blocking; -1 if it is gone. */
static int read_some(struct unwind_worker *w)
{
	for (;;) {
		ssize_t n;

		strbuf_grow(&w->in, 65536);
		n = recv(w->sb.fd, w->in.buf + w->in.len, w->in.alloc - w->in.len - 1, MSG_DONTWAIT);
		if (n > 0) {
			strbuf_setlen(&w->in, w->in.len + (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		return -1;
	}
}

static bool is_pending(const struct unwind_worker *w, uint32_t seq)
{
	for (size_t i = 0; i < w->n_pending; i++)
		if (w->pending[i] == seq)
			return true;
	return false;
}

int unwind_worker_poll(struct unwind_worker *w, uint32_t seq, int64_t deadline,
		       unwind_reply_fn fn, void *ctx)
{
	int r;

	while (w->n_pending) {
		if (read_some(w)) {
			fail_all(w, fn, ctx, "the unwinding worker failed (restarted)");
			return -1;
		}
		while ((r = take_reply(w, fn, ctx)) > 0)
			;
		if (r < 0) {
			fail_all(w, fn, ctx, "the unwinding worker sent garbage (restarted)");
			return -1;
		}
		if (!seq || !is_pending(w, seq))
			return 0;
		{
			struct pollfd pfd = { w->sb.fd, POLLIN, 0 };
			int64_t left = deadline - time_monotonic_ns();

			if (left <= 0)
				return 1;
			if (poll(&pfd, 1, (int)(left / 1000000) + 1) < 0 && errno != EINTR)
				return 1;
		}
	}
	return 0;
}

int unwind_worker_fd(const struct unwind_worker *w)
{
	return w && w->n_pending ? w->sb.fd : -1;
}

size_t unwind_worker_pending(const struct unwind_worker *w)
{
	return w ? w->n_pending : 0;
}
