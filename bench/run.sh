#!/usr/bin/env bash
# make bench: per workload, median wall time of native, `pmusim run`,
# `pmusim run --truth`, `pmusim stat`, `pmusim record -b` (taken-branch period
# 10,007, LBR depth 32) and callgrind --collect-jumps; MIPS; ratios.
# Usage: bench/run.sh PMUSIM WORKLOAD_DIR   (BENCH_RUNS=N, default 5)
set -u
PMUSIM=${1:?usage: bench/run.sh PMUSIM WORKLOAD_DIR}
WL=${2:?usage: bench/run.sh PMUSIM WORKLOAD_DIR}
RUNS=${BENCH_RUNS:-5}
[ -x "$PMUSIM" ] || { echo "bench: $PMUSIM is missing (make)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
bdir=build/bench
. "$here/common.sh"
bench_programs "$here" || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# median wall seconds of RUNS runs of "$@"
median() {
	local i t0 t1
	for ((i = 0; i < RUNS; i++)); do
		t0=$(date +%s.%N)
		"$@" >/dev/null 2>&1 </dev/null
		t1=$(date +%s.%N)
		echo "$t1 - $t0" | bc -l
	done | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'
}

printf '%-13s %9s %9s %9s %9s %9s %9s %12s %8s %10s %9s %10s %9s %10s\n' workload native_s run_s truth_s stat_s record_s cgrind_s \
	instructions MIPS run/native truth/run truth/cgrind stat/run record/run
rows=$tmp/rows
for w in hot_compute hot_store loops switch recursion indirect strings musl_hello; do
	prog=$bdir/$w
	[ -x "$prog" ] || prog=$WL/$w
	[ -x "$prog" ] || { echo "bench: $w not built, skipped" >&2; continue; }
	n=$(median "$prog")
	r=$(median "$PMUSIM" run -- "$prog")
	t=$(median "$PMUSIM" run --truth "$tmp/t.fdata" -- "$prog")
	st=$(median "$PMUSIM" stat -o "$tmp/stat.txt" -- "$prog")
	rc=$(median "$PMUSIM" record -e br_inst_retired.near_taken -c 10007 -b --lbr-depth 32 -o "$tmp/p.data" -- "$prog")
	c=$(median valgrind --tool=callgrind --collect-jumps=yes --callgrind-out-file=/dev/null "$prog")
	"$PMUSIM" run --truth-json "$tmp/t.json" -- "$prog" >/dev/null 2>&1 </dev/null
	insns=$(awk -F'[:,]' '/"instructions"/ {gsub(/ /, "", $2); print $2; exit}' "$tmp/t.json")
	awk -v w="$w" -v n="$n" -v r="$r" -v t="$t" -v st="$st" -v rc="$rc" -v c="$c" -v i="$insns" 'BEGIN {
		printf "%-13s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %12d %8.0f %10.1f %9.3f %10.3f %9.3f %10.3f\n",
			w, n, r, t, st, rc, c, i, i / r / 1e6, r / n, t / r, t / c, st / r, rc / r }' | tee -a "$rows"
done
# median and worst of column $1 over the workloads
summary() {
	local m mx
	m=$(awk -v c="$1" '{print $c}' "$rows" | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}')
	mx=$(awk -v c="$1" '{print $c}' "$rows" | sort -g | tail -1)
	echo "$2: median $m, worst $mx over workloads$3"
}
summary 11 truth/run " (target <= 1.25)"
summary 14 record/run " (target <= 1.25)"
summary 13 stat/run ""
awk '{if ($12 < 1) fast++} END {printf "pmusim --truth faster than callgrind on %d of %d workloads\n", fast, NR}' "$rows"
echo "(medians of $RUNS runs; every guest store costs ~70 ns in Unicorn 2.0.1, see README)"

# Real programs (#5): Debian's gzip compressing 3 MB of text (dynamic, ld.so and
# libc.so.6) and the pthreads workload (8 threads on the simulated CPU).
echo
awk 'BEGIN { x = 12345; for (i = 0; i < 60000; i++) { x = (x * 1103515245 + 12345) % 2147483648;
	printf "line %d value %d and some words to compress %x\n", i, x, x } }' > "$tmp/gzip.in"
printf '%-13s %9s %9s %9s %9s %10s %10s %10s\n' program native_s run_s record_s cgrind_s run/native \
	record/run run/cgrind
for w in gzip threads; do
	if [ "$w" = gzip ]; then set -- /usr/bin/gzip -c -6 "$tmp/gzip.in"; else set -- "$WL/threads"; fi
	[ -x "$1" ] || { echo "bench: $1 missing, skipped" >&2; continue; }
	n=$(median "$@")
	r=$(median "$PMUSIM" run -- "$@")
	rc=$(median "$PMUSIM" record -e br_inst_retired.near_taken -c 10007 -b --lbr-depth 32 -o "$tmp/p.data" -- "$@")
	c=$(median valgrind --tool=callgrind --collect-jumps=yes --callgrind-out-file=/dev/null "$@")
	awk -v w="$w" -v n="$n" -v r="$r" -v rc="$rc" -v c="$c" 'BEGIN {
		printf "%-13s %9.3f %9.3f %9.3f %9.3f %10.1f %10.3f %10.3f\n", w, n, r, rc, c, r / n, rc / r, r / c }'
