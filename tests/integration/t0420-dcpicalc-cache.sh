#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dcpicalc's cache of what depends only on the binary (CFGs, schedules:
# calc/BUILD-ID.MODEL in the database) and its threads: the same reports
# cold, from the cache and on several threads; a damaged cache said and
# made again, a stale one too (said, never used); dcpidb check reads it,
# gc removes those no epoch uses.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/programs/fixture-lib.sh"

O2=$PROGRAMS/shapes-O2
BID=$(build_id "$O2")

# Samples on every instruction of the binary's code.
profile() { # KEY
	echo "profile $1 cycles"
	objdump -d --no-show-raw-insn "$O2" | awk -F: '/^ *[0-9a-f]+:/ { gsub(/ /, "", $1); print $1 }' |
		while read -r a; do
			echo "0x$(vaddr_to_off "$O2" "$a") $(( (0x$a * 7) % 5 + 1 ))"
		done
}

test_expect_success 'setup' '
	{
		echo "epoch mhz=1000"
		echo "event cycles used=clock period=100000 unit=ns"
		echo "image auto path=$O2 buildid=$BID"
		profile "$BID"
	} >db.txt &&
	dcpi-test-helper build db db.txt >/dev/null &&
	dcpicalc -d db --image "$O2" --no-cache >plain &&
	dcpicalc -d db --image "$O2" --no-cache --json >plain.json &&
	test "$(grep -c "^Procedure " plain)" -gt 3 &&
	! test -e db/calc
'

test_expect_success 'the first analysis stores the cache, the next ones read it: the same reports' '
	dcpicalc -d db --image "$O2" -j 1 >cold 2>err &&
	! grep "cached analysis" err &&
	test_cmp plain cold &&
	ls db/calc >files &&
	test "$(wc -l <files)" = 1 &&
	test_grep "^$BID\.[a-z0-9-]*$" files &&
	dcpicalc -d db --image "$O2" -j 1 >warm 2>err &&
	! grep "cached analysis" err &&
	test_cmp plain warm &&
	dcpicalc -d db --image "$O2" -j 2 >warm2 &&
	test_cmp plain warm2 &&
	dcpicalc -d db --image "$O2" --json -j 2 >warm.json &&
	test_cmp plain.json warm.json &&
	for s in cold pred auto; do
		dcpicalc -d db --image "$O2" --schedule $s --no-cache --summary >p.$s &&
		dcpicalc -d db --image "$O2" --schedule $s --summary >c.$s &&
		test_cmp p.$s c.$s || return 1
	done
'

test_expect_success 'dcpidb check reads the cache; info counts it' '
	dcpidb -d db check >out &&
	test_grep "^sound: " out &&
	test_grep ", 0 warnings" out &&
	dcpidb -d db info >out &&
	test_grep "^analyses: 1 cached" out
'

test_expect_success 'a damaged cache is said, made again, and the reports do not change' '
	f=db/calc/$(cat files) &&
	size=$(stat -c %s "$f") &&
	flip_byte "$f" $((size / 2)) &&
	dcpidb -d db check >out &&
	test_grep "^warning *calc/$BID\.[a-z0-9-]*: damaged cached analysis" out &&
	dcpicalc -d db --image "$O2" >again 2>err &&
	test_cmp plain again &&
	test_grep "warning: cached analysis .* is damaged" err &&
	dcpidb -d db check >out &&
	test_grep ", 0 warnings" out &&
	dcpicalc -d db --image "$O2" >again 2>err &&
	! grep "cached analysis" err &&
	test_cmp plain again
'

test_expect_success 'a stale cache (another binary'"'"'s records under this name) is said, not used' '
	O0=$PROGRAMS/shapes-O0 &&
	BID0=$(build_id "$O0") &&
	{
		echo "epoch mhz=1000"
		echo "event cycles used=clock period=100000 unit=ns"
		echo "image auto path=$O0 buildid=$BID0"
		echo "profile $BID0 cycles"
		objdump -d --no-show-raw-insn "$O0" |
			awk -F: "/^ *[0-9a-f]+:/ { gsub(/ /, \"\", \$1); print \$1 }" |
			while read -r a; do echo "0x$(vaddr_to_off "$O0" "$a") 3"; done
	} >db0.txt &&
	dcpi-test-helper build db0 db0.txt >/dev/null &&
	dcpicalc -d db0 --image "$O0" >/dev/null &&
	f=db/calc/$(cat files) &&
	cp db0/calc/$BID0.* "$f" &&
	dcpidb -d db check >out &&
	test_grep ", 0 warnings" out &&
	dcpicalc -d db --image "$O2" >again 2>err &&
	test_cmp plain again &&
	test_grep "warning: cached analysis .* is stale" err &&
	dcpicalc -d db --image "$O2" >again 2>err &&
	! grep "cached analysis" err &&
	test_cmp plain again
'

test_expect_success 'dcpidb gc removes the analyses of binaries no epoch uses' '
	cp db/calc/$(cat files) db/calc/0123456789abcdef.znver4 &&
	dcpidb -d db check >out &&
	test_grep "^note *calc/0123456789abcdef.znver4: no epoch uses this cached analysis" out &&
	dcpidb -d db gc >out &&
	test_grep "removing cached analysis 0123456789abcdef.znver4" out &&
	test_grep "1 unused cached analysis" out &&
	! test -e db/calc/0123456789abcdef.znver4 &&
	test -f db/calc/$(cat files)
'

test_done
