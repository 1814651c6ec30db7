# SPDX-License-Identifier: GPL-2.0
#
# dm-ioband: build, test and benchmark entry points.
#
#   make            module (for KDIR) and tools/ioband-setup
#   make deps       install every Debian package the project needs
#   make check      unit tests, then the VM suite on both kernels
#   make demo       the three-cgroup demonstration in a VM
#   make bench      the benchmark suite (bench/README.md)

SHELL := /bin/bash
TOP := $(abspath .)
BUILD := $(TOP)/build
export TOP BUILD

# Debian 12's 6.1 headers, installed by 'make deps'.
DEB_KDIR := $(lastword $(sort $(wildcard /usr/src/linux-headers-6.1.*-amd64)))
RUNNING_KDIR := /lib/modules/$(shell uname -r)/build
KDIR ?= $(if $(wildcard $(RUNNING_KDIR)/Makefile),$(RUNNING_KDIR),$(DEB_KDIR))

.PHONY: all module tool deps clean check unit fuzz vm-modules kernel-debug

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

# Unit tests, debug kernel, modules, then the VM suite on both kernels.
check:
	@tests/check

clean:
	-$(MAKE) -C $(or $(KDIR),/nonexistent) M=$(TOP)/drivers/md clean 2>/dev/null
	-$(MAKE) -C tools/ioband-setup clean
	-$(MAKE) -C tests/unit clean
	rm -rf $(BUILD)/modules $(BUILD)/unit

# The demonstration and the benchmarks (demo/run; bench/README.md).
.PHONY: demo bench bench-smoke
demo:
	@demo/run

bench:
	@bench/run

bench-smoke:
	@bench/run --smoke
