#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# collect-bench - the cost of collection, side by side with perf record.
#
#   collect-bench.sh [-d SECONDS] [-F HZ] [-r REPS] [--no-hash]
#
# Run as root from the build directory (make bench does).  In one run:
#
#  1. Overhead on a CPU-bound workload (wl-three, ~1.3 s), REPS times each,
#     interleaved: no profiler; dcpirun and perf record on the command;
#     dcpid and perf record -a (system-wide) at the same rate, same event
#     (cpu-clock: this machine has no PMU).  Reports the workload's median
#     run time (it times itself) and slowdown against no profiler, the
#     profiler's own CPU per sample (per command: marginal cost from a 1.3 s
#     and a 6.7 s run, plus the fixed cost of a run; dcpid: steady state
#     over 10 s; perf -a: its whole life), and peak resident memory.
#     CPU times are the profiler's own (/proc/PID/stat), from the kernel's
#     tick accounting (4 ms granules).
#  2. Disk: dcpid and perf record -a side by side for SECONDS (default 20;
#     the report's figure is 600) while a mix of workloads runs, then the
#     size of the database against perf.data (and perf's ~/.debug cache).
#  3. The sample hash: DCPI's 4-way round robin against the 6-way
#     swap-to-front on the same samples (--hash-compare), for three table
#     sizes, on a workload of many short-lived processes, a compiler run
#     and the three-functions loop.
set -u
top_builddir=${top_builddir:-$PWD}
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
W=$top_builddir/tests/workloads
PATH=$top_builddir/collect:$top_builddir/tests/helper:$PATH
DURATION=20 HZ=1000 REPS=5 HASH=1
while [ $# -gt 0 ]; do
	case $1 in
	-d) DURATION=$2; shift ;;
	-F) HZ=$2; shift ;;
	-r) REPS=$2; shift ;;
	--no-hash) HASH=0 ;;
	*) echo "usage: collect-bench.sh [-d SECONDS] [-F HZ] [-r REPS] [--no-hash]" >&2; exit 1 ;;
	esac
	shift
done
if [ "$(id -u)" != 0 ]; then
	echo "collect-bench: needs root (system-wide sampling); skipped"
	exit 0
fi
PERF=$(command -v perf || true)
[ -n "$PERF" ] || echo "collect-bench: no perf: its columns are skipped"
T=$(mktemp -d /tmp/collect-bench.XXXXXX)
trap 'cleanup' EXIT
cleanup() {
	[ -f "$T/dcpid.pid" ] && kill "$(cat "$T/dcpid.pid")" 2>/dev/null
	rm -rf "$T"
}
SOCK=$T/ctl/sock

# CPU seconds (user + system) of a process, from /proc/PID/stat.
cpu_of() {
	awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"
}
# Follows a process's CPU seconds until it exits; the last value, within
# 10 ms of its end, goes to FILE.  (Whole-life CPU, start-up included.)
watch_cpu() { # PID FILE [PEAK-FILE]
	local last=0 v kb=0 k
	while v=$(cpu_of "$1" 2>/dev/null) && [ -n "$v" ]; do
		last=$v
		k=$(peak_kb "$1" 2>/dev/null) && [ -n "$k" ] && kb=$k
		sleep 0.01
	done
	echo "$last" >"$2"
	[ -z "${3:-}" ] || echo "$kb" >"$3"
}
peak_kb() {
	awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"
}
median() {
	sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
start_dcpid() { # DB ARGS...
	local db=$1 i
	shift
	dcpid -f -d "$db" --socket "$SOCK" -F "$HZ" "$@" >/dev/null 2>>"$T/err" &
	echo $! >"$T/dcpid.pid"
	for i in $(seq 100); do
		dcpictl --socket "$SOCK" status >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "collect-bench: dcpid did not start" >&2
	cat "$T/err" >&2
	exit 1
}
stop_dcpid() {
	local pid
	pid=$(cat "$T/dcpid.pid")
	dcpictl --socket "$SOCK" quit >/dev/null
	while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
	rm -f "$T/dcpid.pid"
}
dcpid_samples() {
	dcpictl --socket "$SOCK" --json status | awk -F'[:,]' '/^  "samples"/ { gsub(/ /, "", $2); print $2 }'
}
# perf record's sample count, from its closing message.
perf_samples() {
	sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$1" | tail -n 1
}

echo "collect-bench: $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), rate $HZ Hz, $REPS runs"
echo

# ---- 1. overhead -----------------------------------------------------------
# The workload times itself (wl-three --cpu: "wall" from its start to its
# end), so a profiler's start-up and post-processing do not count as
# slowdown; they are the profiler's own CPU, reported apart.
wall_of() { awk '$1 == "wall" { print $2 }' "$1"; }
cpu_line() { awk '$1 == "cpu" { print $2 }' "$1"; }

# A profiler's own CPU on a command, read from /proc/PID/stat (its own
# utime + stime, not its children's) every 10 ms until it exits.  Prints
# "OWN-CPU SAMPLES" for one run of wl-three -n $1.
own_cpu() { # N KIND
	local pid n
	# Fresh state each time: snapshots and build-id caches are first-run costs.
	rm -rf "$T/own.db" "$T/.debug"
	case $2 in
	dcpirun) dcpirun -d "$T/own.db" -F "$HZ" -- "$W/wl-three" -n "$1" >/dev/null 2>"$T/own.err" & ;;
	perf) env HOME="$T" "$PERF" record -e cpu-clock -F "$HZ" -o "$T/own.data" \
		-- "$W/wl-three" -n "$1" >/dev/null 2>"$T/own.err" & ;;
	esac
	pid=$!
	watch_cpu $pid "$T/own.cpu" "$T/own.kb"
	wait $pid
	cat "$T/own.kb" >"$T/$2.kb"
	case $2 in
	dcpirun) n=$(sed -n 's/^dcpirun: \([0-9]*\) samples.*/\1/p' "$T/own.err") ;;
	perf) n=$(perf_samples "$T/own.err") ;;
	esac
	echo "$(cat "$T/own.cpu") $n"
}
# Marginal CPU per sample and fixed cost, from a short and a long run
# (the least of three of each: other load only ever adds).
cost() { # KIND
	local a b
	a=$(for i in 1 2 3; do own_cpu 200000000 "$1"; done | sort -n | head -n 1)
	b=$(for i in 1 2 3; do own_cpu 1000000000 "$1"; done | sort -n | head -n 1)
	awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " ")
		per = (y[1] - x[1]) / (y[2] - x[2]); fixed = x[1] - per * x[2]
		printf "%.1f us + %.0f ms\n", 1e6 * per, 1e3 * (fixed > 0 ? fixed : 0) }'
}

