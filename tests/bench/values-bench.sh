#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# values-bench - what value sampling (--values) and bursts cost, side by
# side with plain sampling at the same rate, in one run.
#
#   values-bench.sh [-F HZ] [-r REPS] [-n UNIT]
#
# Run from the build directory (make bench-values does).  REPS times each,
# interleaved (plain, values, bursts, step, plain, values ...): dcpirun -F HZ
# on wl-three --cpu (a CPU-bound loop, -n UNIT), then dcpirun -F HZ --values
# on the same, then --values --bursts (emulated, the default budget: a
# share of the CPU sampled), then --values --bursts=step (single steps, 5%).
# With -w gzip, gzip -6 of the machine's libraries instead; -w bunzip2,
# bzip2 -d of them compressed; -w chase, wl-chase (a pointer chase through
# 32 MiB): these print no times of their own, their CPU and run time come
# from rucpu and the clock around dcpirun.  Reports, as medians:
#  - the CPU of the whole run (dcpirun and the workload: what a user pays),
#    from /usr/bin/time, and the ratio values / plain;
#  - the workload's own run time (it times itself: the slowdown it sees);
#  - dcpirun's own CPU (the run's CPU minus the workload's);
#  - the database size per epoch, plain, with values and with bursts
#    (profiles, value profiles, path profiles and raw burst traces apart).
# The 3% target of docs/collect.md is on the first ratio (values / plain);
# bursts are budgeted by time: their share is the run summary's.
set -u
top_builddir=${top_builddir:-$PWD}
W=$top_builddir/tests/workloads
PATH=$top_builddir/collect:$PATH
HZ=1000 REPS=9 UNIT= WL=three
RUCPU=$top_builddir/tests/helper/rucpu
while [ $# -gt 0 ]; do
	case $1 in
	-F) HZ=$2; shift ;;
	-r) REPS=$2; shift ;;
	-n) UNIT=$2; shift ;;
	-w) WL=$2; shift ;;
	*) echo "usage: values-bench.sh [-F HZ] [-r REPS] [-n UNIT] [-w three|gzip|bunzip2|chase]" >&2; exit 1 ;;
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
case $WL in
three) ;;
gzip|bunzip2|chase)
	[ -x "$RUCPU" ] || { echo "values-bench: $RUCPU is not built (make tests/helper/rucpu)" >&2; exit 1; }
	[ "$WL" = chase ] ||
		cat /usr/lib/x86_64-linux-gnu/*.so* 2>/dev/null | head -c 24000000 >"$T/bin.dat"
	[ "$WL" = bunzip2 ] && bzip2 -c "$T/bin.dat" >"$T/bin.bz2" ;;
*) echo "values-bench: no workload '$WL' (three, gzip, bunzip2, chase)" >&2; exit 1 ;;
esac
# The command timed by rucpu (for the workloads that do not time themselves).
inner() {
	case $WL in
	gzip) echo gzip -6 -c "$T/bin.dat" ;;
	bunzip2) echo bzip2 -d -c "$T/bin.bz2" ;;
	chase) echo "$W/wl-chase" ${UNIT:+-n "$UNIT"} ;;
	esac
}
# One run: prints "RUN-CPU WORKLOAD-WALL WORKLOAD-CPU DB-BYTES VALUES-BYTES SAMPLES
# BURST-BYTES BURST-SHARE PATHS-BYTES"
one() { # plain|values|bursts|step
	local db=$T/$1.db opts= t0 t1
	rm -rf "$db"
	case $1 in
	values) opts=--values ;;
	bursts) opts="--values --bursts" ;;
	step) opts="--values --bursts=step" ;;
	esac
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	if [ "$WL" != three ]; then
		/usr/bin/time -f "%U %S" -o "$T/time" \
			dcpirun -d "$db" -F "$HZ" --no-snapshot $opts -- \
			"$RUCPU" "$T/inner" -- $(inner) >/dev/null 2>"$T/run.err"
	else
		/usr/bin/time -f "%U %S" -o "$T/time" \
			dcpirun -d "$db" -F "$HZ" --no-snapshot $opts -- \
			"$W/wl-three" --cpu ${UNIT:+-n "$UNIT"} >"$T/w.out" 2>"$T/run.err"
	fi || { echo "values-bench: dcpirun failed:" >&2; cat "$T/run.err" >&2; exit 1; }
	t1=$(date +%s.%N)
	# the others time nothing themselves: their CPU from rucpu, their run time the clock's around dcpirun
	[ "$WL" != three ] && awk -v c="$(cat "$T/inner")" -v a="$t0" -v b="$t1" \
		'BEGIN { print "wall", b - a; print "cpu", c }' >"$T/w.out"
	awk -v t="$(cat "$T/time")" -v db="$(du -sb "$db/000001" | cut -f1)" \
	    -v vb="$(cat "$db"/000001/*.values 2>/dev/null | wc -c)" \
	    -v n="$(sed -n 's/^dcpirun: \([0-9]*\) samples.*/\1/p' "$T/run.err")" \
	    -v bb="$(cat "$db"/000001/bursts 2>/dev/null | wc -c)" \
	    -v pb="$(cat "$db"/000001/*.paths 2>/dev/null | wc -c)" \
	    -v bs="$(sed -n 's/.*bursts of [0-9]* [a-z]* (\([0-9.]*\)% of the \(time\|CPU sampled\).*/\1/p' "$T/run.err")" '
		$1 == "wall" { w = $2 } $1 == "cpu" { c = $2 }
		END { split(t, x, " "); printf "%.3f %.3f %.3f %d %d %d %d %.2f %d\n", x[1] + x[2], w, c, db, vb, n,
			bb, bs + 0, pb }' "$T/w.out"
}

