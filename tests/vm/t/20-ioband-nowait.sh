#!/bin/bash
# io_uring on ioband: the target declares DM_TARGET_NOWAIT, so REQ_NOWAIT
# bios reach map() and io_uring needs no worker threads (iou-wrk) to
# submit; a REQ_NOWAIT bio that would be held ends with BLK_STS_AGAIN and
# io_uring reissues it from a worker; polled bios (--hipri on a null_blk
# with poll queues) are never held and complete.
#
# 1. 4 KiB random reads, depth 32, on ioband and on dm-linear: nearly all
#    bios in map() are REQ_NOWAIT (ioband_map's nowait field), none waits
#    for room, and ioband runs with no more iou-wrk threads than dm-linear
#    (none, on both kernels).
# 2. A group capped at 2 MB/s, io_uring writes at depth 64 (1 MiB, beyond
#    the group's hold bound of 200 ms at its cap) with verification: its
#    REQ_NOWAIT bios that would be held end with EAGAIN (ioband_again),
#    none is held or waits for room (the retries do), io_uring retries
#    them from iou-wrk threads (they reach map() again without
#    REQ_NOWAIT, in the trace), the device below completes each write
#    exactly once, and every block reads back as written.
# 3. A cap of 256 KB/s over a null_blk with a poll queue: fio --hipri reads
#    and writes; polled bios reach map() and none is held or refused (the
#    cap binds REQ_NOWAIT bios that are not polled: in 2., and here when
#    polled bios are not exempt, io_uring retries them unpolled).
# timeout: 420
. /tests/lib.sh
require fio

