#!/usr/bin/env bash
# make test: the unit suites and the end-to-end suite with ASan+UBSan, then both in the
# release build, then the README's examples as typed (tests/readme_examples.sh), then
# every libFuzzer harness once over its corpus (make fuzz-corpus, clang) and for a
# second as make fuzz runs it (FUZZ_SECONDS=1). Every
# step runs even when an earlier one failed; the last line totals the checks of every
# suite ("total: N passed, N failed"). Exit status 1 when anything failed.
set -uo pipefail
make=${MAKE:-make}
PMUSIM_TALLY=$(mktemp)
export PMUSIM_TALLY
trap 'rm -f "$PMUSIM_TALLY"' EXIT
status=0
for step in asan-unit all e2e-asan unit e2e readme-examples fuzz-corpus "fuzz FUZZ_SECONDS=1"; do
	if ! $make $step; then
		echo "make test: step '$step' failed"
		status=1
	fi
done
read -r passed failed < <(awk '{p += $1; f += $2} END {print p + 0, f + 0}' "$PMUSIM_TALLY")
[ "$status" -ne 0 ] && [ "$failed" -eq 0 ] && failed=1 # a build step failed: no suite counted it
[ "$failed" -ne 0 ] && status=1
echo "total: $passed passed, $failed failed"
exit $status