declare -A times
add_time() { times[$1]+="$(wall_of "$T/w.out") "; }
for i in $(seq "$REPS"); do
	"$W/wl-three" --cpu >"$T/w.out" && add_time none
	dcpirun -q -d "$T/run.db" -F "$HZ" -- "$W/wl-three" --cpu >"$T/w.out" 2>>"$T/err" && add_time dcpirun
	if [ -n "$PERF" ]; then
		HOME=$T "$PERF" record -q -e cpu-clock -F "$HZ" -o "$T/p.data" -- "$W/wl-three" --cpu \
			>"$T/w.out" 2>>"$T/err" && add_time perf
	fi
done

# System-wide: the same runs under dcpid, then under perf record -a.
start_dcpid "$T/sys.db"
pid=$(cat "$T/dcpid.pid")
for i in $(seq "$REPS"); do "$W/wl-three" --cpu >"$T/w.out" && add_time dcpid; done
c0=$(cpu_of "$pid") s0=$(dcpid_samples)
sleep 10
c1=$(cpu_of "$pid") s1=$(dcpid_samples) dcpid_kb=$(peak_kb "$pid")
stop_dcpid
d_cost=$(awk -v a=$c0 -v b=$c1 -v n=$((s1 - s0)) 'BEGIN { printf "%.1f us (steady)", 1e6 * (b - a) / n }')
if [ -n "$PERF" ]; then
	HOME=$T "$PERF" record -a -e cpu-clock -F "$HZ" -o "$T/pa.data" >/dev/null 2>"$T/perfa.err" &
	ppid=$!
	sleep 1
	for i in $(seq "$REPS"); do "$W/wl-three" --cpu >"$T/w.out" && add_time perfa; done
	perfa_kb=$(peak_kb "$ppid")
	watch_cpu "$ppid" "$T/perfa.cpu" & wpid=$!
	kill -INT "$ppid"; wait "$ppid"; wait $wpid
	pa_cost=$(awk -v c="$(cat "$T/perfa.cpu")" -v n="$(perf_samples "$T/perfa.err")" \
		'BEGIN { printf "%.1f us (life)", 1e6 * c / n }')
fi

base=$(echo ${times[none]} | tr ' ' '\n' | median)
row() { # NAME KEY CPU PEAK
	local m
	m=$(echo ${times[$2]} | tr ' ' '\n' | median)
	awk -v n="$1" -v m="$m" -v b="$base" -v c="$3" -v k="$4" \
		'BEGIN { printf "%-28s %7.3f s %+7.1f%%  %-20s %9s\n", n, m, 100 * (m / b - 1), c, k }'
}
echo "1. overhead on wl-three (its own run time, median of $REPS runs), the profiler's"
echo "   own CPU per sample (+ fixed cost per run), and its peak memory"
printf "%-28s %9s %8s  %-20s %9s\n" "" "run time" "slowdown" "CPU per sample" "peak RSS"
row "no profiler" none "-" "-"
c=$(cost dcpirun)
row "dcpirun -F $HZ" dcpirun "$c" "$(cat "$T/dcpirun.kb") kB"
if [ -n "$PERF" ]; then
	c=$(cost perf)
	row "perf record -F $HZ" perf "$c" "$(cat "$T/perf.kb") kB"
