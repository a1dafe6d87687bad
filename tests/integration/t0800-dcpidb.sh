#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dcpidb on real recordings: check calls a fresh database sound and names
# each damaged file (profiles, text records, snapshots, blobs) with exit 1;
# info lists the epochs; prune (--keep, --label, --older-than, --max-size,
# -n) removes epochs oldest first and the snapshots no one uses, never the
# latest, and the reports still read what is left; gc removes what writers
# left behind; a database in use by a writer is refused for pruning.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/workloads/attr.sh"
require_sampling

W=$top_builddir/tests/workloads
RUN="dcpirun -q -F 2000"

# The findings of dcpidb check (without the summary), and its exit status.
check() { # DB
	dcpidb -d "$1" check >check.out 2>check.err
	local rc=$?
	cat check.out check.err
	return $rc
}

test_expect_success 'a fresh recording is sound' '
	$RUN -d db --label before -- $W/wl-three >/dev/null &&
	$RUN -d db --label after -- $W/wl-lib >/dev/null &&
	$RUN -d db --label after -- $W/wl-three >/dev/null &&
	check db &&
	tail -n 1 check.out | grep "^sound: 3 epochs" &&
	test "$(wc -l <check.out)" = 1 &&
	ls db/binaries | grep -q . &&
	cp -a db pristine
'

# With -g the unwinding worker makes tables ahead, for every binary a
# process maps; those no sample lands in are not kept, so a new database
# has nothing for gc (python3 maps many libraries it does not run).
test_expect_success 'a fresh recording with stacks checks clean: no notes' '
	command -v python3 >/dev/null || { echo "no python3 here"; exit 0; }
	$RUN -g -d gdb -- sh -c "$W/wl-three -n 20000000 && python3 -c \"sum(range(2000000))\"" >/dev/null &&
	check gdb &&
	tail -n 1 check.out | grep "0 errors, 0 warnings, 0 notes$" &&
	test "$(wc -l <check.out)" = 1
'

test_expect_success 'check --json says the same' '
	dcpidb -d db check --json >c.json &&
	grep -q "\"sound\": true" c.json && grep -q "\"errors\": 0" c.json &&
	grep -q "\"epochs\": 3" c.json
'

