#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The README's first command: scripts/demo (run-demo's last step after the
# build) records the demo workloads in two epochs where something changed
# (two() twice as long: dcpidiff finds it), and opens dcpi-tui on them in a
# terminal (where % compares time: two() changed); when its input is not a
# terminal it prints the reports and a hint instead, and succeeds.  It
# works on the build in _build/, as run-demo and run-tests make it; other
# build directories skip.
. "$top_srcdir/tests/lib.sh"

[ "$(cd "$top_builddir" && pwd -P)" = "$(cd "$top_srcdir/_build" 2>/dev/null && pwd -P)" ] ||
	skip_all "scripts/demo runs the build in _build/, not this one"
require_sampling
TMUX_SESSION=demo
. "$top_srcdir/tests/tui/tmux.sh"

test_expect_success 'without a terminal: two epochs recorded, the reports, a hint' '
	DCPI_DEMO_DB="$TEST_DIR/demo.db" "$top_srcdir/scripts/demo" </dev/null >out 2>err &&
	test_grep "^demo database: .*demo.db (epochs .before. and .after." out &&
	test_grep "^== dcpiprof -d .* -E before$" out &&
	test_grep "^== dcpiprof -d .* -E after$" out &&
	test_grep "^demo: not on a terminal, so dcpi-tui was not opened" out &&
	test_grep "tui/dcpi-tui .*demo.db$" out
'

test_expect_success 'the epochs have a story: two() changed' '
	dcpidiff -d demo.db before after >diff &&
	awk "\$NF ~ /wl-three\$/ && \$(NF-1) == \"two\" { print \$8 }" diff >verdict &&
	test "$(cat verdict)" = changed
'

test_expect_success 'on a terminal: the last step is dcpi-tui on the demo database' '
	tm -f /dev/null new-session -d -s demo -x 100 -y 30 \
		"env TERM=xterm-256color LC_ALL=C.UTF-8 HOME=$HOME DCPI_DEMO_DB=$TEST_DIR/demo.db \
		$top_srcdir/scripts/demo; echo EXIT=\$?; sleep 60" &&
	pane_wait_for "\[images\] epoch 2 (after)" 90 &&
	pane_wait_for "wl-three" &&
	tm send-keys -t demo ":diff before after" Enter &&
	pane_wait_for "\[diff\] A 1 (before) vs B 2 (after)" 30 &&
	tm send-keys -t demo % &&
	pane_wait_for "\[diff\] A 1 (before) vs B 2 (after) by period" 30 &&
	grep -E "^ *[0-9]+ .* changed +two +wl-three" pane &&
	tm send-keys -t demo Q &&
	pane_wait_for "^EXIT=0"
'

test_done
