#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the module against 6.12 configurations the VM kernels do not cover:
# tinyconfig + each fragment in scripts/build-configs/ (no-memcg: cgroups
# without the memory controller; no-cgroups: no cgroups at all), with W=1;
# and in-tree: the patch series of patches/ applied to a copy of the
# source (scripts/mk-patches.sh --apply), its objects built in the tree.
#
#   scripts/build-configs.sh [NAME...]        (default: every fragment)
#
# linux-source-6.12 is unpacked once into
#     ${IOBAND_CACHE:-$HOME/.cache/dm-ioband}/cfg-src-<pkg version>
# and each configuration is prepared (`make modules_prepare`) in its own
# object tree cfg-<name>-<hash> beside it, <hash> covering the fragment,
# this script, the package and the compiler; a later run only rebuilds
# the module.  There is no Module.symvers in such a tree, so modpost's
# unresolved symbols are warnings (KBUILD_MODPOST_WARN): this checks that
# the module compiles, not that it links.
set -euo pipefail

SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
TOP=$(cd "$(dirname "$SCRIPT")/.." && pwd)
CACHE=${IOBAND_CACHE:-$HOME/.cache/dm-ioband}
JOBS=${JOBS:-$(nproc)}
PKG=linux-source-6.12
TARBALL=/usr/src/$PKG.tar.xz

say() { printf '[build-configs] %s\n' "$*"; }
die() { printf '[build-configs] ERROR: %s\n' "$*" >&2; exit 1; }

[ -f "$TARBALL" ] || "$TOP/scripts/deps.sh"
PKGVER=$(dpkg-query -W -f='${Version}' "$PKG")
CCVER=$(gcc --version | head -n1)
SRC=$CACHE/cfg-src-$PKGVER
mkdir -p "$CACHE"

exec 9>"$CACHE/cfg-src.lock"
flock 9
if [ ! -f "$SRC/.ioband-unpacked" ]; then
	t0=$SECONDS
	say "unpacking $TARBALL into $SRC"
	rm -rf "$SRC" "$SRC.unpack"
	mkdir -p "$SRC.unpack"
	tar -xf "$TARBALL" -C "$SRC.unpack"
	mv "$SRC.unpack/$PKG" "$SRC"
	rmdir "$SRC.unpack"
	touch "$SRC/.ioband-unpacked"
	say "unpacked in $((SECONDS - t0)) s"
fi

names=("$@")
if [ ${#names[@]} = 0 ]; then
	for f in "$TOP"/scripts/build-configs/*.config; do
		n=${f##*/}
		names+=("${n%.config}")
	done
fi

# Builds the module for configuration $name in $obj, into $out.
build_module() {
	if [ "$name" = in-tree ]; then
		# dm core with the helper, then the target with W=1
		make -s -C "$obj" -j"$JOBS" drivers/md/dm.o >"$out/build.log" 2>&1 &&
		make -s -C "$obj" W=1 -j"$JOBS" drivers/md/dm-ioband.o \
			drivers/md/dm-ioband-policy.o >>"$out/build.log" 2>&1
	else
		# our sources in a copy of their own (Kbuild writes objects
		# beside them)
		cp -r "$TOP/drivers" "$TOP/include" "$out/"
		find "$out" \( -name '*.o' -o -name '*.ko' -o -name '.*.cmd' -o -name '*.mod*' \) -delete
		make -s -C "$obj" M="$out/drivers/md" W=1 KBUILD_MODPOST_WARN=1 \
			-j"$JOBS" modules >"$out/build.log" 2>&1
	fi
}

rc=0
for name in "${names[@]}"; do
	frag=$TOP/scripts/build-configs/$name.config
	[ -f "$frag" ] || die "no fragment $frag"
	src=$SRC
	extra=()
	if [ "$name" = in-tree ]; then
		extra=("$TOP"/patches/000[1-9]-*.patch)
	fi
	hash=$({ echo "$PKGVER"; echo "$CCVER"; cat "$frag" "$SCRIPT" ${extra[@]+"${extra[@]}"}; } |
		sha256sum | cut -c1-16)
	obj=$CACHE/cfg-$name-$hash
	if [ "$name" = in-tree ]; then
		src=$CACHE/cfg-src-in-tree-$hash
		if [ ! -f "$src/.ioband-patched" ]; then
			rm -rf "$src"
			# hard links: patch(1) writes each file it changes anew
			cp -al "$SRC" "$src"
			"$TOP/scripts/mk-patches.sh" --apply "$src"
			touch "$src/.ioband-patched"
		fi
	fi
	log=$obj.log
	if [ ! -f "$obj/.ioband-prepared" ]; then
		t0=$SECONDS
		say "$name: preparing $obj (log: $log)"
		rm -rf "$obj"
		mkdir -p "$obj"
		{
			make -C "$src" O="$obj" ARCH=x86_64 tinyconfig &&
			"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" \
				"$obj/.config" "$frag" &&
			make -C "$src" O="$obj" olddefconfig
		} >"$log" 2>&1 || { tail -n 30 "$log"; die "$name: configuring failed"; }
		# every symbol the fragment sets must have survived olddefconfig
		while IFS= read -r line; do
			case "$line" in
			CONFIG_*=*)
				grep -qxF -- "$line" "$obj/.config" ||
					die "$name: wanted $line, Kconfig dropped it" ;;
			"# CONFIG_"*" is not set")
				sym=${line#\# }; sym=${sym%% *}
				! grep -q "^$sym=" "$obj/.config" ||
					die "$name: wanted $sym off, got $(grep "^$sym=" "$obj/.config")" ;;
			esac
		done <"$frag"
		make -C "$src" O="$obj" -j"$JOBS" modules_prepare >>"$log" 2>&1 ||
			{ tail -n 30 "$log"; die "$name: modules_prepare failed"; }
		touch "$obj/.ioband-prepared"
		say "$name: prepared in $((SECONDS - t0)) s"
		# older trees of this configuration are of no further use
		for old in "$CACHE/cfg-$name-"* "$CACHE/cfg-src-$name-"*; do
			case $old in "$obj"|"$obj.log"|"$src") ;; *) rm -rf "$old" ;; esac
		done
	fi
	out=$TOP/build/configs/$name
	rm -rf "$out"
	mkdir -p "$out"
	if build_module && ! grep -E 'warning:|error:' "$out/build.log"; then
		say "$name: PASS (W=1, no warning)"
	else
		cat "$out/build.log"
		say "$name: FAIL"
		rc=1
	fi
done
exit $rc
