/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "collect/perfrec.h"
#include "core/cursor.h"

#include <linux/perf_event.h>
#include <string.h>

/* The sample_id trailer of non-sample records: pid, tid, time, identifier. */
#define TRAILER_SIZE 24
/* A sample: identifier, ip, pid, tid, time, period. */
#define SAMPLE_BODY 40

static uint64_t u64_at(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Reads the sample_id trailer at the end of a non-sample record. */
static int trailer(struct cursor *c, struct perf_rec *out)
{
	const unsigned char *t;

	if (cursor_left(c) < TRAILER_SIZE)
		return -1;
	t = c->end - TRAILER_SIZE;
	memcpy(&out->pid, t, 4);
	memcpy(&out->tid, t + 4, 4);
	out->time = u64_at(t + 8);
	out->id = u64_at(t + 16);
	out->has_id = true;
	c->end -= TRAILER_SIZE;
	return 0;
}

/* A NUL-terminated string filling the rest of the body (padded). */
static const char *string(struct cursor *c)
{
	const char *s = (const char *)c->p;

	if (!cursor_left(c) || !memchr(s, '\0', cursor_left(c)))
		return NULL;
	c->p = c->end;
	return s;
}

/* The optional fields after the fixed ones, in the kernel's order. */
static int parse_optional(struct cursor *c, const struct perf_rec_format *fmt,
			  struct perf_rec *out)
{
	uint64_t n, skip;

	if (fmt->sample_type & PERF_SAMPLE_CALLCHAIN) {
		if (cursor_copy(c, &n, 8) || n > cursor_left(c) / 8)
			return -1;
		c->p += n * 8;
	}
	if (fmt->sample_type & PERF_SAMPLE_REGS_USER) {
		if (cursor_copy(c, &out->u.sample.regs_abi, 8))
			return -1;
		if (out->u.sample.regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
			n = (uint64_t)__builtin_popcountll(fmt->regs_user);
			if (cursor_copy(c, out->u.sample.regs, n * 8))
				return -1;
			out->u.sample.n_regs = (unsigned)n;
		}
	}
	if (fmt->sample_type & PERF_SAMPLE_STACK_USER) {
		if (cursor_copy(c, &n, 8) || n > cursor_left(c))
			return -1;
		c->p += n;
		if (n && cursor_copy(c, &skip, 8))
			return -1;
	}
	return 0;
}

static int parse_sample(struct cursor *c, uint16_t misc, const struct perf_rec_format *fmt,
			struct perf_rec *out)
{
	unsigned mode = misc & PERF_RECORD_MISC_CPUMODE_MASK;

	if (cursor_left(c) < SAMPLE_BODY)
		return -1;
	out->id = u64_at(c->p);
	out->u.sample.ip = u64_at(c->p + 8);
	memcpy(&out->pid, c->p + 16, 4);
	memcpy(&out->tid, c->p + 20, 4);
	out->time = u64_at(c->p + 24);
	out->u.sample.period = u64_at(c->p + 32);
	out->u.sample.kernel = mode == PERF_RECORD_MISC_KERNEL;
	out->u.sample.user = mode == PERF_RECORD_MISC_USER;
	out->has_id = true;
	c->p += SAMPLE_BODY;
	return parse_optional(c, fmt, out);
}

static int parse_mmap(struct cursor *c, uint32_t type, uint16_t misc, struct perf_rec *out)
{
	unsigned char u[24];
	uint32_t pid, tid;

	if (trailer(c, out) || cursor_copy(c, &pid, 4) || cursor_copy(c, &tid, 4) ||
	    cursor_copy(c, &out->u.mmap.start, 8) || cursor_copy(c, &out->u.mmap.len, 8) ||
	    cursor_copy(c, &out->u.mmap.pgoff, 8))
		return -1;
	if (type == PERF_RECORD_MMAP2) {
		if (cursor_copy(c, u, sizeof(u)) || cursor_copy(c, &out->u.mmap.prot, 4) ||
		    cursor_copy(c, &out->u.mmap.flags, 4))
			return -1;
		if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			out->u.mmap.has_build_id = true;
			out->u.mmap.build_id_len = u[0];
			if (u[0] > PERF_REC_BUILD_ID_MAX)
				return -1;
			memcpy(out->u.mmap.build_id, u + 4, PERF_REC_BUILD_ID_MAX);
		} else {
			out->u.mmap.has_inode = true;
			memcpy(&out->u.mmap.maj, u, 4);
			memcpy(&out->u.mmap.min, u + 4, 4);
			out->u.mmap.ino = u64_at(u + 8);
		}
	}
	out->pid = pid;
	out->tid = tid;
	return (out->u.mmap.filename = string(c)) ? 0 : -1;
}

