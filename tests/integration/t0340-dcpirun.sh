#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dcpiprof and dcpilist on real recorded profiles (dcpirun): the test
# program's hot loop, a stripped system program named by FDE ranges, and
# a shared library named by .dynsym.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/programs/fixture-lib.sh"

require_sampling
GZIP=$(command -v gzip)
LIBC=$(readlink -f "$(ldd "$GZIP" 2>/dev/null | awk '/libc\.so/ { print $3; exit }')")

test_expect_success 'the hot loop of a test program' '
	dcpirun -d loops -- "$PROGRAMS/shapes-O2" loops 4000 >/dev/null &&
	dcpiprof -d loops "$PROGRAMS/shapes-O2" >out &&
	grep -A1 procedure out | tail -1 | grep " nested_loops " >/dev/null &&
	dcpilist -d loops nested_loops@shapes-O2 >out &&
	grep -q "^  cycles.*: [1-9][0-9]* samples" out &&
	dcpiprof -d loops --json | dcpi-disasm-check json
'

test_expect_success 'a stripped program: procedures named by FDE ranges' '
	head -c 4000000 "$LIBC" >data &&
	dcpirun -d gz -- "$GZIP" -9 -c data >/dev/null &&
	dcpiprof -d gz "$GZIP" >out &&
	grep -q " gzip+0x[0-9a-f]*  *$GZIP$" out &&
	top=$(grep -A1 procedure out | tail -1 | awk "{ print \$(NF-1) }") &&
	dcpilist -d gz "$top" >list &&
	grep -q "^Procedure $top in $GZIP" list
'

# At 10 kHz: at the default 1 kHz, beside CI's two busy loops, sort got 83
# samples, every one of libc's in an ifunc variant (__memcmp_evex_movbe),
# which .dynsym does not name.
test_expect_success 'a shared library: procedures named by .dynsym' '
	dcpirun -d lib -F 10000 -- sh -c "seq 1 200000 | sort -r | sort -n >/dev/null" &&
	DCPI_DEBUG_DIR=/nonexistent dcpiprof -d lib "$(basename "$LIBC")" >out &&
	names=$(grep "  $LIBC$" out | awk "{ print \$(NF-1) }") &&
	nm -D --defined-only "$LIBC" | awk "{ sub(\"@.*\", \"\", \$3); print \$3 }" >dynsym &&
	echo "$names" | grep -x -F -f dynsym | sed -n 1p | grep . >/dev/null
'

test_done
