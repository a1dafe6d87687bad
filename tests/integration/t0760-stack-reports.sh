#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Reports from stacks (call graphs): dcpiprof --by comm|pid|tgid (from -g and
# from --threads epochs), dcpiexport's folded stacks and pprof profile (read
# back by go tool pprof, the real client), dcpicg's process filters.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/workloads/attr.sh"
require_root
require_sampling

W=$top_builddir/tests/workloads

test_expect_success 'setup: a process tree recorded with -g, another with --threads' '
	dcpirun -q -g -e cycles -d g.db -- sh -c "$W/wl-callers -n 60000000 >/dev/null & $W/wl-threads -n 40000000 -t 2 >/dev/null; wait" &&
	dcpirun -q --threads -e cycles -d t.db -- $W/wl-threads -n 40000000 -t 3 >/dev/null &&
	ls g.db/000001/stacks-* t.db/000001/stacks-*
'

test_expect_success 'dcpiprof --by comm: a process column, both programs, the same totals' '
	dcpiprof -d g.db --by comm >comm.txt && cat comm.txt &&
	grep -q " comm  *procedure  *image" comm.txt &&
	grep -q "wl-callers  *leaf " comm.txt &&
	grep -q "wl-threads  *worker_loop " comm.txt &&
	dcpiprof -d g.db >plain.txt &&
	test "$(sed -n 2p comm.txt)" = "$(sed -n 2p plain.txt)" &&
	sum=$(awk "/^ *[0-9]/ { n += \$1 } END { print n }" comm.txt) &&
	test "$sum" = "$(sed -n "s/.*= \([0-9]*\)$/\1/p" plain.txt)"
'

test_expect_success 'dcpiprof --by pid: the threads of wl-threads apart; --by tgid: together' '
	dcpiprof -d g.db --by pid >pid.txt &&
	test "$(grep -c " wl-threads  *worker_loop " pid.txt)" = 2 &&
	dcpiprof -d g.db --by tgid >tgid.txt &&
	test "$(grep -c " wl-threads  *worker_loop " tgid.txt)" = 1 &&
	dcpiprof -d g.db --by tgid -i >img.txt && cat img.txt &&
	grep -q "^ *[0-9].* [0-9]* wl-callers  */.*wl-callers$" img.txt
'

test_expect_success 'dcpiprof --by from a --threads epoch, and --json' '
	dcpiprof -d t.db --by pid >tp.txt && cat tp.txt &&
	test "$(grep -c " wl-threads  *worker_loop " tp.txt)" = 3 &&
	dcpiprof -d t.db --by pid --json >tp.json &&
	"$top_builddir/tests/programs/dcpi-disasm-check" json tp.json &&
	grep -q "\"by\": \"pid\"" tp.json && grep -q "\"pid\": [0-9]" tp.json &&
	grep -q "\"comm\": \"wl-threads\"" tp.json
'

test_expect_success 'dcpiprof --by needs process identity; bad values are refused' '
	dcpirun -q -e cycles -d plain.db -- $W/wl-three -n 10000000 >/dev/null &&
	test_must_fail dcpiprof -d plain.db --by comm 2>err && cat err &&
	grep -q "does not know the process of its samples" err &&
	test_must_fail dcpiprof -d g.db --by user 2>err && grep -q "bad grouping" err &&
	test_must_fail dcpicg -d t.db 2>err && grep -q "recorded with --threads" err
'

test_expect_success 'dcpicg --comm and --tgid keep one process' '
	dcpicg -d g.db --comm wl-threads >c.txt &&
	grep -q "worker_loop \[" c.txt && ! grep -q " leaf \[" c.txt &&
	tgid=$(dcpiprof -d g.db --by tgid | awk "\$5 == \"wl-callers\" { print \$4; exit }") &&
	dcpicg -d g.db --tgid "$tgid" >t.txt && grep -q " leaf \[" t.txt && ! grep -q "worker_loop" t.txt
'

