#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (once) the "debug" kernel of the VM test harness: Debian's
# linux-source-6.12, `make tinyconfig` + tests/vm/debug.config (KASAN, lockdep,
# kmemleak, fault injection, KUnit, dm/null_blk/brd/loop built in), prepared so
# that out-of-tree modules build against it.
#
# The build tree is cached in
#     ${IOBAND_CACHE:-$HOME/.cache/dm-ioband}/debug-kernel-<hash>
# where <hash> covers the fragment, this script, the linux-source-6.12 package
# version and the compiler version; a second run with nothing changed only
# refreshes the links below and takes a second.
#
# Produces (BUILD defaults to <repo>/build):
#     $BUILD/kernels/debug/bzImage        copy of arch/x86/boot/bzImage
#     $BUILD/kernels/debug/kdir           -> cached tree (make -C kdir M=... modules)
#     $BUILD/kernels/debug/vmlinux        -> cached vmlinux (symbols for stack traces)
#     $BUILD/kernels/debug/config         the final .config
#     $BUILD/kernels/debug/kernelrelease  `uname -r` of the guest
#
# Environment: IOBAND_CACHE, BUILD, JOBS (default: nproc),
#              IOBAND_KEEP_KERNELS (cached trees to keep, default 2).

set -euo pipefail

