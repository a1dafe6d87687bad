#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dcpi-tui shows dcpicalc's numbers: on a database with samples at real
# offsets of a test program (compiled by the build), the procedure view's
# blocks (frequency, executions, best-case and actual CPI) and instructions
# (samples after skid, CPI, confidence letter, culprit addresses) equal
# dcpicalc's, its bubbles are dcpicalc's bubble lines, its pane has
# dcpicalc --summary's figures, and the procedures view's CPI and best-case
# CPI are dcpicalc --summary's of every procedure.  On a profile recorded
# by dcpirun too, when collect/ has landed.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/programs/fixture-lib.sh"

O2=$PROGRAMS/shapes-O2
infocmp xterm-256color >/dev/null 2>&1 || skip_all "no terminfo entry for xterm-256color"
BID=$(build_id "$O2")
NLV=$(sym_vaddr "$O2" nested_loops | sed 's/^0*//')
off() { vaddr_to_off "$O2" "$(sym_vaddr "$O2" "$1")"; }

# Samples on every instruction of nested_loops from its first backward
# branch's target on (300 each, 4000 after the loads: their stalls), and on
# a few other procedures.
profile() { # KEY
	local a n=0
	echo "profile $1 cycles"
	objdump -d --no-show-raw-insn --start-address=0x"$NLV" "$O2" |
		awk '!done && /^ *[0-9a-f]+:/ { sub(":", "", $1); print $1 } /ret/ { done = 1 }' >insns
	while read -r a; do
		n=$((n + 1))
		if [ $((n % 4)) = 0 ]; then
			echo "0x$(vaddr_to_off "$O2" "$a") 4000"
		else
			echo "0x$(vaddr_to_off "$O2" "$a") 300"
		fi
	done <insns
	echo "0x$(off switch_table) 300"
	echo "0x$(off if_else) 50"
	echo "0x$(off main) 5"
}

# tui DB SCRIPT-LINE...: runs dcpi-tui headless with these script lines.
tui() {
	local db=$1
	shift
	printf '%s\n' "$@" >script
	TERM=xterm-256color LINES=40 COLUMNS=160 dcpi-tui --script script "$db" 2>err &&
		test ! -s err
}

# dcpicalc's instructions as "ADDR SAMPLES CPI CONF CULPRITS".
calc_insns() {
	dcpicalc "$@" | sed -nE 's/^ *([0-9a-f]+)  .{40} +([^ ]+) +([^ ]+) ([-LMH])( ([0-9a-f]+(,[0-9a-f]+)*))?( .*)?$/\1 \2 \3 \4 \6/p' |
		sed 's/ *$//'
}
# ... and the procedure view's.
view_insns() {
	sed -n '/^--$/,$p' "$1" | cut -c3- |
		sed -nE 's/^ *([0-9a-f]+) [ 0-9.-]* ([0-9.e+?]+) +([0-9.]+cy|\?) ([-LMH])  .*$/\1 \2 \3 \4 &/p' |
		sed -E -e 's/^([^ ]+ [^ ]+ [^ ]+ [^ ]+) .*(←|<-) ([0-9a-f,]+).*$/\1 \3/' -e t \
			-e 's/^([^ ]+ [^ ]+ [^ ]+ [^ ]+) .*$/\1/'
}

# dcpicalc's blocks as "START FREQ EXECS BEST ACTUAL" (ACTUAL: CYCLES/N = CPI).
calc_blocks() {
	dcpicalc "$@" | awk '
		/^\*\*\* Block / { split($4, r, "-"); s = r[1]; f = $6; e = $8 }
		/^\*\*\* Best-case / { b = $3 " " $5 }
		/^\*\*\* Actual / { print s, f, e, b, $3, $5 }' | sed 's/CPI//g'
}
view_blocks() {
	sed -n '/^--$/,$p' "$1" | cut -c3- | awk '
		/^── block / { split($4, r, "-"); s = r[1] }
		/^   [-LMH] freq / { print s, $3, $5, $7, $9, $11, $13 }' | sed 's/CPI//g'
}

test_expect_success 'setup' '
	{
		echo "epoch label=one mhz=2000"
		echo "event cycles used=clock period=100000 unit=ns"
		echo "image auto path=$O2 buildid=$BID"
		profile "$BID"
	} >db.txt &&
	dcpi-test-helper build db db.txt >/dev/null
