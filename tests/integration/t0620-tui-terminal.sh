#!/bin/bash
# dcpi-tui in a real terminal (a tmux pane): keys through ncurses, readline
# at the prompt, a real SIGWINCH on resize, and the terminal restored at
# exit.  The headless screen tests (t0600) cover the screens themselves.
. "$top_srcdir/tests/lib.sh"

command -v dcpi-tui >/dev/null || skip_all "dcpi-tui is not built"
command -v tmux >/dev/null || skip_all "needs tmux (apt-get install tmux)"
infocmp xterm-256color >/dev/null 2>&1 || skip_all "no terminfo entry for xterm-256color"

export HOME="$TEST_DIR/home"
mkdir -p "$HOME"
socket="$TEST_DIR/tmux.sock"
tm() { tmux -S "$socket" "$@"; }
trap 'tm kill-server 2>/dev/null; test_cleanup' EXIT

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

# wait_gone TEXT: polls the pane (up to 10 s) until it no longer shows TEXT.
wait_gone() {
	for _ in $(seq 1 100); do
		tm capture-pane -p -t tui >pane 2>/dev/null && ! grep -q -e "$1" pane && return 0
		sleep 0.1
	done
	echo "the pane still shows '$1':"
	cat pane
	return 1
}

# wait_row TEXT ROW: polls the pane (up to 10 s) until TEXT starts row ROW
# (1-based): the screen has been laid out for a new size.
wait_row() {
	for _ in $(seq 1 100); do
		tm capture-pane -p -t tui >pane 2>/dev/null &&
			[ "$(grep -n -e "$1" pane | head -n 1 | cut -d: -f1)" = "$2" ] && return 0
		sleep 0.1
	done
	echo "the pane never showed '$1' on row $2:"
	cat pane
	return 1
}

# wait_for TEXT: polls the pane (up to 10 s) until it shows TEXT.
wait_for() {
	for _ in $(seq 1 100); do
		tm capture-pane -p -t tui >pane 2>/dev/null && grep -q -e "$1" pane && return 0
		sleep 0.1
	done
	echo "the pane never showed '$1':"
	cat pane
	return 1
}

test_expect_success 'starts in a terminal and shows the images' '
	tm -f /dev/null new-session -d -s tui -x 80 -y 24 \
		"env TERM=xterm-256color LC_ALL=C.UTF-8 HOME=$HOME dcpi-tui db; echo EXIT=\$?; sleep 60" &&
	wait_for "\[images\] epoch 1 (before)" &&
	wait_for "/bin/true"
'

test_expect_success 'keys move the cursor' '
	tm send-keys -t tui j &&
	wait_for "2/2 *$"
'

test_expect_success 'a resize (SIGWINCH) lays the screen out again' '
	tm resize-window -t tui -x 100 -y 30 &&
	wait_row "^\[images\].* 2/2 *$" 29 &&
	test $(awk "/^\[images\]/ { print length(\$0) }" pane) -gt 80
'

test_expect_success 'the prompt edits, completes and runs commands through readline' '
	tm send-keys -t tui : "sort pa" Tab &&
	wait_for "^:sort path" &&
	tm send-keys -t tui Enter &&
	wait_for "▲path"
'

test_expect_success 'history recalls the last command; Escape cancels' '
	tm send-keys -t tui : Up &&
	wait_for "^:sort path" &&
	tm send-keys -t tui Escape &&
	wait_gone "^:sort"
'

test_expect_success 'a resize while the prompt is open keeps the line being typed' '
	tm send-keys -t tui : "filter tr" &&
	wait_for "^:filter tr" &&
	tm resize-window -t tui -x 70 -y 20 &&
	wait_row "^\[images\]" 19 &&
	test_grep "^:filter tr" pane &&
	tm send-keys -t tui ue Enter &&
	wait_for "2 images, 1 shown" &&
	tm send-keys -t tui : "filter" Enter &&
	wait_for "2 images, 70 cycles samples  " &&
	tm resize-window -t tui -x 100 -y 30 &&
	wait_row "^\[images\]" 29
'

test_expect_success ':save-display dumps the real screen' '
	tm send-keys -t tui ":save-display $TEST_DIR/real.screen" Enter &&
	for _ in $(seq 1 50); do test -s real.screen && break; sleep 0.1; done &&
	test $(wc -l <real.screen) = 30 &&
	test_grep "dcpi-tui" real.screen
'

test_expect_success 'q goes back, q quits from the first view, the terminal is restored' '
	tm send-keys -t tui q &&
	wait_for "\[epochs\]" &&
	tm send-keys -t tui q &&
	wait_for "^EXIT=0" &&
	! grep -q "dcpi-tui │" pane
'

test_done
