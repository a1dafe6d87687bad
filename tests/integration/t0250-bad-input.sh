#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Bad input gets a clear error and exit status 1 (127/126 for a command
# that cannot run, as env(1) does), never a crash: unknown events, events
# this machine cannot count, unusable databases, missing commands, bad
# labels, and control requests from users who may not send them.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/workloads/attr.sh"
require_root
require_sampling

SOCK=$TEST_DIR/ctl/dcpid.sock
# nobody runs a copy of dcpictl: the build tree may be in a private clone.
as_nobody() {
	share_programs "$TEST_DIR/nobody-bin" dcpictl &&
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}

test_expect_success 'unknown event names' '
	test_must_fail dcpirun -d db -e cycles,bogus -- true 2>err &&
	grep "unknown event .bogus. (known: cycles, imiss" err &&
	test_must_fail dcpid -f -d db -e Cycles --socket "$SOCK" 2>err &&
	grep "unknown event .Cycles." err &&
	! test -e db/000001
'

# Whether the machine counts instruction-cache misses is the kernel's answer.
if why=$(dcpi-can-sample --counter imiss); then
	test_skip 'only events this machine cannot count' "this machine counts instruction-cache misses"
else
	test_expect_success 'only events this machine cannot count' '
		echo "$why" &&
		test_must_fail dcpirun -d db -e imiss -- true 2>err &&
		cat err &&
		grep "event .imiss. is not available" err &&
		grep "none of the requested events can be sampled here" err &&
		! test -e db/000001
	'
fi

test_expect_success 'bad numbers and labels' '
	test_must_fail dcpirun -d db -F 0 -- true 2>err && grep "bad rate" err &&
	test_must_fail dcpirun -d db -F 1000000 -- true 2>err && grep "bad rate" err &&
	test_must_fail dcpirun -d db -c 12x -- true 2>err && grep "bad period" err &&
	test_must_fail dcpirun -d db --label 123 -- true 2>err && grep "invalid epoch label" err &&
	test_must_fail dcpirun -d db --label a --append -- true 2>err &&
	test_must_fail dcpirun -d db --hash lru -- true 2>err && grep "unknown hash table" err &&
	test_must_fail dcpictl --socket "$SOCK" epoch latest 2>err && grep "invalid epoch label" err
'

test_expect_success 'a database that is not one, or cannot be written' '
	echo hello >notadir &&
	test_must_fail dcpirun -d notadir -- true 2>err && cat err && grep "notadir" err &&
	mkdir other && echo x >other/file &&
	test_must_fail dcpirun -d other -- true 2>err && cat err && grep "not a dcpi database" err &&
	test_must_fail dcpirun -d /proc/dcpi.db -- true 2>err && cat err && grep "/proc/dcpi.db" err &&
	test_must_fail dcpid -f -d /proc/dcpi.db --socket "$SOCK" 2>err && grep "/proc/dcpi.db" err
'

test_expect_success 'a missing command' '
	test_must_fail dcpirun -d db 2>err && grep "no command to run" err &&
	dcpirun -d db -- ./no-such-command 2>err; test $? = 127 &&
	grep "cannot run .\./no-such-command.: No such file or directory" err &&
	echo "#!/bin/sh" >noexec && chmod 644 noexec &&
	dcpirun -d db -- ./noexec 2>err; test $? = 126 &&
	grep "Permission denied" err &&
	! test -e db/000001
'

test_expect_success 'dcpid refuses arguments and bad sockets' '
	test_must_fail dcpid -f -d db --socket "$SOCK" somecommand 2>err && grep "runs no command" err &&
	mkdir -m 777 open && test_must_fail dcpid -f -d db --socket open/s 2>err &&
	grep "writable by others" err &&
	test_must_fail dcpictl --socket "$TEST_DIR/nothing/here" status 2>err &&
	grep "is dcpid running" err
'

test_expect_success 'start a daemon for the socket tests' '
	dcpid -d db --socket "$SOCK" -F 500 >/dev/null 2>err &&
	dcpictl --socket "$SOCK" status >/dev/null
'

test_expect_success 'another user cannot reach the socket' '
	chmod 711 "$TEST_DIR" &&
	as_nobody dcpictl --socket "$SOCK" status 2>err; test $? = 1 &&
	cat err && grep "Permission denied" err
'

test_expect_success 'even through a socket opened up by mistake, SO_PEERCRED refuses them' '
	chmod 755 "$TEST_DIR/ctl" && chmod 666 "$SOCK" &&
	as_nobody dcpictl --socket "$SOCK" quit 2>err; test $? = 1 &&
	cat err && grep "dcpid: permission denied" err &&
	dcpictl --socket "$SOCK" status >/dev/null
'

if ! command -v python3 >/dev/null; then
	test_skip 'malformed requests are answered with an error' \
		"python3 is not installed (scripts/setup-deps installs it)"
else
	test_expect_success 'malformed requests are answered with an error' '
		for req in "reboot\n" "epoch 42\n" "status\x00\n" "$(printf "%0300d" 0)\n" "status"; do
			python3 -c "
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode().decode(\"unicode_escape\").encode(\"latin-1\"))
s.shutdown(socket.SHUT_WR)
print(s.recv(4096).decode())" "$SOCK" "$req" >reply || return 1
			cat reply && grep -q "^error " reply || return 1
		done &&
		dcpictl --socket "$SOCK" status >/dev/null
	'
fi

test_expect_success 'a group may be let in (mode 0660)' '
	dcpictl --socket "$SOCK" quit >/dev/null &&
	wait_for 30 "dcpid to remove its socket" "! test -e \"$SOCK\"" &&
	rm -rf ctl &&
	dcpid -d db --socket "$SOCK" --group nogroup -F 500 >/dev/null 2>err &&
	test "$(stat -c %a:%G "$SOCK")" = 660:nogroup &&
	test "$(stat -c %a:%G "$TEST_DIR/ctl")" = 750:nogroup &&
	as_nobody dcpictl --socket "$SOCK" status >/dev/null &&
	dcpictl --socket "$SOCK" quit >/dev/null
'

stop_daemons
test_done