test_expect_success 'dcpicg: call counts where dcpiwatch counted them, - elsewhere' '
	dcpicg -d g.db leaf >before.txt &&
	grep -q "Calls were not counted" before.txt &&
	dcpiwatch -d g.db -f leaf -- $W/wl-callers -n 3000000 >/dev/null &&
	dcpiwatch -d g.db --report --json >w.json &&
	n=$(python3 -c "import json; print([f[\"calls\"] for f in json.load(open(\"w.json\"))[\"functions\"] if f[\"function\"] == \"leaf\"][0])") &&
	echo "calls $n" && test "$n" -gt 0 &&
	dcpicg -d g.db leaf >after.txt && cat after.txt &&
	grep -q "Calls: dcpiwatch" after.txt &&
	grep -Eq "^\[[0-9]+\] .* $n   leaf \[" after.txt &&
	grep -Eq " -/$n  +caller_a \[" after.txt &&
	grep -Eq " $n +[0-9.]+ +[0-9.]+  leaf \[" after.txt &&
	dcpicg -d g.db --json leaf >cg.json &&
	python3 - "$n" <<-\EOF
	import json, sys
	n = int(sys.argv[1])
	d = json.load(open("cg.json"))
	leaf = [p for p in d["listings"][0]["procedures"] if p.get("procedure") == "leaf"][0]
	assert leaf["called"] == n, leaf["called"]
	assert leaf["parents"] and all(p["called"] is None for p in leaf["parents"]), leaf["parents"]
	others = [p for p in d["listings"][0]["procedures"] if p.get("procedure") not in ("leaf", None)]
	assert all(p["called"] is None for p in others)
	EOF
'

# Kernel frames (NAME_[k]) are looked for when the epoch has kernel samples:
# a short run on a loaded machine may have none.
test_expect_success 'dcpiexport -f folded: one line per stack, the counts add up' '
	dcpiexport -d g.db -f folded >g.folded && head -n 3 g.folded &&
	grep -q "^wl-callers;.*;rounds;caller_a;leaf [0-9][0-9]*$" g.folded &&
	grep -q "^wl-threads;.*start_thread;worker;worker_loop [0-9][0-9]*$" g.folded &&
	! grep -qv " [0-9][0-9]*$" g.folded &&
	sum=$(awk "{ n += \$NF } END { print n }" g.folded) &&
	test "$sum" = "$(awk "\$1 == \"event\" { print \$7 }" g.db/000001/meta)" &&
	{ ! grep -q "^counter kernel [1-9]" g.db/000001/meta || grep -q "_\[k\]" g.folded; }
'

if command -v go >/dev/null 2>&1; then
	test_expect_success 'dcpiexport -f pprof: go tool pprof reads it, names and lines' '
		dcpiexport -d g.db -f pprof -o g.pb.gz &&
		gzip -t g.pb.gz &&
		HOME=$TEST_DIR GOCACHE=$TEST_DIR/gocache GOFLAGS=-mod=mod go tool pprof -top g.pb.gz >top.txt 2>&1 &&
		cat top.txt | head -n 12 &&
		grep -q "^Type: cpu" top.txt &&
		grep -q " leaf$" top.txt && grep -q " worker_loop$" top.txt &&
		HOME=$TEST_DIR GOCACHE=$TEST_DIR/gocache go tool pprof -raw g.pb.gz >raw.txt 2>&1 &&
		grep -q "^PeriodType: cpu nanoseconds" raw.txt &&
		grep -q " leaf .*wl-callers.c:[0-9]" raw.txt &&
		grep -q "comm:\[wl-threads\]" raw.txt &&
		grep -q "wl-callers [0-9a-f]\{40\} \[FN\]\[FL\]\[LN\]" raw.txt &&
		HOME=$TEST_DIR GOCACHE=$TEST_DIR/gocache go tool pprof -tagfocus=comm=wl-threads -top g.pb.gz >focus.txt 2>&1 &&
		grep -q " worker_loop$" focus.txt && ! grep -q " leaf$" focus.txt
	'
else
	test_skip 'dcpiexport -f pprof: go tool pprof reads it, names and lines' 'no go (golang-go)'
fi

test_expect_success 'dcpiexport: bad arguments' '
	test_must_fail dcpiexport -d g.db 2>err && grep -q "no format" err &&
	test_must_fail dcpiexport -d g.db -f svg 2>err && grep -q "bad format" err &&
	test_must_fail dcpiexport -d plain.db -f folded 2>err && grep -q "has no stacks" err &&
	test_must_fail dcpiexport -d g.db -f folded -o /nonexistent/x 2>err && grep -q "cannot create" err
'

test_done
