#!/bin/bash
# Scenario 2, accuracy (seed 001): 3 groups x 8 psync jobs of 4 KiB random
# direct I/O on a null_blk completing after bench.acc_nsec (4 ms) with
# queue depth bench.acc_qd (4), for reads, writes, and reads in a and b
# with writes in c (the lowest group), with weights 4:2:1 and 7:4:1
# (bench.weights).  Each load runs in cgroups a, b and c, which is also
# where its I/O is counted (io.stat).  The device must be what is shared:
# at 100 us the 24 jobs of a TCG guest reached about 3000 IOPS of the
# device's 40000, so the guest's CPU was the limit and the writes' shares
# missed by up to 8 points; at 4 ms the device does 1000 IOPS.  Each
# window reports the device's use: the mean number of requests in flight
# on it (the growth of time_in_queue in its stat file over the window's
# time) over its queue depth, 100 % when every slot is always busy.  Under
# TCG its timer fires late when the host is busy, so the device does
# fewer IOPS than 1000, but is still what limits them.  (BFQ holds
# requests in its own queue after they are counted: its figure may pass
# 100 %.)
#
#   cg:   one dm device on the null_blk; its live table alternates between
#         dm-linear and ioband of type cgroup (ids: the cgroups' inodes)
#         under one running load, bench.pairs times; with the first
#         weights one more run with io_throttle 4, for contrast.  Then the
#         raw null_blk under a second load: no controller (none), BFQ
#         (io.bfq.weight) and iocost (io.weight).  With the first weights
#         and reads, also the kernel's controllers and a dm device.
#   part: three partitions (dm-linear slices) of the null_blk, each behind
#         an ioband device of type none in one device group (the weights
#         in the tables), against dm-linear on the same slices, swapped
#         live under one load.
#
# Every window is sampled every bench.sample seconds for the plots
# of share over time (from io.stat: no fork, the same counter as the
# shares; `dmsetup status` would cost a fork per sample, up to 2 s under
# TCG while the loads run).
#
# Keys: acc.W.MODE.MIX.CTL.K.{ios,share}.{a,b,c}, .secs, .iops, .use,
# .held, .series; W is the weights as 421 or 741, MODE cg or part.
# timeout: 2400
. /tests/lib.sh
. /tests/t/bench.inc

WIN=$(bparam window 8)
PAIRS=$(bparam pairs 1)
MIXES=$(bparam mixes "read,write,mixed")
WEIGHTS=$(bparam weights "4:2:1,7:4:1")
MODES=$(bparam acc_modes "cg,part")
W_SAMPLE=$(bparam sample 0.5)

ACC_NSEC=$(bparam acc_nsec 4000000)
ACC_QD=$(bparam acc_qd 4)
nb=$(nullb_create acc0 "$BENCH_SIZE_MB" "$ACC_NSEC" "$ACC_QD")
nbn=$(basename "$nb")
sz=$(blockdev --getsz "$nb")
mm=$(majmin "$nb")
for g in a b c; do cg_create "$g" >/dev/null; done
ia=$(cg_id a) ib=$(cg_id b) ic=$(cg_id c)
T_LIN="0 $sz linear $nb 0"
dev=$(dm_create acc "$T_LIN")
devmm=$(majmin "$dev")
# the partitions: thirds of the null_blk, each with a dm device on top
third=$((sz / 3))
PDEV=()
for i in 0 1 2; do
	PART[$i]=$(dm_create "accp$i" "0 $third linear $nb $((i * third))")
	PDEV[$i]=$(dm_create "accq$i" "0 $third linear ${PART[$i]} 0")
done
report acc.settings "window=${WIN}s,pairs=$PAIRS,sample=${W_SAMPLE}s,io_throttle=$IOB_THROTTLE,io_limit=$IOB_LIMIT,token_base=$IOB_TOKEN"
report acc.weights "$WEIGHTS"
report acc.device "completion_nsec=$ACC_NSEC,queue_depth=$ACC_QD"
report acc.modes "$MODES"
report acc.mixes "$MIXES"

