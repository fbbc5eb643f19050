#!/bin/sh
# A CI job's performance check with pmusim (docs/ci.md): runs a program under
# `pmusim stat --json`, compares the run with the baseline committed to the
# repository (`pmusim diff`), writes a Markdown report for the pull request and
# an SVG chart beside it, and fails above the thresholds.
#
# usage: pmusim-ci.sh [-t EV=PCT]... [-o REPORT.md] [-u] BASELINE PROG [ARGS...]
#   -t EV=PCT    fail when event EV grew by more than PCT per cent (repeatable;
#                default cycles=1)
#   -o REPORT    the Markdown report (default pmusim-diff.md; the chart is
#                REPORT with .svg for .md)
#   -u           write the run as the new BASELINE instead (an intended change;
#                also when BASELINE does not exist yet)
# environment: PMUSIM (default pmusim), PMUSIM_CI_DIR (where the program is
# copied to run, default /tmp/pmusim-ci: the program's own path lies on its
# stack, so it runs from one fixed path on every host).
# exit status: 0 within the thresholds (or baseline written), 1 above one,
# 2 on errors.
set -eu

usage() {
	echo "usage: pmusim-ci.sh [-t EV=PCT]... [-o REPORT.md] [-u] BASELINE PROG [ARGS...]" >&2
	exit 2
}

PMUSIM=${PMUSIM:-pmusim}
thresholds=""
report=pmusim-diff.md
update=0
while getopts t:o:u opt; do
	case $opt in
	t) thresholds="$thresholds --threshold $OPTARG" ;;
	o) report=$OPTARG ;;
	u) update=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || usage
base=$1
prog=$2
shift 2
[ -n "$thresholds" ] || thresholds="--threshold cycles=1"

dir=${PMUSIM_CI_DIR:-/tmp/pmusim-ci}
mkdir -p "$dir" || exit 2
fixed=$dir/$(basename "$prog")
cp "$prog" "$fixed" || exit 2
new=$dir/new.json
# stdout to /dev/null on every host: a terminal would make stdio ask isatty
"$PMUSIM" stat --json -o "$new" -- "$fixed" "$@" >/dev/null || {
	echo "pmusim-ci.sh: the run under pmusim failed" >&2
	exit 2
}
if [ "$update" = 1 ] || [ ! -e "$base" ]; then
	cp "$new" "$base" || exit 2
	echo "pmusim-ci.sh: wrote the baseline $base"
	exit 0
fi
status=0
# shellcheck disable=SC2086 # thresholds are separate words
"$PMUSIM" diff $thresholds --format markdown --svg "${report%.md}.svg" -o "$report" "$base" "$new" || status=$?
# the text for the job's log (its status is the same)
# shellcheck disable=SC2086
"$PMUSIM" diff $thresholds --top 10 "$base" "$new" || true
exit $status
