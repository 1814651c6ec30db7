#!/bin/bash
# No CPU spins for the device group's lock in a completion (issue 16;
# section 9 of the design essay in drivers/md/dm-ioband.c): four libaio
# readers, one pinned to each vCPU, each in a cgroup of its own group,
# share io_limit 8 on a null_blk whose completions come from a timer (hard
# interrupts) after 50 us, so most reads are held and every completion
# releases one.  /proc/lock_stat (CONFIG_LOCK_STAT: the debug kernel only)
# names the places where a CPU waited for a contended "&dg->lock": none
# may be ioband_end_io() or the timer's ioband_wake(), while map() and the
# workers may wait (they run in process context).  The status must count
# every read once, and many must have been held.
# kernel: debug
# smp: 4
# timeout: 600
. /tests/lib.sh

LS=/proc/lock_stat
[ -w $LS ] || skip "no /proc/lock_stat (CONFIG_LOCK_STAT)"
CPUS=$(nproc)
[ "$CPUS" -ge 4 ] || skip "$CPUS vCPUs, want 4"
PER=3000
nb=$(NULLB_ATTRS="submit_queues=$CPUS" nullb_create ns0 256 50000)
sz=$(blockdev --getsz "$nb")
ids=
for i in 0 1 2 3; do
	p=$(cg_create "ns-$i")
	ids+=" $(stat -c %i "$p"):100"
done
dev=$(dm_create ns "0 $sz ioband $nb nsdg 0 8 cgroup weight 0 :100$ids")

echo 1 >/proc/sys/kernel/lock_stat || fail "kernel.lock_stat cannot be enabled"
on_exit 'echo 0 >/proc/sys/kernel/lock_stat'
echo 0 >$LS
fio_pinned_readers 4 $PER "$dev" ns
echo 0 >/proc/sys/kernel/lock_stat
cp $LS "$TESTDIR/lock_stat"

# The class's line, then its contention points (where a CPU waited: the
# first block of "[<addr>] function+off" lines) until the next class.
read -r acq cont irq points <<<"$(awk '
	$1 == "&dg->lock:" { on = 1; cont = $3; acq = $9; next }
	on && /^[ \t]*$/ { exit }
	on && /^[ \t]*-+$/ { block++; next }
	on && block == 1 {
		for (i = 1; i < NF; i++) if ($i ~ /^\[</) break
		if (i == NF) next
		fn = $(i + 1); sub(/\+.*/, "", fn)
		pts = pts fn "=" $2 ","
		if (fn == "ioband_end_io" || fn == "ioband_wake") irq += $2
	}
	END { print acq + 0, cont + 0, irq + 0, (pts == "" ? "none" : pts) }' "$TESTDIR/lock_stat")"
held=$(dmsetup status ns | awk '{ for (i = 5; i + 6 <= NF; i += 7) n += $(i + 2) } END { print n + 0 }')
reads=$(dmsetup status ns | awk '{ for (i = 5; i + 6 <= NF; i += 7) n += $(i + 1) } END { print n + 0 }')
log "$reads reads, $held held; the lock taken $acq times, $cont contended; where CPUs waited: $points; in a completion or the timer: $irq"
report irq_nospin_contended "$cont"
report irq_nospin_in_irq "$irq"
assert_eq "$reads" $((4 * PER)) "reads in the status"
[ "$held" -ge $((PER)) ] || fail "only $held of $((4 * PER)) reads held: too few to judge"
[ "$cont" -gt 0 ] || skip "the lock was never contended ($acq acquisitions): nothing to judge"
[ "$irq" = 0 ] ||
	fail "CPUs waited for the device group's lock $irq times in a completion or the timer ($points)"
