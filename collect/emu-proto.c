/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "collect/emu-proto.h"
#include "core/cursor.h"
#include "core/endian.h"
#include "core/strbuf.h"
#include "core/varint.h"
#include "core/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* ---- framing --------------------------------------------------------------------------- */

void emu_msg_begin(struct strbuf *out, uint32_t magic, enum emu_msg type, uint32_t seq)
{
	uint8_t h[EMU_HEADER_SIZE];

	put_le32(h, magic);
	put_le32(h + 4, (uint32_t)type);
	put_le32(h + 8, seq);
	put_le32(h + 12, 0);
	strbuf_add(out, h, sizeof(h));
}

void emu_msg_finish(struct strbuf *out, size_t start)
{
	put_le32((uint8_t *)out->buf + start + 12, (uint32_t)(out->len - start - EMU_HEADER_SIZE));
}

int emu_header_decode(const void *buf, uint32_t magic, struct emu_header *h)
{
	const uint8_t *b = buf;

	h->magic = get_le32(b);
	h->type = get_le32(b + 4);
	h->seq = get_le32(b + 8);
	h->len = get_le32(b + 12);
	return h->magic == magic && h->len <= EMU_MAX_PAYLOAD ? 0 : -1;
}

static void put(struct strbuf *out, uint64_t v)
{
	strbuf_add_varint(out, v);
}

/* A short printable word (a mnemonic, "syscall 60"): its length, then its bytes. */
static void put_word(struct strbuf *out, const char *w)
{
	size_t n = strlen(w);

	put(out, n);
	strbuf_add(out, w, n);
}

static int get_word(struct cursor *r, char *w, size_t size)
{
	uint64_t n = cursor_next(r);
	const uint8_t *b = cursor_next_bytes(r, r->why || n >= size ? SIZE_MAX : (size_t)n);

	if (!b)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (b[i] < 0x20 || b[i] > 0x7e)
			return -1;
	memcpy(w, b, (size_t)n);
	w[n] = '\0';
	return 0;
}

static bool is_bool(uint64_t v)
{
	return v <= 1;
}

#define FAIL(msg) do { *why = (msg); goto bad; } while (0)

/* ---- the state --------------------------------------------------------------------- */

static void put_regs(struct strbuf *out, const uint64_t *regs)
{
	for (unsigned k = 0; k < VALUES_NREGS; k++)
		put(out, regs[k]);
}

static void get_regs(struct cursor *r, uint64_t *regs)
{
	for (unsigned k = 0; k < VALUES_NREGS; k++)
		regs[k] = cursor_next(r);
}

static void put_state(struct strbuf *out, const struct emu_state *s)
{
	put(out, s->rip);
	put_regs(out, s->regs);
	put(out, s->fs_base), put(out, s->gs_base);
	strbuf_add(out, s->xmm, sizeof(s->xmm));
	put(out, s->mxcsr), put(out, s->fcw), put(out, s->fsw), put(out, s->ftw);
	strbuf_add(out, s->st, sizeof(s->st));
}

static int get_state(struct cursor *r, struct emu_state *s)
{
	const uint8_t *b;
	uint64_t mxcsr, fcw, fsw, ftw;

	s->rip = cursor_next(r);
	get_regs(r, s->regs);
	s->fs_base = cursor_next(r);
	s->gs_base = cursor_next(r);
	if ((b = cursor_next_bytes(r, sizeof(s->xmm))))
		memcpy(s->xmm, b, sizeof(s->xmm));
	mxcsr = cursor_next(r), fcw = cursor_next(r), fsw = cursor_next(r), ftw = cursor_next(r);
	if ((b = cursor_next_bytes(r, sizeof(s->st))))
		memcpy(s->st, b, sizeof(s->st));
	if (r->why || mxcsr > UINT32_MAX || fcw > UINT16_MAX || fsw > UINT16_MAX || ftw > UINT8_MAX ||
	    s->rip >= EMU_USER_END)
		return -1;
	s->mxcsr = (uint32_t)mxcsr;
	s->fcw = (uint16_t)fcw;
	s->fsw = (uint16_t)fsw;
	s->ftw = (uint8_t)ftw;
	return 0;
}

