#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dcpiprof and dcpilist on the system's own binaries, with fixture
# profiles at real file offsets (computed with binutils): a stripped
# program (gzip) is named by its .eh_frame FDE ranges and PLT stubs, the C
# library by .dynsym (and by .symtab from its debug file when the debug
# package is installed).  t0340 does the same with recorded profiles.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/programs/fixture-lib.sh"

GZIP=$(command -v gzip)
LIBC=$(readlink -f "$(ldd "$GZIP" 2>/dev/null | awk '/libc\.so/ { print $3; exit }')")
[ -n "$GZIP" ] && [ -n "$LIBC" ] || skip_all "no gzip or no C library found"
readelf -S "$GZIP" | grep " .symtab " >/dev/null && skip_all "$GZIP is not stripped"

GBID=$(build_id "$GZIP")
LBID=$(build_id "$LIBC")
# three FDE ranges of gzip's .text, and one PLT stub
TEXT=$(readelf -SW "$GZIP" | awk '$2 == ".text" { print $4, $6 }')
FDES=$(fde_starts "$GZIP" | sort | while read -r a; do
	set -- $TEXT
	[ $((0x$a)) -ge $((0x$1)) ] && [ $((0x$a)) -lt $((0x$1 + 0x$2)) ] && echo "$a"
done | sed -n '3p;7p;11p' | sed 's/^0*//')
# a PLT stub (read@plt when there is one), "ADDRESS NAME"
PLTS=$(objdump -d "$GZIP" | sed -n 's/^0*\([0-9a-f]*\) <\([a-z_0-9]*@plt\)>:$/\1 \2/p')
PLT_LINE=$(printf '%s\n' "$PLTS" | awk '$2 == "read@plt" { print; f = 1 } END { if (!f) print "" }')
[ -n "$PLT_LINE" ] || PLT_LINE=$(printf '%s\n' "$PLTS" | sed -n 1p)
PLT=${PLT_LINE% *} PLT_NAME=${PLT_LINE#* }

gzip_profile() {
	echo "profile $GBID cycles"
	n=10
	for a in $FDES; do
		echo "0x$(vaddr_to_off "$GZIP" "$a") $n"
		n=$((n * 2))
	done
	[ -n "$PLT" ] && echo "0x$(vaddr_to_off "$GZIP" "$PLT") 1"
}

LIBC_SYMS="qsort getenv strtol"
libc_profile() {
	echo "profile $LBID cycles"
	n=5
	for s in $LIBC_SYMS; do
		echo "0x$(vaddr_to_off "$LIBC" "$(dynsym_vaddr "$LIBC" "$s")") $n"
		n=$((n + 1))
	done
}

# dynsym_names ADDR: every .dynsym name at an address, without versions
dynsym_names() {
	nm -D --defined-only "$LIBC" | awk -v a="$1" '$1 == a { sub("@.*", "", $3); print $3 }'
}

test_expect_success 'setup: fixture profiles of gzip and the C library' '
	test "$(echo $FDES | wc -w)" = 3 &&
	{
		echo "epoch"
		echo "event cycles used=clock period=100000 unit=ns"
		echo "image auto path=$GZIP buildid=$GBID"
		gzip_profile
		echo "image auto path=$LIBC buildid=$LBID"
		libc_profile
	} >fx.txt &&
	dcpi-test-helper build db fx.txt >/dev/null
'

test_expect_success 'a stripped program: procedures named by FDE ranges' '
	dcpiprof -d db "$GZIP" >out &&
	for a in $FDES; do
		grep -q " gzip+0x$a  *$GZIP$" out || { echo "no row for gzip+0x$a"; exit 1; }
	done &&
	grep -A1 procedure out | tail -1 | grep "gzip+0x$(echo $FDES | awk "{ print \$3 }")" >/dev/null
'

if [ -z "$PLT" ]; then
	test_skip 'a stripped program: PLT stubs by their relocations' "$GZIP has no PLT stubs"
else
	test_expect_success 'a stripped program: PLT stubs by their relocations' '
		dcpiprof -d db "$GZIP" >out &&
		test_grep " $PLT_NAME  *$GZIP$" out
	'
fi

test_expect_success 'a stripped program: listing an FDE-named procedure' '
	a=$(echo $FDES | awk "{ print \$1 }") &&
	dcpilist -d db gzip+0x$a >out &&
	test_grep "^Procedure gzip+0x$a in $GZIP" out &&
	grep -q "^ *$a  *10  " out
'

test_expect_success 'a shared library: procedures named by .dynsym' '
	DCPI_DEBUG_DIR=/nonexistent dcpiprof -d db "$LIBC" >out &&
	for s in $LIBC_SYMS; do
		a=$(dynsym_vaddr "$LIBC" "$s") &&
		name=$(grep "  $LIBC$" out | awk -v s=$((5 + 0)) "{ print \$(NF-1) }" |
			grep -x -F -f <(dynsym_names "$a") | sed -n 1p) &&
		test -n "$name" || { echo "no .dynsym name for $s"; cat out; exit 1; }
	done &&
	! grep -q "libc.so.6+0x" out
'

test_expect_success 'a shared library: listing by NAME@IMAGE' '
	DCPI_DEBUG_DIR=/nonexistent dcpilist -d db getenv@$(basename "$LIBC") >out &&
	test "$(grep -c "^ *[0-9a-f]\{4,\}  " out)" -gt 5
'

DEBUG=/usr/lib/debug/.build-id/$(echo "$LBID" | cut -c1-2)/$(echo "$LBID" | cut -c3-).debug
if [ -r "$DEBUG" ]; then
	test_expect_success 'the C library debug file: names from its .symtab' '
		dcpilist -d db qsort@$(basename "$LIBC") >out 2>err &&
		test_grep "^Procedure" out
	'
	if readelf -S "$DEBUG" | grep debug_line >/dev/null; then
		test_expect_success 'the C library debug file: lines from DWARF' '
			dcpilist -d db --source qsort@$(basename "$LIBC") >out &&
			test_grep "\.c:[0-9]" out
		'
	else
		test_skip 'the C library debug file: lines from DWARF' "$DEBUG has no .debug_line"
	fi
else
	test_skip 'the C library debug file' "no $DEBUG (install libc6-dbg)"
fi

test_done
