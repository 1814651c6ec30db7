#!/bin/bash
# Many CPUs (issue 16): 1, 2 and 4 submitters on a 4-vCPU guest, each a
# fio job (libaio, 4 KiB random direct reads, iodepth 16) pinned to a vCPU
# of its own (cpus_allowed) in a cgroup of its own, on a null_blk with a
# submission queue per CPU and no completion delay.  The targets, in
# turns, each with fresh fio jobs: dm-linear; ioband type none (one group
# for all); ioband type cgroup, a group per submitter, under weight and
# under weight-time (the policy ioband-setup sets by default).  ROUNDS
# rounds; the report takes each cell's median, since TCG is noisy.
#
# With the debug kernel (bench boot debug-smp4, CONFIG_LOCK_STAT) the
# script measures instead how often each bio takes the device group's
# lock: /proc/lock_stat's acquisitions of the class "&dg->lock", and its
# acq-bounces (acquisitions on another CPU than the one that last held
# it: the cache-line traffic the fast path is to remove), over a window
# at steady state, divided by the bios the dm device completed in it.
#
# Keys: smp.settings, smp.kernel, smp.CTL.N.K.iops (CTL linear, none,
# cgroup, time; N submitters; K round), smp.lock.CTL.N.{bios,acq,bounces,
# contentions,held} (debug; held: the bios ioband held in the window, from
# the status's delayed reads).
# bench-boot: smp4 debug
# timeout: 2400
. /tests/lib.sh
. /tests/t/bench.inc

WIN=$(bparam smp_window 5)
ROUNDS=$(bparam smp_rounds 3)
KERNEL=$(cat /etc/ioband-vm-kernel 2>/dev/null)
CPUS=$(nproc)
[ "$CPUS" -ge 4 ] || skip "$CPUS vCPUs, want 4 (bench boot smp4)"
LS=/proc/lock_stat
if [ "$KERNEL" = debug ]; then
	[ -r $LS ] || skip "no /proc/lock_stat (CONFIG_LOCK_STAT) on the debug kernel"
	ROUNDS=1
fi

nb=$(NULLB_ATTRS="submit_queues=$CPUS" nullb_create smp0 "$BENCH_SIZE_MB")
sz=$(blockdev --getsz "$nb")
ids=
for i in 0 1 2 3; do
	cg_create "s$i" >/dev/null
	ids+=" $(cg_id "s$i"):100"
done
lin=$(dm_create smp_lin "0 $sz linear $nb 0")
ion=$(dm_create smp_ion "0 $sz ioband $nb smpn $IOB_THROTTLE $IOB_LIMIT none weight $IOB_TOKEN :100")
iob=$(dm_create smp_iob "0 $sz ioband $nb smpc $IOB_THROTTLE $IOB_LIMIT cgroup weight $IOB_TOKEN :100$ids")
iot=$(dm_create smp_iot "0 $sz ioband $nb smpt $IOB_THROTTLE $IOB_LIMIT cgroup weight-time $IOB_TOKEN :100$ids")
# Each boot its own key: the debug boot's one round is not the IOPS rounds.
SKEY=smp.settings
[ "$KERNEL" != debug ] || SKEY=smp.lock.settings
report $SKEY "window=${WIN}s,rounds=$ROUNDS,io_throttle=$IOB_THROTTLE,io_limit=$IOB_LIMIT,token_base=$IOB_TOKEN"
report smp.kernel "$KERNEL"
report smp.cpus "$CPUS"

# The completed bios of dm device $1 (reads and writes, /sys/block/dm-N/stat).
dm_bios() {
	local s
	read -r -a s <"/sys/block/${1#/dev/}/stat"
	REPLY=$((s[0] + s[4]))
}
# LS_ACQ, LS_BOUNCES, LS_CONT: the device group lock's acquisitions,
# acq-bounces and contentions since lock_stat was last cleared (every
# device group's lock is one class; one device group does I/O at a time),
# and BIOS: the bios dm device $DEV completed since at_start.  The load
# still runs, so the two are read together: lock_stat copied between two
# reads of the bios, which count as their mean (parsing lock_stat in
# place would go on counting acquisitions for bios no longer counted).
lock_read() {
	local l b1
	dm_bios "$DEV"
	b1=$REPLY
	cat $LS >"$TESTDIR/lock_stat"
	dm_bios "$DEV"
	BIOS=$(((b1 + REPLY) / 2 - BIOS0))
	LS_ACQ=0 LS_BOUNCES=0 LS_CONT=0
	while read -r -a l; do
		[ "${l[0]}" = "&dg->lock:" ] || continue
		LS_CONT=${l[2]} LS_BOUNCES=${l[7]} LS_ACQ=${l[8]}
		return 0
	done <"$TESTDIR/lock_stat"
	return 1
}
# The reads ioband has held on dm device $1, summed over its groups.
held_reads() {
	REPLY=$(dmsetup status "$1" | awk '{ for (i = 5; i + 6 <= NF; i += 7) n += $(i + 2) } END { print n + 0 }')
}
at_start() {
	[ "$KERNEL" = debug ] || return 0
	held_reads "$DEV"
	HELD0=$REPLY
	echo 0 >$LS
	dm_bios "$DEV"
	BIOS0=$REPLY
}

[ "$KERNEL" != debug ] || echo 1 >/proc/sys/kernel/lock_stat ||
	fail "kernel.lock_stat cannot be enabled"
for k in $(seq 1 "$ROUNDS"); do
	for n in 1 2 4; do
		for ctl in linear none cgroup time; do
			[ "$KERNEL" = debug ] && [ $ctl = linear ] && continue
			case $ctl in
			linear) DEV=$lin ;;
			none) DEV=$ion ;;
			cgroup) DEV=$iob ;;
			time) DEV=$iot ;;
			esac
			cgs=()
			for i in $(seq 0 $((n - 1))); do
				LOAD_ENGINE=libaio load_start "s$i" "$DEV" randread 4k 1 \
					--iodepth=16 --cpus_allowed="$i"
				cgs+=("s$i")
			done
			W_AT_START=at_start window "$WIN" "$DEV" "${cgs[@]}"
			if [ "$KERNEL" = debug ]; then
				lock_read || fail "no &dg->lock in $LS: $(grep -m 3 'dg' $LS)"
				bios=$BIOS
				held_reads "$DEV"
				held=$((REPLY - HELD0))
			fi
			load_stop "${cgs[@]}"
			if [ "$KERNEL" = debug ]; then
				[ "$bios" -gt 0 ] || fail "$ctl, $n submitters: no bio completed"
				report "smp.lock.$ctl.$n.bios" "$bios"
				report "smp.lock.$ctl.$n.acq" "$LS_ACQ"
				report "smp.lock.$ctl.$n.bounces" "$LS_BOUNCES"
				report "smp.lock.$ctl.$n.contentions" "$LS_CONT"
				report "smp.lock.$ctl.$n.held" "$held"
				log "$ctl, $n submitters: $bios bios, the lock taken $LS_ACQ times ($((LS_ACQ * 100 / bios)) per 100 bios), $LS_BOUNCES from another CPU, $LS_CONT contended"
			else
				report "smp.$ctl.$n.$k.iops" "$W_IOPS"
				log "$ctl, $n submitters, round $k: $W_IOPS IOPS"
			fi
		done
	done
done
[ "$KERNEL" != debug ] || echo 0 >/proc/sys/kernel/lock_stat
