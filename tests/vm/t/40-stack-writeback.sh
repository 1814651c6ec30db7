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
# io_limit 2: writeback bios are up to 2 MiB, so even 2 in flight keep
# the disk busy; more would leave the order to the queue beneath ioband
io=$(dm_create swb-io "0 $sz ioband $nb swb 0 2 cgroup weight-iosize 0 :100 $ia:300 $ib:100")
mkfs.ext4 -q "$io" || fail "mkfs.ext4"
stk_mount "$io" $mnt
sync

wsect() { stk_field swb-io "$1" wsect; }
# Once a second or so: each group's sectors and held writes, and each
# cgroup's dirty and under-writeback page cache (where a shortfall starts).
sample() {
	local g line=""
	for g in wa wb; do
		line="$line $g: $(awk '$1 == "file_dirty" || $1 == "file_writeback" { printf "%s=%dM ", $1, $2 / 1048576 }' $CG_ROOT/stk-$g/memory.stat)"
	done
	log "a $(wsect "$ia") sect $(stk_field swb-io "$ia" dwrites) held, b $(wsect "$ib") sect $(stk_field swb-io "$ib" dwrites) held;$line"
}
# Wait (at most $2 seconds) until the two groups have written $1 sectors.
wait_written() {
	local end=$(($(date +%s) + $2))
	while [ $(($(wsect "$ia") + $(wsect "$ib"))) -lt "$1" ]; do
		[ "$(date +%s)" -le $end ] || fail "only $(wsect "$ia") + $(wsect "$ib") sectors written after $2 s, want $1"
		sample
		sleep 0.5
	done
}

# Each writer appends 4 MiB at a time until told to stop (or the disk is
# full): far more than the disk takes in during the measurement.
for g in wa wb; do
	cg_run stk-$g/w sh -c 'while [ ! -e "$1" ]; do
		dd if=/dev/zero bs=64k count=64 status=none || exit 1; done >"$2"' \
		sh "$TESTDIR/stop" $mnt/$g &
done
on_exit "touch $TESTDIR/stop; wait"
# Skip the first 32 MiB (the dirty pages pile up before any limit bites),
# then measure over the next 64 MiB.
wait_written 65536 60
a0=$(wsect "$ia") b0=$(wsect "$ib") t0=$(date +%s)
wait_written $((a0 + b0 + 131072)) 60
a1=$(wsect "$ia") b1=$(wsect "$ib") t1=$(date +%s)
touch "$TESTDIR/stop"
wait
da=$((a1 - a0)) db=$((b1 - b0))
share=$(stk_share $da $db)
log "written back in $((t1 - t0)) s: cgroup a (300) $((da / 2048)) MiB, b (100) $((db / 2048)) MiB: a's share $share % (aim 75)"
log "default group (metadata, journal): $(wsect -1) sectors in all"
report writeback_share_300_100 "$share"
[ "$share" -ge 62 ] && [ "$share" -le 88 ] ||
	fail "cgroup a's writeback got $share % of the disk, want 62 to 88 (aim 75; 50 would mean the weights are ignored)"
