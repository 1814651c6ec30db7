#!/bin/bash
# Write order below ioband: dm-log-writes under ioband records what ioband
# sends down, in the order it would reach the disk past a volatile cache.
# Three cgroups create and fsync files on ext4 while ioband holds their
# writes; then the log is replayed (tests/vm/logreplay.c) and at each
# flush or FUA point (at most 16, spread over the log) the disk as a power
# cut there would leave it must pass e2fsck -fn once its journal is
# replayed; at the end every fsync-acknowledged file must be there.
# timeout: 400
# long: debug
. /tests/lib.sh
. /tests/t/rel.inc
. /tests/t/crash.inc
require mkfs.ext4 e2fsck logreplay
MAX_CHECKS=16
MIN_ACKED=20

modprobe -q dm-log-writes 2>/dev/null
dmsetup targets | grep -q '^log-writes' || skip "no dm-log-writes target"
# the data device has a volatile cache, so that flushes and FUA reach
# ioband and the log; log, replay and scratch devices are plain memory
data=$(nullb_create wo0 48 200000 4 1 16)
logd=$(nullb_create wolog 256 "" "" 1)
rep=$(nullb_create worep 48 "" "" 1)
scr=$(nullb_create woscr 48 "" "" 1)
sz=$(blockdev --getsz "$data")
weights=$(crash_cgroups wo)

# The log starts from the file system as mkfs left it, on the replay
# device as well.
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$data" || fail "mkfs.ext4"
dd if="$data" of="$rep" bs=1M iflag=direct oflag=direct status=none || fail "copy to the replay device"
lw=$(dm_create wolw "0 $sz log-writes $data $logd")
dev=$(dm_create wo "0 $sz ioband $lw wodg 1 2 cgroup weight 0 :100 $weights")
assert_eq "$(cat /sys/block/$(basename "$dev")/queue/write_cache)" "write back" \
	"write cache announced by ioband over log-writes"

mnt=$TESTDIR/mnt
mkdir -p "$mnt"
mount -t ext4 "$dev" "$mnt" || fail "mount"
on_exit "umount $mnt"
crash_start wo "$mnt" w --size=2m --io_size=3m
pids=("${CRASH_PIDS[@]}")
acked() { cat "$TESTDIR"/ack-* 2>/dev/null | wc -l; }
i=0
until [ "$(acked)" -ge $MIN_ACKED ]; do
	alive "${pids[0]}" || fail "a writer ended early"
	i=$((i + 1))
	[ $i -lt 1200 ] || fail "only $(acked) files acknowledged in 120 s"
	sleep 0.1
done
: >"$mnt/stop"
for p in "${pids[@]}"; do
	rel_wait_gone "$p" 60 || fail "a writer still runs 60 s after the stop"
done
held=$(rel_held wo)
umount "$mnt" || fail "umount"
dmsetup remove wo || fail "dmsetup remove wo"
dmsetup remove wolw || fail "dmsetup remove wolw"
n=$(acked)
log "$n files acknowledged, $held bios held by ioband; replaying the log"
[ "$held" -gt 0 ] || fail "no write was held by ioband: nothing tested its ordering"

# A check point: copy the replay device as the log left it, replay the
# journal on the copy (as mount would), then a read-only full check.
cat >"$TESTDIR/check" <<CHECK
dd if=$rep of=$scr bs=1M iflag=direct oflag=direct status=none || exit 1
e2fsck -E journal_only -y $scr >$TESTDIR/replay.out 2>&1
e2fsck -fn $scr >$TESTDIR/fsck.out 2>&1 && exit 0
echo "after log entry \$LOGREPLAY_ENTRY:"; tail -n 12 $TESTDIR/fsck.out
exit 1
CHECK
logreplay "$logd" "$rep" "sh $TESTDIR/check" $MAX_CHECKS >"$TESTDIR/replay" 2>&1 ||
	fail "replay: $(tail -n 16 "$TESTDIR/replay")"
sum=$(tail -n 1 "$TESTDIR/replay")
log "log: $sum"
set -- $sum
flushes=$5 fua=$7 checks=${13}
# each fsync is at least a journal commit: a flush and a FUA write
[ "$flushes" -ge $MIN_ACKED ] || fail "only $flushes flushes logged below ioband for $n fsyncs"
[ "$fua" -ge $MIN_ACKED ] || fail "only $fua FUA writes logged below ioband for $n fsyncs"
[ "$checks" -ge $((MAX_CHECKS / 2)) ] || fail "only $checks check points"
# the end of the log holds every acknowledged file
sh "$TESTDIR/check" || fail "the replayed end of the log does not check"
mount -t ext4 -o ro "$scr" "$mnt" || fail "mount the replayed file system"
got=$(crash_check_acked "$mnt" "$TESTDIR"/ack-*)
assert_eq "$got" "$n" "acknowledged files in the replayed log"
log "$checks points of $((flushes + fua)) flushes and FUA writes checked; all $n files in the log"
report acked_files "$n"
report held "$held"
report flushes "$flushes"
report fua "$fua"
report checks "$checks"
