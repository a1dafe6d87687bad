#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The suite cannot pass on a broken product.  A shim takes the
# place of the collector (dcpirun) and of a report tool (dcpiprof), and the
# tests that use them must FAIL: not pass, not skip.  The shims live in a
# private shadow of the build tree (symbolic links to everything else): the
# real binaries are never touched, and the tests under it run as make check
# runs them, with top_builddir pointing at the shadow.
#
# Two ways to be broken for each tool: it fails (exit 1), or it pretends (the
# collector runs the command and records nothing; the report tool prints
# nothing and succeeds).  A test that skips when the tool fails, or that
# compares two empty outputs, passes one of these: this test then fails.
. "$top_srcdir/tests/lib.sh"

# shadow NAME DIR SHIM: a shadow build tree in shadow-NAME where DIR/TOOL
# (TOOL the shim's name) is the shim; prints its path.
shadow() {
	local name=$1 dir=$2 shim=$3 s=$TEST_DIR/shadow-$1 e
	rm -rf "$s"
	mkdir -p "$s/$dir"
	for e in "$top_builddir"/*; do
		[ "${e##*/}" = "$dir" ] || ln -s "$e" "$s/${e##*/}"
	done
	for e in "$top_builddir/$dir"/*; do
		ln -s "$e" "$s/$dir/${e##*/}"
	done
	rm -f "$s/$dir/${shim##*/}"
	cp "$shim" "$s/$dir/${shim##*/}"
	chmod 755 "$s/$dir/${shim##*/}"
	echo "$s"
}

mkdir -p shims/fails shims/pretends
printf '#!/bin/sh\necho "dcpirun: broken on purpose (t0900)" >&2\nexit 1\n' >shims/fails/dcpirun
printf '#!/bin/sh\necho "dcpiprof: broken on purpose (t0900)" >&2\nexit 1\n' >shims/fails/dcpiprof
# a collector that runs the command, with its exit status, and records nothing
cat >shims/pretends/dcpirun <<'EOF'
#!/bin/sh
while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done
[ $# -gt 0 ] && shift
exec "$@"
EOF
# a report tool that succeeds and says nothing
printf '#!/bin/sh\nexit 0\n' >shims/pretends/dcpiprof

# must_fail_under SHADOW TEST: runs tests/integration/TEST.sh with the
# shadow build tree; it must run (a plan with tests), fail some and exit 1.
# (A line for each goes to summary, printed at the end as TAP comments.)
must_fail_under() {
	local shadow=$1 t=$2 log rc start
	log=$TEST_DIR/$(basename "$shadow")-$t.log
	mkdir -p "$TEST_DIR/tmp"
	start=$(date +%s)
	top_builddir=$shadow TMPDIR=$TEST_DIR/tmp DCPI_TEST_TIMEOUT=120 \
		bash "$top_srcdir/tests/integration/$t.sh" >"$log" 2>&1
	rc=$?
	echo "$t with ${shadow##*/shadow-}: exit $rc, $(grep -c '^ok' "$log") ok," \
		"$(grep -c '^not ok' "$log") not ok, $(grep -c '# SKIP' "$log") skipped," \
		"$(($(date +%s) - start)) s" | tee -a "$TEST_DIR/summary"
	if grep -q "^1\.\.0 # SKIP" "$log"; then
		echo "$t skipped the whole script:"; cat "$log"; return 1
	fi
	if [ $rc -eq 0 ] || ! grep -q "^not ok" "$log" || ! grep -q "^1\.\.[1-9]" "$log"; then
		echo "$t did not fail:"; grep -v "^#" "$log" | head -n 40; return 1
	fi
}

test_expect_success 'a collector that fails: t0200, t0260 and t0520 fail' '
	s=$(shadow dcpirun-fails collect shims/fails/dcpirun) &&
	test -L "$s/collect/dcpid" && ! test -L "$s/collect/dcpirun" &&
	must_fail_under "$s" t0200-dcpirun &&
	must_fail_under "$s" t0260-calibration &&
	must_fail_under "$s" t0520-diff-real
'

test_expect_success 'a collector that records nothing: t0260 fails' '
	s=$(shadow dcpirun-pretends collect shims/pretends/dcpirun) &&
	must_fail_under "$s" t0260-calibration
'

test_expect_success 'a report tool that fails: t0300 fails' '
	s=$(shadow dcpiprof-fails tools shims/fails/dcpiprof) &&
	test -L "$s/tools/dcpilist" && ! test -L "$s/tools/dcpiprof" &&
	must_fail_under "$s" t0300-dcpiprof
'

test_expect_success 'a report tool that prints nothing: t0300 and t0630 fail' '
	s=$(shadow dcpiprof-pretends tools shims/pretends/dcpiprof) &&
	must_fail_under "$s" t0300-dcpiprof &&
	must_fail_under "$s" t0630-tui-tools
'

test_expect_success 'the real binaries were not touched' '
	! test -L "$top_builddir/collect/dcpirun" && "$top_builddir/collect/dcpirun" --version &&
	! test -L "$top_builddir/tools/dcpiprof" && "$top_builddir/tools/dcpiprof" --version
'

sed 's/^/# /' "$TEST_DIR/summary" 2>/dev/null
test_done
