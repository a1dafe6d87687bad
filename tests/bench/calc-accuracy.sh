#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/bench/calc-accuracy.sh - dcpicalc's frequency estimates against
# callgrind's exact counts (the DCPI paper, Anderson et al., SOSP 1997, Figures 8 and 9), per workload.
#
#   calc-accuracy.sh [-o DIR] [-F HZ] [-r RUNS] [-m MODES] [-M MODELS] [-V] [-B] [-b BUILD]
#                    [WORKLOAD...]
#
# For each workload: profile it RUNS times into one epoch (dcpirun --append),
# each run preceded in the same process tree by calc-calib, a loop of known
# cycles, so that the cycles per sample of THIS epoch are measured (a
# virtual machine's /proc/cpuinfo MHz is not its clock, and each timer
# sample costs guest time); run it once under callgrind (cached in DIR);
# then compare with calc-accuracy, for every schedule mode in MODES (loop, auto,
# cold, pred, loop) without the flow correction and with it, and twice more
# with the default schedule: with the cycles per sample dcpirun measured and
# recorded in the epoch (its calib line: what dcpicalc uses by default), and
# with the period x the epoch's cpu MHz (no calibration).  After each block a
# SUITE line: the samples of all workloads together (the paper's way), the
# share within 5/10/15%, and the share of those off by more than 15% that
# are marked low.
#
# -V records with dcpirun --values (value profiles: use another DIR than
# for plain recordings), -B with --bursts too (5% of the time), and either
# adds a block with the default schedule that leaves them unused (--est
# measure=0 --est branches=0): what the measured frequencies and the
# branch outcomes change on the same recordings.
#
# -M MODELS (processor models, "znver5 znver4 goldencove") adds a block per
# model: the default schedule, no flow correction, calc-calib's calibration,
# with that model's table and machine facts instead of the one chosen for
# the epoch's CPU (calc-accuracy --model): what each table does to the
# estimates of the same recordings.  -m '' leaves the schedule-mode blocks
# out.
#
# -b BUILD analyses the same recordings once more with BUILD's calc-accuracy
# (another build of dcpi, e.g. main's: the estimator before a change), the
# default schedule, the calc-calib calibration: before and after side by
# side.  With -B, calc-calib's loop (6 instructions an iteration) is
# compared with the instructions per sample its matched windows measured.
#
# Workloads: the dcpi test workloads (wl-three, wl-branchy, wl-chase,
# wl-copy, wl-lib) and system programs: gzip and gunzip, bzip2, xz, sort
# (LC_ALL=C, a 60 MB text), sha1sum; held out (named only on the command
# line): mawk counting words, zstd -9, bzip2 -d.  Needs valgrind, dcpirun and the
# workloads (built by `make`), and calc-accuracy and calc-calib (`make
# tests/bench/calc-accuracy tests/bench/calc-calib`).  Takes 10-20 minutes
# on two cores the first time (callgrind); cached outputs are reused.
set -eu

out=${TMPDIR:-/tmp}/dcpi-calc-accuracy
hz=10000
runs=3
modes="loop cold pred auto"
values=
before=
models=
while getopts o:F:r:m:M:VBb: opt; do
	case $opt in
	o) out=$OPTARG ;;
	F) hz=$OPTARG ;;
	r) runs=$OPTARG ;;
	m) modes=$OPTARG ;;
	M) models=$OPTARG ;;
	V) values="$values --values" ;;
	B) values="$values --bursts" ;;
	b) before=$(cd "$OPTARG" && pwd) ;;
	*) echo "usage: $0 [-o DIR] [-F HZ] [-r RUNS] [-m MODES] [-M MODELS] [-V] [-B] [-b BUILD] [WORKLOAD...]" >&2; exit 1 ;;
	esac
done
shift $((OPTIND - 1))

build=${BUILD:-$(cd "$(dirname "$0")/../.." && pwd)}
[ -x "$build/tests/bench/calc-accuracy" ] || build=$(pwd)
PATH="$build/tools:$build/collect:$build/tests/bench:$build/tests/workloads:$PATH"
for t in dcpirun calc-accuracy calc-calib valgrind; do
	command -v $t >/dev/null || { echo "calc-accuracy.sh: $t not found (build it first)" >&2; exit 1; }
done
mkdir -p "$out"
cd "$out"

CALIB_N=150000000   # calc-calib iterations per run: 4 cycles each
export LC_ALL=C     # sort compares bytes (and callgrind does not follow env's exec)

