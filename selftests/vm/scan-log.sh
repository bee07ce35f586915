#!/bin/bash
# selftests/vm/scan-log.sh: owns the verdict on a VM's kernel log: which
# lines are a kernel report (a failure of the run), and which KCSAN
# reports are known races inside the kernel itself, excused by name.
#
# Usage: scan-log.sh LOG
# Prints, one per line:
#   bad N                  the number of report lines (0: clean)
#   first TEXT             the first of them, with the site appended, so a
#                          CI summary names it: a KCSAN report's first
#                          frames; for any other report, the RIP and the
#                          first reliable frames of the call trace printed
#                          within the next 80 lines (an oops under
#                          panic=-1 leaves no other trace in a CI summary)
#   excused NAME: TEXT     one per excused KCSAN report
#
# The debug kernels' reports start with BUG: (KASAN, KCSAN's data races,
# sleeping in atomic context, scheduling while atomic, lockdep's invalid
# wait context), WARNING: (lockdep: circular or recursive locking,
# inconsistent lock state, suspicious RCU usage), UBSAN: or "unreferenced
# object" (kmemleak, in the report /init dumps after its scan); the names
# are also listed on their own, in case a report's first line changes.
# Debian's kernels (PREEMPT_RT included) lack DEBUG_ATOMIC_SLEEP: there a
# sleep in atomic context shows only when it schedules ("scheduling while
# atomic"); the kcsan kernel has it.
#
# Known kernel races. A KCSAN report is excused only when no frame in it
# is baton's (no "[baton]") and its frames match an entry below, each
# with the reason the race is the kernel's and benign; baton's own races
# are fixed or annotated with data_race() in the module, never listed
# here (Documentation/building.rst, "KCSAN").
#  vmstat-need-update: mm/vmstat.c need_update(), from vmstat_shepherd
#    (the worker that folds per-CPU statistics), looks at another CPU's
#    per-CPU counter deltas with a plain memchr_inv() while that CPU
#    updates them with this_cpu ops, which KCSAN does not instrument, so
#    the report is "race at unknown origin". The look is a hint by design
#    (the kernel comment: "the fast way of checking"); a stale answer only
#    defers the fold to the next round.
set -euo pipefail

log=${1:?usage: scan-log.sh LOG}

bad_re='BUG:|kernel BUG at|BUG [^ ]+ \(|WARNING:|Oops|general protection|Call Trace|Kernel panic|UBSAN:|KASAN:|KCSAN:|KFENCE:|soft lockup|hard LOCKUP|rcu: INFO:|self-detected stall|blocked for more than|list_(add|del) corruption|Unable to handle kernel|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|sleeping function called|scheduling while atomic|Invalid wait context|data-race in|unreferenced object|suspected memory leak'

# name<TAB>ERE over the report's frames, joined by spaces in stack order
known=$'vmstat-need-update\t^memchr_inv (need_update|vmstat_shepherd)( |$)'

awk -v bad_re="$bad_re" -v known="$known" '
function strip(s) {
	sub(/^\[ *[0-9]+\.[0-9]+\] ?/, "", s)
	return s
}
function frame_of(s,	f) {
	# " func+0x31/0x10d" or " func+0x31/0x10d [module]"
	if (s !~ /^ [A-Za-z_][A-Za-z0-9_.]*\+0x[0-9a-f]+\/0x[0-9a-f]+/)
		return ""
	f = s
	sub(/^ /, "", f)
	sub(/\+.*/, "", f)
	return f
}
function known_race(frames,	n, i, e, parts) {
	n = split(known, e, "\n")
	for (i = 1; i <= n; i++) {
		split(e[i], parts, "\t")
		if (frames ~ parts[2])
			return parts[1]
	}
	return ""
}
# The site of the first non-KCSAN report: its kernel RIP ("RIP:
# 0010:f+0x1/0x2"; the user registers of a syscall, "RIP: 0033:", are not
# it) and up to 6 reliable frames ("? f+..." are guesses, left out).
function add_context(s,	f) {
	ctx_left--
	if (ctx_rip == "" && s ~ /^RIP: 0010:/) {
		ctx_rip = s
		sub(/^RIP: 0010:/, "", ctx_rip)
		return
	}
	f = frame_of(s)
	if (f == "" || ctx_n >= 6)
		return
	ctx_frames = ctx_n++ ? ctx_frames " < " f : f
}
# End of a KCSAN report: excused, or every report line in it counted. An
# excused report: its own title (its first line) is all it excuses; another
# CPU report printed inside it (a WARN between its lines) still counts.
function close_block(	name, i, j, first_frames, k, what, from) {
	if (!inblk)
		return
	inblk = 0
	from = 1
	name = blk_baton ? "" : known_race(blk_frames)
	if (name != "") {
		# The console and the dmesg dump both carry it: list it once.
		what = name ": " blk_title " (" blk_frames ")"
		if (!(what in seen)) {
			seen[what] = 1
			excused[++nexc] = what
		}
		from = 2
	}
	for (i = from; i <= blk_n; i++) {
		if (blk[i] !~ bad_re)
			continue
		nbad++
		if (first == "") {
			first = blk[i]
			if (blk_frames != "") {
				split(blk_frames, k, " ")
				first_frames = k[1]
				for (j = 2; j <= 6 && (j in k); j++)
					first_frames = first_frames " < " k[j]
				first = first " [" first_frames "]"
			}
		}
	}
}
{
	s = strip($0)
	if (s ~ /BUG: KCSAN:/) {
		close_block()
		inblk = 1
		blk_n = 0
		blk_title = s
		blk_frames = ""
		blk_baton = 0
	} else if (inblk && s ~ /^=+$/) {
		close_block()
		next
	}
	if (inblk) {
		blk[++blk_n] = s
		if (s ~ /\[baton\]/)
			blk_baton = 1
		f = frame_of(s)
		if (f != "")
			blk_frames = blk_frames == "" ? f : blk_frames " " f
		next
	}
	if (ctx_left > 0)
		add_context(s)
	if (s ~ bad_re) {
		nbad++
		if (first == "") {
			first = s
			ctx_left = 80
		}
	}
}
END {
	close_block()
	print "bad " nbad + 0
	if (first != "" && (ctx_rip != "" || ctx_n))
		first = first " [" (ctx_rip != "" ? "RIP " ctx_rip : "") \
			(ctx_rip != "" && ctx_n ? "; " : "") ctx_frames "]"
	if (first != "")
		print "first " first
	for (i = 1; i <= nexc; i++)
		print "excused " excused[i]
}
' "$log"
