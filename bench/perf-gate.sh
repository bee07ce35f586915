#!/bin/bash
# bench/perf-gate.sh: owns the perf gate (`make perf-gate`) and its self-test
# (`make perf-gate-selftest`). A same-runner ratchet: the base revision and
# the working tree are both rebuilt and measured in this one job, and the
# measure is callgrind's instruction count per operation, which does not
# care how busy the machine is (timings on these shared 2-CPU hosts do).
#
#   bench/perf-gate.sh              base = $BASE (default HEAD~1) vs the tree
#   bench/perf-gate.sh --selftest   proves the gate can fail: the tree against
#                                   itself, once clean (must pass, +0.00%)
#                                   and once with a regression injected into
#                                   the head harness (must fail every path)
#
# How: lib/ and uapi/ of each side are built into build/perf-gate/<side>/
# (the base from `git archive $BASE`, which changes no git state; the head
# copied from the working tree), each with CFLAGS=-O2. The harnesses are
# HEAD's bench/gate_*.c for both sides (the base may predate the gate),
# linked statically against that side's libbaton.a. Each harness names the
# symbol it needs (`gate-requires:`) and its paths (`gate-paths:`); a path
# whose symbol a side's headers lack is skipped, and the TAP line says so.
# Each path runs N calls of its gate_op_<path> function under
#   valgrind --tool=callgrind --collect-atstart=no --toggle-collect=gate_op_<path>
# and the collected instructions / N is the figure (exact, deterministic).
#
# Output: a TAP line per path ("perf-gate: <path> ..."), then a table.
# Fails (exit 1) when any path's instructions per op rise by more than
# $GATE_MAX_PCT (default 2) percent, or a harness that both sides should
# build does not build or run. Env: BASE, GATE_N (default 100000),
# GATE_MAX_PCT, CC.
#
# A deliberate cost is accepted in bench/perf-gate.accept, one line per
# path: "<path> <max-percent> <why>". A line counts only when the base's
# copy of that file lacks it, i.e. in the change that adds it: once the
# cost is in the base, the line is inert and the path is ratcheted at its
# new figure again. The accepted reason is printed in the TAP line.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"

BASE=${BASE:-HEAD~1}
GATE_N=${GATE_N:-100000}
GATE_MAX_PCT=${GATE_MAX_PCT:-2}
CC=${CC:-cc}
out=$root/build/perf-gate
HFLAGS=(-O2 -std=c11 -Wall -Wextra -Werror -static)

selftest=0
[[ ${1:-} == --selftest ]] && selftest=1

log() { echo "# $*"; }

# build_lib SIDE: lib/ and uapi/ under $out/SIDE/src are there; build libbaton.a.
build_lib() {
	local side=$1
	make -s -C "$out/$side/src/lib" clean >/dev/null 2>&1 || true
	make -s -C "$out/$side/src/lib" libbaton.a CC="$CC" CFLAGS=-O2 \
		>"$out/$side/lib-build.log" 2>&1
}

# prepare_head: the working tree's lib/ and uapi/ (uncommitted changes too).
prepare_head() {
	rm -rf "$out/head"
	mkdir -p "$out/head/src"
	cp -r lib uapi "$out/head/src/"
	rm -rf "$out/head/src/lib/obj"
	build_lib head
}

# prepare_base: $BASE's lib/ and uapi/, without touching the git state.
prepare_base() {
	rm -rf "$out/base"
	mkdir -p "$out/base/src"
	git rev-parse --verify -q "$BASE^{commit}" >/dev/null || return 2
	git archive --format=tar "$BASE" lib uapi | tar -x -C "$out/base/src"
	build_lib base
}

# field FILE KEY: the value of a "KEY: value" line in a harness's comment.
field() {
	sed -n "s/^ \* $2: *//p" "$1" | head -n 1
}

# has_symbol SIDE SYM: whether SIDE's public headers name SYM.
has_symbol() {
	grep -rqw -- "$2" "$out/$1/src/lib/include"
}

# build_harness SIDE SRC [EXTRA_CFLAGS...]: compile SRC against SIDE.
build_harness() {
	local side=$1 src=$2 bin
	shift 2
	bin=$out/$side/$(basename "$src" .c)
	"$CC" "${HFLAGS[@]}" "$@" -I"$out/$side/src/uapi" \
		-I"$out/$side/src/lib/include" -o "$bin" "$src" \
		"$out/$side/src/lib/libbaton.a" -lpthread \
		>"$bin.build.log" 2>&1
}

