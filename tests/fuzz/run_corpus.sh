#!/usr/bin/env bash
# make fuzz-corpus: runs every libFuzzer harness (build/fuzz/tests/fuzz_NAME) once
# over each file of its corpus (tests/fuzz/corpus/NAME), no mutation, so that every
# input that once crashed or hung stays a regression. One check per harness; the
# summary line is Check's ("N%: Checks: C, Failures: F, Errors: 0"), which
# tests/run_suites.sh counts into make test's total.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${FUZZ_BIN_DIR:-$here/../../build/fuzz/tests}
checks=0 failures=0
for src in "$here"/fuzz_*.c; do
	name=$(basename "$src" .c)
	dir=$here/corpus/${name#fuzz_}
	checks=$((checks + 1))
	if [ ! -x "$bin/$name" ] || [ ! -d "$dir" ]; then
		echo "run_corpus: $name: no harness at $bin/$name or no corpus at $dir"
		failures=$((failures + 1))
		continue
	fi
	files=("$dir"/*)
	log=$(mktemp)
	if "$bin/$name" -timeout=5 -rss_limit_mb=2048 -close_fd_mask=3 "${files[@]}" >"$log" 2>&1; then
		echo "run_corpus: $name: ${#files[@]} inputs passed"
	else
		cat "$log"
		echo "run_corpus: $name: failed on its corpus"
		failures=$((failures + 1))
	fi
	rm -f "$log"
done
echo "$(((checks - failures) * 100 / (checks ? checks : 1)))%: Checks: $checks, Failures: $failures, Errors: 0"
[ "$failures" -eq 0 ]
