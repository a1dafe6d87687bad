#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dcpistats on fixture databases with known counts in a real binary (the
# offsets are the file offsets of shapes-O2's procedures, from binutils):
# Figure 3's statistics checked exactly, per procedure, image and
# instruction, sets as epochs, whole databases and DIR:EPOCH, scaling, JSON,
# empty epochs and bad input.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/programs/fixture-lib.sh"

O2=$PROGRAMS/shapes-O2
BID=$(build_id "$O2")
off() { vaddr_to_off "$O2" "$(sym_vaddr "$O2" "$1")"; }
NL=$(off nested_loops)
SW=$(off switch_table)
IE=$(off if_else)
NL3=$(vaddr_to_off "$O2" "$(insn_after "$O2" "$(sym_vaddr "$O2" nested_loops)" 3)")

# run NL SW IE [NL3]: one epoch's profile of shapes-O2
run() {
	echo "epoch label=$1"
	echo "event cycles used=clock period=100000 unit=ns"
	echo "image auto path=$O2 buildid=$BID"
	echo "profile $BID cycles"
	[ "$2" = 0 ] || echo "0x$NL $2"
	[ "$3" = 0 ] || echo "0x$SW $3"
	[ "$4" = 0 ] || echo "0x$IE $4"
	[ -z "${5:-}" ] || echo "0x$NL3 $5"
}

# the row of NAME in dcpistats' text output, fields squeezed
row() {
	awk -v n="$1" 'NF > 1 && $(NF-1) == n { $NF = ""; print; exit }' "$2" | sed 's/ *$//'
}

test_expect_success 'setup: four runs, an empty epoch, two databases' '
	test -n "$NL" && test -n "$NL3" &&
	{
		run r1 100 50 10
		run r2 120 50 0
		run r3 80 50 30
		run r4 100 50 0
		echo "epoch label=empty"
		echo "event cycles used=clock period=100000 unit=ns"
	} >runs.txt &&
	dcpi-test-helper build runs runs.txt >/dev/null &&
	run m1 100 50 10 >m1.txt && dcpi-test-helper build m1.db m1.txt >/dev/null &&
	{ run m2a 60 25 0; run m2b 60 25 30; } >m2.txt &&
	dcpi-test-helper build m2.db m2.txt >/dev/null
'

test_expect_success 'Figure 3: totals per set, then range%, sum, sum%, N, mean, std-dev, min, max' '
	dcpistats -d runs r1 r2 r3 r4 >out &&
	test_grep "^Number of samples of type cycles(clock)$" out &&
	test_grep "^set 1 = 160  set 2 = 170  set 3 = 160  set 4 = 150  TOTAL 640$" out &&
	test_grep "^  set 2: epoch 2 (r2) of runs$" out &&
	test_grep "from 4 different sample set(s)$" out &&
	# if_else: 10 0 30 0: range 30/40, mean 10, sd sqrt(200)
	test "$(row if_else out)" = "75.00% 40.00 6.25% 2 10.00 14.14 0.00 30.00 if_else" &&
	# nested_loops: 100 120 80 100: range 40/400, sd sqrt(800/3)
	test "$(row nested_loops out)" = "10.00% 400.00 62.50% 4 100.00 16.33 80.00 120.00 nested_loops" &&
	test "$(row switch_table out)" = "0.00% 200.00 31.25% 4 50.00 0.00 50.00 50.00 switch_table" &&
	sed -n "/^ range%/,\$p" out | awk "NR > 1 { print \$(NF-1) }" >order &&
	printf "%s\n" if_else nested_loops switch_table >expect &&
	test_cmp expect order
'

test_expect_success 'per image, per instruction, per instruction of one procedure' '
	dcpistats -d runs -i r1 r2 r3 r4 >out &&
	test_grep "^ *3.12% *640.00 100.00% *4 *160.00 *8.16 *150.00 *170.00  $O2$" out &&
	dcpistats -d runs -I r1 r2 r3 r4 >out &&
	grep -q " nested_loops+0x0  $O2$" out &&
	dcpistats -d runs -p nested_loops r1 r2 r3 r4 >out &&
	test_grep "for each instruction of nested_loops in $O2 from 4" out &&
	test "$(row nested_loops+0x0 out)" = "10.00% 400.00 62.50% 4 100.00 16.33 80.00 120.00 nested_loops+0x0"
'

