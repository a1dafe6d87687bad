#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dcpi-tui in a real terminal (a tmux pane): keys through ncurses, readline
# at the prompt, a real SIGWINCH on resize, and the terminal restored at
# exit.  The headless screen tests (t0600) cover the screens themselves.
. "$top_srcdir/tests/lib.sh"

. "$top_srcdir/tests/tui/tmux.sh"

dcpi-test-helper build db >/dev/null <<-'EOF'
epoch label=before start=2026-03-01T00:00:00Z
event cycles used=clock period=100000 unit=ns
image aaaa path=/bin/true
image bbbb path=/bin/false
profile aaaa cycles
0x10 50
profile bbbb cycles
0x10 20
EOF

test_expect_success 'starts in a terminal and shows the images' '
	tm -f /dev/null new-session -d -s tui -x 80 -y 24 \
		"env TERM=xterm-256color LC_ALL=C.UTF-8 HOME=$HOME dcpi-tui db; echo EXIT=\$?; sleep 60" &&
	pane_wait_for "\[images\] epoch 1 (before)" &&
	pane_wait_for "/bin/true"
'

test_expect_success 'keys move the cursor' '
	tm send-keys -t tui j &&
	pane_wait_for "2/2 *$"
'

test_expect_success 'a resize (SIGWINCH) lays the screen out again' '
	tm resize-window -t tui -x 100 -y 30 &&
	pane_wait_row "^\[images\].* 2/2 *$" 29 &&
	test $(awk "/^\[images\]/ { print length(\$0) }" pane) -gt 80
'

test_expect_success 'the prompt edits, completes and runs commands through readline' '
	tm send-keys -t tui : "sort pa" Tab &&
	pane_wait_for "^:sort path" &&
	tm send-keys -t tui Enter &&
	pane_wait_for "▲path"
'

test_expect_success 'history recalls the last command; Escape cancels' '
	tm send-keys -t tui : Up &&
	pane_wait_for "^:sort path" &&
	tm send-keys -t tui Escape &&
	pane_wait_gone "^:sort"
'

test_expect_success 'a resize while the prompt is open keeps the line being typed' '
	tm send-keys -t tui : "filter tr" &&
	pane_wait_for "^:filter tr" &&
	tm resize-window -t tui -x 70 -y 20 &&
	pane_wait_row "^\[images\]" 19 &&
	test_grep "^:filter tr" pane &&
	tm send-keys -t tui ue Enter &&
	pane_wait_for "2 images, 1 shown" &&
	tm send-keys -t tui : "filter" Enter &&
	pane_wait_for "2 images, 70 cycles samples  " &&
	tm resize-window -t tui -x 100 -y 30 &&
	pane_wait_row "^\[images\]" 29
'

test_expect_success ':save-display dumps the real screen' '
	tm send-keys -t tui ":save-display $TEST_DIR/real.screen" Enter &&
	wait_for 30 "dcpi-tui to save real.screen" "test -s real.screen" &&
	test $(wc -l <real.screen) = 30 &&
	test_grep "dcpi-tui" real.screen
'

test_expect_success 'q goes back, q quits from the first view, the terminal is restored' '
	tm send-keys -t tui q &&
	pane_wait_for "\[epochs\]" &&
	tm send-keys -t tui q &&
	pane_wait_for "^EXIT=0" &&
	! grep -q "dcpi-tui │" pane
'

test_done
