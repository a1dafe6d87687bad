# SPDX-License-Identifier: GPL-2.0-or-later
# tests/lib.sh - a small TAP test library for dcpi's shell tests (after git's
# t/test-lib.sh).  Source it from tests/integration/tNNNN-name.sh:
#
#   . "$top_srcdir/tests/lib.sh"
#   test_expect_success 'what it checks' '
#           cmd1 && cmd2
#   '
#   test_done
#
# Each test body runs in a subshell inside $TEST_DIR (a fresh temp directory
# per script, removed at the end unless DCPI_TEST_KEEP=1 or a test failed),
# with `set -o pipefail` (a pipeline fails if any command in it fails: mind
# consumers that stop reading early, like head or grep -q, which kill a
# writer with SIGPIPE) and a time limit (DCPI_TEST_TIMEOUT seconds, 300 by
# default: a hung tool fails its test instead of hanging the suite).  A
# failing body prints its output as TAP diagnostics.  Helpers:
#   skip_all REASON            skip the whole script (TAP "1..0 # SKIP"); the
#                              reason must be about the machine, never "not
#                              built" (make check builds everything)
#   test_skip DESC REASON      report one skipped test
#   bail_out REASON            stop the script as an error (TAP "Bail out!")
#   require_root               skip_all unless root
#   require_sampling [--kernel]  skip_all unless the kernel lets this user
#                              sample (dcpi-can-sample asks it, not dcpirun)
#   can_sample [--kernel]      the same as a condition (prints the reason)
#   wait_for SECS WHAT CMD...  polls CMD (eval'd) until it succeeds; after
#                              SECS fails with "timed out ... waiting for WHAT"
#   wait_exit PID [SECS]       waits (30 s) until PID has exited
#   test_must_fail CMD...      succeeds if CMD exits 1 (not crash/signal)
#   test_cmp EXPECTED ACTUAL   diff -u
#   test_grep PATTERN FILE     grep with a diagnostic on failure
#   test_nonempty FILE         fails, saying so, if FILE is missing or empty

set -u
set -o pipefail
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
export top_srcdir top_builddir
PATH="$top_builddir/tools:$top_builddir/collect:$top_builddir/tui:$top_builddir/tests/helper:$top_builddir/tests/programs:$top_builddir/tests/workloads:$PATH"
export PATH
export LC_ALL=C.UTF-8 TZ=UTC
unset DCPI_DB

test_count=0
test_failed=0
TEST_NAME=$(basename "$0" .sh)
TEST_DIR=$(mktemp -d "${TMPDIR:-/tmp}/dcpi-$TEST_NAME.XXXXXX")
# A body's output, kept outside $TEST_DIR (which tests list and search).
TEST_OUT=$(mktemp "${TMPDIR:-/tmp}/dcpi-$TEST_NAME.out.XXXXXX")
TEST_PID=$$
trap 'test_cleanup' EXIT
cd "$TEST_DIR" || exit 1

# True in the test's own shell, false in a subshell of it.  EXIT traps must
# check it: bash runs its parent's EXIT trap in a subshell that a signal
# ends before the subshell has reset its traps.  run_bounded's watchdog,
# killed as soon as a quick body ends, did so once in CI and removed
# $TEST_DIR under the tests still to run.
in_test_shell() {
	[ "$BASHPID" = "$TEST_PID" ]
}

test_cleanup() {
	in_test_shell || return 0
	cd /
	rm -f "$TEST_OUT"
	if [ "${DCPI_TEST_KEEP:-0}" = 1 ] || [ "$test_failed" -gt 0 ]; then
		echo "# test directory kept: $TEST_DIR"
	else
		rm -rf "$TEST_DIR"
	fi
}

skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}

bail_out() {
	echo "Bail out! $*"
	exit 1
}

say_diag() {
	sed 's/^/# /'
}

