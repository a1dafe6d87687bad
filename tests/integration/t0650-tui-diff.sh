#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dcpi-tui's diff views show dcpidiff's numbers: on a database with samples
# at real offsets of a test program (compiled by the build) in two epochs,
# the diff view's rows (samples, shares, delta, ratio, verdict of every
# procedure, in dcpidiff's order) equal dcpidiff's, swapped too; the
# side-by-side view's instructions equal dcpidiff A B PROCEDURE's, with
# each side's CPI equal to dcpicalc's in that epoch; two builds of the
# program are compared procedure by procedure only, as dcpidiff does.  On
# two epochs recorded by dcpirun too.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/programs/fixture-lib.sh"

O2=$PROGRAMS/shapes-O2
NOPIE=$PROGRAMS/shapes-O2-nopie
infocmp xterm-256color >/dev/null 2>&1 || skip_all "no terminfo entry for xterm-256color"
BID=$(build_id "$O2")
BID2=$(build_id "$NOPIE")
NLV=$(sym_vaddr "$O2" nested_loops | sed 's/^0*//')
off() { vaddr_to_off "$1" "$(sym_vaddr "$1" "$2")"; }

# The instructions of nested_loops with COUNT samples each, and a third of
# them with EXTRA more.
loop() { # COUNT EXTRA
	local a n=0
	objdump -d --no-show-raw-insn --start-address=0x"$NLV" "$O2" |
		awk '!done && /^ *[0-9a-f]+:/ { sub(":", "", $1); print $1 } /ret/ { done = 1 }' |
		while read -r a; do
			n=$((n + 1))
			echo "0x$(vaddr_to_off "$O2" "$a") $(($1 + (n % 3 == 0 ? $2 : 0)))"
		done
}

epoch() { # LABEL BINARY KEY LOOP EXTRA NAME=COUNT...
	local label=$1 bin=$2 key=$3 count=$4 extra=$5 nc
	shift 5
	echo "epoch label=$label mhz=2000"
	echo "event cycles used=clock period=100000 unit=ns"
	echo "image $key path=$TEST_DIR/prog buildid=$key"
	echo "profile $key cycles"
	[ "$bin" = "$O2" ] && loop "$count" "$extra"
	for nc in "$@"; do
		echo "0x$(off "$bin" "${nc%=*}") ${nc#*=}"
	done
}

# tui DB SCRIPT-LINE...: runs dcpi-tui headless with these script lines.
tui() {
	local db=$1
	shift
	printf '%s\n' "$@" >script
	TERM=xterm-256color LINES=40 COLUMNS=200 dcpi-tui --script script "$db" 2>err &&
		test ! -s err
}

# dcpidiff's procedure rows as "A A% B B% DELTA RATIO VERDICT NAME".
diff_rows() {
	dcpidiff "$@" | sed -n '/^ *A  *\(share\|time\) A/,/^(/p' | sed '1d; /^(/d' |
		awk '{ sub("%", "", $2); sub("%", "", $4); sub("x$", "", $6);
			print $1, $2, $3, $4, $5, $6, $8, $9 }'
}
# ... and the diff view's (the same order: dcpidiff's).
view_rows() {
	sed -n '/^--$/,$p' "$1" | sed '1,2d' | cut -c3- |
		awk '{ sub("x$", "", $6); print $1, $2, $3, $4, $5, $6, $7, $8 }'
}

# dcpidiff's instruction rows as "ADDR A B DELTA VERDICT".
diff_insns() {
	dcpidiff --all --sort address "$@" | sed -n '/^Addr /,$p' | sed '1d; /^(/d' | awk '{ print $1, $2, $4, $6, $9 }'
}
view_insns() {
	sed -n '/^--$/,$p' "$1" | cut -c3- | grep -E '^ *[0-9a-f]+ +[0-9]+ +[0-9]+ ' |
		awk '{ print $1, $2, $3, $4, $7 }'
}
# the CPI columns of the view ("ADDR CPI-A CPI-B"), and dcpicalc's of an epoch
view_cpis() {
	sed -n '/^--$/,$p' "$1" | cut -c3- | grep -E '^ *[0-9a-f]+ +[0-9]+ +[0-9]+ ' |
		awk "{ print \$1, \$$2 }"
}
calc_cpis() {
	dcpicalc "$@" | sed -nE 's/^ *([0-9a-f]+)  .{40} +[^ ]+ +([^ ]+) [-LMH].*$/\1 \2/p'
}

