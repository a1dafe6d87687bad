#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dcpid --bursts against programs written to break it, run by another user
# (nobody): a vfork parent whose child sleeps (the parent waits in the
# kernel, state D), threads reading a FUSE file whose server answers late
# and never answers an interrupt (a reader stopped meanwhile waits in state
# D), a process ending while a burst may hold one of its threads, a program
# raising SIGTRAP itself.  Throughout, the daemon answers every `dcpictl
# status` within 1 s, and each program does what it does without the
# profiler (it checks itself: tests/helper/dcpi-hostile.c).
. "$top_srcdir/tests/lib.sh"
require_root
require_sampling
command -v setpriv >/dev/null || skip_all "no setpriv to become nobody"
command -v timeout >/dev/null || skip_all "no timeout(1)"

SOCK=$TEST_DIR/ctl/dcpid.sock
share_programs "$TEST_DIR/bin" dcpi-hostile || bail_out "cannot copy the programs"

as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}

# Asks for the status every 0.1 s, each call given 1 s, until the file
# "stop" appears; prints a line for each call that got no answer in time.
watch_status() {
	local t0 t1
	while [ ! -e stop ]; do
		t0=$(date +%s%N)
		timeout 1 dcpictl --socket "$SOCK" status >/dev/null 2>&1 ||
			echo "no answer within 1 s at $(((t0 - start_ns) / 1000000)) ms"
		t1=$(date +%s%N)
		echo "$(((t1 - t0) / 1000000))" >>latencies
		sleep 0.1
	done
}

# run_hostile NAME CMD...: CMD as nobody while the status is watched; the
# program must succeed and every status call be answered.
run_hostile() {
	local name=$1 rc=0
	shift
	rm -f stop latencies
	start_ns=$(date +%s%N)
	watch_status >"$name.missed" &
	watcher=$!
	as_nobody "$@" >"$name.out" 2>&1 || rc=$?
	touch stop
	wait $watcher
	cat "$name.out"
	echo "$name: $(wc -l <latencies) status calls, slowest $(sort -n latencies | tail -n 1) ms"
	cat "$name.missed"
	[ $rc -eq 0 ] && [ ! -s "$name.missed" ]
}

test_expect_success 'dcpid --bursts starts' '
	mkdir -p ctl &&
	{ dcpid -f -d db --socket "$SOCK" -F 1000 --bursts=20 ${DCPID_HOSTILE_OPTS---values-users=nobody} \
		--write-interval 1 >/dev/null 2>dcpid.err & } &&
	echo $! >daemon.pid && test_register_pid $(cat daemon.pid) dcpid &&
	wait_for 30 "dcpid to answer" "dcpictl --socket \"$SOCK\" status >/dev/null 2>&1"
'

test_expect_success 'a vfork parent whose child sleeps: every status answered, the program unharmed' '
	run_hostile vfork dcpi-hostile vfork 16 4 3000 20
'

if grep -qw fuse /proc/filesystems && [ -c /dev/fuse ]; then
	test_expect_success 'a FUSE server that answers late (and never an interrupt)' '
		mkdir -p fuse && chmod 755 fuse &&
		{ dcpi-hostile fuse-server "$TEST_DIR/fuse" 3000 >fuse-server.out 2>&1 & } &&
		echo $! >fuse.pid && test_register_pid $(cat fuse.pid) "the FUSE server" &&
		test_at_end "umount -l \"$TEST_DIR/fuse\" 2>/dev/null; kill \$(cat \"$TEST_DIR/fuse.pid\") 2>/dev/null" &&
		wait_for 10 "the FUSE mount" "grep -q mounted fuse-server.out"
	'
	test_expect_success 'threads reading it: every status answered, every read done' '
		run_hostile fuse dcpi-hostile fuse-read "$TEST_DIR/fuse/data" 16 4 20
	'
	test_expect_success 'the FUSE server stops' '
		umount -l "$TEST_DIR/fuse" && kill $(cat fuse.pid) && wait_exit $(cat fuse.pid)
	'
else
	test_skip 'a FUSE server that answers late' 'this kernel has no FUSE'
fi

test_expect_success 'processes ending while their threads run: each reaped by its parent' '
	run_hostile exit-mid dcpi-hostile exit-mid 300 10
'

test_expect_success 'a program raising SIGTRAP itself: every one delivered' '
	run_hostile trap dcpi-hostile trap 1000000
'

# Single steps over the program's own int3: each a SIGTRAP the step's trap
# must not be taken for.
test_expect_success 'single-step bursts of a program raising SIGTRAP itself: every one delivered' '
	dcpirun -d step.db -F 2000 --bursts=step --values-users=nobody -- setpriv --reuid=nobody --regid=nogroup \
		--clear-groups dcpi-hostile trap 300000 >step.out 2>step.err &&
	cat step.out step.err &&
	grep -q "trap: .* ok" step.out &&
	grep -q "[1-9][0-9]* bursts of" step.err
'

# Bursts of them were emulated to an answer: counted, or dropped as
# unverified (these programs live in system calls and signals: what a
# burst read may have changed before a later sample confirms it).
test_expect_success 'the daemon took bursts of them, and stops' '
	dcpictl --socket "$SOCK" --json status >status.json &&
	python3 -c "
import json
s = json.load(open(\"status.json\"))
b = s[\"bursts\"]
print({k: b[k] for k in (\"bursts\", \"unverified\", \"refused\", \"lost\") if k in b})
print(s.get(\"stops\"))
assert b[\"bursts\"] + b[\"unverified\"] > 0, b
" &&
	dcpictl --socket "$SOCK" quit &&
	wait_exit $(cat daemon.pid) &&
	cat dcpid.err &&
	dcpidb -d db check
'

test_done
