#!/bin/bash
# LVM below ioband: ioband over an active logical volume, table written by
# hand.  Data written through ioband reads back the same through the LV and
# through ioband, the counters are exact, the VG cannot be deactivated while
# ioband holds the LV open (and nothing changes), and ext4 on top works.
# `ioband-setup wrap`, which swaps an LV's own table for ioband over a copy
# under a mounted busy filesystem, is tested by 30-setup-wrap.sh.
# timeout: 150
# long: debug
. /tests/lib.sh
. /tests/t/stack.inc
require lvm mkfs.ext4 e2fsck

nb=$(stk_nullb slb0 160)
lvm pvcreate -q -y "$nb" >/dev/null || fail "pvcreate"
on_exit "lvm pvremove -q -ff -y $nb"
lvm vgcreate -q slb "$nb" >/dev/null || fail "vgcreate"
on_exit "lvm vgremove -q -f slb"
lvm lvcreate -q -y -L 64M -n lv slb >/dev/null || fail "lvcreate"
on_exit "lvm vgchange -q -an slb"
[ -b /dev/slb/lv ] || fail "no /dev/slb/lv"
lvdev=$(dmsetup info -c --noheadings -o major,minor slb-lv | tr -d ' ')
sz=$(blockdev --getsz /dev/slb/lv)

io=$(dm_create slb-io "0 $sz ioband /dev/slb/lv slb 0 0 pid weight 0 :100")
assert_eq "$(dmsetup table slb-io)" "0 $sz ioband $lvdev slb 0 128 pid weight 256 :100" "ioband over the LV"

# 8 MiB of random data, written through ioband in 128 direct 64 KiB writes
dd if=/dev/urandom of="$TESTDIR/pat" bs=64k count=128 status=none
want=$(md5sum <"$TESTDIR/pat" | cut -d' ' -f1)
dd if="$TESTDIR/pat" of="$io" bs=64k seek=16 oflag=direct status=none || fail "writing through ioband"
assert_eq "$(stk_field slb-io -1 writes)/$(stk_field slb-io -1 wsect)" 128/16384 "writes/sectors counted"
assert_eq "$(dd if=/dev/slb/lv bs=64k skip=16 count=128 iflag=direct status=none | md5sum | cut -d' ' -f1)" \
	"$want" "the data read from the LV beneath"
assert_eq "$(dd if="$io" bs=64k skip=16 count=128 iflag=direct status=none | md5sum | cut -d' ' -f1)" \
	"$want" "the data read back through ioband"
assert_eq "$(stk_field slb-io -1 reads)/$(stk_field slb-io -1 rsect)" 128/16384 "reads/sectors counted"

# The LV is in use: deactivating it must fail and leave everything running.
if lvm vgchange -an slb >"$TESTDIR/vgchange.out" 2>&1; then
	fail "vgchange -an deactivated an LV that ioband holds open"
fi
log "vgchange -an refused: $(grep -i 'in use\|open' "$TESTDIR/vgchange.out" | head -n 1)"
grep -qi 'in use\|open' "$TESTDIR/vgchange.out" || fail "vgchange -an failed without saying the LV is in use: $(cat "$TESTDIR/vgchange.out")"
assert_eq "$(dmsetup table slb-io)" "0 $sz ioband $lvdev slb 0 128 pid weight 256 :100" "ioband's table after the refused vgchange"

mkfs.ext4 -q -F "$io" || fail "mkfs.ext4 on ioband over the LV"
stk_mount "$io" /mnt/slb
stk_fill /mnt/slb/data 16
umount /mnt/slb || fail "umount"
stk_fsck "$io"
mount "$io" /mnt/slb || fail "mount again"
stk_verify /mnt/slb/data
log "ioband over an active LV: data, counters and ext4 intact"
