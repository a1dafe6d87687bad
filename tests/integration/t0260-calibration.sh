#!/bin/bash
# The collector measures the cycles per clock sample (collect/calib.h) and
# records them in the epoch's meta (`calib` line): dcpirun before the
# command runs, --append merging runs, --no-calibrate; dcpid on every CPU at
# each epoch's start; what it costs; dcpicalc using it and saying so.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/workloads/attr.sh"
collect_require_sampling
[ "$(uname -m)" = x86_64 ] || skip_all "the calibration loop is x86-64 only"

W=$top_builddir/tests/workloads

# calib FIELD of an epoch's meta (3 cycles, 4 period, 5 intervals, 6 MHz, 7 how)
calib() { # DB EPOCH FIELD
	awk -v f="$3" '$1 == "calib" { print $f }' "$1/$2/meta"
}

test_expect_success 'dcpirun records the measured cycles per sample' '
	dcpirun -d db -F 10000 -- $W/wl-three -n 20000000 >/dev/null 2>err &&
	cat err &&
	if grep -q "^event cycles cycles" db/000001/meta; then
		echo "a cycles counter: nothing to calibrate" && ! grep -q "^calib" db/000001/meta
	else
		grep "^calib cycles [0-9.]* 100000 [0-9]* [0-9.]* addloop$" db/000001/meta &&
		C=$(calib db 000001 3) && M=$(calib db 000001 6) &&
		test "$(calib db 000001 5)" -ge 16 &&
		# a plausible clock, and fewer cycles than the period at that clock
		# (each sample costs the task time), but not less than half
		awk -v c="$C" -v m="$M" "BEGIN { exit !(m > 200 && m < 10000 &&
			c < 100 * m * 1.02 && c > 50 * m) }" &&
		# the summary line says so, and what it cost (CPU ms): tens of ms
		ms=$(sed -n "s/.*1 sample = [0-9]* cycles (calibrated in \([0-9]*\) ms).*/\1/p" err) &&
		echo "calibration took $ms ms" &&
		test -n "$ms" && test "$ms" -lt 400
	fi
'

has_calib() { grep -q "^calib" db/000001/meta; }

test_expect_success '--append merges the runs (interval-weighted)' '
	if has_calib; then
		I1=$(calib db 000001 5) &&
		dcpirun -q -d db -F 10000 --append -- $W/wl-three -n 5000000 >/dev/null &&
		test "$(grep -c "^calib" db/000001/meta)" = 1 &&
		test "$(calib db 000001 5)" -gt "$I1"
	fi
'

test_expect_success '--no-calibrate: no calib line; dcpicalc falls back to cpu MHz and says so' '
	dcpirun -q -d db -F 10000 --no-calibrate -- $W/wl-three -n 5000000 >/dev/null &&
	! grep -q "^calib" db/000002/meta &&
	if has_calib; then
		dcpicalc -d db -E 2 three >out &&
		test_grep "1 sample = [0-9]* cycles (period x cpu MHz, not calibrated)" out
	fi
'

test_expect_success 'dcpicalc uses the calibration and says so (text and JSON)' '
	if has_calib; then
		dcpicalc -d db -E 1 three >out &&
		test_grep "1 sample = [0-9]* cycles (calibrated), skid 1" out &&
		dcpicalc -d db -E 1 --json three >j &&
		grep -q "\"period_source\": \"calibrated\"" j
	fi
'

test_expect_success 'a different rate in the appended run: the calibration moves to it' '
	if has_calib; then
		dcpirun -q -d db -F 10000 --label rate -- $W/wl-three -n 5000000 >/dev/null &&
		dcpirun -q -d db -F 5000 --append --no-calibrate -- $W/wl-three -n 5000000 >/dev/null &&
		dcpicalc -d db -E rate three >out &&
		test_grep "cycles (calibrated-scaled)" out
	fi
'

SOCK=$TEST_DIR/ctl/dcpid.sock
ctl() { dcpictl --socket "$SOCK" "$@"; }

start_dcpid() {
	local i
	dcpid -f -d sys --socket "$SOCK" -F 2000 --write-interval 1 "$@" >/dev/null 2>>dcpid.err &
	echo $! >dcpid.pid
	for i in $(seq 100); do
		[ -S "$SOCK" ] && ctl status >/dev/null 2>&1 && return 0
		kill -0 $(cat dcpid.pid) 2>/dev/null || break
		sleep 0.1
	done
	cat dcpid.err
	return 1
}

if [ "$(id -u)" != 0 ]; then
	test_skip 'dcpid calibrates on every CPU at each epoch' 'needs root'
else
	test_expect_success 'dcpid calibrates on every CPU at each epoch' '
		start_dcpid &&
		ctl status >status && cat status &&
		ctl status --json >status.json &&
		ctl epoch second >/dev/null &&
		ctl quit >/dev/null &&
		while kill -0 $(cat dcpid.pid) 2>/dev/null; do sleep 0.1; done &&
		if grep -q "^event cycles clock" sys/000001/meta; then
			test_grep "^calibrated: 1 sample = [0-9]* cycles (loop at [0-9]* MHz, [0-9]* intervals, [0-9]* ms)$" status &&
			grep -q "\"cycles_per_sample\"" status.json &&
			grep "^calib cycles [0-9.]* 500000 [0-9]* [0-9.]* addloop$" sys/000001/meta &&
			grep "^calib cycles [0-9.]* 500000 [0-9]* [0-9.]* addloop$" sys/000002/meta &&
			# 16 or more intervals on each CPU
			test "$(calib sys 000001 5)" -ge $((16 * $(nproc)))
		fi
	'
fi

test_done
