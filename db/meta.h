/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * db/meta.h - epoch metadata: where and when an epoch was collected, what
 * was sampled and how, and what went wrong (docs/db-format.md, "meta").
 */
#ifndef DCPI_DB_META_H
#define DCPI_DB_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/event.h"

struct strbuf;
struct textrec_line;

/* One sampled event. */
struct epoch_event {
	enum dcpi_event event;  /* the DCPI event asked for */
	enum dcpi_event used;   /* the event really counted (clock for cycles without a PMU) */
	uint64_t period;        /* mean sampling period, in `unit` */
	bool period_in_ns;      /* unit: ns (clock) or events */
	uint64_t freq_hz;       /* requested rate (-F), 0 if a period was given */
	uint64_t samples;       /* samples recorded */
	uint64_t time_enabled;  /* ns, for multiplexing scale */
	uint64_t time_running;  /* ns */
};

/*
 * A measured sampling period in cycles (collect/calib.h): a loop of known
 * cycles (dependent adds, one a cycle) was sampled with the event at the
 * epoch's period, and its cycles between consecutive samples counted.  On
 * a virtual machine the recorded cpu_mhz is not the core's clock, and each
 * timer sample costs time the task is charged for: the clock period x
 * cpu_mhz is then not the cycles a sample stands for.
 */
struct epoch_calib {
	enum dcpi_event event;  /* the DCPI event (as in its `event` line) */
	double cycles;          /* mean cycles of the loop per sample */
	uint64_t period;        /* the event's period it was measured at (the event's unit) */
	uint64_t intervals;     /* sample intervals measured (over CPUs and runs) */
	double mhz;             /* the loop's clock without sampling (MHz), 0 if unknown */
	char how[24];           /* how it was measured ([a-z0-9_-]+): "regadd" (a chain of
				 * register adds); "imul" (the adds disagreed with an imul
				 * chain, whose clock was used); "addloop" (add-immediates:
				 * before this check, several times off on cores that fold
				 * them) */
	/* The check (a `calib_check` line; all 0 in epochs before it): */
	double imul_mhz;        /* an imul chain's clock (3 cycles each), unsampled */
	double tsc_mhz;         /* the TSC's rate where the kernel trusts it (tsc_known_freq) */
	double error;           /* the clock's relative uncertainty: how far the methods disagree */
};

/* The clocks agree when within this (relative): beyond, the calibration says so. */
#define EPOCH_CALIB_AGREE 0.03

/*
 * What is wrong with c's clock, in words, written into buf ("the clocks
 * disagree by 6.1% (register adds 4100 MHz, imul 3860 MHz)"; an epoch
 * calibrated with the add-immediates of old); NULL when nothing is.
 */
const char *epoch_calib_problem(const struct epoch_calib *c, char *buf, size_t size);

/*
 * What the core does, measured beside the calibration (collect/calib.h):
 * the processor model is chosen by it as well as by the CPU's
 * identification, which a virtual machine may mask (model/model.h).  A
 * `core_sig` line; have is false in epochs without one.
 */
struct epoch_core_sig {
	bool have;
	double addimm_per_cycle;  /* dependent `add $1, r` retired per cycle: above 1, folded */
	double alu_per_cycle;     /* independent register adds per cycle: the integer width */
	double load_lat;          /* load-to-use latency of an L1 pointer chase, cycles */
	double div_lat;           /* a 64-bit divide's latency (small operands), cycles */
};

struct epoch_counter {
	char *name;
	uint64_t value;
};

struct epoch_meta {
	uint32_t seq;
	char *label;            /* NULL if none */
	int64_t start_ns;       /* UTC ns since the Unix epoch */
	int64_t end_ns;         /* 0 while open */
	char *host;
	char *kernel;
	char *cpu_model;
	char *cpu_vendor;
	int cpu_family, cpu_model_id, cpu_stepping;
	double cpu_mhz;
	char **cpu_flags;       /* /proc/cpuinfo's flags (NULL-terminated), or NULL */
	struct epoch_core_sig core_sig;
	unsigned ncpus;
	char **command;         /* NULL-terminated argv of dcpirun's command, or NULL */

	struct epoch_event *events;
	size_t n_events, alloc_events;
	struct epoch_counter *counters;
	size_t n_counters, alloc_counters;
	struct epoch_calib *calibs;     /* at most one per event */
	size_t n_calibs, alloc_calibs;