/* ---- collector to worker ------------------------------------------------------------ */

void emu_encode_burst(struct strbuf *out, uint32_t seq, const struct emu_burst_req *r)
{
	size_t start = out->len;

	emu_msg_begin(out, EMU_REQ_MAGIC, EMU_MSG_BURST, seq);
	put(out, r->space);
	put_state(out, &r->st);
	put(out, r->limit), put(out, r->detail), put(out, r->trace), put(out, r->time_us);
	put(out, r->keep);
	put(out, r->n_snap);
	for (size_t i = 0; i < r->n_snap; i++) {
		put(out, r->snap[i].addr / EMU_PAGE_SIZE);
		strbuf_add(out, r->snap[i].data, EMU_PAGE_SIZE);
	}
	put(out, r->n_files);
	for (size_t i = 0; i < r->n_files; i++)
		put(out, r->files[i].fd), put(out, r->files[i].pos);
	emu_msg_finish(out, start);
}

int emu_decode_burst(const void *payload, size_t len, struct emu_burst_req *r,
		     struct emu_page *snap, const char **why)
{
	struct cursor rd = CURSOR_INIT(payload, len);
	uint64_t limit, detail, trace, time_us, keep;
	size_t n;

	memset(r, 0, sizeof(*r));
	r->space = cursor_next(&rd);
	if (get_state(&rd, &r->st))
		FAIL("bad state");
	limit = cursor_next(&rd), detail = cursor_next(&rd), trace = cursor_next(&rd);
	time_us = cursor_next(&rd), keep = cursor_next(&rd);
	if (rd.why)
		FAIL("truncated burst");
	if (!limit || limit > EMU_MAX_LIMIT || detail > limit || trace > detail ||
	    trace > EMU_MAX_TRACE || !time_us || time_us > 10000000 || !is_bool(keep))
		FAIL("bad burst limits");
	n = cursor_next_count(&rd, EMU_MAX_SNAP, 1 + EMU_PAGE_SIZE);
	for (size_t i = 0; i < n && !rd.why; i++) {
		uint64_t page = cursor_next(&rd);

		/* distinct, in order: each page once */
		if (page >= EMU_USER_END / EMU_PAGE_SIZE || (i && page * EMU_PAGE_SIZE <= snap[i - 1].addr))
			FAIL("bad snapshot page");
		snap[i] = (struct emu_page){ page * EMU_PAGE_SIZE, true, cursor_next_bytes(&rd, EMU_PAGE_SIZE) };
	}
	if (rd.why)
		FAIL("truncated snapshot");
	r->n_files = cursor_next_count(&rd, EMU_MAX_FILES, 2);
	for (size_t i = 0; i < r->n_files && !rd.why; i++) {
		uint64_t fd = cursor_next(&rd);

		r->files[i].pos = cursor_next(&rd);
		if (fd > INT32_MAX || r->files[i].pos > INT64_MAX)
			FAIL("bad file");
		for (size_t k = 0; k < i; k++)
			if (r->files[k].fd == fd)
				FAIL("bad file");
		r->files[i].fd = (uint32_t)fd;
	}
	if (rd.why)
		FAIL("truncated files");
	if (rd.p != rd.end)
		FAIL("trailing bytes");
	r->n_snap = n;
	r->snap = n ? snap : NULL;
	r->limit = (uint32_t)limit;
	r->detail = (uint32_t)detail;
	r->trace = (uint32_t)trace;
	r->time_us = (uint32_t)time_us;
	r->keep = keep;
	return 0;
bad:
	return -1;
}

