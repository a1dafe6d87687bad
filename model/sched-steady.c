/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model/sched-steady.c - a loop's steady state (model/sched-int.h): the
 * passes over a self-loop's body are run until the machine's state
 * repeats, and the rest of the stream is written from the passes before.
 */
#include "config.h"

#include <limits.h>
#include <string.h>

#include "core/hash.h"
#include "core/xalloc.h"
#include "model/sched-int.h"

/* ---- the steady state of a loop ---------------------------------------------------- */

/*
 * A loop's body is repeated until the reorder buffer has filled twice
 * (loop_iterations() in sched.c), but the machine is deterministic: once
 * its state at the start of a pass is the state of P passes before,
 * shifted by T cycles, every later pass is the one P passes before, T
 * cycles later.
 * The rest of the stream is then written from the passes run, not run.
 *
 * The state is everything a later element's timing reads, relative to
 * the dispatch cycle and the first element of the pass (indices of
 * producers and holders), with what can no longer matter set aside: a
 * reorder buffer entry retired by the dispatch cycle, a serialisation or
 * a call over by then, a taken branch of an earlier cycle.  A repeat is
 * looked for cheaply first, by a digest of each pass's own timing; a
 * candidate period is then checked on the whole state.
 */

static void sv_add(struct state_vec *sv, int x)
{
	ALLOC_GROW(sv->v, sv->n + 1, sv->alloc);
	sv->v[sv->n++] = x;
}

/* The state at the start of stream element i0 (a pass's first), relative. */
static void state_of(const struct sim *s, size_t i0, struct state_vec *sv)
{
	int base = s->disp_cycle, rel = (int)i0;
	size_t rob = s->m->rob_size, from = i0 > rob ? i0 - rob : 0, k;
	const struct elem *prev = &s->e[i0 - 1];

	sv->n = 0;
	sv_add(sv, (int)s->disp_used);
	if (s->taken_used && s->taken_cycle >= base) {
		sv_add(sv, s->taken_cycle - base);
		sv_add(sv, (int)s->taken_used);
	} else {
		sv_add(sv, -1);
	}
	sv_add(sv, s->last_r - base);
	sv_add(sv, (int)s->retired_last);
	sv_add(sv, (s->serial_until > base ? s->serial_until : base) - base);
	sv_add(sv, (s->call_until > base ? s->call_until : base) - base);
	for (unsigned r = 0; r < DREG__COUNT; r++) {
		if (s->reg_writer[r] < 0) {
			sv_add(sv, INT_MIN);
			continue;
		}
		sv_add(sv, s->reg_writer[r] - rel);
		sv_add(sv, s->reg_ready[r] - base);
	}
	k = s->n_stores < STORE_WINDOW ? s->n_stores : STORE_WINDOW;
	sv_add(sv, (int)k);
	for (unsigned j = 1; j <= k; j++) {
		int st = s->stores[(s->n_stores - j) % STORE_WINDOW];

		sv_add(sv, st - rel);
		sv_add(sv, s->e[st].C - base);
	}
	/* the reorder buffer: entries retiring after the dispatch cycle (a suffix) */
	for (k = i0; k > from && s->e[k - 1].R > base; k--)
		;
	sv_add(sv, (int)(i0 - k));
	for (; k < i0; k++)
		sv_add(sv, s->e[k].R - base);
	sv_add(sv, prev->D - base);
	sv_add(sv, prev->S - base);
	sv_add(sv, prev->C - base);
	sv_add(sv, prev->R - base);
	sv_add(sv, prev->why.t - base);
	sv_add(sv, (int)prev->why.why);
	sv_add(sv, (int)prev->why.reg);
	sv_add(sv, (int)prev->why.unit);
	sv_add(sv, prev->why.producer < 0 ? INT_MIN : prev->why.producer - rel);
	/* the units from the dispatch cycle on */
	for (int c = base; c < s->hi; c++) {
		uint64_t busy = ring_busy(s, c);

		if (!busy)
			continue;
		sv_add(sv, c - base);
		sv_add(sv, (int)(busy & 0xffffffffu));
		sv_add(sv, (int)(busy >> 32));
		for (uint64_t bits = busy; bits; bits &= bits - 1)
			sv_add(sv, ring_holder(s, c, (unsigned)__builtin_ctzll(bits)) - rel);
	}
}

