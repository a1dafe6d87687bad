/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/emtrail.c - a burst's trail of samples (collect/emtrail.h).
 */
#include "config.h"
#include "collect/emtrail.h"
#include "core/xalloc.h"

#include <stdlib.h>
#include <string.h>

void emtrail_init(struct emtrail *t)
{
	memset(t, 0, sizeof(*t));
}

void emtrail_release(struct emtrail *t)
{
	free(t->cpu_seen);
	memset(t, 0, sizeof(*t));
}

void emtrail_start(struct emtrail *t, uint32_t tid, uint64_t after, unsigned want)
{
	t->active = true;
	t->ended = false;
	t->tid = tid;
	t->after = after;
	t->want = want < 1 ? 1 : want > EMU_MAX_TRAIL ? EMU_MAX_TRAIL : want;
	t->n = 0;
}

void emtrail_stop(struct emtrail *t)
{
	t->active = false;
}

static uint64_t *seen_of(struct emtrail *t, unsigned cpu)
{
	if (cpu >= t->n_cpu) {
		size_t n = cpu + 8;

		t->cpu_seen = xreallocarray(t->cpu_seen, n, sizeof(*t->cpu_seen));
		memset(t->cpu_seen + t->n_cpu, 0, (n - t->n_cpu) * sizeof(*t->cpu_seen));
		t->n_cpu = n;
	}
	return &t->cpu_seen[cpu];
}

bool emtrail_sample(struct emtrail *t, unsigned cpu, uint32_t tid, uint64_t time, bool user,
		    uint64_t ip, const uint64_t *regs)
{
	uint64_t *seen = seen_of(t, cpu);
	struct emu_trail_point *p;

	(*seen)++;
	if (!t->active || t->ended || t->n >= t->want || tid != t->tid || time <= t->after)
		return false;
	if (!regs || !ip || ip >= EMU_USER_END) {
		/* no user state: nothing the emulation could match from here */
		t->ended = true;
		return false;
	}
	p = &t->pt[t->n];
	memset(p, 0, sizeof(*p));
	p->p.rip = ip;
	p->flags = user ? 0 : EMU_POINT_KERNEL;
	memcpy(p->p.regs, regs, sizeof(p->p.regs));
	t->cpu[t->n] = cpu;
	t->seen[t->n] = *seen;
	t->time[t->n] = time;
	t->n++;
	return true;
}

bool emtrail_complete(const struct emtrail *t)
{
	return t->active && (t->ended || t->n >= t->want);
}

bool emtrail_window_ok(const struct emtrail *t, unsigned k, uint64_t period_ns)
{
	return k + 1 < t->n && t->cpu[k] == t->cpu[k + 1] && t->seen[k + 1] == t->seen[k] + 1 &&
	       t->time[k + 1] > t->time[k] && t->time[k + 1] - t->time[k] <= period_ns + period_ns / 2;
}