void emu_encode_pages(struct strbuf *out, uint32_t seq, const struct emu_page *p, size_t n)
{
	size_t start = out->len;

	emu_msg_begin(out, EMU_REQ_MAGIC, EMU_MSG_PAGES, seq);
	put(out, n);
	for (size_t i = 0; i < n; i++) {
		put(out, p[i].addr / EMU_PAGE_SIZE);
		put(out, p[i].ok);
		if (p[i].ok)
			strbuf_add(out, p[i].data, EMU_PAGE_SIZE);
	}
	emu_msg_finish(out, start);
}

int emu_decode_pages(const void *payload, size_t len, struct emu_page *p, size_t max, size_t *n,
		     const char **why)
{
	struct cursor rd = CURSOR_INIT(payload, len);
	size_t count = cursor_next_count(&rd, max, 2);

	*n = 0;
	if (rd.why)
		FAIL("bad page count");
	for (size_t i = 0; i < count; i++) {
		uint64_t page = cursor_next(&rd), ok = cursor_next(&rd);

		if (rd.why || page >= EMU_USER_END / EMU_PAGE_SIZE || !is_bool(ok))
			FAIL("bad page");
		p[i].addr = page * EMU_PAGE_SIZE;
		p[i].ok = ok;
		p[i].data = ok ? cursor_next_bytes(&rd, EMU_PAGE_SIZE) : NULL;
		if (rd.why)
			FAIL("truncated page");
	}
	if (rd.p != rd.end)
		FAIL("trailing bytes");
	*n = count;
	return 0;
bad:
	return -1;
}

static void put_point(struct strbuf *out, const struct emu_point *p)
{
	put(out, p->rip);
	put_regs(out, p->regs);
}

static void get_point(struct cursor *r, struct emu_point *p)
{
	p->rip = cursor_next(r);
	get_regs(r, p->regs);
	if (p->rip >= EMU_USER_END)
		cursor_fail(r, "a point out of range");
}

void emu_encode_trail(struct strbuf *out, uint32_t seq, const struct emu_trail_req *r)
{
	size_t start = out->len;

	emu_msg_begin(out, EMU_REQ_MAGIC, EMU_MSG_TRAIL, seq);
	put(out, r->n);
	for (uint32_t i = 0; i < r->n; i++) {
		put_point(out, &r->pt[i].p);
		put(out, r->pt[i].lo), put(out, r->pt[i].hi), put(out, r->pt[i].flags);
	}
	put(out, r->count_from), put(out, r->limit), put(out, r->segment), put(out, r->time_us);
	emu_msg_finish(out, start);
}

void emu_trail_req_release(struct emu_trail_req *r)
{
	free(r->pt);
	memset(r, 0, sizeof(*r));
}

int emu_decode_trail(const void *payload, size_t len, struct emu_trail_req *r, const char **why)
{
	struct cursor rd = CURSOR_INIT(payload, len);
	uint64_t count_from, time_us;
	size_t n;

	memset(r, 0, sizeof(*r));
	n = cursor_next_count(&rd, EMU_MAX_TRAIL, 4 + VALUES_NREGS);
	if (rd.why)
		FAIL("bad trail length");
	r->pt = xcalloc(n ? n : 1, sizeof(*r->pt));
	for (size_t i = 0; i < n && !rd.why; i++) {
		uint64_t flags;

		get_point(&rd, &r->pt[i].p);
		r->pt[i].lo = cursor_next(&rd), r->pt[i].hi = cursor_next(&rd);
		flags = cursor_next(&rd);
		if (r->pt[i].lo > r->pt[i].hi || r->pt[i].hi > EMU_USER_END || flags > (EMU_POINT_PERIOD | EMU_POINT_KERNEL))
			cursor_fail(&rd, "a point out of range");
		r->pt[i].flags = (uint32_t)flags;
	}
	count_from = cursor_next(&rd);
	r->limit = cursor_next(&rd);
	r->segment = cursor_next(&rd);
	time_us = cursor_next(&rd);
	if (rd.why)
		FAIL("truncated trail");
	if ((n ? count_from >= n : count_from != 0) || !r->limit || !r->segment ||
	    r->segment > EMU_MAX_SEGMENT || !time_us || time_us > 10000000)
		FAIL("bad trail limits");
	if (rd.p != rd.end)
		FAIL("trailing bytes");
	r->n = (uint32_t)n;
	r->count_from = (uint32_t)count_from;
	r->time_us = (uint32_t)time_us;
	return 0;
bad:
	emu_trail_req_release(r);
	return -1;
}

