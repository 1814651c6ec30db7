#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The in-tree form of dm-ioband, as a patch series against 6.12 in patches/:
#   0000-cover-letter.patch                   (kept by hand, diffstat too)
#   0001-dm-add-dm_bio_orig_blkcg_css.patch   (kept by hand: the dm core helper)
#   0002-dm-add-the-ioband-target.patch        (made here from the tree)
#
#   scripts/mk-patches.sh            rewrite patches/0002 from the sources
#   scripts/mk-patches.sh --check    fail if patches/0002 is stale
#   scripts/mk-patches.sh --apply DIR  apply the series to the 6.12 tree DIR
#
# 0002 is the driver with its out-of-tree parts taken out (unifdef
# -UIOBAND_OUT_OF_TREE -D__KERNEL__: the in-tree driver asks dm core for
# the original bio's blkcg; the policy file's userspace build is not
# there), its Kconfig entry, Makefile lines and documentation.  The commit
# date is fixed, so the same sources give the same patch.
set -euo pipefail

SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
TOP=$(cd "$(dirname "$SCRIPT")/.." && pwd)
PATCHES=$TOP/patches
PKG=linux-source-6.12
TARBALL=/usr/src/$PKG.tar.xz
BASE_FILES=(drivers/md/dm.c include/linux/device-mapper.h drivers/md/Kconfig
	drivers/md/Makefile Documentation/admin-guide/device-mapper/index.rst)
export GIT_AUTHOR_DATE="2026-12-01T12:00:00Z" GIT_COMMITTER_DATE="2026-12-01T12:00:00Z"
export GIT_AUTHOR_NAME="Seed 3431af86 maintainers" GIT_COMMITTER_NAME="Seed 3431af86 maintainers"
export GIT_AUTHOR_EMAIL="maintainers@users.noreply.a-seed-3431af86.example"
export GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL

die() { printf 'mk-patches: %s\n' "$*" >&2; exit 1; }

mode=write
case ${1:-} in
--check) mode=check ;;
--apply) mode=apply; [ -d "${2:-}" ] || die "--apply needs a 6.12 tree"; TREE=$2 ;;
"") ;;
*) die "usage: mk-patches.sh [--check | --apply DIR]" ;;
esac
command -v unifdef >/dev/null || "$TOP/scripts/deps.sh"

if [ "$mode" = apply ]; then
	for p in "$PATCHES"/000[1-9]-*.patch; do
		patch -s -d "$TREE" -p1 -N -r - <"$p" || die "$p does not apply to $TREE"
	done
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -f "$TARBALL" ] || "$TOP/scripts/deps.sh"
tar -xf "$TARBALL" -C "$tmp" "${BASE_FILES[@]/#/$PKG/}"
g=$tmp/$PKG
git -C "$g" init -q
git -C "$g" add -A
# The base commit's message names no package version, and the patch names no
# commit (--zero-commit) and no git version (--no-signature): a Debian update
# of the package or of git changes nothing in patches/ unless it changes the
# lines the patch touches.
git -C "$g" commit -q -m "$PKG"
git -C "$g" am -q "$PATCHES"/0001-*.patch || die "0001 does not apply"

# strip: unifdef's status is 0 (unchanged) or 1 (changed); 2 is an error
strip() {
	local rc=0
	unifdef -UIOBAND_OUT_OF_TREE -D__KERNEL__ -o "$2" "$1" || rc=$?
	[ "$rc" -le 1 ] || die "unifdef $1 failed"
}
strip "$TOP/drivers/md/dm-ioband.c" "$g/drivers/md/dm-ioband.c"
strip "$TOP/drivers/md/dm-ioband-policy.c" "$g/drivers/md/dm-ioband-policy.c"
cp "$TOP/drivers/md/dm_ioband_trace.h" "$g/drivers/md/"
cp "$TOP/include/linux/dm-ioband.h" "$g/include/linux/"
cp "$TOP/Documentation/ioband.rst" "$g/Documentation/admin-guide/device-mapper/ioband.rst"
python3 - "$g" <<'PY'
import sys
g = sys.argv[1]
def edit(path, anchor, text, after=True):
    p = g + '/' + path
    s = open(p).read()
    assert s.count(anchor) == 1, (path, anchor)
    s = s.replace(anchor, anchor + text if after else text + anchor)
    open(p, 'w').write(s)
edit('drivers/md/Kconfig', 'config DM_INIT\n', '''config DM_IOBAND
	tristate "I/O bandwidth sharing target"
	depends on BLK_DEV_DM
	imply BLK_CGROUP
	help
	  A target that shares a device's bandwidth among groups of I/O
	  (cgroups, users, group ids, processes, process groups) by weight,
	  or within minimum and maximum rates, for devices the kernel's own
	  proportional controllers do not act on.  Sorting by cgroup needs
	  CGROUPS, and uses the bio's blkcg association with BLK_CGROUP.
	  See Documentation/admin-guide/device-mapper/ioband.rst.

	  To compile this code as a module, choose M here: the module will
	  be called dm-ioband.

	  If unsure, say N.

''', after=False)
edit('drivers/md/Makefile', 'obj-$(CONFIG_DM_DUST)		+= dm-dust.o\n',
     'obj-$(CONFIG_DM_IOBAND)		+= dm-ioband.o dm-ioband-policy.o\n')
edit('drivers/md/Makefile', '\nifeq ($(CONFIG_DM_UEVENT),y)',
     '# the tracepoint header sits beside dm-ioband.c\nCFLAGS_dm-ioband.o		+= -I$(src)\n', after=False)
edit('Documentation/admin-guide/device-mapper/index.rst', '    dm-integrity\n',
     '    ioband\n')
PY
git -C "$g" add -A
git -C "$g" commit -q -F - <<'MSG'
dm: add the ioband target

dm-ioband shares the bandwidth of a block device among groups of I/O:
cgroups, users, group ids, processes, process groups, or the partitions of
one disk, by weight (each group's share of service in proportion to its
weight, the unused share of idle groups going to the busy ones at once)
or within a minimum and maximum rate per group.  The kernel's own
proportional controllers, io.weight (iocost) and io.bfq.weight, act on
request-based devices only, and a dm device never reaches them.

Groups and their weights change with target messages while I/O runs.
A cgroup is charged what the block layer's controllers would charge on
the dm device: the blkcg association of the bio submitted to it, through
dm_bio_orig_blkcg_css().  The scheduling arithmetic (virtual time, token
windows, the rate buckets) is in dm-ioband-policy.c, which takes no lock
and allocates nothing.

The design is the top comment of dm-ioband.c; the table line, messages
and status are in Documentation/admin-guide/device-mapper/ioband.rst.

Signed-off-by: Seed 3431af86 maintainers <maintainers@users.noreply.a-seed-3431af86.example>
MSG
git -C "$g" format-patch -q -1 --zero-commit --no-signature --start-number 2 -o "$tmp/out"
new=$(ls "$tmp"/out/0002-*.patch)
case $mode in
write)
	rm -f "$PATCHES"/0002-*.patch
	cp "$new" "$PATCHES/"
	echo "mk-patches: wrote patches/${new##*/}"
	;;
check)
	old=$(ls "$PATCHES"/0002-*.patch 2>/dev/null) || die "no patches/0002"
	# blob ids of the base files may move with the package; the text may not
	cmp -s <(grep -v '^index ' "$old") <(grep -v '^index ' "$new") ||
		die "patches/${old##*/} is stale: run scripts/mk-patches.sh"
	echo "mk-patches: patches/ are current"
	;;
esac
