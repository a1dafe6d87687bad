#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dcpiwatch on real programs: exact call counts (one thread, several, a
# watched tree that starts threads), 0 for a function never called,
# recursion, longjmp and C++ exceptions through watched functions, the
# time of a 200 us function against the program's own measure, --between,
# --trace, -p, -a, a stripped binary, the database and --report, and the
# messages for what cannot be done.
. "$top_srcdir/tests/lib.sh"
require_root
[ -e /sys/bus/event_source/devices/uprobe ] || skip_all "this kernel has no uprobes"
command -v python3 >/dev/null || skip_all "needs python3"

W=$top_builddir/tests/workloads/wl-watch

# Prints FIELD of FUNCTION in a --json report.
jget() { # FILE FUNCTION FIELD[.SUB]
	python3 - "$@" <<-'EOF'
	import json, sys
	doc = json.load(open(sys.argv[1]))
	for f in doc["functions"]:
	    if f["function"] == sys.argv[2]:
	        v = f
	        for k in sys.argv[3].split("."):
	            v = v[k]
	        print(v)
	        break
	else:
	    sys.exit("no function " + sys.argv[2])
	EOF
}

# True if A is within FRAC (relative) of B.
within() { # A B FRAC
	awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= f * b) }'
}

test_expect_success 'exact counts: 12,345 calls, and 0 for a function never called' '
	dcpiwatch --json -f counted -f never -- $W count 12345 >out &&
	test "$(jget out counted calls)" = 12345 &&
	test "$(jget out counted timed)" = 12345 &&
	test "$(jget out counted open)" = 0 &&
	test "$(jget out never calls)" = 0
'

test_expect_success 'exact counts in four threads, with a row per thread' '
	dcpiwatch --json -f counted -- $W threads 4 3000 >out &&
	test "$(jget out counted calls)" = 12000 &&
	python3 -c "
