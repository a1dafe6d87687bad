#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# callgraph-bench - the cost and size of call stacks, side by side with
# perf record in one run.
#
#   callgraph-bench.sh [-F HZ] [-r REPS] [-n UNIT]
#
# Run as root from the build directory (make bench does).  For each
# workload (wl-callers: -O2 without frame pointers; gzip: a Debian binary),
# REPS rounds, the profilers interleaved within each round, at the same
# rate and event (cpu-clock):
#
#   dcpirun -g                  stacks unwound at collection (dwarf, 12 KiB copies)
#   perf record --call-graph dwarf   8 KiB copies (its default) written raw, unwound by perf report
#   perf record -g              frame pointers
#   dcpirun --call-graph fp     frame pointers
#   dcpirun, perf record        no stacks (for scale)
#
# Each workload runs at two lengths (x1, x4).  Reported per profiler (the
# least of the rounds: other load only adds): its own CPU on the long run
# (rucpu around the profiler, minus rucpu around the workload inside it:
# the profiler's threads and what it reaps, dcpirun's unwinding worker
# dcpi-unwind included, to the microsecond), the marginal CPU per sample
# and the fixed cost per run (from the two lengths), bytes
# written by the long run (dcpi's epoch directory; perf.data) and per
# sample, the binary snapshots dcpirun keeps apart, and the run time.
# perf records with -N -B (no build-id cache, no build-ids): perf 6.1 here
# aborts in its build-id code now and then, and without it perf does less
# work, which favours it.  For perf --call-graph dwarf, also `perf report`'s CPU:
# perf unwinds there, dcpi while recording, so the fair comparison of the
# two is their sum.
set -u
top_builddir=${top_builddir:-$PWD}
W=$top_builddir/tests/workloads
PATH=$top_builddir/collect:$top_builddir/tools:$top_builddir/tests/helper:$PATH
HZ=1000 REPS=3 UNIT=300000000
while [ $# -gt 0 ]; do
	case $1 in
	-F) HZ=$2; shift ;;
	-r) REPS=$2; shift ;;
	-n) UNIT=$2; shift ;;
	*) echo "usage: callgraph-bench.sh [-F HZ] [-r REPS] [-n UNIT]" >&2; exit 1 ;;
	esac
	shift
done
if [ "$(id -u)" != 0 ]; then
	echo "callgraph-bench: needs root (kernel stacks); skipped"
	exit 0
fi
PERF=$(command -v perf || true)
[ -n "$PERF" ] || echo "callgraph-bench: no perf: its rows are skipped"
T=$(mktemp -d /tmp/callgraph-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT

RUCPU=$top_builddir/tests/helper/rucpu
[ -x "$RUCPU" ] || { echo "callgraph-bench: $RUCPU is not built (make tests/helper/rucpu)" >&2; exit 1; }
now() { date +%s.%N; }

head -c 15000000 /dev/urandom | base64 >"$T/input.txt"
cat "$T/input.txt" "$T/input.txt" "$T/input.txt" "$T/input.txt" >"$T/input4.txt"
workload() { # NAME LENGTH(1|4)
	case $1 in
	wl-callers) echo "$W/wl-callers -n $((UNIT * $2))" ;;
	gzip) [ "$2" = 1 ] && echo "gzip -6 -c $T/input.txt" || echo "gzip -6 -c $T/input4.txt" ;;
	esac
}

# One profiled run: "CPU SAMPLES BYTES EXTRA WALL" into $T/res.KIND.
run_one() { # KIND WORKLOAD LENGTH
	local kind=$1 cmd t0 t1 n bytes extra=0 res=$T/res.$1.$3 own
	# The workload inside its own rucpu: what it costs is taken off the tree's.
	cmd="$RUCPU $T/inner -- $(workload "$2" "$3")"
	rm -rf "$T/db" "$T/perf.data" "$T/.debug" "$T/inner" "$T/outer"
	t0=$(now)
	case $kind in
	dcpi-g) "$RUCPU" "$T/outer" -- dcpirun -g -e cycles -F "$HZ" -d "$T/db" -- $cmd ;;
	dcpi-fp) "$RUCPU" "$T/outer" -- dcpirun --call-graph fp -e cycles -F "$HZ" -d "$T/db" -- $cmd ;;
	dcpi) "$RUCPU" "$T/outer" -- dcpirun -e cycles -F "$HZ" -d "$T/db" -- $cmd ;;
	perf-dwarf) HOME=$T "$RUCPU" "$T/outer" -- "$PERF" record -N -B -e cpu-clock -F "$HZ" \
		--call-graph dwarf -o "$T/perf.data" -- $cmd ;;
	perf-fp) HOME=$T "$RUCPU" "$T/outer" -- "$PERF" record -N -B -e cpu-clock -F "$HZ" -g \
		-o "$T/perf.data" -- $cmd ;;
	perf) HOME=$T "$RUCPU" "$T/outer" -- "$PERF" record -N -B -e cpu-clock -F "$HZ" \
		-o "$T/perf.data" -- $cmd ;;
	esac >/dev/null 2>"$T/err"
	t1=$(now)
	own=$(awk -v o="$(cat "$T/outer" 2>/dev/null)" -v i="$(cat "$T/inner" 2>/dev/null)" \
		'BEGIN { if (o == "" || i == "") exit 1; print o - i }') || {
		echo "callgraph-bench: $kind on $2 left no CPU figure:" >&2
		tail -n 3 "$T/err" >&2
		return
	}
	case $kind in
	dcpi*)
		n=$(sed -n 's/^dcpirun: \([0-9]*\) samples.*/\1/p' "$T/err")
		bytes=$(du -sb "$T/db/000001" | cut -f1)
		extra=$(du -sb "$T/db/binaries" 2>/dev/null | cut -f1) ;;
	perf*)
		n=$(HOME=$T "$PERF" report --stats -i "$T/perf.data" 2>/dev/null |
			awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }')
		bytes=$(stat -c %s "$T/perf.data")
		extra=$(du -sb "$T/.debug" 2>/dev/null | cut -f1) ;;
	esac
	if [ -z "$n" ]; then
		echo "callgraph-bench: $kind failed on $2:" >&2
		tail -n 3 "$T/err" >&2
		return
	fi
	echo "$own $n $bytes ${extra:-0} $(awk -v a=$t0 -v b=$t1 'BEGIN { print b - a }')" \
		>>"$res"
	[ "$3" = 4 ] || return
	if [ "$kind" = perf-dwarf ]; then
		# What perf needs to show the call graph dcpicg shows: the unwinding.
		# Only a report that finished counts (perf 6.1 here can abort in its build-id code).
		if HOME=$T "$RUCPU" "$T/cpu" -- "$PERF" report -i "$T/perf.data" --stdio --no-children \
			-g caller >/dev/null 2>&1; then
			cat "$T/cpu" >>"$T/rep.$kind"
		else
			touch "$T/rep.failed"
		fi
	elif [ "$kind" = dcpi-g ]; then
		"$RUCPU" "$T/cpu" -- dcpicg -d "$T/db" >/dev/null 2>&1
		cat "$T/cpu" >>"$T/rep.$kind"
	fi
}

