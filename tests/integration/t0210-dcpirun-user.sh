#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dcpirun without privileges: sampling falls back to user space only
# (exclude_kernel) when perf_event_paranoid demands it, attribution still
# works, and another user's database is refused cleanly.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/workloads/attr.sh"
require_root
require_sampling
command -v setpriv >/dev/null || skip_all "no setpriv to become nobody"

# nobody runs copies of what it runs: the build tree may be in a private
# clone (/root is 0700).
share_programs "$TEST_DIR/bin" dcpirun dcpi-can-sample wl-three || bail_out "cannot copy the programs"
W=$TEST_DIR/bin
as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}
chmod 711 "$TEST_DIR"
mkdir u && chown nobody:nogroup u

test_expect_success 'nobody profiles a command' '
	as_nobody dcpirun -d u/db -F 4000 -- $W/wl-three >out 2>err &&
	cat err &&
	grep -q "samples (cycles" err &&
	attr_report u/db latest $W/wl-three >rep && cat rep &&
	near "$(attr_share rep three @image)" "$(awk "\$1 == \"three\" { print \$2 }" out)" 0.04
'

# The kernel says whether nobody may sample it (perf_event_paranoid): with
# the right, the kernel is sampled; without it, user space only, said so.
if why=$(as_nobody dcpi-can-sample --kernel); then
	test_expect_success 'with the right to sample the kernel: no fallback' '
		! grep "user space only" err
	'
else
	test_expect_success 'without the right to sample the kernel: user space only' '
		echo "$why" &&
		grep -q "user space only" err &&
		test "$(meta_counter u/db 000001 kernel)" = 0
	'
fi

test_expect_success 'files are private to their owner' '
	test "$(stat -c %U:%a u/db)" = nobody:750 &&
	test "$(stat -c %U:%a u/db/000001/meta)" = nobody:640
'

test_expect_success 'another user'"'"'s database is refused with a clear error' '
	dcpirun -q -d rootdb -- true &&
	chmod 755 rootdb &&
	as_nobody dcpirun -d rootdb -- true 2>err2; test $? = 1 &&
	cat err2 && grep -q "rootdb" err2
'

test_done
