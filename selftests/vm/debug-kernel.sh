#!/bin/bash
# selftests/vm/debug-kernel.sh: owns the debug test kernel (KASAN, lockdep,
# kmemleak, UBSAN, fault injection) and the baton.ko built against it.
#
# Usage: debug-kernel.sh kernel   build the kernel, or find it in the cache;
#                                 print its cache directory
#        debug-kernel.sh dir      print the cache directory if the kernel is
#                                 built, else fail (never builds)
#        debug-kernel.sh module   the kernel (as above), then baton.ko built
#                                 against it in build/kmod-debug/; print the
#                                 path of that baton.ko
#
# The kernel: Debian's linux-source-6.1 tarball (the source of the kernel the
# normal VM boots), `make tinyconfig` plus selftests/vm/debug-kernel.config,
# built out of tree (O=). The cache, outside the repository:
#   $BATON_DEBUG_KERNEL_CACHE (default /var/cache/baton/debug-kernel)/<key>/
#     src/      the extracted source tree   (`make -C obj M=...` needs both)
#     obj/      the O= tree: .config, vmlinux, Module.symvers, scripts, objtool
#     bzImage   what QEMU boots
#     build.log the build's output
#     ready     written last: the entry is complete
# <key> hashes the config fragment, the build recipe (the text of the
# functions below that produce the tree), the tarball's name, size and mtime,
# and the compiler's version: a change to any of them builds a new entry,
# nothing else does. One build per key at a time: an flock on <key>.lock; a
# second caller waits and then finds the entry ready. Old keys are not
# removed: delete their directories by hand.
#
# Environment: BATON_DEBUG_KERNEL_CACHE, BATON_KERNEL_SOURCE (the tarball,
# default /usr/src/linux-source-6.1.tar.xz), BATON_DEBUG_KERNEL_JOBS
# (default nproc).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
srctree=$(cd "$here/../.." && pwd)
fragment="$here/debug-kernel.config"
tarball=${BATON_KERNEL_SOURCE:-/usr/src/linux-source-6.1.tar.xz}
cache=${BATON_DEBUG_KERNEL_CACHE:-/var/cache/baton/debug-kernel}
jobs=${BATON_DEBUG_KERNEL_JOBS:-$(nproc)}

die() {
	echo "debug-kernel.sh: $*" >&2
	exit 1
}

# ---- the recipe: these functions are part of the cache key ----

# tinyconfig, then the fragment, then olddefconfig for what follows from it.
configure_kernel() {
	local src=$1 obj=$2
	make -C "$src" O="$obj" ARCH=x86_64 tinyconfig
	"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" \
		"$obj/.config" "$fragment"
	make -C "$src" O="$obj" ARCH=x86_64 olddefconfig
}

# Every line of the fragment must have survived olddefconfig: an option
# whose dependencies are missing is dropped silently otherwise.
# shellcheck disable=SC1087 # "$sym[= ]" is $sym, then a bracket expression
verify_config() {
	local obj=$1 line sym want got bad=0
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*) sym=${line%%=*} want=$line ;;
		"# CONFIG_"*" is not set") sym=${line#\# } sym=${sym%% *} want=$line ;;
		*) continue ;;
		esac
		got=$(grep -E "^(# )?$sym[= ]" "$obj/.config" || true)
		if [[ "$got" != "$want" ]] &&
			! [[ "$want" == *" is not set" && -z "$got" ]]; then
			echo "debug-kernel.sh: wanted '$want', .config has '${got:-nothing}'" >&2
			bad=1
		fi
	done <"$fragment"
	return "$bad"
}

# vmlinux and bzImage, then what an external module build needs on top
# (modules_prepare: scripts, objtool, the generated headers).
build_kernel() {
	local src=$1 obj=$2
	make -C "$src" O="$obj" ARCH=x86_64 -j"$jobs" bzImage modules
	make -C "$src" O="$obj" ARCH=x86_64 -j"$jobs" modules_prepare
}

recipe() {
	declare -f configure_kernel verify_config build_kernel
}

# ---- the cache ----

cache_key() {
	[[ -r "$tarball" ]] || die "$tarball missing (apt-get install linux-source-6.1, or make deps)"
	{
		cat "$fragment"
		recipe
		stat -c '%n %s %Y' "$tarball"
		gcc --version | head -n 1
	} | sha256sum | cut -c1-16
}

# Extract, configure and build in place (the O= tree records the source
# path, so the entry cannot be renamed afterwards). "ready" is written last:
# an entry without it is a build that died, and is started over.
build_entry() {
	local entry=$1 start=$SECONDS
	rm -rf "$entry"
	mkdir -p "$entry/src" "$entry/obj"
	echo "debug-kernel.sh: building the debug kernel in $entry (-j$jobs, log build.log there)" >&2
	{
		tar -xJf "$tarball" -C "$entry/src" --strip-components=1
		configure_kernel "$entry/src" "$entry/obj"
		verify_config "$entry/obj"
		build_kernel "$entry/src" "$entry/obj"
	} >"$entry/build.log" 2>&1 || {
		tail -n 30 "$entry/build.log" >&2
		die "kernel build failed (log: $entry/build.log)"
	}
	cp "$entry/obj/arch/x86/boot/bzImage" "$entry/bzImage"
	cp "$entry/obj/.config" "$entry/config"
	echo "built in $((SECONDS - start))s, $(date -u +%FT%TZ)" >"$entry/ready"
	echo "debug-kernel.sh: kernel built in $((SECONDS - start))s" >&2
}

ensure_kernel() {
	local key entry
	key=$(cache_key)
	entry="$cache/$key"
	if [[ ! -f "$entry/ready" ]]; then
		mkdir -p "$cache"
		exec 9>"$cache/$key.lock"
		flock 9
		# Someone else may have built it while we waited.
		[[ -f "$entry/ready" ]] || build_entry "$entry"
		exec 9>&-
	fi
	echo "$entry"
}

# baton.ko for the debug kernel, in build/kmod-debug/ (a copy of kmod/ and
# uapi/), so that kmod/baton.ko, built for the Debian kernel, stays as it is.
build_module() {
	local entry=$1 dst="$srctree/build/kmod-debug" f srcs=()
	mkdir -p "$dst/uapi"
	# The sources, not what Kbuild generated in kmod/ for the Debian
	# kernel (baton.mod.c carries that kernel's vermagic).
	for f in "$srctree"/kmod/*.c "$srctree"/kmod/*.h; do
		[[ "$f" == *.mod.c ]] || srcs+=("$f")
	done
	# Copy only what changed, so that make sees unchanged sources as such.
	cp -u "${srcs[@]}" "$srctree/kmod/Kbuild" "$srctree/kmod/Makefile" "$dst/"
	cp -ru "$srctree/uapi/." "$dst/uapi/"
	make -C "$dst" KDIR="$entry/obj" >"$srctree/build/kmod-debug.log" 2>&1 || {
		cat "$srctree/build/kmod-debug.log" >&2
		die "building baton.ko for the debug kernel failed"
	}
	echo "$dst/baton.ko"
}

case "${1:-}" in
kernel) ensure_kernel ;;
dir)
	entry="$cache/$(cache_key)"
	[[ -f "$entry/ready" ]] || die "the debug kernel is not built ($entry); run '$0 kernel'"
	echo "$entry"
	;;
module)
	entry=$(ensure_kernel)
	build_module "$entry"
	;;
*) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