void emu_encode_empty(struct strbuf *out, uint32_t magic, enum emu_msg type, uint32_t seq)
{
	size_t start = out->len;

	emu_msg_begin(out, magic, type, seq);
	emu_msg_finish(out, start);
}

void emu_encode_drop(struct strbuf *out, uint32_t seq)
{
	emu_encode_empty(out, EMU_REQ_MAGIC, EMU_MSG_DROP, seq);
}

void emu_encode_read_req(struct strbuf *out, uint32_t seq, uint32_t fd, uint64_t offset,
			 uint64_t count)
{
	size_t start = out->len;

	emu_msg_begin(out, EMU_REP_MAGIC, EMU_MSG_READ_REQ, seq);
	put(out, fd), put(out, offset), put(out, count);
	emu_msg_finish(out, start);
}

int emu_decode_read_req(const void *payload, size_t len, uint32_t *fd, uint64_t *offset,
			uint64_t *count, const char **why)
{
	struct cursor rd = CURSOR_INIT(payload, len);
	uint64_t f = cursor_next(&rd);

	*offset = cursor_next(&rd);
	*count = cursor_next(&rd);
	if (rd.why || rd.p != rd.end || f > INT32_MAX || *offset > INT64_MAX || !*count ||
	    *count > EMU_MAX_READ)
		FAIL("bad read request");
	*fd = (uint32_t)f;
	return 0;
bad:
	return -1;
}

void emu_encode_data(struct strbuf *out, uint32_t seq, int64_t n, const void *data)
{
	size_t start = out->len;

	emu_msg_begin(out, EMU_REQ_MAGIC, EMU_MSG_DATA, seq);
	put(out, n < 0 ? 0 : (uint64_t)n + 1);
	if (n > 0)
		strbuf_add(out, data, (size_t)n);
	emu_msg_finish(out, start);
}

int emu_decode_data(const void *payload, size_t len, uint64_t max, int64_t *n, const uint8_t **data,
		    const char **why)
{
	struct cursor rd = CURSOR_INIT(payload, len);
	uint64_t v = cursor_next(&rd);

	*data = NULL;
	if (rd.why || v > max + 1)
		FAIL("bad data");
	*n = (int64_t)v - 1;
	if (*n > 0 && !(*data = cursor_next_bytes(&rd, (size_t)*n)))
		FAIL("truncated data");
	if (rd.p != rd.end)
		FAIL("trailing bytes");
	return 0;
bad:
	return -1;
}

/* ---- worker to collector ------------------------------------------------------------ */

void emu_encode_page_req(struct strbuf *out, uint32_t seq, const uint64_t *addr, size_t n)
{
	size_t start = out->len;

	emu_msg_begin(out, EMU_REP_MAGIC, EMU_MSG_PAGE_REQ, seq);
	put(out, n);
	for (size_t i = 0; i < n; i++)
		put(out, addr[i] / EMU_PAGE_SIZE);
	emu_msg_finish(out, start);
}

int emu_decode_page_req(const void *payload, size_t len, uint64_t *addr, size_t max, size_t *n,
			const char **why)
{
	struct cursor rd = CURSOR_INIT(payload, len);
	size_t count = cursor_next_count(&rd, max, 1);

	*n = 0;
	if (rd.why || !count)
		FAIL("bad page count");
	for (size_t i = 0; i < count; i++) {
		uint64_t page = cursor_next(&rd);

		if (rd.why || page >= EMU_USER_END / EMU_PAGE_SIZE)
			FAIL("bad page");
		addr[i] = page * EMU_PAGE_SIZE;
	}
	if (rd.p != rd.end)
		FAIL("trailing bytes");
	*n = count;
	return 0;
bad:
	return -1;
}

