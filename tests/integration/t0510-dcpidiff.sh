#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dcpidiff on fixture databases with known counts in real binaries (file
# offsets of shapes-O2's procedures, from binutils): shares, deltas, ratios
# and verdicts checked exactly; procedures that appear or disappear; rows
# within noise hidden and shown; one procedure per instruction; two builds
# of a program (procedure-level only, said so); several sets per side;
# empty epochs; --json; bad input.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/programs/fixture-lib.sh"

O2=$PROGRAMS/shapes-O2
NOPIE=$PROGRAMS/shapes-O2-nopie
BID=$(build_id "$O2")
BID2=$(build_id "$NOPIE")
off() { vaddr_to_off "$1" "$(sym_vaddr "$1" "$2")"; }

# prof BINARY KEY NAME=COUNT...: a profile of BINARY's procedures
prof() {
	local bin=$1 key=$2
	shift 2
	echo "profile $key cycles"
	for nc in "$@"; do
		echo "0x$(off "$bin" "${nc%=*}") ${nc#*=}"
	done
}

# epoch LABEL BINARY KEY PATH NAME=COUNT...
epoch() {
	local label=$1 bin=$2 key=$3 path=$4
	shift 4
	echo "epoch label=$label"
	echo "event cycles used=clock period=100000 unit=ns"
	echo "image $key path=$path buildid=$key"
	[ $# -eq 0 ] || prof "$bin" "$key" "$@"
}

# the line of NAME (next to last field) in a text report, fields squeezed
row() {
	awk -v n="$1" 'NF > 1 && $(NF-1) == n { $NF = ""; print; exit }' "$2" | sed 's/ *$//'
}

test_expect_success 'setup: before and after, an empty epoch, several runs' '
	{
		epoch before "$O2" $BID "$O2" nested_loops=4000 switch_table=1000 if_else=1000 checked=2
		epoch after "$O2" $BID "$O2" nested_loops=4000 switch_table=3000 if_else=1400 main=500 checked=3
		epoch empty "$O2" $BID "$O2"
		epoch r1 "$O2" $BID "$O2" nested_loops=400 switch_table=100 if_else=100
		epoch r2 "$O2" $BID "$O2" nested_loops=410 switch_table=95 if_else=100
		epoch r3 "$O2" $BID "$O2" nested_loops=390 switch_table=105 if_else=100
		epoch s1 "$O2" $BID "$O2" nested_loops=400 switch_table=300 if_else=100
		epoch s2 "$O2" $BID "$O2" nested_loops=405 switch_table=290 if_else=95
		epoch s3 "$O2" $BID "$O2" nested_loops=395 switch_table=310 if_else=105
	} >db.txt &&
	dcpi-test-helper build db db.txt >/dev/null
'

test_expect_success 'shares of each side, delta, ratio, verdict; real changes first' '
	dcpidiff -d db before after >out &&
	test_grep "^A: epoch 1 (before) of db: 6002 samples of cycles(clock)$" out &&
	test_grep "^B: epoch 2 (after) of db: 8903 samples of cycles(clock)$" out &&
	test_grep "^Test: counts as Poisson samples, conditional binomial test (one set per side).$" out &&
	test_grep "^3 significant changes among 5 rows (4 could be tested)$" out &&
	test "$(row nested_loops out)" = "4000 66.64% 4000 44.93% -21.72 0.67x 5e-69 changed nested_loops" &&
	test "$(row switch_table out)" = "1000 16.66% 3000 33.70% +17.04 2.02x 2.7e-91 changed switch_table" &&
	test "$(row main out)" = "0 0.00% 500 5.62% +5.62 new 9.8e-112 appeared main" &&
	test "$(row if_else out)" = "1000 16.66% 1400 15.73% -0.94 0.94x 0.16 ~ if_else" &&
	sed -n "/^ *A  *share A/,\$p" out | awk "/^ *[0-9]/ { print \$(NF-1) }" >order &&
	printf "%s\n" nested_loops switch_table main if_else >expect &&
	test_cmp expect order
'

test_expect_success 'rows within noise below 0.1% are hidden unless --all' '
	dcpidiff -d db before after >out &&
	! grep -q " checked " out &&
	test_grep "^(1 more rows within noise, below 0.10% on both sides: --all shows them)$" out &&
	dcpidiff -d db --all before after >out &&
	test "$(row checked out)" = "2 0.03% 3 0.03% +0.00 1.01x 1 ~ checked"
'

test_expect_success '--json: procedure, image, a, b, share_a, share_b, delta, ratio, significant, method' '
	dcpidiff -d db --json before after >out.json &&
	dcpi-disasm-check json out.json &&
	for k in procedure image a b share_a share_b delta ratio significant method; do
		test "$(grep -c "^      \"$k\": " out.json)" = 5 || { echo "key $k"; exit 1; }
	done &&
	grep -A12 "\"procedure\": \"switch_table\"" out.json >sw &&
	test_grep "\"a\": 1000,$" sw && test_grep "\"b\": 3000,$" sw &&
	awk -F": " "/\"(share_a|share_b|delta|ratio)\"/ { sub(/,\$/, \"\", \$2); print \$2 }" sw >nums &&
	printf "%s\n" 16.661113 33.696507 17.035394 2.0224643 | paste - nums |
		awk "{ d = \$1 - \$2; if (d < 0) d = -d; if (d > 1e-6) { print \"want \" \$1 \", got \" \$2; bad = 1 } }
		     END { exit bad || NR != 4 }" &&
	test_grep "\"significant\": true,$" sw && test_grep "\"method\": \"poisson\",$" sw &&
	grep -A12 "\"procedure\": \"main\"" out.json >main &&
	test_grep "\"ratio\": null,$" main && test_grep "\"status\": \"appeared\",$" main &&
	test_grep "^  \"method\": \"poisson\",$" out.json &&
	test_grep "^  \"normalize\": \"total\",$" out.json
