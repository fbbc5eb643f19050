#!/usr/bin/env bash
# bench/experiments.sh: the uniformity experiment (make experiments). Records
# every workload with the modelled PMU and LBR, builds edge profiles with every
# method of `pmusim validate` and compares them with the exact truth of the same
# run; writes OUT/uniformity.md (tables) and OUT/svg/*.svg (scatter plots).
#
#   headline   taken-branch trigger, TBT 32, CBT 32, random delta, period chosen
#              per workload for ~TARGET samples; methods cbt, taken, ranges, ip;
#              calls on a call-triggered -j any_call recording; cbt over 3 seeds
#   exhaustive every taken branch sampled (period 1) on the short workloads: no
#              sampling noise, what remains is the method's own bias
#   triggers   every trigger pmusim offers on every workload, period for ~TARGET
#              samples of that event; cbt against ranges
#   sweeps     TBT 8/16/32 x CBT 1..TBT; trigger (taken, branches, instructions,
#              cycles) x random delta on/off; sample counts 1k..300k
#
# Usage: bench/experiments.sh PMUSIM WORKLOAD_DIR OUT_DIR
#        (SEED=N default 1, JOBS=N default 2, TARGET=N samples default 120000)
# Same seed, same programs: same files. perf.data files live in a temporary
# directory and are deleted as soon as their profiles are built.
set -u -o pipefail
PMUSIM=${1:?usage: bench/experiments.sh PMUSIM WORKLOAD_DIR OUT_DIR}
WL=${2:?usage: bench/experiments.sh PMUSIM WORKLOAD_DIR OUT_DIR}
OUT=${3:?usage: bench/experiments.sh PMUSIM WORKLOAD_DIR OUT_DIR}
SEED=${SEED:-1}
JOBS=${JOBS:-2}
TARGET=${TARGET:-120000}
[ -x "$PMUSIM" ] || { echo "experiments: $PMUSIM is missing (make)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
bdir=build/bench
. "$here/common.sh"
bench_programs "$here" || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
t_start=$(date +%s)
# a private copy: a rebuild of the tree's pmusim during the run changes nothing here
cp "$PMUSIM" "$tmp/pmusim" || exit 2
PMUSIM=$tmp/pmusim

# args_env reads standard input: 300,000 bytes of fixed text make it long enough
yes 'the quick brown fox jumps over the lazy dog 0123456789' | head -c 300000 >"$tmp/args_env.in"

# name, program, stdin ("-": none); the C and musl workloads that run long
# enough to sample, the short ones (start-up code mostly), and the benchmarks
WORKLOADS="loops:$WL/loops:- switch:$WL/switch:- recursion:$WL/recursion:- indirect:$WL/indirect:-
strings:$WL/strings:- syscalls:$WL/syscalls:- musl_hello:$WL/musl_hello:- pie_hello:$WL/pie_hello:-
seeded:$WL/seeded:- args_env:$WL/args_env:$tmp/args_env.in hot_compute:$bdir/hot_compute:-
hot_store:$bdir/hot_store:- switch_long:$WL/switch:-"
SWEEP_WL="loops recursion args_env hot_compute"
EXHAUSTIVE_MAX=300000 # taken branches, at most, for a period-1 recording
SVG_ALL_METHODS="loops hot_compute"
TRIGGERS="cycles instructions branches br_inst_retired.near_taken br_inst_retired.cond
br_inst_retired.cond_taken br_inst_retired.near_call br_inst_retired.near_return br_inst_retired.indirect"
EVENTS=$(echo $TRIGGERS | tr ' ' ,)

prog_of() { local w; for w in $WORKLOADS; do [ "${w%%:*}" = "$1" ] && { w=${w#*:}; echo "${w%%:*}"; }; done; }
stdin_of() { local w; for w in $WORKLOADS; do [ "${w%%:*}" = "$1" ] && echo "${w##*:}"; done; }
# arguments of a workload: switch_long is switch with 150,000 jump-table jumps
args_of() { case $1 in switch_long) echo 150000 ;; esac; }

# exact event counts of every workload: counts/NAME holds "event count" lines
mkdir -p "$tmp/counts" "$tmp/rows" "$tmp/out/svg"
for w in $WORKLOADS; do
	name=${w%%:*}
	in=$(stdin_of "$name")
	[ "$in" = - ] && in=/dev/null
	[ -x "$(prog_of "$name")" ] || { echo "experiments: $(prog_of "$name") not built (make workloads)" >&2; exit 2; }
	# shellcheck disable=SC2046 # the arguments are words
	"$PMUSIM" stat --clear-env -x, -o "$tmp/stat.csv" -e "$EVENTS" -- "$(prog_of "$name")" $(args_of "$name") <"$in" >/dev/null ||
		{ echo "experiments: pmusim stat failed on $name" >&2; exit 2; }
	awk -F, '{print $3, $1}' "$tmp/stat.csv" >"$tmp/counts/$name"
done
count_of() { awk -v e="$2" '$1 == e {print $2}' "$tmp/counts/$1"; }

# "PERIOD DELTA" for about N samples of COUNT events: mean period P + D/2 with
# D = P/2; at least period 2 with delta 1. No delta: the same mean period.
period_for() { # COUNT N DELTA(1|0)
	awk -v c="$1" -v n="$2" -v d="$3" 'BEGIN {
		p = int(c / n / 1.25); if (p < 2) p = 2; dd = int(p / 2);
		if (d) print p, dd; else print p + int(dd / 2 + 0.5), 0 }'
}

# Job list: one recording per line, "section|workload|event|period|delta|tbt|
# filter|seed|validations|svg methods"; validations are method:cbt:span ("-":
# the default).
jobs=$tmp/jobs
: >"$jobs"
add_job() { echo "$*" >>"$jobs"; }
TAKEN=br_inst_retired.near_taken
for w in $WORKLOADS; do
	n=${w%%:*}
	read -r p d < <(period_for "$(count_of "$n" $TAKEN)" "$TARGET" 1)
	svg=cbt
	case " $SVG_ALL_METHODS " in *" $n "*) svg="cbt taken ranges ip calls" ;; esac
	add_job "headline|$n|$TAKEN|$p|$d|32|any|$SEED|cbt:-:- taken:-:- ranges:-:- ip:-:-|$svg"
	for s in 1 2; do
		add_job "seeds|$n|$TAKEN|$p|$d|32|any|$((SEED + s))|cbt:-:-|"
	done
	read -r p d < <(period_for "$(count_of "$n" br_inst_retired.near_call)" "$TARGET" 1)
	add_job "calls|$n|br_inst_retired.near_call|$p|$d|32|any_call|$SEED|calls:-:-|$svg"
	[ "$(count_of "$n" $TAKEN)" -le $EXHAUSTIVE_MAX ] &&
		add_job "exhaustive|$n|$TAKEN|1|0|32|any|$SEED|cbt:-:- taken:-:- ranges:-:-|"
done
for w in $WORKLOADS; do
	n=${w%%:*}
	for ev in $TRIGGERS; do
		[ "$(count_of "$n" "$ev")" -ge 100 ] || continue
		read -r p d < <(period_for "$(count_of "$n" "$ev")" "$TARGET" 1)
		add_job "triggers|$n|$ev|$p|$d|32|any|$SEED|cbt:-:- ranges:-:-|"
	done
done
for n in $SWEEP_WL; do
	read -r p d < <(period_for "$(count_of "$n" $TAKEN)" "$TARGET" 1)
	for tbt in 8 16 32; do
		v="ranges:-:- taken:-:-"
		for c in 1 2 4 8 16 32; do [ "$c" -le "$tbt" ] && v="$v cbt:$c:-"; done
		add_job "tbt|$n|$TAKEN|$p|$d|$tbt|any|$SEED|$v|"
	done
	for ev in $TAKEN branches instructions cycles; do
		for dl in 1 0; do
			read -r p d < <(period_for "$(count_of "$n" "$ev")" "$TARGET" "$dl")
			v="cbt:-:- ranges:-:- taken:-:- ip:-:-"
			case $ev in instructions | cycles) v="$v cbt:-:64" ;; esac
			add_job "trigger|$n|$ev|$p|$d|32|any|$SEED|$v|"
		done
	done
	for k in 1000 3000 10000 30000 300000; do
		read -r p d < <(period_for "$(count_of "$n" $TAKEN)" "$k" 1)
		add_job "samples|$n|$TAKEN|$p|$d|32|any|$SEED|cbt:-:- ranges:-:-|"
	done
