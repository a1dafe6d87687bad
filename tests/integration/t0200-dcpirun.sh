#!/bin/bash
# dcpirun on real workloads: samples land on the right functions in the
# right shares, short-lived processes and shared libraries included, and
# almost nothing is unknown; epochs, labels, exit status, signals.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/workloads/attr.sh"
require_root
collect_require_sampling

W=$top_builddir/tests/workloads
# 4000 samples/s: enough samples in ~1.5 s runs; costs ~6% here.
RUN="dcpirun -q -d db -F 4000"

# Checks that SYMBOL's sampled share of the image is within TOL of the
# share the workload measured for it (its own CPU clock, in out).
share_ok() { # REPORT OUT SYMBOL TOL
	local want got
	want=$(awk -v s="$3" '$1 == s { print $2 }' "$2")
	got=$(attr_share "$1" "$3" @image)
	echo "$3: sampled $got, measured $want"
	near "$got" "$want" "$4"
}

# Tolerance: with N >= 4000 samples a share's standard error is at most
# sqrt(.25/N) = 0.8 points; 3 points is 4 sigma, plus a few samples that
# skid across function boundaries.
test_expect_success 'three functions: samples follow their measured shares' '
	$RUN --label before -- $W/wl-three >out &&
	attr_report db before $W/wl-three >rep &&
	cat rep &&
	test "$(attr_count rep @image)" -ge 3000 &&
	share_ok rep out one 0.03 &&
	share_ok rep out two 0.03 &&
	share_ok rep out three 0.03
'

test_expect_success 'the slow variant: two() takes half the time, in a new epoch' '
	$RUN --label after -- $W/wl-three --slow >out &&
	test -d db/000002 && grep -q "^label after" db/000002/meta &&
	attr_report db after $W/wl-three >rep &&
	share_ok rep out two 0.03 && share_ok rep out three 0.03 &&
	near "$(attr_share rep two @image)" 0.5 0.04
'

