/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "db/meta.h"
#include "db/textrec.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/timeutil.h"
#include "core/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define META_MAGIC "dcpi-epoch"
#define META_VERSION 1

void epoch_meta_init(struct epoch_meta *m)
{
	memset(m, 0, sizeof(*m));
}

static void free_argv(char **argv)
{
	if (!argv)
		return;
	for (char **a = argv; *a; a++)
		free(*a);
	free(argv);
}

void epoch_meta_release(struct epoch_meta *m)
{
	free(m->label);
	free(m->host);
	free(m->kernel);
	free(m->cpu_model);
	free(m->cpu_vendor);
	free_argv(m->cpu_flags);
	free_argv(m->command);
	free(m->events);
	for (size_t i = 0; i < m->n_counters; i++)
		free(m->counters[i].name);
	free(m->counters);
	free(m->calibs);
	for (size_t i = 0; i < m->n_extra; i++) {
		for (size_t j = 0; j < m->extra[i].ntok; j++)
			free(m->extra[i].tok[j]);
		free(m->extra[i].tok);
	}
	free(m->extra);
	epoch_meta_init(m);
}

static void replace(char **dst, const char *src)
{
	free(*dst);
	*dst = src ? xstrdup(src) : NULL;
}

/* The words of s (separated by spaces), NULL-terminated; NULL if none. */
static char **split_words(const char *s)
{
	size_t n = 0, k = 0;
	char **v;

	for (const char *p = s; *p;) {
		p += strspn(p, " \t");
		if (!*p)
			break;
		n++;
		p += strcspn(p, " \t");
	}
	if (!n)
		return NULL;
	v = xcalloc(n + 1, sizeof(*v));
	for (const char *p = s; *p && k < n;) {
		size_t len;

		p += strspn(p, " \t");
		len = strcspn(p, " \t");
		v[k++] = xstrndup(p, len);
		p += len;
	}
	return v;
}

bool epoch_meta_cpu_flag(const struct epoch_meta *m, const char *flag)
{
	for (char **f = m->cpu_flags; f && *f; f++)
		if (!strcmp(*f, flag))
			return true;
	return false;
}

/* Reads the first "key : value" line of /proc/cpuinfo with this key. */
static char *cpuinfo_field(const char *key)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[1024];
	char *res = NULL;
	size_t klen = strlen(key);

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, key, klen) || !colon)
			continue;
		if (strspn(line + klen, " \t") != (size_t)(colon - line - (long)klen))
			continue;
		colon++;
		while (*colon == ' ' || *colon == '\t')
			colon++;
		colon[strcspn(colon, "\n")] = '\0';
		res = xstrdup(colon);
		break;
	}
	fclose(f);
	return res;
}

void epoch_meta_fill_host(struct epoch_meta *m)
{
	struct utsname u;
	char *s;

	if (!uname(&u)) {
		replace(&m->host, u.nodename);
		replace(&m->kernel, u.release);
	}
	free(m->cpu_model);
	m->cpu_model = cpuinfo_field("model name");
	free(m->cpu_vendor);
	m->cpu_vendor = cpuinfo_field("vendor_id");
	if ((s = cpuinfo_field("cpu family"))) {
		m->cpu_family = atoi(s);
		free(s);
	}
	if ((s = cpuinfo_field("model"))) {
		m->cpu_model_id = atoi(s);
		free(s);
	}
	if ((s = cpuinfo_field("stepping"))) {
		m->cpu_stepping = atoi(s);
		free(s);
	}
	free_argv(m->cpu_flags);
	m->cpu_flags = NULL;
	if ((s = cpuinfo_field("flags"))) {
		m->cpu_flags = split_words(s);
		free(s);
	}
	if ((s = cpuinfo_field("cpu MHz"))) {
		m->cpu_mhz = strtod(s, NULL);
		free(s);
	}
	m->ncpus = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
}

struct epoch_event *epoch_meta_event(const struct epoch_meta *m, enum dcpi_event ev)
{
	for (size_t i = 0; i < m->n_events; i++)
		if (m->events[i].event == ev)
			return &m->events[i];
	return NULL;
}