static void put_blocks(struct strbuf *out, const struct emu_block_rec *b, size_t n)
{
	put(out, n);
	for (size_t i = 0; i < n; i++)
		put(out, b[i].pc), put(out, b[i].bytes), put(out, b[i].insns), put(out, b[i].count);
}

/* Reads a block list into *b; the instructions they hold (saturating) into *insns. */
static int get_blocks(struct cursor *r, struct emu_block_rec **b, size_t *n,
		      uint64_t *insns)
{
	size_t count = cursor_next_count(r, EMU_MAX_RECORDS, 4);

	*insns = 0;
	*b = xcalloc(count ? count : 1, sizeof(**b));
	for (size_t i = 0; i < count && !r->why; i++) {
		struct emu_block_rec *x = &(*b)[i];
		uint64_t bytes, ins;

		x->pc = cursor_next(r), bytes = cursor_next(r), ins = cursor_next(r);
		x->count = cursor_next(r);
		if (r->why || x->pc >= EMU_USER_END || !bytes || bytes > PATHS_MAX_BLOCK_BYTES ||
		    !ins || ins > bytes || !x->count)
			return -1;
		x->bytes = (uint32_t)bytes;
		x->insns = (uint32_t)ins;
		*insns = x->count > (UINT64_MAX - *insns) / ins ? UINT64_MAX : *insns + x->count * ins;
		*n = i + 1;
	}
	return r->why ? -1 : 0;
}

void emu_encode_result(struct strbuf *out, uint32_t seq, const struct emu_result *r)
{
	size_t start = out->len;

	emu_msg_begin(out, EMU_REP_MAGIC, EMU_MSG_RESULT, seq);
	put(out, r->end), put(out, r->end_pc);
	put_word(out, r->mnemonic);
	put(out, r->insns), put(out, r->detailed), put(out, r->pages), put(out, r->live);
	put(out, r->kept);
	put(out, r->n_working);
	for (size_t i = 0; i < r->n_working; i++)
		put(out, r->working[i] / EMU_PAGE_SIZE);
	put_blocks(out, r->blocks, r->n_blocks);
	put(out, r->n_edges);
	for (size_t i = 0; i < r->n_edges; i++)
		put(out, r->edges[i].from), put(out, r->edges[i].to), put(out, r->edges[i].count);
	put(out, r->n_insn);
	for (size_t i = 0; i < r->n_insn; i++)
		put(out, r->insn[i].pc), put(out, r->insn[i].execs);
	put(out, r->n_values);
	for (size_t i = 0; i < r->n_values; i++) {
		const struct emu_value_rec *v = &r->values[i];

		put(out, v->pc), put(out, v->reg), put(out, v->value), put(out, v->count);
	}
	put(out, r->n_conflicts);
	for (size_t i = 0; i < r->n_conflicts; i++) {
		const struct emu_conflict_rec *c = &r->conflicts[i];

		put(out, c->load), put(out, c->store), put(out, c->kind), put(out, c->count);
	}
	put(out, r->n_steps);
	for (size_t i = 0; i < r->n_steps; i++) {
		put(out, r->steps[i].pc);
		put_regs(out, r->steps[i].regs);
	}
	emu_msg_finish(out, start);
}

void emu_result_release(struct emu_result *r)
{
	free(r->blocks);
	free(r->edges);
	free(r->insn);
	free(r->values);
	free(r->conflicts);
	free(r->steps);
	memset(r, 0, sizeof(*r));
}

