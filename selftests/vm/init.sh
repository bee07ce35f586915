#!/bin/busybox sh
# selftests/vm/init.sh: becomes /init of the baton test VM. Owns bringing the VM
# up (filesystems, users, the module), running /job, and reporting its end.
#
# Channels: the kernel console is ttyS0 (the host scans it for BUG/WARNING);
# the job's own output (TAP) goes to ttyS1 alone, so kernel messages can never
# split a TAP line. The host sees the run as finished only when the end marker
# arrives on ttyS1; anything else (hang, panic, crash) is a failure.

/bin/busybox mkdir -p /bin /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/selftests/helpers:/bin:/sbin:/usr/bin:/usr/sbin
export HOME=/root

mkdir -p /proc /sys /dev /tmp /root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
mkdir -p /dev/shm /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t devpts devpts /dev/pts 2>/dev/null

mkdir -p /etc
cat >/etc/passwd <<'PW'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
PW
cat >/etc/group <<'GR'
root:x:0:
baton:x:900:
nogroup:x:65534:
GR

OUT=/dev/ttyS1
stty -F "$OUT" raw -echo 2>/dev/null
# Everything in /job.env is for /job too: export it.
set -a
[ -r /job.env ] && . /job.env
set +a

echo "BATON-VM-INIT: up, kernel $(uname -r), job ${BATON_JOB:-?}"
echo "# baton VM: kernel $(uname -r), $(nproc) CPUs, job ${BATON_JOB:-?}" >"$OUT"

# The module. Its load is itself a test result.
if [ -e /baton.ko ]; then
	if insmod /baton.ko >/tmp/insmod.out 2>&1; then
		echo "ok - insmod baton.ko" >"$OUT"
	else
		echo "not ok - insmod baton.ko: $(cat /tmp/insmod.out)" >"$OUT"
	fi
elif [ "${BATON_MODULE_OPTIONAL:-0}" = 1 ]; then
	echo "ok - insmod baton.ko # SKIP no module in this image" >"$OUT"
else
	echo "not ok - insmod baton.ko: /baton.ko missing from the image" >"$OUT"
fi

# What udev would do with kmod/99-baton.rules (no udev in here); the host
# passes the rule's GROUP and MODE.
if [ -c /dev/baton ]; then
	[ -n "${BATON_DEV_GROUP:-}" ] && chgrp "$BATON_DEV_GROUP" /dev/baton
	[ -n "${BATON_DEV_MODE:-}" ] && chmod "$BATON_DEV_MODE" /dev/baton
	echo "# /dev/baton: $(ls -l /dev/baton)" >"$OUT"
fi

# kmemleak (the debug kernel): forget what boot left unreferenced, so a
# report after the job is the job's. Reported objects only are cleared,
# hence the scan first.
KMEMLEAK=/sys/kernel/debug/kmemleak
if [ -w "$KMEMLEAK" ]; then
	echo scan >"$KMEMLEAK"
	echo clear >"$KMEMLEAK"
fi

cd /
/bin/sh /job >"$OUT" 2>&1 </dev/null
status=$?

# After the job (and its rmmod): anything still unreferenced leaked. An
# object must be 5 s old before kmemleak reports it, and a scan can miss
# one whose last pointer was in flight: scan, wait, scan again. The report
# goes to the console log, where the host's verdict finds it; any report
# fails the run, the module's or not (after the clear above, the kernel
# itself leaks nothing in a run this short).
if [ -w "$KMEMLEAK" ]; then
	echo scan >"$KMEMLEAK"
	sleep 6
	echo scan >"$KMEMLEAK"
	leaks=$(grep -c '^unreferenced object' "$KMEMLEAK")
	if [ "$leaks" = 0 ]; then
		echo "ok - kmemleak: no unreferenced object after the job" >"$OUT"
	else
		echo "not ok - kmemleak: $leaks unreferenced objects (see the console log)" >"$OUT"
		echo "BATON-VM-KMEMLEAK-BEGIN"
		cat "$KMEMLEAK"
		echo "BATON-VM-KMEMLEAK-END"
		[ "$status" = 0 ] && status=1
	fi
fi

echo "BATON-VM-END status=$status" >"$OUT"
echo "BATON-VM-END status=$status"
echo "BATON-VM-DMESG-BEGIN"
dmesg
echo "BATON-VM-DMESG-END"
sync
# Without ACPI (the debug kernel) power-off cannot end QEMU, and init's
# exit would panic: reboot instead, which -no-reboot turns into QEMU's exit.
if [ -d /sys/firmware/acpi ]; then
	poweroff -f
fi
reboot -f
