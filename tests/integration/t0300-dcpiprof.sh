#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dcpiprof on fixture databases whose offsets are real file offsets of the
# test programs (computed with binutils): procedure naming in unstripped,
# stripped and debug-linked builds, PLT stubs, sorting, percentages,
# filters, --json, and images that cannot be named (missing, rebuilt,
# kernel with and without kallsyms, JIT maps, unknown).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/programs/fixture-lib.sh"

O2=$PROGRAMS/shapes-O2
STRIP=$PROGRAMS/shapes-O2-strip
NOPIE=$PROGRAMS/shapes-O2-nopie
BID=$(build_id "$O2")
off() { vaddr_to_off "$1" "$(sym_vaddr "$O2" "$2")"; }
NL=$(off "$O2" nested_loops)
SW=$(off "$O2" switch_table)
IE=$(off "$O2" if_else)
MAIN=$(off "$O2" main)
NL3=$(vaddr_to_off "$O2" "$(insn_after "$O2" "$(sym_vaddr "$O2" nested_loops)" 3)")
EXITPLT=$(objdump -d "$O2" | sed -n 's/^0*\([0-9a-f]*\) <exit@plt>:$/\1/p')

fixture() { # DB IMAGE-LINE...
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

shapes_profile() { # KEY
	cat <<EOF
profile $1 cycles
0x$NL 40
0x$NL3 60
0x$SW 30
0x$IE 5
0x$(vaddr_to_off "$O2" "$EXITPLT") 1
profile $1 imiss
0x$NL 7
0x$MAIN 9
EOF
}

test_expect_success 'setup: an epoch with samples in shapes-O2' '
	test -n "$NL" && test -n "$EXITPLT" &&
	fixture db "image auto path=$O2 buildid=$BID" "$(shapes_profile "$BID")"
'

test_expect_success 'procedures named, sorted by the first event, with totals' '
	dcpiprof -d "$TEST_DIR/db" >out &&
	test_grep "^Total samples for event type cycles(clock) = 136, imiss = 16$" out &&
	grep -A1 "procedure" out | tail -1 | grep "^ *100  *73.53%  *73.53% .* nested_loops  *$O2$" >/dev/null &&
	sed -n "/procedure/,\$p" out | awk "NR > 1 { print \$NF == \"$O2\" ? \$(NF-1) : \"?\" }" >names &&
	printf "%s\n" nested_loops switch_table if_else exit@plt main >expect &&
	test_cmp expect names
'

test_expect_success 'cumulative percentage ends at 100' '
	dcpiprof -d "$TEST_DIR/db" | grep "exit@plt" | grep "100.00%" >/dev/null &&
	dcpiprof -d "$TEST_DIR/db" | grep " main " | grep "  0   0.00% 100.00% " >/dev/null
'

test_expect_success '-e picks and orders the columns' '
	dcpiprof -d "$TEST_DIR/db" -e imiss >out &&
	test_grep "^Total samples for event type imiss = 16$" out &&
	grep -A1 "procedure" out | tail -1 | grep " main " >/dev/null &&
	! grep -q "cycles" out
'

test_expect_success '-i gives one row per image' '
	dcpiprof -d "$TEST_DIR/db" -i >out &&
	test_grep "^ *136 100.00% 100.00" out &&
	test "$(grep -c "$O2" out)" = 1
'

test_expect_success 'image filters: path, file name, key; unknown image fails' '
	dcpiprof -d "$TEST_DIR/db" "$O2" | grep nested_loops >/dev/null &&
	dcpiprof -d "$TEST_DIR/db" shapes-O2 | grep nested_loops >/dev/null &&
	dcpiprof -d "$TEST_DIR/db" "$BID" | grep nested_loops >/dev/null &&
	test_must_fail dcpiprof -d "$TEST_DIR/db" nosuch 2>err &&
	test_grep "no image .nosuch. in epoch 1" err
'

test_expect_success '--json: the same rows, valid JSON' '
	dcpiprof -d "$TEST_DIR/db" --json >out.json &&
	dcpi-disasm-check json out.json &&
	grep -q "\"procedure\": \"nested_loops\"" out.json &&
	grep -q "\"start\": \"0x$(sym_vaddr "$O2" nested_loops | sed "s/^0*//")\"" out.json &&
	grep -q "\"used\": \"clock\"" out.json &&
	dcpiprof -d "$TEST_DIR/db" -i --json | dcpi-disasm-check json
'

test_expect_success 'bad input: unknown event, epoch, database, option' '
	test_must_fail dcpiprof -d "$TEST_DIR/db" -e bogus 2>err &&
	test_grep "unknown event .bogus." err &&
	test_must_fail dcpiprof -d "$TEST_DIR/db" -E 7 &&
	test_must_fail dcpiprof -d "$TEST_DIR/nodb" &&
	test_must_fail dcpiprof -d "$TEST_DIR/db" --bogus
'

test_expect_success 'stripped program: procedures named by FDE ranges' '
	fixture stripped "image auto path=$STRIP buildid=$BID" "$(shapes_profile "$BID")" &&
	dcpiprof -d stripped >out &&
	grep -q " shapes-O2-strip+0x$(sym_vaddr "$O2" nested_loops | sed "s/^0*//")  " out &&
	grep -q " exit@plt " out
'

test_expect_success 'debug file by build-id names a stripped program' '
	d=dbg/.build-id/$(echo $BID | cut -c1-2) &&
	mkdir -p $d && cp "$PROGRAMS/shapes-O2.debug" $d/$(echo $BID | cut -c3-).debug &&
	dcpiprof -d stripped --debug-dir "$TEST_DIR/dbg" >out &&
	grep -q " nested_loops " out &&
	DCPI_DEBUG_DIR="$TEST_DIR/dbg" dcpiprof -d stripped | grep " nested_loops " >/dev/null
'

test_expect_success 'debug file by .gnu_debuglink names a stripped program' '
	fixture linked "image auto path=$PROGRAMS/shapes-O2-dbglink buildid=$BID" "$(shapes_profile "$BID")" &&
	dcpiprof -d linked | grep " nested_loops " >/dev/null
'

test_expect_success 'missing binary: one row for the image, a warning, exit 0' '
	fixture missing "image auto path=/nonexistent/prog buildid=$BID" "$(shapes_profile "$BID")" &&
	dcpiprof -d missing >out 2>err &&
	test_grep "^ *136 100.00% 100.00%  *16 100.00%  \[no binary\]  /nonexistent/prog" out &&
	test_grep "warning: cannot open ./nonexistent/prog." err &&
	dcpiprof -d missing -i | grep "/nonexistent/prog" >/dev/null
'

# The kernel names a mapping whose file was unlinked "PATH (deleted)": no
# file has that name, and PATH, if any, is another file.  Named from the
# database's snapshot, else said to be gone; the made-up path never opened.
test_expect_success 'a binary deleted while it ran: the snapshot, or said so' '
	fixture deleted "image auto path=$O2\\x20(deleted) buildid=$BID" "$(shapes_profile "$BID")" &&
	dcpiprof -d deleted >out 2>err && cat err &&
	test_grep "\[no binary\]" out &&
	test_grep "warning: $O2, deleted since; no snapshot" err &&
	! grep -q "cannot open" err &&
	mkdir -p deleted/binaries && cp "$O2" deleted/binaries/$BID &&
	dcpiprof -d deleted >out 2>err && cat err &&
	grep -q " nested_loops  *$O2 (deleted)$" out && test ! -s err
'

test_expect_success 'rebuilt binary: reported, not named unless --force' '
	fixture changed "image auto path=$NOPIE buildid=$BID" "$(shapes_profile "$BID")" &&
	dcpiprof -d changed >out 2>err &&
	test_grep "\[changed binary\]" out &&
	test_grep "is not the binary profiled" err &&
	dcpiprof -d changed --force >out 2>err &&
	! grep -q "changed binary" out &&
	test_grep "is not the binary profiled" err
'

test_expect_success 'no build-id: size and mtime decide' '
	size=$(stat -c %s "$O2") &&
	fixture sized "image k1 path=$O2 size=$size" "$(shapes_profile k1)" &&
	dcpiprof -d sized | grep nested_loops >/dev/null &&
	fixture resized "image k1 path=$O2 size=$((size + 1))" "$(shapes_profile k1)" &&
	dcpiprof -d resized 2>err | grep "changed binary" >/dev/null &&
	test_grep "changed since it was profiled" err
'

test_expect_success 'kernel: names from the epoch kallsyms, else one row' '
	fixture kernel "image kernel kind=kernel path=[kernel.kallsyms]" \
		"profile kernel cycles" "0xffffffff81000010 3" "0xffffffff81000104 4" &&
	dcpiprof -d kernel 2>err | grep "\[kernel\]" >/dev/null &&
	printf "%s\n" "ffffffff81000000 T _stext" "ffffffff81000100 t do_work" \
		"ffffffff81000200 T other" >ks.txt &&
	cp ks.txt kernel/000001/kallsyms &&
	dcpiprof -d kernel >out &&
	grep -q " do_work  *\[kernel.kallsyms\]" out &&
	grep -q " _stext  *\[kernel.kallsyms\]" out
'

test_expect_success 'JIT code: names from perf-PID.map' '
	fixture jit "image anon-4242 kind=anon path=[anon:4242]\\x20node" \
		"profile anon-4242 cycles" "0x7f0000001010 9" "0x7f0000009000 1" &&
	printf "7f0000001000 40 LazyCompile:*hot app.js:12\n" >jit/000001/perf-4242.map &&
	dcpiprof -d jit >out &&
	grep -q "LazyCompile:\*hot app.js:12" out &&
	grep -q "\[unknown\]" out
'

# Anonymous memory without a JIT map is common: one warning for the epoch,
# naming the processes whose samples it leaves unnamed; none for anonymous
# memory without samples.
test_expect_success 'no JIT map: said once per epoch, when it has samples' '
	fixture nomap "image anon-4242 kind=anon path=[anon:4242]\\x20node" \
		"image anon-4343 kind=anon path=[anon:4343]\\x20node" \
		"image anon-4444 kind=anon path=[anon:4444]\\x20node" \
		"profile anon-4242 cycles" "0x7f0000001010 9" \
		"profile anon-4343 imiss" "0x7f0000002010 2" &&
	dcpiprof -d nomap >out 2>err && cat err &&
	test $(grep -c "warning" err) = 1 &&
	test_grep "warning: epoch 1: 11 samples in anonymous memory of pid 4242, 4343 have no JIT map" err &&
	dcpistats -d nomap 1 1 >out 2>err && cat err &&
	test $(grep -c "warning" err) = 1
'

test_expect_success 'the unknown image' '
	fixture unknown "image unknown kind=unknown path=[unknown]" \
		"profile unknown cycles" "0x1234 2" &&
	dcpiprof -d unknown | grep "\[unknown\]  *\[unknown\]" >/dev/null
'

test_expect_success 'a malformed binary: "cannot read symbols", the rest works' '
	cp "$O2" bad && chmod u+w bad &&
	printf "\377\377\377\377\377\377\377\377" | dd of=bad bs=1 seek=$((0x28)) conv=notrunc 2>/dev/null &&
	fixture bad1 "image k2 path=$TEST_DIR/bad" "$(shapes_profile k2)" \
		"image auto path=$O2 buildid=$BID" "$(shapes_profile "$BID")" &&
	dcpiprof -d bad1 >out 2>err &&
	grep -q " nested_loops  *$O2" out &&
	grep -q "$TEST_DIR/bad" out &&
	test_grep "cannot read symbols of .$TEST_DIR/bad.: damaged section headers" err
'

test_done
