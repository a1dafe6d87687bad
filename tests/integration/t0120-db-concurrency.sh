#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Readers never see a torn file while a writer merges, and only one writer
# can hold the database.
. "$top_srcdir/tests/lib.sh"

# The writer must have written profiles before the reader starts (it creates
# the database, then merges into three profiles over and over).
has_profiles() {
	test "$(ls db/000001 2>/dev/null | grep -c "\.prof$")" -ge 3
}

test_expect_success 'a reader loading profiles during merges never fails' '
	dcpi-test-helper merge-loop db 7 & writer=$!
	wait_for 30 "the writer to merge its first profiles" has_profiles &&
	dcpi-test-helper read-loop db 3 >reads 2>err; rc=$?
	kill -9 $writer; wait $writer 2>/dev/null
	cat reads err
	test $rc = 0 && test "$(cut -d" " -f1 reads)" -gt 10
'

test_expect_success 'a second writer is refused with a clear message' '
	dcpi-test-helper merge-loop db 8 & writer=$!
	wait_for 30 "the writer to take the lock" "test \"\$(cat db/lock 2>/dev/null)\" = $writer" &&
	echo "epoch" | dcpi-test-helper build db >out 2>err; rc=$?
	kill -9 $writer; wait $writer 2>/dev/null
	cat err
	test $rc = 1 && grep -q "in use by another writer (pid $writer)" err
'

test_done
