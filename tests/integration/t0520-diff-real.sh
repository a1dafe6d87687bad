#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dcpidiff and dcpistats on real profiles (dcpirun): the same workload run
# 5 times against 5 times shows nothing significant; the workload made to
# spend twice as long in one function shows that function (and, by shares,
# the ones whose share it took) and nothing else; two builds of a program,
# and procedures that appear and disappear.
#
# Sample budget: wl-three -n 40000000 runs ~0.3 s of CPU here (how long
# depends on the machine: each run's samples are checked against the CPU
# time it measured); at 5000 samples/s that is ~1500 samples a run (one 1/6,
# two 2/6, three 3/6), and at least 500 wherever the suite runs.  A share's
# binomial standard error is then at most 1.3 points (timer sampling of a
# steady loop varies less than that: ~0.3 points measured), while --slow
# moves two() from 33 to 50% and one() from 17 to 12.5%: 16 and 4 points,
# far outside the noise, so the verdicts are reliable with 5 runs a side.
# Runs of the two sides are interleaved so that a change in the machine's
# load cannot line up with a side.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/programs/fixture-lib.sh"

. "$top_srcdir/tests/workloads/attr.sh"

WL=$top_builddir/tests/workloads/wl-three
require_sampling

RUN="dcpirun -q -d runs.db -F 5000"

# The names of the rows with a significant verdict in a text report, sorted.
changed() {
	awk '/^ *[0-9]/ && / (changed|appeared|disappeared) / { print $(NF-1) }' "$1" |
		sort | tr '\n' ' ' | sed 's/ $//'
}

# ... only those of the workload's image
changed_in() { # REPORT IMAGE-BASENAME
	awk -v b="$2" '/^ *[0-9]/ && / (changed|appeared|disappeared) / {
		n = split($NF, p, "/"); if (p[n] == b) print $(NF-1) }' "$1" |
		sort | tr '\n' ' ' | sed 's/ $//'
}

# every run's samples against the CPU time it measured: at least 0.8 of it
# at the rate, and 500 (enough for the verdicts below)
runs_sampled() {
	local d label n
	for d in runs.db/0*; do
		label=$(sed -n "s/^label //p" $d/meta) &&
		n=$(awk "\$1 == \"event\" && \$2 == \"cycles\" { print \$7 }" $d/meta) &&
		rate_ok "$n" "$(measured $label.out cpu)" 5000 0.8 &&
		test "$n" -ge 500 || return 1
	done
}

test_expect_success 'setup: 5 + 5 runs of wl-three, 5 of wl-three --slow, interleaved' '
	for i in 1 2 3 4 5; do
		$RUN --label a$i -- "$WL" -n 40000000 --cpu >a$i.out &&
		$RUN --label b$i -- "$WL" -n 40000000 --cpu >b$i.out &&
		$RUN --label s$i -- "$WL" -n 40000000 --slow --cpu >s$i.out || exit 1
	done &&
	test "$(ls -d runs.db/0* | wc -l)" = 15 &&
	runs_sampled
'

# Normalised by each run's total: a run on a loaded machine takes longer
# (measured: 2000 samples instead of 1400), its shares do not change.
test_expect_success 'dcpistats: the three functions vary little across the 10 runs' '
	dcpistats -d runs.db -N total a1 a2 a3 a4 a5 b1 b2 b3 b4 b5 >stats-total &&
	for f in one two three; do
		row=$(awk -v f=$f "NF > 2 && \$(NF-1) == f" stats-total) &&
		echo "$row" &&
		range=$(echo "$row" | awk "{ sub(/%/, \"\", \$1); print \$1 }") &&
		awk -v r="$range" "BEGIN { exit !(r < 3) }" || exit 1
	done
'

test_expect_success 'the same workload, 5 runs against 5: nothing significant' '
	dcpidiff -d runs.db a1 a2 a3 a4 a5 -- b1 b2 b3 b4 b5 >out &&
	cat out &&
	test_grep "^Test: Welch" out &&
	test_grep "^0 significant changes" out &&
	dcpidiff -d runs.db -N period a1 a2 a3 a4 a5 -- b1 b2 b3 b4 b5 >out &&
	test_grep "^0 significant changes" out &&
	dcpidiff -d runs.db -i a1 a2 a3 a4 a5 -- b1 b2 b3 b4 b5 >out &&
	test_grep "^0 significant changes" out
'

