#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dcpilist on fixture databases with real file offsets of the test
# programs: instructions with their samples, --source (DWARF, debug
# files, path substitution), --blocks, --json, procedures by name,
# name@image, address and FDE name, ambiguity, and refusals (missing or
# rebuilt binaries, kernel images).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/programs/fixture-lib.sh"

O0=$PROGRAMS/shapes-O0
O2=$PROGRAMS/shapes-O2
BID=$(build_id "$O2")
BID0=$(build_id "$O0")
NLV=$(sym_vaddr "$O2" nested_loops | sed 's/^0*//')
NL=$(vaddr_to_off "$O2" "$NLV")
NL3V=$(insn_after "$O2" "$NLV" 3)
NL3=$(vaddr_to_off "$O2" "$NL3V")
MAIN0=$(vaddr_to_off "$O0" "$(sym_vaddr "$O0" main)")
MAIN2=$(vaddr_to_off "$O2" "$(sym_vaddr "$O2" main)")

fixture() { # DB LINE...
	local db=$1
	shift
	{
		echo "epoch"
		echo "event cycles used=clock period=100000 unit=ns"
		echo "event imiss period=10000 unit=events"
		for l in "$@"; do echo "$l"; done
	} >"$db.txt"
	dcpi-test-helper build "$db" "$db.txt" >/dev/null
}

profile() { # KEY
	printf '%s\n' "profile $1 cycles" "0x$NL 40" "0x$NL3 60" "0x$MAIN2 3" \
		"profile $1 imiss" "0x$NL3 7"
}

test_expect_success 'setup' '
	fixture db "image auto path=$O2 buildid=$BID" "$(profile "$BID")" &&
	fixture two "image auto path=$O2 buildid=$BID" "$(profile "$BID")" \
		"image auto path=$O0 buildid=$BID0" "profile $BID0 cycles" "0x$MAIN0 2"
'

test_expect_success 'instructions with their samples per event' '
	dcpilist -d db nested_loops >out &&
	test_grep "^Procedure nested_loops in $O2, epoch 1$" out &&
	test_grep "^  cycles(clock): 100 samples (97.09% of the epoch)$" out &&
	test_grep "^  imiss: 7 samples (100.00% of the epoch)$" out &&
	test_grep "^  0x$NLV-0x[0-9a-f]*, [0-9]* instructions, [0-9]* basic blocks$" out &&
	grep -q "^ *$NLV  *40  *0  " out &&
	grep -q "^ *$NL3V  *60  *7  " out &&
	test "$(grep -c "^ *[0-9a-f]\{4,\}  " out)" = "$(objdump -d --start-address=0x$NLV \
		--stop-address=0x$(printf %x $((0x$NLV + 0x$(nm -S "$O2" | awk "\$4 == \"nested_loops\" { print \$2 }")))) \
		"$O2" | grep -c "^ *[0-9a-f]*:")"
'

test_expect_success 'the same procedure by name@image, address, address@image' '
	dcpilist -d db nested_loops >expect &&
	dcpilist -d db nested_loops@shapes-O2 >a && test_cmp expect a &&
	dcpilist -d db "nested_loops@$O2" >a && test_cmp expect a &&
	dcpilist -d db 0x$NL3V shapes-O2 >a && test_cmp expect a &&
	dcpilist -d db 0x$NLV@shapes-O2 >a && test_cmp expect a &&
	dcpilist -d db nested_loops "$BID" >a && test_cmp expect a
'

test_expect_success 'a name with @ that names no image is a name' '
	dcpilist -d db printf@plt >out &&
	test_grep "^Procedure printf@plt in " out &&
	dcpilist -d two printf@plt@shapes-O0 | grep "^Procedure printf@plt in $O0" >/dev/null
'

test_expect_success 'ambiguity is an error listing the candidates' '
	test_must_fail dcpilist -d two main 2>err &&
	test_grep "error: .main. is ambiguous (2 procedures)" err &&
	test_grep "^  main@$O2 (0x[0-9a-f]*), 3 cycles samples$" err &&
	test_grep "^  main@$O0 (0x[0-9a-f]*), 2 cycles samples$" err &&
	dcpilist -d two main@shapes-O0 | grep "^Procedure main in $O0" >/dev/null &&
	dcpilist -d two main shapes-O0 | grep "^Procedure main in $O0" >/dev/null
'

