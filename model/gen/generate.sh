#!/bin/bash
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
#     capstone and keeps the first encoding of every key (capstone id,
#     operand signature, widest operand size) - the key disasm/ fills in
#     struct insn.
#  2. llvm-mc-14 --disassemble turns each encoding into LLVM's assembly text
#     (encodings LLVM does not decode as exactly one instruction are dropped).
#  3. llvm-mca-14 -mcpu=CPU --json --instruction-info -iterations=120 runs
#     on each instruction alone: Latency, NumMicroOpcodes, RThroughput,
#     mayLoad, mayStore, hasUnmodeledSideEffects, and the resource pressure
#     per iteration (which execution units it occupies).  Instructions the
#     CPU model does not support (AVX-512 on znver3) get no numbers.
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

# 2. LLVM's text for each encoding ("-" if LLVM decodes something else).
llvm_text() {
	local hex=$1 out
	out=$(printf '%s\n' "$hex" | sed 's/\([0-9a-f][0-9a-f]\)/0x\1/g' |
		"$MC" --disassemble -triple=x86_64 2>/dev/null | grep -v '^\s*\.text' || true)
	if [ "$(printf '%s\n' "$out" | grep -c .)" = 1 ]; then
		printf '%s\n' "$out" | sed 's/^\s*//; s/\s*#.*$//; s/\t/ /g'
	else
		echo "-"
	fi
}
while IFS=$'\t' read -r id mnem opsig opsize nops vec hex text; do
	printf '%s\n' "$(llvm_text "$hex")"
done <"$work/variants.tsv" >"$work/llvm.txt"
paste "$work/variants.tsv" "$work/llvm.txt" >"$work/named.tsv"

# 3. One llvm-mca run per instruction: "lat uops rt load store unmodeled usage".
cat >"$work/mca-one.sh" <<'EOF'
#!/bin/bash
# mca-one.sh MCA CPU "LINENO<TAB>ASM" -> "LINENO<TAB>numbers" (or "-")
mca=$1 cpu=$2 n=${3%%$'\t'*} asm=${3#*$'\t'}
if [ "$asm" = "-" ]; then printf '%s\t-\n' "$n"; exit 0; fi
json=$(printf '%s\n' "$asm" | "$mca" -mtriple=x86_64 -mcpu="$cpu" --json --instruction-info \
	-iterations=120 2>/dev/null) || json=
out=$(printf '%s\n' "$json" | jq -r --arg n "$n" '
	(.TargetInfo.Resources | map(explode | map(if . < 32 then . + 48 else . end) | implode)) as $names |
	.CodeRegions[0] as $c |
	$c.InstructionInfoView.InstructionList[0] as $i |
	[$n, $i.Latency, $i.NumMicroOpcodes, $i.RThroughput,
	 (if $i.mayLoad then 1 else 0 end), (if $i.mayStore then 1 else 0 end),
	 (if $i.hasUnmodeledSideEffects then 1 else 0 end),
	 ([$c.ResourcePressureView.ResourcePressureInfo[] | select(.InstructionIndex == 0) |
	   "\($names[.ResourceIndex])=\(.ResourceUsage)"] | join(","))] | @tsv' 2>/dev/null) || out=
if [ -n "$out" ]; then printf '%s\n' "$out"; else printf '%s\t-\n' "$n"; fi
EOF
chmod +x "$work/mca-one.sh"

for t in $TABLES; do
	name=${t%%=*} cpu=${t#*=}
	echo "generate.sh: $name (llvm-mca -mcpu=$cpu)" >&2
	awk -F'\t' '{ print NR "\t" $9 }' "$work/named.tsv" |
		tr '\n' '\0' |
		xargs -0 -P "$JOBS" -n 1 "$work/mca-one.sh" "$MCA" "$cpu" |
		sort -n -k1,1 | cut -f2- >"$work/$name.mca"
	[ "$(wc -l <"$work/$name.mca")" = "$(wc -l <"$work/named.tsv")" ] ||
		{ echo "generate.sh: llvm-mca output for $name is incomplete" >&2; exit 1; }
	paste "$work/named.tsv" "$work/$name.mca" |
		"$work/gen-model" emit "$name" "$cpu" "$(memres "$cpu")" >"$top/model/table-$name.c"
done
"$work/gen-model" classes >"$top/model/x86-class.c"
echo "generate.sh: done" >&2