struct epoch_event *epoch_meta_add_event(struct epoch_meta *m, enum dcpi_event ev)
{
	struct epoch_event *e = epoch_meta_event(m, ev);

	if (e)
		return e;
	ALLOC_GROW(m->events, m->n_events + 1, m->alloc_events);
	e = &m->events[m->n_events++];
	memset(e, 0, sizeof(*e));
	e->event = e->used = ev;
	return e;
}

uint64_t epoch_meta_counter(const struct epoch_meta *m, const char *name)
{
	for (size_t i = 0; i < m->n_counters; i++)
		if (!strcmp(m->counters[i].name, name))
			return m->counters[i].value;
	return 0;
}

static bool counter_name_valid(const char *name)
{
	return *name && strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(name) &&
	       strlen(name) <= 64;
}

void epoch_meta_set_counter(struct epoch_meta *m, const char *name, uint64_t value)
{
	if (!counter_name_valid(name))
		BUG("bad counter name '%s'", name);
	for (size_t i = 0; i < m->n_counters; i++) {
		if (!strcmp(m->counters[i].name, name)) {
			m->counters[i].value = value;
			return;
		}
	}
	ALLOC_GROW(m->counters, m->n_counters + 1, m->alloc_counters);
	m->counters[m->n_counters].name = xstrdup(name);
	m->counters[m->n_counters++].value = value;
}

void epoch_meta_set_label(struct epoch_meta *m, const char *label)
{
	replace(&m->label, label);
}

double epoch_meta_period_cycles(const struct epoch_meta *m, enum dcpi_event ev)
{
	const struct epoch_event *e = epoch_meta_event(m, ev);

	if (!e || !e->period)
		return 0;
	if (e->period_in_ns)
		return m->cpu_mhz > 0 ? (double)e->period * m->cpu_mhz / 1000.0 : 0;
	return (double)e->period;
}

const struct epoch_calib *epoch_meta_calib(const struct epoch_meta *m, enum dcpi_event ev)
{
	for (size_t i = 0; i < m->n_calibs; i++)
		if (m->calibs[i].event == ev)
			return &m->calibs[i];
	return NULL;
}

const char *epoch_calib_problem(const struct epoch_calib *c, char *buf, size_t size)
{
	if (!strcmp(c->how, "addloop")) {
		snprintf(buf, size, "measured with add-immediates, which some cores fold: "
			 "possibly several times off");
		return buf;
	}
	if (!(c->error > EPOCH_CALIB_AGREE))
		return NULL;
	if (!strcmp(c->how, "imul"))
		snprintf(buf, size, "the register adds and the imul chain disagree by %.1f%%: "
			 "the imul clock, %.0f MHz", 100 * c->error, c->imul_mhz);
	else
		snprintf(buf, size, "the clocks disagree by %.1f%% (register adds %.0f MHz, "
			 "imul %.0f MHz", 100 * c->error, c->mhz, c->imul_mhz);
	if (c->tsc_mhz > 0)
		snprintf(buf + strlen(buf), size - strlen(buf), "%sTSC %.0f MHz",
			 strcmp(c->how, "imul") ? ", " : "; ", c->tsc_mhz);
	if (strcmp(c->how, "imul"))
		snprintf(buf + strlen(buf), size - strlen(buf), ")");
	return buf;
}

