#!/bin/bash
# How often a bio takes the device group's lock while no group holds
# bios (issue 16's goal: at most once per 32 bios; section 14 of the
# design essay in drivers/md/dm-ioband.c), counted by /proc/lock_stat
# (CONFIG_LOCK_STAT: the debug kernel only) as the acquisitions of the
# class "&dg->lock" over a fixed number of reads:
#  1. A lone psync reader on one vCPU, in an attached cgroup's group,
#     under weight: one lease of 48 bios per acquisition, the bio that
#     took it completing as one of the lease's.  (On one vCPU because
#     under weight-time a stream that moves to another CPU pays a random
#     bio's mean there first, which shortens that CPU's lease.)
#  2. The same under weight-time, whose bio that takes a lease is timed
#     through the lock on one lease in 64.
#  3. Four libaio readers, 16 deep, one pinned to each vCPU, in one group
#     (type none, io_limit 128): a completion gives its slot back to its
#     CPU's lease, so that four CPUs' leases fit io_limit and still last
#     48 bios each.
# Each part also checks that the status counts every read once.
# kernel: debug
# smp: 4
# timeout: 600
. /tests/lib.sh

LS=/proc/lock_stat
[ -w $LS ] || skip "no /proc/lock_stat (CONFIG_LOCK_STAT)"
CPUS=$(nproc)
[ "$CPUS" -ge 4 ] || skip "$CPUS vCPUs, want 4"

nb=$(NULLB_ATTRS="submit_queues=$CPUS" nullb_create ll0 256)
sz=$(blockdev --getsz "$nb")
a=$(cg_create ll-a)
ida=$(stat -c %i "$a")

# REPLY: the acquisitions of the device group's lock since lock_stat was
# cleared (every device group's lock is one class; only one exists here).
lock_acq() {
	local l
	while read -r -a l; do
		if [ "${l[0]}" = "&dg->lock:" ]; then
			REPLY=${l[8]}
			return 0
		fi
	done <$LS
	REPLY=0
}
# judge WHAT BIOS: the lock taken at most once per 32 of BIOS
judge() {
	lock_acq
	log "$1: $2 reads, the lock taken $REPLY times ($((REPLY * 1000 / $2)) per 1000 reads)"
	report "lease_lock_${1// /_}_per_1000" $((REPLY * 1000 / $2))
	[ $((REPLY * 32)) -le "$2" ] ||
		fail "$1: the device group's lock taken $REPLY times for $2 reads, want at most one per 32 ($(($2 / 32)))"
}

echo 1 >/proc/sys/kernel/lock_stat || fail "kernel.lock_stat cannot be enabled"
on_exit 'echo 0 >/proc/sys/kernel/lock_stat'

# ---- 1 and 2: a lone reader -------------------------------------------------
N=16000
for policy in weight weight-time; do
	dev=$(dm_create "ll-$policy" "0 $sz ioband $nb lldg-$policy 0 0 cgroup $policy 0 :100 $ida:200")
	echo 0 >$LS
	cg_run ll-a taskset -c 1 dd if="$dev" of=/dev/null bs=4k count=$N iflag=direct status=none ||
		fail "dd in cgroup a under $policy"
	judge "lone reader, $policy" $N
	assert_eq "$(dm_group_reads "ll-$policy" "$ida")" $N "$policy: cgroup a's reads in the status"
	dmsetup remove "ll-$policy" || fail "remove ll-$policy"
done

# ---- 3: four CPUs ---------------------------------------------------------------
PER=4000
dev=$(dm_create ll-four "0 $sz ioband $nb lldg-four 0 128 none weight 0 :100")
echo 0 >$LS
fio_pinned_readers 4 $PER "$dev"
judge "four CPUs" $((4 * PER))
assert_eq "$(dmsetup status ll-four | awk '{ print $6 }')" $((4 * PER)) "four CPUs: reads in the status"
dmsetup remove ll-four || fail "remove ll-four"
