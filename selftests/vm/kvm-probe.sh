#!/bin/bash
# selftests/vm/kvm-probe.sh: owns choosing the QEMU accelerator; prints "kvm"
# or "tcg". KVM is used only if a real boot of the test kernel under it
# reaches /init within BATON_KVM_PROBE_TIMEOUT seconds (default 20): nested
# KVM on some CI hosts exists but hangs in the firmware. The answer is
# cached in build/vm/accel; BATON_VM_ACCEL=kvm|tcg overrides everything.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
srctree=$(cd "$here/../.." && pwd)
cache="$srctree/build/vm/accel"

if [[ -n "${BATON_VM_ACCEL:-}" ]]; then
	echo "$BATON_VM_ACCEL"
	exit 0
fi
if [[ -s "$cache" ]]; then
	cat "$cache"
	exit 0
fi
mkdir -p "$(dirname "$cache")"

accel=tcg
if [[ -c /dev/kvm && -r /dev/kvm && -w /dev/kvm ]]; then
	kver=$("$here/kver.sh")
	tmp=$(mktemp -d "$srctree/build/vm/probe.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	printf '#!/bin/sh\nexit 0\n' >"$tmp/job.sh"
	printf 'BATON_JOB=probe\nBATON_MODULE_OPTIONAL=1\n' >"$tmp/job.env"
	"$here/mkinitramfs.sh" -o "$tmp/initramfs.cpio.gz" -j "$tmp/job.sh" -e "$tmp/job.env"
	timeout -k 2 "${BATON_KVM_PROBE_TIMEOUT:-20}" \
		qemu-system-x86_64 -accel kvm -cpu host -smp 2 -m 1024 \
		-nographic -no-reboot -monitor none \
		-serial "file:$tmp/console.log" -serial null \
		-kernel "/boot/vmlinuz-$kver" -initrd "$tmp/initramfs.cpio.gz" \
		-append "console=ttyS0 panic=-1 oops=panic" </dev/null >"$tmp/qemu.log" 2>&1 || true
	if grep -q 'BATON-VM-INIT: up' "$tmp/console.log" 2>/dev/null; then
		accel=kvm
	else
		echo "kvm-probe: /dev/kvm exists but a KVM boot did not reach /init; using TCG" >&2
	fi
fi
echo "$accel" >"$cache"
echo "$accel"
