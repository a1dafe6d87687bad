#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# watch-bench - the cost of a probed call: dcpiwatch side by side with
# perf probe + perf stat, and bpftrace (BPF: entry and return aggregated
# in the kernel into a histogram) where it is installed.
#
#   watch-bench.sh [-n CALLS] [-r REPS]
#
# Run as root from the build directory (make bench does).  The workload
# (wl-watch loop N) calls tiny(), a two-instruction function, N times
# (default 1,000,000) and times its loop itself.  Each tool probes tiny()'s
# entry and return; REPS runs each (default 1), interleaved.  Reported: the
# loop's ns per call (median over the runs), the cost of a probed call
# (that minus the unprobed loop's), the slowdown of the loop, and the whole
# command's elapsed time under the tool (start-up included).
#
# Every probe hit is a breakpoint trap; tiny()'s first instruction (lea) is
# not one the kernel emulates, so it is single-stepped too.  Both are VM
# exits on a virtual machine, where they dominate the cost.
set -u
top_builddir=${top_builddir:-$PWD}
W=$top_builddir/tests/workloads/wl-watch
PATH=$top_builddir/tools:$PATH
N=1000000 REPS=1
while [ $# -gt 0 ]; do
	case $1 in
	-n) N=$2; shift ;;
	-r) REPS=$2; shift ;;
	*) echo "usage: watch-bench.sh [-n CALLS] [-r REPS]" >&2; exit 1 ;;
	esac
	shift
done
[ "$(id -u)" = 0 ] || { echo "watch-bench: needs root (uprobes)" >&2; exit 1; }
[ -x "$W" ] || { echo "watch-bench: build first ($W missing)" >&2; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'perf probe -q -d "probe_wl:*" >/dev/null 2>&1; rm -rf "$tmp"' EXIT
cp "$W" "$tmp/wl" # a name of its own for perf probe's event group

have_perf=0 have_bpftrace=0
perf probe -q -x "$tmp/wl" -a tiny -a 'tiny%return' >/dev/null 2>&1 && have_perf=1
command -v bpftrace >/dev/null && have_bpftrace=1

# Runs one tool; prints "ns_per_call elapsed_s" of the run.
run() { # TOOL
	local t0 t1 out
	t0=$(date +%s.%N)
	case $1 in
	none) out=$("$tmp/wl" loop "$N") ;;
	dcpiwatch) out=$(dcpiwatch --no-histogram -f tiny -- "$tmp/wl" loop "$N" 2>"$tmp/err") ;;
	perf) out=$(perf stat -x, -e probe_wl:tiny -e probe_wl:tiny__return -- "$tmp/wl" loop "$N" 2>"$tmp/err") ;;
	bpftrace) out=$(bpftrace -q -e "uprobe:$tmp/wl:tiny { @s[tid] = nsecs; }
		uretprobe:$tmp/wl:tiny /@s[tid]/ { @ns = hist(nsecs - @s[tid]); delete(@s[tid]); }" \
		-c "$tmp/wl loop $N" 2>"$tmp/err") ;;
	esac
	t1=$(date +%s.%N)
	echo "$(echo "$out" | awk '$1 == "ns_per_call" { print $2 }') $(echo "$t1 - $t0" | bc)"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

tools="none dcpiwatch"
[ $have_perf = 1 ] && tools="$tools perf"
[ $have_bpftrace = 1 ] && tools="$tools bpftrace"
for r in $(seq "$REPS"); do
	for t in $tools; do
		run "$t" >>"$tmp/$t.runs"
	done
done

echo "watch-bench: $N calls of a probed function (entry + return), $REPS run(s) each; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
base=$(awk '{ print $1 }' "$tmp/none.runs" | median)
printf "%-26s %14s %16s %10s %12s\n" tool "loop ns/call" "ns per probe" slowdown "elapsed s"
for t in $tools; do
	ns=$(awk '{ print $1 }' "$tmp/$t.runs" | median)
	el=$(awk '{ print $2 }' "$tmp/$t.runs" | median)
	case $t in
	none) name="no probes" ;;
	dcpiwatch) name="dcpiwatch (perf_event)" ;;
	perf) name="perf probe + perf stat" ;;
	bpftrace) name="bpftrace (BPF, in-kernel)" ;;
	esac
	awk -v n="$name" -v ns="$ns" -v b="$base" -v el="$el" 'BEGIN {
		if (ns == "") { printf "%-26s %14s\n", n, "failed"; exit }
		printf "%-26s %14.1f %16.0f %9.0fx %12.1f\n", n, ns, ns - b, ns / b, el }'
done
[ $have_perf = 1 ] || echo "(perf probe: not available)"
[ $have_bpftrace = 1 ] || echo "(bpftrace: not installed; apt-get install bpftrace)"
