#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build our modules for the kernels the VM harness boots.
#
#   scripts/vm-modules.sh [production] [debug]     (default: both)
#
# Out-of-tree Kbuild writes its objects next to the sources, so each kernel
# gets its own copy of drivers/md and include under build/modules/<k>/src;
# the .ko files land in build/modules/<k>/.  IOBAND_MODSRC=<dir> builds
# <dir>/drivers/md (+ <dir>/include) instead of the tree's own sources
# (used to test the harness with a scratch module).  The model device of
# tests/modeldev (iobmodel.ko) is built the same way, from <dir>/tests/modeldev
# when there is one.
set -euo pipefail

TOP=${TOP:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD=${BUILD:-$TOP/build}
SRC=${IOBAND_MODSRC:-$TOP}
JOBS=${JOBS:-$(nproc)}

kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=(production debug)

kdir_of() {
	case $1 in
	production)
		[ -f "$BUILD/kernels/production/kver" ] || "$TOP/scripts/deps.sh" >&2
		echo "/usr/src/linux-headers-$(cat "$BUILD/kernels/production/kver")"
		;;
	debug)
		if [ ! -f "$BUILD/kernels/debug/kdir/Makefile" ]; then
			if make -s -C "$TOP" -n kernel-debug >/dev/null 2>&1; then
				make -s -C "$TOP" kernel-debug >&2
			else
				"$TOP/scripts/debug-kernel.sh" >&2
			fi
		fi
		readlink -f "$BUILD/kernels/debug/kdir"
		;;
	*) echo "vm-modules: unknown kernel '$1'" >&2; return 1 ;;
	esac
}

# The copies: content decides what is copied (-c), and a copied file gets
# the time of the copy, not its source's (no -t), so Kbuild rebuilds after
# any change, even to an older source (another checkout, IOBAND_MODSRC).
# Kbuild's outputs are left alone.
RSYNC=(rsync -rlpc --delete --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd'
	--exclude='*.mod*' --exclude=modules.order --exclude=Module.symvers)

build_dir() { # kdir moddir
	# (Debian's headers have no vmlinux, so kbuild skips BTF: not news.)
	make -s -C "$1" M="$2" W=1 -j"$JOBS" modules 2>&1 |
		{ grep -v '^Skipping BTF generation' || true; }
	[ "${PIPESTATUS[0]}" = 0 ] || exit 1
}

for k in "${kernels[@]}"; do
	kdir=$(kdir_of "$k")
	if [ ! -f "$kdir/Makefile" ]; then
		echo "vm-modules: no kernel tree at $kdir for $k" >&2
		exit 1
	fi
	out=$BUILD/modules/$k
	mkdir -p "$out/src"
	# one build per kernel at a time (parallel test runs share build/)
	exec 8>"$out/.lock"
	flock 8
	rm -f "$out"/*.ko
	if ! compgen -G "$SRC/drivers/md/*.c" >/dev/null; then
		echo "vm-modules: $k: no module sources in $SRC/drivers/md yet, nothing built"
		continue
	fi
	# --delete drops stale objects' sources.
	mkdir -p "$out/src/drivers/md" "$out/src/include"
	"${RSYNC[@]}" "$SRC/drivers/md/" "$out/src/drivers/md/"
	if [ -d "$SRC/include" ]; then
		"${RSYNC[@]}" "$SRC/include/" "$out/src/include/"
	fi
	echo "vm-modules: $k: building against $kdir"
	build_dir "$kdir" "$out/src/drivers/md"
	if [ -d "$SRC/tests/modeldev" ]; then
		mkdir -p "$out/src/tests/modeldev"
		"${RSYNC[@]}" "$SRC/tests/modeldev/" "$out/src/tests/modeldev/"
		build_dir "$kdir" "$out/src/tests/modeldev"
		cp "$out"/src/tests/modeldev/*.ko "$out/"
	fi
	cp "$out"/src/drivers/md/*.ko "$out/"
	echo "vm-modules: $k: $(cd "$out" && ls *.ko | tr '\n' ' ')"
done
