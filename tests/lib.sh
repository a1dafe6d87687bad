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
# per script, removed at the end unless DCPI_TEST_KEEP=1). A failing body
# prints its output as TAP diagnostics.  Helpers:
#   skip_all REASON            skip the whole script (TAP "1..0 # SKIP")
#   test_skip DESC REASON      report one skipped test
#   require_root               skip_all unless root
#   require_perf_events        skip_all unless perf_event_open works here
#   test_must_fail CMD...      succeeds if CMD exits 1 (not crash/signal)
#   test_cmp EXPECTED ACTUAL   diff -u
#   test_grep PATTERN FILE     grep with a diagnostic on failure

set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
export top_srcdir top_builddir
PATH="$top_builddir/tools:$top_builddir/collect:$top_builddir/tui:$top_builddir/tests/helper:$top_builddir/tests/workloads:$PATH"
export PATH
export LC_ALL=C.UTF-8 TZ=UTC
unset DCPI_DB

test_count=0
test_failed=0
TEST_NAME=$(basename "$0" .sh)
TEST_DIR=$(mktemp -d "${TMPDIR:-/tmp}/dcpi-$TEST_NAME.XXXXXX")
trap 'test_cleanup' EXIT
cd "$TEST_DIR" || exit 1

test_cleanup() {
	cd /
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

say_diag() {
	sed 's/^/# /'
}

test_expect_success() {
	local desc=$1 body=$2 out
	test_count=$((test_count + 1))
	out=$(cd "$TEST_DIR" && (eval "$body") 2>&1)
	if [ $? -eq 0 ]; then
		echo "ok $test_count - $desc"
	else
		test_failed=$((test_failed + 1))
		echo "not ok $test_count - $desc"
		printf '%s\n' "$out" | tail -n 40 | say_diag
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

# perf_event_open works if `dcpirun`'s probe (or perf) can open a cpu-clock
# event on this process.
require_perf_events() {
	if [ -r /proc/sys/kernel/perf_event_paranoid ]; then
		local p
		p=$(cat /proc/sys/kernel/perf_event_paranoid)
		if [ "$(id -u)" != 0 ] && [ "$p" -gt 2 ]; then
			skip_all "perf_event_paranoid=$p forbids sampling"
		fi
	else
		skip_all "no perf_event support in this kernel"
	fi
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

test_grep() {
	if ! grep -q -e "$1" "$2"; then
		echo "test_grep: '$1' not found in $2:" >&2
		head -n 30 "$2" >&2
		return 1
	fi
}
