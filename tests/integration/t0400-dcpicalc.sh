#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dcpicalc on fixture databases with real file offsets of the test programs:
# the Figure 2 listing, --summary (Figure 4), --json (every field the issue
# lists, addresses as the ELF shows them, execs = freq x period), --dot,
# --image, the options, and refusals (unknown procedures, missing and
# rebuilt binaries, kernel images, bad options).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/programs/fixture-lib.sh"

O2=$PROGRAMS/shapes-O2
command -v python3 >/dev/null || skip_all "python3 is not installed (scripts/setup-deps installs it)"
BID=$(build_id "$O2")
NLV=$(sym_vaddr "$O2" nested_loops | sed 's/^0*//')
MAINV=$(sym_vaddr "$O2" main | sed 's/^0*//')

# The instructions of nested_loops (vaddr), from objdump.
objdump -d --no-show-raw-insn --start-address=0x$NLV \
	--stop-address=0x$(printf %x $((0x$NLV + 0x$(nm -S "$O2" | awk '$4 == "nested_loops" { print $2 }')))) \
	"$O2" | awk -F: '/^ *[0-9a-f]+:/ { gsub(/ /, "", $1); print $1 }' >insns
# Its inner loop: from the target of the first backward jne to that jne.
LOOP=$(objdump -d --no-show-raw-insn --start-address=0x$NLV "$O2" |
	awk '/jne/ { print $(NF - 1); exit }' | sed 's/^0*//')

fixture() { # DB LINE...
	local db=$1
	shift
	{
		echo "epoch mhz=1000"
		echo "event cycles used=clock period=100000 unit=ns"
		for l in "$@"; do echo "$l"; done
	} >"$db.txt"
	dcpi-test-helper build "$db" "$db.txt" >/dev/null
}

# Samples on the inner loop: 300 at each instruction, 3000 on the one after
# the load (its stall), a few elsewhere.
profile() { # KEY
	echo "profile $1 cycles"
	local inloop=0 a
	while read -r a; do
		[ "$a" = "$LOOP" ] && inloop=1
		if [ $inloop = 1 ]; then
			echo "0x$(vaddr_to_off "$O2" "$a") 300"
		fi
		case $(objdump -d --no-show-raw-insn --start-address=0x$a --stop-address=0x$(hex_add "$a" 1) "$O2" | tail -1) in
		*jne*) inloop=0 ;;
		esac
	done <insns
	echo "0x$(vaddr_to_off "$O2" "$MAINV") 5"
}

test_expect_success 'setup' '
	test -n "$LOOP" &&
	fixture db "image auto path=$O2 buildid=$BID" "$(profile "$BID")"
'

test_expect_success 'Figure 2: blocks with best-case and actual CPI, instructions, bubbles' '
	dcpicalc -d db nested_loops >out &&
	test_grep "^Procedure nested_loops in $O2, epoch 1$" out &&
	test_grep "1 sample = 100000 cycles (period x cpu MHz, not calibrated), skid 1" out &&
	test_grep "^ *Addr  Instruction  *Samples  *CPI C Culprit$" out &&
	test_grep "^\*\*\* Block [0-9]*  0x$LOOP-0x[0-9a-f]*  freq [0-9.]*  execs [0-9.e+]*  confidence [a-z]* (samples)$" out &&
	test_grep "^\*\*\* Best-case [0-9.]*/[0-9]* = [0-9.]*CPI$" out &&
	test_grep "^\*\*\* Actual  *[0-9.]*/[0-9]* = [0-9.]*CPI$" out &&
	test_grep "^ *$LOOP  mov r8d, dword ptr \[rip + 0x[0-9a-f]*\]  *[0-9]*  *[0-9.]*cy [LMH]" out &&
	grep -q "(. = [a-zA-Z]" out &&
	test "$(grep -c "^ *[0-9a-f]\{4,\}  " out)" = "$(wc -l <insns)"
'

