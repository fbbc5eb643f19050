#!/usr/bin/env bash
# make bench: one table per program comparing pmusim with its peers, all paired in
# one run. Each program runs under every configuration (native, qemu-x86_64,
# callgrind, pmusim's engine with an empty block hook, pmusim run, run --truth,
# stat, record -b, record --tstack, record --rep last, op sampling in op and in
# cycle mode, the live rewriter run --dbr) round-robin: round r runs
# each configuration once, always in the same order, so that a slow spell of this
# shared machine falls on all of them alike. A table row holds the medians over the
# rounds of wall seconds, user+sys CPU seconds and peak RSS (GNU time), host MIPS
# (guest instructions / median wall s), and the ratios of its CPU median to those of
# native, `pmusim run`, the empty-hook engine and callgrind. A summary then checks the
# speed targets and the peak RSS of record -b on ~1 G vs ~10 G instructions
# (PASS/FAIL with the figures), and the older sections follow: the REP unit's modes,
# the thread-stack unit's modes, the profiler's samples/s against perf2bolt.
# Usage: bench/run.sh PMUSIM WORKLOAD_DIR
#   BENCH_RUNS=N  rounds per program (default 5)
#   BENCH_LONG=0  skips the ~10 G-instruction record -b run (a few minutes)
#   BENCH_SLOW=1  also times --rep patch on gzip in the REP section (over 5 minutes)
# A missing peer (qemu-x86_64, valgrind) prints the package to install and shows "-".
# Exit status: 0, also when a target fails or a run fails (marked "!" in its row);
# 2 when pmusim, a bench program or /usr/bin/time is missing.
set -u
PMUSIM=${1:?usage: bench/run.sh PMUSIM WORKLOAD_DIR}
WL=${2:?usage: bench/run.sh PMUSIM WORKLOAD_DIR}
RUNS=${BENCH_RUNS:-5}
LONG=${BENCH_LONG:-1}
[ -x "$PMUSIM" ] || { echo "bench: $PMUSIM is missing (make)" >&2; exit 2; }
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "bench: /usr/bin/time is missing: apt-get install time (or make deps-bench)" >&2; exit 2; }
QEMU=/usr/bin/qemu-x86_64
here=$(cd "$(dirname "$0")" && pwd)
bdir=build/bench
# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_programs "$here" || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
SECONDS=0

CONFIGS="native qemu callgrind empty run truth stat record_b tstack rep_last ibs_ops ibs_cycles dbr"
# row labels of CONFIGS, in its order
LABELS="native|qemu-x86_64|callgrind|run --empty-block-hook|run|run --truth|stat|record -b|\
record --tstack|record --rep last|record ibs_op/cnt_ctl=1/|record ibs_op//|run --dbr"
avail=$CONFIGS
if [ ! -x "$QEMU" ]; then
	echo "bench: $QEMU is not installed (apt-get install qemu-user, or make deps-bench): its rows show -"
	avail=${avail/qemu /}
fi
if ! command -v valgrind >/dev/null; then
	echo "bench: valgrind is not installed (apt-get install valgrind, or make deps-bench): its rows show -"
	avail=${avail/callgrind /}
fi

# The command line before the program for configuration $1, in pre[].
config_prefix() {
	case $1 in
	native) pre=() ;;
	qemu) pre=("$QEMU") ;;
	callgrind) pre=(valgrind --tool=callgrind --collect-jumps=yes --callgrind-out-file=/dev/null) ;;
	empty) pre=("$PMUSIM" run --empty-block-hook --) ;;
	run) pre=("$PMUSIM" run --) ;;
	truth) pre=("$PMUSIM" run --truth "$tmp/t.fdata" --) ;;
	stat) pre=("$PMUSIM" stat -o "$tmp/stat.txt" --) ;;
	record_b) pre=("$PMUSIM" record -e br_inst_retired.near_taken -c 10007 -b --lbr-depth 32 \
		-o "$tmp/p.data" --) ;;
	tstack) pre=("$PMUSIM" record --tstack -o "$tmp/p.data" --) ;;
	rep_last) pre=("$PMUSIM" record -e instructions -c 1000003 --rep last -o "$tmp/p.data" --) ;;
	ibs_ops) pre=("$PMUSIM" record -e ibs_op/cnt_ctl=1/ -c 4096 -o "$tmp/p.data" --) ;;
	ibs_cycles) pre=("$PMUSIM" record -e ibs_op// -c 4096 -o "$tmp/p.data" --) ;;
	dbr) pre=("$PMUSIM" run --dbr --) ;;
	esac
}

