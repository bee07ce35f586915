#!/bin/bash
# selftests/vm/scan-log-test.sh: owns the checks of scan-log.sh, the VM
# log verdict, on logs written here: a known kernel race is excused and
# named, the same race with a baton frame in it is not, nor is a report
# no entry names, every other kind of report still counts, and an oops's
# summary names where it happened. TAP out;
# run by the host tests (selftests/host/run-host-tests.sh).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0

# check NAME LOG-TEXT EXPECTED...: every pattern must match the output;
# N=PATTERN: exactly N lines match it.
check() {
	local name=$1 text=$2 out pat ok=1
	shift 2
	printf '%s\n' "$text" >"$tmp/log"
	out=$("$here/scan-log.sh" "$tmp/log")
	for pat in "$@"; do
		if [[ $pat =~ ^([0-9]+)=(.*)$ ]]; then
			[[ $(grep -cE -- "${BASH_REMATCH[2]}" <<<"$out") == "${BASH_REMATCH[1]}" ]] || ok=0
		else
			grep -qE -- "$pat" <<<"$out" || ok=0
		fi
	done
	n=$((n + 1))
	if ((ok)); then
		echo "ok $n scan-log: $name"
	else
		failed=$((failed + 1))
		echo "not ok $n scan-log: $name"
		sed 's/^/#   /' <<<"$out"
	fi
}

sep='[  129.487120] =================================================================='
vmstat="$sep
[  129.487121] BUG: KCSAN: data-race in memchr_inv+0x31/0x10d
[  129.487121]
[  129.487121] race at unknown origin, with read to 0xffff88803ec2a1a1 of 1 bytes by kernel thread 0 on cpu 1:
[  129.487121]  memchr_inv+0x31/0x10d
[  129.487121]  vmstat_shepherd+0x5f/0x110
[  129.487121]  process_one_work+0x1a0/0x3a0
[  129.487121]
[  129.487121] value changed: 0x00 -> 0x01
$sep"

echo "TAP version 13"
echo "1..9"
check "a clean log" "[    1.000000] Run /init as init process" \
	'^bad 0$' '0=^(first|excused)'
check "the vmstat need_update race is excused and named" "$vmstat" \
	'^bad 0$' '^excused vmstat-need-update: .*memchr_inv vmstat_shepherd'
check "it is listed once from the console and the dmesg dump" \
	"$vmstat
BATON-VM-DMESG-BEGIN
$vmstat" '^bad 0$' '1=^excused'
check "the same race with a baton frame counts" \
	"${vmstat/process_one_work+0x1a0\/0x3a0/baton_pool_decay+0x10\/0x80 [baton]}" \
	'^bad 1$' '^first BUG: KCSAN: data-race in memchr_inv.*\[memchr_inv < vmstat_shepherd < baton_pool_decay\]'
check "a race no entry names counts, with its frames" "$sep
[  130.000000] BUG: KCSAN: data-race in baton_x+0x1/0x2 [baton] / baton_y+0x1/0x2 [baton]
[  130.000000]  baton_x+0x1/0x2 [baton]
[  130.000000]  do_syscall_64+0x1/0x2
$sep" '^bad 1$' '^first .*\[baton_x < do_syscall_64\]'
check "memchr_inv from elsewhere counts" \
	"${vmstat//vmstat_shepherd/check_bytes_and_report}" '^bad 1$'
check "reports outside KCSAN still count" "[    5.000000] WARNING: CPU: 0 PID: 1 at x
[    6.000000] BUG: sleeping function called from invalid context
$vmstat" '^bad 2$' '^first WARNING: CPU' '^excused vmstat-need-update'
check "a report inside an excused one still counts" \
	"${vmstat/\[  129.487121\] value changed: 0x00 -> 0x01/[  129.487121] WARNING: CPU: 0 PID: 7 at lib/refcount.c:28 refcount_warn_saturate+0x1/0x2
[  129.487121] refcount_t: underflow; use-after-free.}" \
	'^bad 1$' '^first WARNING: CPU: 0 PID: 7' '^excused vmstat-need-update'
check "an oops names its RIP and reliable frames" "[   80.000000] Oops: int3: 0000 [#1] PREEMPT_RT SMP NOPTI
[   80.000001] CPU: 1 UID: 0 PID: 123 Comm: fuzz Tainted: G           OE
[   80.000002] RIP: 0010:baton_park_wake+0x41/0x90 [baton]
[   80.000003] Call Trace:
[   80.000003]  <TASK>
[   80.000004]  ? do_int3+0x1/0x2
[   80.000005]  __wake_up_common+0x1/0x2
[   80.000006]  baton_waiters_wake+0x1/0x2 [baton]
[   80.000007]  __x64_sys_ioctl+0x1/0x2
[   80.000008]  </TASK>
[   81.000000] Kernel panic - not syncing: Fatal exception" \
	'^bad 3$' '^first Oops: int3: .* \[RIP baton_park_wake\+0x41/0x90 \[baton\]; __wake_up_common < baton_waiters_wake < __x64_sys_ioctl\]$'

if ((failed)); then
	echo "# scan-log: $failed of the checks failed"
	exit 1
fi
exit 0
