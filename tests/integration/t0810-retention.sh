#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dcpid's retention on databases of 400 synthetic epochs (dcpi-test-helper
# synth): --max-size prunes to the limit at start and within one flush
# after a reload (SIGHUP re-reads the configuration file), --max-age by the
# epochs' ends, dcpictl status reports it; a configuration file someone
# else could have written is refused; kill -9 during a prune leaves a
# database dcpidb check calls sound, with the oldest epochs gone first, and
# the next dcpid finishes the job.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/workloads/attr.sh"
require_root
require_sampling

SOCK=$TEST_DIR/ctl/dcpid.sock
ROUNDS=${DCPI_PRUNE_KILL_ROUNDS:-12}
ctl() { dcpictl --socket "$SOCK" "$@"; }

start_dcpid() { # DB ARGS...: dcpid in the foreground; waits (bounded) for its socket
	local db=$1 i
	shift
	dcpid -f -d "$db" --socket "$SOCK" -F 200 --no-calibrate "$@" >dcpid.out 2>>dcpid.err &
	echo $! >dcpid.pid
	test_register_pid $! dcpid
	for i in $(seq 300); do
		ctl status >/dev/null 2>&1 && return 0
		kill -0 "$(cat dcpid.pid)" 2>/dev/null || break
		sleep 0.1
	done
	echo "dcpid did not start:"; cat dcpid.err
	return 1
}
stop_dcpid() {
	local pid i
	[ -f dcpid.pid ] || return 0
	pid=$(cat dcpid.pid)
	ctl quit >/dev/null 2>&1 || kill "$pid" 2>/dev/null
	for i in $(seq 300); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
	kill -9 "$pid"; echo "dcpid $pid did not stop"; return 1
}
# A test that failed may have left its daemon running: the next one stops it.
cleanup_dcpid() { [ -f dcpid.pid ] && kill -0 "$(cat dcpid.pid)" 2>/dev/null && stop_dcpid; rm -f dcpid.pid; }
json_field() { # FILE KEY: the first value of KEY in a JSON file
	sed -n "s/^ *\"$2\": \([^,]*\),\{0,1\}$/\1/p" "$1" | head -n 1
}
epochs() { ls "$1" | grep -c "^[0-9]"; }
# Measurements, printed as TAP comments at the end whether or not the tests passed.
note() { echo "$*" | tee -a "$TEST_DIR/notes"; }
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

test_expect_success 'setup: 400 synthetic epochs' '
	t0=$(date +%s%N) &&
	dcpi-test-helper synth template 400 4 &&
	echo "synth: $(ms_since $t0) ms" &&
	test "$(epochs template)" = 400 &&
	dcpidb -d template check | tail -n 1 | grep "^sound: 400 epochs" &&
	du -sB1 template | cut -f1 >size && cat size
'

test_expect_success '--max-size prunes 400 epochs to the limit at start' '
	cp -a template db &&
	limit=$(( $(cat size) / 4 )) &&
	t0=$(date +%s%N) &&
	start_dcpid db --max-size $limit &&
	note "dcpid start to status with a prune of 400 epochs: $(ms_since $t0) ms" &&
	ctl status --json >s.json &&
	ctl status >s.txt && cat s.txt | head -n 4 &&
	grep -A10 "\"retention\"" s.json &&
	removed=$(json_field s.json removed_epochs) &&
	test "$removed" -ge 250 && test "$removed" -lt 400 &&
	test "$(json_field s.json database_bytes)" -le $limit &&
	test "$(json_field s.json over_limit)" = false &&
	test "$(du -sB1 db | cut -f1)" -le $limit &&
	test "$(json_field s.json removed_snapshots)" -ge 1 &&
	grep "^retention: at most .*; removed $removed epochs" s.txt &&
	grep "dcpid: retention: removed $removed epochs up to $removed and [0-9]* snapshots (.*) in [0-9]* ms; .db. uses" dcpid.err &&
	note "at start: $(grep -o "retention: .*" dcpid.err)" &&
	dcpidb -d db check >check.out && tail -n 1 check.out &&
	test "$(epochs db)" = $((400 - removed)) &&
	test -d db/$(printf %06d $((removed + 1))) && test -d db/000400 &&
	stop_dcpid
'

test_expect_success 'a reload prunes within one flush; new epochs push old ones out' '
	cleanup_dcpid
	rm -rf db && cp -a template db &&
	printf "# retention off\nmax-size = 0\n" >c.conf && chmod 600 c.conf &&
	start_dcpid db --config c.conf &&
	ctl status --json >s.json && ! grep -q "\"retention\"" s.json &&
	test "$(epochs db)" = 400 &&
	limit=$(( $(cat size) / 4 )) &&
	printf "max-size = %s\n" $limit >c.conf &&
	t0=$(date +%s%N) &&
	kill -HUP "$(cat dcpid.pid)" &&
	for i in $(seq 100); do
		ctl status --json >s.json &&
		test "$(json_field s.json removed_epochs)" -gt 0 && break
		sleep 0.1
	done &&
	note "reload (SIGHUP: flush, prune 400 epochs) to a status that shows it: $(ms_since $t0) ms" &&
	test "$(json_field s.json database_bytes)" -le $limit &&
	test "$(du -sB1 db | cut -f1)" -le $limit &&
	first=$(json_field s.json removed_epochs) &&
	for e in one two three; do
		$top_builddir/tests/workloads/wl-three >/dev/null && ctl epoch $e >/dev/null &&
		ctl flush >/dev/null && test "$(du -sB1 db | cut -f1)" -le $limit ||
			{ echo "epoch $e: dcpid said:"; tail -n 20 dcpid.err; exit 1; }
	done &&
	ctl status --json >s.json &&
	test "$(json_field s.json removed_epochs)" -gt "$first" &&
	dcpidb -d db info | grep -E "^ +403\* three " &&
	stop_dcpid
