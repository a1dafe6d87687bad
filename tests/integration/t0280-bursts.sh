#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Bursts end to end: dcpirun --bursts follows sampled threads in an emulator
# within its time budget (the summary says how much it took and how bursts
# ended), and the epoch's path profiles hold what they saw: wl-three's loops
# in the shares of their time, a wl-branchy branch's two outcomes about half
# each, wl-memorder's store-forwarding failure and 4K aliasing with the right
# stores, windows between two samples; dcpicalc finds the culprits from
# the path profiles and values wl-branchy's arms from the paths;
# --bursts=step still single-steps; dcpid --bursts is reported by dcpictl
# status.  Every count is checked against what the run
# measured (its bursts, its outcomes), never against a fixed floor.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/workloads/attr.sh"
require_root
require_sampling
command -v python3 >/dev/null || skip_all "python3 is needed to read the JSON"

W=$top_builddir/tests/workloads
SOCK=$TEST_DIR/ctl/dcpid.sock

# The address (hex, no 0x) of the first instruction of FUNCTION matching
# PATTERN (objdump's whole output first: awk leaving early would SIGPIPE it).
insn_addr() { # BINARY FUNCTION PATTERN
	objdump -d --no-show-raw-insn "$1" >disasm.txt &&
	awk -v f="<$2>:" -v p="$3" '
		$2 == f { on = 1; next } on && /^$/ { on = 0 }
		on && $0 ~ p && !done { sub(/:.*/, "", $1); print $1; done = 1 }' disasm.txt
}

# The path profile records of BINARY's image in DB (dcpi-test-helper paths).
paths_of() { # DB BINARY
	dcpi-test-helper paths "$1" >paths.all &&
	awk -v b="$2" '$1 == "paths" { on = ($3 == b) ; next } $1 == "summary" { next } on' paths.all
}

# The share of the time the bursts took, from dcpirun's summary on stderr.
burst_share() { sed -n "s/.*bursts of [0-9]* instructions (\([0-9.]*\)% of the CPU sampled.*/\1/p" "$1"; }
burst_count() { sed -n "s/.*, \([0-9]*\) bursts of [0-9]* instructions.*/\1/p" "$1"; }