# Damages FILE of a copy of the pristine database with CMD, then expects
# check to exit 1 naming PATH with MESSAGE.
damaged() { # PATH MESSAGE CMD...
	local path=$1 msg=$2
	shift 2
	rm -rf bad && cp -a pristine bad &&
	(cd bad && "$@") &&
	test_must_fail dcpidb -d bad check >check.out 2>&1 &&
	cat check.out &&
	grep -F "error   $path: $msg" check.out &&
	tail -n 1 check.out | grep "^damaged: "
}
prof() { ls pristine/000001/*.cycles.prof | head -n 1 | xargs basename; }

test_expect_success 'check names each damaged file' '
	p=$(prof) &&
	damaged "000001/$p" "corrupt profile: bad payload checksum" flip_byte "000001/$p" 130 &&
	damaged "000001/$p" "corrupt profile: bad header checksum" flip_byte "000001/$p" 20 &&
	damaged "000001/$p" "corrupt profile: " truncate -s 100 "000001/$p" &&
	damaged 000002/meta "corrupt epoch metadata: " flip_byte 000002/meta 20 &&
	damaged 000002/meta "missing" rm 000002/meta &&
	damaged 000003/images "corrupt image index: " truncate -s -10 000003/images &&
	damaged current "corrupt: " flip_byte current 3 &&
	{ ! test -e pristine/000001/kallsyms ||
	  damaged 000001/kallsyms "corrupt kernel symbols: trailing bytes" \
		sh -c "echo garbage >>000001/kallsyms"; } &&
	b=$(ls pristine/binaries | head -n 1) &&
	damaged "binaries/$b" "truncated: its ELF header tables lie past its end" truncate -s 8192 "binaries/$b" &&
	damaged "binaries/$b" "not an ELF file holding build-id $b" sh -c "cp ../pristine/000001/meta binaries/$b" &&
	damaged 000002/extra "corrupt blob: truncated header" sh -c "printf DCPIXXXXjunk >000002/extra"
'

# A symbol renamed in the epoch's kallsyms (same length, as a forger would)
# is caught by its checksum, and the reports do not print the forged name;
# an older database's plain kallsyms is read, as unverified.
forge_kallsyms() { # DB: renames the first symbol's first letter to Q
	off=$(grep -abo -m 1 "^[0-9a-f]\{16\} [tTwW] [a-zA-Z_]" "$1/000001/kallsyms" | head -n 1 | cut -d: -f1) &&
	off=$((off + 19)) &&
	printf Q | dd of="$1/000001/kallsyms" bs=1 seek=$off conv=notrunc status=none
}
test_expect_success 'a forged kallsyms fails the check and is not believed' '
	test -e pristine/000001/kallsyms || { echo "no kernel samples here: nothing to forge"; exit 0; }
	rm -rf bad && cp -a pristine bad && forge_kallsyms bad &&
	! cmp -s pristine/000001/kallsyms bad/000001/kallsyms &&
	test_must_fail dcpidb -d bad check >check.out 2>&1 && cat check.out &&
	grep -F "error   000001/kallsyms: corrupt kernel symbols: bad payload checksum" check.out &&
	test_expect_code 2 dcpiprof -d bad -E 1 >prof.out 2>prof.err &&
	grep "^  damaged  bad/000001/kallsyms: corrupt kernel symbols" prof.out &&
	! grep " Q[A-Za-z0-9_.]*  *\[kernel.kallsyms\]" prof.out
'

test_expect_success 'a plain kallsyms of an older dcpi is read, unverified' '
	test -e pristine/000001/kallsyms || { echo "no kernel samples here"; exit 0; }
	rm -rf old && cp -a pristine old &&
	dcpi-test-helper symfile pristine 1 kallsyms >old/000001/kallsyms &&
	dcpidb -d old check >check.out 2>&1 && cat check.out &&
	grep -F "warning 000001/kallsyms: no checksum (written by an older dcpi)" check.out &&
	dcpiprof -d old -E 1 >prof.out 2>prof.err && cat prof.err &&
	grep -A1 "^Unverified: " prof.out | grep "old/000001/kallsyms" &&
	grep -F "unverified" prof.err
'

test_expect_success 'what readers ignore is a warning, what writers leave a note' '
	rm -rf bad && cp -a pristine bad &&
	echo hello >bad/000001/README &&
	mkdir bad/.tmp.prune-000001.0123456789abcdef &&
	cp pristine/000001/meta bad/000002/x.cycles.prof.corrupt &&
	dcpidb -d bad check >check.out &&
	cat check.out &&
	grep "^warning 000001/README: a file dcpi does not know" check.out &&
	grep "^note    .tmp.prune-000001.0123456789abcdef: orphaned temporary directory" check.out &&
	grep "^note    000002/x.cycles.prof.corrupt: quarantined" check.out &&
	tail -n 1 check.out | grep "^sound: .* 0 errors, 1 warning, 2 notes"
'

test_expect_success 'info lists the epochs with their labels and sizes' '
	dcpidb -d db info >info.out &&
	cat info.out &&
	grep "^database db: .* in 3 epochs, current 3" info.out &&
	grep -E "^ +1  before " info.out && grep -E "^ +3\* after " info.out &&
	grep "^binaries: [1-9][0-9]* snapshots" info.out &&
	dcpidb -d db info --json >info.json &&
	grep -q "\"label\": \"before\"" info.json
'

test_expect_success 'prune -n removes nothing' '
	dcpidb -d db prune --keep 1 -n >out &&
	cat out &&
	grep "^would remove epoch 1 .before." out && grep "^would remove epoch 2 .after." out &&
	test "$(ls -d db/0* | wc -l)" = 3
'

test_expect_success 'prune --keep 1: the older epochs and the snapshots only they used go' '
	used_by_3=$(dcpi-test-helper dump db 3 | awk "\$1 == \"image\" && \$4 != \"-\" { print \$4 }" | sort -u) &&
	dcpidb -d db prune --keep 1 >out &&
	cat out &&
	grep "^removed 2 epochs and [1-9][0-9]* snapshots" out &&
	test -z "$(ls db | grep -v "^000003$" | grep "^0")" &&
	check db && tail -n 1 check.out | grep "^sound: 1 epochs" &&
	ls db/binaries | sort >left &&
	for b in $(cat left); do echo "$used_by_3" | grep -qx "$b" || { echo "$b unused"; exit 1; }; done &&
	dcpiprof -d db >/dev/null &&
	dcpiprof -d db -E after | grep -q three
'

test_expect_success 'prune --label, --older-than and --max-size' '
	rm -rf db && cp -a pristine db &&
	dcpidb -d db prune --label after >out && cat out &&
	grep "^removing epoch 2 .after." out && ! grep "epoch 3" out &&
	test -d db/000001 && test -d db/000003 && ! test -e db/000002 &&
	dcpidb -d db prune --older-than 1 >out && grep "^removed 0 epochs" out &&
	dcpidb -d db prune --older-than 0.00000001 >out && grep "^removed 1 epoch" out &&
	test -d db/000003 &&
	rm -rf db && cp -a pristine db &&
	limit=$(( $(du -sB1 db | cut -f1) - 4096 )) &&
	dcpidb -d db prune --max-size $limit >out && cat out &&
	grep "^removing epoch 1 .before." out &&
	test "$(du -sB1 db | cut -f1)" -le $limit &&
	dcpidb -d db prune --max-size 1 2>err >out && cat out err &&
	grep "stays above 1 B: the latest and current epochs are kept" err &&
	test -d db/000003 && check db
'

test_expect_success 'prune needs a criterion, and refuses a database in use' '
	test_must_fail dcpidb -d db prune 2>err &&
	grep "prune needs --keep, --max-size, --older-than or --label" err &&
	test_must_fail dcpidb -d db prune --keep 1x 2>err && grep "bad number of epochs" err &&
	test_must_fail dcpidb -d db prune --max-size 1Q 2>err && grep "bad size .1Q." err || exit 1
	dcpi-test-helper merge-loop db 1 & pid=$!
	for i in $(seq 50); do grep -qx "$pid" db/lock 2>/dev/null && break; sleep 0.1; done
	test_must_fail dcpidb -d db prune --keep 1 2>err &&
	test_must_fail dcpidb -d db gc 2>>err &&
	dcpidb -d db info >/dev/null
	ok=$?
	kill $pid; wait $pid
	cat err &&
	test $ok = 0 &&
	grep "is in use by another writer (pid $pid)" err &&
	grep "hint: a running dcpid removes epochs itself" err
'

test_expect_success 'gc removes unused snapshots and orphaned temporary files' '
	rm -rf db && cp -a pristine db &&
	cp db/binaries/$(ls db/binaries | head -n 1) db/binaries/abcdef01 &&
	mkdir db/.tmp.prune-000009.0123456789abcdef && : >db/000001/.tmp.meta.0123456789abcdef &&
	dcpidb -d db gc -n >out && cat out &&
	grep "^would remove snapshot abcdef01" out && test -e db/binaries/abcdef01 &&
	dcpidb -d db gc >out && cat out &&
	grep "^removed 1 unused snapshot (.*) and 2 orphaned temporary files" out &&
	! test -e db/binaries/abcdef01 && ! test -e db/.tmp.prune-000009.0123456789abcdef &&
	check db && test "$(wc -l <check.out)" = 1
'

test_expect_success 'bad usage' '
	test_must_fail dcpidb 2>err && grep "usage: dcpidb" err &&
	test_must_fail dcpidb frob 2>err && grep "unknown command" err &&
	test_must_fail dcpidb -d nowhere check 2>err && grep "no profile database at .nowhere." err &&
	dcpidb --help | grep "^  check " &&
	dcpidb prune --help | grep -- "--older-than DAYS"
'

test_done
