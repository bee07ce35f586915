#!/bin/bash
# selftests/vm/mkinitramfs.sh: owns building the test VM's initramfs (cpio newc,
# gzip) from busybox-static, selftests/vm/init.sh and one job script.
#
# Usage: mkinitramfs.sh -o OUT.cpio.gz -j JOB.sh [-e ENVFILE] [-m baton.ko]
#                       [-t SELFTEST_DIR] [-d DEMO_BIN] [-x FILE]... [-k MOD.ko]...
#   -j  the script that becomes /job     -e  becomes /job.env (sourced by /init)
#   -m  becomes /baton.ko                -t  copied to /selftests (with helpers/)
#   -d  becomes /bench/pipeline_demo     -x  copied to /extra/ (repeatable)
#   -k  a kernel module (.ko or .ko.xz) the tests may load, decompressed to
#       /modules/NAME.ko (repeatable; nothing loads it at boot)
# The image is built without root: cpio writes every entry as 0:0, and
# /dev/console comes from the kernel's built-in initramfs.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out="" job="" env="" ko="" tdir="" demo="" extra=() kmods=()
while getopts "o:j:e:m:t:d:x:k:" opt; do
	case "$opt" in
	o) out=$OPTARG ;;
	j) job=$OPTARG ;;
	e) env=$OPTARG ;;
	m) ko=$OPTARG ;;
	t) tdir=$OPTARG ;;
	d) demo=$OPTARG ;;
	x) extra+=("$OPTARG") ;;
	k) kmods+=("$OPTARG") ;;
	*) echo "usage: see the header of $0" >&2; exit 2 ;;
	esac
done
[[ -n "$out" && -n "$job" ]] || { echo "mkinitramfs: -o and -j are required" >&2; exit 2; }

bb=/bin/busybox
if ! [[ -x $bb ]] || ldd "$bb" >/dev/null 2>&1; then
	echo "mkinitramfs: need a static $bb (Debian package busybox-static)" >&2
	exit 1
fi

root=$(mktemp -d "$(dirname "$out")/initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,etc,root,selftests,bench,extra,modules}
cp "$bb" "$root/bin/busybox"
install -m 0755 "$here/init.sh" "$root/init"
install -m 0755 "$job" "$root/job"
[[ -z "$env" ]] || install -m 0644 "$env" "$root/job.env"
[[ -z "$ko" ]] || install -m 0644 "$ko" "$root/baton.ko"
[[ -z "$demo" ]] || install -m 0755 "$demo" "$root/bench/pipeline_demo"
if [[ -n "$tdir" && -d "$tdir" ]]; then
	cp -a "$tdir/." "$root/selftests/"
fi
for f in "${extra[@]}"; do
	install -m 0755 "$f" "$root/extra/$(basename "$f")"
done
# busybox's insmod and finit_module(2) want them uncompressed.
for f in "${kmods[@]}"; do
	case "$f" in
	*.ko.xz) xz -dc "$f" >"$root/modules/$(basename "$f" .xz)" ;;
	*.ko) install -m 0644 "$f" "$root/modules/" ;;
	*) echo "mkinitramfs: -k $f: not a .ko or .ko.xz" >&2; exit 2 ;;
	esac
done

(cd "$root" && find . -mindepth 1 | LC_ALL=C sort |
	cpio -o -H newc -R 0:0 --quiet | gzip -1) >"$out.tmp"
mv "$out.tmp" "$out"
