#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Counts from the paths of emulated bursts, end to end: dcpirun --values
# --bursts records real workloads whose counts are known by construction,
# and dcpicalc's execution counts (text and --json's execs, confidence and
# how) are checked against them: wl-three's loops run N, 2N and 3N times,
# wl-branchy's four arms each about half of its N iterations.  The
# tolerances come from what the run measured (the outcomes the bursts saw,
# the errors dcpicalc states), never from a fixed count of samples or
# bursts; every block dcpicalc calls high confidence must be within 15%.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/workloads/attr.sh"
require_root
require_sampling
command -v python3 >/dev/null || skip_all "python3 is needed to read the JSON"

W=$top_builddir/tests/workloads

# The address (hex, no 0x) of the first instruction of FUNCTION matching
# PATTERN (objdump's whole output first: awk leaving early would SIGPIPE it).
insn_addr() { # BINARY FUNCTION PATTERN
	objdump -d --no-show-raw-insn "$1" >disasm.txt &&
	awk -v f="<$2>:" -v p="$3" '
		$2 == f { on = 1; next } on && /^$/ { on = 0 }
		on && $0 ~ p && !done { sub(/:.*/, "", $1); print $1; done = 1 }' disasm.txt
}

test_expect_success 'wl-branchy: the arms from the paths, about half the iterations each' '
	record_bursts br.db 4 -F 4000 --values --bursts -- $W/wl-branchy -n 40000000 &&
	n=$((40000000 * RUNS)) &&
	dcpicalc -d br.db branchy >br.txt &&
	grep "^  bursts: [0-9.e+]* instructions followed here" br.txt &&
	grep "^  counts from paths: " br.txt &&
	dcpicalc -d br.db --json branchy >br.json &&
	head=$(insn_addr $W/wl-branchy branchy "movzwl") &&
	arms=$(for p in "add +%r8,%rcx" "mov +%rcx,%rdx" "xor +%r8,%r9" "add +\\\$0x1,%rax"; do
		insn_addr $W/wl-branchy branchy "$p"; done | tr "\n" " ") &&
	echo "head $head arms $arms" &&
	python3 - "$n" "$head" "$arms" br.json <<-\EOF
	import json, math, sys
	n, head, arms = int(sys.argv[1]), int(sys.argv[2], 16), [int(a, 16) for a in sys.argv[3].split()]
	p = json.load(open(sys.argv[4]))["procedures"][0]
	def block(a):
	    return [b for b in p["blocks"] if int(b["start"], 16) <= a < int(b["end"], 16)][0]
	# the outcomes the bursts saw at the two data-dependent branches of the loop
	seen = min(sum(i["burst_outcomes"].values()) for i in p["instructions"] if "burst_outcomes" in i)
	print("outcomes seen at the least seen branch:", seen, "paths:", p["paths"])
	assert p["paths"]["followed"] > 0
	for a in arms:
	    b = block(a)
	    # binomial in what the bursts saw, 4 deviations, and the imbalance of the table
	    tol = 4 * math.sqrt(0.25 / max(seen, 1)) * 2 + 0.03
	    rel = b["execs"] / (n / 2) - 1
	    print(hex(a), b["how"], b["confidence"], b["execs"], "%+.3f" % rel, "tolerance", round(tol, 3))
	    assert b["how"] in ("paths", "paths-shares", "measured"), b
	    assert abs(rel) < tol or b["confidence"] == "low", b
	    if b["confidence"] == "high":
	        assert abs(rel) < 0.15, b
	hb = block(head)
	print("head", hb["how"], hb["execs"])
	assert abs(hb["execs"] / n - 1) < 0.15 or hb["confidence"] == "low", hb
	EOF
'

test_expect_success 'wl-three: N, 2N and 3N iterations; the confident counts within 15%' '
	record_bursts three.db 4 -F 4000 --values --bursts -- $W/wl-three -n 60000000 &&
	n=$((60000000 * RUNS)) &&
	for f in one two three; do
		dcpicalc -d three.db --json $f >$f.json &&
		echo "$f $(insn_addr $W/wl-three $f "imul ")" || return 1
	done >loops &&
	cat loops &&
	python3 - "$n" loops "$RUNS" <<-\EOF
	import json, sys
	n, runs = int(sys.argv[1]), int(sys.argv[3])
	for k, (f, a) in enumerate(l.split() for l in open(sys.argv[2])):
	    p = json.load(open(f + ".json"))["procedures"][0]
	    a = int(a, 16)
	    loop = [b for b in p["blocks"] if int(b["start"], 16) <= a < int(b["end"], 16)][0]
	    truth = (k + 1) * n
	    print(f, loop["how"], loop["confidence"], loop["execs"], truth, p["paths"])
	    assert abs(loop["execs"] / truth - 1) < 0.15 or loop["confidence"] == "low", loop
	    for b in p["blocks"]:
	        if b["confidence"] == "high" and b is not loop:
	            # the rest runs at most once a round, 20 rounds a run
	            assert b["execs"] is not None and b["execs"] <= 20 * runs * 1.15 + 3, b
	EOF
'

test_done
