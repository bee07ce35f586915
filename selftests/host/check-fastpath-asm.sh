#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-fastpath-asm.sh [OUTDIR]: prove the inline SPSC fast path of
# lib/include/baton.h, baton_epoch_enter/exit and the pool's inline
# allocation and free compile, at -O2, to
# code without a lock prefix, xchg, mfence, lfence or sfence. fastpath_asm.c wraps each inline in a
# noinline function; this script disassembles them one by one.
#
# The bulk copies (SPSC push/pop, the MPSC consumer's batch) are held to
# the same rule.
#
# It then proves it can fail: four deliberately fenced builds of the same
# file (a seq_cst fence, a seq_cst store, a locked RMW, the textbook
# seq_cst epoch announcement) must each be rejected. Output is TAP; the exit status is non-zero on any failure.
#
# Order: at every store-then-load site (the index store, then the load of
# the peer's waiting flag: E; epoch exit's T; the pool allocation's OWNED
# store, then its reap word: Y13) the store comes first in the
# code gcc and clang emit at -O2, -O3 and -Os, and a build that loads the
# flag first is rejected.
#
# MPSC: the consumer's peek, release and try_pop and the producer's
# publication obey the same rule; the blocking push (baton_mpsc_push) holds exactly
# one locked instruction, a lock xadd (the ticket's fetch_add), and no
# cmpxchg, and a build that reserves with a CAS loop must be rejected.

set -u

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
OUT=${1:-$TOP/build/host/asm}
CC=${CC:-cc}
OBJDUMP=${OBJDUMP:-objdump}
FUNCS="fp_prod_reserve fp_prod_submit fp_cons_peek fp_cons_release fp_try_push fp_try_pop fp_spsc_push fp_spsc_pop fp_epoch_enter fp_epoch_exit fp_spsc_push_bulk64 fp_spsc_pop_bulk64 fp_pool_alloc fp_pool_free"
BAD='(^|[[:space:]])(lock|xchg[bwlq]?|mfence|lfence|sfence)([[:space:]]|$)'
NFUNCS=14
NSELF=4
MPSC_FUNCS="fp_mpsc_cons_peek fp_mpsc_cons_release fp_mpsc_prod_publish fp_mpsc_try_pop fp_mpsc_pop fp_mpsc_pop_bulk64"
NMPSC=8
# Store-then-load order (E, T): function:stored fields:loaded field. The
# index store must come before the load of the peer's flag in the emitted
# code, for gcc and clang at each level (the signal fence's job).
ORDER="fp_prod_submit:tail:cons_waiting fp_cons_release:head:prod_waiting
fp_try_push:tail:cons_waiting fp_try_pop:head:prod_waiting
fp_spsc_push:tail:cons_waiting fp_spsc_pop:head:prod_waiting
fp_mpsc_prod_publish:seq:cons_waiting fp_mpsc_push:seq:cons_waiting
fp_mpsc_cons_release:seq,head:prod_waiting
fp_mpsc_try_pop:seq,head:prod_waiting fp_mpsc_pop:seq,head:prod_waiting
fp_epoch_exit:ann:sync_epoch
fp_spsc_push_bulk64:tail:cons_waiting fp_spsc_pop_bulk64:head:prod_waiting
fp_mpsc_pop_bulk64:seq,head:prod_waiting
fp_pool_alloc:pool_desc:pool_reap"
ORDER_CCS="gcc clang"
ORDER_OPTS="-O2 -O3 -Os"
NORDER=8

echo "TAP version 13"
case $(uname -m) in
x86_64|i?86) ;;
*)
	echo "1..1"
	echo "ok 1 fastpath-asm # SKIP the forbidden-instruction list is x86's"
	exit 0
	;;
esac
echo "1..$((NFUNCS + NSELF + NMPSC + NORDER))"

mkdir -p "$OUT" || exit 1
n=0
fail=0

# compile VARIANT OBJ [CC [OPT]]: FASTPATH_FENCED=VARIANT (0: the real
# fast path).
compile() {
	${3:-$CC} -std=c11 "${4:--O2}" -g -Wall -Wextra -Werror \
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
	# "xchg %ax,%ax" is objdump's name for the 2-byte nop (66 90) that
	# pads a loop head: no memory operand, not a locked instruction.
	hits=$(printf '%s\n' "$b" | grep -E "$BAD" | grep -vE 'xchg[[:space:]]+%ax,%ax')
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
for v in 1 2 3 4; do
	n=$((n + 1))
	case $v in
	1) f=fp_prod_submit; what="seq_cst fence" ;;
	2) f=fp_prod_submit; what="seq_cst store" ;;
	3) f=fp_cons_release; what="locked RMW" ;;
	4) f=fp_epoch_enter; what="seq_cst announcement (the textbook xchg)" ;;
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

# MPSC, see the top.
for f in $MPSC_FUNCS; do
	n=$((n + 1))
	check "$obj" "$f"
	case $? in
	0) echo "ok $n fastpath-asm: $f has no lock/xchg/fence" ;;
	1) echo "not ok $n fastpath-asm: $f has a lock/xchg/fence"; fail=1 ;;
	*) echo "not ok $n fastpath-asm: $f not found in the object"; fail=1 ;;
	esac
done