static int get_edges(struct cursor *rd, struct emu_result *r)
{
	size_t n = cursor_next_count(rd, EMU_MAX_RECORDS, 3);

	r->edges = xcalloc(n ? n : 1, sizeof(*r->edges));
	for (size_t i = 0; i < n && !rd->why; i++) {
		struct emu_edge_rec *e = &r->edges[i];

		e->from = cursor_next(rd), e->to = cursor_next(rd), e->count = cursor_next(rd);
		if (rd->why || e->from >= EMU_USER_END || e->to >= EMU_USER_END || !e->count)
			return -1;
		r->n_edges = i + 1;
	}
	return rd->why ? -1 : 0;
}

static int get_detail(struct cursor *rd, struct emu_result *r)
{
	size_t n = cursor_next_count(rd, EMU_MAX_RECORDS, 2);

	r->insn = xcalloc(n ? n : 1, sizeof(*r->insn));
	for (size_t i = 0; i < n && !rd->why; i++) {
		r->insn[i].pc = cursor_next(rd), r->insn[i].execs = cursor_next(rd);
		if (rd->why || r->insn[i].pc >= EMU_USER_END || !r->insn[i].execs)
			return -1;
		r->n_insn = i + 1;
	}
	n = cursor_next_count(rd, EMU_MAX_RECORDS, 4);
	r->values = xcalloc(n ? n : 1, sizeof(*r->values));
	for (size_t i = 0; i < n && !rd->why; i++) {
		struct emu_value_rec *v = &r->values[i];
		uint64_t reg;

		v->pc = cursor_next(rd), reg = cursor_next(rd), v->value = cursor_next(rd);
		v->count = cursor_next(rd);
		if (rd->why || v->pc >= EMU_USER_END || reg >= VREG_RFLAGS || !v->count)
			return -1;
		v->reg = (uint8_t)reg;
		r->n_values = i + 1;
	}
	n = cursor_next_count(rd, EMU_MAX_RECORDS, 4);
	r->conflicts = xcalloc(n ? n : 1, sizeof(*r->conflicts));
	for (size_t i = 0; i < n && !rd->why; i++) {
		struct emu_conflict_rec *c = &r->conflicts[i];
		uint64_t kind;

		c->load = cursor_next(rd), c->store = cursor_next(rd), kind = cursor_next(rd);
		c->count = cursor_next(rd);
		if (rd->why || c->load >= EMU_USER_END || c->store >= EMU_USER_END ||
		    kind >= PATHS_CONFLICT__COUNT || !c->count)
			return -1;
		c->kind = (uint8_t)kind;
		r->n_conflicts = i + 1;
	}
	return rd->why ? -1 : 0;
}

static int get_steps(struct cursor *rd, struct emu_result *r)
{
	size_t n = cursor_next_count(rd, EMU_MAX_TRACE, 1 + VALUES_NREGS);

	r->steps = xcalloc(n ? n : 1, sizeof(*r->steps));
	for (size_t i = 0; i < n && !rd->why; i++) {
		r->steps[i].pc = cursor_next(rd);
		get_regs(rd, r->steps[i].regs);
		if (rd->why || r->steps[i].pc >= EMU_USER_END)
			return -1;
		r->n_steps = i + 1;
	}
	return rd->why ? -1 : 0;
}

