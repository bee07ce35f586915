#!/bin/bash
# kver.sh: owns the answer to "which kernel do we build for and boot?".
# Prints one kernel release (e.g. 6.1.0-57-amd64) for which BOTH the headers
# (/lib/modules/<ver>/build) and the image (/boot/vmlinuz-<ver>) are installed.
# The host's `uname -r` is irrelevant: the module is only ever loaded in the VM.
#
# Usage: kver.sh [FLAVOUR]   (default debian; run-vm.sh passes its
#                             BATON_VM_KERNEL)
#   debian       Debian 12's kernel (6.1). Order: $BATON_KVER if set; else what
#                the linux-image-amd64 metapackage depends on; else the newest
#                release that has both headers and image.
#   debian612    the newest installed 6.12 (6.12.*-amd64, not -rt or -cloud)
#   debian612rt  the newest installed 6.12 PREEMPT_RT (6.12.*-rt-amd64)
# .ci/deps.sh installs all three.
set -euo pipefail

usable() {
	[[ -n "$1" && -r "/boot/vmlinuz-$1" && -d "/lib/modules/$1/build" ]]
}

# newest REGEX: the newest usable release whose name matches REGEX.
newest() {
	local d v best=""
	for d in /lib/modules/*/build; do
		[[ -d "$d" ]] || continue
		v=${d#/lib/modules/}
		v=${v%/build}
		[[ "$v" =~ $1 ]] || continue
		usable "$v" && best+="$v"$'\n'
	done
	printf '%s' "$best" | sort -V | tail -n 1
}

flavour=${1:-debian}
case "$flavour" in
debian612) re='^6\.12\.[0-9]+\+[a-z0-9]+-amd64$' ;;
debian612rt) re='^6\.12\.[0-9]+\+[a-z0-9]+-rt-amd64$' ;;
debian) re= ;;
*) echo "kver.sh: unknown flavour '$flavour' (debian, debian612, debian612rt)" >&2; exit 2 ;;
esac

if [[ -n "$re" ]]; then
	v=$(newest "$re")
	if [[ -z "$v" ]]; then
		echo "kver.sh: no $flavour kernel with both /boot/vmlinuz-<ver> and /lib/modules/<ver>/build; run 'make deps'" >&2
		exit 1
	fi
	echo "$v"
	exit 0
fi

if [[ -n "${BATON_KVER:-}" ]]; then
	if ! usable "$BATON_KVER"; then
		echo "kver.sh: BATON_KVER=$BATON_KVER but /boot/vmlinuz-$BATON_KVER or /lib/modules/$BATON_KVER/build is missing" >&2
		exit 1
	fi
	echo "$BATON_KVER"
	exit 0
fi

# "linux-image-6.1.0-57-amd64 (= 6.1.192-3)" -> 6.1.0-57-amd64
meta=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null |
	sed -n 's/^linux-image-\([^ ,]*\).*/\1/p' || true)
if usable "$meta"; then
	echo "$meta"
	exit 0
fi

best=$(newest '.')
if [[ -z "$best" ]]; then
	echo "kver.sh: no kernel with both /boot/vmlinuz-<ver> and /lib/modules/<ver>/build; run 'make deps'" >&2
	exit 1
fi
echo "$best"
