#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What dcpid costs, in dcpictl status: its own CPU, its unwinding and
# emulating workers' (running and gone), and apart from them the time it
# held other threads stopped.  The total agrees within 10% with the CPU of
# dcpid and its children as /proc counts it (a tick is 10 ms: 20 ms more
# of slack).
. "$top_srcdir/tests/lib.sh"
require_root
require_sampling
command -v python3 >/dev/null || skip_all "python3 is needed to read the JSON"

W=$top_builddir/tests/workloads
SOCK=$TEST_DIR/ctl/dcpid.sock

# The CPU seconds of PID and its children from /proc: its own, the reaped
# children's (cutime, cstime), and those of its children still running.
proc_cpu() { # PID
	python3 - "$1" <<-'PY'
	import os, sys
	hz = os.sysconf("SC_CLK_TCK")
	def fields(pid):
	    s = open("/proc/%s/stat" % pid).read()
	    return s[s.rindex(")") + 2:].split()
	pid = sys.argv[1]
	f = fields(pid)
	total = sum(int(x) for x in f[11:15])      # utime stime cutime cstime
	for c in open("/proc/%s/task/%s/children" % (pid, pid)).read().split():
	    try:
	        g = fields(c)
	        total += int(g[11]) + int(g[12])
	    except OSError:
	        pass
	print(total / hz)
	PY
}

test_expect_success 'dcpid -g --values --bursts: its whole cost in status agrees with /proc' '
	mkdir -p ctl &&
	{ dcpid -f -d db --socket "$SOCK" -F 2000 -g --values --bursts=10 --values-users=root \
		--write-interval 1 >/dev/null 2>dcpid.err & } &&
	daemon=$! && test_register_pid $daemon dcpid &&
	wait_for 30 "dcpid to answer" "dcpictl --socket \"$SOCK\" status >/dev/null 2>&1" &&
	{ $W/wl-three -s 3 >/dev/null & } && load1=$! &&
	$W/wl-three -s 3 >/dev/null &&
	wait $load1 &&
	dcpictl --socket "$SOCK" --json status >status.json &&
	measured=$(proc_cpu $daemon) &&
	dcpictl --socket "$SOCK" status >status.txt &&
	grep "^overhead: " status.txt &&
	dcpictl --socket "$SOCK" quit && wait_exit $daemon &&
	python3 -c "
import json
o = json.load(open(\"status.json\"))[\"overhead\"]
m = $measured
print(\"status %.3f s (dcpid %.3f, unwinding %.3f, emulating %.3f; held stopped %.3f s, %d stops),\"
      \" /proc %.3f s, load %s\" % (o[\"cpu_seconds\"], o[\"dcpid_s\"], o[\"unwinding_s\"],
      o[\"emulating_s\"], o[\"held_stopped_s\"], o[\"stops\"], m, open(\"/proc/loadavg\").read().split()[0]))
assert o[\"emulating_s\"] > 0 and o[\"unwinding_s\"] > 0 and o[\"stops\"] > 0, o
assert abs(o[\"cpu_seconds\"] - m) <= 0.1 * m + 0.02, (o, m)
"
'

test_done