test_expect_success '--summary: where the cycles went (Figure 4)' '
	dcpicalc -d db --summary nested_loops >out &&
	test_grep "^\*\*\* Best-case [0-9.]*/[0-9.]* = [0-9.]*CPI$" out &&
	test_grep "^\*\*\* Actual [0-9.]*/[0-9.]* = [0-9.]*CPI$" out &&
	for what in "I-cache miss" "D-cache miss" "DTLB miss" "branch mispredict" \
		"unexplained stall" "Subtotal dynamic" "register dependency" \
		"Subtotal static" "Total stall" "Execution" "Net sampling error"; do
		test_grep "^\*\*\* $what  *-\?[0-9.]*%" out || return 1
	done &&
	test_grep "^\*\*\* Total tallied  *100.0%$" out &&
	test_grep "^\*\*\* ([0-9]*, [0-9.]*% of all samples" out &&
	test_grep "^\*\*\* Dominant culprit: " out
'

# A summary that cannot contradict itself: no negative gain or subtotal
# (beyond the noise, the model and the samples disagree, in words), no
# culprit above the subtotal it is part of, the ranges explained before the
# first, and a dominant culprit only where the confidence allows one.
test_expect_success '--summary: no negative share, ranges within their subtotal, culprit by confidence' '
	dcpicalc -d db --summary --image "$O2" >all &&
	! grep "unexplained gain" all &&
	! grep "^\*\*\* \(Subtotal\|Total\).*  -[0-9]" all &&
	test_grep "^\*\*\* Dynamic stall by culprit, each a range: from the stall only it can explain$" all &&
	awk "/^\*\*\* Subtotal dynamic / { tot = \$4 + 0; for (k in hi) if (hi[k] > tot + 0.05) { print \"range above its subtotal: \" k; bad = 1 }; split(\"\", hi) }
	     / to  *[0-9.]*%$/ { n = \$(NF); sub(/%/, \"\", n); hi[\$2 \" \" \$3] = n + 0 }
	     END { exit bad }" all &&
	awk "/^\*\*\* Confidence: / { high = \$3 + 0 }
	     /^\*\*\* Dominant culprit: / && high < 50 && \$4 != \"unknown:\" && \$4 != \"none\" {
		print \"a culprit named at \" high \"% confidence: \" \$0; bad = 1 }
	     END { exit bad }" all
'

test_expect_success '--json: the fields of every instruction, block and edge' '
	dcpicalc -d db --json nested_loops >out.json &&
	dcpi-disasm-check json out.json &&
	python3 - "$LOOP" "$NLV" >check.out <<-\EOF &&
	import json, sys
	loop, start = sys.argv[1], sys.argv[2]
	d = json.load(open("out.json"))
	p = d["procedures"][0]
	assert p["name"] == "nested_loops" and p["start"] == "0x" + start, p["start"]
	for k in ("image", "end", "model", "event", "period_cycles", "summary", "blocks", "edges"):
	    assert k in p, k
	per = p["period_cycles"]
	assert abs(per - 100000) < 1e-6
	insns = {i["addr"]: i for i in p["instructions"]}
	i = insns["0x" + loop]
	for k in ("addr", "text", "samples", "freq", "execs", "cpi", "confidence", "culprits"):
	    assert k in i, k
	assert i["samples"]["cycles"] == 300
	assert i["freq"] > 0 and abs(i["execs"] - i["freq"] * per) < 1e-6 * i["execs"]
	assert abs(i["cpi"] - i["attributed"] / i["freq"]) < 1e-6 * i["cpi"]
	assert i["confidence"] in ("low", "medium", "high")
	for c in i["culprits"]:
	    assert c["reason"] and all(a.startswith("0x") for a in c["addrs"])
	b = [b for b in p["blocks"] if b["start"] == "0x" + loop][0]
	for k in ("end", "freq", "execs", "confidence", "best_cpi", "cpi"):
	    assert k in b, k
	assert b["freq"] == i["freq"]
	print("ok", len(p["instructions"]), "instructions")
	EOF
	test_grep "^ok " check.out &&
	test "$(grep -c "\"addr\": \"0x" out.json)" -ge "$(wc -l <insns)"
'

test_expect_success 'the header names the model and why it was chosen, as --json does' '
	dcpicalc -d db nested_loops >text &&
	python3 - >check.out <<-\EOF &&
	import json
	p = json.load(open("out.json"))["procedures"][0]
	lines = open("text").read().splitlines()
	assert isinstance(p["model_exact"], bool)
	assert p["model_reason"] and "\n" not in p["model_reason"]
	assert "  model: %s (%s)" % (p["model"], p["model_reason"]) in lines, lines[:4]
	print("ok")
	EOF
	test_grep "^ok" check.out
'

test_expect_success '--dot: the annotated control-flow graph' '
	dcpicalc -d db --dot nested_loops >out.dot &&
	test_grep "^digraph \"nested_loops\" {$" out.dot &&
	test_grep "b[0-9]* -> b[0-9]* \[label=\"taken" out.dot &&
	test_grep "freq [0-9.]*  execs" out.dot &&
	test_grep "confidence [a-z]*" out.dot &&
	test_grep "^}$" out.dot
'

test_expect_success '--image: every procedure of the image that has samples' '
	dcpicalc -d db --image "$O2" --summary >out &&
	test "$(grep -c "^Procedure " out)" = 2 &&
	test_grep "^Procedure nested_loops in" out &&
	test_grep "^Procedure main in" out &&
	dcpicalc -d db --image "$O2" --json | dcpi-disasm-check json &&
	dcpicalc -d db --image "$O2" -n 100 --summary >out &&
	test "$(grep -c "^Procedure " out)" = 1
'

test_expect_success 'the same procedure by address; options change the analysis' '
	dcpicalc -d db nested_loops >expect &&
	dcpicalc -d db 0x$NLV@shapes-O2 >a &&
	test_cmp expect a &&
	for s in cold pred loop auto; do
		dcpicalc -d db --schedule $s --summary nested_loops >/dev/null || return 1
	done &&
	dcpicalc -d db --flow --json nested_loops | dcpi-disasm-check json &&
	dcpicalc -d db --mhz 2000 --json nested_loops | grep "\"period_cycles\": 200000" >/dev/null &&
	dcpicalc -d db --period-cycles 12345 --json nested_loops | grep "\"period_cycles\": 12345" >/dev/null &&
	dcpicalc -d db --skid 0 nested_loops | test_grep "skid 0$" - &&
	dcpicalc -d db -S nested_loops | grep "shapes.c:[0-9]*" >/dev/null
'

test_expect_success 'bad input: exit 1 with a message' '
	test_must_fail dcpicalc -d db no_such_procedure 2>err &&
	test_grep "no procedure .no_such_procedure. in epoch 1" err &&
	test_must_fail dcpicalc -d db --schedule sideways nested_loops 2>err &&
	test_grep "bad schedule .sideways." err &&
	test_must_fail dcpicalc -d db --skid 3 nested_loops 2>err &&
	test_grep "bad skid .3." err &&
	test_must_fail dcpicalc -d db --mhz -5 nested_loops 2>err &&
	test_grep "bad value .-5. for --mhz" err &&
	test_must_fail dcpicalc -d db --json --dot nested_loops 2>err &&
	test_must_fail dcpicalc -d db 2>err &&
	test_grep "^usage: dcpicalc" err &&
	test_must_fail dcpicalc -d nowhere nested_loops 2>err &&
	test -s err &&
	test_must_fail dcpicalc -d db -E 7 nested_loops 2>err &&
	test -s err
'

test_expect_success 'missing and rebuilt binaries are refused; --force uses a rebuilt one' '
	fixture missing "image auto path=/nonexistent/prog buildid=$BID" "$(profile "$BID")" &&
	test_must_fail dcpicalc -d missing nested_loops 2>err &&
	test_grep "no procedure .nested_loops. in epoch 1" err &&
	fixture changed "image auto path=$PROGRAMS/shapes-O2-nopie buildid=$BID" "$(profile "$BID")" &&
	test_must_fail dcpicalc -d changed nested_loops 2>err &&
	test_grep "is not the binary profiled" err &&
	dcpicalc -d changed --force nested_loops >out &&
	test_grep "^  warning: .* is not the binary profiled" out
'

test_expect_success 'kernel images: names but no code to analyse' '
	fixture kernel "image kernel kind=kernel path=[kernel.kallsyms]" \
		"profile kernel cycles" "0xffffffff81000110 3" &&
	printf "%s\n" "ffffffff81000100 t do_work" "ffffffff81000200 T other" >kernel/000001/kallsyms &&
	test_must_fail dcpicalc -d kernel do_work 2>err &&
	test_grep "cannot list .do_work." err
'

test_expect_success '--help and --version' '
	dcpicalc --help >out &&
	test_grep "^usage: dcpicalc" out &&
	dcpicalc --version | grep "dcpicalc" >/dev/null
'

test_done
