#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Whose register values are recorded (collect/whose.h): only dumpable
# processes of the chosen users (dcpirun: its invoker; dcpid: --values-users,
# nobody's unless given), and the files holding them are their writer's
# alone (0600) unless --values-mode opens them to the group.
. "$top_srcdir/tests/lib.sh"
require_root
require_sampling
command -v setpriv >/dev/null || skip_all "no setpriv to become nobody"
command -v python3 >/dev/null || skip_all "python3 is needed to read the JSON"

SOCK=$TEST_DIR/ctl/dcpid.sock
share_programs "$TEST_DIR/bin" dcpi-hostile || bail_out "cannot copy the programs"

as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}

# value_samples ERRFILE: the value samples of a dcpirun summary.
value_samples() { sed -n 's/.*, \([0-9]*\) value samples.*/\1/p' "$1"; }

# The mode of every file of KIND in DB's epochs (values, paths, bursts), one a line.
modes() { # DB KIND
	case $2 in
	bursts) find "$1" -name bursts -printf '%m\n' ;;
	*) find "$1" -name "*.$2" -printf '%m\n' ;;
	esac | sort -u
}

test_expect_success 'a dumpable program of the invoker: its values recorded, in files of mode 0600' '
	dcpirun -d dump.db -F 2000 --values --bursts=10 -- dcpi-hostile dump 2 >out 2>err &&
	cat err &&
	test "$(value_samples err)" -gt 100 &&
	test "$(modes dump.db values)" = 600 &&
	test "$(modes dump.db paths)" = 600 &&
	test -z "$(modes dump.db bursts | grep -v "^600$")" &&
	# the rest of the database is the group'"'"'s, as before
	test "$(find dump.db -name meta -printf "%m\n" | sort -u)" = 640
'

test_expect_success '--values-mode 0640: the group may read them' '
	dcpirun -d open.db -F 2000 --values --values-mode 0640 -- dcpi-hostile dump 1 >out 2>err &&
	test "$(modes open.db values)" = 640
'

test_expect_success 'a program that made itself non-dumpable: none of its registers' '
	dcpirun -d nodump.db -F 2000 --values --bursts=10 -- dcpi-hostile nodump 2 >out 2>err &&
	cat err &&
	grep -q "nodump: ok" out &&
	test "$(value_samples err)" = 0 &&
	test -z "$(find nodump.db -name "*.values" -o -name "*.paths" -o -name bursts)" &&
	grep -q " 0 bursts of" err
'

test_expect_success 'dcpid --values without --values-users: a warning, nobody'"'"'s values' '
	mkdir -p ctl &&
	{ dcpid -f -d none.db --socket "$SOCK" -F 2000 --values --write-interval 1 >/dev/null 2>dcpid.err & } &&
	daemon=$! && test_register_pid $daemon dcpid &&
	wait_for 30 "dcpid to answer" "dcpictl --socket \"$SOCK\" status >/dev/null 2>&1" &&
	grep -q "values-users" dcpid.err &&
	as_nobody dcpi-hostile dump 1 >/dev/null &&
	dcpictl --socket "$SOCK" flush &&
	dcpictl --socket "$SOCK" --json status >status.json &&
	dcpictl --socket "$SOCK" quit && wait_exit $daemon &&
	python3 -c "
import json
s = json.load(open(\"status.json\"))
print(s[\"values\"], s[\"values_of\"])
assert s[\"values\"][\"samples\"] == 0 and s[\"values_of\"][\"users\"] == \"nobody'"'"'s\"
" &&
	test -z "$(find none.db -name "*.values")"
'

test_expect_success 'dcpid --values-users=nobody: nobody'"'"'s dumpable processes only' '
	{ dcpid -f -d some.db --socket "$SOCK" -F 2000 --values --bursts=10 --values-users=nobody \
		--write-interval 1 >/dev/null 2>dcpid.err & } &&
	daemon=$! && test_register_pid $daemon dcpid &&
	wait_for 30 "dcpid to answer" "dcpictl --socket \"$SOCK\" status >/dev/null 2>&1" &&
	as_nobody dcpi-hostile nodump 2 >/dev/null &&
	dcpi-hostile dump 1 >/dev/null &&
	dcpictl --socket "$SOCK" flush &&
	dcpictl --socket "$SOCK" --json status >before.json &&
	as_nobody dcpi-hostile dump 2 >/dev/null &&
	dcpictl --socket "$SOCK" flush &&
	dcpictl --socket "$SOCK" --json status >after.json &&
	dcpictl --socket "$SOCK" quit && wait_exit $daemon &&
	python3 -c "
import json
b, a = (json.load(open(f)) for f in (\"before.json\", \"after.json\"))
print(b[\"values\"], b[\"values_of\"])
print(a[\"values\"], a[\"values_of\"])
# nobody non-dumpable, then root: refused (the daemon'"'"'s own samples too)
assert b[\"values_of\"][\"not_dumpable\"] + b[\"values_of\"][\"not_chosen\"] > 0, b
assert a[\"values\"][\"samples\"] > b[\"values\"][\"samples\"] + 100, (b, a)
" &&
	# the image of the program has values, from the dumpable run only
	test -n "$(find some.db -name "*.values")" &&
	test "$(modes some.db values)" = 600
'

test_done
