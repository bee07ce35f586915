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
#                    shows a 2.7% drift in three 0.9% commits failing it
#   make install     install-lib, install-module, install-dkms
#   make install-lib the library, headers, baton.pc, batonctl, man pages:
#                    no kernel headers, no module build
#   make install-module  baton.ko into extra/ (needs the kernel headers;
#                    says so when they are missing)
#   make install-dkms    udev rule, group, DKMS sources (no kernel headers)
#   make uninstall   removes what make install put down (same DESTDIR, PREFIX)
#   make pkg-check   stage an install, build C, C++ and the examples against it
#                    with pkg-config, run them (memfd), lint the man pages,
#                    uninstall, find nothing left (selftests/pkg/)
#   make -s version  the package version (lib/include/baton_version.h)
#   make clean
#
# The module is built for the kernel the VM boots (selftests/vm/kver.sh: the
# installed Debian image that has matching headers), never for `uname -r`.

# Recursive (=) on purpose: evaluated only by the targets that need it, so
# `make deps` works on a machine with no kernel headers yet.
# Without kernel headers kver.sh prints nothing (and says why on stderr):
# kernel_tree stops such a build with a message, not /lib/modules//build.
KVER = $(shell selftests/vm/kver.sh)
KDIR ?= /lib/modules/$(KVER)/build
KMOD_ARGS = KVER=$(KVER) KDIR=$(KDIR)
kernel_tree = $(if $(and $(KVER),$(wildcard $(KDIR))),,$(error no kernel build \
	tree ($(if $(KVER),$(KDIR) is missing,no kernel release with headers: \
	selftests/vm/kver.sh)): install the kernel headers (make deps) or pass \
	KVER= and KDIR=; `make install-lib` installs the library, batonctl and \
	the man pages without them))

# The package version (lib/include/baton_version.h): the DKMS tree's name.
BATON_TOP := .
include lib/version.mk
DKMS_DIR = $(DESTDIR)/usr/src/baton-$(BATON_PKG_VERSION)

.PHONY: all kmod lib selftests bench bench-build perf-gate perf-gate-selftest \
	deps check run install install-lib install-module install-dkms uninstall \
	pkg-check version lint models vm-check vm-check-debug debug-kernel \
	host-check fuzz soak clean dkms-check

all: kmod lib selftests bench-build

kmod:
	$(kernel_tree)
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

# The module's sources as DKMS gets them (Kbuild's generated *.mod.c
# excluded); dkms.conf is made from kmod/dkms.conf.in with the version.
DKMS_SRCS = $(filter-out %.mod.c,$(wildcard kmod/*.c)) $(wildcard kmod/*.h) \
	kmod/Kbuild kmod/Makefile
UAPI_HDRS = $(notdir $(wildcard uapi/linux/*.h))

# Checks for the kernel tree first, so that nothing is installed when the
# module cannot be.
install:
	$(kernel_tree)
	$(MAKE) install-lib
	$(MAKE) install-module
	$(MAKE) install-dkms

# The library, its headers, baton.pc, batonctl and the man pages under
# PREFIX (lib/Makefile): nothing here needs a kernel tree.
install-lib:
	$(MAKE) -C lib install

# The module under /lib/modules/<ver>/extra: the one part that needs the
# kernel headers. Debian's header trees have no System.map, so
# modules_install skips depmod; we run it (not under DESTDIR: a package's
# postinst does), else `modprobe baton` cannot find the module.
install-module: kmod
	$(MAKE) -C kmod $(KMOD_ARGS) install
	@if [ -z "$(DESTDIR)" ]; then echo "depmod -a $(KVER)"; depmod -a $(KVER); fi

# The udev rule, the group it names, and the module sources for DKMS in
# /usr/src/baton-<ver> (always: a package staged with DESTDIR needs them
# whether or not this host has dkms). The uapi headers go to uapi/linux/
# inside that tree, where kmod/Kbuild looks before ../uapi.
install-dkms:
	install -D -m 0644 kmod/99-baton.rules $(DESTDIR)/etc/udev/rules.d/99-baton.rules
	@if [ -z "$(DESTDIR)" ]; then groupadd -f baton; \
	else echo "install: DESTDIR set; not creating group baton on this host"; fi
	@echo "install: DKMS sources in $(DKMS_DIR)"
	install -d $(DKMS_DIR)/uapi/linux
	install -m 0644 $(DKMS_SRCS) $(DKMS_DIR)/
	sed 's/@VERSION@/$(BATON_PKG_VERSION)/' kmod/dkms.conf.in >$(DKMS_DIR)/dkms.conf
	install -m 0644 $(UAPI_HDRS:%=uapi/linux/%) $(DKMS_DIR)/uapi/linux/
	@if [ -z "$(DESTDIR)" ] && command -v dkms >/dev/null; then \
		echo "install: to rebuild baton.ko for new kernels: dkms add baton/$(BATON_PKG_VERSION)"; \
	fi

# Everything install put down, with the same DESTDIR, PREFIX and KVER. Needs
# no kernel tree: the module's path is named, not built. A DKMS
# registration of this version (dkms add by hand) goes too, and the group
# when it has no members left.
MODULE_FILES = $(addprefix $(DESTDIR)/lib/modules/$(KVER)/extra/,baton.ko baton.ko.xz \
	baton.ko.zst baton.ko.gz)
uninstall:
	$(MAKE) -C lib uninstall
	@if [ -z "$(DESTDIR)" ] && command -v dkms >/dev/null && \
		dkms status baton/$(BATON_PKG_VERSION) 2>/dev/null | grep -q .; then \
		echo "dkms remove baton/$(BATON_PKG_VERSION) --all"; \
		dkms remove baton/$(BATON_PKG_VERSION) --all; fi
	rm -rf $(DKMS_DIR)
	rm -f $(DESTDIR)/etc/udev/rules.d/99-baton.rules
	$(if $(KVER),rm -f $(MODULE_FILES),@echo "uninstall: no kernel release (kver.sh); KVER=<ver> removes its baton.ko")
	$(if $(KVER),rmdir $(DESTDIR)/lib/modules/$(KVER)/extra 2>/dev/null || true)
	@if [ -z "$(DESTDIR)" ]; then \
		$(if $(KVER),echo "depmod -a $(KVER)"; depmod -a $(KVER);) \
		if getent group baton >/dev/null && [ -z "$$(getent group baton | cut -d: -f4)" ]; then \
			echo "groupdel baton"; groupdel baton; fi; \
	fi

# The package version, for scripts: `make -s version`.
version:
	@echo $(BATON_PKG_VERSION)

pkg-check: lib
	selftests/pkg/check-install.sh

clean:
	-$(MAKE) -C kmod $(KMOD_ARGS) clean
	-$(MAKE) -C lib clean
	-$(MAKE) -C selftests clean
	-$(MAKE) -C selftests/host clean
	-$(MAKE) -C bench clean
	rm -rf build