done

# Runs job number $1 (a line of $jobs): one recording, its validations, rows
# "id<TAB>fields<TAB>cbt<TAB>span<TAB>json" in rows/ID; the recording is deleted after.
run_job() {
	local id=$1 line sec n ev p d tbt filt seed vals svgs dir prog in v m c sp extra
	line=$(sed -n "${id}p" "$jobs")
	IFS='|' read -r sec n ev p d tbt filt seed vals svgs <<<"$line"
	dir=$tmp/job$id
	mkdir -p "$dir"
	prog=$(prog_of "$n")
	in=$(stdin_of "$n")
	[ "$in" = - ] && in=/dev/null
	extra=()
	[ "$d" -gt 0 ] && extra=(--delta "$d")
	# shellcheck disable=SC2046 # the arguments are words
	if ! "$PMUSIM" record --clear-env --truth "$dir/t.fdata" -e "$ev" -c "$p" "${extra[@]}" -j "$filt" \
		--lbr-depth "$tbt" --seed "$seed" -o "$dir/x.data" -- "$prog" $(args_of "$n") <"$in" >/dev/null 2>"$dir/err" ||
		[ ! -s "$dir/x.data" ]; then
		echo "experiments: record failed: $line: $(head -c 300 "$dir/err")" >&2
		return 1
	fi
	for v in $vals; do
		IFS=: read -r m c sp <<<"$v"
		local opt=() js
		[ "$c" != - ] && opt+=(--cbt "$c")
		[ "$sp" != - ] && opt+=(--span "$sp")
		case " $svgs " in *" $m "*) [ "$c$sp" = -- ] && opt+=(--svg "$tmp/out/svg/$n-$m.svg") ;; esac
		js=$("$PMUSIM" validate --format json --method "$m" "${opt[@]}" --truth "$dir/t.fdata" \
			-i "$dir/x.data" 2>"$dir/err") || { echo "experiments: validate failed: $line $v: $(cat "$dir/err")" >&2; return 1; }
		printf '%s\t%s\t%s\t%s\t%s\n' "$id" "$line" "$c" "$sp" "$js" >>"$tmp/rows/$id"
	done
	rm -rf "$dir"
}
export -f run_job prog_of stdin_of args_of
export PMUSIM WORKLOADS jobs tmp
njobs=$(wc -l <"$jobs")
echo "experiments: $njobs recordings, $JOBS at a time" >&2
seq 1 "$njobs" | xargs -P "$JOBS" -I{} bash -c 'run_job {}' || { echo "experiments: a job failed" >&2; exit 1; }
for ((i = 1; i <= njobs; i++)); do cat "$tmp/rows/$i"; done >"$tmp/rows.tsv"

