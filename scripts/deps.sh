#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install every Debian package the project needs and fetch Debian's 6.1
# kernel image (downloaded and unpacked under build/, never installed).
#
# Idempotent and fast when everything is present: dpkg-query decides whether
# apt is needed at all, and 'apt-get update' runs only before an install.
#
#   scripts/deps.sh            packages + production kernel image
#   scripts/deps.sh --quiet    the same, silent when nothing is to be done
set -euo pipefail

TOP=${TOP:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD=${BUILD:-$TOP/build}
QUIET=0
[ "${1:-}" = --quiet ] && QUIET=1
export DEBIAN_FRONTEND=noninteractive

say() { [ $QUIET = 1 ] || echo "deps: $*"; }

PKGS=(
	# module builds and the debug kernel
	build-essential linux-headers-amd64 linux-source-6.12
	# patches/: the in-tree form of the driver (scripts/mk-patches.sh)
	unifdef
	flex bison bc libelf-dev libssl-dev dwarves cpio xz-utils zstd rsync
	# the VM harness: guest tools and QEMU
	qemu-system-x86 busybox-static fio dmsetup lvm2 e2fsprogs fdisk
	util-linux kmod coreutils mdadm
	# tests/vm/hang-dump: where a hung guest's CPUs are
	gdb binutils
	# userspace: tools/ioband-setup, unit tests and fuzzers
	libdevmapper-dev libblkid-dev clang-14 libfuzzer-14-dev libclang-rt-14-dev
	# benchmarks
	gnuplot-nox
	# make deb, and tests/pkg/debootstrap (check-long)
	debhelper dh-dkms debootstrap
)

SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo

missing=()
for p in "${PKGS[@]}"; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$st" = "install ok installed" ] || missing+=("$p")
done

# apt's chatter goes to a log; its tail is shown when something fails.
mkdir -p "$BUILD"
APTLOG=$BUILD/deps-apt.log
apt_run() {
	if ! $SUDO "$@" -o DPkg::Lock::Timeout=600 </dev/null >>"$APTLOG" 2>&1; then
		echo "deps: '$*' failed; the end of $APTLOG:" >&2
		tail -n 30 "$APTLOG" >&2
		return 1
	fi
}

updated=0
apt_update() {
	[ $updated = 1 ] && return 0
	say "apt-get update"
	apt_run apt-get update -qq
	updated=1
}

if [ ${#missing[@]} -gt 0 ]; then
	say "installing: ${missing[*]} (log: $APTLOG)"
	apt_update
	t0=$(date +%s)
	apt_run apt-get install -y -qq --no-install-recommends "${missing[@]}"
	say "installed in $(( $(date +%s) - t0 ))s"
fi

# --- Debian's 6.1 kernel image, for the production VM -------------------
# Its ABI must match the installed linux-headers-amd64 so that a module built
# against /usr/src/linux-headers-<abi> loads into it.
hdr_abi() {
	dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null |
		grep -o 'linux-headers-[0-9][^ ,]*-amd64' | head -n1 |
		sed 's/^linux-headers-//'
}
ABI=$(hdr_abi)
if [ -z "$ABI" ]; then
	echo "deps: cannot tell the ABI of linux-headers-amd64" >&2
	exit 1
fi

PROD=$BUILD/kernels/production
if [ -f "$PROD/vmlinuz" ] && [ "$(cat "$PROD/kver" 2>/dev/null)" = "$ABI" ] &&
   [ -d "$PROD/root/lib/modules/$ABI" ]; then
	say "production kernel $ABI present"
	exit 0
fi

# The image the archive offers now must be the one the headers are for.
img_abi() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		grep -o 'linux-image-[0-9][^ ]*-amd64' | head -n1 |
		sed 's/^linux-image-//'
}
IABI=$(img_abi)
if [ "$IABI" != "$ABI" ]; then
	# Stale lists, or headers older than the archive: refresh both.
	apt_update
	IABI=$(img_abi)
	if [ "$IABI" != "$ABI" ]; then
		say "linux-headers-amd64 is for $ABI, the archive has $IABI: upgrading headers"
		apt_run apt-get install -y -qq --no-install-recommends linux-headers-amd64
		ABI=$(hdr_abi)
	fi
fi
if [ "$IABI" != "$ABI" ]; then
	echo "deps: image ABI '$IABI' does not match headers ABI '$ABI'" >&2
	exit 1
fi

say "fetching linux-image-$ABI (download only, not installed)"
tmp=$(mktemp -d "$BUILD/.deps.XXXXXX")
chmod 777 "$tmp"	# apt-get download drops privileges to _apt
trap 'rm -rf "$tmp"' EXIT
if ! (cd "$tmp" && apt-get download -qq "linux-image-$ABI" </dev/null); then
	apt_update
	(cd "$tmp" && apt-get download -qq "linux-image-$ABI" </dev/null)
fi
deb=$(ls "$tmp"/linux-image-"$ABI"_*.deb)
rm -rf "$PROD"
mkdir -p "$PROD/root"
dpkg-deb -x "$deb" "$PROD/root"
cp "$PROD/root/boot/vmlinuz-$ABI" "$PROD/vmlinuz"
echo "$ABI" >"$PROD/kver"
say "production kernel $ABI unpacked in $PROD"