test_expect_success 'the epoch records what was sampled and how' '
	grep -q "^command .*wl-three --slow" db/000002/meta &&
	grep -q "^cpu_mhz [1-9]" db/000002/meta &&
	grep -q "^end " db/000002/meta &&
	awk "\$1 == \"event\" && \$2 == \"cycles\" { used = \$3; unit = \$5; p = \$4 }
	     END { exit !((used == \"clock\" || used == \"cycles\") && p > 0) }" db/000002/meta &&
	test "$(meta_counter db 000002 lost)" = 0
'

test_expect_success 'a shared library: its samples go to its own image' '
	$RUN -- $W/wl-lib >out &&
	attr_report db latest $W/wl-lib >main &&
	attr_report db latest $W/libwl.so >lib &&
	cat main lib &&
	m=$(attr_count main main_work) l=$(attr_count lib lib_work) &&
	want=$(awk "\$1 == \"lib\" { print \$2 }" out) &&
	near "$(awk -v m=$m -v l=$l "BEGIN { print l / (m + l) }")" "$want" 0.03 &&
	grep -q "^image [0-9a-f]* file [0-9a-f]* .*/libwl.so$" attr-dump.txt
'

test_expect_success 'threads: every worker thread is attributed' '
	$RUN -- $W/wl-threads >out &&
	attr_report db latest $W/wl-threads >rep && cat rep &&
	w=$(attr_count rep worker_loop) all=$(attr_count rep @all) &&
	test $w -ge $((all * 9 / 10))
'

test_expect_success 'hundreds of short-lived processes: their samples are not lost' '
	$RUN -- $W/wl-spawn -n 300 >out &&
	grep -q "300 children, 0 failed" out &&
	attr_report db latest $W/wl-spawn >rep && cat rep &&
	c=$(attr_count rep child_work) all=$(attr_count rep @all) &&
	test $c -ge $((all * 6 / 10)) &&
	test "$(attr_count rep @unknown)" -le $((all / 1000))
'

for w in "wl-copy copy_loop" "wl-chase chase" "wl-branchy branchy"; do
	set -- $w
	test_expect_success "$1: the loop $2 gets nearly all samples" "
		$RUN -- $W/$1 >out &&
		attr_report db latest $W/$1 >rep && cat rep &&
		test \$(attr_count rep $2) -ge \$((\$(attr_count rep @all) * 85 / 100))
	"
done

# The map file is the workload's, in /tmp: removed whatever the outcome.
test_expect_success 'JIT code: an anon image, with the process'"'"'s perf map' '
	$RUN -- $W/wl-jit >out && map=$(cat out) &&
	pid=${map#/tmp/perf-} && pid=${pid%.map} &&
	{
		dcpi-test-helper dump db latest >jit &&
		grep "^image anon-$pid anon - \[anon:$pid\] wl-jit$" jit &&
		n=$(awk -v k=anon-$pid "\$1 == \"sample\" && \$2 == k { s += \$6 } END { print s + 0 }" jit) &&
		all=$(awk "\$1 == \"sample\" && \$4 == 0 { s += \$6 } END { print s }" jit) &&
		echo "$n of $all in the JIT code" && test $n -ge $((all * 9 / 10)) &&
		e=$(ls -d db/0* | tail -n 1) && cmp $map $e/perf-$pid.map &&
		start=$(awk "{ print \$1 }" $map) &&
		awk -v k=anon-$pid -v p="0x${start%???}" "\$1 == \"sample\" && \$2 == k &&
			substr(\$5, 1, length(p)) != p { print \"offset \" \$5 \" is not in the code\"; bad = 1 }
			END { exit bad }" jit
	}
	rc=$?; rm -f $map; test $rc = 0
'

# Seed 001 reports 0.05% unknown samples over a week; over every run above.
test_expect_success 'unknown samples are under 0.05% of all' '
	dcpi-test-helper check db >profiles &&
	awk "{ all += \$6 } \$2 == \"unknown\" { unk += \$6 }
	     END { printf \"%d of %d unknown\n\", unk, all; exit !(all > 30000 && unk * 2000 < all) }" profiles
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
# add to the epoch (each rewrites the subset).  Addresses are 16 hex digits:
# compared as strings, in sort order.
kernel_names_ok() { # DB EPOCH-DIR
	{
		awk '$2 ~ /^[tTwW]$/ { print $1, 0, "full" }' /proc/kallsyms
		awk '{ print $1, 0, "sub" }' "$1/$2/kallsyms"
		dcpi-test-helper dump "$1" "${2#00000}" |
			awk '$1 == "sample" && $2 == "kernel" { print substr($5, 3), 1, "x" }'
	} | sort | awk '$3 == "full" { f = $1 } $3 == "sub" { s = $1 }
		$3 == "x" { n++; if (f != s) { print "0x" $1 ": " f " in kallsyms, " s " in the subset"; bad++ } }
		END { print n " kernel addresses"; exit bad || !n }'
}

test_expect_success 'kernel samples keep their symbols across --append runs' '
	kload="for i in \$(seq 3000); do cat /proc/self/stat; done"
	dcpirun -q -d kdb -F 4000 -- sh -c "$kload" >/dev/null &&
	dcpirun -q -d kdb -F 4000 --append -- sh -c "$kload" >/dev/null &&
	dcpirun -q -d kdb -F 4000 --append -- sh -c "$kload" >/dev/null &&
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
	dcpirun -q -d db -- sh -c "trap \"exit 42\" TERM; while :; do sleep 0.05; done" &
	pid=$! && sleep 1 && kill -TERM $pid && wait $pid; test $? = 42
'

test_expect_success 'a one-line summary on stderr' '
	dcpirun -d db -F 1000 -- $W/wl-three -n 20000000 >/dev/null 2>err &&
	grep -E "^dcpirun: [0-9]+ samples \(cycles(=clock)?\), 0 lost, [0-9]+ throttled, [0-9]+ unknown \([0-9.]+%\).*; epoch [0-9]+ of db" err
'

test_done
