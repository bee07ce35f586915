#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run-host-tests.sh BUILD "TESTS" "TSAN_TESTS": run the host tests built by
# selftests/host/Makefile (ASan+UBSan flavour of TESTS, TSan flavour of
# TSAN_TESTS), then the fast-path disassembly check and the VM log
# scanner's (selftests/vm/scan-log-test.sh). Each program prints
# its own kselftest TAP stream; a summary line closes the run. The exit
# status is non-zero if any program failed.

set -u

B=$1
TESTS=$2
TSAN_TESTS=$3
HERE=$(cd "$(dirname "$0")" && pwd)

# Sanitizer reports are failures, not warnings.
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=0:halt_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:exitcode=66}"

runs=0
failed=""

run() {
	runs=$((runs + 1))
	echo "# ---- $1"
	t0=$(date +%s)
	"$@"
	rc=$?
	echo "# ---- $1: exit status $rc, $(($(date +%s) - t0)) s"
	[ $rc -eq 0 ] || failed="$failed $1"
}

# Rings, epoch domains and pools of test processes that were killed (a
# harness timeout skips the teardown) stay in /dev/shm, where a
# container's 64 MiB fills up; remove those whose process is gone.
reap_rings() {
	for f in /dev/shm/baton.t.* /dev/shm/baton-epoch.t.* \
		 /dev/shm/baton-pool.t.*; do
		[ -e "$f" ] || continue
		pid=${f#/dev/shm/*.t.}
		pid=${pid%%.*}
		kill -0 "$pid" 2>/dev/null || rm -f "$f"
	done
}

start=$(date +%s)
for t in $TESTS; do
	run "$B/asan/$t"
done
for t in $TSAN_TESTS; do
	run "$B/tsan/$t"
done
run "$HERE/check-fastpath-asm.sh" "$B/asm"
run "$HERE/../vm/scan-log-test.sh"
end=$(date +%s)
reap_rings

if [ -n "$failed" ]; then
	echo "# host tests: FAILED in$failed ($runs programs, $((end - start)) s)"
	exit 1
fi
echo "# host tests: all $runs programs passed ($((end - start)) s)"
exit 0
