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
#
# What a test starts, it stops, on every path:
#   test_register_pid PID WHAT a daemon or server the test started: killed
#                              at the end if still alive (on every path)
#   test_at_end CMD            a command (eval'd) that puts back what the
#                              script set up for all its tests (a tmux
#                              server, a package): run once at the end, on
#                              every path, before "nothing left running"
#   Every process a test starts carries DCPI_TEST_SCRIPT (and, under make
#   check, DCPI_TEST_BUILDDIR) in its environment.  test_done adds a last
#   test, "nothing left running": any such process still alive is named,
#   killed, and fails it; an abnormal exit kills them too.
#
# Crash points instead of timing windows (core/testpoint.h):
#   stop_at POINT[@N] CMD...   runs CMD in the background with
#                              DCPI_TEST_STOP_AT set; sets $stopped_pid
#   wait_stopped PID [SECS]    until PID stopped itself at its point (fails,
#                              saying so, if it exited or did not stop)
#   kill_stopped PID           SIGKILL, then reaps it
#
# Other users and other hosts:
#   share_programs DIR PROG... copies programs (found on PATH) into DIR, which
#                              it makes, reachable by every user (a clone
#                              under /root is not), and puts DIR first on PATH
#   test_load_start / test_load_stop
#                              DCPI_TEST_LOAD=N CPU hogs at normal priority
#                              beside a timing-sensitive test (CI runs those
#                              tests so: tests/timing-sensitive lists them)

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
# Daemons and servers the test registered (test_register_pid), outside $TEST_DIR.
TEST_PIDS=$(mktemp "${TMPDIR:-/tmp}/dcpi-$TEST_NAME.pids.XXXXXX")
# Every process the test starts inherits it: what is left at the end is found by it.
DCPI_TEST_SCRIPT="$TEST_NAME.$$"
export DCPI_TEST_SCRIPT
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
	test_run_at_end
	test_stop_registered quiet
	test_kill_leftovers >/dev/null
	test_load_stop
	rm -f "$TEST_OUT" "$TEST_PIDS"
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
# $TEST_OUT; returns its status (137 if it had to be killed).  The timer is
# this shell's own child, known before anything can stop it: a watchdog
# subshell that started its sleep and was told to stop before it had the
# sleep's pid left a `sleep 300` behind a body that ended at once.
run_bounded() {
	local secs=$1 pid timer done rc
	(cd "$TEST_DIR" && test_eval_body) >"$TEST_OUT" 2>&1 </dev/null &
	pid=$!
	sleep "$secs" </dev/null >/dev/null 2>&1 &
	timer=$!
	done=
	while [ -z "$done" ]; do
		wait -n -p done "$pid" "$timer"
		rc=$?
	done
	if [ "$done" = "$timer" ]; then
		echo "timed out after $secs s: killed" >>"$TEST_OUT"
		kill_tree "$pid"
		wait "$pid" 2>/dev/null
		return 137
	fi
	kill "$timer" 2>/dev/null
	wait "$timer" 2>/dev/null
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
	local left
	test_load_stop
	test_run_at_end
	# A daemon still registered here is one a failed test could not stop.
	test_stop_registered
	left=$(test_kill_leftovers)
	test_count=$((test_count + 1))
	if [ -z "$left" ]; then
		echo "ok $test_count - nothing left running"
	else
		test_failed=$((test_failed + 1))
		echo "not ok $test_count - nothing left running"
		echo "$left" | say_diag
	fi
	echo "1..$test_count"
	[ "$test_failed" -eq 0 ]
	exit $?
}

require_root() {
	[ "$(id -u)" = 0 ] || skip_all "needs root"
}

