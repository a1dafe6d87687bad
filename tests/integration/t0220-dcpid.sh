#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dcpid end to end: start, run workloads, dcpictl epoch, more work,
# dcpictl flush, quit; each epoch holds what ran in it.  Then the classic
# daemon mode, the single-instance lock, SIGTERM and SIGHUP.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/workloads/attr.sh"
require_root
require_sampling

W=$top_builddir/tests/workloads
SOCK=$TEST_DIR/ctl/dcpid.sock
ctl() { dcpictl --socket "$SOCK" "$@"; }

# dcpid on this database with a per-process profile of wl-three (dcpid_start:
# its pid in dcpid.pid), once it answers.
start_dcpid() {
	dcpid_start db "$SOCK" -F 2000 --write-interval 1 \
		--per-process "$(readlink -f $W/wl-three)" "$@"
}

# Runs a command in the background, saves its pid in bg.pid and waits for it.
run_bg() {
	"$@" &
	echo $! >bg.pid
	wait $!
}

test_expect_success 'dcpid starts and answers status' '
	start_dcpid --label first &&
	ctl status >status &&
	cat status &&
	grep -q "^database db" status &&
	grep -q "^cycles  *clock\|^cycles  *cycles" status &&
	grep -q "^cpu  *samples  *rate/s  *last 10 s  *lost  *throttled" status &&
	grep -q "^(rate/s: samples / time up; last 10 s: " status &&
	grep -q "^clock: [0-9.]* MHz, from \(the calibration\|/proc/cpuinfo\)" status &&
	grep -q "^unknown [0-9.]*%" status &&
	grep -q "^hash: stf6, [0-9]* buckets x 6 per CPU, hit rate" status &&
	grep -q "^daemon: [0-9.]*% of the machine.s CPU ([0-9.]* s of [0-9]* CPUs x [0-9]* s), [0-9.]* us per sample" status &&
	test "$(stat -c %a "$SOCK")" = 600 &&
	test "$(stat -c %a "$TEST_DIR/ctl")" = 700
'

test_expect_success 'status --json' '
	ctl --json status >status.json &&
	grep -q "\"samples\": [0-9]" status.json &&
	grep -q "\"hit_rate\": " status.json &&
	grep -q "\"cpu_us_per_sample\": " status.json &&
	grep -q "\"database_bytes\": " status.json &&
	dcpi-disasm-check json status.json
'