# Inputs, made once.
[ -f text.dat ] || base64 -w 60 /dev/urandom 2>/dev/null | head -c 60000000 >text.dat
[ -f bin.dat ] || cat /usr/lib/x86_64-linux-gnu/*.so* 2>/dev/null | head -c 24000000 >bin.dat
[ -f bin8.dat ] || head -c 8000000 bin.dat >bin8.dat
[ -f bin.gz ] || gzip -c bin.dat >bin.gz
[ -f bin8.bz2 ] || bzip2 -c bin8.dat >bin8.bz2
[ -f text20.dat ] || head -c 20000000 text.dat >text20.dat
[ -f words.awk ] || echo '{ for (i = 1; i <= NF; i++) n[$i]++ } END { print length(n) }' >words.awk

# NAME -> command line
workload() {
	case $1 in
	three) echo "wl-three -n 100000000" ;;
	branchy) echo "wl-branchy -n 100000000" ;;
	chase) echo "wl-chase" ;;
	copy) echo "wl-copy -n 1000" ;;
	lib) echo "wl-lib -n 100000000" ;;
	gzip) echo "gzip -c bin.dat" ;;
	gunzip) echo "gzip -dc bin.gz" ;;
	bzip2) echo "bzip2 -c bin8.dat" ;;
	xz) echo "xz -1 -c bin8.dat" ;;
	sort) echo "sort --parallel=1 -S 300M text.dat" ;;
	sha1) echo "sha1sum bin.dat bin.dat bin.dat" ;;
	# held out: never in the default list, so that what is tuned on the
	# suite can be checked on programs it was not tuned on
	mawk) echo "mawk -F[0-9+/] -f words.awk text20.dat" ;;
	zstd) echo "zstd -9 -c bin8.dat" ;;
	bunzip2) echo "bzip2 -dc bin8.bz2" ;;
	*) return 1 ;;
	esac
}

# Runs per workload: enough samples for the short ones.
runs_of() {
	case $1 in
	sha1|gunzip|xz) echo $((runs * 2)) ;;
	*) echo "$runs" ;;
	esac
}

profile() { # NAME
	local name=$1 cmd n
	cmd=$(workload "$name")
	n=$(runs_of "$name")
	if [ ! -f "$name.db/done" ]; then
		rm -rf "$name.db"
		for r in $(seq 1 "$n"); do
			# shellcheck disable=SC2086
			dcpirun -q -d "$name.db" -F "$hz" $values $([ "$r" -gt 1 ] && echo --append) -- \
				sh -c "calc-calib $CALIB_N && exec $cmd >/dev/null" 2>/dev/null
		done
		echo "$n" >"$name.db/done"
	fi
	if [ ! -s "$name.cg" ]; then
		# shellcheck disable=SC2086
		valgrind --tool=callgrind --dump-instr=yes --collect-jumps=yes --compress-pos=no \
			--compress-strings=no --callgrind-out-file="$name.cg" $cmd >/dev/null 2>"$name.vg" ||
			{ echo "callgrind failed on $name (see $out/$name.vg)" >&2; rm -f "$name.cg"; return 1; }
	fi
}

# The suite-wide figures of a block of compare outputs (stdin, passed through),
# then the confidence levels per workload and over the suite: the share of
# the samples at each level, the share of each level within 15% of the
# truth, the share of those more than 15% off marked low (or without an
# estimate), and of those within 15% marked high: the levels' promise is
# at least 95%, 95% and 50% (docs/analysis.md, "Confidence").
DEFAULT="three branchy chase copy lib gzip gunzip bzip2 xz sort sha1"
suite() {
	awk -v defaults="$DEFAULT" 'BEGIN { nd = split(defaults, d); for (k = 1; k <= nd; k++) isdef[d[k]] = 1 }
	{ print }
	$2 ~ /^[0-9]+$/ && $1 !~ /:/ && $6 == ">15%:" {
		n += $2; a += $2 * $3; b += $2 * $4; c += $2 * $5
		o = $7; sub(/%/, "", o); l = $9; sub(/%/, "", l); over += $2 * o; low += $2 * o * l / 100
		h = $15; sub(/%/, "", h); high += $2 * h; e = $19; sub(/%/, "", e); edges += e; m++
		if ($24 == "edge-execs") { ew += $25; ewithin += $25 * e }
		label = $1
	}
	$1 == "levels" && $6 == "high" {
		rows[++nr] = label
		for (k = 0; k < 4; k++) {
			lw[nr, k] = $(7 + 3 * k); lok[nr, k] = $(8 + 3 * k)
			sw[k] += lw[nr, k]; sok[k] += lok[nr, k]
			if (label in isdef) { dw[k] += lw[nr, k]; dok[k] += lok[nr, k]; ndr++ }
			else { hw[k] += lw[nr, k]; hok[k] += lok[nr, k]; nh++ }
		}
	}
	function pct(x, y) { return y > 0 ? sprintf("%5.1f%%", 100 * x / y) : "     -" }
	function row(name, w, ok,    tot, within, over, k) {
		tot = w[0] + w[1] + w[2] + w[3]; within = ok[0] + ok[1] + ok[2] + ok[3]
		over = tot - within
		printf "%-10s %8.0f  %s %s %s %s  %s %s %s  %s  %s\n", name, tot,
			pct(w[0], tot), pct(w[1], tot), pct(w[2], tot), pct(w[3], tot),
			pct(ok[0], w[0]), pct(ok[1], w[1]), pct(ok[2], w[2]),
			pct(w[2] - ok[2] + w[3] - ok[3], over), pct(ok[0], within)
	}
	END {
		if (n) printf "SUITE %d samples: %.1f%% %.1f%% %.1f%% within 5/10/15%%; >15%%: %.1f%%, %.1f%% of them low;" \
			" high confidence %.1f%%; edges within 10%%: %.1f%% (mean of workloads), %s of the executions\n",
			n, a / n, b / n, c / n, over / n, over ? 100 * low / over : 0, high / n, m ? edges / m : 0,
			ew ? sprintf("%.1f%%", ewithin / ew) : "?"
		if (!nr) exit
		printf "%-10s %8s  %6s %6s %6s %6s  %-20s  %6s  %6s\n", "levels", "samples", "high", "medium",
			"low", "none", "within 15%: H/M/L", ">15% L", "<=15% H"
		for (r = 1; r <= nr; r++) {
			for (k = 0; k < 4; k++) { w[k] = lw[r, k]; ok[k] = lok[r, k] }
			row(rows[r], w, ok)
		}
		# the order of the levels line: high, medium, low, none
		row("SUITE", sw, sok)
		# with held-out programs named: the default suite and they apart
		if (nh && ndr) { row("(suite)", dw, dok); row("(held-out)", hw, hok) }
	}'
}

compare() { # NAME [calc-accuracy options...]
	local name=$1 n
	shift
	n=$(cat "$name.db/done")
	${ACCURACY:-calc-accuracy} -d "$name.db" --callgrind "$name.cg" --scale "$n" --label "$name" "$@"
}

[ $# -gt 0 ] || set -- $DEFAULT
for w in "$@"; do
	workload "$w" >/dev/null || { echo "unknown workload '$w'" >&2; exit 1; }
	profile "$w"
done
for m in $modes; do
	for flow in ${FLOWS:---no-flow --flow}; do
		echo "== schedule $m $flow"
		for w in "$@"; do
			compare "$w" --calibrate calib_loop=$((4 * CALIB_N)) --schedule "$m" $flow | grep -v '^calibration'
		done | suite
	done
done
for model in $models; do
	echo "== model $model: default schedule, no flow correction"
	for w in "$@"; do
		compare "$w" --calibrate calib_loop=$((4 * CALIB_N)) --model "$model" |
			grep -v '^calibration'
	done | suite
done
if [ -n "$values" ]; then
	echo "== default schedule, no flow correction, values and bursts unused (--est measure=0, paths=0)"
	for w in "$@"; do
		compare "$w" --calibrate calib_loop=$((4 * CALIB_N)) --est measure=0 --est paths=0 |
			grep -v '^calibration'
	done | suite
fi
if [ -n "$before" ]; then
	echo "== before: $before's estimator, default schedule, no flow correction"
	for w in "$@"; do
		ACCURACY=$before/tests/bench/calc-accuracy compare "$w" \
			--calibrate calib_loop=$((4 * CALIB_N)) | grep -v '^calibration'
	done | suite
fi
case $values in *--bursts*)
	echo "== matched windows: instructions per sample against the truth (callgrind's; calc-calib's loop: counted)"
	for w in "$@"; do
		compare "$w" --calibrate calib_loop=$((4 * CALIB_N)) --rates --counted calib_loop=$((6 * CALIB_N)) |
			grep '^  rate' | sed "s/^ /$w/"
	done ;;
esac
echo "== default schedule, no flow correction, the epoch's calibration (dcpirun's calib line)"
for w in "$@"; do
	compare "$w"
done | suite
echo "== default schedule, no flow correction, the period x the epoch's cpu MHz (no calibration)"
for w in "$@"; do
	compare "$w" --mhz "$(awk '$1 == "cpu_mhz" { print $2 }' "$w.db/000001/meta")"
done | suite
