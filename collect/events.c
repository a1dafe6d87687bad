/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/events.c - the collector's perf events and their rings: which
 * events this machine can count, their (randomised) periods, and opening
 * them on every CPU, one ring per CPU (collector-int.h).
 */
#include "config.h"
#include "collect/collector-int.h"
#include "core/die.h"
#include "core/xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static double cpu_mhz(void)
{
	struct epoch_meta m;
	double mhz;

	epoch_meta_init(&m);
	epoch_meta_fill_host(&m);
	mhz = m.cpu_mhz;
	epoch_meta_release(&m);
	return mhz > 0 ? mhz : 1000;
}

/* Chooses the period (or frequency) of an event from -F / -c. */
void collector_set_period(struct cevent *e, const struct collect_options *o)
{
	bool cycles_on_clock = e->spec.event != e->spec.used && e->spec.time;

	if (o->period) {
		e->mean = o->period;
		/* -c counts cycles: on the clock, that much time. */
		if (cycles_on_clock)
			e->mean = (uint64_t)((double)o->period * 1000.0 / cpu_mhz());
	} else if (e->spec.time) {
		e->mean = (uint64_t)(NS_PER_SEC / (int64_t)o->freq_hz);
	} else if (e->spec.event == EVENT_CYCLES || e->spec.event == EVENT_INSTRUCTIONS) {
		/* A fixed (randomised) period: a count from instruction samples
		 * needs every sample to stand for the same number; about as many
		 * instructions as the cycles of a cycles sample. */
		e->mean = (uint64_t)(cpu_mhz() * 1e6 / (double)o->freq_hz);
	} else {
		/* Other hardware events: the kernel adjusts the period to the rate. */
		e->freq = true;
		e->mean = o->freq_hz;
	}
	if (e->mean < 1)
		e->mean = 1;
	/* Uniform over [top - top/16, top]: the mean is top * 31/32. */
	e->top = e->freq ? e->mean : e->mean + e->mean / 31;
}

int collector_choose_events(struct collector *c)
{
	char first_why[256] = "";
	int first = -1;

	for (size_t i = 0; i < c->opt.n_events; i++) {
		struct cevent *e = &c->ev[c->n_ev];
		char why[256];

		if (perf_evspec_probe(c->opt.events[i], &e->spec, why, sizeof(why))) {
			/* The defaults take what the machine has, quietly (the epoch's
			 * meta lists what was sampled); an event asked for with -e is
			 * worth a warning. */
			if (c->opt.events_given)
				warning("event '%s' is not available: %s; skipping it",
					event_name(c->opt.events[i]), why);
			else if (first < 0) {
				first = (int)c->opt.events[i];
				memcpy(first_why, why, sizeof(why));
			}
			continue;
		}
		collector_set_period(e, &c->opt);
		c->n_ev++;
	}
	if (!c->n_ev && first >= 0)
		return errorf("none of the default events can be sampled here (%s: %s)",
			      event_name((enum dcpi_event)first), first_why);
	if (!c->n_ev)
		return errorf("none of the requested events can be sampled here");
	return 0;
}

static uint64_t rng_next(struct collector *c)
{
	c->rng ^= c->rng << 13;
	c->rng ^= c->rng >> 7;
	c->rng ^= c->rng << 17;
	return c->rng;
}

static uint64_t draw_period(struct collector *c, const struct cevent *e)
{
	if (e->freq)
		return e->mean;
	return collect_random_period(e->top, rng_next(c));
}

