#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Damage is part of the report: a real recording (stacks, values, bursts,
# stopwatch results) has each kind of file damaged in turn (a profile, the
# meta, the image index, kallsyms, the stacks, a value profile, a path
# profile, the raw burst traces (which no report reads),
# the stopwatch results), and every report tool that reads it says so in
# its own output (text: an "Incomplete:" section naming the file; JSON: the
# "incomplete" list; pprof: a comment) and exits 2, while a tool that does
# not read it prints a complete report and exits 0 (docs/dcpi.7).  Missing
# files too; dcpiprof's totals stay the whole the epoch recorded; and what
# dcpi-tui's dumps show.
. "$top_srcdir/tests/lib.sh"
require_root
require_sampling
command -v python3 >/dev/null || skip_all "python3 is needed to read the JSON"

W=$top_builddir/tests/workloads

test_expect_success 'a recording with every kind of file' '
	dcpirun -q -d db -F 2000 -g --values --bursts -- $W/wl-three -n 60000000 >/dev/null &&
	{ ! [ -e /sys/bus/event_source/devices/uprobe ] ||
	  dcpiwatch -d db -f three -- $W/wl-three -n 2000000 >/dev/null; } &&
	ls db/000001 &&
	dcpidb -d db check
'

key=$(dcpi-test-helper dump db 1 2>/dev/null | awk '$1 == "image" && $5 ~ /wl-three$/ { print $2 }')
prof=$key.cycles.prof
vals=$key.values
paths=$key.paths

# The kinds of file, and the tools that read each (the others must not be
# disturbed by it).  Every report made from an epoch view reads the
# profiles, the meta and the index, and the symbols of every image its
# procedure lookups go through (kallsyms).
files="$prof meta images kallsyms stacks-1 $vals $paths bursts watch"
readers() { # FILE: the tools (by label) that must say it is damaged
	case $1 in
	*.prof|meta|images) echo "prof prof-json by-comm list list-json calc calc-json stats stats-json diff diff-json cg cg-json pprof vals vals-json" ;;
	kallsyms) echo "prof prof-json by-comm list list-json calc calc-json stats stats-json diff diff-json cg cg-json pprof" ;;
	stacks-*) echo "by-comm cg cg-json pprof" ;;
	*.values|*.paths) echo "list list-json calc calc-json vals vals-json" ;;
	# the raw traces kept for inspection: no report reads them (dcpidb check does)
	bursts) ;;
	watch) echo "cg cg-json watch watch-json" ;;
	esac
	case $1 in
	meta|images) echo "info info-json" ;;
	esac
}
tool_cmd() { # LABEL
	case $1 in
	prof) echo "dcpiprof -d bad -E 1" ;;
	prof-json) echo "dcpiprof -d bad -E 1 --json" ;;
	by-comm) echo "dcpiprof -d bad -E 1 --by comm" ;;
	list) echo "dcpilist -d bad -E 1 -V three" ;;
	list-json) echo "dcpilist -d bad -E 1 -V --json three" ;;
	calc) echo "dcpicalc -d bad -E 1 three" ;;
	calc-json) echo "dcpicalc -d bad -E 1 --json three" ;;
	stats) echo "dcpistats -d bad 1 1" ;;
	stats-json) echo "dcpistats -d bad --json 1 1" ;;
	diff) echo "dcpidiff -d bad 1 1" ;;
	diff-json) echo "dcpidiff -d bad --json 1 1" ;;
	cg) echo "dcpicg -d bad -E 1" ;;
	cg-json) echo "dcpicg -d bad -E 1 --json" ;;
	pprof) echo "dcpiexport -d bad -E 1 -f pprof -o out.pb.gz" ;;
	vals) echo "dcpivals -d bad -E 1" ;;
	vals-json) echo "dcpivals -d bad -E 1 --json" ;;
	info) echo "dcpidb -d bad info" ;;
	info-json) echo "dcpidb -d bad info --json" ;;
	watch) echo "dcpiwatch -d bad -E 1 --report" ;;
	watch-json) echo "dcpiwatch -d bad -E 1 --report --json" ;;
	esac
}
tools="prof prof-json by-comm list list-json calc calc-json stats stats-json diff diff-json cg cg-json pprof vals vals-json info info-json watch watch-json"

# said LABEL FILE: the tool's own output (out, or out.pb.gz) names FILE as
# incomplete: a section of the text, an entry of JSON's list, a comment.
said() {
	case $1 in
	*-json) python3 -c "
import json, sys
d = json.load(open('out'))
sys.exit(not any(sys.argv[1] in x['file'] and x['kind'] in ('damaged', 'missing')
                 for x in d['incomplete']))" "$2" ;;
	pprof) gzip -dc out.pb.gz | grep -a -q "dcpi: incomplete: [a-z]* bad/000001/$2" ;;
	*) grep -q "^Incomplete: " out && grep -q "^  [a-z]*  *bad/000001/$2" out ;;
	esac
}
# silent LABEL: the output says nothing is incomplete.
silent() {
	case $1 in
	*-json) python3 -c "
import json, sys
sys.exit(len(json.load(open('out'))['incomplete']) != 0)" ;;
	pprof) ! gzip -dc out.pb.gz | grep -a -q "dcpi: incomplete" ;;
	*) ! grep -q "^Incomplete: " out ;;
	esac
}