test_expect_success 'dcpirun --values --bursts: bursts within their budget, in the summary' '
	t0=$(date +%s.%N) &&
	dcpirun -d mem.db -F 2000 --values --bursts=10 -- $W/wl-memorder --narrow -n 250000000 >out 2>err &&
	t1=$(date +%s.%N) &&
	cat err &&
	share=$(burst_share err) && n=$(burst_count err) &&
	test "$n" -ge 1 &&
	# within the budget (a share of the CPU sampled), but for the last
	# burst and trail (their cap: 0.05 s and 0.25 s of the worker), which
	# may overshoot it until the run catches up
	samples=$(sed -n "s/^dcpirun: \([0-9]*\) samples.*/\1/p" err) &&
	awk -v s="$share" -v n="$samples" -v t="$t1" -v t0="$t0" "BEGIN {
		print \"run \" t - t0 \" s, \" n / 2000 \" s of CPU sampled\";
		exit !(s > 0 && s <= 10 + 100 * 0.3 / (n / 2000)) }" &&
	grep "ended early" err &&
	# the threads were let go at once: the stops are short whatever the burst
	grep "stops, p99 [0-9]* us" err &&
	test -s mem.db/000001/bursts &&
	ls mem.db/000001/*.paths &&
	dcpidb -d mem.db check
'

test_expect_success 'the epoch says how many bursts there were and how they ended' '
	dcpi-test-helper paths mem.db >sum &&
	grep "^summary " sum &&
	bursts=$(awk "\$2 == \"bursts\" { print \$3 }" sum) &&
	test "$bursts" -eq "$(burst_count err)" &&
	awk "\$1 == \"summary\" && \$2 ~ /^end_/ { n += \$3 } END { print n; exit n != $bursts }" sum
'

test_expect_success 'a 4-byte store then an 8-byte load of it: the conflict, with its store' '
	store=$(insn_addr $W/wl-memorder narrow_wide "mov +%eax,\\(%rdi\\)") &&
	load=$(insn_addr $W/wl-memorder narrow_wide "mov +\\(%rdi\\),%rcx") &&
	echo "store $store load $load" &&
	paths_of mem.db $W/wl-memorder >mem.paths &&
	grep "^conflict 0x$load 0x$store store-forward [1-9]" mem.paths &&
	# the raw traces kept give dcpicalc the same culprit
	dcpicalc -d mem.db narrow_wide >nw &&
	grep "F = store forwarding failed" nw &&
	grep "^$load .*$store" nw
'

test_expect_success 'the values a load wrote, tied to it' '
	load=$(insn_addr $W/wl-memorder narrow_wide "mov +\\(%rdi\\),%rcx") &&
	grep "^value 0x$load [1-9][0-9]* .*rcx=" mem.paths
'

test_expect_success 'a store and a load 4096 bytes apart: 4K aliasing, the store named' '
	dcpirun -d alias.db -F 2000 --bursts=10 -- $W/wl-memorder --alias -n 2000000000 >/dev/null 2>err &&
	cat err &&
	store=$(insn_addr $W/wl-memorder alias_4k "mov +%ecx,\\(%r") &&
	paths_of alias.db $W/wl-memorder >alias.paths &&
	grep "^conflict 0x[0-9a-f]* 0x$store alias-4k [1-9]" alias.paths &&
	dcpicalc -d alias.db alias_4k >ak &&
	grep "bursts: [0-9.e+]* instructions followed here" ak &&
	grep "^  4K aliasing at 0x[0-9a-f]*: the store at 0x$store" ak
'

test_expect_success 'measured loops: the loads latency is measured, against the ladder' '
	grep -q "^counter lat_l1_ps [1-9]" mem.db/000001/meta &&
	grep -q "^counter lat_mem_ps [1-9]" mem.db/000001/meta &&
	grep "^  load at 0x[0-9a-f]*: [0-9.]* cycles an execution, measured (\(L1\|L2\|L3\|memory\);" nw &&
	dcpirun -q -d chase.db -F 2000 --values -- $W/wl-chase -n 2000000 >/dev/null &&
	dcpicalc -d chase.db chase >chase &&
	grep "^  load at .* measured (\(L3\|memory\);" chase
'

test_expect_success 'wl-branchy: its branch went both ways about half the time each' '
	dcpirun -q -d br.db -F 2000 --values --bursts=20 -- $W/wl-branchy -n 100000000 >/dev/null &&
	br=$(insn_addr $W/wl-branchy branchy "test +\\\$0x1,%r8b") &&
	jne=$(insn_addr $W/wl-branchy branchy "jne ") &&
	echo "test $br jne $jne" &&
	paths_of br.db $W/wl-branchy >br.paths &&
	grep "^edge 0x$jne " br.paths &&
	# binomial: within 4 standard deviations of a half, as many as were seen
	python3 - "0x$jne" br.paths <<-\EOF &&
	import math, sys
	n = [int(l.split()[3]) for l in open(sys.argv[2]) if l.split()[:2] == ["edge", sys.argv[1]]]
	t = sum(n)
	p = n[0] / t
	s = 4 * math.sqrt(0.25 / t) + 0.02
	print(t, "outcomes,", round(p, 3), "one way, +-", round(s, 3))
	assert len(n) == 2 and t >= 100 and abs(p - 0.5) < s, n
	EOF
	dcpicalc -d br.db --json branchy >br.json &&
	python3 -c "
import json
p = json.load(open(\"br.json\"))[\"procedures\"][0]
o = [i for i in p[\"instructions\"] if \"burst_outcomes\" in i]
assert o, \"no branch outcomes\"
b = [b for b in p[\"blocks\"] if b[\"how\"] in (\"paths\", \"paths-shares\")]
assert b, [x[\"how\"] for x in p[\"blocks\"]]
print(len(o), \"branches with outcomes,\", len(b), \"blocks valued from paths\")
"
'

test_expect_success 'wl-three: instructions followed in each loop in the shares of its time' '
	dcpirun -d three.db -F 2000 --bursts=20 -- $W/wl-three -s 3 >three.out 2>three.err &&
	cat three.out three.err &&
	paths_of three.db $W/wl-three >three.paths &&
	for f in one two three; do
		a=$(insn_addr $W/wl-three $f "imul ") && echo "$f 0x$a"
	done >loops &&
	cat loops &&
	n=$(burst_count three.err) &&
	# each loop: the instructions of its blocks (a burst stays in one loop);
	# the share of bursts in it is binomial around its share of the time
	python3 - "$n" loops three.out three.paths <<-\EOF
	import math, sys
	n = int(sys.argv[1])
	loops = {int(a, 16): f for f, a in (l.split() for l in open(sys.argv[2]))}
	time = {l.split()[0]: float(l.split()[1]) for l in open(sys.argv[3]) if len(l.split()) == 2}
	insns = dict.fromkeys(loops.values(), 0)
	for l in open(sys.argv[4]):
	    w = l.split()
	    if w[0] != "block":
	        continue
	    for a, f in loops.items():
	        if a - 16 <= int(w[1], 16) < a + 32:
	            insns[f] += int(w[3]) * int(w[4])
	total = sum(insns.values())
	bad = n < 1
	for f, p in time.items():
	    s = 4 * math.sqrt(p * (1 - p) / max(n, 1)) + 0.03
	    print("%s: %.3f of the instructions, %.3f of the time (+-%.3f)" % (f, insns[f] / total, p, s))
	    bad |= abs(insns[f] / total - p) > s
	sys.exit(bad)
	EOF
'

test_expect_success 'windows: instructions of one sampling period between two samples' '
	grep "^summary windows " paths.all &&
	matched=$(sed -n "s/^summary windows //p" paths.all) &&
	if [ "$matched" -gt 0 ]; then
		# each kept window: its instructions, of which those in this image
		grep "^window " three.paths &&
		awk "\$1 == \"window\" && (\$4 < 1 || \$5 > \$4) { exit 1 }" three.paths &&
		awk "\$1 == \"block\" { w += \$6 * \$4 } END { exit w < 1 }" three.paths
	else
		echo "no window matched on this host: see the misses" && grep "^summary miss_" paths.all
	fi
'

test_expect_success '--bursts=step: single steps, as before' '
	dcpirun -d step.db -F 2000 --bursts=step,10 -- $W/wl-branchy -n 50000000 >/dev/null 2>step.err &&
	cat step.err &&
	grep "bursts of [0-9]* steps ([0-9.]*% of the time)" step.err &&
	test -s step.db/000001/bursts &&
	! ls step.db/000001/*.paths 2>/dev/null &&
	test_must_fail dcpirun -d bad.db --bursts=stop -- true 2>bad.err &&
	grep "bad --bursts" bad.err
'

test_expect_success 'dcpid --bursts: reported by dcpictl status' '
	dcpid -f -d sysdb --socket "$SOCK" -F 1000 --bursts --values-users=root --write-interval 1 >/dev/null 2>dcpid.err &
	echo $! >dcpid.pid && test_register_pid $(cat dcpid.pid) dcpid &&
	for i in $(seq 100); do
		[ -S "$SOCK" ] && dcpictl --socket "$SOCK" status >/dev/null 2>&1 && break
		sleep 0.1
	done &&
	$W/wl-branchy -n 100000000 >/dev/null &&
	dcpictl --socket "$SOCK" flush &&
	dcpictl --socket "$SOCK" status >status &&
	cat status &&
	grep "^bursts: emulated, [0-9]* of [0-9]* instructions, [0-9.]*% of the CPU sampled (budget 3%: the worker [0-9.]* s, threads stopped [0-9.]* s); ended: limit [0-9]*, syscall" status &&
	grep "^stops: [0-9]*, p50 [0-9]* us, p99 [0-9]* us, longest [0-9]* us" status &&
	grep "^windows: [0-9]* recorded past the dip" status &&
	grep "^dip: windows from the [0-9]*[a-z]* sample after a stop" status &&
	dcpictl --socket "$SOCK" --json status | python3 -c "
import json, sys
b = json.load(sys.stdin)[\"bursts\"]
assert b[\"mode\"] == \"emulate\" and b[\"budget\"] == 0.03, b
# The budget holds whenever a burst starts; the last one and its trail may
# overshoot it by their caps (0.3 s of the worker).
assert b[\"worker_s\"] + b[\"stopped_s\"] <= 0.03 * b[\"sampled_s\"] + 0.3, b
assert sum(b[\"ends\"].values()) == b[\"bursts\"], b
assert set(b[\"windows\"][\"misses\"]) >= {\"no-match\", \"samples\"}, b
assert b[\"stops\"][\"count\"] >= 0 and \"skip\" in b[\"windows\"][\"dip\"], b
" &&
	dcpictl --socket "$SOCK" quit &&
	for i in $(seq 100); do kill -0 $(cat dcpid.pid) 2>/dev/null || break; sleep 0.1; done &&
	dcpidb -d sysdb check
'

test_done
