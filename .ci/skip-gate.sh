#!/bin/bash
# .ci/skip-gate.sh: owns the rule that a skip in `make check` is expected.
# A test that skips cannot fail, so CI accepts a skip only for a reason
# .ci/expected-skips lists for that stage (TSan cannot follow a fork, a
# kernel without the fault-injection knobs, a machine too busy to stage a
# race). Any other skip (the module not loaded, a helper not built, a
# kernel option the matrix lost) is a failure: it would otherwise pass
# silently, as a test that no longer tests.
#
#   skip-gate.sh STAGE [RULES] <TAP >TAP
#
# Copies the TAP lines on stdin to stdout; a skip ("# SKIP why") whose
# reason no rule of RULES (default: .ci/expected-skips beside this script)
# matches for STAGE becomes
#   not ok N NAME: unexpected skip (no rule in .ci/expected-skips): why
# Rules: "STAGE-GLOB REASON-GLOB" per line (bash patterns, the reason may
# have spaces; # starts a comment line).
set -euo pipefail

stage=${1:?usage: skip-gate.sh STAGE [RULES] <TAP}
rules=${2:-$(dirname "$0")/expected-skips}
stage_globs=() reason_globs=()
while read -r sglob rglob; do
	[[ -z $sglob || $sglob == \#* ]] && continue
	stage_globs+=("$sglob")
	reason_globs+=("$rglob")
done <"$rules"

expected() {
	local reason=$1 i
	for i in "${!stage_globs[@]}"; do
		# shellcheck disable=SC2053 # the rules are patterns
		[[ $stage == ${stage_globs[i]} && $reason == ${reason_globs[i]} ]] &&
			return 0
	done
	return 1
}

# A skip as TAP (and check.sh's count) has it: "# skip", any case, any
# suffix ("# SKIP: why", "# skipped why").
skip_re='^(not )?ok( [0-9]+)?( -)? ?(.*[^[:space:]])?[[:space:]]*#[[:space:]]*[Ss][Kk][Ii][Pp][^[:space:]]*([[:space:]]+(.*))?$'
while IFS= read -r line; do
	if [[ $line =~ $skip_re ]] && ! expected "${BASH_REMATCH[6]}"; then
		printf 'not ok%s - %s: unexpected skip (no rule in .ci/expected-skips): %s\n' \
			"${BASH_REMATCH[2]}" "${BASH_REMATCH[4]:-?}" "${BASH_REMATCH[6]:-no reason given}"
	else
		printf '%s\n' "$line"
	fi
done
