#!/bin/bash
# .ci/dkms-check.sh: owns the DKMS test of `make check`: the module source
# tree that `make install` puts in /usr/src/baton-<ver> must build and
# install with dkms against the headers of every kernel of the matrix.
#
# `make install DESTDIR=build/dkms/stage` stages the install; then `dkms add`,
# `dkms build` and `dkms install` run on the staged source tree, with their
# trees (--sourcetree, --dkmstree, --installtree) under build/dkms/, so the
# host's /usr/src, /var/lib/dkms and /lib/modules get nothing of baton's
# (dkms signs with its own key, /var/lib/dkms/mok.key, made on first use).
# One TAP result per kernel: built, installed, and the installed baton.ko's
# vermagic names that kernel. Nothing is loaded (the VM stages do that).
#
# Usage: dkms-check.sh [KERNEL_FLAVOUR...]  (default: debian debian612 debian612rt)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
MAKE=${MAKE:-make}
flavours=("$@")
((${#flavours[@]})) || flavours=(debian debian612 debian612rt)
work=$root/build/dkms
stage=$work/stage

echo "TAP version 13"
echo "1..$((${#flavours[@]} + 1))"
command -v dkms >/dev/null || { echo "Bail out! dkms not installed (make deps)"; exit 1; }

rm -rf "$work"
mkdir -p "$work/tree" "$work/modules"
# The package version, from the one place it is written (lib/version.mk).
ver=$($MAKE --no-print-directory -s version)
if $MAKE --no-print-directory install DESTDIR="$stage" PREFIX=/usr >"$work/install.log" 2>&1 &&
	[[ -f "$stage/usr/src/baton-$ver/dkms.conf" ]]; then
	echo "ok 1 - make install DESTDIR stages the DKMS tree usr/src/baton-$ver"
else
	echo "not ok 1 - make install DESTDIR: no usr/src/baton-$ver/dkms.conf (see $work/install.log)"
	sed 's/^/# /' "$work/install.log" | tail -n 20
	exit 1
fi

trees=(--sourcetree "$stage/usr/src" --dkmstree "$work/tree" --installtree "$work/modules")
dkms add -m baton -v "$ver" "${trees[@]}" >"$work/add.log" 2>&1 ||
	{ sed 's/^/# /' "$work/add.log"; echo "Bail out! dkms add failed"; exit 1; }

n=1 failed=0
for f in "${flavours[@]}"; do
	n=$((n + 1))
	k=$(selftests/vm/kver.sh "$f") || { echo "not ok $n - dkms $f: no such kernel (make deps)"; failed=1; continue; }
	log=$work/$k.log
	# dkms installs only into a kernel's existing module directory.
	mkdir -p "$work/modules/$k"
	if dkms build -m baton -v "$ver" -k "$k" "${trees[@]}" >"$log" 2>&1 &&
		dkms install -m baton -v "$ver" -k "$k" --no-depmod "${trees[@]}" >>"$log" 2>&1; then
		ko=$(find "$work/modules/$k" -name 'baton.ko*' | head -n 1)
		vm=$( [[ -n "$ko" ]] && modinfo -F vermagic "$ko" | awk '{ print $1 }')
		if [[ "$vm" == "$k" ]]; then
			echo "ok $n - dkms build and install baton/$ver for $k ($f)"
			continue
		fi
		echo "not ok $n - dkms $f: installed module '${ko:-none}' has vermagic '${vm:-none}', not $k"
	else
		echo "not ok $n - dkms build/install baton/$ver for $k ($f) failed"
		# The make.log of the failed build says why.
		find "$work/tree" -name make.log -path "*/$k/*" -exec tail -n 30 {} + | sed 's/^/# /'
	fi
	sed 's/^/# /' "$log" | tail -n 20
	failed=1
done
((failed == 0))
