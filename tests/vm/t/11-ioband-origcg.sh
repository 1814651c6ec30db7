#!/bin/bash
# Classification by the cgroup of the bio submitted to the ioband device
# (its blkcg association), not by the pages' owner or the submitting task:
# O_DIRECT writes from a mapping of another cgroup's pages, writeback of
# pages another cgroup cached, and ext4 on dm-crypt on ioband, where
# dm-crypt's workers submit every write.  Every case is checked, then the
# test fails naming each one that went wrong.
# timeout: 420
. /tests/lib.sh
require mmapdio

nb=$(nullb_create ocg0 64 "" "" 1)
sz=$(blockdev --getsz "$nb")
a=$(cg_create ocg-a)
b=$(cg_create ocg-b)
ida=$(stat -c %i "$a")
idb=$(stat -c %i "$b")
dev=$(dm_create ocg "0 $sz ioband $nb ocgdg 0 0 cgroup weight 0 :100 $ida:200 $idb:100")
mm=$(printf '%d:%d' "0x$(stat -L -c %t "$dev")" "0x$(stat -L -c %T "$dev")")
mkdir -p /mnt/ocg

# Field $2 (4 writes, 6 write_sectors) of group $1 in ioband's status.
stat_of() {
	dmsetup status ocg | awk -v id="$1" -v f="$2" '{
		for (i = 5; i + 6 <= NF; i += 7) if ($i == id) print $(i + f) }'
}
# Bytes cgroup directory $1 wrote to the ioband device, by its io.stat:
# the kernel's own attribution of the same bios.
wbytes_of() {
	local v
	v=$(awk -v d="$mm" '$1 == d { for (i = 2; i <= NF; i++)
		if (sub(/^wbytes=/, "", $i)) print $i }' "$1/io.stat")
	echo "${v:-0}"
}
snap() { a0=$(wbytes_of "$a") b0=$(wbytes_of "$b"); dmsetup message ocg 0 reset || fail reset; }
show() {
	aw=$(stat_of "$ida" 4) as=$(stat_of "$ida" 6)
	bw=$(stat_of "$idb" 4) bs=$(stat_of "$idb" 6)
	ka=$(( $(wbytes_of "$a") - a0 )) kb=$(( $(wbytes_of "$b") - b0 ))
	log "$1: ioband a: $aw writes $as sectors, b: $bw writes $bs sectors," \
		"default: $(stat_of -1 6) sectors; io.stat a $ka bytes, b $kb bytes"
}
bad=""
want() { # CONDITION MESSAGE
	if ! eval "$1"; then
		echo "@@CHECK-FAILED $2 ($1)"
		bad="$bad; $2"
	fi
}

# ---- 1. O_DIRECT from a mapping of pages cached by another cgroup ---------
# a's tmpfs file, mapped by b, is the data of b's 1000 writes: they are b's.
cg_run ocg-a dd if=/dev/zero of="$TESTDIR/cached" bs=1M count=4 status=none
snap
cg_run ocg-b mmapdio "$TESTDIR/cached" "$dev" 1000 >/dev/null || fail "mmapdio"
show "mmap O_DIRECT"
want '[ "$bw" = 1000 ] && [ "$aw" = 0 ]' \
	"b's 1000 O_DIRECT writes from a's pages charged to b"
want '[ "$kb" = 4096000 ] && [ "$ka" = 0 ]' "io.stat charges them to b"

# ---- 2. writeback of pages cached by a, dirtied by b ----------------------
# b writes the file first, so its inode belongs to b's writeback domain;
# the page cache is dropped (the inode stays) and a reads the file back,
# so the pages are charged to a; then b overwrites them.  The kernel
# writes an inode's pages back through its domain's blkcg, whoever owns
# the pages: b's 4 MiB are b's.
mkfs.ext4 -q -F "$dev" || fail "mkfs.ext4"
mount "$dev" /mnt/ocg || fail "mount"
cg_run ocg-b dd if=/dev/zero of=/mnt/ocg/f bs=1M count=4 status=none
sync
echo 1 >/proc/sys/vm/drop_caches
cg_run ocg-a cat /mnt/ocg/f >/dev/null
snap
cg_run ocg-b dd if=/dev/zero of=/mnt/ocg/f bs=1M count=4 conv=notrunc status=none
sync
show "writeback of a's pages by b"
want '[ "$kb" -ge 4194304 ] && [ "$ka" = 0 ]' "io.stat charges b's writeback to b"
want '[ "$bs" -ge 8192 ] && [ "$bs" -le 10240 ] && [ "$as" = 0 ]' \
	"b's writeback of a's pages charged to b"
umount /mnt/ocg

# ---- 3. ext4 on dm-crypt on ioband ------------------------------------------
# dm-crypt's workers write the encrypted copies; dm core gives each copy
# the association of the bio dm-crypt got, so they reach ioband as a's and
# b's.  a writes 4 MiB, b 2 MiB.
modprobe dm-crypt 2>/dev/null
key=$(printf '%064x' 0x10ba4d)
cdev=$(dm_create ocgcrypt "0 $sz crypt aes-cbc-plain64 $key 0 $dev 0")
mkfs.ext4 -q -F "$cdev" || fail "mkfs.ext4 on dm-crypt"
mount "$cdev" /mnt/ocg || fail "mount dm-crypt"
on_exit "umount /mnt/ocg"
sync
snap
cg_run ocg-a dd if=/dev/zero of=/mnt/ocg/a bs=1M count=4 status=none
cg_run ocg-b dd if=/dev/zero of=/mnt/ocg/b bs=1M count=2 status=none
sync
show "ext4 on dm-crypt"
want '[ "$ka" -ge 4194304 ] && [ "$kb" -ge 2097152 ]' \
	"io.stat charges the encrypted writes to a and b"
want '[ "$as" -ge 8192 ] && [ "$as" -le 10240 ] && [ "$bs" -ge 4096 ] && [ "$bs" -le 5120 ]' \
	"dm-crypt's writes charged to a (4 MiB) and b (2 MiB)"

[ -z "$bad" ] || fail "${bad#; }"
