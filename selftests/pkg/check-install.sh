#!/bin/bash
# SPDX-License-Identifier: MIT
#
# selftests/pkg/check-install.sh: owns the packaging test (`make pkg-check`,
# a stage of `make check`). Everything is installed under build/pkg/ with
# DESTDIR and PREFIX=/usr; nothing touches the host's /usr, /lib/modules or
# groups. TAP, one result per check:
#
#  - install-lib works without kernel headers (BATON_KVER names no kernel),
#    and `make install` without them stops with a message naming
#    install-lib, before installing anything;
#  - one version: `make -s version` (lib/include/baton_version.h) is
#    baton.pc's, the soname's major and the file name's, dkms.conf's and
#    /usr/src/baton-<version>'s, the macros' and baton_version()'s;
#  - a C and a C++ program (hello.c, hello.cc) including <baton/baton.h>
#    build against the staged install with pkg-config (-Werror -pedantic)
#    and run;
#  - baton_pool_info's two versions: a new binary binds to LIBBATON_2.5,
#    and the LIBBATON_2.1 version writes only the old struct
#    (pool_info_compat.c);
#  - a binary using the inline batch release binds to LIBBATON_2.6;
#  - a binary opening pools binds __baton_pool_create_idle/_open_idle
#    (LIBBATON_2.8) and the inline allocation's reap wait (LIBBATON_2.7),
#    and code compiled against an older baton.h binds baton_pool_create/
#    _open to LIBBATON_2.1 (idle magazines: the header decides);
#  - Documentation/examples/ build the same way and run on memfd;
#  - every public function has a man3 page, and every installed page
#    renders without a warning (groff -ww; man -l --warnings);
#  - make install, then make uninstall, leaves no file behind.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
MAKE=${MAKE:-make}
here=selftests/pkg
work=$root/build/pkg
rm -rf "$work"
mkdir -p "$work"

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $*"; }
# check DESC CMD...: one result; CMD's output goes to the log, and its
# last lines into the TAP stream as diagnostics when it fails.
check() {
	local desc=$1 log
	shift
	log=$work/$n.log
	if "$@" >"$log" 2>&1; then
		ok "$desc"
	else
		not_ok "$desc"
		tail -n 15 "$log" | sed 's/^/# /'
	fi
}
mk() { $MAKE --no-print-directory "$@"; }

echo "TAP version 13"
echo "1..23"

# ---- no kernel headers
nohdr=(BATON_KVER=no-such-kernel)
lib_stage=$work/lib
check "make install-lib without kernel headers" \
	env "${nohdr[@]}" $MAKE --no-print-directory install-lib DESTDIR="$lib_stage" PREFIX=/usr
out=$(env "${nohdr[@]}" $MAKE --no-print-directory install DESTDIR="$work/nohdr" PREFIX=/usr 2>&1)
if [[ $out == *"no kernel build tree"*install-lib* && $out != *"/lib/modules//build"* &&
	! -e $work/nohdr ]]; then
	ok "make install without kernel headers says so, names install-lib, installs nothing"
else
	not_ok "make install without kernel headers"
	tail -n 5 <<<"$out" | sed 's/^/# /'
fi

# pkg-config, as a user of the staged install sees it.
pc() {
	PKG_CONFIG_LIBDIR=$lib_stage/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$lib_stage \
		pkg-config "$@"
}
export LD_LIBRARY_PATH=$lib_stage/usr/lib
# The flags, split into words as a shell's $(pkg-config ...) would.
read -ra pc_cflags <<<"$(pc --cflags baton)"
read -ra pc_libs <<<"$(pc --libs baton)"
read -ra pc_static <<<"$(pc --libs --static baton)"

