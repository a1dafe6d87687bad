/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect/options.c - the options dcpid and dcpirun share (collector.h's
 * COLLECT_OPTIONS): their defaults, parsing and checks.
 */
#include "config.h"
#include "collect/collector-int.h"
#include "collect/emu-proto.h"
#include "core/cli.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#include <stdlib.h>
#include <string.h>

void collect_options_init(struct collect_options *o)
{
	memset(o, 0, sizeof(*o));
	/* DCPI's cycles and imiss, and where a PMU counts them the retired
	 * instructions: the analysis counts executions from them
	 * (docs/analysis.md, "Retired-instruction samples").  Without a PMU
	 * the last two are skipped quietly and cycles is the clock. */
	o->events[o->n_events++] = EVENT_CYCLES;
	o->events[o->n_events++] = EVENT_INSTRUCTIONS;
	o->events[o->n_events++] = EVENT_IMISS;
	o->freq_hz = COLLECT_DEFAULT_HZ;
	o->pid = -1;
	o->hash = SHASH_STF6;
	o->hash_bytes = 256 << 10;
	o->overflow_entries = 8192;
	o->ring_pages = 64;
	o->drain_ns = 60 * NS_PER_SEC;
	o->slack_ns = 20 * 1000000;
	o->values_bytes = CVALUES_DEFAULT_MAX_BYTES;
	o->values_mode = 0600;
	store_config_init(&o->store);
}

static void list_events(struct strbuf *sb)
{
	for (int i = 0; i < EVENT__COUNT; i++)
		strbuf_addf(sb, "%s%s", i ? ", " : "", event_name((enum dcpi_event)i));
}

int collect_parse_events(struct collect_options *o, const char *list)
{
	char *copy = xstrdup(list), *tok, *save = NULL;
	int r = 0;

	o->n_events = 0;
	o->events_given = true;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int ev = event_lookup(tok);
		bool dup = false;

		if (ev < 0) {
			struct strbuf sb = STRBUF_INIT;

			list_events(&sb);
			r = errorf("unknown event '%s' (known: %s)", tok, sb.buf);
			strbuf_release(&sb);
			break;
		}
		for (size_t i = 0; i < o->n_events; i++)
			dup |= o->events[i] == (enum dcpi_event)ev;
		if (!dup)
			o->events[o->n_events++] = (enum dcpi_event)ev;
	}
	if (!r && !o->n_events)
		r = errorf("no events in '%s'", list);
	free(copy);
	return r;
}

/*
 * --bursts[=[step|emulate][,PCT]]: emulated bursts (the default), at most
 * PCT% of the CPU time sampled, or single steps, at most PCT% of the time.
 */
static int parse_bursts(struct collect_options *o, const char *arg)
{
	char *copy, *tok, *save = NULL;
	bool pct = false;
	int r = 0;

	o->burst_budget = EMBURST_DEFAULT_BUDGET;
	o->burst_step = false;
	if (!arg)
		return 0;
	copy = xstrdup(arg);
	for (tok = strtok_r(copy, ",", &save); tok && !r; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (!strcmp(tok, "step"))
			o->burst_step = true;
		else if (!strcmp(tok, "emulate"))
			o->burst_step = false;
		else if (cli_parse_range(tok, 1, 50, &v))
			r = errorf("bad --bursts '%s' (step or emulate, and a percentage of the time, "
				   "1 to 50: --bursts=step,10)", arg);
		else
			o->burst_budget = (double)v / 100, pct = true;
	}
	/* single steps' budget is a share of the time; emulated bursts', of the CPU sampled */
	if (!pct && o->burst_step)
		o->burst_budget = BURST_DEFAULT_BUDGET;
	free(copy);
	return r;
}

