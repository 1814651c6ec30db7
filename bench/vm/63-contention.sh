#!/bin/bash
# Scenario 5, latency under contention: the completion latency (p50, p99)
# of one psync job of 4 KiB random direct reads in cgroup h (weight 800)
# while cgroups l1 and l2 (weight 100 each, 8 psync jobs of random reads
# each) keep the slow null_blk (100 us, queue depth 4) saturated.  On the
# raw null_blk: no controller, BFQ (io.bfq.weight, scheduler bfq) and
# iocost (io.weight, io.cost.qos enable=1); on a dm device over it, under
# a second load: dm-linear, then ioband weight with the suite's io_limit
# and with io_limit 4 (the device's depth).  A fresh fio for h each run;
# the low groups' load runs throughout.
# timeout: 900
. /tests/lib.sh
. /tests/t/bench.inc
. /tests/t/range.inc

WIN=$(bparam window 10)
W_H=800 W_L=100

nb=$(slow_nullb con0)
nbn=$(basename "$nb")
sz=$(blockdev --getsz "$nb")
mm=$(majmin "$nb")
for g in h l1 l2; do cg_create "$g" >/dev/null; done
ih=$(cg_id h) i1=$(cg_id l1) i2=$(cg_id l2)
for g in h l1 l2; do
	w=$W_L
	[ $g = h ] && w=$W_H
	echo "$w" >"$CG_ROOT/$g/io.bfq.weight" || fail "io.bfq.weight"
	echo "default $w" >"$CG_ROOT/$g/io.weight" || fail "io.weight"
done
T_LIN="0 $sz linear $nb 0"
t_iob() { # io_limit
	echo "0 $sz ioband $nb con $IOB_THROTTLE $1 cgroup weight $IOB_TOKEN :100 $ih:$W_H $i1:$W_L $i2:$W_L"
}
report con.settings "window=${WIN}s,io_throttle=$IOB_THROTTLE,io_limit=$IOB_LIMIT,token_base=$IOB_TOKEN"
report con.weights "$W_H/$W_L/$W_L"

# measure CTL DEV: h's latency while the low groups run; their IOPS too
measure() {
	local out=
	# the low groups' load is running (and counted) before h starts
	window 1 "$2" l1 l2
	fio_once h "$2" "$WIN" randread
	for x in p50 p99 max iops; do
		case $x in
		p50) f_pct 50 ;;
		p99) f_pct 99 ;;
		max) f_max ;;
		iops) f_iops ;;
		esac
		report "con.$1.$x" "$REPLY"
		out+=" $x $REPLY"
	done
	report "con.$1.low_iops" "$W_IOPS"
	log "$1: h$out; l1+l2 $W_IOPS IOPS before"
}

for g in l1 l2; do load_start "$g" "$nb" randread 4k 8; done
measure none "$nb"
echo bfq >"/sys/block/$nbn/queue/scheduler" || fail "scheduler bfq"
measure bfq "$nb"
echo none >"/sys/block/$nbn/queue/scheduler" || fail "scheduler none"
echo "$mm enable=1" >"$CG_ROOT/io.cost.qos" || fail "io.cost.qos enable=1"
measure iocost "$nb"
echo "$mm enable=0" >"$CG_ROOT/io.cost.qos" || fail "io.cost.qos enable=0"
load_stop l1 l2

dev=$(dm_create con "$T_LIN")
for g in l1 l2; do load_start "$g" "$dev" randread 4k 8; done
measure linear "$dev"
dm_swap con "$(t_iob "$IOB_LIMIT")"
measure ioband "$dev"
dm_swap con "$(t_iob 4)"
measure ioband-limit4 "$dev"
load_stop l1 l2
