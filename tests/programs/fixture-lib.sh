# SPDX-License-Identifier: GPL-2.0-or-later
# tests/programs/fixture-lib.sh - shell helpers for the disasm integration
# tests (t03xx): real addresses and file offsets of real binaries, computed
# with binutils (independently of dcpi), and fixture databases built with
# dcpi-test-helper.  Source after tests/lib.sh.

PROGRAMS="$top_builddir/tests/programs"
PATH="$PROGRAMS:$PATH"

# sym_vaddr BINARY NAME: the address of a symbol (hex, no 0x), from nm.
sym_vaddr() {
	nm "$1" | awk -v n="$2" '$3 == n && !f { print $1; f = 1 }'
}

# dynsym_vaddr BINARY NAME: the same from the dynamic symbol table.
dynsym_vaddr() {
	nm -D --defined-only "$1" | awk -v n="$2" '($3 == n || $3 ~ "^" n "@@") && !f { print $1; f = 1 }'
}

# vaddr_to_off BINARY HEXADDR: the file offset of an address (hex, no 0x),
# through the PT_LOAD segment that holds it (readelf -lW).
vaddr_to_off() {
	local a=$((0x$2)) off va fs
	while read -r off va fs; do
		if [ "$a" -ge $((va)) ] && [ "$a" -lt $((va + fs)) ]; then
			printf '%x\n' $((a - va + off))
			return 0
		fi
	done <<EOT
$(readelf -lW "$1" | awk '$1 == "LOAD" { print $2, $3, $5 }')
EOT
	return 1
}

# build_id BINARY: the GNU build-id in hex.
build_id() {
	readelf -n "$1" | awk '/Build ID/ && !f { print $3; f = 1 }'
}

# hex_add HEX N: HEX + N, in hex (no 0x).
hex_add() {
	printf '%x\n' $((0x$1 + $2))
}

# fde_starts BINARY: the start address of every FDE of .eh_frame (hex).
fde_starts() {
	readelf -wf "$1" 2>/dev/null | sed -n 's/.* FDE .*pc=\([0-9a-f]*\)\.\..*/\1/p'
}

# insn_after BINARY HEXADDR N: the address of the Nth instruction after HEXADDR.
insn_after() {
	objdump -d --no-show-raw-insn --start-address=0x"$2" "$1" |
		awk -v n="$3" '/^ *[0-9a-f]+:/ { if (i++ == n) { sub(":", "", $1); print $1 } }'
}
