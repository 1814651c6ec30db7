#!/bin/bash
# ioband on ioband.  In one device group it would wait on itself (the
# upper device's bios take the io_limit slots the lower one's wait for), so
# the table load is refused, whichever device comes first.  In two device
# groups it works: each has its own workqueue, and the upper group's worker
# never sleeps for room in the lower device's map() (it holds its bios
# instead), so a small io_limit and a full lower group do not stall it.
# timeout: 150
. /tests/lib.sh
require fio

tr=/sys/kernel/tracing
[ -d $tr/events/ioband ] || mount -t tracefs nodev $tr 2>/dev/null
[ -d $tr/events/ioband ] || skip "no tracefs with ioband events"
on_exit "echo $(cat $tr/tracing_on) > $tr/tracing_on; echo > $tr/trace"
on_exit "echo 0 > $tr/events/ioband/enable"

nb=$(nullb_create sg0 128 "" "" 1)
sz=$(blockdev --getsz "$nb")
cg_create sg-w >/dev/null
W=$(stat -c %i $CG_ROOT/sg-w)

# refused CMD... REASON: the command fails and the kernel log says why
refused() {
	local reason=${*: -1}
	dmesg -c >/dev/null
	"${@:1:$#-1}" 2>/dev/null && fail "accepted: ${*:1:$#-1}"
	dmesg | grep -q "$reason" || fail "no '$reason' in the kernel log: $(dmesg | tail -n 2)"
}

# ---- 1. one device group: refused, above and below ------------------------------
lo=$(dm_create sg_lo "0 $sz ioband $nb sgdg 0 4 none weight 0 :100")
refused dmsetup create sg_bad --table "0 $sz ioband $lo sgdg 0 4 none weight 0 :100" \
	"the device below is an ioband device of the same device group"
lin=$(dm_create sg_lin "0 $sz linear $nb 0")
up2=$(dm_create sg_up2 "0 $sz ioband $lin sgdg2 0 4 none weight 0 :100")
refused dmsetup reload sg_lin --table "0 $sz ioband $nb sgdg2 0 4 none weight 0 :100" \
	"an ioband device of the same device group lies on this device"
dmsetup table sg_lin | grep -q linear || fail "the refused reload changed sg_lin: $(dmsetup table sg_lin)"
dmsetup remove sg_up2 && dmsetup remove sg_lin || fail "remove"
log "ioband on ioband in one device group refused, the upper or the lower table loaded second"

# ---- 2. two device groups under load --------------------------------------------
# The upper device group caps fio's cgroup at 1 MB/s (io_limit 4), so it
# holds fio's bios and its worker sends them down; the lower one caps its
# single group at 512 KB/s (io_limit 2), so the worker keeps sending
# 256 KiB bios into a lower group that is full (it holds at most 200 ms of
# its cap).
dmsetup reload sg_lo --table "0 $sz ioband $nb sglo 0 2 none range-bw 0 :0:512" &&
	dmsetup resume sg_lo || fail "reload sg_lo"
up=$(dm_create sg_up "0 $sz ioband $lo sgup 0 4 cgroup range-bw 0 :0:0 $W:0:1024")
echo 0 >$tr/tracing_on
echo >$tr/trace
echo 1 >$tr/events/ioband/enable
echo 1 >$tr/tracing_on
timeout 90 bash -c "echo \$\$ >$CG_ROOT/sg-w/cgroup.procs; exec fio --name=sg --filename=$up \
	--rw=write --bs=256k --size=2m --iodepth=16 --ioengine=libaio --direct=1 \
	--verify=crc32c --verify_fatal=1" >"$TESTDIR/fio.out" 2>&1
rc=$?
echo 0 >$tr/tracing_on
[ $rc -ne 124 ] || fail "fio on ioband over ioband did not end within 90 s"
[ $rc -eq 0 ] || fail "fio: $(tail -n 5 "$TESTDIR/fio.out")"
grep -q 'err= 0' "$TESTDIR/fio.out" || fail "fio errors: $(grep err= "$TESTDIR/fio.out")"
# the trace line's first field is the task, "comm-pid"
kw_held=$(awk '/ioband_hold: dg=sglo / && $1 ~ /^kworker/ { n++ } END { print n + 0 }' $tr/trace)
kw_wait=$(awk '/ioband_wait:/ && $1 ~ /^kworker/ { n++ } END { print n + 0 }' $tr/trace)
waits=$(awk '/ioband_wait:/ { n++ } END { print n + 0 }' $tr/trace)
log "two device groups stacked: 2 MiB written and verified; the lower group held $kw_held bios from the upper's worker, which waited for room $kw_wait times ($waits waits in all)"
report stack_groups_worker_held "$kw_held"
report stack_groups_worker_waits "$kw_wait"
[ "$kw_held" -gt 0 ] || fail "the lower group held no bio of the upper's worker: the load did not reach it"
[ "$kw_wait" -eq 0 ] || fail "the upper group's worker slept for room in the lower map() $kw_wait times: $(grep -m 2 'ioband_wait:' $tr/trace)"
