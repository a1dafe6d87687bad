#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# model/gen/generate.sh - regenerates dcpi's processor model tables offline:
#   model/table-NAME.c   per-instruction numbers from llvm-mca-14
#   model/x86-class.c    functional-unit class of every capstone x86 id
#
# Needs: a C compiler, libcapstone-dev (4.0.2), llvm-14 (llvm-mc-14 and
# llvm-mca-14, Apache-2.0 WITH LLVM-exception), jq.  Takes a few minutes.
#
#   model/gen/generate.sh [NAME=CPU ...]
#
# Without arguments it makes the tables dcpi ships (see TABLES below).
# How it works:
#  1. gen-model variants: enumerates x86-64 encodings, decodes them with
#     capstone and keeps up to 4 encodings of every key (capstone id,
#     operand signature, widest operand size) - the key disasm/ fills in
#     struct insn - the preferred one first.
#  2. llvm-one.sh: llvm-mc-14 --disassemble turns each encoding into LLVM's
#     assembly text (encodings LLVM does not decode as exactly one
#     instruction are dropped).
#  3. mca-one.sh: llvm-mca-14 -mcpu=CPU --json --instruction-info
#     -iterations=120 runs on each instruction alone, the first of a key's
#     encodings it accepts: Latency, NumMicroOpcodes, RThroughput, mayLoad,
#     mayStore, hasUnmodeledSideEffects, and the resource pressure per
#     iteration (which execution units it occupies).  Instructions the CPU
#     model does not support (AVX-512 on znver3) get no numbers.
#  4. gen-model emit writes the C table; gen-model classes the class table.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
MC=${LLVM_MC:-llvm-mc-14}
MCA=${LLVM_MCA:-llvm-mca-14}
JOBS=${JOBS:-$(nproc)}

# NAME=CPU: the llvm-mca CPU each shipped table comes from.
TABLES=${*:-"znver3=znver3 skylake=skylake"}

# Resource name prefixes that are memory pipes, per CPU (modelled by the
# scheduler with the model's load/store port counts instead).
memres() {
	case $1 in
	znver*) echo "Zn3AGU,Zn3LSU,Zn3Load,Zn3Store,Zn3FPSt,Zn3FPP45" ;;
	skylake*) echo "SKLPort2,SKLPort3,SKLPort4,SKLPort7,SKXPort2,SKXPort3,SKXPort4,SKXPort7" ;;
	haswell) echo "HWPort2,HWPort3,HWPort4,HWPort7" ;;
	*) echo "none" ;;
	esac
}

for tool in "$MC" "$MCA" jq cc; do
	command -v "$tool" >/dev/null || { echo "generate.sh: '$tool' not found" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/dcpi-model-gen.XXXXXX")
[ -n "${KEEP:-}" ] && echo "generate.sh: keeping $work" >&2 || trap 'rm -rf "$work"' EXIT

cc -O2 -Wall -I"$top" -o "$work/gen-model" "$top/model/gen/gen-model.c" \
	$(pkg-config --cflags --libs capstone)
"$work/gen-model" variants >"$work/variants.tsv"
echo "generate.sh: $(wc -l <"$work/variants.tsv") keys" >&2

# 2. LLVM's text for each encoding of each key.
gen=$top/model/gen
awk -F'\t' '{ print NR "\t" $7 }' "$work/variants.tsv" | tr '\n' '\0' |
	xargs -0 -P "$JOBS" -n 1 "$gen/llvm-one.sh" "$MC" |
	sort -n -k1,1 | cut -f2- >"$work/llvm.txt"
[ "$(wc -l <"$work/llvm.txt")" = "$(wc -l <"$work/variants.tsv")" ] ||
	{ echo "generate.sh: llvm-mc output is incomplete" >&2; exit 1; }
paste "$work/variants.tsv" "$work/llvm.txt" >"$work/named.tsv"

# 3. llvm-mca on each key, per table.
for t in $TABLES; do
	name=${t%%=*} cpu=${t#*=}
	echo "generate.sh: $name (llvm-mca -mcpu=$cpu)" >&2
	awk -F'\t' '{ print NR "\t" $9 }' "$work/named.tsv" |
		tr '\n' '\0' |
		xargs -0 -P "$JOBS" -n 1 "$gen/mca-one.sh" "$MCA" "$cpu" |
		sort -n -k1,1 | cut -f2- >"$work/$name.mca"
	[ "$(wc -l <"$work/$name.mca")" = "$(wc -l <"$work/named.tsv")" ] ||
		{ echo "generate.sh: llvm-mca output for $name is incomplete" >&2; exit 1; }
	paste "$work/named.tsv" "$work/$name.mca" |
		"$work/gen-model" emit "$name" "$cpu" "$(memres "$cpu")" >"$top/model/table-$name.c"
done
"$work/gen-model" classes >"$top/model/x86-class.c"
echo "generate.sh: done" >&2