# The program $1 and its arguments, in cmd[].
program_cmd() {
	case $1 in
	gzip) cmd=(/usr/bin/gzip -c -6 "$tmp/gzip.in") ;;
	*) cmd=("$bdir/$1") ;;
	esac
}

# Guest instructions of cmd[], for MIPS. A single-threaded program: the exact
# truth's count (run --truth-json, its first "instructions"), which covers the
# process pmusim started. hot_threads: pmusim stat's instructions, the PMU's count
# of everything the run executes (every thread of every process); the truth covers
# the started process only (no child processes, and it stops at an execve), so
# stat's is the count that holds for any multi-threaded or multi-process program.
guest_instructions() {
	if [ "$1" = hot_threads ]; then
		"$PMUSIM" stat -e instructions -x, -o "$tmp/count" -- "${cmd[@]}" >/dev/null 2>&1 </dev/null
		awk -F, '$3 == "instructions" {print $1; exit}' "$tmp/count"
	else
		"$PMUSIM" run --truth-json "$tmp/count" -- "${cmd[@]}" >/dev/null 2>&1 </dev/null
		awk -F'[:,]' '/"instructions"/ {gsub(/ /, "", $2); print $2; exit}' "$tmp/count"
	fi
}

# One timed run of configuration $1 on cmd[]: appends "config wall user sys rss_kb ok"
# to $tmp/times; ok is 0 when it failed or its output differs from the native run's.
timed_run() {
	local c=$1 st ok=1
	config_prefix "$c"
	"$TIME" -f "%e %U %S %M" -o "$tmp/time" "${pre[@]}" "${cmd[@]}" >"$tmp/out" 2>"$tmp/err" </dev/null
	st=$?
	if [ "$st" -ne 0 ] || ! cmp -s "$tmp/out" "$tmp/expected"; then
		ok=0
		echo "bench: $name under $c: exit status $st, output $(cmp -s "$tmp/out" "$tmp/expected" &&
			echo same as || echo differs from) native's; $(head -c 200 "$tmp/err" | head -1)" >&2
	fi
	echo "$c $(tail -1 "$tmp/time") $ok" >>"$tmp/times"
}

# The table of one program from $tmp/times; appends "program config wall cpu rss_mb"
# per measured configuration to $tmp/results for the summary.
print_table() {
	awk -v prog="$name" -v order="$CONFIGS" -v labels="$LABELS" -v insns="$insns" \
		-v results="$tmp/results" '
	function med(s,   a, n, i, j, t) {
		n = split(s, a, " ")
		for (i = 2; i <= n; i++) {
			t = a[i] + 0
			for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]
			a[j + 1] = t
		}
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function ratio(k, ref) { return (ref in cpu) && cpu[ref] > 0 ? sprintf("%10.2f", cpu[k] / cpu[ref]) : sprintf("%10s", "-") }
	{ W[$1] = W[$1] " " $2; C[$1] = C[$1] " " ($3 + $4); M[$1] = M[$1] " " $5; bad[$1] += !$6 }
	END {
		n = split(order, key, " "); split(labels, lab, "|")
		for (i = 1; i <= n; i++) if (key[i] in W) {
			k = key[i]; wall[k] = med(W[k]); cpu[k] = med(C[k]); rss[k] = med(M[k]) / 1024
			printf "%s %s %.3f %.3f %.1f\n", prog, k, wall[k], cpu[k], rss[k] >> results
		}
		printf "%-22s %8s %8s %9s %8s %10s %10s %10s %10s\n", "configuration", "wall_s", "cpu_s",
			"MIPS", "RSS_MB", "/native", "/run", "/empty", "/callgrind"
		for (i = 1; i <= n; i++) {
			k = key[i]; l = lab[i]
			if (!(k in cpu)) { printf "%-22s %8s %8s %9s %8s %10s %10s %10s %10s\n", l, "-", "-", "-", "-", "-", "-", "-", "-"; continue }
			printf "%-22s %8.3f %8.3f %9.1f %8.1f%s%s%s%s%s\n", l, wall[k], cpu[k],
				(wall[k] > 0 ? insns / wall[k] / 1e6 : 0), rss[k], ratio(k, "native"), ratio(k, "run"),
				ratio(k, "empty"), ratio(k, "callgrind"), (bad[k] ? "  ! " bad[k] " failed" : "")
		}
	}' "$tmp/times"
}