test_expect_success 'setup' '
	{
		epoch before "$O2" $BID 300 0 switch_table=1000 if_else=1000 main=20
		epoch after "$O2" $BID 300 3000 switch_table=3000 if_else=1400 checked=500
		epoch v2 "$NOPIE" $BID2 0 0 nested_loops=4000 switch_table=300 if_else=900
	} >db.txt &&
	dcpi-test-helper build db db.txt >/dev/null &&
	mkdir db/binaries && cp "$O2" db/binaries/$BID && cp "$NOPIE" db/binaries/$BID2
'

test_expect_success 'the diff view: dcpidiff rows, in its order' '
	tui db ":diff before after" ":save-view diff.view" a ":save-view all.view" &&
	diff_rows -d db before after >expect &&
	view_rows diff.view >actual &&
	test_cmp expect actual &&
	grep -q " changed nested_loops$" actual &&
	diff_rows -d db --all before after >expect &&
	view_rows all.view >actual &&
	test_cmp expect actual &&
	test "$(wc -l <actual)" -ge 4
'

test_expect_success 'swapped: dcpidiff after before' '
	tui db ":diff before after" x ":save-view swapped.view" &&
	diff_rows -d db after before >expect &&
	view_rows swapped.view >actual &&
	test_cmp expect actual &&
	grep -q " changed nested_loops$" actual
'

test_expect_success 'by period (%): every column in time, as dcpidiff -N period' '
	tui db ":diff before after" % ":save-view period.view" &&
	grep -q "^ *A A time  *B B time delta t  *ratio" period.view &&
	diff_rows -d db -N period before after >expect &&
	view_rows period.view >actual &&
	test_cmp expect actual &&
	grep -q " changed nested_loops$" actual
'

test_expect_success 'side by side: dcpidiff instructions and dcpicalc CPI of each epoch' '
	tui db ":diff before after" ":goto nested_loops" "<Enter>" ":save-view sampled.view" \
		a ":save-view side.view" &&
	grep -q "^title: nested_loops: A 1 (before) vs B 2 (after), changed" side.view &&
	dcpidiff --sort address -d db before after nested_loops | sed -n "/^Addr /,\$p" |
		sed "1d; /^(/d" | awk "{ print \$1, \$2, \$4, \$6, \$9 }" >expect &&
	view_insns sampled.view >actual &&
	test_cmp expect actual &&
	diff_insns -d db before after nested_loops >expect &&
	view_insns side.view >actual &&
	test_cmp expect actual &&
	test "$(wc -l <actual)" -gt 10 &&
	calc_cpis -d db -E before nested_loops >expect &&
	view_cpis side.view 5 >actual &&
	test_cmp expect actual &&
	calc_cpis -d db -E after nested_loops >expect &&
	view_cpis side.view 6 >actual &&
	test_cmp expect actual
'

test_expect_success 'two builds: procedure-level only, as dcpidiff says' '
	tui db ":diff after v2" ":save-view builds.view" ":goto switch_table" "<Enter>" \
		":save-view unaligned.view" &&
	diff_rows -d db after v2 | sed "s/\*\$//" >expect &&
	view_rows builds.view | sed "s/\*\$//" >actual &&
	test_cmp expect actual &&
	test "$(wc -l <actual)" -ge 3 &&
	grep -q "switch_table\*" builds.view &&
	dcpidiff -d db after v2 switch_table >out &&
	grep -q "instructions cannot be aligned" out &&
	grep -q "The binaries differ between the epochs: different builds of" unaligned.view &&
	grep -q "Instructions cannot be aligned: the procedure is compared as a whole" unaligned.view &&
	! grep -qE "^ *[0-9a-f]+ +[0-9]+ +[0-9]+ " unaligned.view
'

W=$top_builddir/tests/workloads
if ! why=$(can_sample); then
	test_skip 'two recorded epochs: dcpidiff rows and instructions' "this machine cannot sample: $why"
else
	test_expect_success 'two recorded epochs: dcpidiff rows and instructions' '
		dcpirun -q -d rec -F 2000 --label before -- "$W/wl-three" >/dev/null 2>rec.err &&
		dcpirun -q -d rec -F 2000 --label after -- "$W/wl-three" --slow >/dev/null 2>>rec.err &&
		tui rec ":diff before after" ":save-view diff.view" ":goto two" "<Enter>" a \
			":save-view two.view" &&
		diff_rows -d rec before after >expect &&
		view_rows diff.view >actual &&
		test_cmp expect actual &&
		grep -q " two$" actual &&
		diff_insns -d rec before after two >expect &&
		view_insns two.view >actual &&
		test_cmp expect actual &&
		test "$(wc -l <actual)" -ge 3
	'
fi

test_done
