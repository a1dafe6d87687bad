#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dcpi-tui screen tests: every case of tests/tui/cases runs headless and its
# screen and view dumps must match tests/tui/expected (see tests/tui/run.sh).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/tui/run.sh"

infocmp xterm-256color >/dev/null 2>&1 || skip_all "no terminfo entry for xterm-256color"

test_expect_success 'fixture databases' '
	tui_fixtures
'

for script in "$top_srcdir"/tests/tui/cases/*.script; do
	name=$(basename "$script" .script)
	test_expect_success "screens: $name" "tui_case $name"
done

# The same screens whether data loads on the worker thread or inline.
test_expect_success 'screens without the worker thread' '
	DCPI_TUI_THREADS=0 tui_case images
'

test_expect_success 'golden files: each one as SHA256SUMS records it' '
	tui_manifest
'

test_done
