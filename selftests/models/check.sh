#!/bin/bash
# selftests/models/check.sh: owns running every spin model in this directory,
# every variant, and reporting the results as TAP.
#
# Variant 0 of a model is the protocol as implemented and must verify with
# "errors: 0". Every other variant is a deliberately broken protocol and must
# FAIL (errors > 0): that shows the model is able to catch the bug, so a pass
# of variant 0 means something. Variants are found from the model text
# (every `VARIANT == n` / `VARIANT != n`), so a new variant needs no edit here.
#
# Usage: check.sh [model.pml ...]   (default: all *.pml next to this script)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
for tool in spin gcc; do
	command -v "$tool" >/dev/null || { echo "Bail out! $tool not installed (make deps)"; exit 1; }
done

if (($#)); then models=("$@"); else models=("$here"/*.pml); fi

work=$(mktemp -d "${TMPDIR:-/tmp}/baton-models.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Collect (model, variant) pairs first so the plan line is right.
jobs=()
for m in "${models[@]}"; do
	vs=$(grep -oE 'VARIANT *[!=]= *[0-9]+' "$m" | grep -oE '[0-9]+$' || true)
	for v in $(printf '0\n%s\n' "$vs" | sed '/^$/d' | sort -un); do
		jobs+=("$m:$v")
	done
done

echo "TAP version 13"
echo "1..${#jobs[@]}"
n=0 failed=0
for j in "${jobs[@]}"; do
	m=${j%:*} v=${j##*:} n=$((n + 1))
	name=$(basename "$m" .pml)
	d="$work/$name.$v"
	mkdir -p "$d"
	cp "$m" "$d/"
	start=$SECONDS
	if ! (cd "$d" && spin -DVARIANT="$v" -a "$name.pml" >spin.out 2>&1 &&
		gcc -O2 -DNFAIR=3 -o pan pan.c >gcc.out 2>&1 &&
		{ ./pan -a -f >pan.out 2>&1 || true; }); then
		echo "not ok $n - $name variant $v: spin or gcc failed"
		sed 's/^/# /' "$d"/spin.out "$d"/gcc.out 2>/dev/null | head -20
		failed=$((failed + 1))
		continue
	fi
	errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' "$d/pan.out" | tail -n 1)
	kind=$(grep -oE '^pan:[0-9]+: [a-z][a-z ]*' "$d/pan.out" | head -n 1 | sed -e 's/^pan:[0-9]*: //' -e 's/ *$//' || true)
	states=$(awk '/states, stored/ { print $1; exit }' "$d/pan.out")
	info="errors: ${errors:-?}${kind:+ ($kind)}, ${states:-?} states, $((SECONDS - start))s"
	if [[ -z "$errors" ]]; then
		echo "not ok $n - $name variant $v: no verdict from pan"
		sed 's/^/# /' "$d/pan.out" | tail -20
		failed=$((failed + 1))
	elif [[ "$v" == 0 ]] &&
		grep -qE 'Search not completed|max search depth too small|out of memory' "$d/pan.out"; then
		# errors: 0 of a search cut short proves nothing
		echo "not ok $n - $name variant 0: the search did not complete: $info"
		grep -E 'Search not completed|max search depth|out of memory' "$d/pan.out" | sed 's/^/# /' | head -5
		failed=$((failed + 1))
	elif [[ "$v" == 0 && "$errors" == 0 ]]; then
		echo "ok $n - $name variant 0 verifies: $info"
	elif [[ "$v" == 0 ]]; then
		echo "not ok $n - $name variant 0 must verify: $info"
		sed 's/^/# /' "$d/pan.out" | head -20
		failed=$((failed + 1))
	elif ((errors > 0)); then
		echo "ok $n - $name variant $v is caught: $info"
	else
		echo "not ok $n - $name variant $v should fail but verifies: $info"
		failed=$((failed + 1))
	fi
done
echo "# models: $((n - failed)) ok, $failed not ok"
((failed == 0))
