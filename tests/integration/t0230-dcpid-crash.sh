#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# kill -9 dcpid while it flushes continuously (--write-interval 0: every
# dirty profile is written at each tick) under a load of short-lived
# processes: after each kill the database reads back whole, no count goes
# backwards, the epoch's meta never claims more than its profiles hold, and
# the restarted daemon continues the same epoch.  A final clean quit makes
# the meta agree with the profiles exactly.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/workloads/attr.sh"
require_root
require_sampling

W=$top_builddir/tests/workloads
SOCK=$TEST_DIR/ctl/dcpid.sock
ROUNDS=${DCPI_COLLECT_CRASH_ROUNDS:-8}

start_dcpid() {
	dcpid_start db "$SOCK" -F 2000 --write-interval 0
}

# Totals per profile: "EPOCH/KEY/EVENT/PID TOTAL".
totals() {
	dcpi-test-helper check db | awk '{ print $1 "/" $2 "/" $3 "/" $4, $6 }' | sort
}

went_backwards() {
	join "$1" "$2" | awk '$3 < $2 { print $1 " went from " $2 " to " $3; bad = 1 } END { exit !bad }'
}

# The meta's sample count for cycles is at most what the profiles hold.
meta_not_ahead() {
	local e=$1 meta sum
	meta=$(awk '$1 == "event" && $2 == "cycles" { print $7 }' db/$e/meta)
	sum=$(dcpi-test-helper check db | awk -v e=$((10#$e)) '$1 == e && $3 == "cycles" && $4 == 0 { s += $6 } END { print s + 0 }')
	echo "epoch $e: meta says $meta, profiles hold $sum"
	test "${meta:-0}" -le "$sum"
}

# A background load; it must not run lib.sh's EXIT trap (the cleanup) when killed.
load() {
	trap - EXIT
	while :; do
		$W/wl-spawn -n 40 -w 1000000 >/dev/null
		$W/wl-lib -n 20000000 >/dev/null
	done
}

# Each round dcpid is told to stop itself (core/testpoint.h) at its Nth atomic
# write, N at random, with the file written and synced under its temporary
# name or just renamed; it is killed there, in the middle of a flush.
test_expect_success "$ROUNDS kills during heavy flushing leave a consistent database" '
	load & loadpid=$!
	test_register_pid $loadpid load
	: >prev; ok=0
	for i in $(seq $ROUNDS); do
		point=write-before-rename && [ $((i % 2)) = 0 ] && point=write-after-rename
		at=$((2 + RANDOM % 30))
		stop_at "$point@$at" dcpid -f -d db --socket "$SOCK" -F 2000 --write-interval 0 2>>dcpid.err
		pid=$stopped_pid
		test_register_pid $pid "dcpid (round $i)"
		wait_stopped $pid || { kill_stopped $pid; echo "round $i: dcpid never reached $point@$at"; cat dcpid.err; break; }
		kill_stopped $pid
		if ! totals >state 2>err; then
			echo "round $i ($point@$at): unreadable"; cat err; break
		fi
		if went_backwards prev state; then
			echo "round $i ($point@$at): a count went backwards"; break
		fi
		meta_not_ahead 000001 || break
		cp state prev
		ok=$i
	done
	kill_tree $loadpid; wait $loadpid 2>/dev/null
	echo "$ok of $ROUNDS rounds"; ls -l state
	test "$ok" = $ROUNDS && test -s state
'

test_expect_success 'the restarted daemons all wrote into the same epoch' '
	test "$(ls -d db/0*)" = db/000001 &&
	test $(wc -l <state) -ge 3
'

test_expect_success 'a clean quit makes the meta agree with the profiles' '
	start_dcpid &&
	dcpictl --socket "$SOCK" quit >/dev/null &&
	wait_exit $(cat dcpid.pid) &&
	! ls -a db db/000001 | grep "^\.tmp\." &&
	meta=$(awk "\$1 == \"event\" && \$2 == \"cycles\" { print \$7 }" db/000001/meta) &&
	sum=$(dcpi-test-helper check db | awk "\$3 == \"cycles\" && \$4 == 0 { s += \$6 } END { print s }") &&
	echo "meta $meta, profiles $sum" && test "$meta" = "$sum" &&
	unk=$(meta_counter db 000001 unknown) &&
	test "$unk" = "$(dcpi-test-helper check db | awk "\$2 == \"unknown\" { s += \$6 } END { print s + 0 }")"
'

stop_daemons
test_done
