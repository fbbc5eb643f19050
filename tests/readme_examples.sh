#!/usr/bin/env bash
# Runs the shell examples of README.md as a newcomer would type them after `make demo`,
# and checks that each does what the README says. The convention (README, "Tests"):
#   * every line of a ```sh block is a command (a line ending in \ goes on on the next);
#     blocks fenced ```sh norun, and fences of any other language, are not run;
#   * a command's comment "# exit N" is its expected exit status (default 0);
#   * a command whose comment begins "# not run:" is skipped, the reason after the colon
#     (templates with a PROG placeholder, minutes-long runs, options not built yet);
#   * the commands of one block run in order in one fresh directory, as typed from the
#     repository's root: build/release and build/workloads there are the repository's,
#     ../shared is the repository's ../shared, HOME and TMPDIR are the block's own, so
#     nothing lands in the repository or in /tmp (checked: no file of the repository is
#     newer than the run's start when it ends).
# The quick start's visible result is checked too (CONTENT below): a perf-style overhead
# table with a symbol row, the edge profile of the -b recording, perf reading it; and
# every link of the README leads to a heading or a file.
# Prints a Check-style summary line ("N%: Checks: C, Failures: F, Errors: 0") that
# tests/run_suites.sh counts. Exit status 1 when anything failed, 2 on bad usage.
# usage: tests/readme_examples.sh [README]   (from anywhere; -v prints every command)
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
verbose=0
[ "${1:-}" = -v ] && { verbose=1; shift; }
readme=${1:-$repo/README.md}
[ -r "$readme" ] || { echo "readme_examples: cannot read $readme" >&2; exit 2; }
for need in "$repo/build/release/pmusim" "$repo/build/workloads/loops"; do
	[ -e "$need" ] || { echo "readme_examples: $need is missing (make all workloads)" >&2; exit 2; }
done
per_command_timeout=${README_TIMEOUT:-120}

# The quick start's visible result: the exact command as the README spells it, then
# extended regular expressions its standard output must match, one check each.
declare -A CONTENT=(
	["perf report -i g.data --stdio --no-children -g caller --percent-limit 5"]='^ +[0-9]+\.[0-9]+% +recursion +recursion +\[\.\] fib$
^ +---_start$
^ +main$'
	["build/release/pmusim report"]='^# Overhead +Command +Shared Object +Symbol$
^ +[0-9]+\.[0-9]+% +ls +[^ ]+ +\[\.\] [A-Za-z_]'
	["build/release/pmusim report -i lbr.data"]='^# method cbt: [0-9]+ samples, [1-9][0-9]* used
^# hottest edges$
^ +[0-9.]+% +[0-9]+ +call +run_loops\+0x[0-9a-f]+ -> mix\+0x0$
^# hottest functions
^ +[0-9.]+% +[0-9]+ +run_loops$'
	["perf script -i lbr.data -F ip,sym,brstacksym | head -3"]='^ +[0-9a-f]+ .*run_loops\+0x[0-9a-f]+/mix\+0x0/P/-/-/[0-9]+/CALL'
	["build/release/pmusim script -i loops.data -F ip,brstackinsn | head -12"]='^	[0-9a-f]{16}	insn: ([0-9a-f]{2} )+ *	# PRED [0-9]+ cycles \[[0-9]+\] [0-9]+\.[0-9]{2} IPC$'
)
declare -A content_seen=()

run_dir=$(mktemp -d "${TMPDIR:-/tmp}/pmusim-readme-XXXXXX") || exit 2
trap 'rm -rf "$run_dir"' EXIT
trap 'exit 130' INT TERM
start_mark=$run_dir/start
touch "$start_mark"
checks=0 failures=0 skipped=0

check() { # check OK|FAIL "what"
	checks=$((checks + 1))
	if [ "$1" = OK ]; then
		[ $verbose = 0 ] || echo "readme_examples: ok: $2"
	else
		failures=$((failures + 1))
		echo "readme_examples: FAIL: $2"
	fi
}

new_block_dir() {
	block_dir=$run_dir/block$1
	mkdir -p "$block_dir/work/build" "$block_dir/home" "$block_dir/tmp"
	ln -s "$repo/build/release" "$block_dir/work/build/release"
	ln -s "$repo/build/workloads" "$block_dir/work/build/workloads"
	[ -d "$repo/../shared" ] && ln -s "$(cd "$repo/../shared" && pwd)" "$block_dir/shared"
}

