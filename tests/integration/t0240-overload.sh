#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Overload: the highest rate the kernel allows, and readers that cannot
# keep up (a one-page ring, a stopped collector).  Losses and throttling
# are counted and reported, what was recorded stays consistent, nothing
# crashes.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/workloads/attr.sh"
require_root
require_sampling

W=$top_builddir/tests/workloads
SOCK=$TEST_DIR/ctl/dcpid.sock

# The samples the profiles of the latest epoch hold (all events).
stored() {
	dcpi-test-helper check db | awk -v e="$(ls -d db/0* | wc -l)" \
		'$1 == e && $4 == 0 { s += $6 } END { print s + 0 }'
}

# Where a sample costs more than the 10 us period (a VM: 15-50 us), the
# workload hardly moves at this rate and fixed work would take minutes: it
# runs for a budget of its own CPU time (-s), and the floor is 1 kHz of the
# CPU time it used (the rate the kernel delivers depends on the machine).
test_expect_success 'the highest rate: every sample is accounted for' '
	dcpirun -d db -F 100000 -- $W/wl-three -n 1000000 -s 0.05 --cpu >out 2>err &&
	cat err out &&
	n=$(sed -n "s/^dcpirun: \([0-9]*\) samples.*/\1/p" err) &&
	rate_ok "$n" "$(measured out cpu)" 1000 1 &&
	test "$(stored)" = "$n" &&
	e=$(ls -d db/0* | tail -n 1) &&
	grep -q "^counter throttled [0-9]" $e/meta
'

# is_done PID: PID has exited (gone, or a zombie its stopped parent cannot reap)
is_done() {
	! kill -0 "$1" 2>/dev/null || [ "$(awk "{ print \$3 }" /proc/$1/stat 2>/dev/null)" = Z ]
}

# The collector is stopped from the moment the command runs until it has
# exited: whatever the machine, the one-page ring overflows meanwhile.
test_expect_success 'a collector that stops reading: losses are counted and reported' '
	dcpirun -d db -F 20000 --ring-pages 1 -- \
		sh -c "echo \$\$ >child.pid; exec $W/wl-three -n 1000000 -s 0.2" >/dev/null 2>err &
	pid=$! &&
	wait_for 60 "the command to start" "test -s child.pid" &&
	kill -STOP $pid &&
	wait_for 120 "the command to end" "is_done $(cat child.pid)" &&
	kill -CONT $pid && wait_exit $pid && wait $pid &&
	cat err &&
	lost=$(sed -n "s/^dcpirun: .*, \([0-9]*\) lost,.*/\1/p" err) &&
	test "$lost" -gt 0 &&
	e=$(ls -d db/0* | tail -n 1) &&
	test "$(meta_counter db ${e#db/} lost)" = "$lost" &&
	n=$(sed -n "s/^dcpirun: \([0-9]*\) samples.*/\1/p" err) &&
	test "$(stored)" = "$n"
'

test_expect_success 'dcpid overloaded: status and the epoch report the losses' '
	dcpid -f -d db --socket "$SOCK" -F 20000 --ring-pages 1 --new-epoch >/dev/null 2>dcpid.err &
	pid=$! && test_register_pid $pid dcpid &&
	wait_for 60 "dcpid to answer on $SOCK" "dcpictl --socket \"$SOCK\" status >/dev/null 2>&1" &&
	kill -STOP $pid &&
	$W/wl-threads -s 0.2 -t 2 >/dev/null &&
	kill -CONT $pid &&
	dcpictl --socket "$SOCK" status >status && cat status &&
	awk "\$1 == \"all\" { exit !(\$3 > 0) }" status &&
	dcpictl --socket "$SOCK" quit >/dev/null &&
	wait_exit $pid &&
	e=$(ls -d db/0* | tail -n 1) &&
	test "$(meta_counter db ${e#db/} lost)" -gt 0 &&
	dcpi-test-helper check db >/dev/null
'

stop_daemons
test_done