done

# The REP unit (#6): each --rep mode over a plain recording, on workloads/rep
# (every REP traced) and on gzip (libc's REP memcpy/memset; patch mode patches
# the program's own code only).
echo
printf '%-13s %10s' program plain_s
for m in first last buffer membuffer counter patch; do printf ' %10s' "$m"; done
echo
for w in rep gzip; do
	if [ "$w" = gzip ]; then set -- /usr/bin/gzip -c -6 "$tmp/gzip.in"; else set -- "$WL/rep"; fi
	[ -x "$1" ] || continue
	base=$(median "$PMUSIM" record -e instructions -c 1000003 -o "$tmp/r.data" -- "$@")
	printf '%-13s %10.3f' "$w" "$base"
	for m in first last buffer membuffer counter patch; do
		t=$(median "$PMUSIM" record -e instructions -c 1000003 --rep "$m" -o "$tmp/r.data" -- "$@")
		awk -v t="$t" -v b="$base" 'BEGIN { printf " %9.3fx", t / b }'
	done
	echo
done

# The thread-stack unit (#7): tracking on vs off. Over a plain recording: the
# unit keeping every thread's stack (stack and history modes; the default
# 10 ms tracer then wakes rarely), a tracer waking every 100 us of simulated
# time over all threads, and the DWARF baseline (16 KB stack dumps instead).
echo
printf '%-13s %10s %10s %10s %10s %10s %10s\n' program plain_s stack history "all/100us" "dwarf16k" snapshots
for w in callstacks recursion threads gzip; do
	if [ "$w" = gzip ]; then set -- /usr/bin/gzip -c -6 "$tmp/gzip.in"; else set -- "$WL/$w"; fi
	[ -x "$1" ] || continue
	base=$(median "$PMUSIM" record -e instructions -c 1000003 -o "$tmp/s.data" -- "$@")
	printf '%-13s %10.3f' "$w" "$base"
	for o in "--tstack" "--tstack-mode history" "--tstack-threads all --tstack-period 100us" \
		"--tstack-threads all --tstack-period 100us --tstack-dwarf 16384"; do
		# shellcheck disable=SC2086
		t=$(median "$PMUSIM" record -e instructions -c 1000003 $o -o "$tmp/s.data" -- "$@")
		awk -v t="$t" -v b="$base" 'BEGIN { printf " %9.3fx", t / b }'
	done
	"$PMUSIM" record -e instructions -c 1000003 --tstack-threads all --tstack-period 100us -o "$tmp/s.data" \
		-- "$@" >/dev/null 2>"$tmp/s.err" </dev/null
	printf ' %10s\n' "$(grep -o '[0-9]* stack snapshots' "$tmp/s.err" | tr -dc 0-9)"
done

# The profiler: samples per second of each method on one recording of loops,
# and perf2bolt on the same perf.data (target: pmusim >= 10x faster).
echo
prog=$(readlink -f "$WL/loops.relocs")
[ -x "$prog" ] || prog=$(readlink -f "$WL/loops")
"$PMUSIM" record -e br_inst_retired.near_taken -c 7 --delta 3 -b -o "$tmp/prof.data" -- "$prog" >/dev/null 2>"$tmp/rec.err" </dev/null
samples=$(grep -o '([0-9]* samples)' "$tmp/rec.err" | tr -dc 0-9)
printf '%-8s %10s %10s %14s\n' method samples time_s samples/s
for m in cbt taken ranges ip calls; do
	t=$(median "$PMUSIM" report -i "$tmp/prof.data" --method "$m" --format fdata -o "$tmp/p.fdata")
	awk -v m="$m" -v n="$samples" -v t="$t" 'BEGIN { printf "%-8s %10d %10.3f %14.0f\n", m, n, t, n / t }'
	[ "$m" = cbt ] && cbt_t=$t
done
p2b=$(command -v perf2bolt-16 || command -v perf2bolt || echo /usr/lib/llvm-16/bin/perf2bolt)
if [ -x "$p2b" ]; then
	t=$(cd "$tmp" && median "$p2b" -p "$tmp/prof.data" -o "$tmp/p2b.fdata" "$prog")
	awk -v n="$samples" -v t="$t" -v c="$cbt_t" 'BEGIN {
		printf "%-8s %10d %10.3f %14.0f\n", "perf2bolt", n, t, n / t
		printf "perf2bolt / pmusim report (cbt): %.1fx (target >= 10)\n", t / c }'
else
	echo "perf2bolt not installed: no comparison"
fi
exit 0