	/* Lines with keys this version does not know, kept verbatim. */
	struct textrec_line *extra;
	size_t n_extra, alloc_extra;
};

void epoch_meta_init(struct epoch_meta *m);
void epoch_meta_release(struct epoch_meta *m);
/* Fills host, kernel, CPU identification and MHz, ncpus from this machine. */
void epoch_meta_fill_host(struct epoch_meta *m);

/* True if the epoch's CPU has the /proc/cpuinfo flag (false when unrecorded). */
bool epoch_meta_cpu_flag(const struct epoch_meta *m, const char *flag);

/* Finds the event entry for ev, or NULL. */
struct epoch_event *epoch_meta_event(const struct epoch_meta *m, enum dcpi_event ev);
/* Returns the entry for ev, adding a zeroed one if absent. */
struct epoch_event *epoch_meta_add_event(struct epoch_meta *m, enum dcpi_event ev);
/* Counter value by name (0 if absent). */
uint64_t epoch_meta_counter(const struct epoch_meta *m, const char *name);
/* Sets a counter (adds it if absent).  name must match [a-z0-9_]+. */
void epoch_meta_set_counter(struct epoch_meta *m, const char *name, uint64_t value);
void epoch_meta_set_label(struct epoch_meta *m, const char *label);

/*
 * The mean sampling period of ev in processor cycles: period for hardware
 * events, period_ns * cpu_mhz / 1000 for clock.  0 if unknown.
 */
double epoch_meta_period_cycles(const struct epoch_meta *m, enum dcpi_event ev);

/* The calibration of ev, or NULL. */
const struct epoch_calib *epoch_meta_calib(const struct epoch_meta *m, enum dcpi_event ev);
/* Sets the calibration of c->event (replacing any).  how must match [a-z0-9_-]{1,23}. */
void epoch_meta_set_calib(struct epoch_meta *m, const struct epoch_calib *c);

/* Where epoch_meta_time_cycles() took the cycles per sample from. */
enum epoch_period_source {
	EPOCH_PERIOD_NONE,        /* unknown (no period, or a clock without cpu_mhz) */
	EPOCH_PERIOD_EVENTS,      /* a cycles counter: the period itself */
	EPOCH_PERIOD_CALIBRATED,  /* the calibration, measured at the event's period */
	EPOCH_PERIOD_SCALED,      /* the calibration, measured at another period: scaled */
	EPOCH_PERIOD_MHZ,         /* a clock period x cpu_mhz (no calibration) */
};
/* "none", "events", "calibrated", "calibrated-scaled", "cpu_mhz" */
const char *epoch_period_source_name(enum epoch_period_source s);

/*
 * The cycles one sample of ev stands for: the calibration when the epoch
 * has one, else epoch_meta_period_cycles().  src (may be NULL) says which.
 * The calibration is moved to the event's period when they differ: mhz x
 * (period - the sample's cost), the cost being what the measurement
 * showed (its period - cycles / mhz); beyond 5% apart that is
 * EPOCH_PERIOD_SCALED.  The event's period is its recorded (measured) mean
 * when that is within 5% of the requested one (1e9 / freq_hz), else the
 * requested one: idle CPUs and unsampled kernel time make the measured
 * mean longer than the timer's period.
 */
double epoch_meta_time_cycles(const struct epoch_meta *m, enum dcpi_event ev,
			      enum epoch_period_source *src);

/*
 * The clock, in MHz, that clock samples of ev are converted to cycles
 * with: epoch_meta_time_cycles() over the event's period in microseconds
 * (the calibration's clock when there is one, else cpu_mhz, which on a
 * virtual machine is often not the core's).  *src (may be NULL) says
 * which.  0 if ev is not a clock event of the epoch or nothing is known.
 */
double epoch_meta_clock_mhz(const struct epoch_meta *m, enum dcpi_event ev,
			    enum epoch_period_source *src);

/* Checks a label (1-64 bytes, no spaces/controls, not numeric, not latest*). */
bool epoch_label_valid(const char *label);

/* Formats m as a complete meta file (text record with checksum). */
void epoch_meta_format(const struct epoch_meta *m, struct strbuf *out);
/* Parses a meta file; -1 with *why on failure (m left empty). */
int epoch_meta_parse(const char *buf, size_t len, struct epoch_meta *m, const char **why);

#endif
