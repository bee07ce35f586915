#!/bin/bash
# selftests/vm/run-vm.sh: owns one run of the baton test VM, from initramfs to
# verdict. Boots the Debian kernel the module was built for under QEMU, loads
# kmod/baton.ko, runs a job, and writes, under build/logs/:
#   vm-<job>.log   the serial console (kernel log, init messages, dmesg dump)
#   vm-<job>.out   the job's output (its own serial line, ttyS1)
#   vm-<job>.tap   the TAP lines of the job plus the runner's own verdicts:
#                  the run finished (end marker seen) and the kernel log is clean
#
# Usage: run-vm.sh [--no-module] [--timeout SECS] JOB [FILE...]
#   JOB selftests  every program in build/selftests/ (helpers/ excluded)
#       demo       bench/pipeline_demo; exit status is the demo's
#       exec       FILE (the first one) with BATON_EXEC_ARGS; status is its own
#   FILE...        extra static binaries, copied to /extra/ in the VM
#   --no-module    boot without kmod/baton.ko if it is missing (smoke tests only)
# Environment: BATON_VM_TIMEOUT (whole run, default 2400 s; 3600 s on the
# debug kernel), BATON_VM_TIMEOUT_MAX (a cap on it), BATON_TEST_TIMEOUT (per test program, default 600 s;
# 1200 s on the kernels built from source), BATON_VM_ACCEL (kvm|tcg,
# default: probe),
# BATON_KVER, BATON_DEMO_ARGS, BATON_EXEC_ARGS, BATON_VM_APPEND (extra kernel
# command line), BATON_VM_TAG (added to the log names, so a run with other
# BATON_VM_APPEND keeps its own: e.g. "-threadirqs"), BATON_VM_KERNEL (which
# kernel to boot, below).
#
# BATON_VM_KERNEL (which kernel; logs are vm-<job>-<kernel>.*, except debian's):
#   debian       (the default) Debian 12's 6.1 with kmod/baton.ko
#   debian612    Debian's 6.12, debian612rt its PREEMPT_RT flavour (kver.sh
#                finds them), with baton.ko built for each in build/kmod-<kernel>/
#                (kmod-build.sh, run here when a source changed)
#   debug        the 6.1 debug kernel (KASAN, lockdep, kmemleak, UBSAN, fault
#                injection), debug612 the same on 6.12 plus PROVE_RAW_LOCK_NESTING,
#                kcsan a 6.12 PREEMPT_RT kernel with KCSAN, lockdep and
#                DEBUG_ATOMIC_SLEEP; selftests/vm/debug-kernel.sh builds each once
#                into its cache, and baton.ko against it into build/kmod-<kernel>/.
#                Their verdict adds the kmemleak scan /init makes after the
#                job, where the kernel has kmemleak (any leak reported fails).
# BATON_SELFTESTS: the selftests job runs only the programs whose names match
# one of these space-separated shell patterns (default: all).
# BATON_VM_MODULE: the baton.ko to load instead of the one for the chosen
# kernel (it must be built for that kernel): e.g. a module built from an
# older commit, to show that today's test fails on the code before a fix.
#
# Exit status: 0 only if the end marker arrived, the kernel log is clean, the
# job succeeded and no TAP line says "not ok".
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
srctree=$(cd "$here/../.." && pwd)
module_optional=${BATON_VM_MODULE_OPTIONAL:-0}
vm_timeout=${BATON_VM_TIMEOUT:-}

while (($#)); do
	case "$1" in
	--no-module) module_optional=1; shift ;;
	--timeout) vm_timeout=$2; shift 2 ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "run-vm.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
job=${1:-}
[[ -n "$job" ]] || { echo "usage: run-vm.sh [--no-module] [--timeout SECS] selftests|demo|exec [FILE...]" >&2; exit 2; }
shift
extra=("$@")

vm_kernel=${BATON_VM_KERNEL:-debian}
built=0
case "$vm_kernel" in
debian) suffix="" ;;
debian612|debian612rt) suffix="-$vm_kernel" ;;
debug|debug612|kcsan) suffix="-$vm_kernel" built=1 ;;
*) echo "run-vm.sh: BATON_VM_KERNEL=$vm_kernel: must be debian, debian612, debian612rt, debug, debug612 or kcsan" >&2; exit 2 ;;
esac
suffix+=${BATON_VM_TAG:-}

# The debug kernels run the suite several times slower. The kill matrix is
# the slowest program on them: about 350 s on an idle host on the 6.1 and
# 6.12 debug kernels alike, 309 s on the KCSAN one, but more than 600 s on
# the 6.12 debug kernel when the host ran other work (load 5 to 10), so
# programs there get twice the Debian kernels' 600 s.
test_timeout=${BATON_TEST_TIMEOUT:-600}
if [[ -z "$vm_timeout" ]]; then
	vm_timeout=2400
	((built)) && vm_timeout=3600
