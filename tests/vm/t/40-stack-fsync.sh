#!/bin/bash
# fsync and the journal under a flood: ext4 on ioband (type cgroup) over a
# null_blk limited to 16 MiB/s; a weight-1 cgroup floods it with buffered
# writes while a weight-1000 cgroup does small writes each followed by
# fsync.  The default group, where jbd2's journal writes land, has weight 1
# too: the journal competes at the lowest weight.  Every fsync must finish
# in bounded time, and no task may hang (hung-task timeout lowered to 20 s).
# timeout: 240
. /tests/lib.sh
. /tests/t/stack.inc
require mkfs.ext4

mnt=/mnt/sfs
ht=/proc/sys/kernel/hung_task_timeout_secs
[ -w $ht ] || skip "no hung-task detector on this kernel ($ht)"
nb=$(stk_nullb sfs0 400 mbps=16 hw_queue_depth=8)
sz=$(blockdev --getsz "$nb")
cg_create stk-flood/w >/dev/null
cg_create stk-sync/w >/dev/null
iflood=$(stat -c %i $CG_ROOT/stk-flood)
isync=$(stat -c %i $CG_ROOT/stk-sync)
io=$(dm_create sfs-io "0 $sz ioband $nb sfs 0 8 cgroup weight-iosize 0 :1 $iflood:1 $isync:1000")
mkfs.ext4 -q "$io" || fail "mkfs.ext4"
stk_mount "$io" $mnt
mkdir $mnt/flood $mnt/sync
sync
on_exit "echo $(cat $ht) > $ht"
echo 20 >$ht

# The flood: 16 MiB files, the oldest deleted as it goes (deletes make
# journal work too), until told to stop.
flood() {
	local n=0
	while [ ! -e "$TESTDIR/stop" ]; do
		n=$((n + 1))
		dd if=/dev/zero of=$mnt/flood/f$((n % 8)) bs=64k count=256 status=none ||
			{ echo "flood: dd failed" >"$TESTDIR/flood.err"; return; }
	done
}
cg_run stk-flood/w bash -c "$(declare -f flood); mnt=$mnt TESTDIR=$TESTDIR; flood" &
flood_pid=$!
on_exit "touch $TESTDIR/stop; wait $flood_pid"
i=0
while [ "$(stk_field sfs-io "$iflood" wsect)" -lt 32768 ]; do
	[ $i -lt 600 ] || fail "the flood wrote only $(stk_field sfs-io "$iflood" wsect) sectors in 60 s"
	sleep 0.1
	i=$((i + 1))
done
log "the flood is on: $(stk_field sfs-io "$iflood" wsect) sectors written"
j0=$(stk_field sfs-io -1 writes)

# 20 rounds of 16 KiB written and fsync'ed, each timed in milliseconds.
cg_run stk-sync/w bash -c '
	for i in $(seq 20); do
		t0=$(date +%s%N)
		dd if=/dev/urandom of='$mnt'/sync/s$i bs=4k count=4 conv=fsync status=none || exit 1
		echo $((($(date +%s%N) - t0) / 1000000))
	done' >"$TESTDIR/lat" || fail "the fsync writer failed"
touch "$TESTDIR/stop"
wait $flood_pid
[ ! -e "$TESTDIR/flood.err" ] || fail "$(cat "$TESTDIR/flood.err")"
sort -n "$TESTDIR/lat" >"$TESTDIR/lat.sorted"
max=$(tail -n 1 "$TESTDIR/lat.sorted")
med=$(sed -n 10p "$TESTDIR/lat.sorted")
j=$(($(stk_field sfs-io -1 writes) - j0))
log "fsync latency under the flood: median $med ms, max $max ms (20 rounds); default group (journal) writes meanwhile: $j"
log "flood: $(($(stk_field sfs-io "$iflood" wsect) / 2048)) MiB, sync group: $(($(stk_field sfs-io "$isync" wsect) / 2)) KiB"
report fsync_median_ms "$med"
report fsync_max_ms "$max"
# the journal's writes did land in the weight-1 default group
[ "$j" -gt 0 ] || fail "no writes in the default group during the fsyncs: the journal went elsewhere"
[ "$(stk_field sfs-io "$isync" wsect)" -ge 640 ] || fail "the sync group's 320 KiB were not counted in it"
# 10 s: far beyond what one journal commit and the ordered data before it
# take at 16 MiB/s, far below the 20 s that would report a hung task
[ "$max" -le 10000 ] || fail "an fsync took $max ms under the flood (want at most 10000)"