# measure SIDE BIN PATH: instructions per call of gate_op_PATH, or fail.
measure() {
	local side=$1 bin=$2 path=$3 cg calls ir
	cg=$out/$side/$path.callgrind
	BATON_BACKEND=memfd valgrind --tool=callgrind --collect-atstart=no \
		--toggle-collect="gate_op_$path" --callgrind-out-file="$cg" \
		"$bin" "$path" "$GATE_N" >"$cg.stdout" 2>"$cg.stderr" || return 1
	calls=$(sed -n "s/^gate: path=$path calls=\([0-9]*\)$/\1/p" "$cg.stdout")
	ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$cg")
	[[ -n $calls && -n $ir && $calls -gt 0 ]] || return 1
	awk -v ir="$ir" -v n="$calls" 'BEGIN { printf "%.2f\n", ir / n }'
}

# accepted PATH: "<max-percent> <why>" if the tree's perf-gate.accept has a
# line for PATH that the base's copy lacks (this change accepts a cost).
accepted() {
	local line
	[[ -f $here/perf-gate.accept ]] || return 1
	line=$(grep -E "^$1[[:space:]]" "$here/perf-gate.accept" | head -n 1) || return 1
	[[ -n $line ]] || return 1
	if [[ $BASE != self ]] &&
	   git show "$BASE:bench/perf-gate.accept" 2>/dev/null | grep -qxF -- "$line"; then
		return 1
	fi
	echo "${line#"$1"}" | sed 's/^[[:space:]]*//'
}

# gate INJECT: compare base and head for every path of every harness.
# (Acceptances are not consulted with INJECT=1: the self-test must fail.)
# INJECT=1 builds the head harness with -DBATON_GATE_INJECT_REGRESSION.
# Prints TAP lines and the table; returns 1 when a path failed.
gate() {
	local inject=$1 failed=0 src req paths p b h bpath hpath verdict
	local -a hx=()
	((inject)) && hx=(-DBATON_GATE_INJECT_REGRESSION)
	local table=$out/table.txt
	printf '%-12s %12s %12s %9s  %s\n' path base head delta verdict >"$table"
	for src in "$here"/gate_*.c; do
		req=$(field "$src" gate-requires)
		paths=$(field "$src" gate-paths)
		if [[ -z $req || -z $paths ]]; then
			echo "not ok - perf-gate: $(basename "$src") lacks gate-requires/gate-paths"
			failed=1
			continue
		fi
		bpath="" hpath=""
		has_symbol base "$req" && bpath=$out/base/$(basename "$src" .c)
		has_symbol head "$req" && hpath=$out/head/$(basename "$src" .c)
		if [[ -n $bpath ]] && ! build_harness base "$src"; then
			log "$(basename "$src") does not build against the base:"
			sed 's/^/#   /' "$bpath.build.log" | head -n 20
			bpath=FAIL
		fi
		if [[ -n $hpath ]] && ! build_harness head "$src" "${hx[@]}"; then
			log "$(basename "$src") does not build against the head:"
			sed 's/^/#   /' "$hpath.build.log" | head -n 20
			hpath=FAIL
		fi
		for p in $paths; do
			if [[ -z $hpath ]]; then
				echo "ok - perf-gate: $p # SKIP head has no $req"
				verdict="skip (head has no $req)"
				b=- h=-
			elif [[ -z $bpath ]]; then
				b=- h=-
				[[ $hpath != FAIL ]] && h=$(measure head "$hpath" "$p" || echo ERR)
				if [[ $hpath == FAIL ]]; then
					echo "ok - perf-gate: $p # SKIP base $BASE has no $req (new path), and $(basename "$src") does not build against head yet"
				else
					echo "ok - perf-gate: $p # SKIP base $BASE has no $req (new path, nothing to compare; head $h instructions/op)"
				fi
				verdict="skip (new in head)"
			elif [[ $bpath == FAIL || $hpath == FAIL ]]; then
				echo "not ok - perf-gate: $p: harness $(basename "$src") does not build (see $out/*/$(basename "$src" .c).build.log)"
				verdict=FAIL failed=1 b=- h=-
			else
				b=$(measure base "$bpath" "$p" || echo ERR)
				h=$(measure head "$hpath" "$p" || echo ERR)
				if [[ $b == ERR || $h == ERR ]]; then
					echo "not ok - perf-gate: $p: harness run failed (see $out/*/$p.callgrind.stderr)"
					verdict=FAIL failed=1
				else
					local d
					d=$(awk -v b="$b" -v h="$h" 'BEGIN { printf "%+.2f", (h - b) * 100 / b }')
					local acc="" amax
					((inject)) || acc=$(accepted "$p") || acc=""
					amax=${acc%% *}
					if [[ -n $acc ]] && awk -v d="$d" -v m="$GATE_MAX_PCT" -v a="$amax" \
						'BEGIN { exit !(d + 0 > m + 0 && d + 0 <= a + 0) }'; then
						echo "ok - perf-gate: $p: $b -> $h instructions/op ($d%, accepted up to +$amax% by bench/perf-gate.accept: ${acc#* })"
						verdict=accepted
					elif awk -v d="$d" -v m="$GATE_MAX_PCT" 'BEGIN { exit !(d + 0 > m + 0) }'; then
						echo "not ok - perf-gate: $p: $b -> $h instructions/op ($d% > +$GATE_MAX_PCT%)"
						verdict=FAIL failed=1
					else
						echo "ok - perf-gate: $p: $b -> $h instructions/op ($d%)"
						verdict=ok
					fi
					printf '%-12s %12s %12s %8s%%  %s\n' "$p" "$b" "$h" "$d" "$verdict" >>"$table"
					continue
				fi
			fi
			printf '%-12s %12s %12s %9s  %s\n' "$p" "$b" "$h" - "$verdict" >>"$table"
		done
	done
	return $failed
}