fi
row "dcpid -F $HZ (system-wide)" dcpid "$d_cost" "${dcpid_kb} kB"
[ -n "$PERF" ] && row "perf record -a -F $HZ" perfa "$pa_cost" "${perfa_kb} kB"
echo

# ---- 2. disk ------------------------------------------------------------------
mix() {
	trap - EXIT
	while :; do
		"$W/wl-three" -n 50000000
		"$W/wl-lib" -n 50000000
		"$W/wl-spawn" -n 30 -w 1000000
		"$W/wl-branchy" -n 30000000
		"$W/wl-threads" -n 30000000
		gcc -O2 -c -I"$top_srcdir" -I"$top_builddir" "$top_srcdir/collect/store.c" -o "$T/x.o"
	done >/dev/null 2>&1
}
echo "2. disk after ${DURATION} s of system-wide collection at $HZ Hz (a workload mix running)"
start_dcpid "$T/disk.db"
dpid=$(cat "$T/dcpid.pid")
if [ -n "$PERF" ]; then
	rm -rf "$T/.debug"
	HOME=$T "$PERF" record -a -e cpu-clock -F "$HZ" -o "$T/disk.data" >/dev/null 2>"$T/perfd.err" &
	ppid=$!
fi
mix &
mixpid=$!
sleep "$DURATION"
kill "$mixpid" 2>/dev/null; wait "$mixpid" 2>/dev/null
dsamples=$(dcpid_samples) dkb=$(peak_kb "$dpid")
watch_cpu "$dpid" "$T/dcpidd.cpu" & wpid=$!
stop_dcpid
wait $wpid
dcpu=$(cat "$T/dcpidd.cpu")
dbytes=$(du -sb "$T/disk.db" | cut -f1)
nprof=$(find "$T/disk.db" -name "*.prof" | wc -l)
printf "  dcpid:       %9d bytes in %d profiles (%s samples; %.1f bytes/sample; CPU %.2f s; peak RSS %s kB)\n" \
	"$dbytes" "$nprof" "$dsamples" "$(awk -v b=$dbytes -v n=$dsamples 'BEGIN{print b/n}')" "$dcpu" "$dkb"
if [ -n "$PERF" ]; then
	pkb=$(peak_kb "$ppid")
	watch_cpu "$ppid" "$T/perfd.cpu" & wpid=$!
	kill -INT "$ppid"; wait "$ppid"; prc=$?; wait $wpid
	pcpu=$(cat "$T/perfd.cpu")
	pbytes=$(stat -c %s "$T/disk.data")
	pdebug=$(du -sb "$T/.debug" 2>/dev/null | cut -f1)
	psamples=$(perf_samples "$T/perfd.err")
	if [ -z "$psamples" ]; then
		echo "  perf record: failed (exit status $prc) after writing $pbytes bytes of perf.data:"
		tail -n 3 "$T/perfd.err" | sed 's/^/    /'
		psamples=0
	fi
	printf "  perf record: %9d bytes of perf.data (%s samples; %.1f bytes/sample; CPU %.2f s; peak RSS %s kB)\n" \
		"$pbytes" "$psamples" "$(awk -v b=$pbytes -v n=$psamples 'BEGIN{print n ? b/n : 0}')" "$pcpu" "$pkb"
	printf "               + %d bytes of build-id cache (~/.debug)\n" "${pdebug:-0}"
	awk -v a="$pbytes" -v b="$dbytes" 'BEGIN { printf "  perf.data / database = %.0fx\n", a / b }'
fi
echo

# ---- 3. the sample hash ----------------------------------------------------------
if [ "$HASH" = 1 ]; then
	echo "3. sample hash: same samples through both policies (dcpirun --hash-compare -F 5000)"
	printf "  %-22s %9s %8s %11s %8s %11s\n" workload "table" "rr4 hit" "rr4 evict" "stf6 hit" "stf6 evict"
	for wl in spawn gcc three; do
		case $wl in
		spawn) cmd="$W/wl-spawn -n 300" ;;
		gcc) cmd="gcc -O2 -c -I$top_srcdir -I$top_builddir $top_srcdir/collect/collector.c -o $T/c.o" ;;
		three) cmd="$W/wl-three" ;;
		esac
		for bytes in 4096 16384 262144; do
			rm -rf "$T/h.db"
			dcpirun -q -d "$T/h.db" -F 5000 --hash stf6 --hash-compare --hash-bytes $bytes \
				-- $cmd >/dev/null 2>>"$T/err"
			awk -v w="$wl" -v b="$bytes" '$1 == "counter" { c[$2] = $3 }
				END { n = c["hash_samples"]
				      printf "  %-22s %7d B %7.1f%% %11d %7.1f%% %11d\n", w " (" n " samples)", b,
					100 * c["hash_compare_hits"] / n, c["hash_compare_evictions"],
					100 * c["hash_hits"] / n, c["hash_evictions"] }' "$T/h.db/000001/meta"
		done
	done
fi
