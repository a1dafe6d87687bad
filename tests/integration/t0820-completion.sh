#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Shell completion from the commands' own option tables: every command
# lists with --list-options exactly the options its --help shows; the bash
# completion (completion/dcpi) completes options, their values, epochs and
# labels from the database, procedures of an epoch, dcpidb's and dcpictl's
# verbs and the command dcpirun runs, with and without bash-completion;
# make install puts the completion, the unit, the group and the settings
# where bash-completion and systemd look.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/workloads/attr.sh"

COMP=$top_builddir/completion/dcpi
COMMANDS=$(sed -n 's/^complete -F _dcpi //p' "$COMP")
BASHCOMP=/usr/share/bash-completion/bash_completion

# The words completion offers for LINE (the cursor at its end), one a line.
# With NOBC=1 without bash-completion's helpers.
complete_line() { # LINE
	bash -c '
		[ -n "${NOBC:-}" ] || . "$1" 2>/dev/null
		. "$2"
		line=$3
		COMP_LINE=$line COMP_POINT=${#line}
		read -ra COMP_WORDS <<<"$line"
		[[ $line == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_dcpi 2>/dev/null
		printf "%s\n" "${COMPREPLY[@]}"' _ "$BASHCOMP" "$COMP" "$1"
}

# Completion of LINE offers exactly the words WANT (sorted, space-separated).
offers() { # LINE WANT
	local got
	got=$(complete_line "$1" | sort | tr "\n" " ")
	if [ "$got" != "$2 " ]; then
		echo "completing '$1': got '$got', want '$2 '"
		return 1
	fi
}
# Completion of LINE offers at least WORDs.
offers_some() { # LINE WORD...
	local line=$1 w
	shift
	complete_line "$line" >words
	for w in "$@"; do
		grep -qx -- "$w" words || { echo "completing '$line': no '$w' in:"; cat words; return 1; }
	done
}

# The long options a --help shows, one a line (option lines only, not prose).
help_options() {
	sed -n -E 's/^  (-[A-Za-z0-9], |    )(--[a-z][a-z0-9-]*).*/\2/p' |
		sed 's/^--help$/--help\n--version/' | sort -u
}
list_options() {
	awk '$1 == "option" && $3 != "-" { print $3 }' | sort -u
}

test_expect_success 'every command lists the options its --help shows' '
	test -n "$COMMANDS" &&
	for c in $COMMANDS; do
		$c --list-options >list.out &&
		$c --help | help_options >h &&
		list_options <list.out >l &&
		test -s l &&
		{ diff -u h l || { echo "$c drifted"; exit 1; }; } || exit 1
	done &&
	for v in check info prune gc; do
		dcpidb $v --help | help_options >h &&
		dcpidb $v --list-options | list_options >l &&
		{ diff -u h l || { echo "dcpidb $v drifted"; exit 1; }; } || exit 1
	done
'

test_expect_success 'options and their values' '
	for NOBC in "" 1; do
		export NOBC
		offers "dcpiprof --js" "--json" &&
		offers "dcpiprof -e cy" "cycles" &&
		offers "dcpiprof -e cycles,im" "cycles,imiss" &&
		offers "dcpid --hash " "rr4 stf6" &&
		offers "dcpidiff --sort " "address verdict" &&
		offers "dcpiprof --color=" "always auto never" &&
		offers "dcpidb " "check gc info prune" &&
		offers "dcpidb -d x prune --k" "--keep" &&
		offers "dcpidb prune --max-" "--max-size" &&
		offers "dcpictl " "epoch flush quit status" &&
		offers "dcpid --max" "--max-age --max-size" &&
		offers_some "dcpirun -- wl-thr" wl-three &&
		offers_some "dcpirun -F 100 wl-thr" wl-three || exit 1
	done
'

test_expect_success 'epochs and labels from the database' '
	cat >fixture <<-EOF &&
	epoch label=before
	event cycles
	epoch label=after
	event cycles
	epoch
	event cycles
	EOF
	dcpi-test-helper build db fixture &&
	for NOBC in "" 1; do
		export NOBC
		offers "dcpiprof -d db -E " "1 2 3 after before latest" &&
		offers "dcpiprof -d db -E a" "after" &&
		offers "dcpiprof --db=db --epoch=b" "before" &&
		offers "dcpidiff -d db " "1 2 3 after before latest" &&
		offers "dcpistats -d db --json b" "before" &&
		offers "dcpi-tui db -E " "1 2 3 after before latest" &&
		offers "dcpidb -d db prune --label " "after before" &&
		offers_some "dcpirun -d " db &&
		DCPI_DB=db offers "dcpiprof -E l" "latest" || exit 1
	done
'

if dcpirun -q -d rec -F 2000 -- "$top_builddir/tests/workloads/wl-three" >/dev/null 2>rec.err; then
	test_expect_success 'procedures of the epoch for dcpicalc and dcpilist' '
		for NOBC in "" 1; do
			export NOBC
			offers_some "dcpicalc -d rec " one two three &&
			# (at least: the kernel procedures sampled in the run are
			# words too, and which of them start so is chance)
			offers_some "dcpilist -d rec thr" three &&
			offers_some "dcpidiff -d rec -p tw" two || exit 1
		done &&
		# what the completion reads, and its exit status (it once crashed
		# at the end, after printing, with a status of 139 nobody saw)
		dcpidb -d rec complete procedures >procs &&
		grep -qx two procs &&
		dcpidb -d rec complete epochs >epochs && test -s epochs &&
		test_must_fail dcpidb -d nodb complete procedures 2>err &&
		grep "no profile database" err
	'
else
	test_skip 'procedures of the epoch for dcpicalc and dcpilist' \
		"this machine cannot record a profile: $(tail -n 1 rec.err)"
fi

test_expect_success 'make install: completion, unit, group and settings where they are looked for' '
	make -C "$top_builddir" install DESTDIR="$TEST_DIR/inst" >install.out 2>&1 ||
		{ tail install.out; exit 1; }
	vars=$(MAKEFLAGS= MFLAGS= make -s --no-print-directory -C "$top_builddir" -f Makefile -f - print <<<"print: ; @echo \$(bashcompletiondir) \$(systemdsystemunitdir) \$(sysusersdir) \$(sbindir) \$(sysconfdir) \$(pkglibexecdir)") &&
	read -r bcdir unitdir sysusersdir sbindir sysconfdir libexecdir <<<"$vars" &&
	echo "$vars" &&
	for c in $COMMANDS; do
		test "$(readlink "inst$bcdir/$c")" = dcpi || { echo "no completion for $c"; exit 1; }
	done &&
	test -f "inst$bcdir/dcpi" &&
	grep -x "ExecStart=$sbindir/dcpid --foreground --config $sysconfdir/dcpi/dcpid.conf -d /var/lib/dcpi --socket /run/dcpi/dcpid.sock --group dcpi --emulate-socket /run/dcpi-emulate.sock" "inst$unitdir/dcpid.service" &&
	test -x "inst$sbindir/dcpid" &&
	test -x "inst$libexecdir/dcpi-emulate" &&
	grep -x "ExecStart=$libexecdir/dcpi-emulate" "inst$unitdir/dcpi-emulate@.service" &&
	grep -x "ListenStream=/run/dcpi-emulate.sock" "inst$unitdir/dcpi-emulate.socket" &&
	grep -x "g dcpi - -" "inst$sysusersdir/dcpi.conf" &&
	grep "^u dcpi-worker " "inst$sysusersdir/dcpi.conf" &&
	grep -x "max-size = 1G" "inst$sysconfdir/dcpi/dcpid.conf" &&
	if command -v systemd-analyze >/dev/null; then
		sed "s|$sbindir/dcpid|$TEST_DIR/inst$sbindir/dcpid|" "inst$unitdir/dcpid.service" >dcpid.service &&
		sed "s|$libexecdir/dcpi-emulate|$TEST_DIR/inst$libexecdir/dcpi-emulate|" \
			"inst$unitdir/dcpi-emulate@.service" >dcpi-emulate@.service &&
		cp "inst$unitdir/dcpi-emulate.socket" . &&
		systemd-analyze verify --man=no ./dcpid.service ./dcpi-emulate.socket ./dcpi-emulate@.service
	fi &&
	make -C "$top_builddir" uninstall DESTDIR="$TEST_DIR/inst" >/dev/null 2>&1 &&
	! test -e "inst$bcdir/dcpiprof" && ! test -e "inst$unitdir/dcpid.service" &&
	! test -e "inst$unitdir/dcpi-emulate.socket" && ! test -e "inst$libexecdir/dcpi-emulate"
'

test_done