'

test_expect_success 'the procedure view: dcpicalc blocks and instructions' '
	tui db ":goto nested_loops" ":save-view listing.view" &&
	calc_blocks -d db nested_loops >expect &&
	view_blocks listing.view >actual &&
	test_cmp expect actual &&
	test "$(wc -l <actual)" -gt 3 &&
	calc_insns -d db nested_loops >expect &&
	view_insns listing.view >actual &&
	test_cmp expect actual &&
	test "$(wc -l <actual)" -gt 10 &&
	grep -q " [0-9.]*cy [LMH] [0-9a-f]" actual
'

test_expect_success 'its bubbles are dcpicalc bubble lines' '
	dcpicalc -d db nested_loops | grep -E "^ +[a-zA-Z]+( |$)" |
		sed -E "s/^ +//; s/ +/ /g" >expect &&
	sed -n "/^--$/,\$p" listing.view | grep "░░" | sed -E "s/^.*░░ //; s/ +/ /g" >actual &&
	test_cmp expect actual &&
	test -s actual
'

test_expect_success 'its pane: the figures of dcpicalc --summary' '
	tui db ":goto nested_loops" p ":save-view pane.view" &&
	dcpicalc -d db --summary nested_loops >summary &&
	best=$(sed -n "s/^\*\*\* Best-case //p" summary) &&
	actual=$(sed -n "s/^\*\*\* Actual //p" summary) &&
	grep -q "^ *CPI  *best-case $best, actual $actual; confidence" pane.view &&
	conf=$(sed -n "s/^\*\*\* Confidence: //p" summary) &&
	grep -q "; confidence: $conf$" pane.view &&
	stat=$(sed -n "s/^\*\*\* Subtotal static  *//p" summary) &&
	grep -q "^ *static  *$stat" pane.view &&
	dyn=$(sed -n "s/^\*\*\* Subtotal dynamic  *//p" summary) &&
	grep -q "^ *dynamic  *$dyn" pane.view &&
	# every dynamic stall with cycles: "NAME LO% to HI%" (or "NAME X%")
	sed -n "s/^\*\*\* \([A-Za-z][-A-Za-z ]*[a-z]\)  *\(-*[0-9.]*%\) to  *\(-*[0-9.]*%\)$/\1|\2|\3/p" \
		summary | grep -v "|0.0%|0.0%$" >ranges &&
	test -s ranges &&
	while IFS="|" read -r name lo hi; do
		if [ "$lo" = "$hi" ]; then want="$name $lo"; else want="$name $lo to $hi"; fi
		grep -q "^ *dynamic .*$want" pane.view || { echo "not in the pane: $want"; return 1; }
	done <ranges
'

test_expect_success 'the procedures view: dcpicalc CPI and best-case CPI of every procedure' '
	tui db P ":save-view procs.view" &&
	# (without frequency estimates dcpicalc writes the best case as 0.00, dcpi-tui as ?)
	dcpicalc -d db --image "$O2" --summary | awk "
		/^Procedure / { n = \$2 }
		/^\*\*\* Best-case / { b = \$5 }
		/^\*\*\* Actual / { a = \$5; if (\$3 == \"?\") { a = \"?\"; b = \"?\" }; print n, a, b }" |
		sed "s/CPI//g" | sort >expect &&
	sed -n "/^--$/,\$p" procs.view | sed 1,2d | cut -c3- |
		awk "\$4 != \"-\" { print \$8, \$4, \$5 }" | sort >actual &&
	test_cmp expect actual &&
	test "$(wc -l <actual)" -ge 3
'

if ! why=$(can_sample); then
	test_skip 'a recorded profile: dcpicalc numbers' "this machine cannot sample: $why"
else
	test_expect_success 'a recorded profile: dcpicalc numbers' '
		dcpirun -q -d rec -- "$O2" loops 3000 >/dev/null 2>rec.err &&
		tui rec ":goto nested_loops@shapes-O2" ":save-view rec.view" &&
		calc_blocks -d rec nested_loops@shapes-O2 >expect &&
		view_blocks rec.view >actual &&
		test_cmp expect actual &&
		calc_insns -d rec nested_loops@shapes-O2 >expect &&
		view_insns rec.view >actual &&
		test_cmp expect actual &&
		test "$(wc -l <actual)" -gt 10
	'
fi

test_done
