/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model/sched-sim.c - the static scheduler's machine (model/sched-int.h):
 * each stream element, in program order, is dispatched (width, taken
 * branches, the ROB, serialisation, calls), executed (operands, units and
 * ports on a ring of cycles, store-to-load forwarding, latency), written
 * back and retired (width, in order), and remembers which constraint set
 * its completion.
 */
#include "config.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/die.h"
#include "core/xalloc.h"
#include "model/sched-int.h"

/* ---- the machine -------------------------------------------------------------- */

void sched_sim_init(struct sim *s, const struct cpu_model *m, struct sim_buffers *buf)
{
	/* reg_ready[r] is read only once reg_writer[r] says who wrote it */
	memset(&s->disp_cycle, 0, sizeof(*s) - offsetof(struct sim, disp_cycle));
	s->m = m;
	memset(s->reg_writer, 0xff, sizeof(s->reg_writer));  /* -1: none */
	s->n_exec = model_n_units(m);
	s->n_units = s->n_exec + m->loads_per_cycle + m->stores_per_cycle;
	if (s->n_units > MAX_UNITS)
		BUG("model '%s' has %u units and ports, more than %d", m->name, s->n_units, MAX_UNITS);
	s->buf = buf;
	if (!buf->cap) {
		buf->cap = 64;
		buf->stride = s->n_units ? s->n_units : 1;
		buf->busy = xcalloc(buf->cap, sizeof(*buf->busy));
		buf->holder = xmalloc(buf->cap * buf->stride * sizeof(*buf->holder));
	}
}

void sched_sim_finish(struct sim *s)
{
	struct sim_buffers *b = s->buf;

	for (int c = s->floor; c < s->hi && c < s->floor + (int)b->cap; c++)
		b->busy[(size_t)c & (b->cap - 1)] = 0;
}

/* Nothing will be reserved before cycle f any more: its slots are reused. */
static void ring_advance(struct sim *s, int f)
{
	struct sim_buffers *b = s->buf;

	if (f <= s->floor)
		return;
	for (int c = s->floor; c < f && c < s->hi; c++)
		b->busy[(size_t)c & (b->cap - 1)] = 0;
	s->floor = f;
	if (s->hi < f)
		s->hi = f;
}

void sched_ring_reach(struct sim *s, int c)
{
	struct sim_buffers *b = s->buf;
	size_t cap = b->cap;
	uint64_t *busy;
	int *holder;

	if (c <= s->floor + (int)cap) {
		if (c > s->hi)
			s->hi = c;
		return;
	}
	while ((size_t)(c - s->floor) > cap)
		cap *= 2;
	busy = xcalloc(cap, sizeof(*busy));
	holder = xmalloc(cap * b->stride * sizeof(*holder));
	for (int k = s->floor; k < s->hi; k++) {
		size_t from = (size_t)k & (b->cap - 1), to = (size_t)k & (cap - 1);

		busy[to] = b->busy[from];
		memcpy(&holder[to * b->stride], &b->holder[from * b->stride],
		       b->stride * sizeof(*holder));
	}
	free(b->busy);
	free(b->holder);
	b->busy = busy;
	b->holder = holder;
	b->cap = cap;
	s->hi = c;
}

static inline void ring_take(struct sim *s, int start, int len, unsigned u, int holder)
{
	struct sim_buffers *b = s->buf;

	if (start + len > s->hi) {
		if (start + len <= s->floor + (int)b->cap)
			s->hi = start + len;  /* sched_ring_reach() without the call */
		else
			sched_ring_reach(s, start + len);
	}
	for (int c = start; c < start + len; c++) {
		size_t k = (size_t)c & (b->cap - 1);

		b->busy[k] |= 1ull << u;
		b->holder[k * b->stride + u] = holder;
	}
}

static void bind_max(struct bind *b, int t, enum sched_reason why, unsigned reg,
		     int producer, unsigned unit)
{
	if (t > b->t) {
		b->t = t;
		b->why = why;
		b->reg = reg;
		b->producer = producer;
		b->unit = unit;
	}
}

/*
 * Reserves `len` cycles on one of the units [first, first+count) whose bit
 * is set in mask (all if mask is 0), from `from` on: on a single unit one
 * busy stretch (a divider), on several `len` single cycles wherever free
 * (the earliest; the lowest unit of those free then).  Binds b with every
 * slot that had to wait, and with the element that held the unit up to
 * it.  Returns the latest slot.
 */