# ---- one version
ver=$(mk -s version)
major=${ver%%.*}
check "baton.pc says $ver" test "$(pc --modversion baton)" = "$ver"
soname=$(readelf -d "$lib_stage/usr/lib/libbaton.so" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
check "soname $soname is libbaton.so.$major, file libbaton.so.$ver" \
	test "$soname" = "libbaton.so.$major" -a -f "$lib_stage/usr/lib/libbaton.so.$ver"
dkms_stage=$work/dkms
mk install-dkms DESTDIR="$dkms_stage" >"$work/dkms.log" 2>&1
check "dkms.conf and /usr/src/baton-$ver say $ver" \
	grep -qx "PACKAGE_VERSION=\"$ver\"" "$dkms_stage/usr/src/baton-$ver/dkms.conf"

# ---- C and C++ against the staged install
cflags=(-Wall -Wextra -Werror -pedantic)
check "hello.c: cc -std=c11 with pkg-config, <baton/baton.h>" \
	cc -std=c11 "${cflags[@]}" "${pc_cflags[@]}" -o "$work/hello" $here/hello.c "${pc_libs[@]}"
check "hello.c runs: BATON_VERSION_STRING, the macros and baton_version() say $ver" \
	bash -c "[[ \"\$('$work/hello')\" == '$ver $ver' ]]"
check "hello.c links statically (pkg-config --static)" \
	cc -std=c11 "${cflags[@]}" -static "${pc_cflags[@]}" -o "$work/hello.static" \
	$here/hello.c "${pc_static[@]}"
check "hello.cc: g++ -std=c++11 with pkg-config, <baton/baton.h>" \
	g++ -std=c++11 "${cflags[@]}" "${pc_cflags[@]}" -o "$work/hellocc" $here/hello.cc "${pc_libs[@]}"
check "hello.cc runs" bash -c "[[ \"\$('$work/hellocc')\" == '$ver from C++' ]]"

# ---- a binary built against 2.1..2.4 after baton_pool_info's struct grew
check "pool_info_compat.c builds; its baton_pool_info binds to LIBBATON_2.5" \
	bash -c "cc -std=c11 ${cflags[*]} ${pc_cflags[*]} -o '$work/pool_info_compat' \
		$here/pool_info_compat.c ${pc_libs[*]} -ldl &&
		objdump -T '$work/pool_info_compat' | grep -q 'LIBBATON_2.5) *baton_pool_info\$'"
check "baton_pool_info@LIBBATON_2.1 writes only 2.1's struct, the same snapshot" \
	env BATON_BACKEND=memfd "$work/pool_info_compat"

# ---- the batch release binds to the 2.6 library that restarts past a batch
printf '#include <baton/baton.h>\nvoid f(struct baton_ring *r) { baton_mpsc_cons_release_n(r, 2); }\nint main(void) { return 0; }\n' >"$work/release_n.c"
check "a binary using baton_mpsc_cons_release_n binds to LIBBATON_2.6" \
	bash -c "cc -std=c11 ${cflags[*]} ${pc_cflags[*]} -o '$work/release_n' \
		'$work/release_n.c' ${pc_libs[*]} &&
		objdump -T '$work/release_n' | grep -q 'LIBBATON_2.6) *__baton_mpsc_release_wake\$'"

# ---- handles whose frees leave IDLE need 2.7's inline allocation
printf '#include <baton/baton.h>\nint f(struct baton_pool **p, uint64_t *h) {\n\tif (baton_pool_create("x", 0, p) || baton_pool_open("x", p))\n\t\treturn 1;\n\treturn baton_pool_alloc(*p, 1, h);\n}\nint main(void) { return 0; }\n' >"$work/idle_mag.c"
check "a binary opening pools binds the idle create and open (2.8) and the reap wait (2.10)" \
	bash -c "cc -std=c11 ${cflags[*]} ${pc_cflags[*]} -o '$work/idle_mag' \
		'$work/idle_mag.c' ${pc_libs[*]} &&
		objdump -T '$work/idle_mag' > '$work/idle_mag.T' &&
		grep -q 'LIBBATON_2.8) *__baton_pool_create_idle\$' '$work/idle_mag.T' &&
		grep -q 'LIBBATON_2.8) *__baton_pool_open_idle\$' '$work/idle_mag.T' &&
		grep -q 'LIBBATON_2.10) *__baton_pool_alloc_during_reap\$' '$work/idle_mag.T' &&
		! grep -q ' __baton_pool_alloc_reaped\$' '$work/idle_mag.T' &&
		! grep -q ' baton_pool_open\$' '$work/idle_mag.T'"
# An object compiled against an older baton.h names plain create and open
# (declarations without the label: BATON__POOL_OUTLINE): linked with this
# library it must get their 2.1 versions, OWNED magazines, whatever the
# newest version is.
check "code compiled against an older baton.h binds create and open to LIBBATON_2.1" \
	bash -c "cc -std=c11 ${cflags[*]} ${pc_cflags[*]} -DBATON__POOL_OUTLINE \
		-o '$work/old_mag' '$work/idle_mag.c' ${pc_libs[*]} &&
		objdump -T '$work/old_mag' > '$work/old_mag.T' &&
		grep -q 'LIBBATON_2.1) *baton_pool_create\$' '$work/old_mag.T' &&
		grep -q 'LIBBATON_2.1) *baton_pool_open\$' '$work/old_mag.T' &&
		! grep -q '_idle\$' '$work/old_mag.T'"

# ---- the examples, built as a user builds them, on memfd
check "Documentation/examples build against the staged install" \
	env PKG_CONFIG_LIBDIR="$lib_stage/usr/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$lib_stage" \
	$MAKE --no-print-directory -C Documentation/examples OUT="$work/examples"
for ex in spsc_pipeline mpsc_fanin epoch_config pool_frames; do
	check "example $ex on memfd" env BATON_BACKEND=memfd timeout 300 "$work/examples/$ex"
	sed 's/^/# /' "$work/$((n - 1)).log"
done

# ---- man pages
man3=$lib_stage/usr/share/man/man3
# The public functions: the library's exported ones and the header's
# inline ones (an object compiled with -fkeep-inline-functions has them),
# without the __ and baton__ internals.
printf '#include <baton/baton.h>\n' >"$work/pub.c"
cc -std=c11 -O0 -fkeep-inline-functions "${pc_cflags[@]}" -c -o "$work/pub.o" "$work/pub.c"
{
	nm "$work/pub.o" | awk '$2 == "t" || $2 == "T" { print $3 }'
	nm -D --defined-only "$lib_stage/usr/lib/libbaton.so" | awk '{ sub(/@.*/, "", $3); print $3 }'
} | grep -E '^baton_[a-z]' | sort -u >"$work/public.txt"
missing=$(while read -r f; do [[ -f $man3/$f.3 ]] || echo "$f"; done <"$work/public.txt")
if [[ -s $work/public.txt && -z $missing ]]; then
	ok "a man3 page for each of the $(wc -l <"$work/public.txt") public functions"
else
	not_ok "public functions without a man3 page:" $missing
fi
# From the man root, as man-db does, so that .so pages resolve (a
# subshell: the cd is its own).
lint_man() (
	local mroot=$lib_stage/usr/share/man p out bad=0
	cd "$mroot" || return 1
	for p in man3/* man8/*; do
		out=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$p" 2>&1)
		if command -v man >/dev/null; then
			out+=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$p" 2>&1 >/dev/null)
		fi
		[[ -z $out ]] || { echo "$p: $out"; bad=1; }
	done
	echo "$(ls man3 | wc -l) man3 pages, $(ls man8 | wc -l) man8 page"
	((bad == 0)) && [[ -f man8/batonctl.8 ]]
)
check "every installed man page (man3, batonctl.8) renders without a warning" lint_man

# ---- install, uninstall, nothing left
full=$work/full
if selftests/vm/kver.sh >/dev/null 2>&1; then
	what="make install (library, module, DKMS tree, udev rule)"
	targets=(install)
else
	what="make install-lib install-dkms (no kernel headers here)"
	targets=(install-lib install-dkms)
fi
# A failed install fails the check, whatever it managed to put down.
irc=0
mk "${targets[@]}" DESTDIR="$full" PREFIX=/usr >"$work/install.log" 2>&1 || irc=$?
installed=$(find "$full" ! -type d 2>/dev/null | wc -l)
mk uninstall DESTDIR="$full" PREFIX=/usr >"$work/uninstall.log" 2>&1
left=$(cd "$full" 2>/dev/null && find . ! -type d -o -name '*baton*')
if ((irc == 0 && installed > 100)) && [[ -z $left ]]; then
	ok "$what put down $installed files; make uninstall left none"
else
	not_ok "$what (status $irc) put down $installed files; make uninstall left:" $left
	tail -n 10 "$work/install.log" "$work/uninstall.log" | sed 's/^/# /'
fi

exit $failed
