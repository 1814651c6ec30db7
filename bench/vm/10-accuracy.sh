#!/bin/bash
# Scenario 1, accuracy: 3 cgroups x 8 psync jobs of 4 KiB random direct I/O
# on a null_blk at 100 us and queue depth 4, weights 400:200:100, for reads,
# writes, and reads in a and b with writes in c.  In one boot: ioband (type
# cgroup) alternating with dm-linear as the live table of one dm device
# under one running load; once more with io_throttle 4 for contrast;
# then the raw null_blk with no controller, with BFQ (io.bfq.weight) and
# with iocost (io.weight), switched under one running load.  For reads also
# the kernel's controllers with the load going through the dm-linear.
# timeout: 1200
. /tests/lib.sh
. /tests/t/bench.inc

WIN=$(bparam window 10)
PAIRS=$(bparam pairs 3)
MIXES=$(bparam mixes "read,write,mixed")
W_A=400 W_B=200 W_C=100

nb=$(slow_nullb acc0)
nbn=$(basename "$nb")
sz=$(blockdev --getsz "$nb")
mm=$(majmin "$nb")
for g in a b c; do cg_create "$g" >/dev/null; done
ia=$(cg_id a) ib=$(cg_id b) ic=$(cg_id c)
T_LIN="0 $sz linear $nb 0"
T_IOB="0 $sz ioband $nb acc $IOB_THROTTLE $IOB_LIMIT cgroup weight $IOB_TOKEN :100 $ia:$W_A $ib:$W_B $ic:$W_C"
# for contrast: io_throttle 4 lets a group run past its window while fewer
# than 4 bios are in flight
T_THR="0 $sz ioband $nb acc 4 128 cgroup weight $IOB_TOKEN :100 $ia:$W_A $ib:$W_B $ic:$W_C"
dev=$(dm_create acc "$T_IOB")
report acc.table "$(dmsetup table acc | cut -d' ' -f5- | tr ' ' '_')"
dm_swap acc "$T_THR"
report acc.table_throttle "$(dmsetup table acc | cut -d' ' -f5- | tr ' ' '_')"
dm_swap acc "$T_LIN"
devmm=$(majmin "$dev")
report acc.settings "window=${WIN}s,io_throttle=$IOB_THROTTLE,io_limit=$IOB_LIMIT,token_base=$IOB_TOKEN"

sched() { echo "$1" >"/sys/block/$nbn/queue/scheduler" || fail "scheduler $1"; }
iocost() { # majmin 0|1
	echo "$1 enable=$2" >"$CG_ROOT/io.cost.qos" || fail "io.cost.qos $1 enable=$2"
}
for g in a b c; do
	case $g in a) w=$W_A ;; b) w=$W_B ;; c) w=$W_C ;; esac
	echo "$w" >"$CG_ROOT/$g/io.bfq.weight" || fail "io.bfq.weight"
	echo "default $w" >"$CG_ROOT/$g/io.weight" || fail "io.weight"
done

start() { # mix dev
	local g
	for g in a b c; do
		if [ "$1" = write ] || { [ "$1" = mixed ] && [ $g = c ]; }; then
			load_start "$g" "$2" randwrite 4k 8
		else
			load_start "$g" "$2" randread 4k 8
		fi
	done
}

# measure MIX CTL K DEV [ioband]: one window, reported as acc.MIX.CTL.K.*
measure() {
	local mix=$1 ctl=$2 k=$3 dev=$4 iob=${5:-} g i p sh=
	[ -n "$iob" ] && dmsetup message acc 0 reset
	window "$WIN" "$dev" a b c
	p=acc.$mix.$ctl.$k
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
	if [ -n "$iob" ]; then
		ioband_held acc "$ia" "$ib" "$ic"
		report "$p.held" "${REPLY// //}"
	fi
	log "$mix $ctl #$k: $sh %, $W_IOPS IOPS${iob:+, held ${REPLY// / / } %}"
}

for mix in ${MIXES//,/ }; do
	# ioband and dm-linear, swapped under one load on the dm device
	sched none
	start "$mix" "$dev"
	for k in $(seq 1 "$PAIRS"); do
		dm_swap acc "$T_LIN"
		measure "$mix" linear "$k" "$dev"
		dm_swap acc "$T_IOB"
		measure "$mix" ioband "$k" "$dev" iob
	done
	dm_swap acc "$T_THR"
	measure "$mix" ioband-throttle 1 "$dev" iob
	dm_swap acc "$T_LIN"
	if [ "$mix" = read ]; then
		# The kernel's controllers and a dm device.  A dm device has no
		# I/O scheduler: writing bfq to its scheduler file changes
		# nothing.  iocost may accept enable=1 on it, but its hooks
		# run only for request-based queues.  Configured on the disk
		# below, they see the bios dm-linear passes down with their
		# cgroup.
		echo bfq >"/sys/block/$(basename "$dev")/queue/scheduler" 2>/dev/null
		report acc.dm.scheduler "$(tr ' ' '_' <"/sys/block/$(basename "$dev")/queue/scheduler")"
		if echo "$devmm enable=1" >"$CG_ROOT/io.cost.qos" 2>/dev/null; then
			report acc.dm.iocost_enable accepted
			measure read iocost-on-dm 1 "$dev"
			echo "$devmm enable=0" >"$CG_ROOT/io.cost.qos"
		else
			report acc.dm.iocost_enable refused
		fi
		sched bfq
		measure read bfq-below-dm 1 "$dev"
		sched none
		iocost "$mm" 1
		measure read iocost-below-dm 1 "$dev"
		iocost "$mm" 0
	fi
	load_stop a b c

	# the raw null_blk: no controller, BFQ, iocost, under one load
	start "$mix" "$nb"
	measure "$mix" none 1 "$nb"
	sched bfq
	measure "$mix" bfq 1 "$nb"
	sched none
	iocost "$mm" 1
	measure "$mix" iocost 1 "$nb"
	iocost "$mm" 0
	load_stop a b c
done
