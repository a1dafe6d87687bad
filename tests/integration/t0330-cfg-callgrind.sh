#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# CFGs and frequency classes against ground truth: callgrind counts every
# instruction execution exactly, and the blocks of one frequency class must
# all have run equally often.  Checked on the test programs (-O0, -O2,
# stripped), on a stripped system program (gzip, compressing and
# decompressing) and on the C library's procedures that ran.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/programs/fixture-lib.sh"

command -v valgrind >/dev/null || skip_all "valgrind is not installed"
GZIP=$(command -v gzip)
LIBC=$(readlink -f "$(ldd "$GZIP" 2>/dev/null | awk '/libc\.so/ { print $3; exit }')")

callgrind() { # OUT CMD...
	local out=$1
	shift
	valgrind --tool=callgrind --dump-instr=yes --collect-jumps=yes --compress-pos=no \
		--compress-strings=no --callgrind-out-file="$out" "$@" >/dev/null 2>valgrind.err
}

for prog in shapes-O0 shapes-O2 shapes-O2-strip; do
	test_expect_success "$prog: classes agree with execution counts" "
		callgrind $prog.cg '$PROGRAMS/$prog' all 300 &&
		dcpi-disasm-check cfg-check '$PROGRAMS/$prog' $prog.cg >out &&
		cat out &&
		grep -q ' 0 mismatches' out
	"
done

test_expect_success 'gzip (stripped): classes agree with execution counts' '
	head -c 600000 "$LIBC" >data &&
	callgrind gz.cg "$GZIP" -c data &&
	gzip -c data >data.gz &&
	callgrind gunzip.cg "$GZIP" -dc data.gz &&
	dcpi-disasm-check cfg-check "$GZIP" gz.cg >out && cat out &&
	dcpi-disasm-check cfg-check "$GZIP" gunzip.cg >out && cat out
'

test_expect_success 'the C library: classes agree with execution counts' '
	dcpi-disasm-check cfg-check "$LIBC" gz.cg >out && cat out &&
	callgrind ls.cg ls -lR "$top_srcdir" &&
	dcpi-disasm-check cfg-check "$LIBC" ls.cg >out && cat out
'

test_done