# The uniformity test (pmusim uniformity): K runs with K PMU seeds per cell, every
# trigger with cbt, and the taken-branch trigger with the baselines too; about
# UNIF_SAMPLES samples a run. Rows "workload|event|method|json" in unif.tsv.
UNIF_WL="loops switch recursion"
UNIF_K=${UNIF_K:-8}
UNIF_SAMPLES=${UNIF_SAMPLES:-5000}
: >"$tmp/unif.tsv"
for n in $UNIF_WL; do
	for ev in $TRIGGERS; do
		[ "$(count_of "$n" "$ev")" -ge $((UNIF_SAMPLES * 2)) ] || continue
		read -r p d < <(period_for "$(count_of "$n" "$ev")" "$UNIF_SAMPLES" 1)
		ms=cbt
		[ "$ev" = $TAKEN ] && ms="cbt ranges taken"
		for m in $ms; do
			js=$("$PMUSIM" uniformity --clear-env -e "$ev" -c "$p" --delta "$d" -b --seeds "$UNIF_K" \
				--pmu-seed "$SEED" -J "$JOBS" --method "$m" --format json -- "$(prog_of "$n")" 2>"$tmp/unif.err")
			st=$?
			[ $st -le 1 ] || { echo "experiments: uniformity failed: $n $ev $m: $(head -c 300 "$tmp/unif.err")" >&2; exit 1; }
			printf '%s|%s|%s|%s|%s|%s\n' "$n" "$ev" "$m" "$p" "$d" "$(echo "$js" | tr -d '\n')" >>"$tmp/unif.tsv"
		done
	done
done

