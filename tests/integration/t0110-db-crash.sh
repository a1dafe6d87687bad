#!/bin/bash
# Crash safety: a writer merging in a loop is killed with SIGKILL at random
# moments; after each kill every file is readable and no count went backwards.
. "$top_srcdir/tests/lib.sh"

ROUNDS=${DCPI_CRASH_ROUNDS:-200}

# Fails if any profile's total in $2 is below its total in $1.
no_count_went_backwards() {
	join <(awk '{ print $1 "/" $2 "/" $3 "/" $4, $6 }' "$1" | sort) \
	     <(awk '{ print $1 "/" $2 "/" $3 "/" $4, $6 }' "$2" | sort) |
		awk '$3 < $2 { print $1 " went from " $2 " to " $3; bad = 1 } END { exit bad }'
}

kill_loop() {
	local i pid
	: >prev
	for i in $(seq 1 "$ROUNDS"); do
		dcpi-test-helper merge-loop db "$i" &
		pid=$!
		# 0-40 ms: kills land in reads, encodes, writes, fsyncs and renames.
		sleep "0.0$((RANDOM % 4))$((RANDOM % 10))"
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		# Killed before the database came into being: nothing to check.
		[ -e db ] || continue
		if ! dcpi-test-helper check db >state 2>err; then
			echo "round $i: database unreadable:"; cat err; return 1
		fi
		if ! no_count_went_backwards prev state; then
			echo "round $i: a count went backwards"; return 1
		fi
		# A profile may not disappear either.
		if [ "$(wc -l <state)" -lt "$(wc -l <prev)" ]; then
			echo "round $i: a profile disappeared"; return 1
		fi
		cp state prev
	done
	echo "final: $(awk '{ t += $6 } END { print t }' state) samples in $(wc -l <state) profiles"
	test -s state
}

test_expect_success "$ROUNDS SIGKILLs during merges leave a consistent database" '
	kill_loop
'

create_kill_loop() {
	local i pid
	for i in $(seq 1 40); do
		rm -rf newdb
		dcpi-test-helper merge-loop newdb "$i" &
		pid=$!
		sleep "0.00$((RANDOM % 10))"
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		# Either there is no database yet, or it is a complete one.
		if [ -e newdb ] && ! dcpi-test-helper check newdb >/dev/null 2>err; then
			echo "round $i: half-made database:"; cat err; ls -la newdb; return 1
		fi
	done
}

test_expect_success 'SIGKILL while a database is being created never leaves half of one' '
	create_kill_loop
'

# A kill lands anywhere, not always between a temporary file's creation and
# its rename: what a writer killed mid-write leaves (names as db/fsio.c makes
# them: a file, and a directory of a half-made epoch) is planted as well, so
# that there is always something to clean up.
test_expect_success 'no temporary files survive the next writer' '
	dcpi-test-helper merge-loop db 1 & pid=$!
	wait_for 30 "the writer to create epoch 1" "test -s db/000001/meta" &&
	kill -9 $pid && wait $pid 2>/dev/null
	echo partial >db/000001/.tmp.aaaa.cycles.prof.0123456789abcdef &&
	mkdir db/.tmp.000002.0123456789abcdef && echo partial >db/.tmp.000002.0123456789abcdef/meta &&
	test "$(ls -a db db/000001 | grep -c "^\.tmp\.")" -ge 2 &&
	# Opening the database for writing removes what a killed writer left.
	dcpi-test-helper build db </dev/null && ! ls -a db db/000001 | grep "^\.tmp\."
'

test_done