import json; f = json.load(open(\"out\"))[\"functions\"][0]
assert len(f[\"threads\"]) == 4, f[\"threads\"]
assert all(t[\"calls\"] == 3000 and t[\"comm\"] == \"wl-watch\" for t in f[\"threads\"])
assert len(set(t[\"tid\"] for t in f[\"threads\"])) == 4
"
'

test_expect_success 'a process tree: a shell starts the program, threads and all' '
	dcpiwatch --json -f counted@$W -- sh -c "$W threads 2 1000 && $W count 345" >out &&
	test "$(jget out counted calls)" = 2345
'

# Once in a CI run (of many runs of this test) rec's probe never fired: 0
# calls, 0 open.  The likeliest cause: a probe made before the command's
# exec was first placed at the exec, where the kernel reads the probed
# instruction from the file and ignores a failure (uprobe_mmap); dcpiwatch
# now has the held child map the images first, so that the probe is placed
# when it is opened, where a failure is an error.  Not reproduced in 500
# runs, so that case alone is still run again, twice at most, and said; any
# other count fails at once.
test_expect_success 'recursion: every level is a call' '
	for attempt in 1 2 3; do
		dcpiwatch --json -f rec -- $W recurse 10 5 >out || return 1
		c=$(jget out rec calls) && t=$(jget out rec timed) || return 1
		[ "$c" = 60 ] && [ "$t" = 60 ] && return 0
		echo "attempt $attempt: $c calls, $t timed (want 60 and 60)" && cat out
		[ "$c" = 0 ] || return 1
	done
	return 1
'

test_expect_success 'a call still running when the program exits: open, not lost' '
	dcpiwatch --json -f quitter -f counted -- $W exit >out &&
	test "$(jget out quitter calls)" = 1 &&
	test "$(jget out quitter open)" = 1 &&
	test "$(jget out quitter timed)" = 0 &&
	test "$(jget out counted timed)" = 1
'

test_expect_success 'one row per process of a tree (-P)' '
	dcpiwatch -P --no-histogram -f counted@$W -- sh -c "$W count 3 && $W count 4" >out &&
	cat out &&
	test "$(grep -c "wl-watch" out)" = 2 &&
	grep -q "^counted  *7 " out
'

test_expect_success 'longjmp out of two watched functions: counted as unwound, not lost' '
	dcpiwatch --json -f jumper -f deep -- $W longjmp 50 >out &&
	test "$(jget out jumper calls)" = 100 &&
	test "$(jget out jumper unwound)" = 50 &&
	test "$(jget out jumper timed)" = 50 &&
	test "$(jget out deep unwound)" = 50 &&
	test "$(jget out deep timed)" = 50
'

if command -v g++ >/dev/null; then
	test_expect_success 'the C++ workload builds' '
		g++ -O2 -g -o "$TEST_DIR/exc" "$top_srcdir/tests/workloads/wl-watch-exc.cc"
	'
	test_expect_success 'C++ exceptions through watched functions: the program runs on' '
		dcpiwatch -v --json -f mid -f thrower -- ./exc 30 >out 2>err &&
		test_grep "caught 10" out && test_grep "returned 20" out &&
		test_grep "returns by exit probes" err &&
		sed -n "/^{/,\$p" out >json &&
		test "$(jget json "mid(long)" calls)" = 30 &&
		test "$(jget json "mid(long)" unwound)" = 10 &&
		test "$(jget json "thrower(long)" unwound)" = 10 &&
		test "$(jget json "thrower(long)" timed)" = 20
	'
else
	test_skip 'C++ exceptions through watched functions' 'no C++ compiler'
fi

# busy() measures itself from its first line to its last: what dcpiwatch
# should report once the probes' own cost is taken off.  Its on-CPU time
# must be within 5% of busy's own measure.  Its wall time too on a quiet
# machine; on a loaded one, a preemption inside a probe's window (between
# the entry probe and busy's first line) adds to dcpiwatch's wall time and
# not to busy's, so the tolerance grows by the share of busy's wall time the
# machine spent elsewhere, as busy itself measured it (wall over CPU time).
# The cost of a trap varies from the calibration to the run: one more try.
timed_ok() {
	dcpiwatch --json -f busy -- $W timed 200 200 >out &&
	sed -n "/^{/,\$p" out >json &&
	self=$(awk "\$1 == \"self_mean_ns\" { print \$2 }" out) &&
	cpu=$(awk "\$1 == \"self_cpu_ns\" { print \$2 }" out) &&
	wall=$(jget json busy wall_ns.mean) && oncpu=$(jget json busy cpu_ns.mean) &&
	tol=$(awk -v w="$self" -v c="$cpu" "BEGIN { print 0.05 + (w > c ? w / c - 1 : 0) }") &&
	echo "wall $wall self $self (tolerance $tol), on-cpu $oncpu self $cpu" &&
	test "$(jget json busy calls)" = 200 &&
	within "$oncpu" "$cpu" 0.05 && within "$wall" "$self" "$tol" &&
	within "$cpu" 200000 0.5
}

test_expect_success 'a 200 us function: mean on-CPU time within 5%, wall time too unless preempted' '
	timed_ok || timed_ok
'

test_expect_success '--between A B, events per call, --trace in time order' '
	dcpiwatch --json -e page-faults,cs --trace tr --between push pop -- $W queue 100 >out &&
	sed -n "/^{/,\$p" out >json &&
	echo "calls $(jget json push..pop calls), timed $(jget json push..pop timed)" &&
	test "$(jget json push..pop calls)" = 100 &&
	test "$(jget json push..pop timed)" = 100 &&
	jget json push..pop events.page-faults.mean >/dev/null &&
	jget json push..pop events.context-switches.max >/dev/null &&
	echo "trace: $(grep -c " from push..pop\$" tr) from, $(grep -c " to push..pop " tr) to" &&
	test "$(grep -c " from push..pop\$" tr)" = 100 &&
	test "$(grep -c " to push..pop " tr)" = 100 &&
	{ awk "!/^#/ { if (\$1 < last) exit 1; last = \$1 }" tr || { echo "trace not in time order"; head -n 20 tr; false; }; } &&
	{ awk "/ to / && \$7 < 40000 { exit 1 }" tr || { echo "a push..pop under 40 us:"; grep " to " tr | head -n 20; false; }; }
'

test_expect_success '-p: a running process, until it exits' '
	$W wait 3 >wout &
	pid=$! &&
	wait_for 30 "the workload to say ready" "grep -q ready wout" &&
	dcpiwatch --json -p $pid -f counted >out &&
	wait $pid &&
	n=$(jget out counted calls) && echo "calls $n" &&
	test "$n" -gt 100 && test "$n" -le 3000
'

test_expect_success '-a: every process running the code' '
	dcpiwatch --json -a -f counted@$W -- $W count 777 >out &&
	test "$(jget out counted calls)" = 777
'

test_expect_success 'a stripped binary: by address, and by its unwind-table name' '
	cp $W wl-stripped && strip wl-stripped &&
	addr=$(nm $W | awk "\$3 == \"counted\" { print \$1 }") &&
	name="wl-stripped+0x${addr#"${addr%%[!0]*}"}" &&
	dcpiwatch --json -f 0x$addr -- ./wl-stripped count 321 >out &&
	n=$(jget out "$name" calls) && echo "by address: $n calls" &&
	{ test "$n" = 321 || { cat out; false; }; } &&
	dcpiwatch --json -f "$name" -- ./wl-stripped count 123 >out &&
	n=$(jget out "$name" calls) && echo "by name: $n calls" &&
	{ test "$n" = 123 || { cat out; false; }; }
'

test_expect_success 'results go into the epoch, merged run after run; --report shows them' '
	dcpiwatch -d db -f counted -- $W count 1000 >/dev/null &&
	dcpiwatch -d db -f counted -- $W count 234 >/dev/null &&
	test -f db/000001/watch &&
	dcpiwatch -d db --report --json >out &&
	test "$(jget out counted calls)" = 1234 &&
	dcpiwatch -d db --label second -f never -- $W count 1 >/dev/null &&
	dcpiwatch -d db --report -E second --json >out &&
	test "$(jget out never calls)" = 0 &&
	test_must_fail dcpiwatch -d db --report -E 1 --json -f x 2>err
'

test_expect_success 'dcpi-tui: the stopwatch view (W) of the epoch' '
	printf ":view-stopwatch\n:save-view sw.view\n:goto counted\n:save-display sw.screen\n:quit\n" >sw.script &&
	env -i PATH="$PATH" HOME="$PWD" TERM=xterm-256color LINES=30 COLUMNS=120 TZ=UTC LC_ALL=C.UTF-8 \
		dcpi-tui --script sw.script -E 1 db >tui.out 2>tui.err &&
	test ! -s tui.err &&
	test_grep "^title: stopwatch of epoch 1: 1 function" sw.view &&
	grep "^> counted  *1234  *0  *0 " sw.view &&
	test_grep "wall time  *calls" sw.view &&
	test_grep "stopwatch of epoch 1" sw.screen
'

test_expect_success 'a damaged results file: named, and set aside on the next run' '
	printf "garbage" | dd of=db/000002/watch bs=1 seek=40 conv=notrunc 2>/dev/null &&
	{ dcpiwatch -d db --report -E second >out 2>err; rc=$?; } &&
	echo "status $rc (2: a report from partial data)" && test $rc = 2 &&
	test_grep "watch" err &&
	test_grep "^Incomplete: " out &&
	dcpiwatch -d db -f counted -- $W count 5 >/dev/null 2>err &&
	test -f db/000002/watch.corrupt &&
	dcpiwatch -d db --report -E second --json >out &&
	test "$(jget out counted calls)" = 5
'

test_expect_success 'what cannot be: clear messages, exit 1' '
	test_must_fail dcpiwatch -f nosuchfunction -- $W count 1 2>err &&
	test_grep "no function .nosuchfunction." err &&
	test_must_fail dcpiwatch -f counted@nosuchlib -- $W count 1 2>err &&
	test_grep "no image .nosuchlib." err &&
	test_must_fail dcpiwatch -f counted -p 999999999 2>err &&
	test_must_fail dcpiwatch -f vfs_read@kernel -a --duration 1 2>err &&
	test_grep "kprobes" err &&
	test_must_fail dcpiwatch -- $W count 1 2>err &&
	test_grep "nothing to watch" err
'

if command -v setpriv >/dev/null; then
	test_expect_success 'permissions as perf: a user without CAP_PERFMON is told why' '
		cp $W wl-user && chmod 755 wl-user . &&
		share_programs "$TEST_DIR/nobody-bin" dcpiwatch &&
		test_must_fail setpriv --reuid=65534 --regid=65534 --clear-groups \
			dcpiwatch -f counted -- ./wl-user count 1 2>err &&
		test_grep "CAP_PERFMON" err &&
		test_must_fail setpriv --reuid=65534 --regid=65534 --clear-groups \
			dcpiwatch -a -f counted@./wl-user --duration 1 2>err &&
		test_grep "CAP_PERFMON" err
	'
else
	test_skip 'permissions as perf' 'no setpriv'
fi

test_expect_success '--help, --version' '
	dcpiwatch --help >out && test_grep "between" out &&
	dcpiwatch --version >out && test_grep "dcpi" out
'

test_done