# toolchain facts for the report (no host names, paths or dates)
{
	echo "pmusim|$("$PMUSIM" --version 2>&1 | head -1)"
	echo "gcc|$(gcc --version | head -1)"
	echo "glibc|$(ldd --version 2>&1 | head -1)"
	echo "musl|$(dpkg-query -W -f '${Version}' musl-tools 2>/dev/null || echo unknown)"
	echo "seed|$SEED"
	echo "target|$TARGET"
	for w in $WORKLOADS; do
		n=${w%%:*}
		echo "counts|$n|$(count_of "$n" instructions)|$(count_of "$n" br_inst_retired.near_taken)|$(count_of "$n" br_inst_retired.near_call)"
	done
} >"$tmp/facts"
# EXPERIMENTS_KEEP=DIR keeps the raw rows and facts (to rework the report)
[ -n "${EXPERIMENTS_KEEP:-}" ] && mkdir -p "$EXPERIMENTS_KEEP" && cp "$tmp/rows.tsv" "$tmp/facts" "$EXPERIMENTS_KEEP/"
# the report: tables from the rows, in job order (python3: a dependency of make deps)
UNIF_TSV=$tmp/unif.tsv UNIF_K=$UNIF_K python3 - "$tmp/facts" "$tmp/rows.tsv" $(cd "$tmp/out/svg" && ls) >"$tmp/out/uniformity.md" <<'PY' || exit 1
import json, os, sys

STATIC = """### Where the cbt method loses overlap (diagnosis)

1. **Program start and end.** Samples taken before the LBR is full use a window of all
   their entries but one, weighted period / (entries - 1): the first taken branches of a
   program are counted up to H(31) = 4 times. The last ~31 taken branches before exit are
   covered by fewer windows than the others. About 15 taken branches' worth of weight is
   misplaced at each end, which is invisible in long runs and 0.5 to 1.5 % of a program
   with a few thousand branches: the short workloads stay below 99.5 % even when every
   taken branch is sampled (the "Every taken branch sampled" table).
2. **Cycle windows.** The cycle window is anchored at the counter's overflow, which
   pmusim's cycles samples carry, so every branch is counted with the same probability
   (`docs/cycle-windows.md`); it used to end at the newest LBR entry, which counted each
   branch in proportion to the time to the next taken branch after its window (96 to
   99.6 % here then, 89.7 % on switch). A wider window (`--span`) than the census's keeps
   more outcomes per sample but reaches past some traces (`samples_truncated`).
3. **Instruction and cycle windows are as long as every full trace covers** (the
   census: `span`), so no sample is dropped and no code is under-counted for being
   dense; in dense code that is a short window with a handful of outcomes, which is
   noisier than the 31 taken branches of a taken-branch window.
4. **The random delta.** Without it, taken-branch and branch triggers come out the same
   here at equal mean periods, but an instruction period of 2478 = 6 x 413 on
   `hot_compute`, whose Collatz loop is 6 instructions per step, puts every sample on the
   same instruction: `ip` finds no branch at all (0.00 %).

Fixed since the first run of this experiment (measured then with a patched build): the
rule that drops a newest LBR entry equal to the one before it (Skylake's duplicate at a
PMI) now applies only to recordings from real hardware — pmusim's LBR never duplicates,
and equal neighbours are real there (a loop whose only taken branch is its back edge):
hot_compute 99.65 -> 99.98 %, recursion 99.58 -> 99.96 %; the instruction and cycle
window default no longer comes from start-up samples (it dropped 99.6 % of loops'
samples); a not-taken branch at a precise sample IP is appended for every trigger, not
only for branch triggers."""

facts, counts, order = {}, {}, []
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("|")
    if f[0] == "counts":
        counts[f[1]] = (int(f[2]), int(f[3]), int(f[4]))
        order.append(f[1])
    else:
        facts[f[0]] = f[1]

rows = []
for line in open(sys.argv[2]):
    jid, spec, cbt, span, js = line.rstrip("\n").split("\t")
    f = spec.split("|")
    r = dict(id=int(jid), sec=f[0], wl=f[1], ev=f[2], period=int(f[3]), delta=int(f[4]),
             tbt=int(f[5]), filt=f[6], seed=int(f[7]), cbt=cbt, span_opt=span)
    r.update(json.loads(js))
    rows.append(r)

