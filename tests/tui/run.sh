# SPDX-License-Identifier: GPL-2.0-or-later
# tests/tui/run.sh - the screen-test runner of dcpi-tui (tig's test/ approach),
# sourced by tests/integration/t0600-tui-screens.sh after tests/lib.sh.
#
# A case is tests/tui/cases/NAME.script: a dcpi-tui script (tui/script.h) run
# headless with --script.  Its :save-display and :save-view commands write
# files into the case's directory; every one of them is compared with
# tests/tui/expected/NAME/FILE by diff -u, and a file saved without an
# expected copy (or expected but not saved) fails the case too.
#
# Lines "#! KEY: VALUE" at the top of a script set up its run:
#   #! db: NAME       the database argument (default: db); fixtures below
#   #! args: ...      more dcpi-tui arguments
#   #! env: A=1 B=2   more environment
#   #! size: 80x24    the screen (COLUMNS x LINES)
#   #! home: NAME     share HOME (and so the prompt history) with other cases
#   #! status: N      the exit status expected (default 0)
#                     naming the same home; cases run in name order
#
# The harness pins everything a screen depends on: TERM=xterm-256color,
# LINES, COLUMNS, TZ=UTC, LC_ALL=C.UTF-8, HOME, and clears NO_COLOR,
# DCPI_DB and XDG_STATE_HOME.
#
# Fixtures (in $TEST_DIR, built once by tui_fixtures):
#   db             tests/tui/fixtures/basic.txt: 3 epochs, every binary status
#   big            one epoch of 300 images, for scrolling and search
#   bad            db with a corrupt profile (epoch 2), meta (1), index (3)
#   pdb            tests/tui/fixtures/prog.txt: samples at real offsets of
#                  bin/prog, for the procedure views
#   sdb            tests/tui/fixtures/stall.txt: bin/prog before and after
#                  two loads started to stall, for the analysis and diffs,
#                  then rebuilt (bin/prog-v2, a nop more in scale, kept as
#                  the database's snapshot of its build-id)
#   ddb            like the demo's database: sdb's epochs before and after
#                  only, the cursor starting on after (the current epoch)
#   nonexistent    no database at all
#   bin/           the binaries the image records point at: bin/prog is
#                  tests/tui/fixtures/prog.s assembled and linked by as and ld
#                  (no compiler, no C library: the same code everywhere), with
#                  a copy without DWARF (prog-nog) and a stripped one
#                  (prog-strip); the images of db are copies of it padded to
#                  20000 bytes
#   prog.c         its source, found through its DWARF (comp_dir ".")
#
# Every expected file is recorded in tests/tui/expected/SHA256SUMS, which
# t0600 checks: a golden file edited by hand, or added or removed without
# regenerating, fails the suite.
#
# To (re)generate expected files after a deliberate change:
#   DCPI_TUI_UPDATE=1 make check TESTS=tests/integration/t0600-tui-screens.sh
# Each case whose files change is rewritten and reported as failing, with
# its diff in the log (every diff of the run also goes to tui-update.diff in
# the build directory), and SHA256SUMS is rewritten the same way.  Review the
# diffs, run the test again without DCPI_TUI_UPDATE (it passes), and say in
# the commit message what changed on the screens and why.

tui_src=$top_srcdir/tests/tui

tui_fixtures() {
	(
		set -e
		cd "$TEST_DIR"
		mkdir -p bin
		tui_program
		for f in bin/app bin/libfoo.so \
			"$(printf 'bin/na\303\257ve-\343\203\246\343\203\213\343\202\263\343\203\274\343\203\211')"; do
			cp bin/prog "$f"
			truncate -s 20000 "$f"
		done
		touch -d @1700000000 bin/app bin/libfoo.so
		dcpi-test-helper build db "$tui_src/fixtures/basic.txt" >/dev/null
		sed "s/@BUILDID@/$(tui_build_id bin/prog)/" "$tui_src/fixtures/prog.txt" >prog.txt
		dcpi-test-helper build pdb prog.txt >/dev/null
		sed -e "s/@BUILDID@/$(tui_build_id bin/prog)/" \
			-e "s/@BUILDID2@/$(tui_build_id bin/prog-v2)/" "$tui_src/fixtures/stall.txt" >stall.txt
		dcpi-test-helper build sdb stall.txt >/dev/null
		sed '/^epoch label=rebuilt/,$d' stall.txt >demo.txt
		dcpi-test-helper build ddb demo.txt >/dev/null
		mkdir -p sdb/binaries
		cp bin/prog-v2 "sdb/binaries/$(tui_build_id bin/prog-v2)"
		tui_big_fixture | dcpi-test-helper build big >/dev/null
		cp -r db bad
		tui_flip bad/000002/aaaa0002.cycles.prof 150
		tui_flip bad/000001/meta 20
		tui_flip bad/000003/images 20
	)
}

# tui_program: bin/prog and its variants, from the committed assembly.
tui_program() {
	as -o prog.o "$tui_src/fixtures/prog.s"
	ld -o bin/prog --build-id=sha1 prog.o
	objcopy --strip-debug bin/prog bin/prog-nog
	objcopy --strip-all bin/prog bin/prog-strip
	cp "$tui_src/fixtures/prog.c" prog.c
	# another build: a nop at the start of scale
	sed '/^scale:/,/cfi_startproc/ s/^\t\.cfi_startproc$/\t.cfi_startproc\n\tnop/' \
		"$tui_src/fixtures/prog.s" >prog-v2.s
	as -o prog-v2.o prog-v2.s
	ld -o bin/prog-v2 --build-id=sha1 prog-v2.o
}

