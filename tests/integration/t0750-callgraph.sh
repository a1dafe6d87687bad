#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Call stacks end to end: dcpirun -g on a program built -O2
# without frame pointers and on Debian's own binaries, unwound at
# collection time; how many stacks reach their thread's entry; the 3:1
# split of a leaf between two callers; cycles; frame pointers; --append;
# the unprivileged worker; dcpicg's listings and its errors.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/workloads/attr.sh"
require_root
require_sampling

W=$top_builddir/tests/workloads
HELPER=dcpi-test-helper

# The share of user stacks of process COMM that reached their thread's
# entry (the walk ended at the outermost frame), as a decimal; prints the
# walk endings too.
complete_share() { # DB COMM
	$HELPER stacks "$1" >stacks.txt || return 1
	awk -v comm="$2" '
	$1 == "stack" && $6 == comm && $7 != "kernel" { all += $3; end[$7] += $3 }
	END {
		for (e in end) printf "# %s %d\n", e, end[e] > "/dev/stderr"
		if (!all) { print 0; exit }
		printf "%.4f\n", end["complete"] / all
	}' stacks.txt
}

# From dcpicg's call graph: the time procedure CHILD spent on behalf of
# PARENT (self + descendants of the parent line in CHILD's entry).
arc_time() { # LISTING PARENT CHILD
	awk -v parent="$2" -v child="$3" '
	/^-----/ { n = 0; next }
	/^\[/ { if ($0 ~ " " child " \\[[0-9]+\\]$") for (i = 0; i < n; i++) print line[i]; n = 0; next }
	{ line[n++] = $0 }' "$1" |
	awk -v parent="$2" 'NF == 5 && $(NF - 1) == parent { print $1 + $2; found = 1 } END { exit !found }'
}

# Stacks against the CPU time the run took (rucpu): at least half the
# samples it stands for at 2 kHz.
test_expect_success 'dcpirun -g: wl-callers (-O2, no frame pointers) in a thread' '
	dcpirun -g -e cycles -F 2000 -d cg.db -- rucpu cg.cpu -- $W/wl-callers --thread >out 2>err &&
	cat out err &&
	grep -q "user stacks complete ([1-9][0-9]* unwind tables, 0 binaries without)" err &&
	! grep -q "worker" err &&
	ls cg.db/000001/stacks-* &&
	$HELPER check cg.db >/dev/null &&
	floor=$(awk "{ printf \"%d\", \$1 * 2000 / 2 }" cg.cpu) &&
	echo "$(meta_counter cg.db 000001 stacks) stacks in $(cat cg.cpu) s of CPU: at least $floor" &&
	test "$(meta_counter cg.db 000001 stacks)" -ge "$floor" &&
	test "$(meta_counter cg.db 000001 stacks)" -gt 0 &&
	test "$(meta_counter cg.db 000001 stacks)" = \
		"$(awk "\$1 == \"event\" { print \$7 }" cg.db/000001/meta)"
'

test_expect_success 'at least 95% of its user stacks reach the thread entry' '
	share=$(complete_share cg.db wl-callers) && echo "complete: $share" &&
	near "$share" 1 0.05 &&
	dcpicg -d cg.db --comm wl-callers >cg.txt &&
	head -n 1 cg.txt &&
	grep -q "of the [0-9]* user stacks reach their thread.s entry" cg.txt &&
	grep -q "start_thread \[" cg.txt &&
	grep -q "clone3 \[" cg.txt
'

test_expect_success 'the 3:1 split of leaf between caller_a and caller_b, within 5 points' '
	a=$(arc_time cg.txt caller_a leaf) && b=$(arc_time cg.txt caller_b leaf) &&
	share=$(awk -v a=$a -v b=$b "BEGIN { printf \"%.4f\", a / (a + b) }") &&
	echo "caller_a $a s, caller_b $b s: $share" &&
	near "$share" 0.75 0.05
'

# A signal handler's stacks go through the kernel's signal frame (glibc's
# __restore_rt, an FDE marked 'S') into raise() and main.
test_expect_success 'a signal handler: its stacks reach main through the signal frame' '
	dcpirun -q -g -e cycles -F 2000 -d sig.db -- $W/wl-callers --signal >sig.out &&
	share=$(complete_share sig.db wl-callers) && echo "complete: $share" &&
	near "$share" 1 0.05 &&
	dcpicg -d sig.db --json main on_signal | python3 -c "