awk 'BEGIN { x = 12345; for (i = 0; i < 60000; i++) { x = (x * 1103515245 + 12345) % 2147483648;
	printf "line %d value %d and some words to compress %x\n", i, x, x } }' > "$tmp/gzip.in"
echo "Each program under every configuration, $RUNS rounds round-robin (each round runs every"
echo "configuration once, in the order of the rows); medians over the rounds. wall_s: wall"
echo "seconds; cpu_s: user+sys CPU seconds; MIPS: guest instructions / wall_s / 1e6; RSS_MB:"
echo "peak resident set (GNU time %M). The ratio columns divide cpu_s medians (not wall):"
echo "/native, /run (pmusim run), /empty (run --empty-block-hook, the engine alone), /callgrind."
: >"$tmp/results"
for name in hot_compute hot_store interp gzip hot_threads; do
	program_cmd "$name"
	[ -x "${cmd[0]}" ] || { echo "bench: ${cmd[0]} is missing" >&2; exit 2; }
	# the expected output, and a warm-up of the program's file cache
	"${cmd[@]}" >"$tmp/expected" 2>/dev/null </dev/null
	insns=$(guest_instructions "$name")
	: >"$tmp/times"
	for ((r = 0; r < RUNS; r++)); do
		for c in $avail; do timed_run "$c"; done
	done
	echo
	printf '== %s: %s guest instructions (%s)\n' "$name" "$(echo "$insns" | sed ':a; s/\B[0-9]\{3\}\>/,&/; ta')" \
		"$([ "$name" = hot_threads ] && echo "pmusim stat, all 4 threads" || echo "pmusim run --truth-json")"
	print_table
done

# Peak RSS of record -b on hot_compute 1250000 (1.02 G instructions) and 10500000
# (9.94 G; both counted once with pmusim stat): a recording's memory must not grow
# with the run's length.
long_rss() {
	"$TIME" -f "%e %U %S %M" -o "$tmp/time" "$PMUSIM" record -e br_inst_retired.near_taken -c 10007 -b \
		--lbr-depth 32 -o "$tmp/long.data" -- "$bdir/hot_compute" "$1" >/dev/null 2>"$tmp/err" </dev/null ||
		echo "bench: record -b on hot_compute $1 failed: $(head -1 "$tmp/err")" >&2
	rm -f "$tmp/long.data"
	tail -1 "$tmp/time"
}
if [ "$LONG" != 0 ]; then
	long1=$(long_rss 1250000)
	long10=$(long_rss 10500000)
else
	long1=- long10=-
fi

