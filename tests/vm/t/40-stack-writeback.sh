#!/bin/bash
# Writeback attribution end to end: ext4 on ioband (type cgroup, policy
# weight-iosize) over a null_blk limited to 16 MiB/s, two cgroups weighted
# 300:100 each writing a large file through the page cache (no O_DIRECT).
# The flusher threads submit the writes, yet the sectors that reach the
# disk while both are writing divide about 3:1 by cgroup.
# timeout: 180
. /tests/lib.sh
. /tests/t/stack.inc
require mkfs.ext4

mnt=/mnt/swb
nb=$(stk_nullb swb0 400 mbps=16 hw_queue_depth=8)
sz=$(blockdev --getsz "$nb")
cg_create stk-wa/w >/dev/null
cg_create stk-wb/w >/dev/null
ia=$(stat -c %i $CG_ROOT/stk-wa)
ib=$(stat -c %i $CG_ROOT/stk-wb)
# io_limit 8: ioband, not the disk's queue, decides whose write goes next
io=$(dm_create swb-io "0 $sz ioband $nb swb 0 8 cgroup weight-iosize 0 :100 $ia:300 $ib:100")
mkfs.ext4 -q "$io" || fail "mkfs.ext4"
stk_mount "$io" $mnt
sync

wsect() { stk_field swb-io "$1" wsect; }
# Wait (at most $2 seconds) until the two groups have written $1 sectors.
wait_written() {
	local i=0
	while [ $(($(wsect "$ia") + $(wsect "$ib"))) -lt "$1" ]; do
		[ $i -lt $(($2 * 10)) ] || fail "only $(wsect "$ia") + $(wsect "$ib") sectors written after $2 s, want $1"
		sleep 0.1
		i=$((i + 1))
	done
}

# 160 MiB each: the writers outrun the disk for the whole measurement
for g in wa wb; do
	cg_run stk-$g/w dd if=/dev/zero of=$mnt/$g bs=64k count=2560 status=none &
	echo $! >"$TESTDIR/$g.pid"
done
on_exit "kill $(cat "$TESTDIR/wa.pid") $(cat "$TESTDIR/wb.pid")"
# Skip the first 32 MiB (the dirty pages pile up before any limit bites),
# then measure over the next 64 MiB.
wait_written 65536 60
a0=$(wsect "$ia") b0=$(wsect "$ib") t0=$(date +%s)
wait_written $((a0 + b0 + 131072)) 60
a1=$(wsect "$ia") b1=$(wsect "$ib") t1=$(date +%s)
kill "$(cat "$TESTDIR/wa.pid")" "$(cat "$TESTDIR/wb.pid")" 2>/dev/null
wait
da=$((a1 - a0)) db=$((b1 - b0))
share=$(stk_share $da $db)
log "written back in $((t1 - t0)) s: cgroup a (300) $((da / 2048)) MiB, b (100) $((db / 2048)) MiB: a's share $share % (aim 75)"
log "default group (metadata, journal): $(wsect -1) sectors in all"
report writeback_share_300_100 "$share"
[ "$share" -ge 62 ] && [ "$share" -le 88 ] ||
	fail "cgroup a's writeback got $share % of the disk, want 62 to 88 (aim 75; 50 would mean the weights are ignored)"