fi
((built)) && [[ -z "${BATON_TEST_TIMEOUT:-}" ]] && test_timeout=1200
# A caller with a budget of its own (.ci/check.sh: CI's 90 minutes) caps
# the run, so that a hang ends it with a verdict rather than ending CI.
if [[ -n "${BATON_VM_TIMEOUT_MAX:-}" ]] && ((vm_timeout > BATON_VM_TIMEOUT_MAX)); then
	vm_timeout=$BATON_VM_TIMEOUT_MAX
fi

logs="$srctree/build/logs"
mkdir -p "$logs" "$srctree/build/vm"
# A private work directory: two runs in one tree must not share an image.
work=$(mktemp -d "$srctree/build/vm/$job$suffix.XXXXXX")
qpid="" tpid=""
cleanup() {
	[[ -z "$qpid" ]] || kill "$qpid" 2>/dev/null || true
	[[ -z "$tpid" ]] || kill "$tpid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap "exit 130" INT TERM
log="$logs/vm-$job$suffix.log" out="$logs/vm-$job$suffix.out" tap="$logs/vm-$job$suffix.tap"
rm -f "$log" "$out" "$tap"

# A runner that cannot even start still leaves a verdict behind.
fail_early() {
	echo "run-vm.sh: $*" >&2
	echo "not ok - vm $job$suffix: $*" >"$tap"
	exit 1
}

is_static() { ! ldd "$1" >/dev/null 2>&1; }

case "$job" in
selftests|demo) ;;
exec) ((${#extra[@]})) || fail_early "exec needs a program" ;;
*) fail_early "unknown job '$job' (selftests, demo, exec)" ;;
esac

for tool in qemu-system-x86_64 cpio gzip timeout modinfo; do
	command -v "$tool" >/dev/null || fail_early "$tool not installed (make deps)"
done
case "$vm_kernel" in
debug|debug612|kcsan)
	# Builds the kernel only if its cache entry is missing (minutes), and
	# the module into build/kmod-<kernel>/ if a source changed.
	dk=("$here/debug-kernel.sh" --variant "$vm_kernel")
	ko=$("${dk[@]}" module) || fail_early "no $vm_kernel kernel or module (see above)"
	kdir=$("${dk[@]}" dir) || fail_early "no $vm_kernel kernel"
	kver=$(cat "$kdir/obj/include/config/kernel.release")
	kernel="$kdir/bzImage"
	rebuild="selftests/vm/debug-kernel.sh --variant $vm_kernel module"
	;;
debian612|debian612rt)
	kver=$("$here/kver.sh" "$vm_kernel") || fail_early "no $vm_kernel kernel (make deps)"
	kernel="/boot/vmlinuz-$kver"
	ko=$("$here/kmod-build.sh" "$vm_kernel" "/lib/modules/$kver/build") ||
		fail_early "building baton.ko for $kver failed (see above)"
	rebuild="selftests/vm/kmod-build.sh $vm_kernel /lib/modules/$kver/build"
	;;
*)
	kver=$("$here/kver.sh") || fail_early "no usable kernel (make deps)"
	kernel="/boot/vmlinuz-$kver"
	ko="$srctree/kmod/baton.ko"
	rebuild="make clean kmod"
	;;
esac

# An older module, to run today's tests against the code before a fix.
if [[ -n "${BATON_VM_MODULE:-}" ]]; then
	ko=$BATON_VM_MODULE
	rebuild="rebuild $ko for $kver"
fi

mk_args=(-o "$work/initramfs.cpio.gz" -j "$here/job-$job.sh" -e "$work/job.env")

# null_blk (and configfs, which it needs) for the tests that want a block
# device (ring_gup: O_DIRECT and a read held in null_blk's poll queue). The
# Debian kernels have them as modules (6.12's as .ko.xz, which
# mkinitramfs.sh decompresses); the built kernels have no block layer.
if ((!built)); then
	for m in fs/configfs/configfs drivers/block/null_blk/null_blk; do
		for f in "/lib/modules/$kver/kernel/$m.ko" "/lib/modules/$kver/kernel/$m.ko.xz"; do
			[[ -f "$f" ]] && mk_args+=(-k "$f")
		done
	done
fi