tr=/sys/kernel/tracing
[ -d $tr/events/ioband ] || mount -t tracefs nodev $tr 2>/dev/null
[ -d $tr/events/ioband ] || skip "no tracefs with ioband events"
on_exit "echo $(cat $tr/tracing_on) > $tr/tracing_on; echo > $tr/trace"
on_exit "echo 0 > $tr/events/ioband/enable"
# room for every event of 2. (a few thousand), whatever the kernel's default
read -r bsz _ <$tr/buffer_size_kb
on_exit "echo $bsz > $tr/buffer_size_kb"
echo 8192 >$tr/buffer_size_kb || fail "trace buffer size"
trace_start() {
	echo 0 >$tr/tracing_on
	echo >$tr/trace
	echo 1 >$tr/events/ioband/enable
	echo 1 >$tr/tracing_on
}
# trace_count EVENT [FIELD=VALUE]: events in the trace buffer
trace_count() {
	awk -v e="$1:" -v f=" ${2:-}" '$0 ~ e && index($0, f) { n++ } END { print n + 0 }' $tr/trace
}
# The most iou-wrk threads alive at once while the shell $1 runs (sampled
# every 0.2 s; read, not a fork per task: forks take long under TCG).
IOU_MAX=0
count_iou() {
	local t c n
	IOU_MAX=0
	while alive "$1"; do
		n=0
		for t in /proc/[0-9]*/task/*; do
			c=
			read -r c 2>/dev/null <"$t/comm"
			[[ $c == iou-wrk* ]] && n=$((n + 1))
		done
		[ $n -gt $IOU_MAX ] && IOU_MAX=$n
		sleep 0.2
	done
}
fio_ok() { # fio output file, what
	grep -q 'err= 0' "$1" || fail "$2: fio reported errors: $(grep -m 3 'err=\|verify' "$1")"
	! grep -qi 'verify.*bad\|bad magic\|crc32c.*wanted' "$1" || fail "$2: verification failed: $(grep -m 3 -i bad "$1")"
}

# Completing in queue_rq (irqmode 0) makes a bio's end run in its
# submitter's context, where io_uring reissues a request that ended with
# EAGAIN: a bio that went down and then reported EAGAIN would be written
# twice, which 2. counts below.
nb=$(NULLB_ATTRS="irqmode=0" nullb_create nw0 256 "" "" 1)
sz=$(blockdev --getsz "$nb")
cg_create nw-w >/dev/null
W=$(stat -c %i $CG_ROOT/nw-w)

# ---- 1. random reads at depth 32: ioband against dm-linear ------------------
lin=$(dm_create nw_lin "0 $sz linear $nb 0")
iob=$(dm_create nw_iob "0 $sz ioband $nb nwdg 0 0 none weight 0 :100")
dd if=/dev/urandom of="$iob" bs=1M count=16 oflag=direct status=none || fail "fill"
declare -A iou
for dev in "$lin" "$iob"; do
	if [ "$dev" = "$iob" ]; then trace_start; fi
	cg_run nw-w fio --name=nw --filename="$dev" --rw=randread --bs=4k --size=16m \
		--iodepth=32 --ioengine=io_uring --direct=1 --time_based --runtime=3 \
		>"$TESTDIR/fio1.out" 2>&1 &
	pid=$!
	count_iou $pid
	wait $pid || fail "fio io_uring on $dev: $(tail -n 5 "$TESTDIR/fio1.out")"
	fio_ok "$TESTDIR/fio1.out" "reads on $dev"
	iou[$dev]=$IOU_MAX
done
echo 0 >$tr/tracing_on
# every bio in map() is counted in the status (reads of the default
# group); the trace buffer may have lost some, so the share of REQ_NOWAIT
# bios is taken among those it kept
reads=$(dmsetup status nw_iob | awk '{ print $6 }')
maps=$(trace_count ioband_map) nowait=$(trace_count ioband_map nowait=1)
waits=$(trace_count ioband_wait)
log "reads at depth 32: $reads bios in map(); $nowait of the $maps traced were REQ_NOWAIT, $waits waited; iou-wrk threads at most ${iou[$iob]} on ioband, ${iou[$lin]} on dm-linear"
report nowait_map_bios "$maps"
report nowait_map_nowait "$nowait"
report nowait_iou_wrk_ioband "${iou[$iob]}"
report nowait_iou_wrk_linear "${iou[$lin]}"
[ "$reads" -ge 100 ] || fail "only $reads bios in map() in 3 s of reads"
[ "$maps" -ge 10 ] || fail "only $maps ioband_map events traced"
[ $((nowait * 100)) -ge $((maps * 95)) ] ||
	fail "$nowait of $maps bios reached map() with REQ_NOWAIT, want at least 95 %"
[ "$waits" -eq 0 ] || fail "$waits submitters waited for room: $(grep -m 2 ioband_wait: $tr/trace)"
[ "${iou[$iob]}" -le "${iou[$lin]}" ] ||
	fail "${iou[$iob]} iou-wrk threads on ioband, ${iou[$lin]} on dm-linear: io_uring punts ioband's I/O to workers"

# ---- 2. a capped group: EAGAIN, retried from workers, data verified -----------
cap=$(dm_create nw_cap "0 $sz ioband $nb nwdg2 0 0 cgroup range-bw 0 :0:0 $W:0:2048")
# bios written to the null_blk below (its writes and write merges: fields
# 5 and 6) and their sectors (7)
read -r _ _ _ _ w0 wm0 ws0 _ </sys/block/${nb#/dev/}/stat
w0=$((w0 + wm0))
trace_start
cg_run nw-w fio --name=nw --filename="$cap" --rw=randwrite --bs=16k --size=4m \
	--iodepth=64 --ioengine=io_uring --direct=1 --verify=crc32c --verify_fatal=1 \
	>"$TESTDIR/fio2.out" 2>&1 &
pid=$!
count_iou $pid
wait $pid || fail "fio io_uring, capped: $(tail -n 5 "$TESTDIR/fio2.out")"
echo 0 >$tr/tracing_on
fio_ok "$TESTDIR/fio2.out" "capped writes"
# fio writes each of the 256 blocks of 16 KiB once: the device below must
# have completed exactly that many writes, whatever ended with EAGAIN on
# the way (one lost would hang fio or fail its verification; one that went
# down and was also retried is one too many)
read -r _ _ _ _ w1 wm1 ws1 _ </sys/block/${nb#/dev/}/stat
w1=$((w1 + wm1))
again=$(trace_count ioband_again nowait=1) held_nw=$(trace_count ioband_hold nowait=1)
# fio submits every bio with REQ_NOWAIT: one in map() without it is a
# retry, which io_uring makes from a worker, one for each bio that ended
# with EAGAIN (the sampled count of iou-wrk threads missed every worker
# when the host starved the guest: at most 0 for 21 EAGAIN bios)
retried=$(trace_count ioband_map nowait=0)
held=$(trace_count ioband_hold) waits_nw=$(trace_count ioband_wait nowait=1)
waits=$(trace_count ioband_wait)
log "capped at 2 MB/s: $again REQ_NOWAIT bios ended with EAGAIN and $retried came again without it, $held held (REQ_NOWAIT: $held_nw), $waits waits for room (REQ_NOWAIT: $waits_nw); iou-wrk threads at most $IOU_MAX; $((w1 - w0)) writes of $((ws1 - ws0)) sectors below; 4 MiB written and verified"
report nowait_capped_again "$again"
report nowait_capped_held "$held"
report nowait_capped_iou_wrk "$IOU_MAX"
report nowait_capped_retried "$retried"
[ "$again" -gt 0 ] || fail "no REQ_NOWAIT bio of the capped group ended with EAGAIN"
[ "$held_nw" -eq 0 ] || fail "$held_nw REQ_NOWAIT bios were held: $(grep -m 2 'ioband_hold:.*nowait=1' $tr/trace)"
[ "$waits_nw" -eq 0 ] || fail "$waits_nw REQ_NOWAIT submitters waited for room"
[ "$held" -gt 0 ] || fail "no retried bio was held: the cap did not bind"
# The check that no REQ_NOWAIT bio waited means something only if the
# group was full at times: under host load the retries from iou-wrk may
# come too slowly to fill it (debug kernel, two busy loops on the host: 37
# held, none waited).  Then that check is not made: a skip at the end.
UNJUDGED=
[ "$waits" -gt 0 ] ||
	UNJUDGED="no submitter waited for room ($held held): the group was never full, so whether a REQ_NOWAIT bio would have waited was not seen; "
[ "$retried" -ge "$again" ] ||
	fail "$retried bios came back without REQ_NOWAIT, want at least the $again that ended with EAGAIN: io_uring did not retry them"
[ $((w1 - w0)) -eq 256 ] && [ $((ws1 - ws0)) -eq 8192 ] ||
	fail "the device below completed $((w1 - w0)) write bios of $((ws1 - ws0)) sectors, want exactly 256 of 8192 (each 16 KiB block once)"

# ---- 3. polled bios on a device with a poll queue ------------------------------
[ -f "$NULLB_CFS/nw0/poll_queues" ] || skip "${UNJUDGED}null_blk has no poll_queues"
# not memory backed: 6.12's null_blk allocates its pages while polled,
# under rcu_read_lock() ("sleeping function called from invalid
# context" in null_insert_page), so nothing is read back to verify
nbp=$(NULLB_ATTRS="submit_queues=1 poll_queues=1" nullb_create nwp 64 "" "" 0)
szp=$(blockdev --getsz "$nbp")
[ "$(cat /sys/block/${nbp#/dev/}/queue/io_poll)" = 1 ] || fail "$nbp: no poll queue"
# a cap far below what polled I/O reaches under TCG (0.7 MB/s)
pol=$(dm_create nw_pol "0 $szp ioband $nbp nwdg3 0 0 cgroup range-bw 0 :0:0 $W:0:256")
[ "$(cat /sys/block/${pol#/dev/}/queue/io_poll)" = 1 ] || fail "ioband over $nbp does not support polling"
trace_start
timeout 120 bash -c "echo \$\$ >$CG_ROOT/nw-w/cgroup.procs; exec fio --name=nw --filename=$pol \
	--rw=randrw --bs=16k --size=1m --iodepth=8 --ioengine=io_uring --hipri --direct=1" \
	>"$TESTDIR/fio3.out" 2>&1
rc=$?
echo 0 >$tr/tracing_on
[ $rc -ne 124 ] || fail "fio --hipri did not end within 120 s"
[ $rc -eq 0 ] || fail "fio --hipri: $(tail -n 5 "$TESTDIR/fio3.out")"
fio_ok "$TESTDIR/fio3.out" "polled writes"
polled=$(trace_count ioband_map polled=1) held_p=$(trace_count ioband_hold polled=1)
again_p=$(trace_count ioband_again polled=1)
log "--hipri over a poll queue: $polled polled bios in map(), $held_p held, $again_p ended with EAGAIN; 1 MiB read and written"
report nowait_polled_bios "$polled"
[ "$polled" -gt 0 ] || fail "no polled bio reached map()"
[ "$held_p" -eq 0 ] || fail "$held_p polled bios were held"
[ "$again_p" -eq 0 ] || fail "$again_p polled bios ended with EAGAIN (io_uring retried them unpolled)"
[ -z "$UNJUDGED" ] || skip "$UNJUDGED"