main_gate() {
	local rc=0 base_desc
	mkdir -p "$out"
	base_desc=$(git rev-parse --short "$BASE^{commit}" 2>/dev/null || echo "?")
	log "perf gate: base $BASE ($base_desc) vs the working tree at $(git rev-parse --short HEAD 2>/dev/null || echo '?'); $GATE_N calls per path; fail above +$GATE_MAX_PCT%"
	if ! prepare_head; then
		echo "not ok - perf-gate: head lib/ does not build (see $out/head/lib-build.log)"
		return 1
	fi
	prepare_base || rc=$?
	if ((rc == 2)); then
		echo "ok - perf-gate # SKIP no base revision $BASE in this clone"
		return 0
	elif ((rc != 0)); then
		echo "ok - perf-gate # SKIP base $BASE lib/ does not build (see $out/base/lib-build.log)"
		return 0
	fi
	rc=0
	gate 0 || rc=1
	echo "# instructions per operation (callgrind, $GATE_N calls), base $BASE ($base_desc) -> head (working tree):"
	sed 's/^/#   /' "$out/table.txt"
	return $rc
}

# The self-test: the tree against itself must pass at +0.00%, and with a
# regression injected into every head harness must fail on every path.
main_selftest() {
	local rc=0 clean inj p n_paths n_fail
	mkdir -p "$out"
	log "perf gate self-test: the working tree against itself, clean, then with -DBATON_GATE_INJECT_REGRESSION"
	if ! prepare_head; then
		echo "not ok - perf-gate-selftest: lib/ does not build (see $out/head/lib-build.log)"
		return 1
	fi
	rm -rf "$out/base"
	mkdir -p "$out/base"
	cp -r "$out/head/src" "$out/base/src"
	BASE=self
	clean=$(gate 0) || true
	echo "$clean" | sed 's/^/#   clean: /'
	if echo "$clean" | grep -q '^not ok' ||
	   ! echo "$clean" | grep -Eq '^ok .*\(\+0\.00%\)$' ||
	   echo "$clean" | grep -E 'instructions/op' | grep -vq '(+0\.00%)$'; then
		echo "not ok - perf-gate-selftest: the tree against itself did not pass at +0.00%"
		rc=1
	else
		echo "ok - perf-gate-selftest: the tree against itself passes, every path +0.00%"
	fi
	inj=$(gate 1) && {
		echo "not ok - perf-gate-selftest: the gate PASSED with a regression injected"
		rc=1
	}
	echo "$inj" | sed 's/^/#   injected: /'
	n_paths=$(echo "$inj" | grep -Ec '^(not )?ok - perf-gate: [a-z_]+:' || true)
	n_fail=$(echo "$inj" | grep -Ec '^not ok - perf-gate: [a-z_]+: .*instructions/op' || true)
	for p in $(echo "$inj" | sed -n 's/^\(not \)\{0,1\}ok - perf-gate: \([a-z_]*\): .*instructions\/op.*/\2/p'); do
		if echo "$inj" | grep -q "^not ok - perf-gate: $p: .*instructions/op"; then
			echo "ok - perf-gate-selftest: injected regression on $p fails the gate ($(echo "$inj" | sed -n "s/^not ok - perf-gate: $p: //p"))"
		else
			echo "not ok - perf-gate-selftest: injected regression on $p was not caught"
			rc=1
		fi
	done
	if ((n_paths == 0 || n_fail == 0)); then
		echo "not ok - perf-gate-selftest: no path measured with the regression injected"
		rc=1
	fi
	sed 's/^/#   /' "$out/table.txt"
	return $rc
}

if ((selftest)); then
	main_selftest
else
	main_gate
fi
