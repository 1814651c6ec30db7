#!/bin/bash
# Overhead of caps that do not bind (issue 4): one fio job (psync, 4 KiB
# random direct reads) in one cgroup on a null_blk without completion
# delay, no contention: dm-linear; ioband range-bw with the job's cgroup
# and the default group capped at 100 GB/s; dm-linear with blk-throttle's
# io.max rbps at 100 GB/s for the job's cgroup on the dm device.  In
# turns, each with a fresh fio.  Meant for tests/vm/run --icount (see
# 30-overhead.sh): IOPS are then CPU cost and repeat.
# bench-boot: icount
# timeout: 900
. /tests/lib.sh
. /tests/t/bench.inc
. /tests/t/range.inc

WIN=$(bparam window 3)
ROUNDS=$(bparam rounds 3)
FAR=104857600   # KB/s: 100 GB/s, far above anything this guest does

nb=$(fast_nullb roh0)
sz=$(blockdev --getsz "$nb")
cg_create a >/dev/null
ia=$(cg_id a)
lin=$(dm_create roh_lin "0 $sz linear $nb 0")
thr=$(dm_create roh_thr "0 $sz linear $nb 0")
iob=$(dm_create roh_iob "0 $sz ioband $nb roh $IOB_THROTTLE $IOB_LIMIT cgroup range-bw $IOB_TOKEN :0:$FAR $ia:0:$FAR")
lim=$(dm_create roh_lim "0 $sz ioband $nb rohl $IOB_THROTTLE $IOB_LIMIT cgroup weight $IOB_TOKEN :100/rbps=$((FAR * 1024)),riops=1000000000 $ia:100/rbps=$((FAR * 1024)),riops=1000000000")
iomax a "$(majmin "$thr")" "rbps=$((FAR * 1024))"
report roh.settings "window=${WIN}s,io_throttle=$IOB_THROTTLE,io_limit=$IOB_LIMIT,token_base=$IOB_TOKEN"
report roh.icount "$(bparam icount 0)"
report roh.far_kbps "$FAR"

for k in $(seq 1 "$ROUNDS"); do
	for ctl in linear ioband-range ioband-limits iomax; do
		case $ctl in
		linear) dev=$lin ;;
		ioband-range) dev=$iob; dmsetup message roh_iob 0 reset ;;
		ioband-limits) dev=$lim; dmsetup message roh_lim 0 reset ;;
		iomax) dev=$thr ;;
		esac
		load_start a "$dev" randread 4k 1
		window "$WIN" "$dev" a
		load_stop a
		report "roh.$ctl.$k.iops" "$W_IOPS"
		REPLY=
		[ $ctl = ioband-range ] && ioband_held roh_iob "$ia" && report "roh.$ctl.$k.held" "$REPLY"
		log "$ctl #$k: $W_IOPS IOPS${REPLY:+, held $REPLY %}"
	done
done