least() { sort -n | head -n 1; }

report() { # WORKLOAD
	local k
	printf "%-31s %7s %7s %9s %8s %11s %8s %10s %8s\n" profiler "own CPU" samples "us/sample" \
		"fixed" "bytes" "B/sample" "snapshots" "run time"
	for k in dcpi perf dcpi-fp perf-fp dcpi-g perf-dwarf; do
		[ -f "$T/res.$k.4" ] && [ -f "$T/res.$k.1" ] || continue
		paste <(sort -n "$T/res.$k.1" | head -n 1) <(sort -n "$T/res.$k.4" | head -n 1) |
		awk -v k="$k" '
		BEGIN { name["dcpi"] = "dcpirun"; name["perf"] = "perf record"
			name["dcpi-fp"] = "dcpirun --call-graph fp"; name["perf-fp"] = "perf record -g"
			name["dcpi-g"] = "dcpirun -g (dwarf)"; name["perf-dwarf"] = "perf record --call-graph dwarf" }
		{ per = $7 > $2 ? ($6 - $1) / ($7 - $2) : 0; fixed = $1 - per * $2
		  printf "%-31s %6.3fs %7d %9.1f %6.0fms %11d %8.1f %10d %7.2fs\n", name[k], $6, $7,
			1e6 * per, 1e3 * (fixed > 0 ? fixed : 0), $8, $7 ? $8 / $7 : 0, $9, $10 }'
	done
	[ -f "$T/res.dcpi-g.4" ] && [ -f "$T/res.perf-dwarf.4" ] || return 0
	paste <(sort -n "$T/res.dcpi-g.4" | head -n 1) <(sort -n "$T/res.perf-dwarf.4" | head -n 1) |
		awk '{ printf "  dcpirun -g / perf record --call-graph dwarf: own CPU %.2fx; bytes %.2f%% of perf.data\n",
			$1 / $6, 100 * $3 / $8 }'
	if [ -f "$T/rep.perf-dwarf" ] && [ -f "$T/rep.dcpi-g" ]; then
		printf "  reading the call graph: dcpicg %.3fs CPU, perf report %.3fs CPU\n" \
			"$(least <"$T/rep.dcpi-g")" "$(least <"$T/rep.perf-dwarf")"
		paste <(sort -n "$T/res.dcpi-g.4" | head -n 1) <(sort -n "$T/res.perf-dwarf.4" | head -n 1) |
			awk -v rd="$(least <"$T/rep.dcpi-g")" -v rp="$(least <"$T/rep.perf-dwarf")" '{
			printf "  with the reading (perf unwinds there): %.2fx\n", ($1 + rd) / ($6 + rp) }'
	elif [ -f "$T/rep.failed" ]; then
		echo "  perf report failed (its exit status): what perf's unwinding costs is not measured"
	fi
}

echo "callgraph-bench: $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), rate $HZ Hz, $REPS rounds"
for wl in wl-callers gzip; do
	rm -f "$T"/res.* "$T"/rep.* "$T"/rep.failed
	for r in $(seq "$REPS"); do
		for len in 1 4; do
			for k in dcpi-g perf-dwarf perf-fp dcpi-fp dcpi perf; do
				case $k in perf*) [ -n "$PERF" ] || continue ;; esac
				run_one $k $wl $len
			done
		done
	done
	echo
	echo "$wl ($(workload $wl 4 | sed "s|$T/||; s|$W/||")):"
	report $wl
done