'

test_expect_success '--swap exchanges the sides: main disappeared' '
	dcpidiff -d db --swap before after >out &&
	test_grep "^A: epoch 2 (after)" out &&
	test "$(row main out)" = "500 5.62% 0 0.00% -5.62 gone 9.8e-112 disappeared main" &&
	dcpidiff -d db after before >out2 &&
	sed 1,2d out >a && sed 1,2d out2 >b && test_cmp a b
'

test_expect_success 'per image' '
	dcpidiff -d db -i before after >out &&
	test_grep "^ *6002 100.00% *8903 100.00% *+0.00 *1.00x *1  ~  *$O2$" out
'

test_expect_success 'a procedure named: the procedure as a whole, then its instructions by address' '
	addr=$(sym_vaddr "$O2" switch_table | sed "s/^0*//") &&
	mnemonic=$(objdump -d -M intel --no-show-raw-insn --start-address=0x$addr "$O2" |
		awk "/^ *$addr:/ && !f { print \$2; f = 1 }") &&
	dcpidiff -d db before after switch_table >out &&
	test_grep "^Procedure switch_table in $O2, as a whole:$" out &&
	test_grep "^Instructions, aligned by address (the same binary in every set):$" out &&
	grep "^ *$addr " out >line &&
	test -n "$mnemonic" && test_grep " switch_table+0x0  $mnemonic " line &&
	test_grep " 1000  16.66%  *3000  33.70%  +17.04   2.02x" line &&
	dcpidiff -d db -p switch_table --json before after >out.json &&
	dcpi-disasm-check json out.json &&
	test_grep "^  \"aligned\": true,$" out.json &&
	test_grep "^  \"level\": \"instructions\",$" out.json
'

test_expect_success 'a procedure on one side only; a procedure on neither side' '
	dcpidiff -d db before after main >out &&
	grep -A2 "as a whole" out | tail -1 | grep "^ *0   0.00% *500   5.62%  *+5.62 *new .* appeared  *main " >/dev/null &&
	test_must_fail dcpidiff -d db before after nosuch 2>err &&
	test_grep "no procedure .nosuch. in any set (neither A nor B has it)" err
'

