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
# makes its own), copied for the old build (each build reads the other's
# cache of analyses as stale and writes its own over it), and each build's
# cache filled once.  Then `dcpicalc --summary --image BINARY` runs RUNS
# times (default 3) in each configuration, one run of every configuration
# after another (a machine whose load changes slows them alike): each
# build without the cache and from its cache on one thread; this one cold
# (the cache removed first, which the run stores again) on one and two
# threads, and from the cache on two.  Printed: the median elapsed and CPU seconds (user + system) of
# each, MB of code per CPU second, and whether each printed what the old
# build printed without the cache and what this one did.  Run from this
# build's directory.
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
# the database, and the binary's MB of code (what calc-bench counts)
mb=$("$new/tests/bench/calc-bench" --db "$tmp/db.new" --only cold --threads 1 "$bin" |
	awk 'NR == 2 { print $7 }')
rm -rf "$tmp/db.new/calc"
cp -r "$tmp/db.new" "$tmp/db.old"
"$old/tools/dcpicalc" -d "$tmp/db.old" --summary --image "$bin" >/dev/null 2>&1
"$new/tools/dcpicalc" -d "$tmp/db.new" --summary --image "$bin" >/dev/null 2>&1

# The configurations: name, build (old or new), then dcpicalc's options.
configs=(
	"old, no cache, 1 th|old|--no-cache -j 1"
	"old, cached, 1 th|old|-j 1"
	"new, no cache, 1 th|new|--no-cache -j 1"
	"new, cached, 1 th|new|-j 1"
	"new, cold, 1 th|new|-j 1"
	"new, cold, 2 th|new|-j 2"
	"new, cached, 2 th|new|-j 2"
)

# CONFIG KEY: one run, its times appended to $tmp/times.KEY
run() {
	local name build args db tool
	IFS='|' read -r name build args <<<"$1"
	db=$tmp/db.$build
	tool=$old/tools/dcpicalc
	[ "$build" = new ] && tool=$new/tools/dcpicalc
	case $name in *cold*) rm -rf "$db/calc" ;; esac
	# shellcheck disable=SC2086
	/usr/bin/time -f "%e %U %S" -o "$tmp/t" "$tool" -d "$db" --summary --image "$bin" $args \
		>"$tmp/out.$2" 2>/dev/null
	awk '{ print $1, $2 + $3 }' "$tmp/t" >>"$tmp/times.$2"
}

for r in $(seq 1 "$runs"); do
	for k in "${!configs[@]}"; do
		run "${configs[$k]}" "$k"
	done
done

printf "%s: %s MB of code, dcpicalc --summary --image, median of %s runs\n" "$bin" "$mb" "$runs"
printf "%-22s %8s %8s %8s  %-9s %s\n" "build" "wall s" "cpu s" "MB/cpu-s" "= old" "= new, no cache"
for k in "${!configs[@]}"; do
	IFS='|' read -r name _ _ <<<"${configs[$k]}"
	w=$(sort -n -k1,1 "$tmp/times.$k" | awk -v n="$runs" 'NR == int((n + 1) / 2) { print $1 }')
	c=$(sort -n -k2,2 "$tmp/times.$k" | awk -v n="$runs" 'NR == int((n + 1) / 2) { print $2 }')
	printf "%-22s %8.2f %8.2f %8.2f  %-9s %s\n" "$name" "$w" "$c" "$(echo "$mb / $c" | bc -l)" \
		"$(cmp -s "$tmp/out.0" "$tmp/out.$k" && echo same || echo DIFFERENT)" \
		"$(cmp -s "$tmp/out.2" "$tmp/out.$k" && echo same || echo DIFFERENT)"
done