# One record per command: block number, README line, command (continuations joined).
commands=$(awk '
	/^```/ {
		if (inblock) { inblock = 0; next }
		if ($0 ~ /^```sh[ \t]*$/) { inblock = 1; block++ }
		else skipping = !skipping
		next
	}
	!inblock { next }
	/^[ \t]*(#|$)/ { next }
	{
		if (cont == "") start = NR
		line = $0
		if (line ~ /\\$/) { sub(/\\$/, "", line); cont = cont line; next }
		printf "%d\t%d\t%s\n", block, start, cont line
		cont = ""
	}' "$readme")

last_block=0
while IFS=$'\t' read -r block line cmd; do
	[ -n "$cmd" ] || continue
	if [ "$block" != "$last_block" ]; then
		new_block_dir "$block"
		last_block=$block
	fi
	if [[ "$cmd" =~ [[:space:]]#[[:space:]]*not\ run: ]]; then
		skipped=$((skipped + 1))
		[ $verbose = 1 ] && echo "readme_examples: skipped (line $line): $cmd"
		continue
	fi
	expect=0
	[[ "$cmd" =~ [[:space:]]#[[:space:]]*exit\ ([0-9]+) ]] && expect=${BASH_REMATCH[1]}
	out=$block_dir/out.$line err=$block_dir/err.$line
	(cd "$block_dir/work" &&
		exec env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C \
			HOME="$block_dir/home" TMPDIR="$block_dir/tmp" \
			timeout "$per_command_timeout" bash -c "$cmd") </dev/null >"$out" 2>"$err"
	status=$?
	if [ "$status" = "$expect" ]; then
		check OK "line $line: $cmd"
	else
		check FAIL "line $line: exit status $status, README says $expect: $cmd"
		sed 's/^/    stderr: /' "$err" | tail -n 5
	fi
	# the quick start's visible result
	plain=$(echo "$cmd" | sed -E 's/[[:space:]]+#.*$//; s/[[:space:]]+$//')
	if [ -n "${CONTENT[$plain]+set}" ]; then
		content_seen[$plain]=1
		while IFS= read -r re; do
			if grep -Eq -- "$re" "$out"; then
				check OK "line $line: output matches /$re/"
			else
				check FAIL "line $line: no output line matches /$re/: $cmd"
				head -n 12 "$out" | sed 's/^/    stdout: /'
			fi
		done <<<"${CONTENT[$plain]}"
	fi
done <<<"$commands"

# Links inside the README (#anchors: GitHub's heading slugs) and to files beside it.
bad_links=$(python3 - "$readme" <<'PY'
import os, re, sys
path = sys.argv[1]
text = open(path, encoding="utf-8").read()
slugs, fenced = set(), False
for line in text.split("\n"):
    if line.startswith("```"):
        fenced = not fenced
    elif not fenced and re.match(r"#+ ", line):
        title = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower())
        slugs.add(title.replace(" ", "-"))
for target in re.findall(r"\]\(([^)\s]+)\)", text):
    if target.startswith(("http://", "https://")):
        continue
    file, _, anchor = target.partition("#")
    if file and not os.path.exists(os.path.join(os.path.dirname(path), file)):
        print(target)
    elif not file and anchor not in slugs:
        print(target)
PY
)
if [ -z "$bad_links" ]; then
	check OK "every link of the README leads somewhere"
else
	check FAIL "links of the README that lead nowhere: $(echo $bad_links)"
fi

for c in "${!CONTENT[@]}"; do
	if [ -n "${content_seen[$c]+set}" ]; then
		check OK "the quick start has: $c"
	else
		check FAIL "the README has no runnable command '$c' whose output this test checks"
	fi
done
littered=$(find "$repo" -path "$repo/.git" -prune -o -newer "$start_mark" -print | head -n 5)
if [ -z "$littered" ]; then
	check OK "nothing written into the repository"
else
	check FAIL "the examples wrote into the repository: $(echo $littered)"
fi

passed=$((checks - failures))
echo "readme_examples: $checks checks, $skipped commands not run (marked in README.md)"
echo "$((checks ? passed * 100 / checks : 0))%: Checks: $checks, Failures: $failures, Errors: 0"
[ "$failures" -eq 0 ]
