#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# model/gen/generate.sh - regenerates dcpi's processor model tables offline:
#   model/table-NAME.c   per-instruction numbers from llvm-mca
#   model/x86-class.c    functional-unit class of every capstone x86 id
#
# Needs: a C compiler, libcapstone-dev (4.0.2), the LLVM versions the tables
# name (Debian 12: llvm-14 and llvm-19, for llvm-mc-N and llvm-mca-N;
# Apache-2.0 WITH LLVM-exception), jq.  Takes a few minutes per LLVM
# version and table.
#
#   model/gen/generate.sh [NAME=CPU[@LLVM] ...]
#
# Without arguments it makes the tables dcpi ships (see TABLES below); LLVM
# is the major version whose llvm-mc and llvm-mca make the table (14 unless
# said: the older tables; LLVM 14 has no Golden Cove or Zen 4 model, LLVM 19
# has both).  How it works:
#  1. gen-model variants: enumerates x86-64 encodings, decodes them with
#     capstone and keeps up to 4 encodings of every key (capstone id,
#     operand signature, widest operand size) - the key disasm/ fills in
#     struct insn - the preferred one first.
#  2. llvm-one.sh: llvm-mc-N --disassemble turns each encoding into LLVM's
#     assembly text (encodings LLVM does not decode as exactly one
#     instruction are dropped).
#  3. mca-one.sh: llvm-mca-N -mcpu=CPU --json --instruction-info
#     -iterations=120 runs on each instruction alone, the first of a key's
#     encodings it accepts: Latency, NumMicroOpcodes, RThroughput, mayLoad,
#     mayStore, hasUnmodeledSideEffects, and the resource pressure per
#     iteration (which execution units it occupies).  Instructions the CPU
#     model does not support (AVX-512 on znver3) get no numbers.
#  4. gen-model emit writes the C table; gen-model classes the class table.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
JOBS=${JOBS:-$(nproc)}

# NAME=CPU@LLVM: the llvm-mca CPU each shipped table comes from, and the
# LLVM that has its model.  goldencove: Sapphire Rapids' model (Golden Cove
# with AVX-512; Alder Lake's P-core model has the same numbers without it).
TABLES=${*:-"znver3=znver3@14 skylake=skylake@14 goldencove=sapphirerapids@19 znver4=znver4@19"}

# Resource name prefixes that are memory pipes, per CPU (modelled by the
# scheduler with the model's load/store port counts instead).
memres() {
	case $1 in
	znver3) echo "Zn3AGU,Zn3LSU,Zn3Load,Zn3Store,Zn3FPSt,Zn3FPP45" ;;
	znver*) echo "Zn4AGU,Zn4LSU,Zn4Load,Zn4Store,Zn4FPSt,Zn4FP45" ;;
	skylake*) echo "SKLPort2,SKLPort3,SKLPort4,SKLPort7,SKXPort2,SKXPort3,SKXPort4,SKXPort7" ;;
	# Golden Cove: loads on ports 2, 3, 11; store address 7, 8; store data 4, 9
	sapphirerapids) echo "SPRPort02,SPRPort03,SPRPort04,SPRPort07,SPRPort08,SPRPort09,SPRPort11" ;;
	alderlake) echo "ADLPPort02,ADLPPort03,ADLPPort04,ADLPPort07,ADLPPort08,ADLPPort09,ADLPPort11" ;;
	haswell) echo "HWPort2,HWPort3,HWPort4,HWPort7" ;;
	*) echo "none" ;;
	esac
}

versions=$(for t in $TABLES; do v=${t#*=}; [ "$v" = "${v#*@}" ] && echo 14 || echo "${v#*@}"; done |
	sort -u)
for tool in jq cc $(for v in $versions; do echo "llvm-mc-$v llvm-mca-$v"; done); do
	command -v "$tool" >/dev/null || { echo "generate.sh: '$tool' not found" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/dcpi-model-gen.XXXXXX")
[ -n "${KEEP:-}" ] && echo "generate.sh: keeping $work" >&2 || trap 'rm -rf "$work"' EXIT

cc -O2 -Wall -I"$top" -o "$work/gen-model" "$top/model/gen/gen-model.c" \
	$(pkg-config --cflags --libs capstone)
"$work/gen-model" variants >"$work/variants.tsv"
echo "generate.sh: $(wc -l <"$work/variants.tsv") keys" >&2

# 2. LLVM's text for each encoding of each key, per LLVM version (a newer
# llvm-mc decodes more, and spells some instructions otherwise).
gen=$top/model/gen
for v in $versions; do
	echo "generate.sh: llvm-mc-$v" >&2
	awk -F'\t' '{ print NR "\t" $7 }' "$work/variants.tsv" | tr '\n' '\0' |
		xargs -0 -P "$JOBS" -n 1 "$gen/llvm-one.sh" "llvm-mc-$v" |
		sort -n -k1,1 | cut -f2- >"$work/llvm-$v.txt"
	[ "$(wc -l <"$work/llvm-$v.txt")" = "$(wc -l <"$work/variants.tsv")" ] ||
		{ echo "generate.sh: llvm-mc-$v output is incomplete" >&2; exit 1; }
	paste "$work/variants.tsv" "$work/llvm-$v.txt" >"$work/named-$v.tsv"
done

# 3. llvm-mca on each key, per table.
for t in $TABLES; do
	name=${t%%=*} cpu=${t#*=} v=14
	case $cpu in *@*) v=${cpu#*@} cpu=${cpu%@*} ;; esac
	version=$("llvm-mca-$v" --version | sed -n 's/.*LLVM version \([0-9.]*\).*/\1/p' | head -n 1)
	echo "generate.sh: $name (llvm-mca-$v $version -mcpu=$cpu)" >&2
	awk -F'\t' '{ print NR "\t" $9 }' "$work/named-$v.tsv" |
		tr '\n' '\0' |
		xargs -0 -P "$JOBS" -n 1 "$gen/mca-one.sh" "llvm-mca-$v" "$cpu" |
		sort -n -k1,1 | cut -f2- >"$work/$name.mca"
	[ "$(wc -l <"$work/$name.mca")" = "$(wc -l <"$work/named-$v.tsv")" ] ||
		{ echo "generate.sh: llvm-mca output for $name is incomplete" >&2; exit 1; }
	paste "$work/named-$v.tsv" "$work/$name.mca" |
		"$work/gen-model" emit "$name" "$cpu" "$(memres "$cpu")" "$version" \
		>"$top/model/table-$name.c"
done
"$work/gen-model" classes >"$top/model/x86-class.c"
echo "generate.sh: done" >&2
