#!/bin/sh
# Writes pmusim's man pages into DIR: pmusim(1) from `pmusim --help` and
# pmusim-CMD(1) from `pmusim CMD --help` for every command that text lists, so a
# page says exactly what --help says (formatted by packaging/help.awk).
# Usage: packaging/man_pages.sh PMUSIM DIR VERSION
# Exit status: 0, 1 when a text could not be read or a page written, 2 usage.
set -eu
[ $# -eq 3 ] || { echo "usage: man_pages.sh PMUSIM DIR VERSION" >&2; exit 2; }
pmusim=$1 dir=$2 version=$3
awk_file=$(dirname "$0")/help.awk
mkdir -p "$dir"
main=$("$pmusim" --help) || { echo "man_pages.sh: $pmusim --help failed" >&2; exit 1; }
cmds=$(printf '%s\n' "$main" | awk -v mode=commands -f "$awk_file" | cut -f1)
see=""
for c in $cmds; do see="$see pmusim-$c"; done
printf '%s\n' "$main" | awk -v mode=man -v page=pmusim -v version="$version" -v see="$see" \
	-v summary="run x86-64 Linux programs on an emulated CPU with modelled PMU hardware" \
	-f "$awk_file" >"$dir/pmusim.1.tmp"
mv "$dir/pmusim.1.tmp" "$dir/pmusim.1"
printf '%s\n' "$main" | awk -v mode=commands -f "$awk_file" | while IFS='	' read -r c summary; do
	"$pmusim" "$c" --help | awk -v mode=man -v page="pmusim-$c" -v version="$version" \
		-v see="pmusim" -v summary="$summary" -f "$awk_file" >"$dir/pmusim-$c.1.tmp"
	mv "$dir/pmusim-$c.1.tmp" "$dir/pmusim-$c.1"
done