static int parse_comm(struct cursor *c, uint16_t misc, struct perf_rec *out)
{
	uint32_t pid, tid;

	if (trailer(c, out) || cursor_copy(c, &pid, 4) || cursor_copy(c, &tid, 4))
		return -1;
	out->pid = pid;
	out->tid = tid;
	out->u.comm.exec = misc & PERF_RECORD_MISC_COMM_EXEC;
	return (out->u.comm.comm = string(c)) ? 0 : -1;
}

static int parse_task(struct cursor *c, struct perf_rec *out)
{
	uint64_t time;

	if (trailer(c, out) || cursor_copy(c, &out->u.task.pid, 4) || cursor_copy(c, &out->u.task.ppid, 4) ||
	    cursor_copy(c, &out->u.task.tid, 4) || cursor_copy(c, &out->u.task.ptid, 4) || cursor_copy(c, &time, 8))
		return -1;
	out->pid = out->u.task.pid;
	out->tid = out->u.task.tid;
	out->time = time;
	return 0;
}

static int parse_body(struct cursor *c, uint32_t type, uint16_t misc,
		      const struct perf_rec_format *fmt, struct perf_rec *out)
{
	uint64_t skip[3];

	switch (type) {
	case PERF_RECORD_SAMPLE:
		out->kind = PERF_REC_SAMPLE;
		return parse_sample(c, misc, fmt, out);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		out->kind = PERF_REC_MMAP;
		return parse_mmap(c, type, misc, out);
	case PERF_RECORD_COMM:
		out->kind = PERF_REC_COMM;
		return parse_comm(c, misc, out);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		out->kind = type == PERF_RECORD_FORK ? PERF_REC_FORK : PERF_REC_EXIT;
		return parse_task(c, out);
	case PERF_RECORD_LOST:
		out->kind = PERF_REC_LOST;
		return trailer(c, out) || cursor_copy(c, skip, 8) || cursor_copy(c, &out->u.lost.lost, 8);
	case PERF_RECORD_LOST_SAMPLES:
		out->kind = PERF_REC_LOST_SAMPLES;
		return trailer(c, out) || cursor_copy(c, &out->u.lost.lost, 8);
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		out->kind = type == PERF_RECORD_THROTTLE ? PERF_REC_THROTTLE : PERF_REC_UNTHROTTLE;
		return trailer(c, out) || cursor_copy(c, skip, 24);
	default:
		out->kind = PERF_REC_OTHER;
		/* Records without sample_id (e.g. FINISHED_ROUND) have no time. */
		if (type < PERF_RECORD_MAX && cursor_left(c) >= TRAILER_SIZE)
			trailer(c, out);
		return 0;
	}
}

/* dcpi's fixed sample fields (collect/perf.h PERF_COLLECT_SAMPLE_TYPE). */
#define FIXED_FIELDS                                                                 \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	 PERF_SAMPLE_PERIOD)
#define OPTIONAL_FIELDS (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

int perf_rec_parse(const void *rec, size_t len, struct perf_rec *out, const char **why)
{
	static const struct perf_rec_format fixed = { FIXED_FIELDS, 0 };

	return perf_rec_parse_fmt(rec, len, &fixed, out, why);
}

int perf_rec_parse_fmt(const void *rec, size_t len, const struct perf_rec_format *fmt,
		       struct perf_rec *out, const char **why)
{
	struct perf_event_header h;
	struct cursor c;

	memset(out, 0, sizeof(*out));
	if ((fmt->sample_type & ~(uint64_t)(FIXED_FIELDS | OPTIONAL_FIELDS)) ||
	    (fmt->sample_type & FIXED_FIELDS) != FIXED_FIELDS ||
	    __builtin_popcountll(fmt->regs_user) > PERF_REC_REGS_MAX) {
		*why = "unsupported sample format";
		return -1;
	}
	if (len < sizeof(h)) {
		*why = "record shorter than its header";
		return -1;
	}
	memcpy(&h, rec, sizeof(h));
	if (h.size != len || len % 8) {
		*why = "record size does not match its header";
		return -1;
	}
	out->type = h.type;
	out->misc = h.misc;
	c = (struct cursor)CURSOR_INIT((const uint8_t *)rec + sizeof(h), len - sizeof(h));
	if (parse_body(&c, h.type, h.misc, fmt, out)) {
		*why = "truncated or malformed record";
		return -1;
	}
	return 0;
}

uint64_t perf_rec_time(const void *rec, size_t len)
{
	struct perf_event_header h;

	if (len < sizeof(h))
		return 0;
	memcpy(&h, rec, sizeof(h));
	if (h.size != len)
		return 0;
	if (h.type == PERF_RECORD_SAMPLE)
		return len >= sizeof(h) + SAMPLE_BODY ? u64_at((const unsigned char *)rec + 8 + 24) : 0;
	if (h.type >= PERF_RECORD_MAX || len < sizeof(h) + TRAILER_SIZE)
		return 0;
	return u64_at((const unsigned char *)rec + len - 16);
}
