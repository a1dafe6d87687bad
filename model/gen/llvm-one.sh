#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# model/gen/llvm-one.sh MC "LINENO<TAB>HEX|HEX..." -> "LINENO<TAB>TEXT|TEXT..."
# (a helper of generate.sh): LLVM's assembly text of each encoding of one
# key; encodings LLVM does not decode as exactly one instruction are
# dropped; "-" if none is left.
mc=$1 n=${2%%$'\t'*} hexes=${2#*$'\t'} out=
IFS='|' read -ra hex <<<"$hexes"
for h in "${hex[@]}"; do
	t=$(printf '%s\n' "$h" | sed 's/\([0-9a-f][0-9a-f]\)/0x\1/g' |
		"$mc" --disassemble -triple=x86_64 2>/dev/null | grep -v '^\s*\.text' || true)
	[ "$(printf '%s\n' "$t" | grep -c .)" = 1 ] || continue
	t=$(printf '%s\n' "$t" | sed 's/^\s*//; s/\s*#.*$//; s/\t/ /g')
	out=${out:+$out|}$t
done
printf '%s\t%s\n' "$n" "${out:--}"
