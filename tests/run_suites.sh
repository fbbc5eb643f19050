#!/usr/bin/env bash
# Runs Check suites one after another, every one of them whatever an earlier one did,
# and counts their checks from Check's summary lines ("N%: Checks: C, Failures: F,
# Errors: E"). A suite that ends without its summary (killed, crashed) counts as one
# failed check. With $PMUSIM_TALLY set, the counts are added to that file (one
# "passed failed" line per suite) for the caller to total; without it, the last line is
# "N passed, N failed". Exit status 1 when anything failed.
set -uo pipefail
failed_any=0
passed=0 failed=0
log=
trap 'rm -f "$log"' EXIT
trap 'exit 130' INT TERM # the EXIT trap removes the log of a run cut short
for suite in "$@"; do
	log=$(mktemp)
	start=$SECONDS
	"$suite" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	echo "run_suites: ${suite##*/} took $((SECONDS - start)) s"
	line=$(grep -E '^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$log" | tail -n 1)
	rm -f "$log"
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
done
[ -z "${PMUSIM_TALLY:-}" ] && echo "$passed passed, $failed failed"
exit $failed_any
