#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Hostile image paths never become file names; unwritable databases fail
# cleanly; permissions are 0750/0640.
. "$top_srcdir/tests/lib.sh"

test_expect_success 'hostile paths are stored escaped and never used as names' '
	dcpi-test-helper build db >keys <<-\DESC &&
	epoch
	event cycles
	image auto path=../../etc/evil dev=1 ino=1
	image auto path=/tmp/x\nimage\x20fake dev=1 ino=2
	image auto path=/tmp/\x1b[2Jclear dev=1 ino=3
	image auto path=/proc/self/../../etc/passwd dev=1 ino=4
	DESC
	test $(wc -l <keys) = 4 &&
	! grep -v "^h[0-9a-f]\{16\}$" keys &&
	test $(find db -name "*evil*" -o -name "*passwd*" -o -name "*clear*" | wc -l) = 0 &&
	test ! -e etc && test ! -e db/../../etc/evil &&
	test "$(grep -c "^image " db/000001/images)" = 4 &&
	grep -q "/tmp/x\\\\nimage\\\\x20fake" db/000001/images &&
	dcpi-test-helper check db
'

test_expect_success 'files are 0640 and directories 0750' '
	test "$(stat -c %a db)" = 750 && test "$(stat -c %a db/000001)" = 750 &&
	test "$(stat -c %a db/000001/meta)" = 640 && test "$(stat -c %a db/FORMAT)" = 640
'

# As root, become nobody to meet a database we may not write (running a copy
# of the helper: the build tree may be in a private clone).
as_other_user() {
	if [ "$(id -u)" = 0 ]; then
		share_programs "$TEST_DIR/bin" dcpi-test-helper &&
		setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
	else
		"$@"
	fi
}

test_expect_success 'an unwritable database fails with a clear message' '
	mkdir -p shared && chmod 0755 . shared && cp -r db shared/db &&
	chmod -R a+rX shared/db && chmod 0555 shared/db &&
	echo epoch | test_must_fail as_other_user dcpi-test-helper build shared/db 2>err &&
	cat err && grep -q "cannot open the lock file of database .shared/db." err &&
	as_other_user dcpi-test-helper check shared/db
'

test_expect_success 'a database on a read-only place fails with a clear message' '
	echo epoch | test_must_fail dcpi-test-helper build /proc/dcpi-nope 2>err &&
	grep -q "cannot create database directory" err
'

test_done
