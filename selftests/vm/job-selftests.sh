#!/bin/sh
# selftests/vm/job-selftests.sh: becomes /job for `run-vm.sh selftests`. Owns
# running every test program in /selftests (not the helpers) and turning what
# the TAP alone would hide (a crash, a hang, a truncated run) into "not ok".
#
# Each program gets a timeout (BATON_TEST_TIMEOUT seconds, the harness also
# times out each test); the cwd is /selftests and PATH starts with
# /selftests/helpers, so tests find helpers as ./helpers/<name>, by name, or
# next to /proc/self/exe. At the end: rmmod baton, which must work once every
# ring file and mapping is gone. BATON_SELFTESTS (space-separated shell
# patterns) keeps only the programs whose names match one of them.

T=${BATON_TEST_TIMEOUT:-600}

# selected NAME: NAME matches a pattern of BATON_SELFTESTS, or that is empty.
selected() {
	[ -z "${BATON_SELFTESTS:-}" ] && return 0
	set -f
	for pat in $BATON_SELFTESTS; do
		# shellcheck disable=SC2254 # the pattern is meant to glob
		case "$1" in $pat) set +f; return 0 ;; esac
	done
	set +f
	return 1
}

# Kill what a test program left behind: orphans are reparented to init (pid 1).
# They would hold the tee pipe open (the job would hang) and keep ring files
# alive (rmmod would fail). Repeat: killing one orphans its own children.
kill_strays() {
	strays=""
	for round in 1 2 3 4 5; do
		found=0
		for d in /proc/[0-9]*; do
			p=${d#/proc/}
			[ "$p" = "$$" ] && continue
			grep -q "^PPid:[[:space:]]*1$" "$d/status" 2>/dev/null || continue
			grep -q "^State:[[:space:]]*Z" "$d/status" 2>/dev/null && continue
			comm=$(cat "$d/comm" 2>/dev/null)
			# busybox timeout's own watchdog outlives the program by up
			# to a second: not the test's doing, so not worth a word.
			case "$comm" in
			""|timeout) ;;
			*) strays="$strays $comm[$p]" ;;
			esac
			kill -KILL "$p" 2>/dev/null
			found=1
		done
		[ "$found" = 0 ] && break
		sleep 0.2
	done
	[ -z "$strays" ] || echo "# killed leftover processes:$strays"
}
cd /selftests || { echo "not ok - /selftests missing"; exit 1; }
failed=0

# run-vm.sh boots with hung_task_panic=1 and softlockup_panic=1: a program
# stuck in D state, which its timeout cannot kill, or a CPU stuck in the
# kernel must end the run at the kernel's report rather than hold it until
# the whole run's timeout. Every kernel of the matrix has the hung-task
# detector (the built ones: kernel-612.config); the Debian ones also the
# soft-lockup one (the built ones leave it out: under KASAN or KCSAN and
# TCG a 20 s threshold would report slowness, not lockups).
# require_panic KNOB WHAT: /proc/sys/kernel/KNOB must be 1.
require_panic() {
	v=$(cat "/proc/sys/kernel/$1" 2>/dev/null)
	if [ "$v" = 1 ]; then
		echo "ok - vm: $2"
	else
		echo "not ok - vm: $1 is '${v:-absent}', not 1: that hang would hold the job until its timeout"
		failed=1
	fi
}
require_panic hung_task_panic "a task hung in D state panics the kernel"
if [ -e /proc/sys/kernel/softlockup_panic ]; then
	require_panic softlockup_panic "a CPU stuck in the kernel panics it"
fi
ran=0
for t in /selftests/*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	name=${t##*/}
	selected "$name" || continue
	ran=$((ran + 1))
	echo "# ==== $name"
	echo "baton-vm: running $name" >/dev/kmsg
	start=$(date +%s)
	{ timeout -k 10 "$T" "$t" 2>&1; echo $? >/tmp/rc; date +%s >/tmp/end; kill_strays; } | tee "/tmp/out.$name"
	rc=$(cat /tmp/rc)
	secs=$(($(cat /tmp/end) - start))
	ok=$(grep -c '^ok ' "/tmp/out.$name")
	nok=$(grep -c '^not ok ' "/tmp/out.$name")
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p' "/tmp/out.$name" | head -n 1)
	echo "# $name: exit $rc after ${secs}s, $ok ok, $nok not ok, plan ${plan:-none}"
	if [ "$nok" -gt 0 ]; then
		failed=1
	fi
	if [ "$secs" -ge "$T" ] && { [ "$rc" = 143 ] || [ "$rc" = 137 ]; }; then
		echo "not ok - $name: timed out after ${T}s"
		failed=1
	elif [ "$rc" != 0 ] && [ "$rc" != 4 ] && [ "$nok" = 0 ]; then
		echo "not ok - $name: exit status $rc with no failing test (crashed?)"
		failed=1
	fi
	if [ -n "$plan" ] && [ $((ok + nok)) -lt "$plan" ]; then
		echo "not ok - $name: only $((ok + nok)) of $plan results"
		failed=1
	elif [ -z "$plan" ] && [ $((ok + nok)) = 0 ]; then
		echo "not ok - $name: no TAP output"
		failed=1
	fi
done
echo "baton-vm: selftests done" >/dev/kmsg

if [ "$ran" = 0 ]; then
	echo "not ok - selftests: no test programs in the image"
	failed=1
fi

# A pattern that matched nothing is a program renamed or gone: the stage
# that asked for it would otherwise pass without running it.
names=""
for t in /selftests/*; do
	[ -f "$t" ] && [ -x "$t" ] && names="$names ${t##*/}"
done
set -f
for pat in ${BATON_SELFTESTS:-}; do
	hit=0
	for name in $names; do
		# shellcheck disable=SC2254 # the pattern is meant to glob
		case "$name" in $pat) hit=1; break ;; esac
	done
	if [ "$hit" = 0 ]; then
		echo "not ok - selftests: BATON_SELFTESTS pattern '$pat' matched no program"
		failed=1
	fi
done
set +f

if grep -q '^baton ' /proc/modules; then
	if rmmod baton >/tmp/rmmod.out 2>&1; then
		echo "ok - rmmod baton"
	else
		echo "not ok - rmmod baton: $(cat /tmp/rmmod.out); $(grep '^baton ' /proc/modules)"
		failed=1
	fi
else
	echo "ok - rmmod baton # SKIP module not loaded"
fi
exit $failed