sched() { echo "$1" >"/sys/block/$nbn/queue/scheduler" || fail "scheduler $1"; }
iocost() { # majmin 0|1
	echo "$1 enable=$2" >"$CG_ROOT/io.cost.qos" || fail "io.cost.qos $1 enable=$2"
}

start() { # mix dev-a dev-b dev-c
	local mix=$1 g i=0
	shift
	local -a d=("$@")
	for g in a b c; do
		if [ "$mix" = write ] || { [ "$mix" = mixed ] && [ $g = c ]; }; then
			load_start "$g" "${d[i]}" randwrite 4k 8
		else
			load_start "$g" "${d[i]}" randread 4k 8
		fi
		i=$((i + 1))
	done
}

# QTIME: the null_blk's time_in_queue (ms), the 11th field of its stat
acc_queue_time() {
	local s
	read -r -a s <"/sys/block/$nbn/stat"
	QTIME=${s[10]}
}

# measure PREFIX DEVS [IOBAND-DMNAME ID...]: one window, reported as
# PREFIX.*, sampled for the plots; with an ioband device, its statistics
# are reset first and its held bios reported
measure() {
	local p=$1 devs=$2 dmn=${3:-} g i sh= held= use q0
	shift 3 2>/dev/null || shift $#
	local -a ids=("$@")
	if [ -n "$dmn" ]; then
		for i in ${dmn//,/ }; do dmsetup message "$i" 0 reset || fail "reset $i"; done
	fi
	W_AT_START=acc_queue_time window "$WIN" "$devs" a b c
	q0=$QTIME
	acc_queue_time
	# ms of requests in flight per ms of window, over the queue depth
	pct $((QTIME - q0)) $((${W_SECS/./} * ACC_QD))
	use=$REPLY
	i=0
	for g in a b c; do
		pct "${W_IOS[$i]}" "$W_TOTAL"
		report "$p.ios.$g" "${W_IOS[$i]}"
		report "$p.share.$g" "$REPLY"
		sh+="${sh:+ / }$REPLY"
		i=$((i + 1))
	done
	report "$p.secs" "$W_SECS"
	report "$p.iops" "$W_IOPS"
	report "$p.use" "$use"
	report "$p.series" "$W_SERIES"
	if [ -n "$dmn" ]; then
		if [[ $dmn == *,* ]]; then
			# one default group (-1) per device
			i=0
			for g in ${dmn//,/ }; do
				ioband_held "$g" -1
				held+="${held:+/}$REPLY"
			done
		else
			ioband_held "$dmn" "${ids[@]}"
			held=${REPLY// //}
		fi
		report "$p.held" "$held"
	fi
	log "$p: $sh %, $W_IOPS IOPS (device use $use %)${dmn:+, held $held %}"
}

first=1
for wts in ${WEIGHTS//,/ }; do
	IFS=: read -r wa wb wc <<<"$wts"
	W=${wts//:/}
	WA=$((wa * 100)) WB=$((wb * 100)) WC=$((wc * 100))
	T_IOB="0 $sz ioband $nb acc $IOB_THROTTLE $IOB_LIMIT cgroup weight $IOB_TOKEN :100 $ia:$WA $ib:$WB $ic:$WC"
	# for contrast: io_throttle 4 lets a group run past its window while
	# fewer than 4 bios are in flight
	T_THR="0 $sz ioband $nb acc 4 128 cgroup weight $IOB_TOKEN :100 $ia:$WA $ib:$WB $ic:$WC"
	if [ $first = 1 ]; then
		dm_swap acc "$T_IOB"
		report acc.table "$(dmsetup table acc | cut -d' ' -f5- | tr ' ' '_')"
		dm_swap acc "$T_LIN"
	fi
	for g in a b c; do
		case $g in a) w=$WA ;; b) w=$WB ;; c) w=$WC ;; esac
		# io.bfq.weight takes 1-1000
		echo "$w" >"$CG_ROOT/$g/io.bfq.weight" || fail "io.bfq.weight $w"
		echo "default $w" >"$CG_ROOT/$g/io.weight" || fail "io.weight $w"
	done
	for mix in ${MIXES//,/ }; do
	for mode in ${MODES//,/ }; do
		P=acc.$W.$mode.$mix
		if [ "$mode" = part ]; then
			for i in 0 1 2; do dm_swap "accq$i" "0 $third linear ${PART[$i]} 0"; done
			pdevs="${PDEV[0]},${PDEV[1]},${PDEV[2]}"
			start "$mix" "${PDEV[@]}"
			for k in $(seq 1 "$PAIRS"); do
				for i in 0 1 2; do dm_swap "accq$i" "0 $third linear ${PART[$i]} 0"; done
				measure "$P.linear.$k" "$pdevs"
				i=0
				for w in $WA $WB $WC; do
					dm_swap "accq$i" "0 $third ioband ${PART[$i]} accpg $IOB_THROTTLE $IOB_LIMIT none weight $IOB_TOKEN :$w"
					i=$((i + 1))
				done
				[ $first = 1 ] && [ "$k" = 1 ] &&
					report acc.part_table "$(dmsetup table accq0 | cut -d' ' -f5- | tr ' ' '_')"
				measure "$P.ioband.$k" "$pdevs" accq0,accq1,accq2
			done
			for i in 0 1 2; do dm_swap "accq$i" "0 $third linear ${PART[$i]} 0"; done
			load_stop a b c
			continue
		fi

		# ioband and dm-linear, swapped under one load on the dm device
		sched none
		start "$mix" "$dev" "$dev" "$dev"
		for k in $(seq 1 "$PAIRS"); do
			dm_swap acc "$T_LIN"
			measure "$P.linear.$k" "$dev"
			dm_swap acc "$T_IOB"
			measure "$P.ioband.$k" "$dev" acc "$ia" "$ib" "$ic"
		done
		if [ $first = 1 ]; then
			dm_swap acc "$T_THR"
			measure "$P.ioband-throttle.1" "$dev" acc "$ia" "$ib" "$ic"
		fi
		dm_swap acc "$T_LIN"
		if [ $first = 1 ] && [ "$mix" = read ]; then
			# The kernel's controllers and a dm device.  A dm device
			# has no I/O scheduler: writing bfq to its scheduler file
			# changes nothing.  iocost may accept enable=1 on it,
			# but its hooks run only for request-based queues.
			# Configured on the disk below, they see the bios
			# dm-linear passes down with their cgroup.
			echo bfq >"/sys/block/$(basename "$dev")/queue/scheduler" 2>/dev/null
			report acc.dm.scheduler "$(tr ' ' '_' <"/sys/block/$(basename "$dev")/queue/scheduler")"
			if echo "$devmm enable=1" >"$CG_ROOT/io.cost.qos" 2>/dev/null; then
				report acc.dm.iocost_enable accepted
				measure "$P.iocost-on-dm.1" "$dev"
				echo "$devmm enable=0" >"$CG_ROOT/io.cost.qos"
			else
				report acc.dm.iocost_enable refused
			fi
			sched bfq
			measure "$P.bfq-below-dm.1" "$dev"
			sched none
			iocost "$mm" 1
			measure "$P.iocost-below-dm.1" "$dev"
			iocost "$mm" 0
		fi
		load_stop a b c

		# the raw null_blk: no controller, BFQ, iocost, under one load
		start "$mix" "$nb" "$nb" "$nb"
		# none does not depend on the weights: measured once per mix
		[ $first = 1 ] && measure "$P.none.1" "$nb"
		sched bfq
		measure "$P.bfq.1" "$nb"
		sched none
		iocost "$mm" 1
		measure "$P.iocost.1" "$nb"
		iocost "$mm" 0
		load_stop a b c
	done
	done
	first=0
done
