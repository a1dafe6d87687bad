#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# windows-bench - instructions per sample period, as the windows of emulated
# bursts measure them, against callgrind's count (docs/collect.md,
# "Windows").
#
#   windows-bench.sh [-F HZ] [-b PCT] [-r RUNS] [WORKLOAD...]
#
# Run from the build directory as root (make bench-bursts does); needs
# valgrind.  Workloads: three (wl-three: compute), chase (wl-chase: a
# memory-bound pointer chase through 32 MiB), chase2m (the same through 2
# MiB), calib (calc-calib: a counted loop), and gzip, bzip2, bunzip2 (bzip2
# -d), xz.  For each, RUNS runs of dcpirun -F HZ --bursts=PCT into one
# epoch (--append) and one run under callgrind, then for each procedure
# with samples:
#  - the truth: callgrind's instructions in it, times RUNS, over its samples;
#  - the windows: the mean of the instructions between B1 and B2 of the
#    matched windows kept whose B1 and B2 are both in it (the path
#    profile's sample of them), and how many;
# and for every workload the share of the samples in procedures where some
# matched window ran (a block of theirs with executions between B1 and B2).
set -u
top_builddir=${top_builddir:-$PWD}
W=$top_builddir/tests/workloads
PATH=$top_builddir/collect:$top_builddir/tools:$top_builddir/tests/helper:$top_builddir/tests/bench:$PATH
HZ=1000 PCT=10 RUNS=3
while [ $# -gt 0 ]; do
	case $1 in
	-F) HZ=$2; shift ;;
	-b) PCT=$2; shift ;;
	-r) RUNS=$2; shift ;;
	-*) echo "usage: windows-bench.sh [-F HZ] [-b PCT] [-r RUNS] [WORKLOAD...]" >&2; exit 1 ;;
	*) break ;;
	esac
	shift