# check LABEL FILE: with FILE damaged (bad/), the tool says so and exits
# 2 if it reads FILE, else prints a complete report and exits 0.
check() {
	local label=$1 file=$2 cmd rc
	cmd=$(tool_cmd "$label")
	rm -f out out.pb.gz
	$cmd >out 2>err
	rc=$?
	if readers "$file" | tr ' ' '\n' | grep -qx "$label"; then
		[ $rc = 2 ] || { echo "$cmd: status $rc with $file damaged (want 2)"; cat err; return 1; }
		said "$label" "$file" || { echo "$cmd: its output does not name $file:"; head -n 40 out; return 1; }
		grep -q "bad/000001/$file" err || { echo "$cmd: no message names $file"; cat err; return 1; }
	else
		[ $rc = 0 ] || { echo "$cmd: status $rc with $file damaged, which it does not read (want 0)"; cat err; return 1; }
		silent "$label" || { echo "$cmd: says incomplete, yet it does not read $file"; cat out; return 1; }
	fi
}

test_expect_success 'every tool reports the pristine recording complete (exit 0)' '
	for label in $tools; do
		rm -rf bad && cp -a db bad &&
		cmd=$(tool_cmd $label) &&
		{ [ $label != watch ] && [ $label != watch-json ] || test -e db/000001/watch; } || continue
		$cmd >out 2>err || { echo "$cmd: status $?"; cat err; exit 1; }
		silent $label || { echo "$cmd: says incomplete"; cat out; exit 1; }
	done
'

kind_of() { # FILE: what it is, for the test's name
	case $1 in
	*.prof) echo "the program's profile" ;;
	*.values) echo "the program's value profile" ;;
	*.paths) echo "the program's path profile" ;;
	stacks-*) echo "the stacks" ;;
	*) echo "$1" ;;
	esac
}
for file in $files; do
	test_expect_success "$(kind_of $file) damaged: each tool that reads it says so, in its output and status" '
		test -e db/000001/'"$file"' || { echo "no '"$file"' in this recording (not here: skipped)"; exit 0; }
		for label in $tools; do
			case $label in watch*) test -e db/000001/watch || continue ;; esac
			rm -rf bad && cp -a db bad && truncate -s 60 bad/000001/'"$file"' &&
			check $label '"$file"' || exit 1
		done
	'
done

test_expect_success 'missing files are said as missing' '
	rm -rf bad && cp -a db bad && rm bad/000001/meta &&
	test_expect_code 2 dcpiprof -d bad -E 1 >out 2>err && grep -q "^  missing  bad/000001/meta: missing" out &&
	rm -rf bad && cp -a db bad && rm bad/000001/images &&
	test_expect_code 2 dcpiprof -d bad -E 1 >out 2>err &&
	grep -q "^  missing  bad/000001/images: missing or empty" out &&
	rm -rf bad && cp -a db bad && rm bad/000001/'"$prof"' &&
	test_expect_code 2 dcpiprof -d bad -E 1 >out 2>err &&
	grep -q "^  missing  bad/000001/\*.cycles.prof: the meta counts" out
'

# The totals are the whole the epoch recorded, marked partial: a damaged
# image'"'"'s samples are not given to the others.
test_expect_success 'dcpiprof: totals stay the whole, marked partial' '
	whole=$(dcpiprof -d db -E 1 --json | python3 -c "import json,sys; print(json.load(sys.stdin)[\"events\"][0][\"total\"])") &&
	rm -rf bad && cp -a db bad && truncate -s 60 bad/000001/'"$prof"' &&
	test_expect_code 2 dcpiprof -d bad -E 1 --json >out 2>err &&
	python3 -c "
import json, sys
d = json.load(open(\"out\"))
e = d[\"events\"][0]
rows = sum(r[\"samples\"][e[\"name\"]] for r in d[\"rows\"])
print(\"whole\", sys.argv[1], \"total\", e[\"total\"], \"unread\", e[\"unread\"], \"in rows\", rows)
assert e[\"total\"] == int(sys.argv[1]) and e[\"unread\"] > 0 and rows == e[\"total\"] - e[\"unread\"]
" "$whole" &&
	test_expect_code 2 dcpiprof -d bad -E 1 >out 2>err &&
	grep "^Total samples for event type .* = $whole (partial: [0-9]* of them in damaged or missing files" out
'

# dcpi-tui: what its dumps show of a damaged image: its row says so, never
# "ok", and the session's status says it showed partial data (2).
test_expect_success "dcpi-tui's images view marks the damaged image; status 2" '
	rm -rf bad && cp -a db bad && truncate -s 60 bad/000001/$prof &&
	printf ":save-view images.view\n" >s.txt &&
	TERM=xterm LINES=30 COLUMNS=120 test_expect_code 2 dcpi-tui -d bad -E 1 --script s.txt \
		</dev/null >/dev/null 2>&1 &&
	row=$(grep "wl-three$" images.view) &&
	echo "$row" | grep " damaged " &&
	TERM=xterm LINES=30 COLUMNS=120 dcpi-tui -d db -E 1 --script s.txt </dev/null >/dev/null 2>&1
'

test_done