test_expect_success 'unknown procedures, images, epochs and options fail' '
	test_must_fail dcpilist -d db nosuch 2>err &&
	test_grep "no procedure .nosuch. in epoch 1" err &&
	test_must_fail dcpilist -d two main nosuch 2>err &&
	test_grep "no image .nosuch." err &&
	test_must_fail dcpilist -d db -E 3 main &&
	test_must_fail dcpilist -d db &&
	test_must_fail dcpilist -d db a b c &&
	test_must_fail dcpilist -d db --substitute-path nonsense main
'

test_expect_success '--source interleaves the source lines' '
	dcpilist -d db --source nested_loops >out &&
	test_grep "^ *shapes.c:3[0-9]:  *for (int j = 0; j < m; j++)$" out &&
	test_grep "^ *shapes.c:3[0-9]:  *s += (i ^ j) + sink;$" out
'

test_expect_success '--source without DWARF says why' '
	fixture nog "image auto path=$PROGRAMS/shapes-O2-nog buildid=$(build_id "$PROGRAMS/shapes-O2-nog")" &&
	printf "%s\n" "profile $(build_id "$PROGRAMS/shapes-O2-nog") cycles" "0x$NL 1" >>nog.txt &&
	rm -rf nog && dcpi-test-helper build nog nog.txt >/dev/null &&
	dcpilist -d nog --source nested_loops >out &&
	test_grep "(no source: no DWARF line information" out
'

test_expect_success '--substitute-path finds moved sources' '
	mkdir -p moved/tests/programs &&
	sed "s/s += (i ^ j) + sink;/s += MOVED;/" "$top_srcdir/tests/programs/shapes.c" \
		>moved/tests/programs/shapes.c &&
	dcpilist -d db --source --substitute-path "$top_srcdir=$TEST_DIR/moved" nested_loops >out &&
	test_grep "s += MOVED;" out
'

test_expect_success '--blocks shows basic blocks, classes and edges' '
	dcpilist -d db --blocks nested_loops >out &&
	test_grep "^  ; block 0, class 0; from entry$" out &&
	test_grep "(taken)" out &&
	test "$(grep -c "; block" out)" -ge 5
'

test_expect_success '--json: instructions, blocks and edges' '
	dcpilist -d db --json --source nested_loops >out.json &&
	dcpi-disasm-check json out.json &&
	grep -q "\"procedure\": \"nested_loops\"" out.json &&
	grep -q "\"address\": \"0x$NL3V\"" out.json &&
	grep -q "\"kind\": \"taken\"" out.json &&
	grep -q "\"class\": 0" out.json &&
	grep -q "\"file\": \".*shapes.c\"" out.json
'

test_expect_success 'stripped program: FDE-named procedures, --source through the debuglink' '
	fixture stripped "image auto path=$PROGRAMS/shapes-O2-strip buildid=$BID" "$(profile "$BID")" &&
	dcpilist -d stripped shapes-O2-strip+0x$NLV >out &&
	grep -q "^ *$NL3V  *60  *7  " out &&
	fixture linked "image auto path=$PROGRAMS/shapes-O2-dbglink buildid=$BID" "$(profile "$BID")" &&
	dcpilist -d linked --source nested_loops | grep "for (int j = 0; j < m; j++)" >/dev/null
'

test_expect_success 'missing and rebuilt binaries are refused; --force uses a rebuilt one' '
	fixture missing "image auto path=/nonexistent/prog buildid=$BID" "$(profile "$BID")" &&
	test_must_fail dcpilist -d missing nested_loops 2>err &&
	test_grep "no procedure .nested_loops. in epoch 1" err &&
	test_grep "/nonexistent/prog. cannot be named: cannot open" err &&
	fixture changed "image auto path=$PROGRAMS/shapes-O2-nopie buildid=$BID" "$(profile "$BID")" &&
	test_must_fail dcpilist -d changed nested_loops 2>err &&
	test_grep "is not the binary profiled" err &&
	dcpilist -d changed --force nested_loops >out &&
	test_grep "^  warning: .* is not the binary profiled" out
'

test_expect_success 'kernel images have names but no code' '
	fixture kernel "image kernel kind=kernel path=[kernel.kallsyms]" \
		"profile kernel cycles" "0xffffffff81000110 3" &&
	printf "%s\n" "ffffffff81000100 t do_work" "ffffffff81000200 T other" >kernel/000001/kallsyms &&
	test_must_fail dcpilist -d kernel do_work 2>err &&
	test_grep "cannot list .do_work. in .\[kernel.kallsyms\].: no code for kernel images" err
'

test_done
