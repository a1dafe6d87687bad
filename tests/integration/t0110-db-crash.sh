#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Crash safety: a writer merging in a loop is killed with SIGKILL at random
# moments; after each kill every file is readable and no count went backwards.
. "$top_srcdir/tests/lib.sh"

ROUNDS=${DCPI_CRASH_ROUNDS:-100}

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

# Each round the writer is told to stop itself (core/testpoint.h) at the Nth
# atomic write it makes, N at random, either with the new file written and
# synced under its temporary name, or just renamed over the old one with the
# directory not yet synced; it is killed there.  Every round kills a writer
# at work, on any machine, fast or slow.
kill_loop() {
	local i pid point at
	: >prev
	for i in $(seq 1 "$ROUNDS"); do
		point=write-before-rename && [ $((i % 2)) = 0 ] && point=write-after-rename
		at=$((1 + RANDOM % 40))
		stop_at "$point@$at" dcpi-test-helper merge-loop db "$i"
		pid=$stopped_pid
		if ! wait_stopped "$pid"; then
			kill_stopped "$pid"; echo "round $i: the writer never reached $point@$at"; return 1
		fi
		kill_stopped "$pid"
		# killed at a write of the database's creation (which is atomic):
		# no database yet, and nothing half made under its name
		if [ ! -e db ] && [ ! -s prev ]; then
			echo "round $i ($point@$at): killed while the database was made: none yet"
			continue
		fi
		if ! dcpi-test-helper check db >state 2>err; then
			echo "round $i ($point@$at): database unreadable:"; cat err; return 1
		fi
		if ! no_count_went_backwards prev state; then
			echo "round $i ($point@$at): a count went backwards or a profile disappeared"; return 1
		fi
		cp state prev
	done
	echo "final: $(awk '{ t += $6 } END { print t }' state) samples in $(wc -l <state) profiles;" \
		"$ROUNDS writers killed at their stop points"
	test -s state
}

test_expect_success "$ROUNDS SIGKILLs during merges leave a consistent database" '
	kill_loop
'

# The writer stops while it creates the database (its directory complete
# under a temporary name), the first epoch (likewise), or the first files in
# it; killed there, it leaves either no database or a whole one.
create_kill_loop() {
	local i pid point
	for i in $(seq 1 40); do
		rm -rf newdb
		case $((i % 4)) in
		0) point=create-before-rename ;;
		1) point=epoch-before-rename ;;
		2) point=write-before-rename@$((1 + i % 3)) ;;
		3) point=write-after-rename@$((1 + i % 3)) ;;
		esac
		stop_at "$point" dcpi-test-helper merge-loop newdb "$i"
		pid=$stopped_pid
		if ! wait_stopped "$pid"; then
			kill_stopped "$pid"; echo "round $i: the writer never reached $point"; return 1
		fi
		kill_stopped "$pid"
		# Either there is no database yet, or it is a complete one.
		if [ -e newdb ] && ! dcpi-test-helper check newdb >/dev/null 2>err; then
			echo "round $i ($point): half-made database:"; cat err; ls -la newdb; return 1
		fi
		[ $point != create-before-rename ] || [ ! -e newdb ] ||
			{ echo "round $i: the database exists before its rename"; return 1; }
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
