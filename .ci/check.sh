#!/bin/bash
# .ci/check.sh: owns `make check`: every stage, its log, and the one verdict.
#
# Stages, in order: deps; build kmod, lib, selftests, bench (each a test);
# baton.ko for each Debian kernel of the matrix (debian = 6.1, debian612,
# debian612rt: selftests/vm/kver.sh) from scratch with W=1 and sparse, any
# warning a failure (build/kmod-<kernel>/); host tests (selftests/host,
# TAP); packaging (selftests/pkg/check-install.sh: a staged install, C, C++
# and Documentation/examples built against it with pkg-config and run on
# memfd, the man pages, uninstall; TAP); the spin models (TAP); checkpatch lint (TAP, a test per file); the
# perf gate and its self-test (TAP, a test per gated path:
# bench/perf-gate.sh); DKMS (.ci/dkms-check.sh: the installed source tree
# built and installed by dkms for each Debian kernel); the VM selftests on
# each Debian kernel (TAP, plus "VM finished" and "kernel log clean"; on
# debian612rt the concurrency programs, $concurrency_tests, and those again
# on 6.1 booted with threadirqs, stage vm-selftests-threadirqs); then
# each kernel built from source (selftests/vm/debug-kernel.sh: a build,
# from the cache in /var/cache/baton unless its config changed) and the VM
# selftests on it: by default debug612 (6.12: KASAN, lockdep, kmemleak,
# UBSAN, fault injection, PROVE_RAW_LOCK_NESTING; plus the kmemleak
# verdict) and kcsan (6.12 PREEMPT_RT with KCSAN, lockdep,
# DEBUG_ATOMIC_SLEEP; the
# concurrency programs only, $kcsan_tests). A later stage runs even when an earlier one failed, so one
# report shows everything; only a failed `make deps` stops the run. After
# the stages, one line per kernel of the matrix, then the verdict.
#
# Each stage leaves build/logs/<stage>.log (everything it printed) and
# build/logs/<stage>.tap (its result lines). A stage that exits non-zero
# without a "not ok", or that reports no result at all, gets a "not ok" of its
# own: a crash is never zero tests. build/logs/summary.tap is every result as
# one renumbered TAP stream. Last line: "N passed, N failed, N skipped".
# Exit status is non-zero iff anything failed.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
MAKE=${MAKE:-make}
logs=build/logs
rm -rf "$logs"
mkdir -p "$logs"
t0=$SECONDS

# stage NAME CMD...: run CMD with its output in NAME.log and its TAP in NAME.tap.
stage() {
	local name=$1 rc=0 start=$SECONDS
	shift
	local log="$logs/$name.log" tap="$logs/$name.tap"
	echo "==> $name: $*"
	"$@" >"$log" 2>&1 </dev/null || rc=$?
	tap_of "$name" "$log" "$rc" >"$tap"
	report "$name" "$tap" "$rc" $((SECONDS - start))
}

# tap_of NAME LOG RC: the result lines of LOG (skips named: tap-lines.sh),
# plus a verdict on RC.
tap_of() {
	local name=$1 log=$2 rc=$3
	selftests/vm/tap-lines.sh "$log"
	if ((rc != 0)) && ! grep -qE '^not ok( |$)' "$log"; then
		echo "not ok - $name: exit status $rc without a failing test (see $log)"
	elif ((rc == 0)) && ! grep -qE '^(not )?ok( |$)' "$log"; then
		echo "not ok - $name: no test results (see $log)"
	fi
}

# A build is one test: it worked or it did not.
build() {
	local name=build-$1 rc=0 start=$SECONDS
	shift
	local log="$logs/$name.log" tap="$logs/$name.tap"
	echo "==> $name: $*"
	"$@" >"$log" 2>&1 </dev/null || rc=$?
	if ((rc == 0)); then
		echo "ok - $name" >"$tap"
	else
		echo "not ok - $name: exit status $rc (see $log)" >"$tap"
	fi
	report "$name" "$tap" "$rc" $((SECONDS - start))
}

