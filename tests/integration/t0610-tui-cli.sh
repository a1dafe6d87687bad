#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dcpi-tui as a command: options, exit statuses, messages, the environment
# it honours, the history file, the timing file, and hostile input.
. "$top_srcdir/tests/lib.sh"

infocmp xterm-256color >/dev/null 2>&1 || skip_all "no terminfo entry for xterm-256color"

export TERM=xterm-256color LINES=24 COLUMNS=80 HOME="$TEST_DIR/home"
unset NO_COLOR XDG_STATE_HOME DCPI_TUI_SCRIPT DCPI_TUI_TIMING
mkdir -p "$HOME"

dcpi-test-helper build db >/dev/null <<-'EOF'
epoch label=one start=2026-03-01T00:00:00Z
event cycles used=clock period=100000 unit=ns
image aaaa path=/bin/true
profile aaaa cycles
0x10 5
EOF

# tui_run SCRIPT-TEXT ARGS...: runs a script, output in out.screen if it saves one.
tui_run() {
	printf '%s\n' "$1" >script
	shift
	dcpi-tui --script script "$@" </dev/null >stdout 2>stderr
}

test_expect_success '--help and --version' '
	dcpi-tui --help >out && test_grep "usage: dcpi-tui" out &&
	dcpi-tui --version >out && test_grep "dcpi-tui (dcpi)" out
'

test_expect_success 'bad usage exits 1 with the usage on stderr' '
	test_must_fail dcpi-tui --bogus 2>err && test_grep "usage:" err &&
	test_must_fail dcpi-tui db db2 2>err && test_grep "usage:" err
'

test_expect_success 'an unknown event is refused before the screen starts' '
	test_must_fail dcpi-tui -e nonsense db 2>err && test_grep "unknown event .nonsense." err
'

test_expect_success 'a missing or malformed script is refused with its line' '
	test_must_fail dcpi-tui --script nonexistent db 2>err &&
	test_grep "cannot open script .nonexistent." err &&
	printf "j\n<NoSuchKey>\n" >bad.script &&
	test_must_fail dcpi-tui --script bad.script db 2>err &&
	test_grep "bad.script:2: unknown key name" err
'

test_expect_success 'without a terminal or a script it says what it needs' '
	test_must_fail dcpi-tui db </dev/null >out 2>err &&
	test_grep "needs a terminal" err
'

test_expect_success 'an unknown terminal type is an error, not a crash' '
	printf ":quit\n" >q.script &&
	test_must_fail env TERM=no-such-terminal dcpi-tui --script q.script db 2>err &&
	test_grep "cannot use terminal type .no-such-terminal." err
'

test_expect_success 'DCPI_TUI_SCRIPT, -d and DCPI_DB choose script and database' '
	printf ":save-display env.screen\n" >env.script &&
	DCPI_TUI_SCRIPT=env.script dcpi-tui -d db </dev/null 2>err &&
	test_grep "epoch 1 (one)" env.screen &&
	rm env.screen &&
	DCPI_TUI_SCRIPT=env.script DCPI_DB=db dcpi-tui </dev/null 2>err &&
	test_grep "/bin/true" env.screen &&
	test ! -s err
'

test_expect_success 'the history goes to XDG_STATE_HOME, private' '
	XDG_STATE_HOME="$TEST_DIR/state" tui_run "<:>filter true<Enter>
/tr<Enter>" db &&
	test "$(cat state/dcpi/tui_history)" = "filter true" &&
	test "$(cat state/dcpi/tui_search_history)" = "tr" &&
	test "$(stat -c %a state/dcpi)" = 700 &&
	test "$(stat -c %a state/dcpi/tui_history)" = 600
'

test_expect_success 'the history is trimmed to 500 lines' '
	mkdir -p home/.local/state/dcpi &&
	seq 1 700 | sed "s/^/filter /" >home/.local/state/dcpi/tui_history &&
	tui_run "<:><Up><Enter>
:save-view h.view" db &&
	test_grep "filter: 700" h.view &&
	test $(wc -l <home/.local/state/dcpi/tui_history) = 500
'

test_expect_success 'an unwritable dump is an error in the status line' '
	tui_run ":save-display /nonexistent/dir/x.screen
:save-display out.screen" db &&
	test_grep "error: cannot write ./nonexistent/dir/x.screen." out.screen &&
	test ! -s stderr
'

test_expect_success 'a directory that is not a database is reported, not fatal' '
	mkdir notadb && echo x >notadb/file &&
	test_must_fail tui_run ":save-display out.screen" notadb &&
	test_grep "not a dcpi database" out.screen
'

test_expect_success 'a damaged profile: its image says damaged, the totals say partial' '
	cp -r db damaged &&
	prof=$(ls damaged/000001/*.prof | head -n 1) &&
	truncate -s $(( $(stat -c %s "$prof") - 4 )) "$prof" &&
	test_expect_code 2 tui_run "p
:save-display out.screen" damaged &&
	test_grep " damaged  */bin/true" out.screen &&
	test_grep "damaged (a profile unreadable, not counted)" out.screen &&
	test_grep "1 image, partial 0 cycles samples (1 damaged)" out.screen
'

test_expect_success 'a damaged profile: the epochs view marks the epoch its images view read' '
	COLUMNS=120 test_expect_code 2 tui_run "E
:save-display epochs.screen
p
:save-display pane.screen" damaged &&
	test_grep " 1 one .* 5\* " epochs.screen &&
	test_grep "1 epoch, \*partial: 1 damaged profile in epoch 1" epochs.screen &&
	test_grep "5 samples; its images partial: 1 damaged profile" pane.screen &&
	tui_run "E
:save-display epochs.screen" db &&
	! grep -e "partial" -e "5\*" epochs.screen
'

# The error is on the screen until q; then the status says it, as for
# every tool that could not open what it was given.
test_expect_success 'no database there: the error is shown, and the status is 1 after q' '
	mkdir empty && echo x >regular &&
	for d in empty regular nonexistent; do
		test_must_fail tui_run ":save-display $d.screen
q" $d || exit 1
		cat $d.screen | grep -i "error" || exit 1
	done &&
	tui_run q db
'

test_expect_success 'a script that ends inside the prompt cancels it' '
	tui_run "<:>filter nothing-matches" db &&
	tui_run "<:>sort path
:quit
:save-display never.screen" db &&
	test ! -e never.screen
'

test_expect_success 'DCPI_TUI_TIMING records the first screen and every key' '
	DCPI_TUI_TIMING=timing tui_run "jjk" db &&
	test_grep "^first_paint_ns [0-9]" timing &&
	test_grep "^first_screen_ns [1-9]" timing &&
	test $(grep -c "^key_ns [0-9]" timing) = 3
'

test_expect_success 'a timing file that cannot be written fails the session, said on stderr' '
	test_must_fail env DCPI_TUI_TIMING=nodir/timing dcpi-tui --script q.script db \
		</dev/null >stdout 2>stderr &&
	test_grep "cannot write .nodir/timing." stderr
'

test_expect_success 'NO_COLOR and --no-color draw without colour pairs' '
	NO_COLOR=1 tui_run ":save-display -a nc.screen" db &&
	! grep -E "topbar|title|cursor" nc.screen &&
	tui_run ":save-display -a nc2.screen" --no-color db &&
	! grep -E "topbar|title|cursor" nc2.screen &&
	tui_run ":save-display -a c.screen" db &&
	test_grep "topbar" c.screen
'

test_done
