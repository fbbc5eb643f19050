#!/usr/bin/env bash
# Runs every workload through two pmusim builds and compares what they write,
# byte for byte: stdout, stderr's last line, the truth (fdata and JSON), stat's
# counts, perf.data of LBR, cycles, REP and thread-stack recordings. For changes
# that must not change any output (the block path's speed work). The truth JSON's
# program cycles ("cycles" keys: a top-level line each, a field in functions and
# blocks) are left out of the comparison, so that a build from before they were
# written compares equal; every other byte must be.
# Usage: tests/same_output.sh OLD_PMUSIM NEW_PMUSIM WORKLOAD_DIR [GZIP_INPUT]
# Exit status: 0 all equal, 1 some differ (listed), 2 usage.
set -u
old=${1:?usage: same_output.sh OLD NEW WORKLOAD_DIR}
new=${2:?usage: same_output.sh OLD NEW WORKLOAD_DIR}
wl=${3:?usage: same_output.sh OLD NEW WORKLOAD_DIR}
[ -x "$old" ] && [ -x "$new" ] && [ -d "$wl" ] || { echo "same_output: need two pmusim binaries and a workload folder" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
differ=0 compared=0

# the jobs: a name and the pmusim arguments before "--" (OUT is the output folder)
jobs=(
	"truth|run --truth OUT/t.fdata --truth-json OUT/t.json"
	"stat|stat -o OUT/stat.txt -e instructions,cycles,branches,branch-misses,br_inst_retired.near_taken,rep_iterations"
	"lbr|record -e br_inst_retired.near_taken -c 10007 -b --lbr-depth 32 -o OUT/p.data"
	"cycles|record -e cycles -c 20011 --delta 255 -b -o OUT/p.data"
	"calls|record -e br_inst_retired.near_call -c 101 -j any_call -o OUT/p.data"
	"rep|record -e instructions -c 100003 --rep last -o OUT/p.data"
	"repbuf|record -e instructions -c 100003 --rep buffer -o OUT/p.data"
	"tstack|record -e instructions -c 100003 --tstack -o OUT/p.data"
	"tstackall|record -e instructions -c 100003 --tstack-threads all --tstack-period 100us -o OUT/p.data"
	"quantum|run --quantum 20000c --truth OUT/t.fdata"
)

one() { # BINARY SAVE_AS JOB PROG ARGS...  (both builds write into one folder:
	# the file names they print are the same)
	local bin=$1 save=$2 args=$3 out=$tmp/run
	shift 3
	mkdir -p "$out"
	# shellcheck disable=SC2086
	# env -u _: bash puts the path of the binary it runs in $_, which the guest would see
	timeout 300 env -u _ "$bin" ${args//OUT/$out} -- "$@" >"$out/stdout" 2>"$out/stderr" </dev/null
	echo "$?" >"$out/status"
	# the last line of stderr holds pmusim's summary (timings excluded: none are printed)
	tail -n 3 "$out/stderr" >"$out/stderr.tail"
	rm -f "$out/stderr"
	if [ -f "$out/t.json" ]; then
		sed -E -e '/^  "cycles[a-z_]*": [0-9]+,$/d' -e 's/, "cycles": [0-9]+//g' "$out/t.json" >"$out/t.json.nocycles"
		rm "$out/t.json"
	fi
	mv "$out" "$save"
}

progs=()
for f in "$wl"/*; do
	[ -x "$f" ] && [ -f "$f" ] || continue
	case $f in *.o) continue ;; esac
	progs+=("$f")
done
[ -n "${4:-}" ] && progs+=("/usr/bin/gzip -c -6 $4")

for p in "${progs[@]}"; do
	for j in "${jobs[@]}"; do
		name=${j%%|*} args=${j#*|}
		# shellcheck disable=SC2086
		one "$old" "$tmp/old" "$args" $p
		# shellcheck disable=SC2086
		one "$new" "$tmp/new" "$args" $p
		compared=$((compared + 1))
		if ! diff -r "$tmp/old" "$tmp/new" >/dev/null; then
			echo "DIFFERS: $name $(basename "${p%% *}"): $(diff -rq "$tmp/old" "$tmp/new" | head -3 | tr '\n' ' ')"
			differ=$((differ + 1))
		fi
		rm -rf "$tmp/old" "$tmp/new"
	done
done
echo "same_output: $compared runs compared, $differ differ"
[ "$differ" = 0 ]