report() {
	local name=$1 tap=$2 rc=$3 secs=$4
	printf '    %s: %d ok, %d not ok (exit %d, %ds)\n' "$name" \
		"$(grep -c '^ok' "$tap" || true)" "$(grep -c '^not ok' "$tap" || true)" "$rc" "$secs"
	grep '^not ok' "$tap" | head -n 20 | sed 's/^/    /' || true
	# The VM stages: KCSAN reports of the kernel's own, excused by name.
	grep -h '^# known kernel race' "${tap%.tap}.log" "$tap" 2>/dev/null |
		sort -u | sed 's/^/    /' || true
}

echo "==> deps"
if ! $MAKE --no-print-directory deps >"$logs/deps.log" 2>&1 </dev/null; then
	tail -n 30 "$logs/deps.log"
	echo "not ok - deps: make deps failed (see $logs/deps.log)" >"$logs/deps.tap"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
tail -n 1 "$logs/deps.log" | sed 's/^/    /'

build kmod $MAKE --no-print-directory kmod
build lib $MAKE --no-print-directory lib
# -k: one test file that does not compile must not keep the others out of the VM.
build selftests $MAKE --no-print-directory -k selftests
build bench $MAKE --no-print-directory bench-build
# The Debian kernels of the matrix; the built ones are below, with their VMs.
debian_kernels=(debian debian612 debian612rt)
for k in "${debian_kernels[@]}"; do
	if kv=$(selftests/vm/kver.sh "$k" 2>"$logs/kver-$k.log"); then
		build "kmod-$k" selftests/vm/kmod-build.sh --clean --strict "$k" "/lib/modules/$kv/build"
	else
		echo "not ok - build-kmod-$k: no $k kernel ($(cat "$logs/kver-$k.log"))" >"$logs/build-kmod-$k.tap"
	fi
done

stage host $MAKE --no-print-directory host-check
stage pkg $MAKE --no-print-directory pkg-check
stage models selftests/models/check.sh
stage lint .ci/lint.sh
stage perf-gate $MAKE --no-print-directory perf-gate
stage perf-gate-selftest $MAKE --no-print-directory perf-gate-selftest
stage dkms .ci/dkms-check.sh "${debian_kernels[@]}"

# vm_stage KERNEL [ARG]: the VM selftests on KERNEL (BATON_VM_KERNEL), stage
# vm-selftests[-KERNEL][-ARG], ARG (if any) added to the kernel's command
# line (BATON_VM_APPEND). The runner writes its own NAME.tap (job TAP + its
# verdicts); it must exist, else the runner died before giving one. Adds
# the kernel's line to the per-kernel summary.
#
# Each VM run is capped at what is left of the budget (BATON_CHECK_BUDGET
# seconds from the start of this script, default 80 minutes: CI gives all
# of .ci/run 90, deps.sh included), less a minute for the summary. A run
# that hangs then ends with its "not ok" and the rest of the report; one
# with under 5 minutes left is not started.
budget=${BATON_CHECK_BUDGET:-4800}
kernel_lines=()
vm_stage() {
	local kernel=$1 arg=${2:-} name=vm-selftests-$1 rc=0 start=$SECONDS
	local tag=${arg:+-$arg} left
	[[ $kernel == debian ]] && name=vm-selftests
	name+=$tag
	local tap="$logs/$name.tap"
	left=$((budget - (SECONDS - t0) - 60))
	if ((left < 300)); then
		echo "not ok - $name: not run, ${left}s left of the ${budget}s budget (BATON_CHECK_BUDGET)" >"$tap"
		report "$name" "$tap" 1 0
		kernel_summary "$kernel$tag" "not run" "$tap" 0
		return
	fi
	echo "==> $name: BATON_VM_KERNEL=$kernel${arg:+ BATON_VM_APPEND=$arg} selftests/vm/run-vm.sh selftests"
	BATON_VM_KERNEL=$kernel BATON_VM_TAG=$tag BATON_VM_APPEND=$arg \
		BATON_VM_TIMEOUT_MAX=$left selftests/vm/run-vm.sh selftests \
		>"$logs/$name.run.log" 2>&1 </dev/null || rc=$?
	if [[ ! -s "$tap" ]]; then
		echo "not ok - $name: runner exit status $rc and no results (see $logs/$name.run.log)" >"$tap"
	elif ((rc != 0)) && ! grep -q '^not ok' "$tap"; then
		echo "not ok - $name: runner exit status $rc without a failing test" >>"$tap"
	fi
	report "$name" "$tap" "$rc" $((SECONDS - start))
	kernel_summary "$kernel$tag" "$(sed -n 's/^run-vm.sh: job [^,]*, kernel \([^ ]*\).*/\1/p' \
		"$logs/$name.run.log" | head -n 1)" "$tap" $((SECONDS - start))
}