TARGET = int(facts["target"])
SEED = int(facts["seed"])
SHORT = 100000
EV = {"br_inst_retired.near_taken": "taken branches", "branches": "branches",
      "instructions": "instructions", "cycles": "cycles", "br_inst_retired.near_call": "calls",
      "br_inst_retired.cond": "cond", "br_inst_retired.cond_taken": "cond_taken",
      "br_inst_retired.near_return": "returns", "br_inst_retired.indirect": "indirect"}


def pick(sec, wl=None, method=None, **kw):
    out = []
    for r in rows:
        if r["sec"] != sec or (wl and r["wl"] != wl) or (method and r["method"] != method):
            continue
        if all(r[k] == v for k, v in kw.items()):
            out.append(r)
    return out


def one(*a, **kw):
    x = pick(*a, **kw)
    return x[0] if x else None


def pct(r, key="overlap_edges"):
    return "n/a" if r is None else "%.2f" % (100 * r[key])


def num(n):
    return "{:,}".format(n)


def period(r):
    return "%d + U[0,%d]" % (r["period"], r["delta"]) if r["delta"] else "%d" % r["period"]


def table(head, body, align=None):
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join(align or (["---"] + ["---:"] * (len(head) - 1))) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in body]
    return "\n".join(out)


P = print


def discussion():
    head = {w: one("headline", w, "cbt") for w in order}
    full = [w for w in order if head[w]["samples"] >= SHORT]
    short = [w for w in order if head[w]["samples"] < SHORT]
    low = [w for w in order if head[w]["overlap_edges"] < 0.995]
    lst = lambda ws: ", ".join("%s %s %%" % (w, pct(head[w])) for w in ws) or "none"
    P("## Discussion")
    P()
    P("**Target** (cbt >= 99.5 %% of all edges with >= %s samples): the workloads that give that" % num(SHORT))
    P("many samples reach it on %d of %d (%s). %d workloads are too short for %s samples at" % (
        sum(head[w]["overlap_edges"] >= 0.995 for w in full), len(full), lst(full), len(short), num(SHORT)))
    P("the minimum period 2 + U[0,1] (%s); the table of exhaustive sampling shows what each" % (", ".join(short) or "none"))
    P("reaches without sampling noise. Below 99.5 %% in the headline: %s." % lst(low))
    P()
    for m in ("taken", "ranges", "ip"):
        v = [one("headline", w, m)["overlap_edges"] for w in order]
        P("* `%s`: %.2f to %.2f %% of all edges;" % (m, 100 * min(v), 100 * max(v)), end=" ")
        P({"taken": "it has no fall-through edges by construction; on taken edges alone it is at least as good as cbt.",
           "ranges": "every outcome of every sample once; the not-taken branches before the oldest entry are never walked, so fall-throughs lose 1/TBT of their weight (the TBT sweep: worse at TBT 8).",
           "ip": "a sampled branch stands for `period` executions split evenly between its two ways; with a taken-branch trigger the IPs are taken branches only."}[m])
    few = [w for w in order if one("calls", w, "calls")["samples"] < 1000]
    v = [100 * one("calls", w, "calls")["overlap_calls"] for w in order if w not in few]
    P("* `calls` (call-triggered, call-only LBR): %.2f to %.2f %% of call edges on the workloads" % (min(v), max(v)))
    P("  with at least 1,000 call samples; fewer, so noisy, on %s (few calls)." % ", ".join(few))
    P()
    P(STATIC)
