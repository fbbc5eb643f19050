#!/usr/bin/env bash
# bench/mca.sh: compares the timing model's cost of the hottest code runs of
# each workload with llvm-mca -mcpu=skylake (reciprocal block throughput, i.e.
# cycles per iteration in a steady-state loop). Writes a Markdown table.
# Usage: bench/mca.sh PMUSIM BLOCK_COST WORKLOAD_DIR > docs/timing-vs-llvm-mca.md
set -u
PMUSIM=$1 BC=$2 WL=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| workload | run (symbol) | insns | executions | pmusim cycles | llvm-mca cycles | pmusim / mca |"
echo "|---|---|---:|---:|---:|---:|---:|"
for w in loops switch recursion indirect strings; do
	prog=$WL/$w
	"$PMUSIM" run --clear-env --truth-json "$tmp/t.json" -- "$prog" >/dev/null 2>&1 </dev/null
	# the 3 runs with the most instructions executed (ending in a branch back, so a loop body)
	python3 - "$tmp/t.json" >"$tmp/hot" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
b = [x for x in d["blocks"] if x["end_kind"] in ("cond", "jmp", "call", "ret", "jmp_ind", "call_ind")]
b.sort(key=lambda x: -x["instructions"] * x["executions"])
for x in b[:3]:
    print(x["start"], x["start_sym"], x["instructions"], x["executions"])
PY
	while read -r start sym n execs; do
		read -r _ _ cyc < <("$BC" "$prog" "$start")
		end=$(printf '0x%x' $(( start + 4096 )))
		# the run's instructions as assembly text (Intel syntax) for llvm-mca
		objdump -d --no-show-raw-insn -M intel --start-address="$start" --stop-address="$end" "$prog" |
			awk -v n="$n" '/^ +[0-9a-f]+:/ { sub(/^ +[0-9a-f]+:\t/, ""); sub(/ *#.*/, ""); sub(/<.*>/, ""); print; if (++k == n) exit }' |
			sed -E 's/(j[a-z]+|call|jmp) +0x[0-9a-f]+ */\1 0/' >"$tmp/b.s"
		mca=$(llvm-mca -mcpu=skylake -iterations=1000 --x86-asm-syntax=intel "$tmp/b.s" 2>/dev/null |
			awk '/Total Cycles:/ {print $3 / 1000}')
		ratio=$(awk -v a="$cyc" -v b="${mca:-0}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
		echo "| $w | $sym | $n | $execs | $cyc | ${mca:-n/a} | $ratio |"
	done <"$tmp/hot"
done