# kernel_summary KERNEL RELEASE TAP SECS: one line of the per-kernel summary.
kernel_summary() {
	kernel_lines+=("$(printf 'kernel %-17s %-28s %4d ok, %d not ok, %ds' "$1" "${2:-?}" \
		"$(grep -c '^ok' "$3" || true)" "$(grep -c '^not ok' "$3" || true)" "$4")")
}

# The programs where baton's concurrency is (park/wake, poll, death, MPSC,
# epoch, netlink events, the waitset, RT priorities, the kill matrix, pool
# deaths and decay), and the unload check: the KCSAN kernel runs these, and
# so does 6.12 PREEMPT_RT. The full suite runs on 6.1, 6.12 and the debug
# kernel; on RT it is the preemption and locking paths that differ, which
# these programs drive, and the full RT run (7.5 min) no longer fit CI's 90
# minutes beside the others from an empty kernel cache.
concurrency_tests="ring_park ring_poll ring_death mpsc_* epoch_* netlink_events waitset rt_priority kill_matrix pool zz_module_unload"
for k in "${debian_kernels[@]}"; do
	case "$k" in
	debian612rt) BATON_SELFTESTS=$concurrency_tests vm_stage "$k" ;;
	*) vm_stage "$k" ;;
	esac
done
# 6.1 with threadirqs: every softirq runs in ksoftirqd, which a SCHED_FIFO
# task starves on its CPU, so a timer-wheel timer there never fires (what
# made the pool's decay wait on a real-time task, kmod/later.c). The
# concurrency programs, which drive the timers, parks and FIFO tasks.
BATON_SELFTESTS=$concurrency_tests vm_stage debian threadirqs

# built_stage KERNEL [SELFTESTS]: the kernel built from source (its cache
# unless its recipe changed) and baton.ko for it, then the VM selftests on
# it; SELFTESTS (patterns, BATON_SELFTESTS) narrows them.
built_stage() {
	local kernel=$1 left=$((budget - (SECONDS - t0)))
	# A build from scratch takes 5 to 10 minutes, and its VM at least 5.
	if ((left < 900)); then
		echo "not ok - build-$kernel-kernel: not run, ${left}s left of the ${budget}s budget (BATON_CHECK_BUDGET)" \
			>"$logs/build-$kernel-kernel.tap"
		echo "not ok - vm-selftests-$kernel: not run (the budget)" >"$logs/vm-selftests-$kernel.tap"
		kernel_summary "$kernel" "not run" "$logs/vm-selftests-$kernel.tap" 0
		return
	fi
	build "$kernel-kernel" selftests/vm/debug-kernel.sh --variant "$kernel" module
	if grep -q '^ok' "$logs/build-$kernel-kernel.tap"; then
		BATON_SELFTESTS=${2:-} vm_stage "$kernel"
	else
		echo "not ok - vm-selftests-$kernel: no $kernel kernel (see $logs/build-$kernel-kernel.log)" \
			>"$logs/vm-selftests-$kernel.tap"
		kernel_summary "$kernel" "not built" "$logs/vm-selftests-$kernel.tap" 0
	fi
}

# Each built once, then taken from the cache (Documentation/building.rst,
# "The kernel matrix"). BATON_CHECK_BUILT_KERNELS (set and empty: none)
# (default "debug612 kcsan") lists them: debug (the 6.1 one, kept for
# whoever wants it: it has found nothing the 6.12 one did not), debug612,
# kcsan.
read -ra built_kernels <<<"${BATON_CHECK_BUILT_KERNELS-debug612 kcsan}"
# KCSAN slows everything down: the concurrency programs only (above).
kcsan_tests=$concurrency_tests
for k in "${built_kernels[@]}"; do
	case "$k" in
	kcsan) built_stage "$k" "$kcsan_tests" ;;
	*) built_stage "$k" ;;
	esac
