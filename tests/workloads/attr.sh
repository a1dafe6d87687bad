# SPDX-License-Identifier: GPL-2.0-or-later
# tests/workloads/attr.sh - sample attribution by symbol, for the collection
# tests (sourced after tests/lib.sh).  Uses binutils (readelf, nm) to map
# the file offsets of a profile to the functions of a binary, independently
# of dcpi's own readers.
#
#   attr_report DB EPOCH BINARY [PID]
#       prints "SYMBOL COUNT" for each function of BINARY with cycles
#       samples in EPOCH, then "@image N" (samples in BINARY), "@all N"
#       (samples in every image) and "@unknown N" (samples in the unknown
#       image).  With PID, BINARY's samples come from its per-process
#       profile for PID (dcpid --per-process), the rest stay aggregate.
#   attr_count REPORT NAME        the count of NAME in a saved report (0 if none)
#   attr_share REPORT NAME DENOM  NAME's count over DENOM's, as a decimal
#
# What a run should have given depends on the machine (its clock, what a
# sample and a fork cost there): the checks compare with what the test
# measured on it, never with a count from another host.
#   cpu_run CPUFILE CMD...        runs CMD; the CPU seconds it and the children
#                                 it waited for used go to CPUFILE
#   measured OUT NAME             the value of "NAME VALUE" a workload printed
#   rate_ok COUNT SECONDS HZ MIN  COUNT samples are at least MIN x SECONDS x HZ
#                                 (and at least 100: something to compare)
#   share_tol N                   the tolerance of a share of N samples: 4
#                                 standard errors at worst (p = 1/2) plus half a
#                                 point for samples that skid across functions

# Dumps an epoch into attr-dump.txt (kept for the test to look at).
attr_dump() {
	dcpi-test-helper dump "$1" "$2" >attr-dump.txt || return 1
	echo attr-dump.txt
}

attr_report() {
	local db=$1 epoch=$2 bin pid=${4:-0} event=cycles dump key bid
	bin=$(readlink -f "$3")
	dump=$(attr_dump "$db" "$epoch") || return 1
	# An image is its contents: its key is the build ID, and its path the
	# first seen (a copy run elsewhere first, as t0210 does, names it).
	bid=$(readelf -nW "$bin" 2>/dev/null | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p' | head -n 1)
	key=$(awk -v p="$bin" -v b="$bid" '$1 == "image" && ($5 == p || (b != "" && $2 == b)) { print $2; exit }' "$dump")
	{
		readelf -lW "$bin" | awk '$1 == "LOAD" { print "seg", $2, $3, $5 }'
		nm -S --defined-only "$bin" | awk 'NF == 4 && $3 ~ /^[tTwW]$/ { print "sym", $1, $2, $4 }'
		cat "$dump"
	} | awk -v key="$key" -v event="$event" -v pid="$pid" '
	function hex(s,   i, c, v) {
		sub(/^0x/, "", s); v = 0
		for (i = 1; i <= length(s); i++) {
			c = index("0123456789abcdef", tolower(substr(s, i, 1)))
			if (c == 0) return -1
			v = v * 16 + c - 1
		}
		return v
	}
	BEGIN { ns = 0; nf = 0 }
	$1 == "seg" { so[ns] = hex($2); sv[ns] = hex($3); sz[ns] = hex($4); ns++; next }
	$1 == "sym" {
		a = hex($2); len = hex($3)
		for (i = 0; i < ns; i++)
			if (a >= sv[i] && a < sv[i] + sz[i]) {
				lo[nf] = a - sv[i] + so[i]; hi[nf] = lo[nf] + len; name[nf] = $4; nf++
				break
			}
		next
	}
	$1 == "sample" && $3 == event && $4 == 0 {
		all += $6
		if ($2 == "unknown") unknown += $6
	}
	$1 == "sample" && $3 == event && $4 == pid {
		if ($2 != key) next
		img += $6; off = hex($5)
		for (i = 0; i < nf; i++)
			if (off >= lo[i] && off < hi[i]) { cnt[name[i]] += $6; break }
	}
	END {
		for (n in cnt) print n, cnt[n]
		print "@image", img + 0
		print "@all", all + 0
		print "@unknown", unknown + 0
	}'
}

attr_count() {
	awk -v n="$2" '$1 == n { print $2; f = 1 } END { if (!f) print 0 }' "$1"
}

attr_share() {
	awk -v n="$2" -v d="$3" '$1 == n { a = $2 } $1 == d { b = $2 }
		END { printf "%.4f\n", b ? a / b : 0 }' "$1"
}

cpu_run() {
	local f=$1 TIMEFORMAT='%3U %3S' rc
	shift
	{ time "$@" 2>&3 3>&-; } 3>&2 2>"$f.raw"
	rc=$?
	awk '{ print $1 + $2 }' "$f.raw" >"$f"
	return $rc
}

measured() {
	awk -v n="$2" '$1 == n { print $2; f = 1 } END { exit !f }' "$1"
}

rate_ok() {
	echo "$1 samples in $2 s of CPU at $3 Hz (at least $4 x $(awk -v s="$2" -v h="$3" 'BEGIN { printf "%.0f", s * h }') wanted)"
	awk -v n="$1" -v s="$2" -v h="$3" -v m="$4" 'BEGIN { exit !(n >= 100 && n >= m * s * h) }'
}

share_tol() {
	awk -v n="$1" 'BEGIN { printf "%.4f\n", (n > 0 ? 2 / sqrt(n) + 0.005 : 0) }'
}

# True if |a - b| <= tol (decimals).
near() {
	awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'
}

# Prints the value of a counter from an epoch's meta.
meta_counter() { # DB EPOCH-DIR NAME
	awk -v n="$3" '$1 == "counter" && $2 == n { print $3 }' "$1/$2/meta"
}

# dcpid_start DB SOCKET ARGS...: dcpid in the foreground, as a background
# job of the test body (its pid in dcpid.pid, its messages in dcpid.err);
# waits (60 s at most) until it answers on SOCKET, or has died.
dcpid_start() {
	local db=$1 sock=$2
	shift 2
	dcpid -f -d "$db" --socket "$sock" "$@" >/dev/null 2>>dcpid.err &
	echo $! >dcpid.pid
	test_register_pid $! dcpid
	wait_for 60 "dcpid to answer on $sock" \
		"dcpictl --socket '$sock' status >/dev/null 2>&1 || ! kill -0 $(cat dcpid.pid) 2>/dev/null" &&
		dcpictl --socket "$sock" status >/dev/null 2>&1 || { cat dcpid.err; return 1; }
}

# Stops any dcpid a test left running (pid files and database locks in the
# test directory), so that a failed test does not leave a daemon behind.
stop_daemons() {
	local f pid
	for f in "$TEST_DIR"/dcpid.pid "$TEST_DIR"/*/lock; do
		[ -f "$f" ] || continue
		pid=$(head -n 1 "$f")
		case "$pid" in ''|*[!0-9]*) continue ;; esac
		if [ "$(cat /proc/$pid/comm 2>/dev/null)" = dcpid ]; then
			kill -9 "$pid" 2>/dev/null
		fi
	done
	return 0
}
