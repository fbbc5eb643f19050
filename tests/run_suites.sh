#!/usr/bin/env bash
# Runs Check suites, every one of them whatever an earlier one did, SUITE_JOBS at a time
# (default: the number of processors), and counts their checks from Check's summary
# lines ("N%: Checks: C, Failures: F, Errors: E"). A suite's output is printed whole when
# it ends, so suites running side by side do not interleave. A suite that ends without
# its summary (killed, crashed) counts as one failed check. With $PMUSIM_TALLY set, the
# counts are added to that file (one "passed failed" line per suite) for the caller to
# total; without it, the last line is "N passed, N failed". Exit status 1 when anything
# failed.
#
# Check's per-test timeouts are wall-clock: with suites sharing the processors they are
# multiplied by the number of jobs (CK_TIMEOUT_MULTIPLIER, unless already set).
set -uo pipefail
jobs=${SUITE_JOBS:-$(nproc 2>/dev/null || echo 1)}
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "run_suites: SUITE_JOBS must be a positive number" >&2; exit 2; }
[ -z "${CK_TIMEOUT_MULTIPLIER:-}" ] && [ "$jobs" -gt 1 ] && export CK_TIMEOUT_MULTIPLIER=$jobs
failed_any=0
passed=0 failed=0
dir=$(mktemp -d)
declare -A running=() # pid -> index of the suite
suites=("$@")
stop() {
	local pid
	for pid in "${!running[@]}"; do kill -TERM "$pid" 2>/dev/null; done
	wait 2>/dev/null
	exit 130
}
trap 'rm -rf "$dir"' EXIT
trap stop INT TERM # the EXIT trap removes the logs of a run cut short

run_one() { # index suite: output, exit status and seconds into $dir/index.*
	local start=$SECONDS
	"$2" >"$dir/$1.log" 2>&1 </dev/null
	echo $? >"$dir/$1.rc"
	echo $((SECONDS - start)) >"$dir/$1.time"
}

report() { # index
	local i=$1 suite=${suites[$1]} rc line c f e p x
	cat "$dir/$i.log"
	rc=$(cat "$dir/$i.rc" 2>/dev/null || echo 1)
	echo "run_suites: ${suite##*/} took $(cat "$dir/$i.time" 2>/dev/null || echo '?') s"
	line=$(grep -E '^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$dir/$i.log" | tail -n 1)
	rm -f "$dir/$i".*
	if [ -n "$line" ]; then
		read -r c f e < <(echo "$line" | sed -E 's/.*Checks: ([0-9]+), Failures: ([0-9]+), Errors: ([0-9]+).*/\1 \2 \3/')
		p=$((c - f - e)) x=$((f + e))
	else
		echo "run_suites: $suite ended without a summary (exit status $rc): counted as 1 failed"
		p=0 x=1
	fi
	[ "$rc" -ne 0 ] && [ "$x" -eq 0 ] && x=1 # failed outside any check
	[ "$x" -ne 0 ] && failed_any=1
	passed=$((passed + p)) failed=$((failed + x))
	[ -n "${PMUSIM_TALLY:-}" ] && echo "$p $x $suite" >>"$PMUSIM_TALLY"
}

reap_one() { # waits for one running suite and reports it
	local pid
	wait -n -p pid "${!running[@]}"
	report "${running[$pid]}"
	unset "running[$pid]"
}

for i in "${!suites[@]}"; do
	while [ "${#running[@]}" -ge "$jobs" ]; do reap_one; done
	run_one "$i" "${suites[$i]}" &
	running[$!]=$i
done
while [ "${#running[@]}" -gt 0 ]; do reap_one; done
[ -z "${PMUSIM_TALLY:-}" ] && echo "$passed passed, $failed failed"
exit $failed_any
