#!/bin/bash
# .ci/deps.sh: owns the list of Debian packages baton needs (`make deps`).
# Idempotent: when dpkg already reports every package installed it does
# nothing (no network); otherwise one `apt-get update` and one install.
# Needs root (CI runs as root) only when something is missing.
set -euo pipefail

PKGS=(
	build-essential make perl gzip cpio xz-utils bc flex bison pkg-config
	linux-headers-amd64 linux-image-amd64 linux-source-6.1 kmod libelf-dev libssl-dev
	# the debug kernel (selftests/vm/debug-kernel.sh) also needs, from the
	# lines above: build-essential bc flex bison libelf-dev (objtool)
	# libssl-dev xz-utils perl cpio linux-source-6.1; and flock:
	util-linux
	qemu-system-x86 busybox-static
	spin sparse strace valgrind
	libnl-3-dev libnl-genl-3-dev
	# bench/: the peers (DPDK rte_ring, Concurrency Kit, iceoryx), liburcu for
	# the epoch comparisons, gnuplot for the plots; valgrind above: the perf gate
	dpdk-dev libck-dev liburcu-dev iceoryx libiceoryx-binding-c-dev
	gnuplot-nox
)

missing=()
for p in "${PKGS[@]}"; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[[ "$st" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]})); then
	echo "deps: installing: ${missing[*]}"
	if [[ $(id -u) -ne 0 ]]; then
		echo "deps: must run as root to install packages" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update
	apt-get install -y --no-install-recommends "${PKGS[@]}"
else
	echo "deps: all ${#PKGS[@]} packages installed"
fi

# The headers and the image must be the same kernel release: the module is
# built against one and loaded into the other. kver.sh finds the release
# that has both, or fails saying so.
root=$(cd "$(dirname "$0")/.." && pwd)
kver=$("$root/selftests/vm/kver.sh")
echo "deps: kernel $kver (headers /lib/modules/$kver/build, image /boot/vmlinuz-$kver)"