if [[ -f "$ko" ]]; then
	# The module must be built for the kernel we boot, not the host's.
	vermagic=$(modinfo -F vermagic "$ko" | awk '{ print $1 }')
	[[ "$vermagic" == "$kver" ]] ||
		fail_early "${ko#"$srctree"/} is built for '$vermagic' but the VM boots $kver ($rebuild)"
	mk_args+=(-m "$ko")
elif [[ "$module_optional" == 1 ]]; then
	echo "run-vm.sh: kmod/baton.ko missing; booting without it (--no-module)" >&2
else
	fail_early "kmod/baton.ko missing (make kmod)"
fi

if [[ -d "$srctree/build/selftests" ]]; then
	for f in "$srctree"/build/selftests/* "$srctree"/build/selftests/helpers/*; do
		[[ -f "$f" && -x "$f" ]] || continue
		is_static "$f" || fail_early "$f is not statically linked"
	done
	mk_args+=(-t "$srctree/build/selftests")
elif [[ "$job" == selftests ]]; then
	fail_early "build/selftests missing (make selftests)"
fi

demo=""
for d in "$srctree/bench/pipeline_demo" "$srctree/build/bench/pipeline_demo"; do
	[[ -x "$d" ]] && { demo=$d; break; }
done
if [[ -n "$demo" ]]; then
	is_static "$demo" || fail_early "$demo is not statically linked"
	mk_args+=(-d "$demo")
elif [[ "$job" == demo ]]; then
	fail_early "bench/pipeline_demo missing (make bench)"
fi

for f in "${extra[@]}"; do
	[[ -f "$f" && -x "$f" ]] || fail_early "$f: not an executable file"
	is_static "$f" || fail_early "$f is not statically linked"
	mk_args+=(-x "$f")
done

# Values for /job.env, single-quoted for the VM's sh.
shq() { printf "'%s'" "${1//\'/\'\\\'\'}"; }
{
	echo "BATON_JOB=$(shq "$job")"
	echo "BATON_MODULE_OPTIONAL=$(shq "$module_optional")"
	echo "BATON_TEST_TIMEOUT=$(shq "$test_timeout")"
	echo "BATON_DEMO_ARGS=$(shq "${BATON_DEMO_ARGS:-}")"
	echo "BATON_EXEC_ARGS=$(shq "${BATON_EXEC_ARGS:-}")"
	echo "BATON_VM_KERNEL=$(shq "$vm_kernel")"
	echo "BATON_SELFTESTS=$(shq "${BATON_SELFTESTS:-}")"
	if [[ "$job" == exec ]]; then
		echo "BATON_EXEC=$(shq "$(basename "${extra[0]}")")"
	fi
	# What udev does with kmod/99-baton.rules, done by /init instead.
	rules="$srctree/kmod/99-baton.rules"
	if [[ -r "$rules" ]]; then
		g=$(sed -n 's/.*GROUP *:\{0,1\}= *"\([^"]*\)".*/\1/p' "$rules" | head -n 1)
		m=$(sed -n 's/.*MODE *:\{0,1\}= *"\([0-7]*\)".*/\1/p' "$rules" | head -n 1)
		echo "BATON_DEV_GROUP=$(shq "$g")"
		echo "BATON_DEV_MODE=$(shq "$m")"
	fi
} >"$work/job.env"

"$here/mkinitramfs.sh" "${mk_args[@]}" || fail_early "building the initramfs failed"

accel=$("$here/kvm-probe.sh")
accel_args=(-accel tcg)
[[ "$accel" == kvm ]] && accel_args=(-accel kvm -cpu host)

# hung_task_panic, softlockup_panic: a task stuck in D state (a timeout
# cannot kill it, so its program would hold the job until the whole run's
# timeout, 40 to 60 minutes) or a CPU stuck in the kernel ends the run at
# the report, 2 to 4 minutes in (the kernels' hung-task period is 120 s).
# The verdict is the same either way: scan-log.sh fails both reports.
append="console=ttyS0 slub_debug=FZPU panic=-1 oops=panic panic_on_warn=0"
append+=" hung_task_panic=1 softlockup_panic=1 ${BATON_VM_APPEND:-}"
echo "run-vm.sh: job $job, kernel $kver ($vm_kernel), accel $accel, timeout ${vm_timeout}s, image $(du -h "$work/initramfs.cpio.gz" | cut -f1)"

raw_console="$work/console.raw" raw_out="$work/out.raw"
# Two CPUs. The debug kernel has no ACPI and finds CPUs in SeaBIOS's MP
# table, which lists one processor per package: give it two sockets.
smp=2
((built)) && smp=2,sockets=2,cores=1,threads=1

