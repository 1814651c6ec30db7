#!/bin/bash
# A filesystem stays responsive while one cgroup writes to it under a cap
# of 100 KB/s.  ext4 on ioband; cgroup A writes 8 MiB buffered and
# fsyncs (its flusher and its fsync submit under a journal handle, which
# must never sleep in map(): the journal's commit, and every writer, would
# wait); cgroup B, not capped, meanwhile does ten 4 KiB writes with fsync,
# and ls -l and stat of A's file.  At 100 KB/s, the 4 MiB that a group
# could hold took 40 s to drain; the goal is a filesystem that answers
# others in seconds: each of B's fsyncs within 5 s, each ls/stat within
# 2 s, more than the worst of three without A's load (under TCG on a
# loaded host an unthrottled fsync takes up to 1 s, more on the debug
# kernel).
# This load does not show the stall of a submitter sleeping under a
# journal handle: with the 4 MiB bound and unbounded waits B's worst fsync
# was 1.2 s too.  It fails when the commit waits for A's data (1 KiB
# blocks, ordered data: jbd2 blocked for more than 120 s).
# timeout: 200
# long: debug
. /tests/lib.sh
require mkfs.ext4

nb=$(nullb_create fr0 256 "" "" 1)
sz=$(blockdev --getsz "$nb")
cg_create fr-a >/dev/null
cg_create fr-b >/dev/null
A=$(stat -c %i $CG_ROOT/fr-a)
dev=$(dm_create fr "0 $sz ioband $nb frdg 0 0 cgroup range-bw 0 :0:0 $A:0:100")
# 4 KiB blocks: ext4 then allocates unwritten extents for writeback
# (dioread_nolock), and a commit does not wait for A's data.  With 1 KiB
# blocks (mkfs's choice for a disk this small) the data is ordered: every
# commit waits for A's pages under writeback, at A's 100 KB/s, whatever
# ioband does (see Limits in Documentation/ioband.rst).
mkfs.ext4 -q -F -b 4096 "$dev" >/dev/null 2>&1 || fail "mkfs.ext4 $dev"
mnt=$TESTDIR/mnt
mkdir -p "$mnt"
mount -t ext4 "$dev" "$mnt" || fail "mount"
on_exit "umount $mnt"
# whatever happens, A's pages drain at device speed before the unmount
on_exit "dmsetup message fr 0 range-bw $A:0:0"
on_exit "echo $(cat /proc/sys/vm/dirty_background_bytes) >/proc/sys/vm/dirty_background_bytes"
echo $((1 << 20)) >/proc/sys/vm/dirty_background_bytes

# b_ops N: N of B's writes with fsync and ls/stat; the worst of each, in us
b_ops() {
	local i t0 t1 t2
	worst_fsync=0 worst_ls=0
	for i in $(seq "$1"); do
		usecs; t0=$REPLY
		cg_run fr-b dd if=/dev/zero of="$mnt/b$i" bs=4k count=1 conv=fsync status=none ||
			fail "B's write $i"
		usecs; t1=$REPLY
		ls -l "$mnt" >/dev/null && stat "$mnt/a" >/dev/null 2>&1 || fail "ls/stat"
		usecs; t2=$REPLY
		[ $((t1 - t0)) -gt $worst_fsync ] && worst_fsync=$((t1 - t0))
		[ $((t2 - t1)) -gt $worst_ls ] && worst_ls=$((t2 - t1))
	done
}
touch "$mnt/a"
b_ops 3
base_fsync=$worst_fsync base_ls=$worst_ls
log "B alone: worst fsync $((base_fsync / 1000)) ms, worst ls+stat $((base_ls / 1000)) ms"
cg_run fr-a dd if=/dev/zero of="$mnt/a" bs=1M count=8 conv=fsync status=none &
writer=$!
# until A's group has bios held (at most 30 s)
held_a() {
	dmsetup status fr | awk -v a="$A" '{ for (i = 5; i + 6 <= NF; i += 7) if ($i == a) print $(i + 5) + $(i + 2) }'
}
for i in $(seq 150); do
	[ "$(held_a)" -gt 0 ] && break
	sleep 0.2
done
[ "$(held_a)" -gt 0 ] || fail "A's group held nothing within 30 s: $(dmsetup status fr)"
log "A writes 8 MiB at 100 KB/s; its group has held $(held_a) bios"

b_ops 10
# 8 MiB at 100 KB/s lasts 84 s: a writer that ended first was not capped,
# or B's ten operations waited for most of A's data
alive $writer ||
	fail "A's writer ended before B was done (B's worst fsync $((worst_fsync / 1000)) ms, ls+stat $((worst_ls / 1000)) ms): the cap did not bind, or B waited for A"
log "B: worst fsync $((worst_fsync / 1000)) ms, worst ls+stat $((worst_ls / 1000)) ms, while A wrote at 100 KB/s"
report fs_responsive_worst_fsync_ms $((worst_fsync / 1000))
report fs_responsive_worst_ls_ms $((worst_ls / 1000))
dmsetup message fr 0 range-bw "$A:0:0" || fail "lift A's cap"
wait $writer || fail "A's dd failed"
[ "$(stat -c %s "$mnt/a")" -eq $((8 << 20)) ] || fail "A's file is $(stat -c %s "$mnt/a") bytes"
[ $worst_fsync -le $((5000000 + base_fsync)) ] ||
	fail "one of B's fsyncs took $((worst_fsync / 1000)) ms, want at most 5 s more than alone ($((base_fsync / 1000)) ms)"
[ $worst_ls -le $((2000000 + base_ls)) ] ||
	fail "ls -l and stat took $((worst_ls / 1000)) ms, want at most 2 s more than alone ($((base_ls / 1000)) ms)"
