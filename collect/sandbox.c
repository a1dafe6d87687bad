/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "collect/sandbox.h"
#include "core/die.h"
#include "core/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pwd.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* A sanitizer's runtime reserves terabytes of address space and makes system calls of its own. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

/* Processes killed but not reaped yet (stuck for a moment in the kernel): reaped later. */
#define LATER_MAX 16
static pid_t later[LATER_MAX];

static void reap_later(void)
{
	for (size_t i = 0; i < LATER_MAX; i++)
		if (later[i] > 0 && waitpid(later[i], NULL, WNOHANG) != 0)
			later[i] = 0;
}

/*
 * The worker's socket becomes descriptor 3, 0-2 go to /dev/null (not the
 * journal's stream, not a terminal), every other one is closed.
 */
static void set_descriptors(int keep)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null < 0)
		_exit(1);
	if (keep != 3) {
		if (dup2(keep, 3) < 0)
			_exit(1);
		close(keep);
	}
	for (int fd = 0; fd < 3; fd++)
		if (dup2(null, fd) < 0)
			_exit(1);
	if (null > 3)
		close(null);
	if (syscall(SYS_close_range, 4u, ~0u, 0u)) {
		long max = sysconf(_SC_OPEN_MAX);

		for (long fd = 4; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
			close((int)fd);
	}
}

/* Lowers a limit to soft, hard (never raising either: a caller may run under lower ones). */
static int lower_limit(int resource, rlim_t soft, rlim_t hard)
{
	struct rlimit r;

	if (getrlimit(resource, &r))
		return -1;
	if (hard > r.rlim_max)
		hard = r.rlim_max;
	if (soft > hard)
		soft = hard;
	r.rlim_cur = soft;
	r.rlim_max = hard;
	return setrlimit(resource, &r);
}

static void set_limits(const struct sandbox_limits *l)
{
	uint64_t as = l && l->as_bytes ? l->as_bytes : (uint64_t)1 << 30;
	uint64_t cpu = l && l->cpu_secs ? l->cpu_secs : 600;
	const struct { int resource; rlim_t soft, hard; } lim[] = {
#ifndef SANITIZED
		{ RLIMIT_AS, (rlim_t)as, (rlim_t)as },
#endif
		{ RLIMIT_CPU, (rlim_t)cpu, (rlim_t)cpu + 5 },
		{ RLIMIT_FSIZE, 0, 0 },         /* writes no file */
		{ RLIMIT_CORE, 0, 0 },
		{ RLIMIT_NOFILE, 16, 16 },      /* its socket, a descriptor passed at a time */
		{ RLIMIT_MEMLOCK, 0, 0 },
	};

	(void)as;
	for (size_t i = 0; i < ARRAY_SIZE(lim); i++)
		if (lower_limit(lim[i].resource, lim[i].soft, lim[i].hard))
			_exit(1);
}

static void drop_privileges(void)
{
	uid_t uid = 65534;
	gid_t gid = 65534;
	struct passwd *pw;

	if (geteuid() != 0)
		return;
	if ((pw = getpwnam(SANDBOX_USER)) || (pw = getpwnam("nobody"))) {
		uid = pw->pw_uid;
		gid = pw->pw_gid;
	}
	if (setgroups(0, NULL) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid) ||
	    geteuid() == 0 || getuid() == 0)
		_exit(1);
}

void sandbox_enter(int sock, const struct sandbox_limits *limits)
{
	set_descriptors(sock);
	set_limits(limits);
	drop_privileges();
	signal(SIGPIPE, SIG_IGN);
}

int sandbox_spawn(struct sandbox *s, const char *name, void (*main)(int sock, void *ctx),
		  void *ctx, const struct sandbox_limits *limits)
{
	pid_t parent = getpid();
	int sv[2];

	reap_later();
	s->pid = 0;
	s->fd = -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -1;
	fflush(NULL);
	s->pid = fork();
	if (s->pid < 0) {
		int err = errno;

		close(sv[0]);
		close(sv[1]);
		s->pid = 0;
		errno = err;
		return -1;
	}
	if (!s->pid) {
		/* Its own name in ps and top, and for whoever accounts for its CPU. */
		prctl(PR_SET_NAME, name, 0, 0, 0);
		close(sv[0]);
		sandbox_enter(sv[1], limits);
		/* After the uid drop, which clears it; then the parent must still be there. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) || getppid() != parent)
			_exit(0);
		main(3, ctx);
		_exit(0);
	}
	close(sv[1]);
	s->fd = sv[0];
	return 0;
}

/* The offsets of a system call argument's low and high 32 bits in seccomp_data (little-endian). */
#define ARG_LO(i) ((unsigned)(offsetof(struct seccomp_data, args) + 8 * (i)))
#define ARG_HI(i) (ARG_LO(i) + 4)

void sandbox_seal(const int *allowed, size_t n)
{
	static const int always[] = { SYS_exit, SYS_exit_group, SYS_rt_sigreturn };
	size_t total = n + ARRAY_SIZE(always), k = 0;
	struct sock_filter *f = xcalloc(4 + 2 * total + 7 + 1, sizeof(*f));
	struct sock_fprog prog;

	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	for (size_t i = 0; i < total; i++) {
		int nr = i < n ? allowed[i] : always[i - n];

		if (nr == SYS_tgkill)
			continue;       /* below, with its arguments */
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	}
	/* tgkill(tgid, tid, sig) at this process only (raise, abort): its tgid's two halves. */
	for (size_t i = 0; i < n; i++) {
		if (allowed[i] != SYS_tgkill)
			continue;
		/* not tgkill: past this block, to the final kill */
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_tgkill, 0, 6);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0));
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)getpid(), 0, 2);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_HI(0));
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		break;
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	prog.len = (unsigned short)k;
	prog.filter = f;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		_exit(1);
