#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# burst-bench - emulated bursts against single-step bursts, side by side in
# one run, on real programs (docs/collect.md, "Bursts").
#
#   burst-bench.sh [-F HZ] [-r REPS] [-b PCT] [-l LIMIT,...] [WORKLOAD...]
#
# Run from the build directory (make bench-bursts does); needs root (ptrace
# of any thread is not needed, but dcpirun's bursts of its own tree are).
# Workloads: gzip bzip2 xz (default), three, chase, branchy.  For each,
# REPS rounds, each round one run of every mode in turn (interleaved):
#   step        dcpirun --bursts=step,PCT
#   emulate     dcpirun --bursts=PCT
#   emulate-L   dcpirun --bursts=PCT --burst-limit=L, for each L of -l
# all at -F HZ, the workload inside its own rucpu (its CPU, exactly).  Per
# mode, medians of the rounds:
#  - bursts, instructions followed, the share of the time threads were stopped;
#  - the cost per instruction followed: the time stopped over the
#    instructions (us), and its ratio to a single step's;
#  - instructions followed per second of the program's CPU, and the ratio;
#  - bursts that ended early (before their limit or a system call), and the
#    instructions that ended them (the run summary's);
#  - windows matched of those tried;
#  - the epoch's bytes: profiles, path profiles, raw traces.
set -u
top_builddir=${top_builddir:-$PWD}
W=$top_builddir/tests/workloads
RUCPU=$top_builddir/tests/helper/rucpu
PATH=$top_builddir/collect:$top_builddir/tests/helper:$PATH
HZ=1000 REPS=3 PCT=5 LIMITS=
while [ $# -gt 0 ]; do
	case $1 in
	-F) HZ=$2; shift ;;
	-r) REPS=$2; shift ;;
	-b) PCT=$2; shift ;;
	-l) LIMITS=${2//,/ }; shift ;;
	-*) echo "usage: burst-bench.sh [-F HZ] [-r REPS] [-b PCT] [-l LIMIT,...] [WORKLOAD...]" >&2; exit 1 ;;
	*) break ;;
	esac
	shift
