#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# model/gen/mca-one.sh MCA CPU "LINENO<TAB>ASM|ASM..." (a helper of generate.sh)
# -> "LINENO<TAB>ASM<TAB>lat uops rthroughput load store unmodeled usage"
# for the first of a key's assembly texts llvm-mca accepts alone, or
# "LINENO<TAB>-" if it accepts none.  usage: RESOURCE=cycles per iteration,
# comma-separated, sub-units named RESOURCE.N.  llvm-mca-19 runs forever on
# instructions that take several partially overlapping groups of units
# (sapphirerapids: dpps, xsetbv, rdmsr...; a known llvm-mca bug): a run gets
# 5 s (the others take 0.1 s), then counts as not accepted, said on stderr.
mca=$1 cpu=$2 n=${3%%$'\t'*} asms=${3#*$'\t'}
IFS='|' read -ra cand <<<"$asms"
tried=
for asm in "${cand[@]}"; do
	[ "$asm" = "-" ] && continue
	case "|$tried|" in *"|$asm|"*) continue ;; esac  # encodings LLVM spells alike
	tried=$tried\|$asm
	rc=0
	json=$(printf '%s\n' "$asm" | timeout 5 "$mca" -mtriple=x86_64 -mcpu="$cpu" --json \
		--instruction-info -iterations=120 2>/dev/null) || rc=$?
	[ $rc = 124 ] && echo "mca-one.sh: $cpu: '$asm' did not finish in 5 s" >&2
	[ $rc = 0 ] || continue
	out=$(printf '%s\n' "$json" | jq -r --arg n "$n" --arg asm "$asm" '
		(.TargetInfo.Resources | map(explode | map(if . < 32 then . + 48 else . end) | implode)) as $names |
		.CodeRegions[0] as $c |
		$c.InstructionInfoView.InstructionList[0] as $i |
		[$n, $asm, $i.Latency, $i.NumMicroOpcodes, $i.RThroughput,
		 (if $i.mayLoad then 1 else 0 end), (if $i.mayStore then 1 else 0 end),
		 (if $i.hasUnmodeledSideEffects then 1 else 0 end),
		 ([$c.ResourcePressureView.ResourcePressureInfo[] | select(.InstructionIndex == 0) |
		   "\($names[.ResourceIndex])=\(.ResourceUsage)"] | join(","))] | @tsv' 2>/dev/null) ||
		continue
	[ -n "$out" ] && { printf '%s\n' "$out"; exit 0; }
done
printf '%s\t-\n' "$n"