#ifdef SANITIZED
	/* The sanitizers' runtime makes system calls of its own. */
	(void)prog;
#else
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0))
		_exit(1);
#endif
	free(f);
}

/*
 * Sends all len bytes of out, or receives len bytes into in (out NULL),
 * retrying on EINTR: 0, or -1 (error, or end of file).
 */
static int transfer_all(int fd, const void *out, void *in, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = out ? send(fd, (const uint8_t *)out + done, len - done, MSG_NOSIGNAL)
			: recv(fd, (uint8_t *)in + done, len - done, MSG_WAITALL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

int sandbox_send_all(int fd, const void *buf, size_t len)
{
	return transfer_all(fd, buf, NULL, len);
}

int sandbox_recv_all(int fd, void *buf, size_t len)
{
	return transfer_all(fd, NULL, buf, len);
}

void sandbox_msg(struct msghdr *m, struct iovec *iov, void *control, size_t controllen)
{
	memset(m, 0, sizeof(*m));
	m->msg_iov = iov;
	m->msg_iovlen = 1;
	if (control) {
		memset(control, 0, controllen);
		m->msg_control = control;
		m->msg_controllen = controllen;
	}
}

void sandbox_msg_pass(struct msghdr *m, int fd)
{
	struct cmsghdr *c = CMSG_FIRSTHDR(m);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
}

void sandbox_msg_fds(struct msghdr *m, int *first)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		size_t k = c->cmsg_len > CMSG_LEN(0) ? (c->cmsg_len - CMSG_LEN(0)) / sizeof(int) : 0;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < k; i++) {
			int got;

			memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (first && *first < 0)
				*first = got;
			else
				close(got);
		}
	}
}

int sandbox_send_fd(int fd, const void *buf, size_t len, int pass)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} u;
	struct iovec iov = { (void *)buf, len };
	struct msghdr m;
	ssize_t n;

	if (pass < 0 || !len)
		return sandbox_send_all(fd, buf, len);
	sandbox_msg(&m, &iov, u.b, sizeof(u.b));
	sandbox_msg_pass(&m, pass);
	do
		n = sendmsg(fd, &m, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	return sandbox_send_all(fd, (const char *)buf + n, len - (size_t)n);
}

int sandbox_recv_fd(int fd, void *buf, size_t len, int *passed)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(4 * sizeof(int))];
	} u;
	struct iovec iov = { buf, len };
	struct msghdr m;
	ssize_t n;

	*passed = -1;
	if (!len)
		return 0;
	sandbox_msg(&m, &iov, u.b, sizeof(u.b));
	do
		n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	/* A failed call says nothing of the control buffer: it is not parsed. */
	if (n < 0)
		return -1;
	sandbox_msg_fds(&m, passed);
	if (n == 0)
		return -1;
	return sandbox_recv_all(fd, (uint8_t *)buf + n, len - (size_t)n);
}

int sandbox_stop(struct sandbox *s, const char *what)
{
	int status = 0, died = 0;

	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	if (s->pid > 0) {
		pid_t r;

		/* Say why it died if it did by itself (the sandbox's SIGSYS, a crash). */
		if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
			if (WIFSIGNALED(status)) {
				died = WTERMSIG(status);
				warning("%s died of signal %d (%s)", what, died, strsignal(died));
			}
		} else {
			kill(s->pid, SIGKILL);
			/* Gone at once unless stuck in the kernel: never waited for long. */
			for (int i = 0; i < 100; i++) {
				r = waitpid(s->pid, &status, WNOHANG);
				/* Dying already when killed (its socket closed first): how it died. */
				if (r == s->pid && WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL) {
					died = WTERMSIG(status);
					warning("%s died of signal %d (%s)", what, died, strsignal(died));
				}
				if (r == s->pid || (r < 0 && errno != EINTR))
					break;
				usleep(1000);
				if (i == 99)
					for (size_t k = 0; k < LATER_MAX; k++)
						if (later[k] <= 0) {
							later[k] = s->pid;
							break;
						}
			}
		}
	}
	s->pid = 0;
	reap_later();
	return died;
}
