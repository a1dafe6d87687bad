#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dcpirun on real workloads: samples land on the right functions in the
# right shares, short-lived processes and shared libraries included, and
# almost nothing is unknown; epochs, labels, exit status, signals.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/workloads/attr.sh"
require_root
require_sampling

W=$top_builddir/tests/workloads
# 4000 samples/s: enough samples in ~1.5 s runs; costs 6-20% (15-50 us a
# sample).  The sample floors come from the CPU time each run measured.
F=4000
RUN="dcpirun -q -d db -F $F"

# Checks that SYMBOL's sampled share of the image is within the tolerance of
# its N samples (share_tol) of the share the workload measured for it (its
# own CPU clock, in out).
share_ok() { # REPORT OUT SYMBOL
	local want got tol
	want=$(measured "$2" "$3") &&
	got=$(attr_share "$1" "$3" @image) &&
	tol=$(share_tol "$(attr_count "$1" @image)") &&
	echo "$3: sampled $got, measured $want (tolerance $tol)" &&
	near "$got" "$want" "$tol"
}

test_expect_success 'three functions: samples follow their measured shares' '
	$RUN --label before -- $W/wl-three --cpu >out &&
	attr_report db before $W/wl-three >rep &&
	cat rep out &&
	rate_ok "$(attr_count rep @image)" "$(measured out cpu)" $F 0.8 &&
	share_ok rep out one &&
	share_ok rep out two &&
	share_ok rep out three
'

test_expect_success 'the slow variant: two() takes half the time, in a new epoch' '
	$RUN --label after -- $W/wl-three --slow --cpu >out &&
	test -d db/000002 && grep -q "^label after" db/000002/meta &&
	attr_report db after $W/wl-three >rep &&
	rate_ok "$(attr_count rep @image)" "$(measured out cpu)" $F 0.8 &&
	share_ok rep out two && share_ok rep out three &&
	near "$(attr_share rep two @image)" 0.5 0.04
'

