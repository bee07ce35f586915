#!/bin/bash
# .ci/deps.sh: owns the list of Debian packages baton needs (`make deps`).
# Idempotent: when dpkg already reports every package installed and the
# kernel matrix is there, it does nothing (no network); otherwise one
# `apt-get update` and one install. Needs root (CI runs as root) only when
# something is missing.
#
# The kernel matrix (selftests/vm/kver.sh names its flavours): Debian 12's
# 6.1 (linux-image-amd64), and 6.12 and 6.12 PREEMPT_RT, each image with its
# headers. The 6.12 packages carry the ABI in their names
# (linux-image-6.12.117+deb12-rt-amd64), so they are found, not listed: the
# newest ABI for which the image and the headers of both flavours exist.
# Debian 12 gets 6.12 from bookworm-security (the linux-6.12 source) and
# from bookworm-backports; the latter is added to the apt sources (a file of
# its own, once) when a 6.12 package is to be installed and no source names
# it. The metapackages of backports are not installed: they would move
# linux-image-amd64, which names the 6.1 kernel, to 6.12.
set -euo pipefail

PKGS=(
	build-essential make perl gzip cpio xz-utils bc flex bison pkg-config
	linux-headers-amd64 linux-image-amd64 linux-source-6.1 kmod libelf-dev libssl-dev
	# the 6.12 debug and KCSAN kernels (debug-kernel.sh --variant debug612,
	# kcsan); `make check` builds baton with DKMS against every kernel
	linux-source-6.12 dkms
	# the debug kernel (selftests/vm/debug-kernel.sh) also needs, from the
	# lines above: build-essential bc flex bison libelf-dev (objtool)
	# libssl-dev xz-utils perl cpio linux-source-6.1; and flock:
	util-linux
	qemu-system-x86 busybox-static
	spin sparse strace valgrind
	libnl-3-dev libnl-genl-3-dev
	# selftests/host/batonctl_memfd.c parses batonctl's JSON with jansson
	libjansson-dev
	# make pkg-check: the man pages render with groff and man -l (g++, for
	# the C++ build of <baton/baton.h>, comes with build-essential)
	groff-base man-db
	# .ci/ynl.sh: the kernel's YNL generator (tools/net/ynl of linux-source-6.12)
	python3-yaml python3-jsonschema
	# .ci/lint.sh: every Documentation/*.rst must parse
	python3-docutils
	# bench/: the peers (DPDK rte_ring, Concurrency Kit, iceoryx), liburcu for
	# the epoch comparisons, gnuplot for the plots; valgrind above: the perf gate
	dpdk-dev libck-dev liburcu-dev iceoryx libiceoryx-binding-c-dev
	gnuplot-nox
	# bench/pool_bench's RSS series: jemalloc with dirty_decay_ms (LD_PRELOAD)
	libjemalloc2
)

missing=()
for p in "${PKGS[@]}"; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[[ "$st" == "install ok installed" ]] || missing+=("$p")
done

root=$(cd "$(dirname "$0")/.." && pwd)
kver="$root/selftests/vm/kver.sh"
need612=0
"$kver" debian612 >/dev/null 2>&1 && "$kver" debian612rt >/dev/null 2>&1 || need612=1

backports=/etc/apt/sources.list.d/baton-bookworm-backports.sources
add_backports() {
	if grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		return 0
	fi
	echo "deps: adding bookworm-backports to the apt sources ($backports)"
	cat >"$backports" <<-'EOF'
		Types: deb
		URIs: http://deb.debian.org/debian
		Suites: bookworm-backports
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
}

# Whether apt can install a package: it has a candidate version. (apt-cache
# show also succeeds for a name only referred to by another package, as
# linux-image-6.12.118+deb12-amd64 was while only its -unsigned build had
# reached the mirror.)
installable() {
	local policy
	policy=$(apt-cache policy "$1" 2>/dev/null) || return 1
	[[ "$policy" =~ Candidate:\ [^\(] ]]
}

# One kernel image of an ABI: the signed package, or else the unsigned build
# of the same kernel (QEMU boots either; both install /boot/vmlinuz-<abi>).
image612() {
	local p
	for p in "linux-image-$1" "linux-image-$1-unsigned"; do
		if installable "$p"; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# The four packages of the newest 6.12 ABI (6.12.117+deb12) that apt can
# install: both images (generic and -rt) and their headers.
pkgs612() {
	local abi img rt
	apt-cache pkgnames linux-headers-6.12. |
		sed -n 's/^linux-headers-\(6\.12\.[0-9]*+[a-z0-9]*\)-amd64$/\1/p' |
		sort -rV | while read -r abi; do
		img=$(image612 "$abi-amd64") || continue
		rt=$(image612 "$abi-rt-amd64") || continue
		installable "linux-headers-$abi-amd64" || continue
		installable "linux-headers-$abi-rt-amd64" || continue
		echo "$img linux-headers-$abi-amd64 $rt linux-headers-$abi-rt-amd64"
		break
	done
	return 0
}

if ((${#missing[@]} || need612)); then
	((need612)) && missing+=("a 6.12 kernel and its -rt flavour")
	echo "deps: installing: ${missing[*]}"
	if [[ $(id -u) -ne 0 ]]; then
		echo "deps: must run as root to install packages" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	((need612)) && add_backports
	apt-get -o DPkg::Lock::Timeout=900 -o Acquire::Retries=3 update
	if ((need612)); then
		read -r -a k612 <<<"$(pkgs612)"
		((${#k612[@]} == 4)) || { echo "deps: apt can install no linux-image-6.12.*-amd64 with headers and an -rt flavour" >&2; exit 1; }
		echo "deps: the 6.12 kernels: ${k612[*]}"
		PKGS+=("${k612[@]}")
	fi
	apt-get -o DPkg::Lock::Timeout=900 -o Acquire::Retries=3 install -y --no-install-recommends "${PKGS[@]}"
else
	echo "deps: all ${#PKGS[@]} packages installed, and the 6.12 kernels"
fi

# The headers and the image must be the same kernel release: the module is
# built against one and loaded into the other. kver.sh finds the release
# that has both, or fails saying so.
for k in debian debian612 debian612rt; do
	v=$("$kver" "$k")
	echo "deps: $k kernel $v (headers /lib/modules/$v/build, image /boot/vmlinuz-$v)"
done
