# shellcheck shell=bash
# Sourced by bench/run.sh and bench/experiments.sh: builds the benchmark programs
# (bench/*.c, static -O2; hot_threads with -pthread) into build/bench if they are
# older than their source.
# Usage: bench_programs DIR_OF_SOURCES
bench_programs() {
	local b flags
	mkdir -p build/bench
	for b in hot_compute hot_store hot_threads interp; do
		flags=
		[ "$b" = hot_threads ] && flags=-pthread
		[ "build/bench/$b" -nt "$1/$b.c" ] || gcc -O2 -static $flags -o "build/bench/$b" "$1/$b.c" || return 2
	done
}
