#!/bin/bash
# SPDX-License-Identifier: MIT
#
# mkman.sh KERNEL_DOC VERSION OUTDIR HEADER...: libbaton's man3 pages from
# the kernel-doc comments of HEADERs. kernel-doc -man writes one stream of
# section-9 pages ("Kernel Hacker's Manual"); this splits it into OUTDIR/
# NAME.3 per function and NAME.3type per struct, retitles them for
# libbaton, adds the #include and link line to each function's synopsis,
# and a .so page for each sized bulk form (baton_spsc_try_push_bulk8 ..)
# pointing at its generic function. Any kernel-doc warning is an error.
set -euo pipefail

kdoc=$1 version=$2 out=$3
shift 3

rm -rf "$out"
mkdir -p "$out"
raw=$(mktemp)
warn=$(mktemp)
trap 'rm -f "$raw" "$warn"' EXIT

# A fixed date keeps the pages reproducible: the last change of a header.
KBUILD_BUILD_TIMESTAMP=$(date -u -r "$(ls -t "$@" | head -n 1)" '+%Y-%m-%d')
export KBUILD_BUILD_TIMESTAMP
perl "$kdoc" -man "$@" >"$raw" 2>"$warn"
if [[ -s $warn ]]; then
	cat "$warn" >&2
	echo "mkman.sh: kernel-doc warnings (above) in $*" >&2
	exit 1
fi

awk -v out="$out" -v version="$version" '
function th_field(line, n,    i, q, f) {
	# the n-th double-quoted field of a .TH line
	q = 0
	while (match(line, /"[^"]*"/)) {
		q++
		f = substr(line, RSTART + 1, RLENGTH - 2)
		if (q == n)
			return f
		line = substr(line, RSTART + RLENGTH)
	}
	return ""
}
/^\.TH / {
	if (file != "")
		close(file)
	title = th_field($0, 2)
	date = th_field($0, 3)
	if (title ~ /^struct /) {
		name = substr(title, 8)
		sect = "3type"
	} else {
		name = title
		sect = "3"
	}
	file = out "/" name "." sect
	printf ".TH \"%s\" %s \"%s\" \"libbaton %s\" \"libbaton Manual\"\n", \
		name, sect, date, version > file
	next
}
file == "" { next }
/^\.SH SYNOPSIS$/ && sect == "3" {
	print > file
	print ".nf" > file
	print ".B #include <baton/baton.h>" > file
	print ".PP" > file
	print "Link with \\fI\\-lbaton\\fP (\\fIpkg\\-config \\-\\-cflags \\-\\-libs baton\\fP)." > file
	print ".fi" > file
	print ".PP" > file
	next
}
{ print > file }
' "$raw"

# The sized bulk forms (BATON__BULK_SIZED in baton.h): one page each, the
# generic function's.
for sz in 8 16 32 64; do
	for f in baton_spsc_try_push_bulk baton_spsc_try_pop_bulk \
		baton_mpsc_push_bulk baton_mpsc_try_pop_bulk; do
		[[ -f $out/$f.3 ]] || { echo "mkman.sh: no page for $f" >&2; exit 1; }
		echo ".so man3/$f.3" >"$out/$f$sz.3"
	done
done
echo "mkman.sh: $(ls "$out" | wc -l) pages in $out"
