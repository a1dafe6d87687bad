#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dcpi-tui and the report tools never disagree: on databases with samples at
# real offsets of the test programs (compiled by the build), the procedures
# view shows dcpiprof's rows and the procedure view dcpilist's instructions,
# sample for sample; a rebuilt binary is refused by both and shown by both
# with --force; a stripped program gets the same FDE names.  On a profile
# recorded by dcpirun too, when collect/ has landed.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/programs/fixture-lib.sh"

O2=$PROGRAMS/shapes-O2
infocmp xterm-256color >/dev/null 2>&1 || skip_all "no terminfo entry for xterm-256color"
BID=$(build_id "$O2")
off() { vaddr_to_off "$O2" "$(sym_vaddr "$O2" "$1")"; }
NL=$(off nested_loops)
NLV=$(sym_vaddr "$O2" nested_loops | sed 's/^0*//')
NL3=$(vaddr_to_off "$O2" "$(insn_after "$O2" "$NLV" 3)")
NL7=$(vaddr_to_off "$O2" "$(insn_after "$O2" "$NLV" 7)")

fixture() { # DB LINE...
	local db=$1
	shift
	{
		echo "epoch label=one"
		echo "event cycles used=clock period=100000 unit=ns"
		echo "event imiss period=10000 unit=events"
		for l in "$@"; do echo "$l"; done
	} >"$db.txt"
	dcpi-test-helper build "$db" "$db.txt" >/dev/null
}

profile() { # KEY
	printf '%s\n' "profile $1 cycles" "0x$NL 40" "0x$NL3 60" "0x$NL7 25" \
		"0x$(off switch_table) 30" "0x$(off if_else) 5" "0x$(off main) 3" \
		"profile $1 imiss" "0x$NL3 7" "0x$(off main) 9"
}

# tui DB SCRIPT-LINE...: runs dcpi-tui headless with these script lines.
tui() {
	local db=$1
	shift
	printf '%s\n' "$@" >script
	TERM=xterm-256color LINES=40 COLUMNS=160 dcpi-tui --script script "$db" 2>err &&
		test ! -s err
}

# dcpiprof's rows as "CYCLES IMISS NAME", and the procedures view's (two
# events: recordings use cycles and clock, imiss needs a PMU).
prof_rows() {
	dcpiprof "$@" | sed -n '/procedure  *image$/,$p' | sed 1d |
		awk '{ print $1, $4, $6 }' | sort
}
view_rows() {
	sed -n '/^--$/,$p' "$1" | sed '1,2d' | cut -c3- | awk '{ print $1, $4, $9 }' | sort
}

# dcpilist's instructions as "ADDRESS CYCLES IMISS", and the procedure view's.
list_rows() {
	dcpilist "$@" | grep -E '^ +[0-9a-f]+ +[0-9]+ +[0-9]+  ' | awk '{ print $1, $2, $3 }'
}
listing_rows() {
	sed -n '/^--$/,$p' "$1" | cut -c3- | grep -E '^ *[0-9a-f]+ +[0-9]+ +[0-9]+ ' |
		awk '{ print $1, $2, $3 }'
}

test_expect_success 'setup' '
	fixture db "image auto path=$O2 buildid=$BID" "$(profile "$BID")" &&
	fixture changed "image auto path=$PROGRAMS/shapes-O2-nopie buildid=$BID" "$(profile "$BID")" &&
	fixture stripped "image auto path=$PROGRAMS/shapes-O2-strip buildid=$BID" "$(profile "$BID")"
'

test_expect_success 'the procedures view shows the rows of dcpiprof' '
	tui db P ":save-view procs.view" &&
	prof_rows -d db >expect &&
	view_rows procs.view >actual &&
	test_cmp expect actual &&
	grep -q "nested_loops" actual
'

test_expect_success 'the procedure view shows the instructions of dcpilist' '
	tui db ":goto nested_loops" ":save-view listing.view" &&
	list_rows -d db nested_loops >expect &&
	listing_rows listing.view >actual &&
	test_cmp expect actual &&
	test "$(wc -l <actual)" -gt 10 &&
	grep -q " 60 7$" actual
'

test_expect_success 'following a call from main lands on the callee dcpilist shows' '
	callee=$(objdump -d --no-show-raw-insn "$O2" |
		sed -n "/<main>:/,/^$/p" | sed -n "s/.*call  *[0-9a-f]* <\([a-z_]*\)>$/\1/p" |
		grep -v "@" | sed -n 1p) &&
	test -n "$callee" &&
	tui db ":goto main" "/call.*<$callee><Enter>" "<Enter>" ":save-view callee.view" &&
	grep -q "^title: $callee in shapes-O2" callee.view &&
	list_rows -d db "$callee" >expect &&
	listing_rows callee.view >actual &&
	test_cmp expect actual &&
	test_nonempty actual
'

test_expect_success 'a rebuilt binary is refused by both, and shown by both with --force' '
	test_must_fail dcpilist -d changed nested_loops 2>err.list &&
	tui changed ":goto nested_loops" ":save-view refused.view" &&
	tr -s "\n " "  " <refused.view >refused.flat &&
	grep -q "is not the binary" refused.flat &&
	grep -q ":force uses it anyway" refused.flat &&
	list_rows -d changed --force nested_loops >expect &&
	tui changed ":force" ":goto nested_loops" ":save-view forced.view" &&
	listing_rows forced.view >actual &&
	test_cmp expect actual &&
	test "$(wc -l <actual)" -gt 10 &&
	printf "%s\n" P ":save-view procs.view" >script &&
	TERM=xterm-256color LINES=40 COLUMNS=160 dcpi-tui --force --script script changed 2>/dev/null &&
	prof_rows -d changed --force >expect &&
	view_rows procs.view >actual &&
	test_cmp expect actual &&
	grep -q "nested_loops" actual
'

test_expect_success 'a stripped program: the same FDE names and instructions' '
	tui stripped P ":save-view procs.view" &&
	prof_rows -d stripped >expect &&
	view_rows procs.view >actual &&
	test_cmp expect actual &&
	grep -q "shapes-O2-strip+0x$NLV" actual &&
	tui stripped ":goto shapes-O2-strip+0x$NLV" ":save-view listing.view" &&
	list_rows -d stripped "shapes-O2-strip+0x$NLV" >expect &&
	listing_rows listing.view >actual &&
	test_cmp expect actual &&
	test "$(wc -l <actual)" -gt 10
'

if ! why=$(can_sample); then
	test_skip 'a recorded profile: the same rows and instructions' "this machine cannot sample: $why"
else
	test_expect_success 'a recorded profile: the same rows and instructions' '
		dcpirun -d rec -e cycles,clock -- "$O2" loops 2000 >/dev/null &&
		tui rec P ":save-view procs.view" &&
		prof_rows -d rec >expect &&
		view_rows procs.view >actual &&
		test_cmp expect actual &&
		grep -q "nested_loops" actual &&
		tui rec ":goto nested_loops@shapes-O2" ":save-view listing.view" &&
		list_rows -d rec nested_loops@shapes-O2 >expect &&
		listing_rows listing.view >actual &&
		test_cmp expect actual &&
		test "$(wc -l <actual)" -gt 10
	'
fi

test_done