echo "values-bench: $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), rate $HZ Hz, $WL, $REPS runs each, load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$REPS"); do
	one plain >>"$T/plain"
	one values >>"$T/values"
	one bursts >>"$T/bursts"
	one step >>"$T/step"
done
col() { awk -v k="$2" '{ print $k }' "$T/$1" | median; }
printf "%-40s %10s %10s %10s %10s %10s %10s %10s %10s %6s\n" "" "run CPU" "wl wall" "wl CPU" "own CPU" \
	"db/epoch" "values" "paths" "raw" "burst%"
for m in plain values bursts step; do
	case $m in
	plain) o= ;; values) o=" --values" ;; bursts) o=" --values --bursts" ;;
	step) o=" --values --bursts=step" ;;
	esac
	awk -v m="dcpirun -F $HZ$o" -v rc="$(col $m 1)" -v w="$(col $m 2)" -v c="$(col $m 3)" \
	    -v db="$(col $m 4)" -v vb="$(col $m 5)" -v n="$(col $m 6)" -v bb="$(col $m 7)" \
	    -v bs="$(col $m 8)" -v pb="$(col $m 9)" 'BEGIN {
		printf "%-40s %9.3fs %9.3fs %9.3fs %9.3fs %9dB %9dB %9dB %9dB %5.1f%%  (%d samples)\n",
			m, rc, w, c, rc - c, db, vb, pb, bb, bs, n }'
done
awk -v a="$(col plain 1)" -v b="$(col values 1)" -v wa="$(col plain 2)" -v wb="$(col values 2)" \
    -v c="$(col bursts 1)" -v wc="$(col bursts 2)" -v d="$(col step 1)" -v wd="$(col step 2)" \
    -v pa="$(col plain 3)" -v pc="$(col bursts 3)" -v pd="$(col step 3)" 'BEGIN {
	printf "values / plain: run CPU %+.2f%%, workload run time %+.2f%%\n", 100 * (b / a - 1), 100 * (wb / wa - 1)
	printf "values and bursts / plain: run CPU %+.2f%%, workload CPU %+.2f%%, workload run time %+.2f%%\n",
		100 * (c / a - 1), 100 * (pc / pa - 1), 100 * (wc / wa - 1)
	printf "values and bursts / values: run CPU %+.2f%%, workload run time %+.2f%%\n", 100 * (c / b - 1),
		100 * (wc / wb - 1)
	printf "values and single-step bursts / plain: run CPU %+.2f%%, workload CPU %+.2f%%, workload run time %+.2f%%\n",
		100 * (d / a - 1), 100 * (pd / pa - 1), 100 * (wd / wa - 1) }'
# The spread of the paired differences, to tell a real cost from noise.
quartiles() { # WHAT
	sort -n | awk -v w="$1" '{ v[NR] = $1 } END { printf "paired %s: quartiles %+.2f%% %+.2f%% %+.2f%%\n",
		w, v[int((NR + 3) / 4)], v[int((NR + 1) / 2)], v[int((3 * NR + 3) / 4)] }'
}
paste "$T/plain" "$T/values" | awk '{ print 100 * ($10 / $1 - 1) }' | quartiles "run-CPU differences, values / plain"
paste "$T/plain" "$T/bursts" | awk '{ print 100 * ($12 / $3 - 1) }' | quartiles "workload CPU, bursts / plain"
paste "$T/plain" "$T/bursts" | awk '{ print 100 * ($11 / $2 - 1) }' | quartiles "workload run time, bursts / plain"
paste "$T/values" "$T/bursts" | awk '{ print 100 * ($10 / $1 - 1) }' | quartiles "run CPU, bursts / values"
paste "$T/values" "$T/bursts" | awk '{ print 100 * ($11 / $2 - 1) }' | quartiles "workload run time, bursts / values"
