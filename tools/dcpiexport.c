/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dcpiexport - an epoch's stacks for the tools people already use: pprof's
 * gzipped profile.proto (go tool pprof, Pyroscope, Parca) or folded stacks
 * (flamegraph.pl, speedscope).  A thin main over analysis/export.h.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/export.h"
#include "core/die.h"
#include "core/strbuf.h"
#include "tools/tool.h"

static struct tool t;

struct args {
	int format;                     /* 0: pprof, 1: folded, -1: not given */
	const char *output, *comm;
	uint64_t tgid, tid;
};

static int write_out(const struct args *a, const struct stack_view *sv, const struct export_opts *o)
{
	FILE *out = stdout;
	struct strbuf sb = STRBUF_INIT;
	int r;

	if (a->output && !(out = fopen(a->output, "we")))
		return errorf_errno("cannot create '%s'", a->output);
	if (a->format == 1) {
		r = export_folded(sv, out, o);
	} else {
		r = export_pprof(sv, &sb, o);
		if (!r && fwrite(sb.buf, 1, sb.len, out) != sb.len)
			r = -1;
	}
	if ((out != stdout ? fclose(out) : fflush(out)) || r)
		r = r ? r : -1;
	if (r)
		errorf("cannot write '%s'", a->output ? a->output : "standard output");
	strbuf_release(&sb);
	return r;
}

static int export(const struct args *a)
{
	struct export_opts eo = { EVENT_CYCLES, (uint32_t)a->tgid, (uint32_t)a->tid, a->comm };
	struct stack_view sv;
	int r;

	if (stack_view_need(&sv, &t.view))
		return -1;
	eo.event = t.events.n ? t.events.v[0] : t.view.n_events ? t.view.events[0] : EVENT_CYCLES;
	r = write_out(a, &sv, &eo);
	stack_view_release(&sv);
	return r;
}

int main(int argc, char **argv)
{
	static const char *const formats[] = { "pprof", "folded", NULL };
	struct args a = { -1, NULL, NULL, 0, 0 };
	const struct cli_option options[] = {
		TOOL_OPTS_EPOCH(&t),
		OPT_EVENT(&t.events, "the event (default: the epoch's first)"),
		OPT_CHOICE('f', "format", &a.format, "FMT", "pprof or folded", formats, "format"),
		OPT_STRING('o', "output", &a.output, "FILE",
			   "write there (default: standard output; pprof needs a file\n"
			   "or a pipe, not a terminal)"),
		OPT_STRING(0, "comm", &a.comm, "NAME", "only the samples of processes named NAME"),
		OPT_U64(0, "tgid", &a.tgid, "N", "only the samples of process N", 1, UINT32_MAX,
			"process id"),
		OPT_U64(0, "pid", &a.tid, "N", "only the samples of thread N", 1, UINT32_MAX,
			"thread id"),
		OPT_END()
	};
	const struct cli_command cmd = {
		.usage = "dcpiexport [-d DIR] [-E EPOCH] [-e EVENT] -f pprof|folded [-o FILE]\n"
			 "           [--comm NAME] [--tgid N] [--pid N]",
		.about = "Writes the stacks of an epoch recorded with dcpirun -g or dcpid -g in another\n"
			 "tool's format: pprof (gzipped profile.proto, for go tool pprof, Pyroscope, Parca)\n"
			 "or folded stacks (flamegraph.pl, speedscope).",
		.options = options,
		.max_args = 0,
	};

	tool_start(&t, argc, argv, &cmd, 0);
	/*
	 * Folded stacks have no comments, and pprof's say it in the profile:
	 * a partial export is told by the exit status and the messages.
	 */
	t.note_prefix = "";
	if (a.format < 0)
		die("no format (-f pprof or -f folded)");
	if (a.format == 0 && !a.output && isatty(STDOUT_FILENO))
		die("pprof output is binary: give -o FILE or redirect it");
	if (tool_open(&t))
		return tool_finish(&t, -1);
	return tool_finish(&t, export(&a));
}
