#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dcpid -g, call stacks from the daemon: system-wide stacks, its unwinding
# worker (unprivileged, gone with the daemon), epochs keep their own
# stacks, dcpictl status reports them, and kill -9 during continuous
# flushing leaves a readable stack table whose counts never go back.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/workloads/attr.sh"
require_root
require_sampling

W=$top_builddir/tests/workloads
SOCK=$TEST_DIR/ctl/dcpid.sock
ctl() { dcpictl --socket "$SOCK" "$@"; }
test_at_end stop_daemons

start_dcpid() {
	local i
	dcpid -f -d db --socket "$SOCK" -F 2000 -g "$@" >/dev/null 2>>dcpid.err &
	echo $! >dcpid.pid
	test_register_pid $! dcpid
	for i in $(seq 100); do
		ctl status >/dev/null 2>&1 && return 0
		kill -0 $(cat dcpid.pid) 2>/dev/null || break
		sleep 0.1
	done
	cat dcpid.err
	return 1
}

wait_pid_gone() {
	local i
	for i in $(seq 100); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}

# The daemon's unwinding worker: its child named dcpi-unwind.
worker_of() {
	local p
	for p in $(cat /proc/$1/task/*/children 2>/dev/null); do
		[ "$(awk '/^Name:/ { print $2 }' /proc/$p/status 2>/dev/null)" = dcpi-unwind ] && echo $p
	done
}

# Samples of COMM (and process TGID) in the stack table of EPOCH, and the complete ones.
stack_counts() { # EPOCH COMM [TGID]
	dcpi-test-helper stacks db "$1" |
		awk -v c="$2" -v p="${3:-}" '$1 == "stack" && $6 == c && (p == "" || $4 == p) && $7 != "kernel" {
			n += $3; if ($7 == "complete") k += $3 } END { print n + 0, k + 0 }'
}

# Runs a command, its pid in bg.pid and the CPU time it took in NAME.cpu.
run_cpu() { # NAME COMMAND...
	local name=$1
	shift
	rucpu -p bg.pid "$name.cpu" -- "$@"
}

# Half the samples the CPU time of NAME.cpu stands for at 2 kHz: a floor
# that holds on a faster host as on a slower one.
floor_of() { # NAME
	awk '{ printf "%d", $1 * 2000 / 2 }' "$1.cpu"
}

# Waits until the daemon has made every unwind table asked for.
tables_made() {
	local i
	for i in $(seq 300); do
		ctl --json status | grep -q "\"unwind_tables_pending\": 0" && return 0
		sleep 0.1
	done
	echo "unwind tables still being made after 30 s"
	return 1
}

# A daemon makes the unwind table of a binary when it is first sampled;
# until the worker has made it (seconds after the daemon starts, when it
# makes every running binary's; longer on a loaded machine), that binary's
# stacks stop there ("no-table").  The first run warms the daemon up; the
# second is the steady state.
test_expect_success 'dcpid -g: stacks of what runs, unwound system-wide' '
	start_dcpid --write-interval 1 &&
	$W/wl-callers -n 30000000 >/dev/null &&
	tables_made &&
	run_cpu callers $W/wl-callers -n 100000000 >/dev/null &&
	ctl flush &&
	ls db/000001/stacks-* &&
	set -- $(stack_counts 1 wl-callers $(cat bg.pid)) &&
	echo "wl-callers: $1 user stacks, $2 complete ($(cat callers.cpu) s of CPU: at least $(floor_of callers))" &&
	test "$1" -ge "$(floor_of callers)" && test "$1" -gt 0 &&
	test $(($2 * 100)) -ge $(($1 * 95)) &&
	dcpicg -d db --comm wl-callers leaf >leaf.txt &&
	grep -q " caller_a \[" leaf.txt && grep -q " caller_b \[" leaf.txt
'

test_expect_success 'its worker runs as dcpi-worker (nobody without it) under seccomp; status reports the stacks' '
	w=$(worker_of $(cat dcpid.pid)) && test -n "$w" &&
	grep "^Uid:\|^NoNewPrivs:\|^Seccomp:" /proc/$w/status >worker.status &&
	cat worker.status &&
	grep -q "^Uid:	$(worker_uid)	" worker.status && grep -q "^Seccomp:	2" worker.status &&
	ctl status >status && grep "^stacks:" status &&
	grep -q "^stacks: dwarf, [0-9]* samples, [0-9.]*% of user stacks complete" status &&
	ctl --json status >status.json &&
	"$top_builddir/tests/programs/dcpi-disasm-check" json status.json &&
	grep -q "\"unwind_tables\": [1-9]" status.json
'

# dcpid samples the whole machine: other tests that run beside this one
# (make -j) run wl-callers too, so the counts are of this test's processes.
test_expect_success 'a new epoch gets its own stacks; the old one keeps its own' '
	ctl epoch second >/dev/null &&
	callers=$(cat bg.pid) &&
	before=$(stack_counts 1 wl-callers "$callers") &&
	run_cpu three $W/wl-three -n 50000000 >/dev/null &&
	ctl flush &&
	after=$(stack_counts 1 wl-callers "$callers") &&
	echo "epoch 1, wl-callers $callers: $before, then $after" &&
	test "$after" = "$before" &&
	set -- $(stack_counts 2 wl-three "$(cat bg.pid)") &&
	echo "epoch 2, wl-three: $* ($(cat three.cpu) s of CPU: at least $(floor_of three))" &&
	test "$1" -ge "$(floor_of three)" && test "$1" -gt 0 &&
	second=$(stack_counts 2 wl-callers "$callers") && echo "epoch 2, wl-callers $callers: $second" &&
	test "$second" = "0 0" &&
	ctl quit && wait_pid_gone $(cat dcpid.pid)
'

load() {
	trap - EXIT
	while :; do
		$W/wl-callers -n 30000000 >/dev/null
		$W/wl-spawn -n 20 -w 1000000 >/dev/null
	done
}

# Each round the daemon, writing continuously, stops itself at a write
# (before or after its rename: core/testpoint.h) drawn at random, and is
# killed there.
test_expect_success 'kill -9 while flushing stacks: readable, never going back, no worker left' '
	load & loadpid=$!
	test_register_pid $loadpid load
	prev=0 ok=0
	for i in 1 2 3 4; do
		point=write-before-rename && [ $((i % 2)) = 0 ] && point=write-after-rename
		at=$((10 + RANDOM % 40))
		stop_at "$point@$at" dcpid -f -d db --socket "$SOCK" -F 2000 -g --write-interval 0 \
			>/dev/null 2>>dcpid.err
		d=$stopped_pid
		test_register_pid $d "dcpid (round $i)"
		wait_stopped $d || { kill_stopped $d; echo "round $i: dcpid never reached $point@$at"; cat dcpid.err; break; }
		w=$(worker_of $d)
		echo "round $i: killed at $point@$at"
		kill_stopped $d
		wait_pid_gone $d || break
		if [ -n "$w" ] && ! wait_pid_gone $w; then echo "round $i: worker $w survived"; break; fi
		dcpi-test-helper stacks db >st 2>err || { echo "round $i: unreadable"; cat err; break; }
		n=$(awk "{ s += \$3 } END { print s + 0 }" st)
		echo "round $i: $n samples in stacks"
		[ "$n" -ge "$prev" ] || { echo "round $i: went back from $prev"; break; }
		prev=$n ok=$i
	done
	kill_tree $loadpid; wait $loadpid 2>/dev/null
	test "$ok" = 4 && test "$prev" -gt 0
'

test_done