test_expect_success 'two() twice as long, 5 runs against 5: by shares, the three functions' '
	dcpidiff -d runs.db a1 a2 a3 a4 a5 -- s1 s2 s3 s4 s5 >out &&
	cat out &&
	test "$(changed_in out wl-three)" = "one three two" &&
	awk "NF > 2 && \$(NF-1) == \"two\" && \$7 > 0 { ok = 1 } END { exit !ok }" out &&
	awk "NF > 2 && \$(NF-1) == \"one\" && \$7 < 0 { ok = 1 } END { exit !ok }" out
'

# About twice against three(), which did not change: a run slowed by the
# host (one took 1.9x the CPU for the same work in a CI run) slows all three
# functions alike, and would move two()'s ratio alone out of any tight bound.
test_expect_success '... by CPU time (-N period): two() alone, about twice' '
	dcpidiff -d runs.db -N period a1 a2 a3 a4 a5 -- s1 s2 s3 s4 s5 >out &&
	cat out &&
	test "$(changed_in out wl-three)" = "two" &&
	ratio=$(awk "NF > 2 && \$(NF-1) == \"two\" { sub(/x/, \"\", \$8); print \$8 }" out) &&
	base=$(awk "NF > 2 && \$(NF-1) == \"three\" { sub(/x/, \"\", \$8); print \$8 }" out) &&
	echo "two ${ratio}x, three ${base}x" &&
	awk -v r="$ratio" -v b="$base" "BEGIN { exit !(r / b > 1.8 && r / b < 2.2) }"
'

test_expect_success 'one run against one: the workload unchanged is within noise' '
	dcpidiff -d runs.db a1 b1 >out &&
	test_grep "^Test: counts as Poisson" out &&
	test_grep " three  *[^ ]*wl-three$" out &&
	test -z "$(changed_in out wl-three)" &&
	dcpidiff -d runs.db a2 s2 >out &&
	test "$(changed_in out wl-three)" = "one three two"
'

test_expect_success 'one procedure per instruction: the loop of two() grew' '
	dcpidiff -d runs.db -p two a1 a2 a3 a4 a5 -- s1 s2 s3 s4 s5 >out &&
	test_grep "^Instructions, aligned by address (the same binary in every set):$" out &&
	test -n "$(changed out)" &&
	grep -A2 "as a whole" out | tail -1 | grep " changed  *two " >/dev/null
'

test_expect_success 'two builds at one path: procedures by name, said so' '
	cp "$PROGRAMS/shapes-O2" prog &&
	dcpirun -q -d builds.db -F 5000 -- ./prog loops 200000 >/dev/null &&
	cp "$PROGRAMS/shapes-O2-nopie" prog.new && mv prog.new prog &&
	dcpirun -q -d builds.db -F 5000 -- ./prog loops 200000 >/dev/null &&
	dcpirun -q -d builds.db -F 5000 -- ./prog switch 20000000 >/dev/null &&
	dcpidiff -d builds.db 1 2 >out &&
	cat out &&
	test_grep "^note: .*/prog is not the same binary in every set (build-id " out &&
	grep " nested_loops\*  *$TEST_DIR/prog$" out | grep -q " ~  " &&
	dcpidiff -d builds.db 1 2 nested_loops >out &&
	test_grep "^note: different builds of $TEST_DIR/prog (.*): instructions cannot be aligned, procedure-level only$" out
'

test_expect_success 'a procedure that disappears and one that appears' '
	dcpidiff -d builds.db 2 3 >out &&
	cat out &&
	changed out | grep "nested_loops" >/dev/null &&
	changed out | grep "switch_table" >/dev/null &&
	grep " nested_loops " out | grep " disappeared " >/dev/null &&
	grep " switch_table " out | grep " appeared " >/dev/null
'

test_expect_success 'databases as sets: one run per database' '
	for i in 1 2 3; do
		dcpirun -q -d A$i.db -F 5000 -- "$WL" -n 40000000 >/dev/null &&
		dcpirun -q -d B$i.db -F 5000 -- "$WL" -n 40000000 >/dev/null || exit 1
	done &&
	dcpidiff A1.db A2.db A3.db -- B1.db B2.db B3.db >out &&
	test_grep "^A: 3 sets" out &&
	test_grep " three  *[^ ]*wl-three$" out &&
	test -z "$(changed_in out wl-three)" &&
	dcpistats --json A1.db B1.db | dcpi-disasm-check json
'

test_done
