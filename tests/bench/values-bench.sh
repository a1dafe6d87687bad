#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# values-bench - what value sampling (--values) costs, side by side with
# plain sampling at the same rate, in one run.
#
#   values-bench.sh [-F HZ] [-r REPS] [-n UNIT]
#
# Run from the build directory (make bench-values does).  REPS times each,
# interleaved (plain, values, bursts, plain, values, bursts ...): dcpirun
# -F HZ on wl-three --cpu (a CPU-bound loop, -n UNIT), then dcpirun -F HZ
# --values on the same, then --values --bursts (5%).  Reports, as medians:
#  - the CPU of the whole run (dcpirun and the workload: what a user pays),
#    from /usr/bin/time, and the ratio values / plain;
#  - the workload's own run time (it times itself: the slowdown it sees);
#  - dcpirun's own CPU (the run's CPU minus the workload's);
#  - the database size per epoch, plain, with values and with bursts
#    (profiles, value profiles and burst traces apart).
# The 3% target of docs/collect.md is on the first ratio (values / plain);
# bursts are budgeted by time: their share is the run summary's.
set -u
top_builddir=${top_builddir:-$PWD}
W=$top_builddir/tests/workloads
PATH=$top_builddir/collect:$PATH
HZ=1000 REPS=9 UNIT=
while [ $# -gt 0 ]; do
	case $1 in
	-F) HZ=$2; shift ;;
	-r) REPS=$2; shift ;;
	-n) UNIT=$2; shift ;;
	*) echo "usage: values-bench.sh [-F HZ] [-r REPS] [-n UNIT]" >&2; exit 1 ;;
	esac
	shift
done
command -v dcpirun >/dev/null || { echo "values-bench: no dcpirun (build first)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "values-bench: needs /usr/bin/time" >&2; exit 1; }
T=$(mktemp -d /tmp/values-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT

median() {
	sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# One run: prints "RUN-CPU WORKLOAD-WALL WORKLOAD-CPU DB-BYTES VALUES-BYTES SAMPLES
# BURST-BYTES BURST-SHARE"
one() { # plain|values|bursts
	local db=$T/$1.db opts=
	rm -rf "$db"
	case $1 in values) opts=--values ;; bursts) opts="--values --bursts" ;; esac
	# shellcheck disable=SC2086
	/usr/bin/time -f "%U %S" -o "$T/time" \
		dcpirun -d "$db" -F "$HZ" --no-snapshot $opts -- \
		"$W/wl-three" --cpu ${UNIT:+-n "$UNIT"} >"$T/w.out" 2>"$T/run.err" || {
		echo "values-bench: dcpirun failed:" >&2; cat "$T/run.err" >&2; exit 1; }
	awk -v t="$(cat "$T/time")" -v db="$(du -sb "$db/000001" | cut -f1)" \
	    -v vb="$(cat "$db"/000001/*.values 2>/dev/null | wc -c)" \
	    -v n="$(sed -n 's/^dcpirun: \([0-9]*\) samples.*/\1/p' "$T/run.err")" \
	    -v bb="$(cat "$db"/000001/bursts 2>/dev/null | wc -c)" \
	    -v bs="$(sed -n 's/.*steps (\([0-9.]*\)% of the time).*/\1/p' "$T/run.err")" '
		$1 == "wall" { w = $2 } $1 == "cpu" { c = $2 }
		END { split(t, x, " "); printf "%.3f %.3f %.3f %d %d %d %d %.2f\n", x[1] + x[2], w, c, db, vb, n,
			bb, bs + 0 }' "$T/w.out"
}

echo "values-bench: $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), rate $HZ Hz, $REPS runs each, load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$REPS"); do
	one plain >>"$T/plain"
	one values >>"$T/values"
	one bursts >>"$T/bursts"
done
col() { awk -v k="$2" '{ print $k }' "$T/$1" | median; }
printf "%-35s %10s %10s %10s %10s %10s %10s %10s %6s\n" "" "run CPU" "wl wall" "wl CPU" "own CPU" \
	"db/epoch" "values" "bursts" "burst%"
for m in plain values bursts; do
	case $m in plain) o= ;; values) o=" --values" ;; bursts) o=" --values --bursts" ;; esac
	awk -v m="dcpirun -F $HZ$o" -v rc="$(col $m 1)" -v w="$(col $m 2)" -v c="$(col $m 3)" \
	    -v db="$(col $m 4)" -v vb="$(col $m 5)" -v n="$(col $m 6)" -v bb="$(col $m 7)" \
	    -v bs="$(col $m 8)" 'BEGIN {
		printf "%-35s %9.3fs %9.3fs %9.3fs %9.3fs %9dB %9dB %9dB %5.1f%%  (%d samples)\n",
			m, rc, w, c, rc - c, db, vb, bb, bs, n }'
done
awk -v a="$(col plain 1)" -v b="$(col values 1)" -v wa="$(col plain 2)" -v wb="$(col values 2)" \
    -v c="$(col bursts 1)" -v wc="$(col bursts 2)" 'BEGIN {
	printf "values / plain: run CPU %+.2f%%, workload run time %+.2f%%\n", 100 * (b / a - 1), 100 * (wb / wa - 1)
	printf "values and bursts / plain: run CPU %+.2f%%, workload run time %+.2f%%\n", 100 * (c / a - 1),
		100 * (wc / wa - 1) }'
# The spread of the paired differences, to tell a real cost from noise.
paste "$T/plain" "$T/values" | awk '{ print 100 * ($9 / $1 - 1) }' | sort -n | awk '
	{ v[NR] = $1 } END { printf "paired run-CPU differences: quartiles %+.2f%% %+.2f%% %+.2f%%\n",
		v[int((NR + 3) / 4)], v[int((NR + 1) / 2)], v[int((3 * NR + 3) / 4)] }'