# An operator'"'"'s figures add up: each CPU'"'"'s rate is its samples over the
# time up, the peak memory is not below the current, the CPU share is the
# CPU seconds over uptime x CPUs, and no number is rounded.
test_expect_success 'status figures agree with each other, unrounded' '
	$W/wl-three -n 30000000 >/dev/null &&
	ctl --json status >s.json && cat s.json &&
	num() { sed -n "s/^ *\"$1\": \([-0-9.e+]*\),\{0,1\}$/\1/p" s.json | head -n "${2:-1}" | tail -n 1; } &&
	up=$(num uptime_s) && rss=$(num rss_bytes) && peak=$(num peak_rss_bytes) &&
	test "$peak" -ge "$rss" &&
	cpus=$(num cpus_online) && secs=$(num cpu_seconds) && share=$(num cpu_share) &&
	awk -v s="$share" -v c="$secs" -v u="$up" -v n="$cpus" "BEGIN {
		d = s - c / (u * n); exit !(d < 1e-3 && d > -1e-3) }" &&
	n=$(grep -c "\"recent_rate\": " s.json) && test "$n" -ge 1 &&
	for k in $(seq 1 $n); do
		awk -v r="$(sed -n "/\"cpus\"/,\$p" s.json | grep "\"rate\": " | sed -n "${k}s/.*: \([0-9.e+-]*\),/\1/p")" \
		    -v s="$(sed -n "/\"cpus\"/,\$p" s.json | grep "\"samples\": " | sed -n "${k}s/.*: \([0-9]*\),/\1/p")" \
		    -v u="$up" "BEGIN { d = r * u - s; if (d < 0) d = -d; print \"cpu rate \" r \" x \" u \" s = \" r * u \", samples \" s;
			exit !(d <= 2 + 0.02 * s) }" || exit 1
	done &&
	grep "\"mhz\": [0-9]" s.json && grep "\"from\": \"\(calibration\|cpuinfo\)\"" s.json &&
	! grep -q "[0-9]e+0[0-9]" s.json &&
	if grep -q "\"cycles_per_sample\"" s.json; then
		c=$(num cycles_per_sample) && echo "cycles per sample $c" &&
		test ${#c} -ge 5
	fi
'

# Other tests may run wl-three at the same time: this test looks at its
# own runs through their per-process profiles (--per-process).
test_expect_success 'work, a new epoch, more work, a flush: each epoch holds its own' '
	run_bg $W/wl-three -n 100000000 --cpu >out1 && p1=$(cat bg.pid) &&
	ctl epoch second >epoch.out && grep -q "^epoch 2$" epoch.out &&
	run_bg $W/wl-three -n 100000000 --slow --cpu >out2 && p2=$(cat bg.pid) &&
	ctl flush &&
	attr_report db first $W/wl-three $p1 >rep1 && cat rep1 &&
	attr_report db second $W/wl-three $p2 >rep2 && cat rep2 &&
	rate_ok "$(attr_count rep1 @image)" "$(measured out1 cpu)" 2000 0.8 &&
	rate_ok "$(attr_count rep2 @image)" "$(measured out2 cpu)" 2000 0.8 &&
	near "$(attr_share rep1 two @image)" "$(measured out1 two)" "$(share_tol "$(attr_count rep1 @image)")" &&
	near "$(attr_share rep2 two @image)" "$(measured out2 two)" "$(share_tol "$(attr_count rep2 @image)")" &&
	grep -q "^end " db/000001/meta && grep -q "^label second" db/000002/meta
'

test_expect_success 'the kernel image comes with its symbols' '
	dcpi-test-helper symfile db 1 kallsyms >ksyms &&
	head -n 3 ksyms &&
	grep -q "^[0-9a-f]\{16\} [tTwW] " ksyms &&
	test $(wc -c <db/000001/kallsyms) -lt 1000000 &&
	head -c 8 db/000001/kallsyms | grep -q DCPIKSYM
'

test_expect_success 'quit flushes, and the database reads back whole' '
	ctl quit >quit.out && grep -q stopped quit.out &&
	wait_exit $(cat dcpid.pid) &&
	! test -e "$SOCK" &&
	dcpi-test-helper check db >profiles &&
	for e in 000001 000002; do
		awk -v e=${e#00000} "\$1 == e && \$4 == 0 && \$3 == \"cycles\" { s += \$6 } END { print s }" profiles >sum &&
		test "$(cat sum)" = "$(awk "\$1 == \"event\" && \$2 == \"cycles\" { print \$7 }" db/$e/meta)" || return 1
	done
'

# A CPU that idles takes no clock samples: the period is the one requested
# (-F 2000), not the time running over samples: 500 us on the clock, or
# cpu MHz x 500 cycles on a cycles counter.
test_expect_success 'the epochs record the period requested' '
	for e in 000001 000002; do
		grep "^event cycles" db/$e/meta &&
		awk "\$1 == \"cpu_mhz\" { mhz = \$2 }
		     \$1 == \"event\" && \$2 == \"cycles\" { used = \$3; p = \$4; unit = \$5 }
		     END { if (used == \"clock\") exit !(p == 500000 && unit == \"ns\")
			   exit !(used == \"cycles\" && unit == \"events\" && p > mhz * 495 && p < mhz * 505) }" \
			db/$e/meta || return 1
	done
'

test_expect_success 'a restarted dcpid continues its epoch' '
	start_dcpid &&
	ctl status | grep "epoch 2 .second." >/dev/null &&
	ctl quit >/dev/null && wait_exit $(cat dcpid.pid)
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

# With a write interval of ten minutes, only the flush at SIGTERM can have
# written the profiles of what ran.
test_expect_success 'SIGTERM flushes before exiting' '
	ctl quit >/dev/null && wait_exit $(cat dcpid.pid) &&
	start_dcpid --write-interval 600 &&
	cpu_run cpu $W/wl-lib -n 100000000 >/dev/null &&
	kill -TERM $(cat dcpid.pid) && wait_exit $(cat dcpid.pid) &&
	attr_report db latest $W/libwl.so >rep && cat rep &&
	attr_report db latest $W/wl-lib >main && cat main &&
	rate_ok $(($(attr_count rep lib_work) + $(attr_count main main_work))) "$(cat cpu)" 2000 0.7
'

test_expect_success 'daemon mode: detaches, logs to syslog, SIGHUP flushes' '
	dcpid -d db --socket "$SOCK" -F 1000 --new-epoch >/dev/null 2>err &&
	pid=$(cat db/lock) && kill -0 $pid &&
	test "$(ps -o sid= -p $pid | tr -d " ")" = $pid &&
	ctl status >/dev/null &&
	$W/wl-three -n 50000000 >/dev/null &&
	# the write interval is a minute: only SIGHUP writes the profiles this soon
	kill -HUP $pid &&
	wait_for 20 "the profiles SIGHUP writes" \
		"attr_report db latest $W/wl-three >rep && test \$(attr_count rep @image) -gt 10" &&
	ctl quit >/dev/null &&
	wait_exit $pid
'

stop_daemons
test_done