# kill_tree PID: stops PID, kills its descendants, then PID (SIGKILL).
kill_tree() {
	local c
	kill -STOP "$1" 2>/dev/null
	for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		kill_tree "$c"
	done
	kill -KILL "$1" 2>/dev/null
}

# The body runs in a function, so that "return 1" in it fails the test (in a
# bare eval it is an error that the body goes on after).
test_eval_body() {
	eval "$body"
}

# run_bounded SECS: runs the body in $body with a time limit, output in
# $TEST_OUT; returns its status (137 if it had to be killed).
run_bounded() {
	local secs=$1 pid wd rc
	(cd "$TEST_DIR" && test_eval_body) >"$TEST_OUT" 2>&1 </dev/null &
	pid=$!
	(
		trap 'kill $s 2>/dev/null; exit 0' TERM
		sleep "$secs" & s=$!
		wait $s
		echo "timed out after $secs s: killed" >>"$TEST_OUT"
		kill_tree $pid
	) >/dev/null 2>&1 &
	wd=$!
	wait $pid
	rc=$?
	kill -TERM $wd 2>/dev/null
	wait $wd
	return $rc
}

test_expect_success() {
	local desc=$1 body=$2
	test_count=$((test_count + 1))
	if run_bounded "${DCPI_TEST_TIMEOUT:-300}"; then
		echo "ok $test_count - $desc"
	else
		test_failed=$((test_failed + 1))
		echo "not ok $test_count - $desc"
		tail -n 40 "$TEST_OUT" | say_diag
	fi
}

test_skip() {
	test_count=$((test_count + 1))
	echo "ok $test_count - $1 # SKIP $2"
}

test_done() {
	echo "1..$test_count"
	[ "$test_failed" -eq 0 ]
	exit $?
}

require_root() {
	[ "$(id -u)" = 0 ] || skip_all "needs root"
}

# Whether this machine lets this user sample is the kernel's answer
# (dcpi-can-sample opens a cpu-clock event with perf_event_open and waits for
# a sample), never dcpirun's: a broken collector must fail the tests.
can_sample() {
	command -v dcpi-can-sample >/dev/null ||
		bail_out "dcpi-can-sample is missing from $top_builddir/tests/helper (make check builds it)"
	dcpi-can-sample "$@"
}

require_sampling() {
	local why
	why=$(can_sample "$@") || skip_all "this machine cannot sample: $why"
}

# wait_for SECS WHAT CMD...: polls CMD (eval'd: "! kill -0 $pid" works)
# every 50 ms until it succeeds; fails after SECS with a message.
wait_for() {
	local secs=$1 what=$2 end
	shift 2
	end=$(($(date +%s%N) + secs * 1000000000))
	until eval "$*"; do
		if [ "$(date +%s%N)" -ge "$end" ]; then
			echo "timed out after $secs s waiting for $what" >&2
			return 1
		fi
		sleep 0.05
	done
}

# wait_exit PID [SECS]: until PID (which need not be our child) has exited.
wait_exit() {
	wait_for "${2:-30}" "process $1 to exit" "! kill -0 $1 2>/dev/null"
}

test_must_fail() {
	"$@"
	local rc=$?
	if [ $rc -eq 0 ]; then
		echo "test_must_fail: command succeeded: $*" >&2
		return 1
	elif [ $rc -gt 128 ]; then
		echo "test_must_fail: command died by signal $((rc - 128)): $*" >&2
		return 1
	elif [ $rc -ne 1 ]; then
		echo "test_must_fail: exit status $rc (expected 1): $*" >&2
		return 1
	fi
	return 0
}

test_cmp() {
	diff -u "$1" "$2"
}

test_nonempty() {
	if [ ! -s "$1" ]; then
		echo "test_nonempty: $1 is missing or empty: nothing to compare" >&2
		return 1
	fi
}

test_grep() {
	if ! grep -q -e "$1" "$2"; then
		echo "test_grep: '$1' not found in $2:" >&2
		head -n 30 "$2" >&2
		return 1
	fi
}
