# SPDX-License-Identifier: GPL-2.0-or-later
# tests/tui/tmux.sh - dcpi-tui on a real terminal: a tmux server of the
# test's own (socket in $TEST_DIR), sourced after tests/lib.sh.  Skips the
# test when tmux or the xterm-256color terminfo entry is missing.
#
#   tm ARGS...                 tmux on the test's server
#   pane_wait_for TEXT [SECS]  polls the pane of session $TMUX_SESSION (default
#                              tui) until it shows TEXT (a grep pattern; 30 s)
#   pane_wait_gone TEXT        until it no longer shows TEXT
#   pane_wait_row TEXT ROW     until TEXT starts row ROW (1-based)
# Each leaves the last capture in ./pane and prints it when it gives up.

command -v tmux >/dev/null || skip_all "needs tmux (apt-get install tmux)"
infocmp xterm-256color >/dev/null 2>&1 || skip_all "no terminfo entry for xterm-256color"

export HOME="$TEST_DIR/home"
mkdir -p "$HOME"
tmux_socket="$TEST_DIR/tmux.sock"
TMUX_SESSION=${TMUX_SESSION:-tui}
tm() { tmux -S "$tmux_socket" "$@"; }
# The server is gone when this returns: kill-server only asks it to go, and
# the test's last check, that nothing it started still runs, saw it
# exiting on a loaded host.
tm_stop() {
	local pid
	pid=$(tm display-message -p '#{pid}' 2>/dev/null)
	tm kill-server 2>/dev/null
	[ -n "$pid" ] || return 0
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.05
	done
	kill -9 "$pid" 2>/dev/null
}
test_at_end tm_stop

# pane_poll TRIES TEST-COMMAND...: captures the pane until the command succeeds.
pane_poll() {
	local tries=$1
	shift
	for _ in $(seq 1 "$tries"); do
		tm capture-pane -p -t "$TMUX_SESSION" >pane 2>/dev/null && "$@" && return 0
		sleep 0.1
	done
	return 1
}

pane_shows() { grep -q -e "$1" pane; }
pane_lacks() { ! grep -q -e "$1" pane; }
pane_row_is() { [ "$(grep -n -e "$1" pane | sed -n 1p | cut -d: -f1)" = "$2" ]; }

pane_wait_for() {
	pane_poll $((${2:-30} * 10)) pane_shows "$1" && return 0
	echo "the pane never showed '$1':"
	cat pane
	return 1
}

pane_wait_gone() {
	pane_poll 300 pane_lacks "$1" && return 0
	echo "the pane still shows '$1':"
	cat pane
	return 1
}

pane_wait_row() {
	pane_poll 300 pane_row_is "$1" "$2" && return 0
	echo "the pane never showed '$1' on row $2:"
	cat pane
	return 1
}
