#!/bin/sh
# Writes pmusim's bash completion to standard output: the commands `pmusim --help`
# lists and each command's long options as its --help text lists them (parsed by
# packaging/help.awk), so completion offers what --help documents.
# Usage: packaging/completion.sh PMUSIM
# Exit status: 0, 1 when a text could not be read, 2 usage.
set -eu
[ $# -eq 1 ] || { echo "usage: completion.sh PMUSIM" >&2; exit 2; }
pmusim=$1
awk_file=$(dirname "$0")/help.awk
cmds=$("$pmusim" --help | awk -v mode=commands -f "$awk_file" | cut -f1)
[ -n "$cmds" ] || { echo "completion.sh: no commands in $pmusim --help" >&2; exit 1; }
cat <<'HEAD'
# bash completion for pmusim, generated from its --help texts by packaging/completion.sh
_pmusim_options() {
	case $1 in
HEAD
for c in $cmds; do
	opts=$("$pmusim" "$c" --help | awk -v mode=options -f "$awk_file" | LC_ALL=C sort -u | tr '\n' ' ')
	printf '\t%s) echo "%s" ;;\n' "$c" "${opts% }"
done
cat <<HEAD
	esac
}

_pmusim() {
	local cur=\${COMP_WORDS[COMP_CWORD]} cmds="$(echo $cmds)" i
	COMPREPLY=()
	if [ "\$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=(\$(compgen -W "\$cmds help --help --version" -- "\$cur"))
		return 0
	fi
HEAD
cat <<'TAIL'
	# after "--" come the program and its arguments: bash's default completion
	for ((i = 2; i < COMP_CWORD; i++)); do
		[ "${COMP_WORDS[i]}" = "--" ] && return 0
	done
	case ${COMP_WORDS[1]} in
	help)
		[ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
		return 0 ;;
	esac
	# options; other words fall back to file names (complete -o default)
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_pmusim_options "${COMP_WORDS[1]}")" -- "$cur"))
	fi
	return 0
}
complete -o default -F _pmusim pmusim
TAIL