done
[ $# -gt 0 ] || set -- gzip bzip2 xz
command -v dcpirun >/dev/null || { echo "burst-bench: no dcpirun (build first)" >&2; exit 1; }
[ -x "$RUCPU" ] || { echo "burst-bench: $RUCPU is not built (make tests/helper/rucpu)" >&2; exit 1; }
T=$(mktemp -d /tmp/burst-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT

# Inputs, as calc-accuracy.sh makes them: the machine's libraries.
cat /usr/lib/x86_64-linux-gnu/*.so* 2>/dev/null | head -c 16000000 >"$T/bin.dat"
head -c 6000000 "$T/bin.dat" >"$T/bin6.dat"

workload() {
	case $1 in
	gzip) echo "gzip -9 -c $T/bin.dat" ;;
	bzip2) echo "bzip2 -c $T/bin6.dat" ;;
	xz) echo "xz -3 -c $T/bin6.dat" ;;
	three) echo "$W/wl-three -s 2" ;;
	chase) echo "$W/wl-chase" ;;
	branchy) echo "$W/wl-branchy -n 200000000" ;;
	*) return 1 ;;
	esac
}

now() { date +%s.%N; }
median() {
	sort -g | awk '{ v[NR] = $1 } END { if (!NR) print 0; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# One run: appends "CPU WALL BURSTS INSNS SHARE EARLY WIN TRIED PROF PATHS RAW" to $T/res.MODE.W
run_one() { # MODE WORKLOAD
	local mode=$1 db=$T/db opts t0 t1 cmd
	cmd=$(workload "$2")
	case $mode in
	step) opts="--bursts=step,$PCT" ;;
	emulate) opts="--bursts=$PCT" ;;
	emulate-*) opts="--bursts=$PCT --burst-limit=${mode#emulate-}" ;;
	esac
	rm -rf "$db" "$T/inner"
	t0=$(now)
	# shellcheck disable=SC2086
	dcpirun -d "$db" -F "$HZ" --no-snapshot $opts -- "$RUCPU" "$T/inner" -- $cmd >/dev/null 2>"$T/err" || {
		echo "burst-bench: $mode on $2 failed:" >&2; tail -n 3 "$T/err" >&2; return; }
	t1=$(now)
	sed -n 's/.*early, at \([^;)]*\).*/\1/p' "$T/err" >>"$T/ends.$mode.$2"
	awk -v cpu="$(cat "$T/inner")" -v wall="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
	    -v prof="$(cat "$db"/000001/*.prof 2>/dev/null | wc -c)" \
	    -v paths="$(cat "$db"/000001/*.paths 2>/dev/null | wc -c)" \
	    -v raw="$(cat "$db"/000001/bursts 2>/dev/null | wc -c)" '
		{
			if (match($0, /, [0-9]+ bursts of [0-9]+ (steps|instructions) \([0-9.]+% of the time/)) {
				split(substr($0, RSTART + 2, RLENGTH - 2), w, /[ (%]+/)
				b = w[1]; n = w[4]; s = w[6]
			}
			if (match($0, /[0-9.]+% ended early/)) e = substr($0, RSTART, RLENGTH) + 0
			if (match($0, /[0-9]+ of [0-9]+ windows matched/)) {
				split(substr($0, RSTART, RLENGTH), x, " "); m = x[1]; t = x[3]
			}
		}
		END { printf "%s %s %d %d %s %s %d %d %d %d %d\n", cpu, wall, b, n, s + 0, e + 0, m, t,
			prof, paths, raw }' "$T/err" >>"$T/res.$mode.$2"
}

col() { awk -v k="$2" '{ print $k }' "$1" | median; }

modes="step emulate"
for l in $LIMITS; do modes="$modes emulate-$l"; done
echo "burst-bench: $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), $HZ Hz, budget $PCT%, $REPS rounds, load $(cut -d' ' -f1-3 /proc/loadavg)"
for w in "$@"; do
	workload "$w" >/dev/null || { echo "burst-bench: unknown workload $w" >&2; exit 1; }
	for r in $(seq "$REPS"); do
		for m in $modes; do run_one "$m" "$w"; done
	done
	echo
	echo "== $w: $(workload "$w" | sed "s|$T/||g; s|$W/||")"
	printf "%-13s %7s %7s %11s %7s %10s %8s %12s %8s %7s %9s %9s %9s\n" mode "CPU s" bursts \
		"insns" "stop%" "us/insn" "x step" "insns/CPU s" "x step" early% windows "prof B" "paths B" "raw B"
	sc=$(col "$T/res.step.$w" 1) sn=$(col "$T/res.step.$w" 4) ss=$(col "$T/res.step.$w" 5)
	sw=$(col "$T/res.step.$w" 2)
	for m in $modes; do
		f=$T/res.$m.$w
		[ -s "$f" ] || continue
		awk -v m="$m" -v cpu="$(col "$f" 1)" -v wall="$(col "$f" 2)" -v b="$(col "$f" 3)" \
		    -v n="$(col "$f" 4)" -v s="$(col "$f" 5)" -v e="$(col "$f" 6)" -v wm="$(col "$f" 7)" \
		    -v wt="$(col "$f" 8)" -v pr="$(col "$f" 9)" -v pa="$(col "$f" 10)" -v ra="$(col "$f" 11)" \
		    -v sc="$sc" -v sn="$sn" -v ss="$ss" -v sw="$sw" 'BEGIN {
			us = n ? s / 100 * wall / n * 1e6 : 0; sus = sn ? ss / 100 * sw / sn * 1e6 : 0
			rate = cpu ? n / cpu : 0; srate = sc ? sn / sc : 0
			printf "%-13s %7.2f %7d %11d %6.1f%% %10.3f %8s %12.0f %8s %6.1f%% %4d/%-4d %9d %9d %9d\n",
				m, cpu, b, n, s, us, us && sus ? sprintf("1/%.0f", sus / us) : "-", rate,
				srate ? sprintf("%.0fx", rate / srate) : "-", e, wm, wt, pr, pa, ra }'
	done
	for m in $modes; do
		[ -s "$T/ends.$m.$w" ] && echo "  $m: ended early at: $(sort "$T/ends.$m.$w" | uniq -c | sort -rn | head -n 3 | awk '{ $1 = ""; print }' | paste -sd';')"
	done
done
