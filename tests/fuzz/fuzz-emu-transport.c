/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: the collector's side of the emulating worker's transport
 * (collect/emu-worker.h), with the input playing the worker: its bytes,
 * however framed (a hello or none, page requests, answers, garbage, a
 * message cut anywhere), arrive on the worker's socket as fast as the
 * socket takes them, and the worker reads what it is sent or never does
 * (back-pressure, in socket buffers made small), while a burst (and a
 * trail, once it is prepared) waits for its answer.
 *
 *   byte 0: bit 0 small socket buffers, bit 1 the worker reads what it is
 *           sent, bit 2 the burst is kept for a trail, bit 3 the trail is
 *           sent once it is prepared
 *   the rest: what the worker sends
 *
 * Every request ends (answered, or failed with a cause) within its
 * deadline; an answer the pool hands on is within what was asked.
 */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "collect/emu-worker.h"
#include "core/timeutil.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* How long a request may take here (the pool's deadline), and a margin past it. */
#define DEADLINE_NS (3 * 1000000LL)
#define GRACE_NS (200 * 1000000LL)

static uint8_t mapped[4096] __attribute__((aligned(4096)));

/* Writes what the socket takes of data[*off..size). */
static void feed(int fd, const uint8_t *data, size_t size, size_t *off)
{
	while (*off < size) {
		ssize_t n = send(fd, data + *off, size - *off, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n <= 0)
			return;
		*off += (size_t)n;
	}
}

/* The worker reads what it was sent (and throws it away). */
static void drain(int fd)
{
	char buf[65536];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

static void check(const struct emu_answer *a, const struct emu_burst_req *req)
{
	if (a->kind == EMU_ANSWER_BURST && (a->burst.insns > req->limit || a->burst.detailed > req->detail ||
					    a->burst.n_steps > req->trace))
		abort();
	if (a->kind == EMU_ANSWER_TRAIL && a->trail.matched)
		abort();        /* the trail asked for none */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct emu_burst_req req;
	struct emu_worker *w;
	int sv[2], flags, got;
	bool trail_sent = false;
	size_t off = 1;
	int64_t end;

	if (!size || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return 0;
	flags = data[0];
	if (flags & 1) {
		int small = 4096;

		setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
		setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
		setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
		setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	}
	feed(sv[1], data, size, &off);
	emu_worker_configure(&(struct emu_worker_opts){ NULL, NULL, NULL, true, sv[0] });
	w = emu_worker_start(false);
	memset(&req, 0, sizeof(req));
	req.st.rip = (uint64_t)(uintptr_t)mapped;
	req.limit = 1000, req.detail = 100, req.trace = 10, req.time_us = 1000;
	req.keep = flags & 4;
	end = time_monotonic_ns() + DEADLINE_NS + GRACE_NS;
	got = emu_worker_burst(w, &req, getpid(), -1, NULL, time_monotonic_ns() + DEADLINE_NS);
	while (!got) {
		struct emu_answer a;
		const char *why;
		struct pollfd p = { sv[1], POLLOUT | ((flags & 2) ? POLLIN : 0), 0 };

		if (time_monotonic_ns() > end)
			abort();        /* a request outlived its deadline */
		poll(&p, 1, 1);
		feed(sv[1], data, size, &off);
		if (flags & 2)
			drain(sv[1]);
		got = emu_worker_poll(w, &a, &why);
		if (got > 0) {
			check(&a, &req);
			emu_answer_release(&a);
			got = emu_worker_busy(w) ? 0 : 1;
		}
		if (!got && emu_worker_ready(w)) {
			struct emu_trail_req t;

			if (!(flags & 8) || trail_sent)
				break;
			memset(&t, 0, sizeof(t));
			t.limit = 1000, t.segment = 1000, t.time_us = 1000;
			got = emu_worker_trail(w, &t, getpid(), -1, time_monotonic_ns() + DEADLINE_NS);
			trail_sent = true;
		}
	}
	emu_worker_stop(w);
	emu_worker_configure(&(struct emu_worker_opts){ NULL, NULL, NULL, false, -1 });
	close(sv[1]);
	return 0;
}