# Losses are counted (t0240); a collector descheduled for seconds on a
# busy machine may lose some: at most 1% at this rate.
test_expect_success 'the epoch records what was sampled and how' '
	grep "^command\|^cpu_mhz\|^end\|^event\|^counter" db/000002/meta &&
	grep -q "^command .*wl-three --slow" db/000002/meta &&
	grep -q "^cpu_mhz [1-9]" db/000002/meta &&
	grep -q "^end " db/000002/meta &&
	awk "\$1 == \"event\" && \$2 == \"cycles\" { used = \$3; unit = \$5; p = \$4 }
	     END { exit !((used == \"clock\" || used == \"cycles\") && p > 0) }" db/000002/meta &&
	lost=$(meta_counter db 000002 lost) && test -n "$lost" &&
	n=$(awk "\$1 == \"event\" && \$2 == \"cycles\" { print \$7 }" db/000002/meta) &&
	test $((lost * 100)) -le "$n"
'

test_expect_success 'a shared library: its samples go to its own image' '
	cpu_run cpu $RUN -- $W/wl-lib >out &&
	attr_report db latest $W/wl-lib >main &&
	attr_report db latest $W/libwl.so >lib &&
	cat main lib &&
	m=$(attr_count main main_work) l=$(attr_count lib lib_work) &&
	rate_ok $((m + l)) "$(cat cpu)" $F 0.7 &&
	want=$(measured out lib) &&
	near "$(awk -v m=$m -v l=$l "BEGIN { print l / (m + l) }")" "$want" "$(share_tol $((m + l)))" &&
	grep -q "^image [0-9a-f]* file [0-9a-f]* .*/libwl.so$" attr-dump.txt
'

test_expect_success 'threads: every worker thread is attributed' '
	cpu_run cpu $RUN -- $W/wl-threads >out &&
	attr_report db latest $W/wl-threads >rep && cat rep &&
	w=$(attr_count rep worker_loop) all=$(attr_count rep @all) &&
	rate_ok $all "$(cat cpu)" $F 0.7 &&
	test $w -ge $((all * 9 / 10))
'

# Each child measures its time in child_work(), a few ms: its samples there
# must be what that time gives at the rate, less the part of a period each
# child takes with it when it exits (under 5%).  How much of the tree's time
# the kernel spends creating processes depends on the machine: not checked.
test_expect_success 'hundreds of short-lived processes: their samples are not lost' '
	$RUN -- $W/wl-spawn -n 300 >out && cat out &&
	grep -q "300 children, 0 failed" out &&
	attr_report db latest $W/wl-spawn >rep && cat rep &&
	c=$(attr_count rep child_work) all=$(attr_count rep @all) &&
	rate_ok $all "$(measured out cpu)" $F 0.7 &&
	cw=$(measured out child_work_cpu) &&
	rate_ok $c $cw $F 0.85 &&
	awk -v c=$c -v s=$cw -v f=$F "BEGIN { exit !(c <= 1.1 * s * f) }" &&
	test "$(attr_count rep @unknown)" -le $((all / 1000))
'

# The loops take nearly all of their program's time, but how much the set-up
# and the exit take depends on the machine (wl-chase builds and frees a
# 32 MiB permutation): each workload measures its loop's CPU time, and the
# loop's samples must be what that time gives at the rate, like the
# children of wl-spawn (0.96 measured).
for w in "wl-copy copy_loop" "wl-chase chase" "wl-branchy branchy"; do
	set -- $w
	test_expect_success "$1: the loop $2 gets the samples its CPU time gives" "
		cpu_run cpu \$RUN -- \$W/$1 >out &&
		attr_report db latest \$W/$1 >rep && cat rep out &&
		all=\$(attr_count rep @all) c=\$(attr_count rep $2) &&
		rate_ok \$all \$(cat cpu) \$F 0.7 &&
		awk -v s=\$(measured out $2) 'BEGIN { exit !(s >= 0.5) }' &&
		cpu=\$(measured out ${2}_cpu) &&
		rate_ok \$c \$cpu \$F 0.85 &&
		awk -v c=\$c -v s=\$cpu -v f=\$F 'BEGIN { exit !(c <= 1.1 * s * f) }'
	"
done

# The map file is the workload's, in /tmp: removed whatever the outcome.
test_expect_success 'JIT code: an anon image, with the process'"'"'s perf map' '
	cpu_run cpu $RUN -- $W/wl-jit >out && map=$(cat out) &&
	pid=${map#/tmp/perf-} && pid=${pid%.map} &&
	{
		dcpi-test-helper dump db latest >jit &&
		grep "^image anon-$pid anon - \[anon:$pid\] wl-jit$" jit &&
		n=$(awk -v k=anon-$pid "\$1 == \"sample\" && \$2 == k { s += \$6 } END { print s + 0 }" jit) &&
		all=$(awk "\$1 == \"sample\" && \$4 == 0 { s += \$6 } END { print s }" jit) &&
		echo "$n of $all in the JIT code" && rate_ok $all "$(cat cpu)" $F 0.7 &&
		test $n -ge $((all * 9 / 10)) &&
		dcpi-test-helper symfile db latest perf-$pid.map >map-copy && cmp $map map-copy &&
		start=$(awk "{ print \$1 }" $map) &&
		awk -v k=anon-$pid -v p="0x${start%???}" "\$1 == \"sample\" && \$2 == k &&
			substr(\$5, 1, length(p)) != p { print \"offset \" \$5 \" is not in the code\"; bad = 1 }
			END { exit bad }" jit
	}
	rc=$?; rm -f $map; test $rc = 0
'

# Seed 001 reports 0.05% unknown samples over a week; over every run above
# (tens of thousands of samples: at least 2000, so that 0.05% is a sample).
test_expect_success 'unknown samples are under 0.05% of all' '
	dcpi-test-helper check db >profiles &&
	awk "{ all += \$6 } \$2 == \"unknown\" { unk += \$6 }
	     END { printf \"%d of %d unknown\n\", unk, all; exit !(all >= 2000 && unk * 2000 < all) }" profiles
'

test_expect_success '--append adds to the latest epoch' '
	n=$(ls -d db/0* | wc -l) &&
	before=$(awk "\$2 == \"cycles\" && \$1 == \"event\" { print \$7 }" db/$(printf %06d $n)/meta) &&
	$RUN --append -- $W/wl-three -n 20000000 >/dev/null &&
	test $(ls -d db/0* | wc -l) = $n &&
	after=$(awk "\$2 == \"cycles\" && \$1 == \"event\" { print \$7 }" db/$(printf %06d $n)/meta) &&
	test $after -gt $before
'

# Every sampled kernel address must get the same symbol from the epoch's
# kallsyms subset as from the whole /proc/kallsyms, also when several runs
# add to the epoch (each rewrites the subset).  The load: a syscall a byte, in
# one process (thousands of processes take minutes where forks are slow).  Addresses are 16 hex digits:
# compared as strings, in sort order.
kernel_names_ok() { # DB EPOCH-DIR
	{
		awk '$2 ~ /^[tTwW]$/ { print $1, 0, "full" }' /proc/kallsyms
		dcpi-test-helper symfile "$1" "${2#00000}" kallsyms | awk '{ print $1, 0, "sub" }'
		dcpi-test-helper dump "$1" "${2#00000}" |
			awk '$1 == "sample" && $2 == "kernel" { print substr($5, 3), 1, "x" }'
	} | sort | awk '$3 == "full" { f = $1 } $3 == "sub" { s = $1 }
		$3 == "x" { n++; if (f != s) { print "0x" $1 ": " f " in kallsyms, " s " in the subset"; bad++ } }
		END { print n " kernel addresses"; exit bad || !n }'
}

test_expect_success 'kernel samples keep their symbols across --append runs' '
	kload="dd if=/dev/zero of=/dev/null bs=1 count=100000"
	dcpirun -q -d kdb -F 4000 -- $kload 2>/dev/null &&
	dcpirun -q -d kdb -F 4000 --append -- $kload 2>/dev/null &&
	dcpirun -q -d kdb -F 4000 --append -- $kload 2>/dev/null &&
	kernel_names_ok kdb 000001
'

test_expect_success 'binaries are snapshotted by build-id (and not with --no-snapshot)' '
	dcpi-test-helper dump db before >before.txt &&
	id=$(awk -v p="$(readlink -f $W/wl-three)" "\$1 == \"image\" && \$5 == p { print \$4; exit }" before.txt) &&
	test -n "$id" && cmp db/binaries/$id $W/wl-three &&
	dcpirun -q -d db2 --no-snapshot -- $W/wl-three -n 1000000 >/dev/null &&
	! test -d db2/binaries
'

test_expect_success 'the exit status is the command'"'"'s' '
	dcpirun -q -d db -- sh -c "exit 3"; test $? = 3 &&
	dcpirun -q -d db -- sh -c "kill -KILL \$\$"; test $? = 137 &&
	dcpirun -q -d db -- true
'

test_expect_success 'signals sent to dcpirun reach the command' '
	dcpirun -q -d db -- sh -c "trap \"exit 42\" TERM; touch ready; while :; do sleep 0.05; done" &
	pid=$! &&
	wait_for 30 "the command to set its trap" "test -e ready" &&
	kill -TERM $pid && wait_exit $pid && wait $pid; test $? = 42
'

# Only the summary: the default events (cycles, instructions, imiss) take
# what the machine has without a word (every run used to warn about imiss in a VM).
test_expect_success 'a one-line summary on stderr, and nothing else' '
	dcpirun -d db -F 1000 -- $W/wl-three -n 20000000 >/dev/null 2>err &&
	cat err &&
	grep -E "^dcpirun: [0-9]+ samples \(cycles(=clock)?(,[a-z]+)*\), [0-9]+ lost, [0-9]+ throttled, [0-9]+ unknown \([0-9.]+%\).*; epoch [0-9]+ of db" err &&
	test "$(wc -l <err)" = 1
'

if why=$(dcpi-can-sample --counter imiss); then
	test_skip 'an event asked for with -e that the machine lacks: a warning' \
		"this machine counts instruction-cache misses"
else
	test_expect_success 'an event asked for with -e that the machine lacks: a warning' '
		echo "$why" &&
		dcpirun -d db -F 1000 -e cycles,imiss -- $W/wl-three -n 20000000 >/dev/null 2>err &&
		cat err &&
		test_grep "warning: event .imiss. is not available: .*; skipping it" err &&
		test "$(grep -c "^dcpirun: [0-9]* samples" err)" = 1
	'
fi

# Where a PMU counts retired instructions the default samples them beside
# cycles, at a fixed period (their samples count executions: the analysis'
# "Retired-instruction samples"); without one, only the clock.
if why=$(dcpi-can-sample --counter instructions); then
	test_expect_success 'a PMU: the default samples instructions beside cycles' '
		rm -rf dbi && dcpirun -q -d dbi -F 1000 -- $W/wl-three -n 20000000 >/dev/null &&
		cat dbi/000001/meta &&
		grep -E "^event cycles cycles [0-9]+ events " dbi/000001/meta &&
		awk "\$1 == \"event\" && \$2 == \"instructions\" && \$3 == \"instructions\" &&
		     \$4 > 0 && \$5 == \"events\" && \$7 > 0 { ok = 1 } END { exit !ok }" dbi/000001/meta
	'
	test_skip 'no PMU: the default samples only the clock' "this machine counts instructions"
else
	test_skip 'a PMU: the default samples instructions beside cycles' "$why"
	test_expect_success 'no PMU: the default samples only the clock' '
		rm -rf dbi && dcpirun -q -d dbi -F 1000 -- $W/wl-three -n 20000000 >/dev/null &&
		cat dbi/000001/meta &&
		grep "^event cycles clock " dbi/000001/meta &&
		! grep -E "^event (instructions|imiss) " dbi/000001/meta
	'
fi

test_done
