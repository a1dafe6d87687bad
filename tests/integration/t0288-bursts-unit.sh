#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Bursts under dcpid.service's settings, without systemd: dcpid and dcpirun
# run under the seccomp filter MemoryDenyWriteExecute=yes implies
# (tests/helper/dcpi-mdwe).  A forked emulating worker inherits it and
# cannot make its code buffer: bursts are off, and the run summary and
# dcpictl status say why.  Workers of the dcpi-emulate socket service
# (started here by systemd-socket-activate --accept, as dcpi-emulate.socket
# would) are under no such filter: bursts then take as many instructions
# as without it.
. "$top_srcdir/tests/lib.sh"
require_root
require_sampling
command -v python3 >/dev/null || skip_all "python3 is needed to read the JSON"

W=$top_builddir/tests/workloads
SOCK=$TEST_DIR/ctl/dcpid.sock
EMU=$TEST_DIR/emulate.sock

# bursts ERRFILE: "BURSTS INSTRUCTIONS" of a dcpirun summary.
bursts() { sed -n 's/.*, \([0-9]*\) bursts of \([0-9]*\) instructions.*/\1 \2/p' "$1"; }

test_expect_success 'a forked worker under the filter: bursts off, the summary says why' '
	dcpi-mdwe dcpirun -d off.db -F 2000 --bursts=10 -- $W/wl-three -s 1 >out 2>err &&
	cat err &&
	grep -q "bursts off: no executable memory (MemoryDenyWriteExecute)" err &&
	test "$(bursts err)" = "0 0" &&
	grep -q "^three " out
'

test_expect_success 'dcpid under the filter: dcpictl status says why, text and JSON' '
	mkdir -p ctl &&
	{ dcpi-mdwe dcpid -f -d offd.db --socket "$SOCK" -F 1000 --bursts=10 --values-users=root \
		--write-interval 1 >/dev/null 2>dcpid.err & } &&
	daemon=$! && test_register_pid $daemon dcpid &&
	wait_for 30 "dcpid to answer" "dcpictl --socket \"$SOCK\" status >/dev/null 2>&1" &&
	$W/wl-three -s 1 >/dev/null &&
	dcpictl --socket "$SOCK" status >status.txt &&
	dcpictl --socket "$SOCK" --json status >status.json &&
	dcpictl --socket "$SOCK" quit && wait_exit $daemon &&
	grep "emulating workers" status.txt &&
	grep -q "bursts off: no executable memory" status.txt &&
	python3 -c "
import json
e = json.load(open(\"status.json\"))[\"emulation\"]
print(e)
assert e[\"off\"] == \"no_exec\", e
"
'

if ! command -v systemd-socket-activate >/dev/null; then
	test_skip 'workers of the dcpi-emulate socket service' 'no systemd-socket-activate (systemd)'
	test_done
fi

test_expect_success 'the dcpi-emulate service listens (as its socket unit would)' '
	{ systemd-socket-activate --accept -l "$EMU" dcpi-emulate >activate.log 2>&1 & } &&
	echo $! >activate.pid && test_register_pid $(cat activate.pid) "the socket activator" &&
	wait_for 10 "the socket" "test -S \"$EMU\""
'

test_expect_success 'dcpirun under the filter with the service: as many instructions a burst as without it' '
	dcpirun -d free.db -F 2000 --bursts=10 -- $W/wl-three -s 2 >out 2>free.err &&
	dcpi-mdwe dcpirun -d unit.db -F 2000 --bursts=10 --emulate-socket "$EMU" \
		-- $W/wl-three -s 2 >out 2>unit.err &&
	cat free.err unit.err &&
	! grep -q "bursts off" unit.err &&
	set -- $(bursts free.err) && fb=$1 fi=$2 &&
	set -- $(bursts unit.err) && ub=$1 ui=$2 &&
	test "$ub" -ge 1 && test "$fb" -ge 1 &&
	awk -v fb=$fb -v fi=$fi -v ub=$ub -v ui=$ui "BEGIN {
		printf \"%d bursts of %.0f instructions each without the filter, %d of %.0f with it\\n\",
			fb, fi / fb, ub, ui / ub; exit !(ui / ub >= 0.5 * fi / fb) }"
'

test_expect_success 'dcpid under the filter with the service: bursts, and their workers CPU in its overhead' '
	{ dcpi-mdwe dcpid -f -d unitd.db --socket "$SOCK" -F 1000 --bursts=10 --values-users=root \
		--emulate-socket "$EMU" --write-interval 1 >/dev/null 2>dcpid.err & } &&
	daemon=$! && test_register_pid $daemon dcpid &&
	wait_for 30 "dcpid to answer" "dcpictl --socket \"$SOCK\" status >/dev/null 2>&1" &&
	$W/wl-three -s 3 >/dev/null &&
	dcpictl --socket "$SOCK" --json status >status.json &&
	dcpictl --socket "$SOCK" quit && wait_exit $daemon &&
	cat dcpid.err &&
	python3 -c "
import json
s = json.load(open(\"status.json\"))
b, e, o = s[\"bursts\"], s[\"emulation\"], s[\"overhead\"]
print(b[\"bursts\"], \"bursts;\", e, o)
assert e[\"off\"] is None and b[\"bursts\"] >= 1, (b, e)
assert o[\"emulating_s\"] > 0, o
" &&
	dcpidb -d unitd.db check
'

test_expect_success 'the service stops; its workers end with their connections' '
	kill $(cat activate.pid) && wait_exit $(cat activate.pid) &&
	wait_for 10 "the workers to end" "! pgrep -x dcpi-emulate -P $(cat activate.pid) >/dev/null"
'

test_done