int emu_decode_result(const void *payload, size_t len, struct emu_result *r, const char **why)
{
	struct cursor rd = CURSOR_INIT(payload, len);
	uint64_t end, kept, held;

	memset(r, 0, sizeof(*r));
	end = cursor_next(&rd), r->end_pc = cursor_next(&rd);
	if (rd.why || end >= PATHS_END__COUNT || r->end_pc >= EMU_USER_END)
		FAIL("bad end");
	r->end = (uint8_t)end;
	if (get_word(&rd, r->mnemonic, sizeof(r->mnemonic)))
		FAIL("bad mnemonic");
	r->insns = cursor_next(&rd), r->detailed = cursor_next(&rd), r->pages = cursor_next(&rd);
	r->live = cursor_next(&rd);
	kept = cursor_next(&rd);
	if (rd.why || !is_bool(kept) || r->detailed > r->insns || r->live > r->pages)
		FAIL("bad totals");
	r->kept = kept;
	r->n_working = cursor_next_count(&rd, EMU_MAX_WORKING, 1);
	for (size_t i = 0; i < r->n_working && !rd.why; i++) {
		uint64_t page = cursor_next(&rd);

		if (page >= EMU_USER_END / EMU_PAGE_SIZE)
			FAIL("bad working page");
		r->working[i] = page * EMU_PAGE_SIZE;
	}
	if (rd.why)
		FAIL("bad working pages");
	if (get_blocks(&rd, &r->blocks, &r->n_blocks, &held))
		FAIL("bad block");
	if (r->insns > held)
		FAIL("more instructions than its blocks hold");
	if (get_edges(&rd, r))
		FAIL("bad edge");
	if (get_detail(&rd, r))
		FAIL("bad detail");
	if (get_steps(&rd, r))
		FAIL("bad step");
	if (r->n_steps > r->detailed)
		FAIL("more steps than followed in detail");
	if (rd.p != rd.end)
		FAIL("trailing bytes");
	return 0;
bad:
	emu_result_release(r);
	return -1;
}

void emu_encode_trail_result(struct strbuf *out, uint32_t seq, const struct emu_trail_result *r)
{
	size_t start = out->len;

	emu_msg_begin(out, EMU_REP_MAGIC, EMU_MSG_TRAIL_RESULT, seq);
	put(out, r->matched), put(out, r->miss), put(out, r->to_first), put(out, r->end_pc);
	put_word(out, r->mnemonic);
	put(out, r->closest), put(out, (uint64_t)(r->read_fd + 1)), put(out, r->live);
	for (uint32_t k = 1; k < r->matched; k++)
		put(out, r->at[k] - r->at[k - 1]), put(out, r->here[k]);
	put_blocks(out, r->blocks, r->n_blocks);
	emu_msg_finish(out, start);
}

void emu_trail_result_release(struct emu_trail_result *r)
{
	free(r->at);
	free(r->here);
	free(r->blocks);
	memset(r, 0, sizeof(*r));
}

int emu_decode_trail_result(const void *payload, size_t len, uint32_t n,
			    struct emu_trail_result *r, const char **why)
{
	struct cursor rd = CURSOR_INIT(payload, len);
	uint64_t matched, miss, held, total = 0, closest, read_fd;

	memset(r, 0, sizeof(*r));
	matched = cursor_next(&rd), miss = cursor_next(&rd);
	r->to_first = cursor_next(&rd), r->end_pc = cursor_next(&rd);
	if (rd.why || matched > n || n > EMU_MAX_TRAIL || miss >= PATHS_MISS__COUNT ||
	    r->end_pc >= EMU_USER_END)
		FAIL("bad trail result");
	r->matched = (uint32_t)matched;
	r->miss = (uint8_t)miss;
	if (get_word(&rd, r->mnemonic, sizeof(r->mnemonic)))
		FAIL("bad mnemonic");
	closest = cursor_next(&rd);
	read_fd = cursor_next(&rd);
	r->live = cursor_next(&rd);
	if ((closest > VALUES_NREGS && closest != EMU_NOT_PASSED) || read_fd > (uint64_t)INT32_MAX + 1)
		FAIL("bad closest");
	r->read_fd = (int32_t)read_fd - 1;
	r->closest = (uint8_t)closest;
	r->at = xcalloc(n + 1, sizeof(*r->at));
	r->here = xcalloc(n + 1, sizeof(*r->here));
	for (uint32_t k = 1; k < r->matched && !rd.why; k++) {
		uint64_t d = cursor_next(&rd), h = cursor_next(&rd);

		/* two points never match at one instruction; a segment's part is within it */
		if (!d || h > d || d > EMU_MAX_SEGMENT)
			FAIL("bad segment");
		r->at[k] = r->at[k - 1] + d;
		r->here[k] = h;
		total += d;
	}
	if (rd.why)
		FAIL("truncated trail result");
	if (get_blocks(&rd, &r->blocks, &r->n_blocks, &held))
		FAIL("bad block");
	/* the counted blocks ran within the segments matched (blocks counted whole: some slack) */
	if (held > total + (uint64_t)PATHS_MAX_BLOCK_BYTES * (r->matched + 1))
		FAIL("more instructions in its blocks than between its points");
	if (rd.p != rd.end)
		FAIL("trailing bytes");
	return 0;
bad:
	emu_trail_result_release(r);
	return -1;
}

