#!/bin/bash
# dcpid end to end: start, run workloads, dcpictl epoch, more work,
# dcpictl flush, quit; each epoch holds what ran in it.  Then the classic
# daemon mode, the single-instance lock, SIGTERM and SIGHUP.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/workloads/attr.sh"
require_root
collect_require_sampling

W=$top_builddir/tests/workloads
SOCK=$TEST_DIR/ctl/dcpid.sock
ctl() { dcpictl --socket "$SOCK" "$@"; }

# Starts dcpid in the foreground (a background job of this test body,
# which runs in a subshell: its pid goes to a file); waits for its socket.
start_dcpid() {
	local i
	dcpid -f -d db --socket "$SOCK" -F 2000 --write-interval 1 \
		--per-process "$(readlink -f $W/wl-three)" "$@" >/dev/null 2>>dcpid.err &
	echo $! >dcpid.pid
	for i in $(seq 100); do
		[ -S "$SOCK" ] && ctl status >/dev/null 2>&1 && return 0
		kill -0 $(cat dcpid.pid) 2>/dev/null || break
		sleep 0.1
	done
	cat dcpid.err
	return 1
}

# Runs a command in the background, saves its pid in bg.pid and waits for it.
run_bg() {
	"$@" &
	echo $! >bg.pid
	wait $!
}

# Waits until a process has exited (it need not be our child).
wait_gone() {
	local i
	for i in $(seq 100); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	echo "process $1 did not exit"
	return 1
}

test_expect_success 'dcpid starts and answers status' '
	start_dcpid --label first &&
	ctl status >status &&
	cat status &&
	grep -q "^database db" status &&
	grep -q "^cycles  *clock\|^cycles  *cycles" status &&
	grep -q "^cpu  *samples  *rate/s  *lost  *throttled" status &&
	grep -q "^unknown [0-9.]*%" status &&
	grep -q "^hash: stf6, [0-9]* buckets x 6 per CPU, hit rate" status &&
	grep -q "^daemon: [0-9.]* us CPU per sample" status &&
	test "$(stat -c %a "$SOCK")" = 600 &&
	test "$(stat -c %a "$TEST_DIR/ctl")" = 700
'

test_expect_success 'status --json' '
	ctl --json status >status.json &&
	grep -q "\"samples\": [0-9]" status.json &&
	grep -q "\"hit_rate\": " status.json &&
	grep -q "\"cpu_us_per_sample\": " status.json &&
	grep -q "\"database_bytes\": " status.json &&
	if command -v python3 >/dev/null; then python3 -m json.tool status.json >/dev/null; fi
'

# Other tests may run wl-three at the same time: this test looks at its
# own runs through their per-process profiles (--per-process).
test_expect_success 'work, a new epoch, more work, a flush: each epoch holds its own' '
	run_bg $W/wl-three >out1 && p1=$(cat bg.pid) &&
	ctl epoch second >epoch.out && grep -q "^epoch 2$" epoch.out &&
	run_bg $W/wl-three --slow >out2 && p2=$(cat bg.pid) &&
	ctl flush &&
	attr_report db first $W/wl-three $p1 >rep1 && cat rep1 &&
	attr_report db second $W/wl-three $p2 >rep2 && cat rep2 &&
	test "$(attr_count rep1 @image)" -ge 1000 &&
	test "$(attr_count rep2 @image)" -ge 1000 &&
	near "$(attr_share rep1 two @image)" 0.333 0.05 &&
	near "$(attr_share rep2 two @image)" 0.5 0.05 &&
	grep -q "^end " db/000001/meta && grep -q "^label second" db/000002/meta
'

test_expect_success 'the kernel image comes with its symbols' '
	test -s db/000001/kallsyms &&
	head -n 3 db/000001/kallsyms &&
	grep -q "^[0-9a-f]\{16\} [tTwW] " db/000001/kallsyms &&
	test $(wc -c <db/000001/kallsyms) -lt 1000000
'

test_expect_success 'quit flushes, and the database reads back whole' '
	ctl quit >quit.out && grep -q stopped quit.out &&
	wait_gone $(cat dcpid.pid) &&
	! test -e "$SOCK" &&
	dcpi-test-helper check db >profiles &&
	for e in 000001 000002; do
		awk -v e=${e#00000} "\$1 == e && \$4 == 0 && \$3 == \"cycles\" { s += \$6 } END { print s }" profiles >sum &&
		test "$(cat sum)" = "$(awk "\$1 == \"event\" && \$2 == \"cycles\" { print \$7 }" db/$e/meta)" || return 1
	done
'

# A CPU that idles takes no clock samples: the period is the one requested
# (-F 2000), not the time running over samples.
test_expect_success 'the epochs record the clock period requested' '
	for e in 000001 000002; do
		grep "^event cycles" db/$e/meta &&
		awk "\$1 == \"event\" && \$2 == \"cycles\" && \$3 == \"clock\" { exit !(\$4 == 500000 && \$5 == \"ns\") }" db/$e/meta || return 1
	done
'

test_expect_success 'a restarted dcpid continues its epoch' '
	start_dcpid &&
	ctl status | grep -q "epoch 2 .second." &&
	ctl quit >/dev/null && wait_gone $(cat dcpid.pid)
'

test_expect_success 'one dcpid per database' '
	start_dcpid &&
	dcpid -f -d db --socket "$TEST_DIR/ctl/other.sock" 2>err; test $? = 1 &&
	grep "in use by another writer" err
'

test_expect_success 'one dcpid per socket' '
	dcpid -f -d db3 --socket "$SOCK" 2>err; test $? = 1 &&
	grep "another dcpid is listening" err
'

test_expect_success 'SIGTERM flushes before exiting' '
	$W/wl-lib -n 100000000 >/dev/null &&
	kill -TERM $(cat dcpid.pid) && wait_gone $(cat dcpid.pid) &&
	attr_report db latest $W/libwl.so >rep && cat rep &&
	test "$(attr_count rep lib_work)" -gt 100
'

test_expect_success 'daemon mode: detaches, logs to syslog, SIGHUP flushes' '
	dcpid -d db --socket "$SOCK" -F 1000 --new-epoch >/dev/null 2>err &&
	pid=$(cat db/lock) && kill -0 $pid &&
	test "$(ps -o sid= -p $pid | tr -d " ")" = $pid &&
	ctl status >/dev/null &&
	$W/wl-three -n 50000000 >/dev/null &&
	kill -HUP $pid && sleep 1 &&
	attr_report db latest $W/wl-three >rep && test "$(attr_count rep @image)" -gt 10 &&
	ctl quit >/dev/null &&
	wait_gone $pid
'

stop_daemons
test_done
