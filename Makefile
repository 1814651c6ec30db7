# SPDX-License-Identifier: GPL-2.0
#
# dm-ioband: build, test and benchmark entry points.
#
#   make            module (for KDIR) and tools/ioband-setup
#   make deps       install every Debian package the project needs
#   make check      unit tests, the VM suite on both kernels, the bench smoke
#   make check-long the same with the long VM tests
#   make demo       the three-cgroup demonstration in a VM
#   make bench      the benchmark suite (bench/README.md); bench-short, bench-smoke
#   make deb        Debian packages dm-ioband-dkms and ioband-setup, in build/deb

SHELL := /bin/bash
TOP := $(abspath .)
BUILD := $(TOP)/build
export TOP BUILD

# Debian 12's 6.1 headers, installed by 'make deps'.
DEB_KDIR := $(lastword $(sort $(wildcard /usr/src/linux-headers-6.1.*-amd64)))
RUNNING_KDIR := /lib/modules/$(shell uname -r)/build
KDIR ?= $(if $(wildcard $(RUNNING_KDIR)/Makefile),$(RUNNING_KDIR),$(DEB_KDIR))

.PHONY: all module tool deps clean check check-long unit fuzz vm-modules \
	kernel-debug build-configs deb

all: module tool

deps:
	@scripts/deps.sh

module:
	@[ -n "$(KDIR)" ] && [ -f "$(KDIR)/Makefile" ] || scripts/deps.sh
	$(MAKE) -C $(or $(KDIR),$(lastword $(sort $(wildcard /usr/src/linux-headers-6.1.*-amd64)))) \
		M=$(TOP)/drivers/md W=1 modules

tool:
	$(MAKE) -C tools/ioband-setup

unit:
	$(MAKE) -C tests/unit check

# libFuzzer over the table and message grammar: make fuzz FUZZ_SECONDS=N
fuzz:
	$(MAKE) -C tests/fuzz fuzz

# The debug VM kernel (KASAN, lockdep...), cached; build/kernels/debug/.
kernel-debug:
	@scripts/debug-kernel.sh

# Our modules for the kernels the VM harness boots (build/modules/<k>/).
VM_KERNELS ?= production debug
vm-modules:
	@scripts/vm-modules.sh $(VM_KERNELS)

# The module against 6.12 without the memory controller and without
# cgroups, and the in-tree series of patches/ (scripts/build-configs/*.config),
# W=1; trees cached in ~/.cache/dm-ioband (first run about 6 minutes on a
# loaded host, then under a minute).  patches/0002 must match the sources.
build-configs:
	@scripts/mk-patches.sh --check
	@scripts/build-configs.sh

# Debian packages (debian/): DKMS builds the module for each installed
# kernel; tests/pkg/debootstrap installs them in a fresh Debian 12 root.
deb:
	@scripts/mk-deb.sh

# make install [DESTDIR=...] [PREFIX=/usr/local] [KVER=...]: the modules
# into /lib/modules/<KVER>/extra (then depmod, unless DESTDIR is set) and
# tools/ioband-setup: the tool, its man page, systemd unit and bash
# completion (tools/ioband-setup/Makefile).  make uninstall removes them.
KVER ?= $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' $(KDIR)/include/generated/utsrelease.h 2>/dev/null)
IOBAND_KOS := drivers/md/dm-ioband.ko drivers/md/dm-ioband-policy.ko
.PHONY: install uninstall
install: all
	@[ -n "$(KVER)" ] || { echo "install: no kernel release in $(KDIR); give KVER=" >&2; exit 1; }
	install -d $(DESTDIR)/lib/modules/$(KVER)/extra
	install -m 644 $(IOBAND_KOS) $(DESTDIR)/lib/modules/$(KVER)/extra/
	$(if $(DESTDIR),,depmod -a $(KVER))
	$(MAKE) -C tools/ioband-setup install

uninstall:
	@[ -n "$(KVER)" ] || { echo "uninstall: no kernel release in $(KDIR); give KVER=" >&2; exit 1; }
	rm -f $(addprefix $(DESTDIR)/lib/modules/$(KVER)/extra/,$(notdir $(IOBAND_KOS)))
	$(if $(DESTDIR),,depmod -a $(KVER))
	$(MAKE) -C tools/ioband-setup uninstall

# Unit tests, debug kernel, modules, then the VM suite on both kernels;
# check-long adds the VM tests marked "# long: yes".
check:
	@tests/check

check-long:
	@CHECK_LONG=1 tests/check

clean:
	-$(MAKE) -C $(or $(KDIR),/nonexistent) M=$(TOP)/drivers/md clean 2>/dev/null
	-$(MAKE) -C tools/ioband-setup clean
	-$(MAKE) -C tests/unit clean
	rm -rf $(BUILD)/modules $(BUILD)/unit

# The demonstration and the benchmarks (demo/run; bench/README.md).
.PHONY: demo bench bench-short bench-smoke
demo:
	@demo/run

bench:
	@bench/run

# every scenario's short mode (BENCH_SHORT=1), into build/bench/<run>/
bench-short:
	@BENCH_SHORT=1 bench/run

bench-smoke:
	@bench/run --smoke