static int open_one(struct collector *c, struct ccpu *cc, size_t i)
{
	struct perf_event_attr attr;
	size_t ring_bytes = (size_t)c->opt.ring_pages * (size_t)sysconf(_SC_PAGESIZE);
	struct cevent *e = &c->ev[i];

	perf_attr_init(&attr, &e->spec, &c->target, draw_period(c, e), e->freq, i == 0,
		       ring_bytes / 4);
	attr.sample_type = c->fmt.sample_type;
	attr.sample_regs_user = c->fmt.regs_user;
	if (c->cg)
		callchain_attr(c->cg, &attr);  /* its bits are in fmt already; the stack size */
	cc->fd[i] = perf_open(&attr, c->opt.pid, cc->cpu, -1);
	/* Older kernels: no lost count in read() (before 6.0), no build-ids (5.12). */
	if (cc->fd[i] < 0 && errno == EINVAL) {
		attr.read_format &= ~(uint64_t)PERF_FORMAT_LOST;
		cc->fd[i] = perf_open(&attr, c->opt.pid, cc->cpu, -1);
	}
	if (cc->fd[i] < 0 && errno == EINVAL && attr.build_id) {
		attr.build_id = 0;
		cc->fd[i] = perf_open(&attr, c->opt.pid, cc->cpu, -1);
	}
	return cc->fd[i] < 0 ? -1 : 0;
}

void collector_close_cpu(struct ccpu *cc, size_t n_ev)
{
	if (cc->ring.base)
		perf_ring_unmap(&cc->ring);
	for (size_t i = 0; cc->fd && i < n_ev; i++)
		if (cc->fd[i] >= 0)
			close(cc->fd[i]);
	free(cc->fd);
	cc->fd = NULL;
}

/*
 * Opens every event on one CPU, the first one owning the ring.  The ring
 * is tagged with the CPU's index k, which travels with its records.
 */
static int open_cpu(struct collector *c, struct ccpu *cc, size_t k)
{
	cc->fd = xcalloc(c->n_ev, sizeof(int));
	for (size_t i = 0; i < c->n_ev; i++)
		cc->fd[i] = -1;
	for (size_t i = 0; i < c->n_ev; i++) {
		uint64_t id;

		if (open_one(c, cc, i))
			return -1;
		if (i == 0 && perf_ring_map(&cc->ring, cc->fd[0], (int)k, c->opt.ring_pages)) {
			c->map_failed = true;
			return -1;
		}
		if (i > 0 && ioctl(cc->fd[i], PERF_EVENT_IOC_SET_OUTPUT, cc->fd[0]))
			return -1;
		if (perf_event_id(cc->fd[i], &id))
			return -1;
		*u64map_slot(&c->id_event, id) = i + 1;
	}
	return 0;
}

static int open_all(struct collector *c)
{
	for (size_t k = 0; k < c->ncpu; k++) {
		if (open_cpu(c, &c->cpu[k], k)) {
			int err = errno;

			for (size_t j = 0; j <= k; j++)
				collector_close_cpu(&c->cpu[j], c->n_ev);
			u64map_clear(&c->id_event);
			errno = err;
			return -1;
		}
	}
	return 0;
}

int collector_open_events(struct collector *c)
{
	bool system_wide = c->opt.pid < 0;

	c->target.pid = c->opt.pid;
	c->target.inherit = !system_wide;
	c->target.enable_on_exec = !system_wide;
	c->target.exclude_kernel = c->opt.user_only;
	c->map_failed = false;
	if (!open_all(c))
		return 0;
	/* Large rings (stack copies) over the locked-memory limit: smaller ones. */
	while (c->map_failed && (errno == EPERM || errno == ENOMEM) && c->opt.ring_pages > 16 &&
	       !c->opt.ring_pages_given) {
		c->opt.ring_pages /= 2;
		c->map_failed = false;
		if (!open_all(c))
			return 0;
	}
	if ((errno == EACCES || errno == EPERM) && !system_wide && !c->target.exclude_kernel) {
		/* perf_event_paranoid 2: user space only, as the kernel demands. */
		c->target.exclude_kernel = true;
		if (!open_all(c))
			return 0;
	}
	return errorf("cannot open '%s' sampling on CPU %d: %s",
		      event_name(c->ev[0].spec.used), c->cpu[0].cpu,
		      perf_strerror(errno, system_wide));
}

void collector_redraw_periods(struct collector *c)
{
	for (size_t i = 0; i < c->n_ev; i++) {
		if (c->ev[i].freq)
			continue;
		for (size_t k = 0; k < c->ncpu; k++)
			if (c->cpu[k].fd && c->cpu[k].fd[i] >= 0)
				perf_set_period(c->cpu[k].fd[i], draw_period(c, &c->ev[i]));
	}
}