done

# One TAP stream: every result renumbered, prefixed with its stage. A
# skip for a reason .ci/expected-skips does not list is a failure
# (.ci/skip-gate.sh).
pass=0 fail=0 skip=0 n=0
body=$(mktemp)
trap 'rm -f "$body"' EXIT
taps=(build-kmod build-lib build-selftests build-bench)
for k in "${debian_kernels[@]}"; do taps+=("build-kmod-$k"); done
taps+=(host pkg models lint perf-gate perf-gate-selftest dkms vm-selftests)
for k in "${debian_kernels[@]:1}"; do taps+=("vm-selftests-$k"); done
taps+=(vm-selftests-threadirqs)
for k in "${built_kernels[@]}"; do taps+=("build-$k-kernel" "vm-selftests-$k"); done
for tap in "${taps[@]/#/$logs/}"; do
	tap=$tap.tap
	st=$(basename "$tap" .tap)
	[[ -f $tap ]] || echo "not ok - $st: the stage left no results" >"$tap"
	while IFS= read -r line; do
		# A runner's notes (excused kernel races, a boot retried) are
		# no results: counted as neither.
		[[ $line =~ ^(not\ )?ok( |$) ]] || continue
		n=$((n + 1))
		if [[ $line =~ ^not\ ok ]]; then
			res="not ok" rest=${line#not ok}
		else
			res="ok" rest=${line#ok}
		fi
		[[ $rest =~ ^[[:space:]]*[0-9]*[[:space:]]*-?[[:space:]]*(.*)$ ]] && rest=${BASH_REMATCH[1]}
		# "# skip" in any case, as skip-gate.sh reads it: what is
		# left of skips here is what it found a rule for.
		if [[ ${rest,,} =~ \#[[:space:]]*skip ]]; then
			skip=$((skip + 1))
		elif [[ $res == ok ]]; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
		fi
		[[ $rest == "$st"* ]] || rest="$st: $rest"
		echo "$res $n - $rest"
	done < <(.ci/skip-gate.sh "$st" <"$tap")
done >"$body"
{
	echo "TAP version 13"
	echo "1..$n"
	cat "$body"
} >"$logs/summary.tap"

# failure_context STAGE TEST: the last lines a failed kselftest printed
# (from its "#  RUN" line to its "not ok"), from the stage's output, so a
# failure in CI, where only the end of this output is kept, says why.
failure_context() {
	local out="$logs/$1.out" test=$2
	[[ -f $out ]] || out="$logs/$1.log"
	[[ -f $out && $test == *.* ]] || return 0
	awk -v t="$test" '
		index($0, "#  RUN") && index($0, " " t " ...") { on = 1; n = 0 }
		on { buf[n++ % 12] = $0 }
		on && /^not ok/ && index($0, " " t) {
			for (i = (n > 12 ? n - 12 : 0); i < n; i++) print "    | " buf[i % 12]
			on = 0
		}' "$out"
}

echo
shown=0
while IFS= read -r line; do
	echo "$line"
	[[ $line =~ ^not\ ok\ [0-9]+\ -\ ([^:]+):\ ([^ ]+)$ ]] || continue
	((shown++ < 3)) && failure_context "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
done < <(grep '^not ok' "$logs/summary.tap" || true)
# What the skips were, so a reader of CI's last lines sees why.
sed -n 's/^ok [0-9]* - \([^:]*\):.*# *[Ss][Kk][Ii][Pp] *\(.*\)$/\1: \2/p' "$logs/summary.tap" |
	sort | uniq -c | sort -rn | sed 's/^ */    skipped /' || true
printf '%s\n' "${kernel_lines[@]}"
echo "logs: $logs/ (summary.tap has every result), $((SECONDS - t0))s"
echo "$pass passed, $fail failed, $skip skipped"
((fail == 0 && n > 0))
