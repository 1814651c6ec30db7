#!/bin/bash
# Power cuts: ext4 on ioband over a null_blk with a volatile write cache,
# three cgroups creating files and fsyncing them while ioband holds their
# writes (io_limit 2, weights 400:200:100; direct writes of the same
# cgroups contend).  At a random moment the power
# goes (null_blk's power off drops what its cache holds unflushed); after
# power on the journal replays, e2fsck -fn finds nothing, and every file
# whose fsync had returned is there with its contents.  Every other cut
# comes just after the writers stopped, with no flush after their last
# fsyncs.  Cycles go on for
# about 60 s (at least 2: a cycle takes 80 s on the debug kernel).
# long: yes (a soak of as many cycles as fit in 60 s: 197-300 s a run)
# timeout: 420
. /tests/lib.sh
. /tests/t/rel.inc
. /tests/t/crash.inc
require mkfs.ext4 e2fsck

SECS=${CRASH_SECS:-60}
MIN_CYCLES=2
NB=pc0
nb=$(nullb_create $NB 256 200000 4 1 64)
sz=$(blockdev --getsz "$nb")
weights=$(crash_cgroups pc)
table() {
	echo "0 $sz ioband $1 pcdg 1 2 cgroup weight 0 :100 $weights"
}

# The device model first: unflushed data is gone after a power cycle,
# flushed data is not.  Without this the test could not fail.
head -c $((1 << 20)) /dev/urandom >"$TESTDIR/pat"
zeros=$(head -c $((1 << 20)) /dev/zero | sha256sum)
dd if="$TESTDIR/pat" of="$nb" bs=1M oflag=direct status=none || fail "write below"
nullb_power $NB 0
nb=$(nullb_power $NB 1)
assert_eq "$(dd if="$nb" bs=1M count=1 iflag=direct status=none | sha256sum)" "$zeros" \
	"unflushed write after a power cycle (null_blk must drop its cache)"
dd if="$TESTDIR/pat" of="$nb" bs=1M oflag=direct conv=fsync status=none || fail "write below"
nullb_power $NB 0
nb=$(nullb_power $NB 1)
assert_eq "$(dd if="$nb" bs=1M count=1 iflag=direct status=none | sha256sum)" \
	"$(sha256sum <"$TESTDIR/pat")" "flushed write after a power cycle"
log "null_blk drops its unflushed cache at power off and keeps flushed data"

dev=$(dm_create pc "$(table "$nb")")
assert_eq "$(cat /sys/block/$(basename "$dev")/queue/write_cache)" "write back" \
	"write cache announced by ioband"
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$dev" || fail "mkfs.ext4"
dmsetup remove pc || fail "dmsetup remove pc"

mnt=$TESTDIR/mnt
mkdir -p "$mnt"
on_exit "dmsetup remove --retry pc"
on_exit "umount $mnt"
cycle=0 acked=0 held=0
T0=$(date +%s)
while [ $cycle -lt $MIN_CYCLES ] || [ $(($(date +%s) - T0)) -lt "$SECS" ]; do
	cycle=$((cycle + 1))
	table "$nb" | dmsetup create pc || fail "cycle $cycle: dmsetup create"
	dev=$(dm_node pc)
	crash_fsck "$dev"
	mount -t ext4 "$dev" "$mnt" || fail "cycle $cycle: mount"
	n=$(crash_check_acked "$mnt" "$TESTDIR"/ack-*)
	[ "$n" = "$acked" ] || fail "cycle $cycle: $n files checked, $acked acknowledged"
	rm -f "$mnt/stop"
	# files fsynced, and direct writes to contend with
	crash_start pc "$mnt" "c$cycle" --size=4m --time_based --runtime=300
	pids=("${CRASH_PIDS[@]}")
	# The cut comes once ioband holds writes, at a random moment 0.01 to
	# 2 s later (a sleep to pick the moment, not to wait for anything).
	# Every other cycle the writers stop first and the cut follows at
	# once: no later flush then covers the last fsyncs' writes, which
	# must have been durable (FUA, flushed) when fsync returned.
	h0=$(rel_held pc)
	rel_wait_held pc $((h0 + 4)) "${pids[0]}"
	sleep 0.$((RANDOM % 9 + 1))$((RANDOM % 10))
	[ $((RANDOM % 2)) = 0 ] || sleep 1
	held=$((held + $(rel_held pc) - h0))
	if [ $((cycle % 2)) = 0 ]; then
		: >"$mnt/stop"
		kill "${pids[1]}" "${pids[3]}" "${pids[5]}"
		for p in "${pids[@]}"; do
			rel_wait_gone "$p" 60 || fail "cycle $cycle: a writer still runs 60 s after the stop"
		done
	fi
	nullb_power $NB 0
	for p in "${pids[@]}"; do
		rel_wait_gone "$p" 30 || fail "cycle $cycle: a writer still runs 30 s after the cut"
	done
	# fio's job processes may outlive the pids waited for by a moment,
	# with files still open: poll (bounded) until the unmount succeeds
	for i in $(seq 300); do
		umount "$mnt" 2>/dev/null && break
		[ "$i" -lt 300 ] || fail "cycle $cycle: umount after the cut: $(umount "$mnt" 2>&1); open: $(ls -l /proc/[0-9]*/fd 2>/dev/null | grep -c "$mnt")"
		sleep 0.1
	done
	dmsetup remove pc || fail "cycle $cycle: dmsetup remove after the cut"
	nb=$(nullb_power $NB 1)
	acked=$(cat "$TESTDIR"/ack-* 2>/dev/null | wc -l)
	[ $((cycle % 4)) = 1 ] && log "cycle $cycle: $acked files acknowledged so far, $held bios held"
done
# the last cut is checked too
table "$nb" | dmsetup create pc || fail "dmsetup create after the last cut"
dev=$(dm_node pc)
crash_fsck "$dev"
mount -t ext4 "$dev" "$mnt" || fail "mount after the last cut"
n=$(crash_check_acked "$mnt" "$TESTDIR"/ack-*)
umount "$mnt"
[ "$held" -gt 0 ] || fail "no write was held by ioband: nothing tested ioband's ordering"
log "$cycle power cuts, $n acknowledged files all present and intact, fsck clean each time, $held bios held"
report cycles "$cycle"
report acked_files "$n"
report held "$held"
