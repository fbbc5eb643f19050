# Reads the text a pmusim command prints for --help and writes, by `mode`:
#   man       the roff man page (man(7) macros) of that text; variables page
#             ("pmusim-record"), summary (the NAME line), version, see (SEE ALSO)
#   options   the long options the text lists, one a line
#   commands  "NAME<TAB>summary" per entry of its "commands:" section
# The text's layout, as cli/*.c write it: "usage:" lines first; a line at column 0
# ending in ':' opens a section ("options:"); "exit status: ..." opens EXIT STATUS;
# an entry starts at column 2 with its tag (the option and its argument) and its
# description after two or more spaces (or after one, at the column where the
# entry's next line is indented), continued on lines indented further.

function indent(s) { match(s, /^ */); return RLENGTH }
function trim(s) { sub(/^ +/, "", s); sub(/ +$/, "", s); return s }
# roff: backslashes, a leading control character, and '-' as the minus sign that
# options are typed with (a plain '-' renders as a hyphen in UTF-8 output)
function roff(s) {
	gsub(/\\/, "\\e", s)
	gsub(/-/, "\\-", s)
	if (s ~ /^[.']/)
		s = "\\&" s
	return s
}
# Splits entry line i into TAG and DESC (globals).
function split_entry(i,    s, p, next_ind) {
	s = substr(L[i], 3)
	p = index(s, "  ")
	if (p > 0) {
		TAG = substr(s, 1, p - 1)
		DESC = trim(substr(s, p))
		return
	}
	next_ind = (i < N && indent(L[i + 1]) > 2) ? indent(L[i + 1]) : 0
	if (next_ind > 2 && substr(L[i], next_ind, 1) == " " && length(L[i]) > next_ind) {
		TAG = trim(substr(L[i], 3, next_ind - 3))
		DESC = trim(substr(L[i], next_ind + 1))
		return
	}
	TAG = trim(s)
	DESC = ""
}
function is_entry(i) { return indent(L[i]) == 2 && L[i] ~ /^  [^ ]/ }
function is_cont(i) { return L[i] != "" && indent(L[i]) > 2 }
function is_header(i) { return L[i] ~ /^[^ ].*:$/ && L[i] !~ /^usage:/ }

{ L[++N] = $0 }

END {
	i = 1
	if (mode == "man") {
		print ".TH " toupper(roff(page)) " 1 \"\" \"pmusim " version "\" \"pmusim manual\""
		print ".SH NAME"
		print roff(page) " \\- " roff(summary)
		print ".SH SYNOPSIS"
		print ".nf"
	}
	# the usage lines, without "usage: " and the continuation's alignment to it
	for (; i <= N && L[i] != ""; i++) {
		s = L[i]
		sub(/^usage: /, "", s)
		if (s == L[i] && substr(s, 1, 7) == "       ")
			s = substr(s, 8)
		if (mode == "man")
			print roff(s)
	}
	if (mode == "man")
		print ".fi\n.SH DESCRIPTION"
	section = ""
	for (; i <= N; i++) {
		if (L[i] == "") {
			if (mode == "man" && i < N && L[i + 1] != "" && !is_header(i + 1) && L[i + 1] !~ /^exit status: /)
				print ".PP"
			continue
		}
		if (is_header(i)) {
			section = substr(L[i], 1, length(L[i]) - 1)
			if (mode == "man")
				print ".SH \"" toupper(roff(section)) "\""
			continue
		}
		if (L[i] ~ /^exit status: /) {
			section = "exit status"
			if (mode == "man")
				print ".SH \"EXIT STATUS\"\n" roff(substr(L[i], 14))
			continue
		}
		if (is_entry(i)) {
			split_entry(i)
			body = DESC
			while (i < N && is_cont(i + 1))
				body = body (body == "" ? "" : "\n") trim(L[++i])
			if (mode == "man") {
				print ".TP\n\\fB" roff(TAG) "\\fR"
				if (body != "") {
					n = split(body, parts, "\n")
					for (k = 1; k <= n; k++)
						print roff(parts[k])
				}
			} else if (mode == "options") {
				t = TAG
				while (match(t, /--[a-z][a-z0-9-]*/)) {
					print substr(t, RSTART, RLENGTH)
					t = substr(t, RSTART + RLENGTH)
				}
			} else if (mode == "commands" && section == "commands") {
				gsub(/\n/, " ", body)
				print TAG "\t" body
			}
			continue
		}
		if (mode == "man")
			print roff(trim(L[i]))
	}
	if (mode == "man" && see != "") {
		print ".SH \"SEE ALSO\""
		n = split(see, parts, " ")
		for (k = 1; k <= n; k++)
			print "\\fB" roff(parts[k]) "\\fR(1)" (k < n ? "," : "")
	}
}