echo
echo "== summary: ratios of user+sys CPU medians ($RUNS rounds); * marks a program over the target"
awk -v long1="$long1" -v long10="$long10" '
	{ if (!($1 in seen)) { seen[$1]; prog[++np] = $1 } cpu[$1, $2] = $4 }
	function has(p, k) { return ((p, k) in cpu) && cpu[p, k] > 0 }
	# every program: cpu of a / cpu of b <= lim
	function every(a, b, lim, text,   i, p, r, s, ok, n) {
		ok = 1; s = ""
		for (i = 1; i <= np; i++) {
			p = prog[i]
			if (!has(p, a) || !has(p, b)) continue
			r = cpu[p, a] / cpu[p, b]; n++
			s = s sprintf("%s %s %.2f%s", n > 1 ? "," : "", p, r, r > lim ? "*" : "")
			if (r > lim) ok = 0
		}
		if (!n) { printf "SKIP  %s: not measured\n", text; return }
		printf "%s  %s:%s\n", ok ? "PASS" : "FAIL", text, s
	}
	END {
		every("run", "empty", 1.3, "run <= 1.3x run --empty-block-hook, every program")
		every("record_b", "run", 1.25, "record -b <= 1.25x run, every program")
		every("truth", "run", 1.15, "run --truth <= 1.15x run, every program")
		every("tstack", "run", 1.2, "record --tstack <= 1.2x run, every program")
		if (has("hot_compute", "record_b") && has("hot_compute", "callgrind")) {
			r = cpu["hot_compute", "record_b"] / cpu["hot_compute", "callgrind"]
			printf "%s  hot_compute record -b <= 0.33x callgrind: %.2f\n", r <= 0.33 ? "PASS" : "FAIL", r
		} else print "SKIP  hot_compute record -b <= 0.33x callgrind: callgrind not measured"
		ok = 1; s = ""; n = 0
		for (i = 1; i <= np; i++) {
			p = prog[i]
			if (!has(p, "run") || !has(p, "callgrind") || !has(p, "empty")) continue
			r = cpu[p, "run"] / cpu[p, "callgrind"]; e = cpu[p, "empty"] / cpu[p, "callgrind"]; n++
			s = s sprintf("%s %s %.2f", n > 1 ? "," : "", p, r)
			if (r > 1 && e > 1) s = s sprintf(" (engine store path: empty-hook/callgrind = %.2f)", e)
			else if (r > 1) { s = s "*"; ok = 0 }
		}
		if (!n) print "SKIP  run <= callgrind: callgrind not measured"
		else printf "%s  run <= 1x callgrind, every program (unless the empty-hook engine is slower):%s\n",
			ok ? "PASS" : "FAIL", s
		if (long1 == "-" || long10 == "-") { print "SKIP  record -b peak RSS, 10 G vs 1 G instructions: BENCH_LONG=0"; exit }
		split(long1, a, " "); split(long10, b, " ")
		r = b[4] / a[4]
		printf "%s  record -b peak RSS on hot_compute within 10%%, ~10 G vs ~1 G instructions: %.1f MB (%.0f s) vs %.1f MB (%.0f s), %.3fx\n",
			r >= 0.9 && r <= 1.1 ? "PASS" : "FAIL", b[4] / 1024, b[1], a[4] / 1024, a[1], r
	}' "$tmp/results"
echo "(tables and summary: $SECONDS s)"
echo

