#!/bin/bash
# LVM above ioband: a PV on an ioband device, a VG with two LVs, ext4 on
# each; files written and checksummed, the VG deactivated (the LVs gone)
# and activated again, remounted: the checksums hold, e2fsck finds both
# filesystems clean, and all of it went through ioband's counters.
# timeout: 180
# long: debug
. /tests/lib.sh
. /tests/t/stack.inc
require lvm mkfs.ext4 e2fsck

nb=$(stk_nullb sla0 256)
sz=$(blockdev --getsz "$nb")
io=$(dm_create sla-io "0 $sz ioband $nb sla 0 0 user weight 0 :100 0:200")
iodev=$(cat /sys/block/"${io#/dev/}"/dev)
pv=/dev/mapper/sla-io
# ioband passes sector 0 through, so the disk beneath shows the same PV
# label: LVM must be told to ignore it (as with multipath), or it refuses
# the VG for a duplicate PV.
lvm() { command lvm "$@" --config "devices { global_filter = [ \"r|^$nb\$|\" ] }"; }

lvm pvcreate -q -y $pv >"$TESTDIR/lvm.out" 2>&1 || fail "pvcreate $pv: $(cat "$TESTDIR/lvm.out")"
on_exit "lvm pvremove -q -ff -y $pv"
lvm vgcreate -q sla $pv >/dev/null || fail "vgcreate"
on_exit "lvm vgremove -q -f sla"
for lv in one two; do
	lvm lvcreate -q -y -L 96M -n $lv sla >/dev/null || fail "lvcreate $lv"
done
on_exit "lvm vgchange -q -an sla"
assert_eq "$(lvm pvs --noheadings -o pv_name,vg_name $pv | xargs)" "$pv sla" "the PV on ioband"
for lv in one two; do
	[ -b /dev/sla/$lv ] || fail "no /dev/sla/$lv"
	# each LV maps onto the ioband device, not onto the disk beneath it
	assert_eq "$(dmsetup table sla-$lv | awk '{print $3, $4}')" "linear $iodev" "sla-$lv's table"
	mkfs.ext4 -q /dev/sla/$lv || fail "mkfs.ext4 /dev/sla/$lv"
	stk_mount /dev/sla/$lv /mnt/sla-$lv
	stk_fill /mnt/sla-$lv/data 24
done
sync
for lv in one two; do umount /mnt/sla-$lv || fail "umount $lv"; done
w0=$(stk_field sla-io 0 wsect)
log "root's writes through ioband: $w0 sectors"
# 2 x 24 files of 2-8 x 64 KiB (about 7 MiB) and two mkfs at least
[ "$w0" -ge 14000 ] || fail "only $w0 sectors were written through ioband"

lvm vgchange -q -an sla >/dev/null || fail "vgchange -an"
for lv in one two; do
	dmsetup info sla-$lv >/dev/null 2>&1 && fail "sla-$lv still active after vgchange -an"
done
# the PV is not busy any more: ioband's open count says the LVs let go
assert_eq "$(dmsetup info -c --noheadings -o open sla-io | xargs)" 0 "sla-io's open count with the VG inactive"
lvm vgchange -q -ay sla >/dev/null || fail "vgchange -ay"
for lv in one two; do
	[ -b /dev/sla/$lv ] || fail "/dev/sla/$lv did not come back"
	stk_fsck /dev/sla/$lv
	mount /dev/sla/$lv /mnt/sla-$lv || fail "mount $lv again"
	stk_verify /mnt/sla-$lv/data
done
r0=$(stk_field sla-io 0 rsect)
[ "$r0" -gt 0 ] || fail "reading back did not go through ioband"
log "two LVs on a PV on ioband: deactivated, activated, files and fsck intact ($r0 sectors read back)"
