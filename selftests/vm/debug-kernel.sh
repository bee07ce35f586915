#!/bin/bash
# selftests/vm/debug-kernel.sh: owns the test kernels built from source (the
# debug kernels: KASAN, lockdep, kmemleak, UBSAN, fault injection; and the
# KCSAN kernel) and the baton.ko built against each.
#
# Usage: debug-kernel.sh [--variant V] kernel   build the kernel, or find it
#                                 in the cache; print its cache directory
#        debug-kernel.sh [--variant V] dir      print the cache directory if
#                                 the kernel is built, else fail (never builds)
#        debug-kernel.sh [--variant V] module   the kernel (as above), then
#                                 baton.ko built against it in
#                                 build/kmod-V/ (kmod-build.sh); print its path
#
# Variants (BATON_VM_KERNEL names them too):
#   debug     (the default) linux-source-6.1, debug-kernel.config: KASAN,
#             lockdep, kmemleak, UBSAN, fault injection
#   debug612  linux-source-6.12, kernel-612.config + debug612-kernel.config:
#             the same checkers plus PROVE_RAW_LOCK_NESTING
#   kcsan     linux-source-6.12, kernel-612.config + kcsan-kernel.config:
#             PREEMPT_RT with KCSAN, lockdep and DEBUG_ATOMIC_SLEEP
#
# The kernel: Debian's source tarball, `make tinyconfig` plus the variant's
# config fragment (its files concatenated), built out of tree (O=), at nice
# 19. The cache, outside the repository:
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
# Environment: BATON_DEBUG_KERNEL_CACHE, BATON_KERNEL_SOURCE (the 6.1 tarball,
# default /usr/src/linux-source-6.1.tar.xz), BATON_KERNEL_SOURCE_612
# (default /usr/src/linux-source-6.12.tar.xz), BATON_DEBUG_KERNEL_JOBS
# (default nproc).
set -euo pipefail
# Command substitutions too ($(ensure_kernel) in module mode): without it
# bash runs them with errexit off, and a failed step inside went on.
shopt -s inherit_errexit

here=$(cd "$(dirname "$0")" && pwd)
srctree=$(cd "$here/../.." && pwd)
cache=${BATON_DEBUG_KERNEL_CACHE:-/var/cache/baton/debug-kernel}
jobs=${BATON_DEBUG_KERNEL_JOBS:-$(nproc)}

die() {
	echo "debug-kernel.sh: $*" >&2
	exit 1
}

variant=debug
if [[ "${1:-}" == --variant ]]; then
	variant=${2:-}
	shift 2 || die "--variant needs a name"
fi
# fragment: the one file configure_kernel merges and verify_config checks.
case "$variant" in
debug)
	fragment="$here/debug-kernel.config"
	tarball=${BATON_KERNEL_SOURCE:-/usr/src/linux-source-6.1.tar.xz}
	;;
debug612|kcsan)
	mkdir -p "$srctree/build"
	fragment="$srctree/build/$variant-kernel.config"
	cat "$here/kernel-612.config" "$here/$variant-kernel.config" >"$fragment.tmp"
	mv "$fragment.tmp" "$fragment"
	tarball=${BATON_KERNEL_SOURCE_612:-/usr/src/linux-source-6.12.tar.xz}
	;;
*) die "unknown variant '$variant' (debug, debug612, kcsan)" ;;
esac

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
	[[ -r "$tarball" ]] || die "$tarball missing (make deps installs it)"
	{
		cat "$fragment"
		recipe
		stat -c '%n %s %Y' "$tarball"
		gcc --version | head -n 1
	} | sha256sum | cut -c1-16
}

# The steps of a build, each one's failure the build's: called as the
# left side of ||, where bash ignores errexit, so each step says so itself
# (verify_config's refusal of a dropped option included).
build_steps() {
	local entry=$1
	tar -xJf "$tarball" -C "$entry/src" --strip-components=1 || return
	configure_kernel "$entry/src" "$entry/obj" || return
	verify_config "$entry/obj" || return
	build_kernel "$entry/src" "$entry/obj" || return
	# build_kernel's status is its last make's: the image must be there.
	[[ -s "$entry/obj/arch/x86/boot/bzImage" ]] ||
		{ echo "debug-kernel.sh: no bzImage after the build" >&2; return 1; }
}

# Extract, configure and build in place (the O= tree records the source
# path, so the entry cannot be renamed afterwards). "ready" is written last:
# an entry without it is a build that died, and is started over.
build_entry() {
	local entry=$1 start=$SECONDS
	rm -rf "$entry"
	mkdir -p "$entry/src" "$entry/obj"
	# CPU-heavy: give way to everything else (the VMs of other runs).
	renice -n 19 -p $$ >/dev/null 2>&1 || true
	echo "debug-kernel.sh: building the $variant kernel in $entry (-j$jobs, log build.log there)" >&2
	build_steps "$entry" >"$entry/build.log" 2>&1 || {
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
	[[ -n $key ]] || die "no cache key"
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

# baton.ko for this kernel, in build/kmod-<variant>/ (a copy of kmod/ and
# uapi/), so that kmod/baton.ko, built for the Debian kernel, stays as it is.
build_module() {
	"$here/kmod-build.sh" "$variant" "$1/obj" ||
		die "building baton.ko for the $variant kernel failed"
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
