#!/bin/bash
# Interrupts are off for no longer at 10,000 groups than at 64: the time
# dg->lock is held does not grow with the number of groups (see "9.
# Locking" in dm-ioband.c).  In each phase, a table of N attached groups
# loaded and resumed, its status and table read, its counters reset, a
# suspend and resume and its removal, with reads going through it all
# along, two things are measured:
#  - lock_stat's longest hold of dg->lock (its holdtime-max), which must
#    be at most 1.5 times the one at 64 groups (two batches of
#    IOBAND_LOCK_BATCH).  Writing the status of every group under the
#    lock made it 10,000 groups' worth.
#  - the irqsoff tracer's longest section with interrupts off anywhere.
#    On this kernel that is often KASAN's quarantine freeing a batch
#    (1.0-1.8 ms whatever the groups), which hides ioband's sections; so
#    the bound holds only where the longest section at 10,000 groups is
#    ioband's (an ioband function turned interrupts off or on, or is in
#    its stack): at most 1.5 times the longest at 64.  Freeing the groups' xarray with xa_destroy() after
#    removal made it 7.3 ms.
# Under -icount guest time counts instructions, so the figures repeat and
# do not depend on the host; 1 ns is one instruction.
# kernel: debug
# icount: yes
# smp: 1
# long: yes
# timeout: 1800
. /tests/lib.sh

T=$TRACEFS
[ -e $T/trace ] || mount -t tracefs nodev $T 2>/dev/null
grep -qw irqsoff $T/available_tracers || skip "no irqsoff tracer in this kernel"
LS=/proc/lock_stat
[ -w $LS ] || skip "no /proc/lock_stat (CONFIG_LOCK_STAT)"

nb=$(nullb_create irq0 64)
sz=$(blockdev --getsz "$nb")

# While "$@" runs: the longest section with interrupts off, in us (the
# tracer's unit), the functions that turned interrupts off and on again,
# whether it names an ioband function (where it began or ended, or in
# its stack: 1 or 0), and dg->lock's longest hold in us (lock_stat's
# holdtime-max, rounded up).
irqsoff_max() {
	echo 0 >$T/tracing_on
	[ ! -e $T/options/function-trace ] || echo 0 >$T/options/function-trace
	echo irqsoff >$T/current_tracer
	echo 0 >$T/tracing_max_latency
	echo 0 >$LS
	echo 1 >/proc/sys/kernel/lock_stat
	echo 1 >$T/tracing_on
	"$@" >&2
	echo 0 >$T/tracing_on
	echo 0 >/proc/sys/kernel/lock_stat
	awk '/=> started at:/ { s = $NF } /=> ended at:/ { e = $NF }
	     (!/^#/ || /=> (started|ended) at:/) && /ioband/ { ours = 1 }
	     END { printf "%s %s %d\n", s ? s : "?", e ? e : "?", ours }' $T/trace >"$TESTDIR/where"
	awk '$1 == "&dg->lock:" { h = $11; n = $9 }
	     END { printf "%d\n", n ? int(h) + (h > int(h)) : -1 }' $LS >"$TESTDIR/hold"
	echo "$(cat $T/tracing_max_latency) $(cat "$TESTDIR/where") $(cat "$TESTDIR/hold")"
	echo nop >$T/current_tracer
}
on_exit "echo 0 >/proc/sys/kernel/lock_stat"
on_exit "echo nop > $T/current_tracer"
on_exit "dmsetup remove irqd 2>/dev/null"

# One phase: N groups (uids 1..N, weights 100..) on the null_blk, with a
# root reader in the default group (its I/O completes in interrupts).
phase() {
	local n=$1
	dmsetup create --notable irqd || fail "dmsetup create"
	awk -v n="$n" -v head="irqd 0 $sz ioband $nb irqdg 0 0 user weight 0 :100" 'BEGIN {
		printf "%s", head
		for (i = 1; i <= n; i++)
			printf " %d:%d", i, 100 + i % 50
		print ""
	}' | dmmsg --load >"$TESTDIR/load.out" 2>&1 ||
		fail "table of $n groups refused: $(tail -n 2 "$TESTDIR/load.out")"
	log "$n groups: table loaded"
	dmsetup resume irqd || fail "resume with $n groups"
	dmsetup mknodes irqd
	fio --name=r --filename=/dev/mapper/irqd --rw=randread --bs=4k \
		--direct=1 --ioengine=psync --time_based --runtime=600 \
		>"$TESTDIR/fio.out" 2>&1 &
	local fio=$!
	# reading before the phase goes on (bounded by the test's timeout)
	until dmsetup status irqd | awk '{ exit !($6 > 100) }'; do
		alive $fio || fail "fio ended: $(tail -n 3 "$TESTDIR/fio.out")"
		sleep 0.1
	done
	local groups
	groups=$(dmsetup status irqd | awk '{ print (NF - 4) / 7 }')
	assert_eq "$groups" "$((n + 1))" "groups in the status with $n attached"
	log "$n groups: resumed, reading"
	dmsetup table irqd >/dev/null || fail "table"
	dmsetup message irqd 0 reset || fail "reset"
	dmsetup suspend irqd || fail "suspend"
	dmsetup resume irqd || fail "resume"
	dmsetup status irqd >/dev/null || fail "status"
	kill $fio
	wait $fio 2>/dev/null
	dmsetup remove irqd || fail "remove with $n groups"
	log "$n groups: removed"
}

declare -A lat where ours hold
for n in 1 64 10000; do
	set -- $(irqsoff_max phase $n)
	lat[$n]=$1 where[$n]="from $2 to $3" ours[$n]=$4 hold[$n]=$5
	whose=$([ "$4" = 1 ] && echo "ioband's" || echo "not ioband's")
	log "$n groups: interrupts off for at most $1 us (${where[$n]}, $whose); dg->lock held for at most ${hold[$n]} us"
	report "irqsoff_max_us_$n" "$1"
	report "dglock_hold_max_us_$n" "${hold[$n]}"
	[ "${hold[$n]}" -gt 0 ] || fail "lock_stat saw no hold of dg->lock at $n groups"
done
[ "${lat[64]}" -gt 0 ] || fail "the tracer measured nothing at 64 groups"
[ $((hold[10000] * 2)) -le $((hold[64] * 3)) ] ||
	fail "dg->lock held for ${hold[10000]} us at 10,000 groups, ${hold[64]} us at 64: want at most 1.5 times"
[ "${ours[10000]}" != 1 ] || [ $((lat[10000] * 2)) -le $((lat[64] * 3)) ] ||
	fail "interrupts off for ${lat[10000]} us in ioband at 10,000 groups (${where[10000]}), ${lat[64]} us at 64: want at most 1.5 times"
