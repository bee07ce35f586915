# Top-level Makefile: only delegates. Each directory builds itself; the glue
# that is more than one command lives in .ci/ (deps, lint, check) and
# selftests/vm/ (the test VM).
#
#   make deps        install the Debian packages baton needs (idempotent)
#   make             build kmod/baton.ko, lib/libbaton.a, selftests, bench programs
#   make check       deps, build, host tests, models, lint, VM selftests;
#                    logs in build/logs/, last line "N passed, N failed, N skipped"
#   make run         deps, build, boot the VM, run bench/pipeline_demo
#   make vm-check    just the VM selftests     make host-check   just the host tests
#   make fuzz        the ioctl/mmap fuzzer alone in the VM for DURATION seconds
#                    (default 60; SEED= replays a run), then it unloads the module
#   make soak DURATION=secs [KILL_ITERS=n]
#                    the VM soak (selftests/soak.c) for DURATION seconds (default
#                    600); with KILL_ITERS, then the kill -9 matrix at n iterations
#   make vm-check-debug  the VM selftests on the debug kernel (KASAN, lockdep,
#                    kmemleak, UBSAN, fault injection); `make debug-kernel` only
#                    builds that kernel (cached in /var/cache/baton) and its baton.ko
#   make vm-check-K  the VM selftests on kernel K of the matrix: debian612,
#                    debian612rt, debug612, kcsan (BATON_VM_KERNEL=K; baton.ko in
#                    build/kmod-K/; BATON_SELFTESTS= narrows the programs)
#   make dkms-check  dkms add/build/install of the installed source tree against
#                    each Debian kernel's headers, in build/dkms/
#   make models      the spin models           make lint         checkpatch --strict
#   make bench       the benchmark suite (host memfd + VM kmod, peers, plots):
#                    bench/results/; `make bench-build` only builds bench/
#   make perf-gate   callgrind instructions/op of the fast paths against
#                    bench/perf-gate.baseline, fails beyond +-2%; perf-gate-selftest
#                    shows a 3% drift in three 1% commits failing it
#   make install     module (extra/), library, udev rule, group, DKMS sources
#   make clean
#
# The module is built for the kernel the VM boots (selftests/vm/kver.sh: the
# installed Debian image that has matching headers), never for `uname -r`.

# Recursive (=) on purpose: evaluated only by the targets that need it, so
# `make deps` works on a machine with no kernel headers yet.
KVER = $(shell selftests/vm/kver.sh)
KDIR ?= /lib/modules/$(KVER)/build
KMOD_ARGS = KVER=$(KVER) KDIR=$(KDIR)

.PHONY: all kmod lib selftests bench bench-build perf-gate perf-gate-selftest \
	deps check run install lint models vm-check vm-check-debug debug-kernel \
	host-check fuzz soak clean dkms-check

all: kmod lib selftests bench-build

kmod:
	$(MAKE) -C kmod $(KMOD_ARGS)

lib:
	$(MAKE) -C lib

selftests: lib
	$(MAKE) -C selftests

bench-build: lib
	$(MAKE) -C bench

# The whole suite; the VM half needs the module.
bench: bench-build kmod
	bench/run-suite.sh

perf-gate:
	bench/perf-gate.sh

perf-gate-selftest:
	bench/perf-gate.sh --selftest

deps:
	.ci/deps.sh

check:
	MAKE="$(MAKE)" .ci/check.sh

run:
	$(MAKE) deps
	$(MAKE) kmod bench-build
	selftests/vm/run-vm.sh demo

vm-check: kmod selftests
	selftests/vm/run-vm.sh selftests

# The kernel comes from its cache unless its config or recipe changed; the
# module is built in build/kmod-debug/, so kmod/baton.ko stays the Debian one.
debug-kernel:
	selftests/vm/debug-kernel.sh module

vm-check-debug: debug-kernel selftests
	BATON_VM_KERNEL=debug selftests/vm/run-vm.sh selftests