import json, sys
l = json.load(sys.stdin)[\"listings\"][0]
p = {x[\"procedure\"]: x for x in l[\"procedures\"]}
n = l[\"samples\"]
print(n, \"samples; main\", p[\"main\"][\"total\"], \"on_signal\", p[\"on_signal\"][\"total\"],
      \"its parents\", [x[\"procedure\"] for x in p[\"on_signal\"][\"parents\"]])
assert p[\"on_signal\"][\"total\"] >= 0.9 * n
assert p[\"main\"][\"total\"] >= 0.9 * n
raise_ = [c for c in p[\"main\"][\"children\"] if c[\"procedure\"] == \"raise\"]
assert raise_ and raise_[0][\"samples\"] >= 0.9 * n, p[\"main\"][\"children\"]
"
'

# A CFA kept elsewhere than in rsp or rbp: wl-callers --asm keeps it in rax
# for half its work and as the entry's rsp in a stack slot for the other
# half, as OpenSSL's assembly does (and its AES-GCM, where the walks used
# to end: 11.8% of the stacks were whole).
test_expect_success 'CFAs kept in a register or a stack slot (as OpenSSL keeps them)' '
	dcpirun -q -g -e cycles -F 2000 -d asm.db -- $W/wl-callers --asm &&
	share=$(complete_share asm.db wl-callers) && echo "wl-callers --asm: $share" &&
	near "$share" 1 0.05 &&
	dcpicg -d asm.db asm_leaf >asm.txt &&
	a=$(arc_time asm.txt caller_asm asm_leaf) && echo "asm_leaf for caller_asm: $a s" &&
	dcpilist -d asm.db --json asm_leaf | python3 -c "
import json, sys
i = json.load(sys.stdin)[\"instructions\"]
half = int([x for x in i if x[\"text\"].startswith(\"xor\")][0][\"address\"], 16)
n = [sum(sum(x[\"samples\"].values()) for x in i if (int(x[\"address\"], 16) < half) == first)
     for first in (True, False)]
print(\"samples: rax half\", n[0], \"slot half\", n[1])
assert min(n) > 0.25 * sum(n), n
" &&
	if command -v openssl >/dev/null; then
		dcpirun -q -g -e cycles -F 2000 -d ssl.db -- \
			openssl speed -seconds 1 -evp aes-128-gcm -bytes 16384 >/dev/null 2>&1 &&
		share=$(complete_share ssl.db openssl) && echo "openssl aes-128-gcm: $share" &&
		near "$share" 1 0.05
	fi
'

# Go: its only CFI is a compressed .debug_frame, and its leaf functions
# build no frame (a frame-pointer walk would give leaf to main.main).
if command -v go >/dev/null 2>&1; then
	test_expect_success 'a Go program: unwound by its .debug_frame, the 3:1 split within 5 points' '
		cp "$top_srcdir"/tests/workloads/wl-go/main.go "$top_srcdir"/tests/workloads/wl-go/go.mod . &&
		HOME=$TEST_DIR GOCACHE=$TEST_DIR/gocache GOFLAGS=-mod=mod go build -o wl-go . &&
		dcpirun -q -g -e cycles -F 2000 -d go.db -- ./wl-go 10000000 2>/dev/null &&
		share=$(complete_share go.db wl-go) && echo "wl-go: $share" &&
		near "$share" 1 0.05 &&
		dcpicg -d go.db main.leaf >go.txt &&
		a=$(arc_time go.txt main.callerA main.leaf) && b=$(arc_time go.txt main.callerB main.leaf) &&
		share=$(awk -v a=$a -v b=$b "BEGIN { printf \"%.4f\", a / (a + b) }") &&
		echo "callerA $a s, callerB $b s: $share" &&
		near "$share" 0.75 0.05
	'
else
	test_skip 'a Go program: unwound by its .debug_frame, the 3:1 split within 5 points' 'no go'
fi

test_expect_success 'mutual recursion is a cycle; calls are never guessed' '
	n=$(sed -n "s/.* ping <cycle \([0-9]*\)> .*/\1/p" cg.txt | head -n 1) &&
	test -n "$n" &&
	grep -q "<cycle $n as a whole>" cg.txt &&
	grep -q "pong <cycle $n>" cg.txt &&
	grep -q "Calls were not counted (-)" cg.txt &&
	dcpicg -d cg.db --json >cg.json &&
	"$top_builddir/tests/programs/dcpi-disasm-check" json cg.json &&
	grep -q "\"called\": null" cg.json &&
	! grep -q "\"called\": [0-9]" cg.json
'

# The profiled command looks at its siblings: dcpirun's other child is the worker, dcpi-unwind.
cat >siblings.sh <<-\EOF
	sleep 0.3
	for p in $(cat /proc/$PPID/task/*/children); do
		[ "$(awk '/^Name:/ { print $2 }' /proc/$p/status)" = dcpi-unwind ] || continue
		grep "^Uid:\|^NoNewPrivs:\|^Seccomp:" /proc/$p/status
	done
EOF
test_expect_success 'the unwinding worker runs as dcpi-worker (nobody without it), without new privileges, under seccomp' '
	dcpirun -q -g -d w.db -- sh siblings.sh >worker.status &&
	cat worker.status &&
	u=$(worker_uid) &&
	grep -q "^Uid:	$u	$u	$u	$u\$" worker.status &&
	grep -q "^NoNewPrivs:	1" worker.status &&
	grep -q "^Seccomp:	2" worker.status
'

# Debian's binaries: stripped, -O2, no frame pointers.
head -c 6000000 /dev/urandom | base64 >input.txt
# Each run's stacks are counted against the CPU time it took (rucpu): at 2
# kHz, at least half the samples that time stands for must have a stack.
test_expect_success 'gzip, xz, sort: at least 95% of user stacks complete' '
	dcpirun -q -g -e cycles -F 2000 -d gz.db -- rucpu gzip.cpu -- gzip -6 -c input.txt >/dev/null &&
	dcpirun -q -g -e cycles -F 2000 -d xz.db -- rucpu xz.cpu -- xz -1 -T1 -c input.txt >/dev/null &&
	dcpirun -q -g -e cycles -F 2000 -d sort.db -- rucpu sort.cpu -- sort --parallel=2 -S 64M input.txt >/dev/null &&
	for p in gzip:gz.db xz:xz.db sort:sort.db; do
		c=${p%%:*}
		share=$(complete_share ${p#*:} $c) &&
		n=$(awk -v c=$c "\$1 == \"stack\" && \$6 == c { n += \$3 } END { print n }" stacks.txt) &&
		floor=$(awk "{ printf \"%d\", \$1 * 2000 / 2 }" $c.cpu) &&
		echo "$c: $share of $n stacks ($(cat $c.cpu) s of CPU: at least $floor)" &&
		test "$n" -ge "$floor" && test "$n" -gt 0 && near "$share" 1 0.05 || return 1
	done
'

if [ -x /usr/bin/python3 ]; then
	test_expect_success 'python3: at least 95% of user stacks complete' '
		dcpirun -q -g -e cycles -F 2000 -d py.db -- /usr/bin/python3 -c "
import json
print(sum(len(json.dumps({\"a\": i, \"b\": [i] * 3})) for i in range(250000)))" &&
		share=$(complete_share py.db python3) && echo "python3: $share" &&
		near "$share" 1 0.05
	'
else
	test_skip 'python3: at least 95% of user stacks complete' 'no /usr/bin/python3'
fi

# wl-three keeps frame pointers, but its leaf functions build no frame
# (GCC): the kernel's walk starts from main's frame and skips main, which
# the CFI walk does not.
test_expect_success '--call-graph fp walks frame pointers; dwarf finds what they miss' '
	dcpirun -q --call-graph fp -e cycles -F 2000 -d fp.db -- rucpu fp.cpu -- $W/wl-three -n 60000000 >/dev/null &&
	floor=$(awk "{ printf \"%d\", \$1 * 2000 / 2 }" fp.cpu) &&
	echo "$(meta_counter fp.db 000001 stacks_fp) frame-pointer stacks in $(cat fp.cpu) s of CPU: at least $floor" &&
	test "$(meta_counter fp.db 000001 stacks_fp)" -ge "$floor" &&
	test "$(meta_counter fp.db 000001 stacks_fp)" -gt 0 &&
	test "$(meta_counter fp.db 000001 stacks_complete)" = 0 &&
	dcpicg -d fp.db three >fp.txt &&
	grep -B3 "^\[[0-9]*\].* three \[" fp.txt | grep -q " __libc_start_call_main \[" &&
	dcpirun -q -g -e cycles -d dw.db -- $W/wl-three -n 60000000 >/dev/null &&
	dcpicg -d dw.db three >dw.txt &&
	grep -B3 "^\[[0-9]*\].* three \[" dw.txt | grep -q " main \["
'

test_expect_success '--append merges stacks into the epoch' '
	dcpirun -q -g -e cycles -d ap.db -- $W/wl-three -n 30000000 >/dev/null &&
	n1=$(meta_counter ap.db 000001 stacks) &&
	dcpirun -q -g -e cycles --append -d ap.db -- $W/wl-three -n 30000000 >/dev/null &&
	n2=$(meta_counter ap.db 000001 stacks) &&
	test ! -d ap.db/000002 &&
	sum=$($HELPER stacks ap.db | awk "{ n += \$3 } END { print n }") &&
	echo "$n1 then $n2, table $sum" &&
	test "$n2" -gt "$n1" && test "$sum" = "$n2"
'

if command -v setpriv >/dev/null; then
	test_expect_success 'dcpirun -g as an unprivileged user (smaller rings, no setuid worker)' '
		# nobody runs copies: the build tree may be in a private clone
		share_programs "$TEST_DIR/nobody/bin" dcpirun wl-callers &&
		chmod 777 "$TEST_DIR/nobody" &&
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			dcpirun -g -e cycles -d "$TEST_DIR/nobody/u.db" -- wl-callers -n 40000000 >/dev/null 2>err
		r=$?
		cat err && test $r = 0 && grep -q "user space only" err &&
		grep -q "user stacks complete ([1-9][0-9]* unwind tables, 0 binaries without)" err
	'
else
	test_skip 'dcpirun -g as an unprivileged user (smaller rings, no setuid worker)' 'no setpriv'
fi

# A copy of cg.db: the tests above read its latest epoch.
test_expect_success 'unwind tables are kept in the database: the next run reads them' '
	cp -r cg.db uw.db && ls uw.db/unwind >tables && cat tables && test -s tables &&
	dcpirun -g -e cycles -F 2000 -d uw.db -- $W/wl-callers -n 100000000 >/dev/null 2>err &&
	cat err &&
	grep -q "user stacks complete ([1-9][0-9]* unwind tables, [1-9][0-9]* of them from the database, 0 binaries without)" err &&
	share=$(complete_share uw.db wl-callers) && echo "complete: $share" &&
	near "$share" 1 0.05 &&
	dcpidb -d uw.db check >check.out && cat check.out &&
	dcpidb -d uw.db info >info.out && grep "^unwind tables: [1-9][0-9]* cached" info.out &&
	# damaged: a warning, made again by the worker and stored anew
	# the table of wl-callers, which the next run needs
	f=uw.db/unwind/$(readelf -n $W/wl-callers | awk "/Build ID/ { print \$3; exit }") &&
	test -f "$f" && printf "DCPIUTAB cut" >"$f" &&
	dcpidb -d uw.db check >check.out && grep -q "warning unwind/.*damaged cached unwind table" check.out &&
	dcpirun -g -e cycles -d uw.db -- $W/wl-callers -n 30000000 >/dev/null 2>err &&
	cat err && grep -q "the table is made again" err &&
	grep -q "user stacks complete (" err &&
	dcpidb -d uw.db check >check.out && ! grep -q "damaged" check.out
'

test_expect_success 'bad arguments and epochs without stacks are errors' '
	test_must_fail dcpirun --call-graph lbr -- true 2>err && grep -q "unknown call graph mode" err &&
	test_must_fail dcpirun --call-graph dwarf,7 -- true 2>err && grep -q "bad stack size" err &&
	dcpirun -q -e cycles -d plain.db -- true &&
	test_must_fail dcpicg -d plain.db 2>err && grep -q "has no stacks" err &&
	test_must_fail dcpicg -d cg.db --ticks sometimes 2>err &&
	test_must_fail dcpicg -d cg.db no_such_procedure 2>err &&
	dcpicg --help | grep -q "^usage: dcpicg"
'

test_expect_success 'a damaged stack table is reported, not trusted' '
	cp -r cg.db bad.db &&
	f=$(ls bad.db/000001/stacks-*) && test -f "$f" &&
	flip_byte "$f" 40 &&
	test_expect_code 2 dcpicg -d bad.db >out 2>err && cat err && grep -q "stacks" err &&
	grep "^  damaged  $f: corrupt stack table" out &&
	grep "0 samples" out
'

test_done
