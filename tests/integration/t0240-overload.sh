#!/bin/bash
# Overload: the highest rate the kernel allows, and readers that cannot
# keep up (a one-page ring, a stopped collector).  Losses and throttling
# are counted and reported, what was recorded stays consistent, nothing
# crashes.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/workloads/attr.sh"
require_root
collect_require_sampling

W=$top_builddir/tests/workloads
SOCK=$TEST_DIR/ctl/dcpid.sock

# The samples the profiles of the latest epoch hold (all events).
stored() {
	dcpi-test-helper check db | awk -v e="$(ls -d db/0* | wc -l)" \
		'$1 == e && $4 == 0 { s += $6 } END { print s + 0 }'
}

test_expect_success 'the highest rate: every sample is accounted for' '
	dcpirun -d db -F 100000 -- $W/wl-three -n 10000000 >/dev/null 2>err &&
	cat err &&
	n=$(sed -n "s/^dcpirun: \([0-9]*\) samples.*/\1/p" err) &&
	test "$n" -gt 10000 &&
	test "$(stored)" = "$n" &&
	e=$(ls -d db/0* | tail -n 1) &&
	grep -q "^counter throttled [0-9]" $e/meta
'

test_expect_success 'a collector that stops reading: losses are counted and reported' '
	dcpirun -d db -F 20000 --ring-pages 1 -- $W/wl-three -n 150000000 >/dev/null 2>err &
	pid=$! && sleep 0.5 && kill -STOP $pid && sleep 1 && kill -CONT $pid && wait $pid &&
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
	pid=$! &&
	for i in $(seq 50); do dcpictl --socket "$SOCK" status >/dev/null 2>&1 && break; sleep 0.1; done &&
	{ $W/wl-threads -n 150000000 -t 2 >/dev/null & w=$!; } &&
	sleep 0.3 && kill -STOP $pid && sleep 1 && kill -CONT $pid && wait $w &&
	dcpictl --socket "$SOCK" status >status && cat status &&
	awk "\$1 == \"all\" { exit !(\$3 > 0) }" status &&
	dcpictl --socket "$SOCK" quit >/dev/null &&
	while kill -0 $pid 2>/dev/null; do sleep 0.05; done &&
	e=$(ls -d db/0* | tail -n 1) &&
	test "$(meta_counter db ${e#db/} lost)" -gt 0 &&
	dcpi-test-helper check db >/dev/null
'

stop_daemons
test_done