# The uid the sandboxed workers run as: the package's own user where it
# exists (an installed or once-installed dcpi creates it), else nobody, as
# collect/sandbox.c picks it.
worker_uid() {
	id -u dcpi-worker 2>/dev/null || id -u nobody
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

# flip_byte FILE OFFSET: damages one byte of FILE by inverting it, so that
# it changes whatever it was (a fixed value may already be there).
flip_byte() {
	local b
	b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d " ") && test -n "$b" &&
	printf "\\$(printf %03o $((b ^ 255)))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
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

# test_expect_code N CMD...: CMD exits with status N (2: a report the tools
# printed from partial data, docs/dcpi.7).
test_expect_code() {
	local want=$1 rc
	shift
	"$@"
	rc=$?
	if [ $rc -ne "$want" ]; then
		echo "test_expect_code: exit status $rc (expected $want): $*" >&2
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

# ---- what a test starts, it stops -------------------------------------------

# test_register_pid PID WHAT: a daemon or server this test started; if it is
# still alive when the script ends (a test failed half-way), it is killed.
test_register_pid() {
	echo "$1 ${2:-process}" >>"$TEST_PIDS"
}

test_at_end_cmds=()
test_at_end() {
	test_at_end_cmds+=("$1")
}

# Runs the test_at_end commands (once), in the order they were given.
test_run_at_end() {
	local c
	for c in "${test_at_end_cmds[@]}"; do
		(cd "$TEST_DIR" 2>/dev/null || cd /; eval "$c") </dev/null || true
	done
	test_at_end_cmds=()
}

# Kills the registered processes still alive.  Unless quiet, says so: a
# test that passed should have stopped what it started.
test_stop_registered() {
	local pid what
	[ -s "$TEST_PIDS" ] || return 0
	while read -r pid what; do
		kill -0 "$pid" 2>/dev/null || continue
		[ "${1:-}" = quiet ] || echo "# killing $what (pid $pid): still running at the end"
		kill_tree "$pid"
	done <"$TEST_PIDS"
	: >"$TEST_PIDS"
}

# Prints and kills every live process carrying this script's marker but the
# script's own shell.
test_kill_leftovers() {
	local f pid cmd
	for f in $(grep -lsz "^DCPI_TEST_SCRIPT=$DCPI_TEST_SCRIPT\$" /proc/[0-9]*/environ); do
		pid=${f#/proc/}
		pid=${pid%/environ}
		[ "$pid" = "$TEST_PID" ] && continue
		cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | cut -c 1-160)
		[ -n "$cmd" ] || continue   # gone meanwhile, or a zombie
		echo "left running: pid $pid: $cmd (killed)"
		kill -KILL "$pid" 2>/dev/null
	done
}

# ---- crash points (core/testpoint.h) -------------------------------------------

# stop_at POINT[@N] CMD...: CMD in the background, told to stop itself at the
# point; its pid in $stopped_pid.
stop_at() {
	local spec=$1
	shift
	DCPI_TEST_STOP_AT=$spec "$@" &
	stopped_pid=$!
}

# wait_stopped PID [SECS]: until PID is stopped (state T).  Fails, saying
# why, if it exited first or did not stop within SECS (60).
wait_stopped() {
	local pid=$1 secs=${2:-60} end state
	end=$(($(date +%s%N) + secs * 1000000000))
	while :; do
		state=$(sed -n 's/^[0-9]* (.*) \([A-Za-z]\) .*/\1/p' "/proc/$pid/stat" 2>/dev/null)
		case "$state" in
		T) return 0 ;;
		''|Z|X) echo "process $pid exited before it reached its stop point" >&2; return 1 ;;
		esac
		if [ "$(date +%s%N)" -ge "$end" ]; then
			echo "process $pid did not reach its stop point in $secs s (state $state)" >&2
			return 1
		fi
		sleep 0.01
	done
}

# kill_stopped PID: kills a stopped (or running) child and reaps it.
kill_stopped() {
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

# record_bursts DB MIN [dcpirun options] -- COMMAND...: epoch 1 of DB
# recorded with the options, appended again until it holds MIN bursts
# followed (its paths_bursts counter) or 8 runs: a burst takes its budget's
# share of the CPU sampled, and a loaded host can lose a short run's only
# one.  RUNS is set to the runs made (counts known by construction are
# that many times one run's).
record_bursts() {
	local db=$1 min=$2 got=0
	shift 2
	RUNS=0
	while [ $RUNS -lt 8 ]; do
		dcpirun -q -d "$db" $([ $RUNS -gt 0 ] && echo --append) "$@" >/dev/null || return 1
		RUNS=$((RUNS + 1))
		got=$(awk '$1 == "counter" && $2 == "paths_bursts" { print $3 }' "$db/000001/meta")
		[ "${got:-0}" -ge "$min" ] && break
	done
	echo "# $db: ${got:-0} bursts followed in $RUNS runs"
}

# ---- other users, other hosts ------------------------------------------------------

# share_programs DIR PROG...: copies of the programs, in DIR (made, mode
# 0755, with every directory up to it reachable), first on PATH: a test that
# acts as another user runs these, never the build tree's, which another user
# cannot reach when the clone is private (/root is 0700).
share_programs() {
	local dir=$1 p src d
	shift
	mkdir -p "$dir" && chmod 755 "$dir" || return 1
	d=$dir
	while d=$(dirname "$d") && [ "$d" != / ]; do
		case "$d" in "$TEST_DIR"|"$TEST_DIR"/*|/tmp|/var/tmp) chmod o+x "$d" || return 1 ;; esac
	done
	for p in "$@"; do
		src=$(command -v "$p") || { echo "share_programs: no $p on PATH" >&2; return 1; }
		cp "$src" "$dir/$(basename "$p")" && chmod 755 "$dir/$(basename "$p")" || return 1
	done
	PATH="$dir:$PATH"
	export PATH
}

# test_load_start: DCPI_TEST_LOAD (0 by default) busy loops at normal
# priority, stopped by test_load_stop or at the end.  CI runs the tests
# listed in tests/timing-sensitive under DCPI_TEST_LOAD=2: their thresholds
# must hold on a loaded host.
test_load_start() {
	local i n=${DCPI_TEST_LOAD:-0}
	for i in $(seq 1 "$n"); do
		( trap - EXIT; while :; do :; done ) &
		echo $! >>"$TEST_PIDS.load"
	done
	[ "$n" = 0 ] || echo "# DCPI_TEST_LOAD=$n: $n busy loops beside this test"
}

test_load_stop() {
	local pid
	[ -f "$TEST_PIDS.load" ] || return 0
	for pid in $(cat "$TEST_PIDS.load"); do kill -KILL "$pid" 2>/dev/null; done
	rm -f "$TEST_PIDS.load"
}

test_load_start