done
[ $# -gt 0 ] || set -- three chase calib gzip bzip2 xz
for t in dcpirun dcpiprof dcpi-test-helper valgrind callgrind_annotate calc-calib python3; do
	command -v $t >/dev/null || { echo "windows-bench: $t not found (build first)" >&2; exit 1; }
done
T=$(mktemp -d /tmp/windows-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
cat /usr/lib/x86_64-linux-gnu/*.so* 2>/dev/null | head -c 6000000 >"$T/bin.dat"
bzip2 -c "$T/bin.dat" >"$T/bin.bz2"

workload() {
	case $1 in
	three) echo "$W/wl-three -n 60000000" ;;
	chase) echo "$W/wl-chase -n 6000000" ;;
	chase2m) echo "$W/wl-chase --small -n 60000000" ;;
	calib) echo "$(command -v calc-calib) 600000000" ;;
	gzip) echo "gzip -9 -c $T/bin.dat" ;;
	bzip2) echo "bzip2 -c $T/bin.dat" ;;
	bunzip2) echo "bzip2 -d -c $T/bin.bz2" ;;
	xz) echo "xz -3 -c $T/bin.dat" ;;
	*) return 1 ;;
	esac
}

echo "windows-bench: $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), $HZ Hz, budget $PCT%, $RUNS runs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for w in "$@"; do
	cmd=$(workload "$w") || { echo "windows-bench: unknown workload $w" >&2; exit 1; }
	rm -rf "$T/db" "$T/cg.out"
	for r in $(seq "$RUNS"); do
		# shellcheck disable=SC2086
		dcpirun -d "$T/db" -F "$HZ" --bursts="$PCT" --no-snapshot $([ "$r" -gt 1 ] && echo --append) \
			-- $cmd >/dev/null 2>"$T/err.$r" || { echo "windows-bench: dcpirun failed" >&2; cat "$T/err.$r" >&2; exit 1; }
	done
	# shellcheck disable=SC2086
	valgrind --tool=callgrind --callgrind-out-file="$T/cg.out" $cmd >/dev/null 2>&1
	callgrind_annotate --threshold=100 "$T/cg.out" 2>/dev/null >"$T/cg.txt"
	dcpiprof -d "$T/db" --json >"$T/prof.json" 2>/dev/null
	dcpi-test-helper paths "$T/db" >"$T/paths.txt"
	echo
	echo "== $w: $(echo "$cmd" | sed "s|$T/||g; s|$W/||; s|$top_builddir/tests/bench/||"), $(grep -h "windows from" "$T"/err.* | sed 's/.*; \([0-9]* windows from [0-9]* trails\).*/\1/' | paste -sd+), stops p99: $(grep -h "stops, p99" "$T"/err.* | sed 's/.* stops, p99 \([0-9]*\) us.*/\1/' | paste -sd/) us"
	python3 - "$RUNS" "$T/cg.txt" "$T/prof.json" "$T/paths.txt" <<-\EOF
	import json, re, sys
	runs = int(sys.argv[1])
	# callgrind_annotate: "N (pct%)  FILE:FUNCTION [OBJECT]" lines
	ir = {}
	for l in open(sys.argv[2]):
	    m = re.match(r"\s*([\d,]+)\s+(?:\([\d.]+%\)\s+)?\S*:(\S+)", l)
	    if m:
	        ir[m.group(2)] = ir.get(m.group(2), 0) + int(m.group(1).replace(",", ""))
	rows = json.load(open(sys.argv[3]))["rows"]
	paths = {}
	cur = None
	for l in open(sys.argv[4]):
	    f = l.split()
	    if f[0] == "paths":
	        cur = paths.setdefault(f[2], {"blocks": [], "win": []})
	    elif cur is not None and f[0] == "block" and int(f[5]) > 0:
	        cur["blocks"].append(int(f[1], 16))
	    elif cur is not None and f[0] == "window" and f[2] != "elsewhere":
	        cur["win"].append((int(f[1], 16), int(f[2], 16), int(f[3])))
	# procedures: [start, the next sampled one's start) in each image
	starts = {}
	for r in rows:
	    starts.setdefault(r["image"], []).append(int(r["start"], 16))
	for v in starts.values():
	    v.sort()
	def end_of(img, s):
	    v = starts[img]
	    i = v.index(s)
	    return v[i + 1] if i + 1 < len(v) else s + (1 << 20)
	total = sum(r["samples"].get("cycles", 0) for r in rows)
	covered = 0
	print("%-34s %8s %14s %14s %7s %8s" % ("procedure", "samples", "truth/sample", "windows", "ratio", "windows"))
	for r in sorted(rows, key=lambda r: -r["samples"].get("cycles", 0))[:8]:
	    n = r["samples"].get("cycles", 0)
	    s = int(r["start"], 16)
	    e = end_of(r["image"], s)
	    p = paths.get(r["image"], {"blocks": [], "win": []})
	    if any(s <= b < e for b in p["blocks"]):
	        covered += n
	    ws = [i for b1, b2, i in p["win"] if s <= b1 < e and s <= b2 < e]
	    name = r["procedure"].split("+")[0]
	    truth = ir.get(name, 0) * runs / n if n and name in ir else 0
	    mean = sum(ws) / len(ws) if ws else 0
	    print("%-34s %8d %14.0f %14.0f %7s %8d" % (r["procedure"][:34], n, truth, mean,
	          "%.3f" % (mean / truth) if truth and mean else "-", len(ws)))
	# the rest of the rows, for the share
	for r in sorted(rows, key=lambda r: -r["samples"].get("cycles", 0))[8:]:
	    s = int(r["start"], 16)
	    p = paths.get(r["image"], {"blocks": []})
	    if any(s <= b < end_of(r["image"], s) for b in p["blocks"]):
	        covered += r["samples"].get("cycles", 0)
	print("samples in procedures where a matched window ran: %.1f%% of %d" % (100.0 * covered / max(total, 1), total))
	EOF
done
