#!/bin/bash
# .ci/ynl.sh: owns the kernel's YNL tools as baton uses them, and the check
# that uapi/linux/baton_nl.h cannot drift from the netlink spec
# (Documentation/netlink/specs/baton.yaml).
#
#   ynl.sh tree     extract tools/net/ynl and the netlink schemas from
#                   linux-source-6.12 into build/ynl/src (once; never
#                   committed) and print that directory
#   ynl.sh uapi     generate the family's uapi header from the spec with
#                   ynl-gen-c.py --mode uapi (build/ynl/gen/linux/baton_nl.h)
#   ynl.sh check    TAP: every constant the generated header defines has the
#                   same name and value in uapi/linux/baton_nl.h, and the
#                   hand-written header defines no attribute, command or
#                   event type the spec lacks (the *_UNSPEC placeholders
#                   aside). The hand-written header keeps its comments; the
#                   values are the spec's.
#   ynl.sh user     generate the C user library of the family (--mode user)
#                   into build/ynl/gen/ (baton-user.[ch])
#
# The generator runs under /usr/bin/python3 with Debian's python3-yaml and
# python3-jsonschema (.ci/deps.sh). It finds the kernel tree by walking up to
# a MAINTAINERS file and the schema next to the spec's directory, hence the
# spec is copied into the extracted tree.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tarball=${BATON_LINUX_SOURCE_612:-/usr/src/linux-source-6.12.tar.xz}
src=build/ynl/src
gen=build/ynl/gen
spec=Documentation/netlink/specs/baton.yaml
py=${BATON_PYTHON:-/usr/bin/python3}

ynl_tree() {
	if [[ ! -f $src/.extracted ]]; then
		[[ -r $tarball ]] || { echo "ynl: $tarball missing (make deps)" >&2; return 1; }
		rm -rf "$src"
		mkdir -p "$src"
		tar -xJf "$tarball" -C "$src" --strip-components=1 --wildcards \
			'linux-source-6.12/tools/net/ynl/*' \
			'linux-source-6.12/Documentation/netlink/*.yaml'
		: >"$src/MAINTAINERS"
		touch "$src/.extracted"
	fi
	mkdir -p "$src/Documentation/netlink/specs"
	cp "$spec" "$src/Documentation/netlink/specs/baton.yaml"
}

# $1: mode (uapi or user), $2: --header or --source, $3: output file
ynl_gen() {
	mkdir -p "$(dirname "$3")"
	(cd "$src/tools/net/ynl" &&
		"$py" ynl-gen-c.py --mode "$1" "$2" \
			--spec "$PWD/../../../Documentation/netlink/specs/baton.yaml" \
			-o "$root/$3")
}

ynl_uapi() {
	ynl_tree
	ynl_gen uapi --header "$gen/linux/baton_nl.h"
}

ynl_user() {
	ynl_tree
	ynl_gen user --header "$gen/baton-user.h"
	ynl_gen user --source "$gen/baton-user.c"
}

# The constants a header defines: enumerators and object-like macros.
constants() {
	sed -n -e 's/^[[:space:]]*\(BATON_[A-Z0-9_]*\)[[:space:]]*[,=].*/\1/p' \
		-e 's/^[[:space:]]*\(BATON_[A-Z0-9_]*\)[[:space:]]*$/\1/p' \
		-e 's/^#define[[:space:]]\{1,\}\(BATON_[A-Z0-9_]*\)[[:space:]].*/\1/p' "$1" |
		sort -u
}

# Print "NAME value" for every name in file $2, compiled against the
# header directory $1 (a missing name fails the compile, with its name).
dump_values() {
	local inc=$1 names=$2 out=$3 c=$gen/dump.c
	{
		echo '#include <stdio.h>'
		echo '#include <linux/baton_nl.h>'
		echo 'static void s(const char *n, const char *v) { printf("%s \"%s\"\n", n, v); }'
		echo 'static void i(const char *n, long long v) { printf("%s %lld\n", n, v); }'
		echo '#define P(x) _Generic((x), char *: s, const char *: s, default: i)(#x, x)'
		echo 'int main(void) {'
		sed 's/.*/\tP(&);/' "$names"
		echo '	return 0;'
		echo '}'
	} >"$c"
	cc -std=c11 -Wall -Werror -I"$inc" -I uapi -o "$gen/dump" "$c" && "$gen/dump" >"$out"
}

ynl_check() {
	local n=0 failed=0 extra
	echo "TAP version 13"
	echo "1..3"
	n=$((n + 1))
	if out=$(ynl_uapi 2>&1); then
		echo "ok $n - ynl-gen-c.py --mode uapi $spec"
	else
		echo "not ok $n - ynl-gen-c.py --mode uapi $spec"
		printf '%s\n' "$out" | sed 's/^/# /'
		echo "not ok 2 - baton_nl.h against the spec # nothing generated"
		echo "not ok 3 - baton_nl.h defines nothing the spec lacks # nothing generated"
		return 1
	fi
	constants "$gen/linux/baton_nl.h" >"$gen/names.gen"
	constants uapi/linux/baton_nl.h | grep -v '_UNSPEC$' >"$gen/names.hand"

	n=$((n + 1))
	if out=$(dump_values "$gen" "$gen/names.gen" "$gen/values.gen" 2>&1 &&
		dump_values uapi "$gen/names.gen" "$gen/values.hand" 2>&1 &&
		diff -u "$gen/values.gen" "$gen/values.hand" 2>&1); then
		echo "ok $n - uapi/linux/baton_nl.h has the spec's $(wc -l <"$gen/names.gen") constants, same values"
	else
		echo "not ok $n - uapi/linux/baton_nl.h differs from the spec"
		printf '%s\n' "$out" | grep -v '^[[:space:]]*$' | head -40 | sed 's/^/# /'
		failed=$((failed + 1))
	fi

	n=$((n + 1))
	extra=$(comm -13 "$gen/names.gen" "$gen/names.hand")
	if [[ -z $extra ]]; then
		echo "ok $n - uapi/linux/baton_nl.h defines nothing the spec lacks"
	else
		echo "not ok $n - uapi/linux/baton_nl.h defines what the spec lacks"
		printf '%s\n' "$extra" | sed 's/^/# /'
		failed=$((failed + 1))
	fi
	((failed == 0))
}

case ${1:-check} in
tree) ynl_tree && echo "$root/$src" ;;
uapi) ynl_uapi ;;
user) ynl_user ;;
check) ynl_check ;;
*) echo "usage: $0 tree|uapi|user|check" >&2; exit 2 ;;
esac