P("# Uniformity of sampled edge profiles")
P()
P("Generated by `make experiments` (`bench/experiments.sh`); do not edit by hand. Every")
P("workload is run on pmusim's modelled PMU and LBR, every recording is turned into an edge")
P("profile by each method of `pmusim validate`, and each profile is compared with the exact")
P("edge counts of the same run. The same seed and the same programs give the same file.")
P()
P("## How it was made")
P()
P("* %s; %s; %s; musl %s." % (facts["pmusim"], facts["gcc"], facts["glibc"], facts["musl"]))
P("* Seed %d (`--seed`: the random period deltas and the programs' random bytes)." % SEED)
P("* One recording per cell group, then one `validate` per method:")
P()
P("  ```sh")
P("  pmusim record --clear-env --truth T.fdata -e EVENT -c PERIOD [--delta D] -j any \\")
P("      --lbr-depth TBT --seed %d -o X.data -- PROG [< INPUT]" % SEED)
P("  pmusim validate --format json --method M [--cbt N] [--span S] --truth T.fdata -i X.data [--svg F]")
P("  ```")
P()
P("  The `calls` method reads its own recording: `-e br_inst_retired.near_call -j any_call`.")
P("* **Overlap** = sum over edges of min(p, q), each profile normalised to 1")
P("  (llvm-profdata's overlap, 1 - total variation distance): over *all* edges, over")
P("  *taken* edges (fall-throughs left out) and over *call* edges. 100 % is a perfect profile.")
P("* **Period**: for about %s samples of COUNT events the period is P = COUNT / (1.25 x %s)" % (num(TARGET), num(TARGET)))
P("  with a random delta U[0, P/2] (mean 1.25 P); at least period 2 with delta 1. Runs")
P("  without the delta use the same mean period. Programs with fewer than about 250,000")
P("  taken branches cannot give %s samples at that minimum: their sample counts are" % num(SHORT))
P("  marked with \\* below.")
P("* **TBT** is the LBR depth (`--lbr-depth`), **CBT** the number of branch outcomes the cbt")
P("  method keeps per sample (`validate --cbt`; default: the TBT size, of which the oldest")
P("  taken entry only opens the window, so 31 of 32).")
P()
P("Workloads (`build/workloads`, and `bench/hot_*.c` built with `gcc -O2 -static`):")
P()
body = []
for w in order:
    i, t, c = counts[w]
    inp = "300,000 bytes on stdin" if w == "args_env" else ""
    body.append([w, num(i), num(t), num(c), inp])
P(table(["workload", "instructions", "taken branches", "calls", "input"], body,
        ["---", "---:", "---:", "---:", "---"]))
P()

P("## Headline: taken-branch trigger, TBT 32, CBT 32, random delta")
P()
P("Overlap of all edges, in %, per method (`cbt` is the project's method; `taken`,")
P("`ranges` and `ip` are the baselines of `profiler/profile.h`, all from the same")
P("recording; `calls` from the call-triggered `-j any_call` recording of the same program,")
P("compared on call edges).")
P()
body = []
for w in order:
    h = {m: one("headline", w, m) for m in ("cbt", "taken", "ranges", "ip")}
    c = one("calls", w, "calls")
    s = h["cbt"]["samples"]
    body.append([w, period(h["cbt"]), num(s) + ("\\*" if s < SHORT else ""),
                 "**%s**" % pct(h["cbt"]), pct(h["taken"]), pct(h["ranges"]), pct(h["ip"]),
                 pct(c, "overlap_calls"), num(c["samples"])])
P(table(["workload", "period", "samples", "cbt", "taken", "ranges", "ip", "calls", "calls: samples"], body))
P()
P("Taken edges only (fall-throughs left out) and call edges only, same recordings:")
P()
body = []
for w in order:
    h = {m: one("headline", w, m) for m in ("cbt", "taken", "ranges", "ip")}
    body.append([w] + [pct(h[m], "overlap_taken") for m in ("cbt", "taken", "ranges", "ip")] +
                [pct(h[m], "overlap_calls") for m in ("cbt", "taken", "ranges", "ip")])
P(table(["workload", "cbt: taken", "taken: taken", "ranges: taken", "ip: taken",
         "cbt: calls", "taken: calls", "ranges: calls", "ip: calls"], body))
P()
P("The cbt cell again with seeds %d, %d and %d (different deltas, so different sample points):" % (SEED, SEED + 1, SEED + 2))
P()
body = []
for w in order:
    v = [one("headline", w, "cbt")] + sorted(pick("seeds", w, "cbt"), key=lambda r: r["seed"])
    o = [100 * r["overlap_edges"] for r in v]
    body.append([w] + ["%.2f" % x for x in o] + ["%.2f" % (max(o) - min(o))])
P(table(["workload", "seed %d" % SEED, "seed %d" % (SEED + 1), "seed %d" % (SEED + 2), "max - min"], body))
P()

