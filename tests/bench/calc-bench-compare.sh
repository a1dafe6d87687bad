#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/bench/calc-bench-compare.sh - dcpicalc on every procedure of a
# binary with another build (before a change) and this one, side by side
# in one run:
#
#   calc-bench-compare.sh [-r RUNS] OLD_BUILD [BINARY]
#
# OLD_BUILD is the other build's build directory (its tools/dcpicalc);
# BINARY defaults to the C library.  A database of BINARY with a few samples
# on every instruction is made with this build's calc-bench (as calc-bench
# makes its own), then `dcpicalc --summary --image BINARY` runs RUNS times
# (default 3) in turn: the old build; this one without the cache on one
# thread; cold (the cache removed first) and from the cache, on 1 and 2
# threads.  Printed: the median elapsed and CPU seconds (user + system) of
# each, MB of code per CPU second, and whether each printed what the old
# build printed.  Run from this build's directory.
set -eu

runs=3
while getopts r: opt; do
	case $opt in
	r) runs=$OPTARG ;;
	*) echo "usage: $0 [-r RUNS] OLD_BUILD [BINARY]" >&2; exit 1 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-r RUNS] OLD_BUILD [BINARY]" >&2; exit 1; }
old=$1
bin=${2:-/usr/lib/x86_64-linux-gnu/libc.so.6}
new=$(pwd)
for p in "$old/tools/dcpicalc" "$new/tools/dcpicalc" "$new/tests/bench/calc-bench"; do
	[ -x "$p" ] || { echo "calc-bench-compare.sh: $p not found" >&2; exit 1; }
done
tmp=$(mktemp -d /tmp/calc-bench-compare.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
db=$tmp/db
# the database, and the binary's MB of code (what calc-bench counts)
mb=$("$new/tests/bench/calc-bench" --db "$db" --only cold --threads 1 "$bin" | awk 'NR == 2 { print $7 }')

# NAME DCPICALC ARGS...: RUNS runs; prints "NAME wall cpu MB/cpu-s same"
measure() {
	local name=$1 tool=$2 w c
	shift 2
	: >"$tmp/times"
	for r in $(seq 1 "$runs"); do
		case $name in *cold*) rm -rf "$db/calc" ;; esac
		/usr/bin/time -f "%e %U %S" -o "$tmp/t" "$tool" -d "$db" --summary --image "$bin" "$@" \
			>"$tmp/out.$name" 2>/dev/null
		awk '{ print $1, $2 + $3 }' "$tmp/t" >>"$tmp/times"
	done
	w=$(sort -n -k1,1 "$tmp/times" | awk -v n="$runs" 'NR == int((n + 1) / 2) { print $1 }')
	c=$(sort -n -k2,2 "$tmp/times" | awk -v n="$runs" 'NR == int((n + 1) / 2) { print $2 }')
	printf "%-22s %8.2f %8.2f %8.2f  %s\n" "$name" "$w" "$c" "$(echo "$mb / $c" | bc -l)" \
		"$(cmp -s "$tmp/out.old" "$tmp/out.$name" && echo same || echo DIFFERENT)"
}

printf "%s: %s MB of code, dcpicalc --summary --image, median of %s runs\n" "$bin" "$mb" "$runs"
printf "%-22s %8s %8s %8s  %s\n" "build" "wall s" "cpu s" "MB/cpu-s" "output"
measure old "$old/tools/dcpicalc"
measure "new, no cache, 1 th" "$new/tools/dcpicalc" --no-cache -j 1
measure "new, cold, 1 th" "$new/tools/dcpicalc" -j 1
measure "new, cached, 1 th" "$new/tools/dcpicalc" -j 1
measure "new, cold, 2 th" "$new/tools/dcpicalc" -j 2
measure "new, cached, 2 th" "$new/tools/dcpicalc" -j 2