/* A digest of pass it's own timing (relative to its first dispatch). */
static uint64_t pass_digest(const struct sim *s, size_t first, size_t n, int prev_base)
{
	int base = s->e[first].D;
	uint64_t h = (uint64_t)(uint32_t)(base - prev_base);

	for (size_t j = first; j < first + n; j++) {
		const struct elem *e = &s->e[j];
		uint64_t a = (uint64_t)(uint32_t)(e->D - base) << 32 | (uint32_t)(e->S - base);
		uint64_t b = (uint64_t)(uint32_t)(e->C - base) << 32 | (uint32_t)(e->R - base);
		uint64_t c = (uint64_t)(uint32_t)(e->why.t - base) << 32 |
			     (uint32_t)(e->why.producer < 0 ? INT_MIN : e->why.producer - (int)j);
		uint64_t d = (uint64_t)e->why.why << 48 ^ (uint64_t)e->why.reg << 32 ^
			     (uint64_t)e->why.unit << 8 ^ (uint64_t)(e->d_limited | e->d_serial << 1);

		h = hash_u64(h ^ a) + hash_u64(b ^ c) + d;
	}
	return h;
}

/* The smallest period the last digests repeat with (twice), or 0. */
static unsigned digest_period(const uint64_t *d, size_t n)
{
	for (unsigned p = 1; p <= STEADY_MAX_PERIOD && 2 * (size_t)p <= n; p++) {
		unsigned k;

		for (k = 0; k < p && d[n - 1 - k] == d[n - 1 - k - p]; k++)
			;
		if (k == p)
			return p;
	}
	return 0;
}

/*
 * Writes elements [to, s->n) from the passes before element `to`, which
 * repeat with a period of `period` elements and `shift` cycles; those
 * before `needed` (nobody reads them) are left out.
 */
static void repeat_passes(struct sim *s, size_t to, size_t needed, size_t period, int shift)
{
	for (size_t j = to > needed ? to : needed; j < s->n; j++) {
		size_t q = (j - to) / period + 1;
		const struct elem *src = &s->e[j - q * period];
		struct elem *e = &s->e[j];
		int dt = (int)q * shift;

		*e = *src;
		e->D += dt;
		e->S += dt;
		e->C += dt;
		e->R += dt;
		e->why.t += dt;
		if (e->why.producer >= 0)
			e->why.producer += (int)(q * period);
	}
}

void sched_sim_run_loop(struct sim *s, size_t needed, struct sched_prep *sp)
{
	size_t n = s->n_body, passes = (s->n - s->n_ctx) / n;
	uint64_t *dig;
	struct state_vec *snap = &sp->buf.snap, *now = &sp->buf.now;
	size_t snap_at = 0, next_try = 0, backoff = 4;
	unsigned snap_period = 0;
	int snap_base = 0, prev_base = 0;

	ALLOC_GROW(sp->buf.dig, passes + 1, sp->buf.dig_alloc);
	dig = sp->buf.dig;
	for (size_t it = 0; it < passes; it++) {
		size_t first = s->n_ctx + it * n;

		if (snap_period && it == snap_at + snap_period) {
			state_of(s, first, now);
			if (now->n == snap->n && !memcmp(now->v, snap->v, now->n * sizeof(*now->v))) {
				repeat_passes(s, first, needed, snap_period * n,
					      s->disp_cycle - snap_base);
				return;
			}
			snap_period = 0;
			next_try = it + backoff;
			backoff *= 2;
		}
		if (!snap_period && it >= next_try && it >= 2) {
			unsigned p = digest_period(dig, it);

			if (p && first + p * n < needed) {
				state_of(s, first, snap);
				snap_at = it;
				snap_period = p;
				snap_base = s->disp_cycle;
			}
		}
		sched_sim_steps(s, first, first + n);
		dig[it] = pass_digest(s, first, n, it ? prev_base : s->e[first].D);
		prev_base = s->e[first].D;
	}
}
