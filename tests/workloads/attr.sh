# tests/workloads/attr.sh - sample attribution by symbol, for the collection
# tests (sourced after tests/lib.sh).  Uses binutils (readelf, nm) to map
# the file offsets of a profile to the functions of a binary, independently
# of dcpi's own readers.
#
#   attr_report DB EPOCH BINARY [EVENT]
#       prints "SYMBOL COUNT" for each function of BINARY with samples in
#       EPOCH, then "@image N" (samples in BINARY), "@all N" (samples in
#       every image) and "@unknown N" (samples in the unknown image)
#   attr_count REPORT NAME        the count of NAME in a saved report (0 if none)
#   attr_share REPORT NAME DENOM  NAME's count over DENOM's, as a decimal

# Dumps an epoch once per (db, epoch) into a file and echoes its name.
attr_dump() {
	local f
	f="attr-dump.$(printf '%s' "$1/$2" | cksum | cut -d' ' -f1)"
	[ -s "$f" ] || dcpi-test-helper dump "$1" "$2" >"$f" || return 1
	echo "$f"
}

attr_report() {
	local db=$1 epoch=$2 bin event=${4:-cycles} dump key
	bin=$(readlink -f "$3")
	dump=$(attr_dump "$db" "$epoch") || return 1
	key=$(awk -v p="$bin" '$1 == "image" && $5 == p { print $2; exit }' "$dump")
	{
		readelf -lW "$bin" | awk '$1 == "LOAD" { print "seg", $2, $3, $5 }'
		nm -S --defined-only "$bin" | awk 'NF == 4 && $3 ~ /^[tTwW]$/ { print "sym", $1, $2, $4 }'
		cat "$dump"
	} | awk -v key="$key" -v event="$event" '
	function hex(s,   i, c, v) {
		sub(/^0x/, "", s); v = 0
		for (i = 1; i <= length(s); i++) {
			c = index("0123456789abcdef", tolower(substr(s, i, 1)))
			if (c == 0) return -1
			v = v * 16 + c - 1
		}
		return v
	}
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
