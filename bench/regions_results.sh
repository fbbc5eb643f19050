#!/usr/bin/env bash
# bench/regions_results.sh: hot super-regions and the rewriter, workload by workload
# (make regions-results): the selection from op samples against the ideal one
# (validate --regions), the samples' estimate of the share of execution the
# replacement code runs against the exact replay, the rewritten runs' cycles in
# both layouts (--dbr-install), the live rewriter (run --dbr), and the edge
# profiles of rewritten runs against the truth. Every run is pmusim's, in this
# script's environment (which shifts samples and so selections: a test's figures
# may differ). Writes OUT/regions.md.
# Usage: bench/regions_results.sh PMUSIM WORKLOAD_DIR OUT_DIR
set -u -o pipefail
PMUSIM=${1:?usage: bench/regions_results.sh PMUSIM WORKLOAD_DIR OUT_DIR}
WL=${2:?usage: bench/regions_results.sh PMUSIM WORKLOAD_DIR OUT_DIR}
OUT=${3:?usage: bench/regions_results.sh PMUSIM WORKLOAD_DIR OUT_DIR}
[ -x "$PMUSIM" ] || { echo "regions_results: $PMUSIM is missing (make)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
P=$PMUSIM
# name:argument:extra selection option
WORKLOADS="loops::--cold-fraction=0.005 cpi_chase:: cpi_interp:4000: switch:100000: cpi_matrix:30: cpi_sort:10:"

num() { # num JSON KEY
	sed -n "s/.*\"$2\": *\([0-9.e+-]*\).*/\1/p" "$1" | head -1
}
pct() { printf '%.2f %%' "$(echo "$1 * 100" | bc -l)"; }
cycles() { # cycles ARGS...: stat's cycles of the program run with ARGS before it
	"$P" stat -q -x, -e cycles,branch-misses -o "$tmp/s.csv" "$@" >/dev/null 2>&1
	cyc=$(grep ',cycles,' "$tmp/s.csv" | cut -d, -f1)
	mis=$(grep ',branch-misses,' "$tmp/s.csv" | cut -d, -f1)
}
run_spec() { # sets w, arg, opt from name:arg:opt
	w=${1%%:*}
	local rest=${1#*:}
	arg=${rest%%:*}
	opt=${rest#*:}
	opt=${opt/=/ }
}
{
	echo "# Hot super-regions and the rewriter, per workload"
	echo
	echo "Made by \`make regions-results\` (bench/regions_results.sh); docs/regions.md says what"
	echo "each stage does. Regions come from op samples (\`record -e ibs_op/cnt_ctl=1/ -c 256"
	echo "--pmu-seed 1\`, \`report --regions\` with the defaults; loops with \`--cold-fraction"
	echo "0.005\`, off the 1 % coincidence of its outer loop). This script's environment is not"
	echo "the tests' (the environment shifts glibc's start-up and so samples and selections)."
	echo
	echo "## Selection and the exact replay"
	echo
	echo "Jaccard: weighted Jaccard index of the sampled and the ideal selection (\`validate"
	echo "--regions\`). Estimated / exact: the share of the program's instructions the"
	echo "replacement code would run, as the samples estimate it (\`replacement_share\`) and as"
	echo "the exact replay counts it (\`run --dbr-regions\`)."
	echo
	echo "| workload | op samples | Jaccard | estimated | exact |"
	echo "|---|---:|---:|---:|---:|"
	for spec in $WORKLOADS; do
		run_spec "$spec"
		# shellcheck disable=SC2086
		"$P" record -q -e ibs_op/cnt_ctl=1/ -c 256 --pmu-seed 1 --truth-json "$tmp/t.json" -o "$tmp/o.data" \
			-- "$WL/$w" $arg >/dev/null 2>&1
		# shellcheck disable=SC2086
		"$P" validate --regions -i "$tmp/o.data" --truth-json "$tmp/t.json" $opt >"$tmp/v.txt" 2>&1
		# shellcheck disable=SC2086
		"$P" report --regions -i "$tmp/o.data" --format json -o "$tmp/R-$w.json" $opt >/dev/null 2>&1
		# shellcheck disable=SC2086
		"$P" run -q --dbr-regions "$tmp/R-$w.json" --dbr-report "$tmp/rep.json" -- "$WL/$w" $arg \
			>"$tmp/out" 2>&1
		samples=$(sed -n 's/^regions from \([0-9]*\) op samples.*/\1/p' "$tmp/v.txt")
		jac=$(sed -n 's/^weighted Jaccard index: \([0-9.]*\).*/\1/p' "$tmp/v.txt")
		printf '| %s | %s | %s | %s | %s |\n' "$w $arg" "$samples" "$jac" \
			"$(pct "$(num "$tmp/R-$w.json" replacement_share)")" "$(pct "$(num "$tmp/rep.json" inside_share)")"
	done
	echo
	echo "## Rewritten runs: cycles by layout (\`stat --dbr-install R.json\`)"
	echo
	echo "| workload | unrewritten | identity | hot | mispredictions unrewritten / identity / hot |"
	echo "|---|---:|---:|---:|---:|"
	for spec in $WORKLOADS; do
		run_spec "$spec"
		cycles -- "$WL/$w" $arg
		c0=$cyc m0=$mis
		cycles --dbr-install "$tmp/R-$w.json" --dbr-layout identity -- "$WL/$w" $arg
		ci=$cyc mi=$mis
		cycles --dbr-install "$tmp/R-$w.json" --dbr-layout hot -- "$WL/$w" $arg
		printf '| %s | %s | %s (%+.1f %%) | %s (%+.1f %%) | %s / %s / %s |\n' "$w $arg" "$c0" \
			"$ci" "$(echo "($ci - $c0) * 100 / $c0" | bc -l)" "$cyc" "$(echo "($cyc - $c0) * 100 / $c0" | bc -l)" \
			"$m0" "$mi" "$mis"
	done
	echo
	echo "## The live rewriter (\`run --dbr -v\`, defaults: windows of 1,000,000 instructions, op samples every 256)"
	echo
	echo "| workload | windows | regions installed | unpatched | instructions in replacement code | of them added | cycles (\`stat --dbr\`) |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	for spec in $WORKLOADS dbr_phases::; do
		run_spec "$spec"
		"$P" run -v --dbr -- "$WL/$w" $arg >/dev/null 2>"$tmp/live.err"
		l=$(grep 'live rewriter:' "$tmp/live.err")
		r=$(grep 'rewritten:' "$tmp/live.err")
		cycles --dbr -- "$WL/$w" $arg
		printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$w $arg" \
			"$(echo "$l" | sed -n 's/.*: \([0-9]*\) windows.*/\1/p')" \
			"$(echo "$l" | sed -n 's/.* \([0-9]*\) regions installed.*/\1/p')" \
			"$(echo "$l" | sed -n 's/.* \([0-9]*\) unpatched.*/\1/p')" \
			"$(echo "$r" | sed -n 's/.*rewritten: \([0-9]*\) instructions.*/\1/p')" \
			"$(echo "$r" | sed -n 's/.*code, \([0-9]*\) of them.*/\1/p')" "$cyc"
	done
	echo
	echo "## Profiles of rewritten runs against the truth (\`validate\`, overlap of all edges)"
	echo
	echo "Branch stacks: \`record -b -e br_inst_retired.near_taken -c 2003\`, CBT, the samples"
	echo "CBT drops beside; op samples: \`-e ibs_op/cnt_ctl=1/ -c 256\`. Rewritten: \`--dbr\`."
	echo
	echo "| workload | LBR unrewritten | LBR identity | LBR hot | ibs unrewritten | ibs hot |"
	echo "|---|---:|---:|---:|---:|---:|"
	lbr() { # lbr ARGS...: overlap (dropped)
		"$P" record -q -b -e br_inst_retired.near_taken -c 2003 --truth "$tmp/b.fdata" -o "$tmp/b.data" "$@" \
			>/dev/null 2>&1
		"$P" validate -i "$tmp/b.data" --truth "$tmp/b.fdata" --format json >"$tmp/v.json" 2>/dev/null
		echo "$(pct "$(num "$tmp/v.json" overlap_edges)") ($(num "$tmp/v.json" samples_dropped) dropped)"
	}
	ibs() {
		"$P" record -q -e ibs_op/cnt_ctl=1/ -c 256 --truth "$tmp/i.fdata" -o "$tmp/i.data" "$@" >/dev/null 2>&1
		"$P" validate --method ibs -i "$tmp/i.data" --truth "$tmp/i.fdata" --format json >"$tmp/v.json" 2>/dev/null
		pct "$(num "$tmp/v.json" overlap_edges)"
	}
	for spec in $WORKLOADS; do
		run_spec "$spec"
		printf '| %s | %s | %s | %s | %s | %s |\n' "$w $arg" "$(lbr -- "$WL/$w" $arg)" \
			"$(lbr --dbr --dbr-layout identity -- "$WL/$w" $arg)" "$(lbr --dbr -- "$WL/$w" $arg)" \
			"$(ibs -- "$WL/$w" $arg)" "$(ibs --dbr -- "$WL/$w" $arg)"
	done
} >"$OUT/regions.md"
echo "regions_results: wrote $OUT/regions.md"