# check_push OBJ: 0 if fp_mpsc_push holds one locked instruction, a lock
# xadd, no cmpxchg, xchg or fence; 1 otherwise (printed); 2 if missing.
check_push() {
	b=$(body "$1" fp_mpsc_push)
	[ -n "$b" ] || return 2
	locks=$(printf '%s\n' "$b" | grep -cE '(^|[[:space:]])lock[[:space:]]')
	xadds=$(printf '%s\n' "$b" | grep -cE '(^|[[:space:]])lock[[:space:]]+xadd')
	other=$(printf '%s\n' "$b" | grep -E 'cmpxchg|(^|[[:space:]])(xchg[bwlq]?|mfence|lfence|sfence)([[:space:]]|$)')
	[ "$locks" -eq 1 ] && [ "$xadds" -eq 1 ] && [ -z "$other" ] && return 0
	printf '%s\n' "$b" | grep -E 'lock|cmpxchg|xchg|fence' | sed 's/^/# fp_mpsc_push: /'
	return 1
}

n=$((n + 1))
check_push "$obj"
case $? in
0) echo "ok $n fastpath-asm: fp_mpsc_push has one lock xadd, no cmpxchg" ;;
1) echo "not ok $n fastpath-asm: fp_mpsc_push is not exactly one lock xadd"; fail=1 ;;
*) echo "not ok $n fastpath-asm: fp_mpsc_push not found in the object"; fail=1 ;;
esac

n=$((n + 1))
vobj="$OUT/fastpath_asm_fenced4.o"
if ! compile 4 "$vobj"; then
	echo "not ok $n fastpath-asm self-test: variant 4 does not compile"
	fail=1
else
	check_push "$vobj" >/dev/null
	if [ $? -eq 1 ]; then
		echo "ok $n fastpath-asm self-test: CAS-loop reservation in fp_mpsc_push is caught"
	else
		echo "not ok $n fastpath-asm self-test: CAS-loop reservation in fp_mpsc_push went unnoticed"
		fail=1
	fi
fi

# site_body OBJ FUNC: FUNC's code, or, when it calls or jumps to an
# out-of-line copy of a store-then-load inline (gcc -Os does that), the
# copy's.
SITES="baton_spsc_prod_submit|baton_spsc_cons_release|baton_mpsc_prod_publish|baton_mpsc_cons_release|baton_mpsc_cons_release_n|baton_epoch_exit"
site_body() {
	b=$(body "$1" "$2")
	t=$(printf '%s\n' "$b" |
		sed -nE "s/^(jmp|call).*<($SITES)>\$/\2/p" | head -n 1)
	if [ -n "$t" ]; then
		body "$1" "$t"
	else
		printf '%s\n' "$b"
	fi
}

# order OBJ: every ORDER site in OBJ, one "# why" line per bad one;
# status 1 if any is bad.
order() {
	bad=0
	for site in $ORDER; do
		f=${site%%:*} rest=${site#*:}
		stores=${rest%%:*} load=${rest#*:}
		soffs=""
		for fld in $(printf '%s' "$stores" | tr , ' '); do
			soffs="$soffs $(offset "$fld")"
		done
		v=$(site_body "$1" "$f" | awk -v STORES="$soffs" \
			-v LOAD="$(offset "$load")" -f "$HERE/fastpath_order.awk")
		if [ "$v" != ok ]; then
			echo "# $f: $v"
			bad=1
		fi
	done
	return $bad
}

offsets=$OUT/fastpath_offsets.txt
offset() {
	awk -v f="$1" '$1 == f { print $2 }' "$offsets"
}
$CC -std=c11 -O2 -I"$TOP/lib/include" -I"$TOP/uapi" \
	"$HERE/fastpath_offsets.c" -o "$OUT/fastpath_offsets" &&
	"$OUT/fastpath_offsets" >"$offsets" || : >"$offsets"
for cc in $ORDER_CCS; do
	for opt in $ORDER_OPTS; do
		n=$((n + 1))
		oobj="$OUT/fastpath_order_$cc$opt.o"
		if ! command -v "$cc" >/dev/null; then
			echo "not ok $n fastpath-order: $cc $opt: $cc not installed"
			fail=1
		elif ! [ -s "$offsets" ] || ! compile 0 "$oobj" "$cc" "$opt"; then
			echo "not ok $n fastpath-order: $cc $opt does not compile"
			fail=1
		elif order "$oobj"; then
			echo "ok $n fastpath-order: $cc $opt stores before the flag loads"
		else
			echo "not ok $n fastpath-order: $cc $opt loads a flag before its store"
			fail=1
		fi
	done
done

n=$((n + 1))
vobj="$OUT/fastpath_asm_fenced5.o"
if compile 5 "$vobj" && ! order "$vobj" >/dev/null; then
	echo "ok $n fastpath-order self-test: a flag load hoisted above the store is caught"
else
	echo "not ok $n fastpath-order self-test: a hoisted flag load went unnoticed"
	fail=1
fi

n=$((n + 1))
vobj="$OUT/fastpath_asm_fenced6.o"
if compile 6 "$vobj" && ! order "$vobj" >/dev/null; then
	echo "ok $n fastpath-order self-test: a pool reap-word load hoisted above the OWNED store is caught"
else
	echo "not ok $n fastpath-order self-test: a hoisted pool reap-word load went unnoticed"
	fail=1
fi

exit $fail