int collect_option(struct collect_options *o, int opt, const char *arg)
{
	uint64_t v;
	int k;

	switch (opt) {
	case 'e':
		return collect_parse_events(o, arg) ? -1 : 1;
	case 'F':
		if (cli_parse_range(arg, 1, 100000, &v))
			return errorf("bad rate '%s' (-F takes 1 to 100000 samples/s)", arg);
		o->freq_hz = v;
		o->period = 0;
		return 1;
	case 'c':
		if (cli_parse_range(arg, 1000, UINT64_MAX >> 2, &v))
			return errorf("bad period '%s' (-c takes a number of events, or ns for "
				      "clock, of at least 1000)", arg);
		o->period = v;
		o->freq_hz = 0;
		return 1;
	case COLLECT_OPT_HASH:
		if ((k = shash_kind_lookup(arg)) < 0)
			return errorf("unknown hash table '%s' (rr4 or stf6)", arg);
		o->hash = (enum shash_kind)k;
		return 1;
	case COLLECT_OPT_PER_PROCESS:
		o->per_process = xreallocarray(o->per_process, o->n_per_process + 1,
					       sizeof(*o->per_process));
		o->per_process[o->n_per_process++] = (char *)arg;
		return 1;
	case COLLECT_OPT_WRITE_INTERVAL:
		if (cli_parse_range(arg, 0, 86400, &v))
			return errorf("bad write interval '%s' (seconds, 0 to 86400)", arg);
		o->store.write_interval_ns = (int64_t)v * NS_PER_SEC;
		/* Nothing reaches disk before a drain: drain at least as often. */
		o->drain_ns = v < 1 ? COLLECT_REDRAW_NS : v < 60 ? (int64_t)v * NS_PER_SEC :
						 60 * NS_PER_SEC;
		return 1;
	case COLLECT_OPT_HASH_BYTES:
		if (cli_parse_range(arg, 64, (uint64_t)1 << 30, &v))
			return errorf("bad hash table size '%s' (bytes per CPU, 64 to 2^30)", arg);
		o->hash_bytes = (size_t)v;
		return 1;
	case COLLECT_OPT_HASH_COMPARE:
		o->hash_compare = true;
		return 1;
	case COLLECT_OPT_NO_CALIBRATE:
		o->no_calibrate = true;
		return 1;
	case COLLECT_OPT_VALUES:
		o->values = true;
		return 1;
	case COLLECT_OPT_BURSTS:
		return parse_bursts(o, arg) ? -1 : 1;
	case COLLECT_OPT_BURST_LIMIT:
		if (cli_parse_range(arg, 100, EMU_MAX_LIMIT, &v))
			return errorf("bad burst limit '%s' (instructions, 100 to %u)", arg, EMU_MAX_LIMIT);
		o->burst_limit = (uint32_t)v;
		return 1;
	case COLLECT_OPT_BURST_DEADLINE:
		if (cli_parse_range(arg, 10, 600000, &v))
			return errorf("bad burst deadline '%s' (ms, 10 to 600000)", arg);
		o->burst_deadline_ms = (uint32_t)v;
		return 1;
	case COLLECT_OPT_VALUES_USERS: {
		struct whose w;
		int r;

		/* Checked now (an unknown user is a bad option), kept as given. */
		whose_init(&w);
		r = whose_parse(&w, arg);
		whose_release(&w);
		if (r)
			return -1;
		o->values_users = arg;
		return 1;
	}
	case COLLECT_OPT_VALUES_MODE:
		if (strcmp(arg, "0600") && strcmp(arg, "600") && strcmp(arg, "0640") && strcmp(arg, "640"))
			return errorf("bad --values-mode '%s' (0600 or 0640)", arg);
		o->values_mode = strstr(arg, "640") ? 0640 : 0600;
		return 1;
	case COLLECT_OPT_EMULATE_SOCKET:
		if (!*arg || strlen(arg) >= 108)
			return errorf("bad --emulate-socket '%s' (a socket's path, under 108 bytes)", arg);
		o->emulate_socket = arg;
		return 1;
	case COLLECT_OPT_RING_PAGES:
		if (cli_parse_range(arg, 1, 65536, &v) || (v & (v - 1)))
			return errorf("bad ring size '%s' (pages per CPU, a power of two)", arg);
		o->ring_pages = (unsigned)v;
		o->ring_pages_given = true;
		return 1;
	case 'g':
		return callgraph_parse(&o->callgraph, "dwarf") ? -1 : 1;
	case COLLECT_OPT_CALL_GRAPH:
		return callgraph_parse(&o->callgraph, arg) ? -1 : 1;
	case COLLECT_OPT_THREADS:
		if (o->callgraph.mode == CALLGRAPH_NONE)
			o->callgraph.mode = CALLGRAPH_THREADS;
		return 1;
	default:
		return 0;
	}
}

int collect_check_label(const char *label)
{
	if (!epoch_label_valid(label))
		return errorf("invalid epoch label '%s' (1-64 characters, no spaces, not a number, "
			      "not starting with 'latest')", label);
	return 0;
}

int collect_cli_option(const struct cli_option *opt, const char *arg)
{
	return collect_option(opt->value, opt->defval, arg) < 0 ? -1 : 0;
}