static int take_units(struct sim *s, unsigned first, unsigned count, uint32_t mask,
		      unsigned len, int from, int self, struct bind *b, unsigned report_unit)
{
	uint64_t units = count >= 64 ? ~0ull : (1ull << count) - 1;
	int last = from;

	if (mask)
		units &= mask;
	if (!units || !len)
		return from;
	units <<= first;
	if (!(units & (units - 1))) {  /* one unit: a stretch of len cycles */
		unsigned u = (unsigned)__builtin_ctzll(units);
		int t = from;

		for (int c = t; c < t + (int)len; c++)
			if (ring_busy(s, c) & units)
				t = c + 1;
		ring_take(s, t, (int)len, u, self);
		if (t > from)
			bind_max(b, t, SCHED_UNIT, 0, ring_holder(s, t - 1, u),
				 report_unit == ~0u ? u : report_unit);
		return t;
	}
	for (unsigned k = 0; k < len; k++) {
		int t = from;
		uint64_t free_now;
		unsigned u;

		while (!(free_now = units & ~ring_busy(s, t)))
			t++;
		u = (unsigned)__builtin_ctzll(free_now);
		if (t > from)
			bind_max(b, t, SCHED_UNIT, 0, ring_holder(s, t - 1, u),
				 report_unit == ~0u ? u : report_unit);
		ring_take(s, t, 1, u, self);
		if (t > last)
			last = t;
	}
	return last;
}

/* Binds b with the ready time of every register in rs (SCHED_DEP). */
static void bind_regs(const struct sim *s, const struct regset *rs, struct bind *b)
{
	for (unsigned w = 0; w < 2; w++)
		for (uint64_t bits = rs->w[w]; bits; bits &= bits - 1) {
			unsigned r = w * 64 + (unsigned)__builtin_ctzll(bits);

			if (s->reg_writer[r] >= 0)
				bind_max(b, s->reg_ready[r], SCHED_DEP, r, s->reg_writer[r], 0);
		}
}

/* True if the two memory operands name the same address. */
static bool same_address(const struct sim *s, const struct proto *ld, const struct proto *st,
			 int st_index)
{
	bool ld_rip = ld->in->flags & INSN_F_RIP_REL, st_rip = st->in->flags & INSN_F_RIP_REL;

	if (ld_rip || st_rip)
		return ld_rip && st_rip && ld->in->mem_addr == st->in->mem_addr;
	if (ld->mem != st->mem)
		return false;
	for (unsigned w = 0; w < 2; w++)
		for (uint64_t bits = ld->addr.w[w]; bits; bits &= bits - 1) {
			unsigned r = w * 64 + (unsigned)__builtin_ctzll(bits);

			if (s->reg_writer[r] > st_index)
				return false;  /* the address moved since the store */
		}
	return true;
}

/* A load of the address an older store wrote waits for forwarding (SCHED_MEMDEP). */
static void bind_memdep(const struct sim *s, size_t i, struct bind *b)
{
	const struct proto *p = s->e[i].p;
	unsigned n = s->n_stores < STORE_WINDOW ? s->n_stores : STORE_WINDOW;

	if (!p->mem && !(p->in->flags & INSN_F_RIP_REL))
		return;
	for (unsigned k = 1; k <= n; k++) {
		int j = s->stores[(s->n_stores - k) % STORE_WINDOW];
		const struct elem *st = &s->e[j];

		if (same_address(s, p, st->p, j)) {
			bind_max(b, st->C - 1 + (int)s->m->store_forward_latency, SCHED_MEMDEP, 0, j, 0);
			return;
		}
	}
}

/* Where stream element i's instruction is (struct slot). */
static inline const struct slot *slot_of(const struct sim *s, size_t i)
{
	size_t k;

	if (i < s->n_ctx + s->n_body)
		return &s->slots[i];
	k = i - s->n_ctx;
	return &s->slots[s->n_ctx + s->n_body + k % s->n_body];
}

/* Taken branches dispatched in the cycle of the last one (taken_per_cycle). */
static void count_taken(struct sim *s, const struct slot *sl, const struct elem *e)
{
	if (!sl->taken)
		return;
	if (s->taken_used && s->taken_cycle == e->D) {
		s->taken_used++;
	} else {
		s->taken_cycle = e->D;
		s->taken_used = 1;
	}
}

static void dispatch(struct sim *s, size_t i, const struct slot *sl, const struct slot *prev_sl)
{
	const struct cpu_model *m = s->m;
	struct elem *e = &s->e[i], *prev = i ? &s->e[i - 1] : NULL;
	unsigned uops = sl->p->t.uops;
	int d = s->disp_cycle;

	e->p = sl->p;
	e->d_serial = false;
	if (sl->fused) {
		e->D = prev->D;
		e->d_limited = false;
		count_taken(s, sl, e);
		return;
	}
	if (prev && prev_sl->taken && s->taken_used >= m->taken_per_cycle && d < prev->D + 1)
		d = prev->D + 1;
	if (i >= m->rob_size && s->e[i - m->rob_size].R > d)
		d = s->e[i - m->rob_size].R;
	if (s->call_until > d)
		d = s->call_until;
	if (s->serial_until > d) {
		d = s->serial_until;
		e->d_serial = true;
	}
	if (d != s->disp_cycle)
		s->disp_used = 0;
	if (s->disp_used && s->disp_used + uops > m->dispatch_width) {
		d++;
		s->disp_used = 0;
	}
	e->D = d;
	e->d_limited = prev ? d > prev->D : d > 0;
	s->disp_cycle = d;
	s->disp_used += uops;
	if (s->disp_used > m->dispatch_width) {
		s->disp_cycle += (int)((s->disp_used - 1) / m->dispatch_width);
		s->disp_used = (s->disp_used - 1) % m->dispatch_width + 1;
	}
	count_taken(s, sl, e);
}