test_expect_success 'two builds of one program: procedures by name, instructions not aligned' '
	P="$TEST_DIR/prog" &&
	epoch v1 "$O2" $BID "$P" nested_loops=400 switch_table=100 >v1.txt &&
	epoch v2 "$NOPIE" $BID2 "$P" nested_loops=400 switch_table=300 >v2.txt &&
	dcpi-test-helper build v1.db v1.txt >/dev/null &&
	dcpi-test-helper build v2.db v2.txt >/dev/null &&
	mkdir v1.db/binaries v2.db/binaries &&
	cp "$O2" v1.db/binaries/$BID && cp "$NOPIE" v2.db/binaries/$BID2 &&
	dcpidiff v1.db v2.db >out &&
	test_grep "^note: $P is not the same binary in every set (build-id $(echo $BID | cut -c1-12)\.\.\. in v1.db, build-id $(echo $BID2 | cut -c1-12)\.\.\. in v2.db)$" out &&
	test "$(row switch_table* out)" = "100 20.00% 300 42.86% +22.86 2.14x 9.3e-12 changed switch_table*" &&
	dcpidiff v1.db v2.db switch_table >out &&
	test_grep "^note: different builds of $P (.*): instructions cannot be aligned, procedure-level only$" out &&
	! grep -q "^Instructions" out &&
	dcpidiff --json v1.db v2.db switch_table >out.json &&
	dcpi-disasm-check json out.json &&
	test_grep "^  \"aligned\": false,$" out.json &&
	test_grep "^  \"unaligned\": \"different builds of" out.json &&
	test_grep "\"builds_differ\": true" out.json
'

test_expect_success 'an empty epoch: nothing tested, every row appeared, exit 0' '
	dcpidiff -d db empty after >out &&
	test_grep "^A: epoch 3 (empty) of db: 0 samples" out &&
	test_grep "^Not tested: A has no samples.$" out &&
	test "$(row switch_table out)" = "0 0.00% 3000 33.70% +33.70 new - - switch_table" &&
	dcpidiff -d db empty empty >out &&
	test_grep "^Not tested: neither side has samples.$" out &&
	test_grep "^0 significant changes among 0 rows" out
'

test_expect_success 'several sets per side: Welch on the run-to-run variance' '
	dcpidiff -d db r1 r2 r3 -- s1 s2 s3 >out &&
	test_grep "^A: 3 sets, 1800 samples of cycles(clock)$" out &&
	test_grep "^   r2: epoch 5 (r2) of db: 605 samples$" out &&
	test_grep "^Test: Welch.s t-test on the sets. values: run-to-run variance (several sets per side).$" out &&
	row switch_table out | grep "changed switch_table$" >/dev/null &&
	row nested_loops out | grep "changed nested_loops$" >/dev/null &&
	dcpidiff -d db --json r1 r2 r3 -- s1 s2 s3 | grep "^  \"method\": \"welch\",$" >/dev/null &&
	dcpidiff -d db r1 -- s1 s2 s3 >out &&
	test_grep "^Test: prediction-interval t-test" out &&
	dcpidiff -d db r1 r2 -- r3 s1 >/dev/null
'

test_expect_success 'whole databases and DIR:EPOCH as sets' '
	dcpidiff v1.db v1.db:latest >out &&
	test_grep "^0 significant changes among 2 rows" out &&
	dcpidiff db:before db:after | grep "^3 significant changes" >/dev/null
'

test_expect_success 'bad input: exit 1 with a message' '
	test_must_fail dcpidiff -d db before 2>err &&
	test_grep "expected A B \[PROCEDURE\]" err &&
	test_must_fail dcpidiff -d db before -- 2>err &&
	test_grep "each side needs at least one set" err &&
	test_must_fail dcpidiff -d db before -- after -- r1 2>err &&
	test_must_fail dcpidiff -d db before nosuch 2>err &&
	test_grep "no epoch labelled .nosuch." err &&
	test_must_fail dcpidiff -d db --alpha 2 before after 2>err &&
	test_grep "significance level must be in (0, 1\]" err &&
	test_must_fail dcpidiff -d db --min-ratio abc before after 2>err &&
	test_grep "bad minimum ratio .abc." err &&
	test_must_fail dcpidiff -d db -N none before after 2>err &&
	test_grep "unknown normalisation .none." err &&
	test_must_fail dcpidiff -d db --sort bogus before after &&
	test_must_fail dcpidiff -d db -e bogus before after &&
	test_must_fail dcpidiff -d nodb 1 2
'

test_done