ex = [w for w in order if one("exhaustive", w, "cbt")]
if ex:
    P("## Every taken branch sampled")
    P()
    P("Period 1 without delta on the workloads with at most 300,000 taken branches: every")
    P("taken branch is a sample, so there is no sampling noise and whatever keeps an")
    P("overlap below 100 % is a bias of the method itself.")
    P()
    body = []
    for w in ex:
        r = {m: one("exhaustive", w, m) for m in ("cbt", "taken", "ranges")}
        body.append([w, num(r["cbt"]["samples"]), "**%s**" % pct(r["cbt"]), pct(r["taken"]), pct(r["ranges"]),
                     "%.4f" % r["cbt"]["hot_edge_max_rel_err"]])
    P(table(["workload", "samples", "cbt", "taken", "ranges", "cbt: largest rel. error of a hot edge"], body))
    P()

sweep = sorted({r["wl"] for r in rows if r["sec"] == "tbt"}, key=order.index)
P("## Every trigger")
P()
P("Every event pmusim can sample with (`pmusim stat -e list`), on every workload with at")
P("least 100 of its events; TBT 32, default CBT (the window in the trigger's own units,")
P("found by the census: `validate`'s `span` for instructions and cycles), random delta,")
P("the period for about %s samples of that event. Each cell: cbt / ranges overlap of all" % num(TARGET))
P("edges in %, samples below; **bold** where there are at least 100,000 samples, cbt")
P("reaches 99.5 % and beats ranges.")
P()
short_ev = {"cycles": "cycles", "instructions": "insns", "branches": "branches",
            "br_inst_retired.near_taken": "near_taken", "br_inst_retired.cond": "cond",
            "br_inst_retired.cond_taken": "cond_taken", "br_inst_retired.near_call": "near_call",
            "br_inst_retired.near_return": "near_return", "br_inst_retired.indirect": "indirect"}
body, met, cells, misses = [], 0, 0, []
for w in order:
    row = [w]
    for ev in short_ev:
        c, r = one("triggers", w, "cbt", ev=ev), one("triggers", w, "ranges", ev=ev)
        if c is None:
            row.append("")
            continue
        big = c["samples"] >= SHORT
        ok = big and c["overlap_edges"] >= 0.995 and c["overlap_edges"] > r["overlap_edges"]
        if big:
            cells += 1
            met += ok
            if not ok:
                misses.append("%s/%s %s %%" % (w, short_ev[ev], pct(c)))
        txt = "%s / %s<br>%s" % (pct(c), pct(r), num(c["samples"]))
        row.append("**%s**" % txt if ok else txt)
    body.append(row)
P(table(["workload"] + list(short_ev.values()), body))
P()
P("With at least 100,000 samples: %d of %d cells meet 99.5 %% and beat ranges%s." % (
    met, cells, "; not: " + ", ".join(misses) if misses else ""))
P()
P("A trigger that counts one kind of branch (calls, returns, indirect branches) sees only")
P("code within an LBR's reach of its events: hot_compute's Collatz loop runs thousands of")
P("taken branches between calls, so no call-triggered window reaches it, with any method")
P("(cbt and ranges alike at 92 %). On args_env the return-triggered profile is unbiased on")
P("every tested edge (pmusim uniformity, 8 runs: chi2 12.9 on 5, p = 0.11) but misses part")
P("of the start-up code, which")
P("runs far from any return; ranges keeps whole traces and so reaches a little of it.")
P()

P("## The uniformity test")
P()
P("`pmusim uniformity` (docs/uniformity-test.md) on each workload and trigger: %s runs with" % os.environ["UNIF_K"])
P("PMU seeds %d.. (the random period deltas differ, the program does not), each run's" % SEED)
P("profile against its exact counts; per edge the mean, its standard error over the runs")
P("and z; chi2 over the tested edges; verdict at alpha = 0.001. cbt with every trigger, and")
P("the baselines with the taken-branch trigger.")
P()
body = []
for line in open(os.environ["UNIF_TSV"]):
    w, ev, m, per, dl, js = line.rstrip("\n").split("|", 5)
    d = json.loads(js)
    worst = [e for e in d["edges"] if e.get("biased")]
    show = ", ".join("%s -> %s %+.1f %%" % (e["from_sym"], e["to_sym"], 100 * e["rel_bias"])
                     for e in worst[:2] if e.get("rel_bias") is not None)
    body.append([w, short_ev.get(ev, ev), m, "%s + U[0,%s]" % (per, dl), num(int(d["samples_mean"])), d["tested"],
                 "%.1f" % d["chi2"] if d["chi2"] is not None else "inf", d["dof"],
                 "%.3g" % d["p_value"], "**unbiased**" if d["unbiased"] else "BIASED (%d edges)" % d["biased_edges"], show])