/* ---- an answer within its request ---------------------------------------------------- */

/* a + b, saturating. */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int emu_result_check(const struct emu_result *r, const struct emu_burst_req *asked,
		     const char **why)
{
	/* The hooks count up to the detail asked for (one more, cut short, at most). */
	uint64_t detail = (uint64_t)asked->detail + 1;
	uint64_t execs = 0, writes = 0, conflicts = 0, edges = 0;

	if (r->insns > asked->limit)
		FAIL("more instructions than asked for");
	if (r->detailed > asked->detail)
		FAIL("more instructions in detail than asked for");
	if (r->n_steps > asked->trace)
		FAIL("more raw steps than asked for");
	for (size_t i = 0; i < r->n_insn; i++)
		execs = sat_add(execs, r->insn[i].execs);
	if (execs > detail)
		FAIL("more executions than instructions asked for in detail");
	/* an instruction writes a few registers (at most every general one), touches a few places */
	for (size_t i = 0; i < r->n_values; i++)
		writes = sat_add(writes, r->values[i].count);
	if (writes > detail * VREG_RFLAGS)
		FAIL("more values written than instructions asked for in detail");
	for (size_t i = 0; i < r->n_conflicts; i++)
		conflicts = sat_add(conflicts, r->conflicts[i].count);
	if (conflicts > detail * EMU_MAX_ACCESSES)
		FAIL("more conflicts than instructions asked for in detail");
	/* an edge ends a block of one instruction at least */
	for (size_t i = 0; i < r->n_edges; i++)
		edges = sat_add(edges, r->edges[i].count);
	if (edges > (uint64_t)asked->limit + 1)
		FAIL("more branches taken than instructions asked for");
	return 0;
bad:
	return -1;
}

int emu_trail_result_check(const struct emu_trail_result *r, const struct emu_trail_req *asked,
			   const char **why)
{
	if (r->matched > asked->n)
		FAIL("more points matched than asked for");
	if (r->to_first > asked->segment)
		FAIL("more instructions to the first point than a segment");
	if (r->matched && sat_add(r->to_first, r->at[r->matched - 1]) > asked->limit)
		FAIL("more instructions than asked for");
	return 0;
bad:
	return -1;
}

/* ---- the worker's hello --------------------------------------------------------------- */

void emu_encode_hello(struct strbuf *out, enum emu_hello_status status)
{
	size_t start = out->len;

	emu_msg_begin(out, EMU_REP_MAGIC, EMU_MSG_HELLO, 0);
	put(out, EMU_PROTO_VERSION);
	put(out, (uint64_t)status);
	emu_msg_finish(out, start);
}

int emu_decode_hello(const void *payload, size_t len, enum emu_hello_status *status,
		     const char **why)
{
	struct cursor rd = CURSOR_INIT(payload, len);
	uint64_t version = cursor_next(&rd), st = cursor_next(&rd);

	if (rd.why || rd.p != rd.end)
		FAIL("bad hello");
	if (version != EMU_PROTO_VERSION)
		FAIL("another version of the protocol");
	if (st >= EMU_HELLO__COUNT)
		FAIL("bad hello status");
	*status = (enum emu_hello_status)st;
	return 0;
bad:
	return -1;
}