# The other kernels of the matrix build their own baton.ko (run-vm.sh does).
vm-check-%: selftests
	BATON_VM_KERNEL=$* selftests/vm/run-vm.sh selftests

dkms-check: kmod lib
	.ci/dkms-check.sh

# selftests/fuzz.c -u: after the run everything must be closed, so the
# fuzzer itself must be able to unload the module.
fuzz: kmod selftests
	BATON_EXEC_ARGS="-s $(or $(DURATION),60) -u $(if $(SEED),-S $(SEED))" \
	BATON_VM_TIMEOUT=$$(( $(or $(DURATION),60) + 600 )) \
		selftests/vm/run-vm.sh exec build/selftests/fuzz

host-check: lib
	$(MAKE) -C selftests/host check

# Documentation/reliability.rst. The VM gets DURATION plus ten minutes.
# (No global DURATION default: make fuzz's is 60 s, the soak's 600 s.)
SOAK_SECONDS = $(or $(DURATION),600)
soak: kmod selftests
	BATON_EXEC_ARGS=$(SOAK_SECONDS) BATON_VM_TIMEOUT=$$(($(SOAK_SECONDS) + 600)) \
		selftests/vm/run-vm.sh exec build/selftests/soak
	$(if $(KILL_ITERS),BATON_EXEC_ARGS=$(KILL_ITERS) BATON_VM_TIMEOUT=$$(($(KILL_ITERS) * 2 + 600)) \
		selftests/vm/run-vm.sh exec build/selftests/kill_matrix)

models:
	selftests/models/check.sh

lint:
	.ci/lint.sh

# The module's sources as DKMS gets them (Kbuild's generated *.mod.c excluded).
DKMS_SRCS = $(filter-out %.mod.c,$(wildcard kmod/*.c)) $(wildcard kmod/*.h) \
	kmod/Kbuild kmod/Makefile kmod/dkms.conf

# Module under /lib/modules/<ver>/extra, library under PREFIX, the udev rule,
# the group it names, and the module sources for DKMS in /usr/src/baton-<ver>
# (always: a package staged with DESTDIR needs them whether or not this host
# has dkms). The uapi headers go to uapi/linux/ inside that tree, where
# kmod/Kbuild looks before ../uapi. Debian's header trees have no System.map,
# so modules_install skips depmod; we run it (not under DESTDIR: a package's
# postinst does), else `modprobe baton` cannot find the module.
install: kmod lib
	$(MAKE) -C kmod $(KMOD_ARGS) install
	@if [ -z "$(DESTDIR)" ]; then echo "depmod -a $(KVER)"; depmod -a $(KVER); fi
	$(MAKE) -C lib install
	install -D -m 0644 kmod/99-baton.rules $(DESTDIR)/etc/udev/rules.d/99-baton.rules
	@if [ -z "$(DESTDIR)" ]; then groupadd -f baton; \
	else echo "install: DESTDIR set; not creating group baton on this host"; fi
	@ver=$$(sed -n 's/^PACKAGE_VERSION="\{0,1\}\([^"]*\)"\{0,1\}/\1/p' kmod/dkms.conf); \
	test -n "$$ver" || { echo "install: no PACKAGE_VERSION in kmod/dkms.conf" >&2; exit 1; }; \
	dst=$(DESTDIR)/usr/src/baton-$$ver; \
	echo "install: DKMS sources in $$dst"; \
	install -d $$dst/uapi/linux && \
	install -m 0644 $(DKMS_SRCS) $$dst/ && \
	install -m 0644 $(wildcard uapi/linux/*.h) $$dst/uapi/linux/ || exit 1; \
	if [ -z "$(DESTDIR)" ] && command -v dkms >/dev/null; then \
		echo "install: to rebuild baton.ko for new kernels: dkms add baton/$$ver"; \
	fi

clean:
	-$(MAKE) -C kmod $(KMOD_ARGS) clean
	-$(MAKE) -C lib clean
	-$(MAKE) -C selftests clean
	-$(MAKE) -C selftests/host clean
	-$(MAKE) -C bench clean
	rm -rf build
