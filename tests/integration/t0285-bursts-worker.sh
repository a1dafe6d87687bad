#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Emulated bursts when things go wrong: the emulating worker killed in the
# middle of a burst, or hung there, costs that burst and nothing else (the
# thread goes on, the run ends with its profile, the worker is started
# again); a thread killed while a burst has it stopped costs the burst; the
# daemon does the same.  Every failure is made at a named point
# (core/testpoint.h), never in a guessed time window.
. "$top_srcdir/tests/lib.sh"
require_root
require_sampling
command -v python3 >/dev/null || skip_all "python3 is needed to read the JSON"

W=$top_builddir/tests/workloads
SOCK=$TEST_DIR/ctl/dcpid.sock

# The bursts a run summary says were lost, and why ("2 lost (2 the worker died)").
lost_bursts() { sed -n "s/.*; \([0-9]*\) lost (.*/\1/p" "$1"; }

# Until PARENT exits: kills each of its emulating workers that stopped itself
# at its point (a new worker stops at its own Nth burst again), saying so.
kill_stopped_workers() { # PARENT
	local w
	while kill -0 "$1" 2>/dev/null; do
		for w in $(pgrep -P "$1" -x dcpi-emulate); do
			if [ "$(sed -n "s/^[0-9]* (.*) \([A-Za-z]\) .*/\1/p" /proc/$w/stat 2>/dev/null)" = T ]; then
				kill -KILL "$w" && echo "killed $w"
			fi
		done
		sleep 0.02
	done
}

test_expect_success 'the worker killed in the middle of a burst: that burst is lost, the run goes on' '
	# the collector waits for the worker as long as the test may need to kill it
	stop_at emulate-burst@3 dcpirun -d killed.db -F 2000 --bursts=10 --burst-deadline=120000 \
		-- $W/wl-three -s 2 >out 2>err &&
	run=$stopped_pid && test_register_pid $run dcpirun &&
	{ kill_stopped_workers $run >killed & killer=$!; } &&
	wait $run &&
	# the loop ends once the run is gone: its last sleep must not outlive the test
	wait $killer &&
	cat err killed &&
	grep -q "^killed " killed &&
	lost=$(lost_bursts err) && test "$lost" -ge 1 &&
	grep -q "lost ([0-9]* the worker died" err &&
	grep "^three " out &&
	dcpidb -d killed.db check &&
	dcpi-test-helper dump killed.db | grep -q "^sample .* cycles " &&
	ls killed.db/000001/*.paths
'

test_expect_success 'a worker that hangs: the burst is given up at its deadline, the worker replaced' '
	DCPI_TEST_STOP_AT=emulate-burst@2 dcpirun -d hung.db -F 2000 --bursts=10 -- $W/wl-three -s 2 >out 2>err &&
	cat err &&
	# each new worker hangs at its second burst, until the collector gives up on them
	lost=$(lost_bursts err) && test "$lost" -ge 1 &&
	grep -q "lost ([0-9]* timed out" err &&
	grep "^three " out &&
	dcpidb -d hung.db check
'

test_expect_success 'a thread killed while a burst has it stopped: the burst ends, the run reports it' '
	stop_at emulate-stopped@2 dcpirun -d gone.db -F 2000 --bursts=10 -- $W/wl-three -s 30 >out 2>err &&
	run=$stopped_pid && test_register_pid $run dcpirun &&
	wait_stopped $run &&
	victim=$(pgrep -P $run -x wl-three) &&
	kill -KILL $victim &&
	kill -CONT $run &&
	{ wait $run; status=$?; } &&
	cat err &&
	echo "exit status $status" &&
	test $status -eq 137 &&
	grep "bursts of" err &&
	dcpidb -d gone.db check
'

test_expect_success 'dcpid: a worker killed mid-burst is started again, the daemon goes on' '
	mkdir -p ctl &&
	# The daemon may burst any thread, the killing loop too: then nothing
	# kills the stopped worker and the burst is given up at its deadline,
	# which is as good (the assertions below hold either way).
	{ DCPI_TEST_STOP_AT=emulate-burst@2 dcpid -f -d sysdb --socket "$SOCK" -F 1000 --bursts=10 --values-users=root \
		--burst-deadline=20000 --write-interval 1 >/dev/null 2>dcpid.err & } &&
	daemon=$! && test_register_pid $daemon dcpid &&
	wait_for 30 "dcpid to answer" "dcpictl --socket \"$SOCK\" status >/dev/null 2>&1" &&
	{ kill_stopped_workers $daemon >killed & killer=$!; } &&
	$W/wl-three -s 3 >/dev/null &&
	wait_for 90 "a worker killed or given up" "grep -q ^killed killed || dcpictl --socket \"$SOCK\" \
		status | grep -q \"[1-9][0-9]* lost\"" &&
	dcpictl --socket "$SOCK" flush &&
	dcpictl --socket "$SOCK" --json status >status.json &&
	python3 -c "
import json
b = json.load(open(\"status.json\"))[\"bursts\"]
print(b[\"bursts\"], \"bursts,\", b[\"lost\"], \"lost, worker started\", b[\"worker_starts\"], \"times\")
assert b[\"lost\"] >= 1 and b[\"worker_starts\"] >= 2, b
" &&
	dcpictl --socket "$SOCK" quit &&
	wait_exit $daemon &&
	wait $killer &&
	cat killed &&
	dcpidb -d sysdb check
'

test_done