static void take_groups(struct sim *s, const struct proto *p, int self, struct bind *b)
{
	int from = b->t;

	for (unsigned g = 0; g < p->t.n_groups; g++)
		take_units(s, 0, s->n_exec, p->t.groups[g].mask, p->t.groups[g].cycles, from,
			   self, b, ~0u);
}

static void take_port(struct sim *s, bool store, int self, struct bind *b)
{
	unsigned first = s->n_exec + (store ? s->m->loads_per_cycle : 0);
	unsigned count = store ? s->m->stores_per_cycle : s->m->loads_per_cycle;

	if (count)
		take_units(s, first, count, 0, 1, b->t, self, b,
			   store ? SCHED_UNIT_STORE_PORT : SCHED_UNIT_LOAD_PORT);
	if (store && s->m->stores_share_load_pipes && s->m->loads_per_cycle)
		take_units(s, s->n_exec, s->m->loads_per_cycle, 0, 1, b->t, self, b,
			   SCHED_UNIT_LOAD_PORT);
}

static void execute(struct sim *s, size_t i, const struct slot *sl)
{
	struct elem *e = &s->e[i];
	const struct proto *p = sl->p;
	struct bind b = { e->D, e->d_serial ? SCHED_SERIAL : e->d_limited ? SCHED_DISPATCH :
			  SCHED_LATENCY, 0, 0, -1 };

	if (sl->fused) {
		e->S = s->e[i - 1].S;
		e->C = s->e[i - 1].C;
		e->why = s->e[i - 1].why;
		return;
	}
	ring_advance(s, e->D);
	if (p->serial)
		bind_max(&b, s->last_r, SCHED_SERIAL, 0, -1, 0);
	bind_regs(s, &p->addr, &b);
	if (p->t.flags & ME_LOAD) {
		take_port(s, false, (int)i, &b);
		e->S = b.t;
		b.t += (int)sl->load_lat;
		bind_memdep(s, i, &b);
		bind_regs(s, &p->data, &b);
		take_groups(s, p, (int)i, &b);
		b.t += (int)(sl->latency - sl->load_lat);
	} else {
		bind_regs(s, &p->data, &b);
		take_groups(s, p, (int)i, &b);
		if (p->t.flags & ME_STORE)
			take_port(s, true, (int)i, &b);
		e->S = b.t;
		b.t += (int)sl->latency;
	}
	e->C = b.t;
	e->why = b;
}

/* Register results, the store window, serialisation. */
static void writeback(struct sim *s, size_t i, const struct slot *sl)
{
	const struct elem *e = &s->e[i];
	const struct proto *p = sl->p;
	int ready = e->C, writer = (int)i;

	if (sl->fused)
		return;
	if (p->renamed) {
		struct bind src = { INT_MIN / 2, SCHED_NONE, 0, 0, -1 };

		bind_regs(s, &p->data, &src);  /* a renamed move: the source's timing */
		ready = src.t;
		writer = src.producer;
	}
	for (unsigned w = 0; w < 2; w++)
		for (uint64_t bits = p->writes.w[w]; bits; bits &= bits - 1) {
			unsigned r = w * 64 + (unsigned)__builtin_ctzll(bits);

			s->reg_ready[r] = ready;
			s->reg_writer[r] = writer;
		}
	if (p->store)
		s->stores[s->n_stores++ % STORE_WINDOW] = (int)i;
	if (p->serial && e->C > s->serial_until)
		s->serial_until = e->C;
}

static void retire(struct sim *s, size_t i, const struct slot *sl)
{
	struct elem *e = &s->e[i];
	int r;

	if (sl->fused) {
		e->R = s->e[i - 1].R;
		return;
	}
	r = e->C > s->last_r ? e->C : s->last_r;
	if (r == s->last_r && s->retired_last >= s->m->retire_width)
		r++;
	if (r != s->last_r)
		s->retired_last = 0;
	s->last_r = r;
	s->retired_last++;
	e->R = r;
	if (sl->p->call && r > s->call_until)
		s->call_until = r;
}

static inline void step(struct sim *s, size_t i, const struct slot *sl, const struct slot *prev)
{
	dispatch(s, i, sl, prev);
	execute(s, i, sl);
	writeback(s, i, sl);
	retire(s, i, sl);
}

void sched_sim_steps(struct sim *s, size_t from, size_t to)
{
	/* slot_of() walked along: the later passes' slots over and over, no division */
	const struct slot *end = s->slots + s->n_ctx + 2 * s->n_body;
	const struct slot *prev, *sl;

	if (from >= to)
		return;
	prev = from ? slot_of(s, from - 1) : NULL;
	sl = slot_of(s, from);
	for (size_t i = from;;) {
		step(s, i, sl, prev);
		if (++i == to)
			break;
		prev = sl++;
		if (sl == end)
			sl = end - s->n_body;
	}
}

void sched_sim_run_to(struct sim *s, size_t to)
{
	sched_sim_steps(s, 0, to);
}

void sched_sim_run(struct sim *s, size_t from)
{
	sched_sim_steps(s, from, s->n);
}