# The allocator: Unicorn 2.0.1 allocates and frees a GLib tree on every guest store,
# so malloc is on the engine's store path. pmusim run built without the Makefile's
# ALLOC_LIBS (PMUSIM_GLIBC) with glibc's malloc, and with jemalloc and mimalloc
# preloaded; then the release build, which links mimalloc. Round-robin, median CPU s.
JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
MIMALLOC=/usr/lib/x86_64-linux-gnu/libmimalloc.so.2
if [ -x "${PMUSIM_GLIBC:-}" ]; then
	echo "== allocator: pmusim run, median user+sys CPU seconds of $RUNS rounds (ratio to glibc)"
	printf '%-13s %10s %16s %16s %16s\n' program glibc jemalloc mimalloc "release build"
	for w in hot_store gzip interp; do
		if [ "$w" = gzip ]; then set -- /usr/bin/gzip -c -6 "$tmp/gzip.in"; else set -- "$bdir/$w"; fi
		: >"$tmp/alloc"
		for ((i = 0; i < RUNS; i++)); do
			for a in glibc jemalloc mimalloc release; do
				case $a in
				glibc) run=("$PMUSIM_GLIBC" run --) ;;
				jemalloc) [ -r "$JEMALLOC" ] || continue; run=(env LD_PRELOAD="$JEMALLOC" "$PMUSIM_GLIBC" run --) ;;
				mimalloc) [ -r "$MIMALLOC" ] || continue; run=(env LD_PRELOAD="$MIMALLOC" "$PMUSIM_GLIBC" run --) ;;
				release) run=("$PMUSIM" run --) ;;
				esac
				"$TIME" -f "%U %S" -o "$tmp/time" "${run[@]}" "$@" >/dev/null 2>&1 </dev/null
				echo "$a $(awk '{print $1 + $2}' "$tmp/time")" >>"$tmp/alloc"
			done
		done
		awk -v w="$w" '{ v[$1] = v[$1] " " $2 }
			function med(s,   a, n, i, j, t) { n = split(s, a, " "); if (!n) return 0
				for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
				return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
			function cell(x, g) { return x ? sprintf("%.2f (%.2f)", x, x / g) : "-" }
			END { g = med(v["glibc"])
				printf "%-13s %10.2f %16s %16s %16s\n", w, g, cell(med(v["jemalloc"]), g),
					cell(med(v["mimalloc"]), g), cell(med(v["release"]), g) }' "$tmp/alloc"
	done
	[ -r "$JEMALLOC" ] || echo "(jemalloc: apt-get install libjemalloc2, or make deps-bench)"
	echo
fi

# The older sections: median wall seconds of min(BENCH_RUNS, 3) runs, and of one run on
# gzip (about 9 s a run). Measured on this 2-core machine at BENCH_RUNS=5: the tables,
# the summary and its two long runs take 17 minutes, these sections 2.5 more; with
# BENCH_RUNS runs everywhere they would add about 10, and --rep patch on gzip (about
# 40x a plain recording, over 5 minutes a run) 25 more: BENCH_SLOW=1 runs it once.
OLD_RUNS=$((RUNS < 3 ? RUNS : 3))
echo "The sections below: medians of $OLD_RUNS runs (gzip: 1 run; --rep patch on gzip only with BENCH_SLOW=1)"
median_runs=$OLD_RUNS
median() {
	local i t0 t1
	for ((i = 0; i < median_runs; i++)); do
		t0=$(date +%s.%N)
		"$@" >/dev/null 2>&1 </dev/null
		t1=$(date +%s.%N)
		echo "$t1 - $t0" | bc -l
	done | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'
}

# The REP unit (#6): each --rep mode over a plain recording, on workloads/rep
# (every REP traced) and on gzip (libc's REP memcpy/memset; patch mode patches
# the program's own code only).
echo
echo "== REP unit: wall time of each --rep mode over a plain record -e instructions -c 1000003"
printf '%-13s %10s' program plain_s
for m in first last buffer membuffer counter patch; do printf ' %10s' "$m"; done
echo
for w in rep gzip; do
	median_runs=$OLD_RUNS
	if [ "$w" = gzip ]; then set -- /usr/bin/gzip -c -6 "$tmp/gzip.in"; median_runs=1; else set -- "$WL/rep"; fi
	[ -x "$1" ] || continue
	base=$(median "$PMUSIM" record -e instructions -c 1000003 -o "$tmp/r.data" -- "$@")
	printf '%-13s %10.3f' "$w" "$base"
	for m in first last buffer membuffer counter patch; do
		if [ "$m$w" = patchgzip ] && [ "${BENCH_SLOW:-0}" = 0 ]; then printf ' %10s' -; continue; fi
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
echo "== thread-stack unit: wall time of each mode over a plain record -e instructions -c 1000003"
printf '%-13s %10s %10s %10s %10s %10s %10s\n' program plain_s stack history "all/100us" "dwarf16k" snapshots
for w in callstacks recursion threads gzip; do
	median_runs=$OLD_RUNS
	if [ "$w" = gzip ]; then set -- /usr/bin/gzip -c -6 "$tmp/gzip.in"; median_runs=1; else set -- "$WL/$w"; fi
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

median_runs=$OLD_RUNS
# The profiler: samples per second of each method on one recording of loops,
# and perf2bolt on the same perf.data (target: pmusim >= 10x faster).
echo
echo "== profiler: pmusim report on one recording of loops, and perf2bolt on the same perf.data"
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
echo; echo "make bench: ${SECONDS} s (BENCH_RUNS=$RUNS, BENCH_LONG=$LONG)"
exit 0