test_expect_success 'instruction rows of one procedure carry the decoded instruction (JSON)' '
	{ run i1 10 0 0 7; run i2 20 0 0 9; } >i.txt &&
	dcpi-test-helper build idb i.txt >/dev/null &&
	dcpistats -d idb -p nested_loops --json i1 i2 >out.json &&
	dcpi-disasm-check json out.json &&
	addr=$(sym_vaddr "$O2" nested_loops | sed "s/^0*//") &&
	text=$(objdump -d -M intel --no-show-raw-insn --start-address=0x$addr "$O2" |
		awk "/^ *$addr:/ && !f { print \$2; f = 1 }") &&
	test -n "$text" &&
	grep -A4 "\"address\": \"0x$addr\"" out.json | grep "\"instruction\": \"$text" >/dev/null &&
	grep -q "\"samples\": \[$" out.json
'

test_expect_success 'a whole database is a set (epochs summed); DIR:EPOCH picks one' '
	dcpistats m1.db m2.db >out &&
	test_grep "^set 1 = 160  set 2 = 200  TOTAL 360$" out &&
	test_grep "set 2: m2.db (2 epochs, 1-2, summed)" out &&
	test "$(row nested_loops out)" = "9.09% 220.00 61.11% 2 110.00 14.14 100.00 120.00 nested_loops" &&
	dcpistats m1.db m2.db:m2a >out &&
	test_grep "^set 1 = 160  set 2 = 85  TOTAL 245$" out &&
	test_grep "set 2: epoch 1 (m2a) of m2.db" out
'

test_expect_success '-N total scales each set to the mean total; -N period by period' '
	dcpistats -N total m1.db m2.db >out &&
	test_grep "scaled by each set.s total to the mean total (180.00)" out &&
	# nested_loops 100 of 160 and 120 of 200: 112.50 and 108.00
	test "$(row nested_loops out)" = "2.04% 220.50 61.25% 2 110.25 3.18 108.00 112.50 nested_loops" &&
	dcpistats -N period m1.db m2.db >out &&
	test "$(row nested_loops out)" = "9.09% 220.00 61.11% 2 110.00 14.14 100.00 120.00 nested_loops"
'

test_expect_success '--json: the same numbers, valid JSON' '
	dcpistats -d runs --json r1 r2 r3 r4 >out.json &&
	dcpi-disasm-check json out.json &&
	grep -q "\"procedure\": \"if_else\"" out.json &&
	grep -q "\"range_pct\": 75," out.json &&
	grep -q "\"stddev\": 14.1421356237" out.json &&
	grep -q "\"normalize\": \"none\"" out.json
'

test_expect_success 'rows under 0.1% of the samples are left out unless --all' '
	{
		run t1 5000 0 1
		run t2 5000 0 0
	} >tiny.txt &&
	dcpi-test-helper build tiny tiny.txt >/dev/null &&
	dcpistats -d tiny t1 t2 >out &&
	! grep -q " if_else " out &&
	grep -q "1 rows below 0.10% of the samples left out" out &&
	dcpistats -d tiny --all t1 t2 >out &&
	grep -q " if_else " out && ! grep -q "left out" out
'

test_expect_success 'an empty epoch is a set of 0 samples, no crash' '
	dcpistats -d runs r1 empty >out &&
	test_grep "^set 1 = 160  set 2 = 0  TOTAL 160$" out &&
	test "$(row if_else out)" = "100.00% 10.00 6.25% 1 5.00 7.07 0.00 10.00 if_else" &&
	dcpistats -d runs empty >out &&
	test_grep "^(no samples)$" out &&
	dcpistats -d runs -N total r1 empty | grep nested_loops >/dev/null
'

test_expect_success 'bad input: exit 1 with a message' '
	test_must_fail dcpistats -d runs 2>err &&
	test_grep "no set given" err &&
	test_must_fail dcpistats -d runs r1 nosuch 2>err &&
	test_grep "no epoch labelled .nosuch. in database" err &&
	test_must_fail dcpistats -d runs -e bogus r1 2>err &&
	test_grep "unknown event .bogus." err &&
	test_must_fail dcpistats -d runs -N bogus r1 2>err &&
	test_grep "unknown normalisation" err &&
	mkdir notadb &&
	test_must_fail dcpistats ./notadb 2>err &&
	test_grep "is a directory but not a dcpi database" err &&
	test_must_fail dcpistats -d runs -p nosuch r1 2>err &&
	test_grep "no procedure .nosuch. in any set" err &&
	test_must_fail dcpistats -d nodb 1 2>err &&
	test_must_fail dcpistats -d runs --bogus r1
'

test_done
