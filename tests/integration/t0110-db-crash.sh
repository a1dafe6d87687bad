#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Crash safety: a writer merging in a loop is killed with SIGKILL at random
# moments; after each kill every file is readable and no count went backwards.
. "$top_srcdir/tests/lib.sh"

ROUNDS=${DCPI_CRASH_ROUNDS:-200}

# Fails if a profile of $1 is missing from $2 or its total went down there.
no_count_went_backwards() {
	awk 'FILENAME == ARGV[1] { t[$1 "/" $2 "/" $3 "/" $4] = $6; next }
		{ seen[$1 "/" $2 "/" $3 "/" $4] = $6 }
		END {
			for (k in t) {
				if (!(k in seen)) { print k " disappeared"; bad = 1 }
				else if (seen[k] < t[k]) { print k " went from " t[k] " to " seen[k]; bad = 1 }
			}
			exit bad
		}' "$1" "$2"
}

# The kill comes 0-40 ms after the writer starts: kills land in reads,
# encodes, writes, fsyncs and renames.  Where a writer needs longer than that
# to merge anything (a slow or busy machine), a round that changed nothing
# doubles the window (up to 2 s) and one that did halves it again, so that
# about half the rounds kill a writer at work on any machine: at least a
# quarter must have merged something.
kill_loop() {
	local i pid win=40 ms moved=0
	: >prev
	for i in $(seq 1 "$ROUNDS"); do
		dcpi-test-helper merge-loop db "$i" &
		pid=$!
		ms=$((win * RANDOM / 32768))
		sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		# Killed before the database came into being: nothing to check.
		[ -e db ] || { win=$((win < 1000 ? win * 2 : 2000)); continue; }
		if ! dcpi-test-helper check db >state 2>err; then
			echo "round $i: database unreadable:"; cat err; return 1
		fi
		if ! no_count_went_backwards prev state; then
			echo "round $i: a count went backwards or a profile disappeared"; return 1
		fi
		if cmp -s prev state; then
			win=$((win < 1000 ? win * 2 : 2000))
		else
			moved=$((moved + 1)) win=$((win > 80 ? win / 2 : 40))
		fi
		cp state prev
	done
	echo "final: $(awk '{ t += $6 } END { print t }' state) samples in $(wc -l <state) profiles;" \
		"$moved of $ROUNDS rounds merged something (kill window $win ms at the end)"
	test -s state && test $moved -ge $((ROUNDS / 4))
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
