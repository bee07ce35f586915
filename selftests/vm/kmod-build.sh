#!/bin/bash
# selftests/vm/kmod-build.sh: owns building baton.ko for a kernel other than
# the one kmod/ is built for, in a directory of its own, so that kmod/baton.ko
# (the Debian 6.1 kernel's, what `make kmod` builds) stays as it is.
#
# Usage: kmod-build.sh [--clean] [--strict] NAME KDIR
#   Copies kmod/ (sources, Kbuild, Makefile; not Kbuild's generated files)
#   and uapi/ to build/kmod-NAME/, builds there against the kernel tree KDIR
#   with W=1 and sparse (C=1: the files that are recompiled), and prints the
#   path of its baton.ko. The log is build/kmod-NAME.log.
#   --clean   start from an empty directory (everything is compiled, so
#             everything is checked)
#   --strict  fail on any compiler or sparse warning (make check uses
#             --clean --strict: the module is W=1 and sparse clean on every
#             kernel it is tested on)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
srctree=$(cd "$here/../.." && pwd)
clean=0 strict=0
while (($#)); do
	case "$1" in
	--clean) clean=1; shift ;;
	--strict) strict=1; shift ;;
	*) break ;;
	esac
done
(($# == 2)) || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
name=$1 kdir=$2
dst="$srctree/build/kmod-$name" log="$srctree/build/kmod-$name.log"

[[ -d "$kdir" ]] || { echo "kmod-build.sh: no kernel tree $kdir" >&2; exit 1; }
((clean)) && rm -rf "$dst"
mkdir -p "$dst/uapi"
srcs=()
for f in "$srctree"/kmod/*.c "$srctree"/kmod/*.h; do
	[[ "$f" == *.mod.c ]] || srcs+=("$f")
done
# Copy only what changed, so that make sees unchanged sources as such.
cp -u "${srcs[@]}" "$srctree/kmod/Kbuild" "$srctree/kmod/Makefile" "$dst/"
cp -ru "$srctree/uapi/." "$dst/uapi/"
if ! make -C "$dst" KDIR="$kdir" W=1 C=1 >"$log" 2>&1; then
	cat "$log" >&2
	echo "kmod-build.sh: building baton.ko for $name ($kdir) failed" >&2
	exit 1
fi
# gcc and sparse both say "file:line:col: warning: ..." (or error:);
# objtool ("x.o: warning: objtool: ..."), modpost ("WARNING: modpost: ...")
# and the linker name no line.
if ((strict)) && grep -E ':[0-9]+(:[0-9]+)?: (warning|error):|: warning: objtool:|^WARNING: modpost:|^ld: warning:' "$log" >&2; then
	echo "kmod-build.sh: warnings building baton.ko for $name ($kdir); W=1 and sparse must be clean" >&2
	exit 1
fi
[[ "$(grep -c ' CHECK ' "$log" || true)" -gt 0 || $clean == 0 ]] ||
	{ echo "kmod-build.sh: sparse did not run (is it installed?)" >&2; exit 1; }
echo "$dst/baton.ko"