# Everything runs inside main(), which bash reads whole before running it:
# editing this file while a build runs does not disturb that build.
main() {
SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
TOP=$(cd "$(dirname "$SCRIPT")/.." && pwd)
FRAGMENT=$TOP/tests/vm/debug.config
BUILD=${BUILD:-$TOP/build}
CACHE=${IOBAND_CACHE:-$HOME/.cache/dm-ioband}
JOBS=${JOBS:-$(nproc)}
KEEP=${IOBAND_KEEP_KERNELS:-2}
PKG=linux-source-6.12
TARBALL=/usr/src/$PKG.tar.xz
OUT=$BUILD/kernels/debug

say() { printf '[debug-kernel] %s\n' "$*"; }
die() { printf '[debug-kernel] ERROR: %s\n' "$*" >&2; exit 1; }

# --- 1. tools and sources ----------------------------------------------------
missing_deps() {
	local t
	for t in make gcc ld flex bison bc perl xz tar dpkg-query sha256sum flock; do
		command -v "$t" >/dev/null 2>&1 || { echo "$t"; return 0; }
	done
	[ -f /usr/include/libelf.h ] || { echo libelf-dev; return 0; }
	[ -f /usr/include/openssl/ssl.h ] || { echo libssl-dev; return 0; }
	[ -f "$TARBALL" ] || { echo "$TARBALL"; return 0; }
	return 1
}

if what=$(missing_deps); then
	say "missing $what: installing build dependencies"
	if [ -x "$TOP/scripts/deps.sh" ]; then
		"$TOP/scripts/deps.sh"
	else
		# Fallback for a tree without scripts/deps.sh.
		sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
		$sudo apt-get update
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
			build-essential flex bison bc libelf-dev libssl-dev xz-utils \
			util-linux cpio "$PKG"
	fi
	if what=$(missing_deps); then
		die "still missing after installing dependencies: $what"
	fi
fi

# --- 2. cache key ------------------------------------------------------------
[ -f "$FRAGMENT" ] || die "no config fragment at $FRAGMENT"
# Read the fragment once: the key and the build use the same text even if
# the file is edited while the build runs.
FRAG_TEXT=$(cat "$FRAGMENT")
PKGVER=$(dpkg-query -W -f='${Version}' "$PKG" 2>/dev/null) ||
	die "$PKG is not installed as a package (needed for the cache key)"
CCVER=$(gcc --version | head -n1)
HASH=$({
	echo "pkg $PKG $PKGVER"
	echo "cc $CCVER"
	echo "--- fragment"; printf '%s\n' "$FRAG_TEXT"
	echo "--- script"; cat "$SCRIPT"
} | sha256sum | cut -c1-16)
TREE=$CACHE/debug-kernel-$HASH
STAMP=$TREE/.ioband-debug-ready
LOG=$CACHE/debug-kernel-$HASH.log

publish() {
	mkdir -p "$OUT"
	touch "$TREE"	# pruning below keeps the most recently used trees
	# Replace atomically: tests may read these while we run.
	cp -f "$TREE/arch/x86/boot/bzImage" "$OUT/.bzImage.$$"
	mv -f "$OUT/.bzImage.$$" "$OUT/bzImage"
	cp -f "$TREE/.config" "$OUT/.config.$$" && mv -f "$OUT/.config.$$" "$OUT/config"
	cp -f "$TREE/include/config/kernel.release" "$OUT/.kr.$$" && mv -f "$OUT/.kr.$$" "$OUT/kernelrelease"
	ln -sfn "$TREE" "$OUT/.kdir.$$" && mv -fT "$OUT/.kdir.$$" "$OUT/kdir"
	ln -sfn "$TREE/vmlinux" "$OUT/.vmlinux.$$" && mv -fT "$OUT/.vmlinux.$$" "$OUT/vmlinux"
	say "ready: $OUT/bzImage ($(cat "$OUT/kernelrelease")), kdir -> $TREE"
}

if [ -f "$STAMP" ]; then
	say "cached build $TREE is up to date"
	publish
	exit 0
fi

# --- 3. build, under a lock (two CI jobs may start at once) ------------------
mkdir -p "$CACHE"
exec 9>"$CACHE/debug-kernel-$HASH.lock"
if ! flock -n 9; then
	say "another build of debug-kernel-$HASH is running; waiting for it"
	flock 9
fi
if [ -f "$STAMP" ]; then
	say "cached build $TREE was finished by another process"
	publish
	exit 0
fi

START=$(date +%s)
say "building Linux $PKGVER debug kernel in $TREE (log: $LOG)"

if [ ! -f "$TREE/.ioband-unpacked" ]; then
	say "unpacking $TARBALL"
	rm -rf "$TREE" "$TREE.unpack"
	mkdir -p "$TREE.unpack"
	tar -xf "$TARBALL" -C "$TREE.unpack"
	mv "$TREE.unpack/$PKG" "$TREE"
	rmdir "$TREE.unpack"
	touch "$TREE/.ioband-unpacked"
fi

: >"$LOG"
run() {
	# Run a build step with its output in $LOG, a progress line every
	# minute, and the log's tail on failure.
	local what=$1; shift
	local t0=$SECONDS last=$SECONDS pid rc=0
	say "$what"
	echo "=== $what: $*" >>"$LOG"
	# MAKEFLAGS cleared: a "make -s" above us would silence kbuild's
	# "  CC" lines, which the progress line counts
	MAKEFLAGS= "$@" >>"$LOG" 2>&1 &
	pid=$!
	trap 'kill "$pid" 2>/dev/null; exit 130' INT TERM
	while kill -0 "$pid" 2>/dev/null; do
		sleep 2
		if [ $((SECONDS - last)) -ge 60 ]; then
			last=$SECONDS
			say "  ... $((SECONDS - t0)) s, $(grep -c '^  CC' "$LOG" || true) files compiled so far"
		fi
	done
	wait "$pid" || rc=$?
	trap - INT TERM
	if [ "$rc" != 0 ]; then
		echo "----- last 60 lines of $LOG -----" >&2
		tail -n 60 "$LOG" >&2
		die "$what failed with status $rc (full log: $LOG)"
	fi
}

cd "$TREE"
FRAG=$TREE/.ioband-debug.config
printf '%s\n' "$FRAG_TEXT" >"$FRAG"
# ARCH=x86_64 (not the default ARCH=x86) so that tinyconfig itself is 64-bit:
# merging 64BIT=y onto a 32-bit tinyconfig keeps 32-bit defaults such as
# FRAME_WARN=1024, which KASAN's larger frames then trip in every W=1 build.
run "configuring: tinyconfig + ${FRAGMENT#"$TOP"/}" make ARCH=x86_64 tinyconfig
run "merging the fragment" scripts/kconfig/merge_config.sh -m .config "$FRAG"
run "resolving dependencies (olddefconfig)" make olddefconfig

# Every symbol the fragment sets must have survived Kconfig's dependency
# resolution; a silently dropped option would make a test meaningless.
bad=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*)
		grep -qxF -- "$line" .config && continue
		sym=${line%%=*}
		say "config: wanted $line, got: $(grep -E "^$sym=|^# $sym is not set" .config || echo '(absent)')"
		bad=1 ;;
	"# CONFIG_"*" is not set")
		sym=${line#\# }; sym=${sym%% *}
		grep -q "^$sym=" .config || continue
		say "config: wanted $sym off, got: $(grep "^$sym=" .config)"
		bad=1 ;;
	esac
done <"$FRAG"
[ "$bad" = 0 ] || die "tests/vm/debug.config does not apply cleanly to $PKG $PKGVER"

run "compiling bzImage and modules with -j$JOBS (a few minutes)" make -j"$JOBS" bzImage modules
# `modules` ran modpost and wrote Module.symvers; make sure external modules
# have everything they need (scripts, objtool, generated headers).
run "modules_prepare" make -j"$JOBS" modules_prepare
[ -f Module.symvers ] || die "no Module.symvers after the build"
[ -f arch/x86/boot/bzImage ] || die "no bzImage after the build"

touch "$STAMP"
say "built in $(( $(date +%s) - START )) s"
publish

# --- 4. prune old trees: keep the $KEEP most recently used finished trees,
# drop abandoned unfinished ones; never touch one whose lock is held (being
# built). ----------------------------------------------------------------------
n=0
for old in $(ls -1dt "$CACHE"/debug-kernel-*/ 2>/dev/null); do
	old=${old%/}
	[[ ${old##*/} =~ ^debug-kernel-[0-9a-f]{16}$ ]] || continue
	[ "$old" != "$TREE" ] || { n=$((n + 1)); continue; }
	if [ -f "$old/.ioband-debug-ready" ]; then
		n=$((n + 1))
		[ "$n" -gt "$KEEP" ] || continue
	fi
	(
		exec 8>"$old.lock"
		flock -n 8 || exit 0
		say "removing old cached tree $old"
		rm -rf "$old" "$old.log"
		rm -f "$old.lock"
	)
done
}

main "$@"
exit 0