'

test_expect_success '--max-age removes the epochs that ended before' '
	cleanup_dcpid
	rm -rf db && cp -a template db &&
	start_dcpid db --max-age 100 &&
	stop_dcpid &&
	dcpidb -d db info >info.out && sed -n 3,4p info.out &&
	first=$(sed -n "4s/^ *\([0-9]*\).*/\1/p" info.out) &&
	test "$first" -ge 299 && test "$first" -le 302 &&
	dcpidb -d db check | tail -n 1 | grep "^sound"
'

test_expect_success 'a configuration file others could have written is refused' '
	cleanup_dcpid
	printf "max-size = 1G\n" >c.conf && chmod 666 c.conf &&
	test_must_fail dcpid -f -d db --socket "$SOCK" --config c.conf 2>err && cat err &&
	grep "refusing configuration file .*c.conf.: others can write to it (mode 0666)" err &&
	chmod 644 c.conf && chown 65534 c.conf &&
	test_must_fail dcpid -f -d db --socket "$SOCK" --config c.conf 2>err &&
	grep "owned by uid 65534, not root" err &&
	chown 0 c.conf && ln -s c.conf link.conf &&
	test_must_fail dcpid -f -d db --socket "$SOCK" --config link.conf 2>err &&
	grep "a symbolic link" err &&
	printf "max-size = 1G\nsocket = /tmp/x\n" >c.conf &&
	test_must_fail dcpid -f -d db --socket "$SOCK" --config c.conf 2>err &&
	grep "c.conf:2: .socket. cannot be set in a configuration file" err &&
	printf "max-size = lots\n" >c.conf &&
	test_must_fail dcpid -f -d db --socket "$SOCK" --config c.conf 2>err &&
	grep "bad size .lots." err && grep "in .*c.conf., line 1" err &&
	test_must_fail dcpid -f -d db --socket "$SOCK" --config missing.conf 2>err &&
	grep "cannot open configuration file .missing.conf." err
'

# Each round: a fresh copy of a 400-epoch database with more files per epoch
# (a longer prune), dcpid started with a limit and told to stop itself in the
# middle of its prune (core/testpoint.h): after moving the Nth epoch aside,
# or after deleting the Nth moved epoch, N drawn at random over the epochs the
# prune removes.  It is killed -9 there.  The database must be sound, its
# oldest epochs gone first, and the next dcpid must clean up and finish.
test_expect_success "kill -9 during a prune, $ROUNDS times: the database stays sound" '
	cleanup_dcpid
	dcpi-test-helper synth big 400 16 &&
	limit=$(( $(du -sB1 big | cut -f1) / 10 )) &&
	# How many epochs does the prune remove?
	rm -rf db && cp -a big db && dcpidb -d db prune --max-size $limit -n >dry.out &&
	removed=$(sed -n "s/^would remove \([0-9]*\) epochs.*/\1/p" dry.out) &&
	note "a prune to $limit bytes removes $removed of 400 epochs" &&
	test "$removed" -ge 2 || { cat dry.out; exit 1; }
	ok=0
	for r in $(seq $ROUNDS); do
		rm -rf db && cp -a big db || break
		point=prune-after-rename && [ $((r % 2)) = 0 ] && point=prune-after-unlink
		at=$((1 + RANDOM % removed))
		stop_at "$point@$at" dcpid -f -d db --socket "$SOCK" -F 200 --no-calibrate --max-size $limit 2>/dev/null
		pid=$stopped_pid
		test_register_pid $pid "dcpid (round $r)"
		wait_stopped $pid || { kill_stopped $pid; break; }
		kill_stopped $pid
		n=$(epochs db) temps=$(ls -a db | grep -c "^\.tmp\.prune") oldest=$(ls db | grep "^0" | head -n 1)
		echo "round $r: killed at $point@$at: $n epochs, $temps temps, oldest $oldest"
		# Stopped where it was told: after the rename of epoch $at, or once
		# every epoch to remove is moved aside, after the deletion of $at.
		if [ $point = prune-after-rename ]; then
			test "$n" = $((400 - at)) && test "$temps" = "$at"
		else
			test "$n" = $((400 - removed)) && test "$temps" = $((removed - at))
		fi || { echo "not stopped where it was told"; break; }
		dcpidb -d db check >check.out || { cat check.out; break; }
		# Oldest first: what is left is the newest n epochs.
		test "$((10#$oldest))" = $((400 - n + 1)) || { echo "not the oldest first"; break; }
		start_dcpid db --max-size $limit || break
		ctl status --json >s.json &&
		test "$(json_field s.json database_bytes)" -le $limit ||
			{ grep -A10 "\"retention\"" s.json; grep database_bytes s.json; break; }
		stop_dcpid || break
		dcpidb -d db check >check.out && ! grep "^note" check.out || { cat check.out; break; }
		ok=$r
	done
	note "kill loop: $ok of $ROUNDS rounds sound, each killed at its stop point in a prune"
	test "$ok" = $ROUNDS
'

cleanup_dcpid
[ -f "$TEST_DIR/notes" ] && sed "s/^/# /" "$TEST_DIR/notes"
test_done