P(table(["workload", "trigger", "method", "period", "samples/run", "edges", "chi2", "dof", "p", "verdict",
         "most biased edges"], body))
P()

P("## Sweep: TBT and CBT sizes")
P()
P("Taken-branch trigger with the headline period and delta; overlap of all edges in %.")
P("`cbt N` is `validate --cbt N` (with TBT 32, `cbt 32` is the headline cell).")
P()
body = []
for w in sweep:
    for t in (8, 16, 32):
        cells = []
        for c in ("1", "2", "4", "8", "16", "32"):
            r = one("tbt", w, "cbt", tbt=t, cbt=c)
            cells.append(pct(r) if r else "")
        rr, rt = one("tbt", w, "ranges", tbt=t), one("tbt", w, "taken", tbt=t)
        body.append([w, t, num(rr["samples"])] + cells + [pct(rr), pct(rt)])
P(table(["workload", "TBT", "samples", "cbt 1", "cbt 2", "cbt 4", "cbt 8", "cbt 16", "cbt 32", "ranges", "taken"], body))
P()

P("## Sweep: trigger and random delta")
P()
P("TBT 32, default CBT; the period aims at %s samples of each event, with the random" % num(TARGET))
P("delta or without it at the same mean period. For instruction and cycle triggers the cbt")
P("window is a span of instructions or cycles: `validate`'s default is what every full")
P("trace covers (span column), `cbt, span 64` sets it to 64. `used` counts the samples")
P("the default cbt window kept.")
P()
body = []
for w in sweep:
    for ev in ("br_inst_retired.near_taken", "branches", "instructions", "cycles"):
        for dl in (True, False):
            rs = [r for r in pick("trigger", w, "cbt", ev=ev) if (r["delta"] > 0) == dl and r["span_opt"] == "-"]
            if not rs:
                continue
            c = rs[0]
            get = lambda m, **kw: one("trigger", w, m, ev=ev, period=c["period"], delta=c["delta"], **kw)
            s64 = get("cbt", span_opt="64")
            body.append([w, EV[ev], period(c), num(c["samples"]), num(c["samples_used"]),
                         num(c["span"]) if ev in ("instructions", "cycles") else "",
                         "**%s**" % pct(c), pct(s64) if s64 else "", pct(get("ranges")), pct(get("taken")), pct(get("ip", span_opt="-"))])
P(table(["workload", "trigger", "period", "samples", "used", "span", "cbt", "cbt, span 64", "ranges", "taken", "ip"], body))
P()

P("## Sweep: number of samples")
P()
P("Taken-branch trigger, TBT 32, CBT 32, random delta; the period sets the sample count.")
P()
body = []
for w in sweep:
    rs = sorted(pick("samples", w, "cbt") + [one("headline", w, "cbt")], key=lambda r: (-r["period"], r["id"]))
    seen = set()
    for c in rs:
        if (c["period"], c["delta"]) in seen:
            continue
        seen.add((c["period"], c["delta"]))
        rr = one(c["sec"], w, "ranges", period=c["period"], delta=c["delta"])
        body.append([w, period(c), num(c["samples"]), "**%s**" % pct(c), pct(rr)])
P(table(["workload", "period", "samples", "cbt", "ranges"], body))
P()
discussion()
P()
P("## Plots")
P()
P("x: exact executions of each edge of the truth; y: the profile's weight of that edge scaled")
P("to the truth's total (edges the profile lacks on the row \"0\"); headline recordings.")
P()
import os
for name in sys.argv[3:]:
    P("* [%s](svg/%s)" % (os.path.splitext(os.path.basename(name))[0], os.path.basename(name)))
PY
mkdir -p "$OUT"
rm -rf "$OUT/svg"
mv "$tmp/out/svg" "$OUT/svg"
mv "$tmp/out/uniformity.md" "$OUT/uniformity.md"
echo "experiments: wrote $OUT/uniformity.md and $(ls "$OUT/svg" | wc -l) plots in $OUT/svg ($(($(date +%s) - t_start)) s)" >&2
