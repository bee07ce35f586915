#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-fastpath-asm.sh [OUTDIR]: prove the inline SPSC fast path of
# lib/include/baton.h compiles, at -O2, to code without a lock prefix,
# xchg, mfence, lfence or sfence. fastpath_asm.c wraps each inline in a
# noinline function; this script disassembles them one by one.
#
# It then proves it can fail: three deliberately fenced builds of the same
# file (a seq_cst fence, a seq_cst store, a locked RMW) must each be
# rejected. Output is TAP; the exit status is non-zero on any failure.

set -u

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
OUT=${1:-$TOP/build/host/asm}
CC=${CC:-cc}
OBJDUMP=${OBJDUMP:-objdump}
FUNCS="fp_prod_reserve fp_prod_submit fp_cons_peek fp_cons_release fp_try_push fp_try_pop"
BAD='(^|[[:space:]])(lock|xchg[bwlq]?|mfence|lfence|sfence)([[:space:]]|$)'
NFUNCS=6
NSELF=3

echo "TAP version 13"
case $(uname -m) in
x86_64|i?86) ;;
*)
	echo "1..1"
	echo "ok 1 fastpath-asm # SKIP the forbidden-instruction list is x86's"
	exit 0
	;;
esac
echo "1..$((NFUNCS + NSELF))"

mkdir -p "$OUT" || exit 1
n=0
fail=0

# compile VARIANT OBJ: FASTPATH_FENCED=VARIANT (0: the real fast path).
compile() {
	$CC -std=c11 -O2 -g -Wall -Wextra -Werror \
		-I"$TOP/lib/include" -I"$TOP/uapi" \
		-DFASTPATH_FENCED="$1" -c "$HERE/fastpath_asm.c" -o "$2"
}

# body OBJ FUNC: the instructions of one function, mnemonics and operands.
body() {
	$OBJDUMP -d --no-show-raw-insn "$1" | awk -v f="<$2>:" '
		index($0, f) { p = 1; next }
		p && /^[[:space:]]*$/ { exit }
		p { sub(/^[^\t]*\t/, ""); print }'
}

# check OBJ FUNC: 0 if FUNC is present and clean, 1 if it holds a
# forbidden instruction (printed), 2 if it is missing.
check() {
	b=$(body "$1" "$2")
	[ -n "$b" ] || return 2
	hits=$(printf '%s\n' "$b" | grep -E "$BAD")
	[ -z "$hits" ] && return 0
	printf '%s\n' "$hits" | sed "s/^/# $2: /"
	return 1
}

obj="$OUT/fastpath_asm.o"
if ! compile 0 "$obj"; then
	echo "# could not compile fastpath_asm.c"
	rm -f "$obj"
fi
for f in $FUNCS; do
	n=$((n + 1))
	if [ ! -f "$obj" ]; then
		echo "not ok $n fastpath-asm: $f (no object)"
		fail=1
		continue
	fi
	check "$obj" "$f"
	case $? in
	0) echo "ok $n fastpath-asm: $f has no lock/xchg/fence" ;;
	1) echo "not ok $n fastpath-asm: $f has a lock/xchg/fence"; fail=1 ;;
	*) echo "not ok $n fastpath-asm: $f not found in the object"; fail=1 ;;
	esac
done

# The self-test: each fenced variant must be caught in the function it
# changes.
for v in 1 2 3; do
	n=$((n + 1))
	case $v in
	1) f=fp_prod_submit; what="seq_cst fence" ;;
	2) f=fp_prod_submit; what="seq_cst store" ;;
	3) f=fp_cons_release; what="locked RMW" ;;
	esac
	vobj="$OUT/fastpath_asm_fenced$v.o"
	if ! compile "$v" "$vobj"; then
		echo "not ok $n fastpath-asm self-test: variant $v does not compile"
		fail=1
		continue
	fi
	check "$vobj" "$f" >/dev/null
	if [ $? -eq 1 ]; then
		echo "ok $n fastpath-asm self-test: $what in $f is caught"
	else
		echo "not ok $n fastpath-asm self-test: $what in $f went unnoticed"
		fail=1
	fi
done

exit $fail