static bool calib_how_valid(const char *how)
{
	size_t n = strlen(how);

	return n && n < sizeof(((struct epoch_calib *)0)->how) &&
	       strspn(how, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

void epoch_meta_set_calib(struct epoch_meta *m, const struct epoch_calib *c)
{
	struct epoch_calib *d = (struct epoch_calib *)epoch_meta_calib(m, c->event);

	if (!calib_how_valid(c->how))
		BUG("bad calibration method '%s'", c->how);
	if (!d) {
		ALLOC_GROW(m->calibs, m->n_calibs + 1, m->alloc_calibs);
		d = &m->calibs[m->n_calibs++];
	}
	*d = *c;
}

const char *epoch_period_source_name(enum epoch_period_source s)
{
	static const char *const names[] = { "none", "events", "calibrated", "calibrated-scaled",
					     "cpu_mhz" };

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "none";
}

/*
 * The timer period the samples were taken at.  The recorded period of a
 * clock event is measured (time running over samples): it shows the
 * period a randomised draw really gave (within 1/32 of the requested one),
 * but on idle CPUs of a system-wide session, or with unsampled kernel
 * time, it is longer than any timer period; beyond 5% of the requested
 * period (-F) the requested one is the better figure.
 */
static double target_period(const struct epoch_event *e)
{
	double want;

	if (!e->freq_hz)
		return (double)e->period;
	want = 1e9 / (double)e->freq_hz;
	return fabs((double)e->period / want - 1) <= 0.05 ? (double)e->period : want;
}

/*
 * The calibration moved to period p.  A sample's cost is time the task
 * loses: cycles = mhz x (period - cost), with the cost from the
 * measurement; without a clock, or if that goes wrong, in proportion.
 */
static double calib_at(const struct epoch_calib *c, double p)
{
	double ratio = p / (double)c->period, cost, v;

	if (p == (double)c->period)
		return c->cycles;
	if (c->mhz > 0) {
		cost = (double)c->period - c->cycles * 1000.0 / c->mhz;
		v = c->mhz / 1000.0 * (p - cost);
		if (cost >= 0 && v > 0)
			return v;
	}
	return c->cycles * ratio;
}

double epoch_meta_time_cycles(const struct epoch_meta *m, enum dcpi_event ev,
			      enum epoch_period_source *src)
{
	const struct epoch_event *e = epoch_meta_event(m, ev);
	const struct epoch_calib *c = epoch_meta_calib(m, ev);
	enum epoch_period_source dummy;
	double v;

	if (!src)
		src = &dummy;
	*src = EPOCH_PERIOD_NONE;
	if (!e || !e->period)
		return 0;
	if (c && c->cycles > 0 && c->period) {
		double t = target_period(e);

		*src = fabs(t / (double)c->period - 1) > 0.05 ? EPOCH_PERIOD_SCALED
							      : EPOCH_PERIOD_CALIBRATED;
		return calib_at(c, t);
	}
	v = epoch_meta_period_cycles(m, ev);
	if (v > 0)
		*src = e->period_in_ns ? EPOCH_PERIOD_MHZ : EPOCH_PERIOD_EVENTS;
	return v;
}

double epoch_meta_clock_mhz(const struct epoch_meta *m, enum dcpi_event ev,
			    enum epoch_period_source *src)
{
	const struct epoch_event *e = epoch_meta_event(m, ev);
	enum epoch_period_source dummy;
	double cycles, t;

	if (!src)
		src = &dummy;
	*src = EPOCH_PERIOD_NONE;
	if (!e || !e->period_in_ns || !e->period)
		return 0;
	cycles = epoch_meta_time_cycles(m, ev, src);
	if (*src == EPOCH_PERIOD_MHZ)
		return m->cpu_mhz;
	t = *src == EPOCH_PERIOD_NONE ? 0 : target_period(e);
	return t > 0 ? cycles * 1000.0 / t : 0;
}

bool epoch_label_valid(const char *label)
{
	size_t n = label ? strlen(label) : 0;
	bool all_digits = true;

	if (!n || n > 64 || !strncmp(label, "latest", 6))
		return false;
	for (const unsigned char *p = (const unsigned char *)label; *p; p++) {
		if (*p <= ' ' || *p == 0x7f)
			return false;
		if (!isdigit(*p))
			all_digits = false;
	}
	return !all_digits;
}

/* ---- format ----------------------------------------------------------- */

static void line_u64(struct strbuf *sb, const char *key, uint64_t v)
{
	strbuf_addf(sb, "%s %" PRIu64 "\n", key, v);
}

static void line_str(struct strbuf *sb, const char *key, const char *v)
{
	if (v && *v)
		textrec_line(sb, key, v, NULL);
}

static void line_time(struct strbuf *sb, const char *key, int64_t ns)
{
	strbuf_addf(sb, "%s ", key);
	strbuf_add_time_iso(sb, ns);
	strbuf_addch(sb, '\n');
}

void epoch_meta_format(const struct epoch_meta *m, struct strbuf *out)
{
	textrec_begin(out, META_MAGIC, META_VERSION);
	line_u64(out, "seq", m->seq);
	line_str(out, "label", m->label);
	line_time(out, "start", m->start_ns);
	if (m->end_ns)
		line_time(out, "end", m->end_ns);
	line_str(out, "host", m->host);
	line_str(out, "kernel", m->kernel);
	line_str(out, "cpu_model", m->cpu_model);
	if (m->cpu_vendor && *m->cpu_vendor) {
		textrec_token(out, "cpu_id", 1);
		textrec_token(out, m->cpu_vendor, 0);
		strbuf_addf(out, " %d %d %d\n", m->cpu_family, m->cpu_model_id, m->cpu_stepping);
	}
	if (m->cpu_mhz > 0)
		strbuf_addf(out, "cpu_mhz %.3f\n", m->cpu_mhz);
	if (m->cpu_flags && m->cpu_flags[0]) {
		textrec_token(out, "cpu_flags", 1);
		for (char **f = m->cpu_flags; *f; f++)
			textrec_token(out, *f, 0);
		strbuf_addch(out, '\n');
	}
	if (m->core_sig.have)
		strbuf_addf(out, "core_sig %.3f %.3f %.3f %.3f\n", m->core_sig.addimm_per_cycle,
			    m->core_sig.alu_per_cycle, m->core_sig.load_lat, m->core_sig.div_lat);
	if (m->ncpus)
		line_u64(out, "ncpus", m->ncpus);
	if (m->command && m->command[0]) {
		textrec_token(out, "command", 1);
		for (char **a = m->command; *a; a++)
			textrec_token(out, **a ? *a : "\"\"", 0); /* empty arg */
		strbuf_addch(out, '\n');
	}
	for (size_t i = 0; i < m->n_events; i++) {
		const struct epoch_event *e = &m->events[i];

		strbuf_addf(out, "event %s %s %" PRIu64 " %s %" PRIu64 " %" PRIu64 " %" PRIu64
			    " %" PRIu64 "\n", event_name(e->event), event_name(e->used), e->period,
			    e->period_in_ns ? "ns" : "events", e->freq_hz, e->samples,
			    e->time_enabled, e->time_running);
	}
	for (size_t i = 0; i < m->n_counters; i++)
		strbuf_addf(out, "counter %s %" PRIu64 "\n", m->counters[i].name,
			    m->counters[i].value);
	for (size_t i = 0; i < m->n_calibs; i++) {
		const struct epoch_calib *c = &m->calibs[i];

		strbuf_addf(out, "calib %s %.1f %" PRIu64 " %" PRIu64 " %.1f %s\n",
			    event_name(c->event), c->cycles, c->period, c->intervals, c->mhz, c->how);
		if (c->imul_mhz > 0 || c->tsc_mhz > 0 || c->error > 0)
			strbuf_addf(out, "calib_check %s %.1f %.1f %.4f\n", event_name(c->event),
				    c->imul_mhz, c->tsc_mhz, c->error);
	}
	for (size_t i = 0; i < m->n_extra; i++) {
		for (size_t j = 0; j < m->extra[i].ntok; j++)
			textrec_token(out, m->extra[i].tok[j], !j);
		strbuf_addch(out, '\n');
	}
	textrec_finish(out);
}

/* ---- parse ------------------------------------------------------------ */

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

static int parse_int(const char *s, int *v)
{
	uint64_t u;

	if (parse_u64(s, &u) || u > 1000000)
		return -1;
	*v = (int)u;
	return 0;
}

static int parse_event_line(struct epoch_meta *m, const struct textrec_line *l)
{
	struct epoch_event *e;
	uint64_t v[5];
	int ev, used;

	if (l->ntok != 9)
		return -1;
	ev = event_lookup(l->tok[1]);
	used = event_lookup(l->tok[2]);
	if (ev < 0 || used < 0 || epoch_meta_event(m, (enum dcpi_event)ev))
		return -1;
	if (strcmp(l->tok[4], "ns") && strcmp(l->tok[4], "events"))
		return -1;
	if (parse_u64(l->tok[3], &v[0]) || parse_u64(l->tok[5], &v[1]) ||
	    parse_u64(l->tok[6], &v[2]) || parse_u64(l->tok[7], &v[3]) ||
	    parse_u64(l->tok[8], &v[4]))
		return -1;
	e = epoch_meta_add_event(m, (enum dcpi_event)ev);
	e->used = (enum dcpi_event)used;
	e->period = v[0];
	e->period_in_ns = !strcmp(l->tok[4], "ns");
	e->freq_hz = v[1];
	e->samples = v[2];
	e->time_enabled = v[3];
	e->time_running = v[4];
	return 0;
}

static int parse_double(const char *s, double max, double *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	*v = strtod(s, &end);
	return *end || !isfinite(*v) || *v < 0 || *v > max ? -1 : 0;
}

/* calib EVENT CYCLES PERIOD INTERVALS MHZ HOW */
static int parse_calib_line(struct epoch_meta *m, const struct textrec_line *l)
{
	struct epoch_calib c;
	int ev;

	memset(&c, 0, sizeof(c));
	if (l->ntok != 7 || (ev = event_lookup(l->tok[1])) < 0 ||
	    epoch_meta_calib(m, (enum dcpi_event)ev) || parse_double(l->tok[2], 1e15, &c.cycles) ||
	    parse_u64(l->tok[3], &c.period) || parse_u64(l->tok[4], &c.intervals) ||
	    parse_double(l->tok[5], 1e6, &c.mhz) || !calib_how_valid(l->tok[6]))
		return -1;
	c.event = (enum dcpi_event)ev;
	strcpy(c.how, l->tok[6]);
	epoch_meta_set_calib(m, &c);
	return 0;
}

/* calib_check EVENT IMUL_MHZ TSC_MHZ ERROR, after its calib line */
static int parse_calib_check_line(struct epoch_meta *m, const struct textrec_line *l)
{
	struct epoch_calib *c;
	int ev;

	if (l->ntok != 5 || (ev = event_lookup(l->tok[1])) < 0 ||
	    !(c = (struct epoch_calib *)epoch_meta_calib(m, (enum dcpi_event)ev)) ||
	    c->imul_mhz > 0 || c->tsc_mhz > 0 || c->error > 0 ||
	    parse_double(l->tok[2], 1e6, &c->imul_mhz) || parse_double(l->tok[3], 1e6, &c->tsc_mhz) ||
	    parse_double(l->tok[4], 100, &c->error))
		return -1;
	return 0;
}

/* core_sig ADDIMM_PER_CYCLE ALU_PER_CYCLE LOAD_LAT DIV_LAT */
static int parse_core_sig_line(struct epoch_meta *m, const struct textrec_line *l)
{
	struct epoch_core_sig *g = &m->core_sig;

	if (l->ntok != 5 || g->have || parse_double(l->tok[1], 1000, &g->addimm_per_cycle) ||
	    parse_double(l->tok[2], 1000, &g->alu_per_cycle) ||
	    parse_double(l->tok[3], 1e6, &g->load_lat) || parse_double(l->tok[4], 1e6, &g->div_lat))
		return -1;
	g->have = true;
	return 0;
}

static void keep_extra(struct epoch_meta *m, const struct textrec_line *l)
{
	struct textrec_line *x;

	ALLOC_GROW(m->extra, m->n_extra + 1, m->alloc_extra);
	x = &m->extra[m->n_extra++];
	x->ntok = l->ntok;
	x->tok = xcalloc(l->ntok, sizeof(char *));
	for (size_t i = 0; i < l->ntok; i++)
		x->tok[i] = xstrdup(l->tok[i]);
}

static int parse_line(struct epoch_meta *m, const struct textrec_line *l, bool *have_seq,
		      bool *have_start)
{
	const char *k = l->tok[0];
	uint64_t u;

	if (!strcmp(k, "seq")) {
		if (l->ntok != 2 || parse_u64(l->tok[1], &u) || !u || u > UINT32_MAX || *have_seq)
			return -1;
		m->seq = (uint32_t)u;
		*have_seq = true;
	} else if (!strcmp(k, "label")) {
		if (l->ntok != 2 || !epoch_label_valid(l->tok[1]))
			return -1;
		replace(&m->label, l->tok[1]);
	} else if (!strcmp(k, "start") || !strcmp(k, "end")) {
		int64_t ns;

		if (l->ntok != 2 || time_parse_iso(l->tok[1], &ns))
			return -1;
		if (k[0] == 's') {
			m->start_ns = ns;
			*have_start = true;
		} else {
			m->end_ns = ns;
		}
	} else if (!strcmp(k, "host") || !strcmp(k, "kernel") || !strcmp(k, "cpu_model")) {
		if (l->ntok != 2)
			return -1;
		replace(k[0] == 'h' ? &m->host : k[0] == 'k' ? &m->kernel : &m->cpu_model,
			l->tok[1]);
	} else if (!strcmp(k, "cpu_id")) {
		if (l->ntok != 5 || parse_int(l->tok[2], &m->cpu_family) ||
		    parse_int(l->tok[3], &m->cpu_model_id) || parse_int(l->tok[4], &m->cpu_stepping))
			return -1;
		replace(&m->cpu_vendor, l->tok[1]);
	} else if (!strcmp(k, "cpu_mhz")) {
		char *end;

		if (l->ntok != 2)
			return -1;
		m->cpu_mhz = strtod(l->tok[1], &end);
		if (*end || !isfinite(m->cpu_mhz) || m->cpu_mhz < 0 || m->cpu_mhz > 1e6)
			return -1;
	} else if (!strcmp(k, "ncpus")) {
		if (l->ntok != 2 || parse_u64(l->tok[1], &u) || u > 65536)
			return -1;
		m->ncpus = (unsigned)u;
	} else if (!strcmp(k, "command")) {
		if (l->ntok < 2 || m->command)
			return -1;
		m->command = xcalloc(l->ntok, sizeof(char *));
		for (size_t i = 1; i < l->ntok; i++)
			m->command[i - 1] = xstrdup(strcmp(l->tok[i], "\"\"") ? l->tok[i] : "");
	} else if (!strcmp(k, "event")) {
		return parse_event_line(m, l);
	} else if (!strcmp(k, "calib")) {
		return parse_calib_line(m, l);
	} else if (!strcmp(k, "calib_check")) {
		return parse_calib_check_line(m, l);
	} else if (!strcmp(k, "core_sig")) {
		return parse_core_sig_line(m, l);
	} else if (!strcmp(k, "cpu_flags")) {
		if (l->ntok < 2 || m->cpu_flags)
			return -1;
		m->cpu_flags = xcalloc(l->ntok, sizeof(char *));
		for (size_t i = 1; i < l->ntok; i++)
			m->cpu_flags[i - 1] = xstrdup(l->tok[i]);
	} else if (!strcmp(k, "counter")) {
		if (l->ntok != 3 || !counter_name_valid(l->tok[1]) || parse_u64(l->tok[2], &u))
			return -1;
		epoch_meta_set_counter(m, l->tok[1], u);
	} else {
		keep_extra(m, l);
	}
	return 0;
}

int epoch_meta_parse(const char *buf, size_t len, struct epoch_meta *m, const char **why)
{
	struct textrec rec;
	bool have_seq = false, have_start = false;

	epoch_meta_init(m);
	if (textrec_parse(buf, len, META_MAGIC, META_VERSION, &rec, why))
		return -1;
	for (size_t i = 0; i < rec.n; i++) {
		if (parse_line(m, &rec.lines[i], &have_seq, &have_start)) {
			static char msg[96];

			snprintf(msg, sizeof(msg), "malformed '%.32s' line", rec.lines[i].tok[0]);
			*why = msg;
			goto fail;
		}
	}
	if (!have_seq || !have_start) {
		*why = "missing seq or start";
		goto fail;
	}
	textrec_release(&rec);
	return 0;
fail:
	textrec_release(&rec);
	epoch_meta_release(m);
	return -1;
}