# boot: one QEMU run of the job; sets qrc and elapsed.
boot() {
	: >"$raw_console"
	: >"$raw_out"
	start=$SECONDS
	timeout -k 10 "$vm_timeout" qemu-system-x86_64 "${accel_args[@]}" -smp "$smp" -m 1024 \
		-nographic -no-reboot -monitor none \
		-serial "file:$raw_console" -serial "file:$raw_out" \
		-kernel "$kernel" -initrd "$work/initramfs.cpio.gz" -append "$append" \
		</dev/null >"$work/qemu.log" 2>&1 &
	qpid=$!
	# Show the job's output as it happens; tail stops once QEMU is gone.
	tail -n +1 -f --pid="$qpid" "$raw_out" 2>/dev/null | tr -d '\r' &
	tpid=$!
	qrc=0
	wait "$qpid" || qrc=$?
	wait "$tpid" 2>/dev/null || true
	qpid="" tpid=""
	elapsed=$((SECONDS - start))
}

# died_before_userspace: the kernel panicked with the job's serial still
# silent and no baton module in the console: the kernel failed its own
# boot before /init ran, before baton.ko was loaded (CI saw the 6.12-rt
# kernel Oops on an int3 patching a static key at 3.5 s under TCG).
died_before_userspace() {
	[[ ! -s "$raw_out" ]] && grep -q 'Kernel panic' "$raw_console" &&
		! grep -q 'baton' "$raw_console"
}

boot_note=""
rm -f "$log.boot1"
boot
if died_before_userspace; then
	first_boot="$log.boot1"
	tr -d '\r' <"$raw_console" >"$first_boot"
	boot_note="# boot 1 of $job$suffix died before userspace, baton.ko not loaded (console: $first_boot); booted once more"
	echo "run-vm.sh: ${boot_note#\# }" >&2
	boot
fi

tr -d '\r' <"$raw_console" >"$log"
tr -d '\r' <"$raw_out" >"$out"
if [[ -s "$work/qemu.log" ]]; then
	{ echo "---- qemu stderr ----"; cat "$work/qemu.log"; } >>"$log"
fi

# Verdicts.
"$here/tap-lines.sh" "$out" >"$tap"
[[ -n "$boot_note" ]] && echo "$boot_note" >>"$tap"
status=$(sed -n 's/^BATON-VM-END status=\([0-9]*\).*/\1/p' "$out" | tail -n 1)
if [[ -n "$status" ]]; then
	echo "ok - vm $job$suffix: finished in ${elapsed}s (job status $status)" >>"$tap"
	if [[ "$status" != 0 ]] && ! grep -q "^not ok" "$tap"; then
		echo "not ok - vm $job$suffix: job exit status $status with no failing test" >>"$tap"
	fi
else
	why="no end marker after ${elapsed}s"
	((qrc == 124)) && why+=": timed out (BATON_VM_TIMEOUT=$vm_timeout)"
	grep -q 'Kernel panic' "$log" && why+=": kernel panic"
	# Which program was running, and any random seed printed: a CI
	# summary keeps only this line.
	running=$(sed -n 's/.*baton-vm: running \([^ ]*\).*/\1/p' "$log" | tail -n 1) || true
	[[ -n "$running" ]] && why+=" while running $running"
	seed=$(sed -n 's/.*[ ,]seed \([0-9][0-9]*\).*/\1/p' "$out" 2>/dev/null | tail -n 1) || true
	[[ -n "$seed" ]] && why+=" (last seed printed: $seed)"
	echo "not ok - vm $job$suffix: $why (see $log)" >>"$tap"
fi

# The kernel log's verdict: scan-log.sh (which lines are a report, and
# the known races inside the kernel it excuses by name).
scan=$("$here/scan-log.sh" "$log")
nbad=$(sed -n 's/^bad //p' <<<"$scan")
sed -n 's/^excused /# known kernel race, excused: /p' <<<"$scan" | tee -a "$tap" >&2
if ((nbad == 0)); then
	echo "ok - vm $job$suffix: kernel log clean" >>"$tap"
else
	first=$(sed -n 's/^first //p' <<<"$scan")
	echo "not ok - vm $job$suffix: kernel log clean ($nbad bad lines, first: $first)" >>"$tap"
	echo "run-vm.sh: kernel log has $nbad bad lines (first: $first)" >&2
fi

npass=$(grep -c '^ok' "$tap" || true)
nfail=$(grep -c '^not ok' "$tap" || true)
echo "run-vm.sh: job $job$suffix: $npass ok, $nfail not ok, ${elapsed}s (logs: $log $out $tap)"
grep '^not ok' "$tap" >&2 || true

if [[ -n "$status" && "$status" != 0 ]]; then
	exit "$status"
fi
((nfail == 0 && ${#status} > 0)) || exit 1
exit 0