# tui_build_id FILE: the GNU build-id of an ELF file, in hex.
tui_build_id() {
	readelf -n "$1" | awk '/Build ID/ && !f { print $3; f = 1 }'
}

# tui_flip FILE OFFSET: damages one byte.
tui_flip() {
	printf '\377' | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

# 300 images with decreasing samples: lib-001.so .. lib-300.so.
tui_big_fixture() {
	echo "epoch label=big start=2026-02-01T00:00:00Z end=2026-02-01T01:00:00Z"
	echo "event cycles used=clock period=100000 unit=ns"
	for i in $(seq 1 300); do
		n=$(printf %03d "$i")
		echo "image k$n path=/usr/lib/big/lib-$n.so"
		echo "profile k$n cycles"
		echo "0x1000 $((3010 - i * 10))"
	done
}

# tui_header SCRIPT KEY: the value of "#! KEY: VALUE" in SCRIPT.
tui_header() {
	sed -n "s/^#! $2: *//p" "$1" | sed -n 1p
}

# tui_case NAME: runs case NAME and compares what it saved.
tui_case() {
	local name=$1 script=$tui_src/cases/$1.script expected=$tui_src/expected/$1
	local work=$TEST_DIR/case-$1 db args env size home rc f status
	db=$(tui_header "$script" db)
	status=$(tui_header "$script" status)
	args=$(tui_header "$script" args)
	env=$(tui_header "$script" env)
	size=$(tui_header "$script" size)
	home=$(tui_header "$script" home)
	size=${size:-80x24}
	home=$TEST_DIR/home-${home:-$name}
	rm -rf "$work"
	mkdir -p "$work" "$home"
	ln -s ../bin "$work/bin"
	for f in db big bad pdb sdb ddb prog.c; do ln -s "../$f" "$work/$f"; done
	# shellcheck disable=SC2086
	(cd "$work" && env -i PATH="$PATH" HOME="$home" TERM=xterm-256color \
		LINES="${size#*x}" COLUMNS="${size%x*}" TZ=UTC LC_ALL=C.UTF-8 \
		${DCPI_TUI_THREADS:+DCPI_TUI_THREADS=$DCPI_TUI_THREADS} $env \
		dcpi-tui --script "$script" $args "${db:-db}" >stdout 2>stderr)
	rc=$?
	if [ $rc -ne "${status:-0}" ]; then
		echo "dcpi-tui exited with status $rc (want ${status:-0})"
		cat "$work/stderr"
		return 1
	fi
	if [ -s "$work/stderr" ]; then
		echo "dcpi-tui wrote to stderr:"
		cat "$work/stderr"
		return 1
	fi
	tui_compare "$name" "$work" "$expected"
}

# tui_update NAME WORK EXPECTED: rewrites EXPECTED from WORK's dumps; shows
# the diff and fails if that changed anything.
tui_update() {
	local name=$1 work=$2 expected=$3 new=$2/new f
	rm -rf "$new"
	mkdir -p "$new"
	for f in "$work"/*.screen "$work"/*.view; do
		[ -e "$f" ] && cp "$f" "$new/"
	done
	mkdir -p "$expected"
	if diff -ruN "$expected" "$new" >"$work/update.diff"; then
		return 0
	fi
	rm -rf "$expected"
	cp -r "$new" "$expected"
	cat "$work/update.diff" >>"$top_builddir/tui-update.diff"
	echo "DCPI_TUI_UPDATE=1: rewrote the expected files of $name (all the diffs: $top_builddir/tui-update.diff):"
	cat "$work/update.diff"
	return 1
}

tui_compare() {
	local name=$1 work=$2 expected=$3 f status=0
	if [ "${DCPI_TUI_UPDATE:-0}" = 1 ]; then
		tui_update "$@"
		return
	fi
	for f in "$expected"/*; do
		[ -e "$f" ] || continue
		if [ ! -e "$work/${f##*/}" ]; then
			echo "$name did not save ${f##*/}"
			status=1
		elif ! diff -u "$f" "$work/${f##*/}"; then
			status=1
		fi
	done
	for f in "$work"/*.screen "$work"/*.view; do
		[ -e "$f" ] || continue
		if [ ! -e "$expected/${f##*/}" ]; then
			echo "$name saved ${f##*/}, which has no expected copy"
			status=1
		fi
	done
	return $status
}

# tui_sums: the SHA256SUMS every expected file should have, sorted.
tui_sums() {
	(cd "$tui_src/expected" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' |
		LC_ALL=C sort | xargs -r sha256sum)
}

# tui_manifest: checks that tests/tui/expected/SHA256SUMS records every
# expected file as it is (with DCPI_TUI_UPDATE=1: rewrites it, shows the
# diff and fails if that changed it).
tui_manifest() {
	local sums=$tui_src/expected/SHA256SUMS
	tui_sums >sums.now || return 1
	test -s sums.now || { echo "no expected files in $tui_src/expected"; return 1; }
	if [ "${DCPI_TUI_UPDATE:-0}" = 1 ]; then
		diff -u "$sums" sums.now >sums.diff && return 0
		cp sums.now "$sums"
		echo "DCPI_TUI_UPDATE=1: rewrote $sums:"
		cat sums.diff
		return 1
	fi
	if ! diff -u "$sums" sums.now; then
		echo "tests/tui/expected changed without DCPI_TUI_UPDATE=1 (above: SHA256SUMS, then the files now);"
		echo "regenerate them on purpose (tests/tui/run.sh says how), or undo the change"
		return 1
	fi
}
