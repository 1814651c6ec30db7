#!/bin/bash
# Caps that stall (seed 002, issue 4): the completion latency of a light
# workload in a capped cgroup whose demand stays below the cap, against the
# same workload uncapped, for ioband range-bw and for blk-throttle's io.max
# (rbps) on the same dm device; and a cgroup that reads without pause into
# its cap: how long it waits at most between two completions.
# One psync job of 4 KiB random direct reads, alone, on the slow null_blk
# (100 us, queue depth 4), a fresh fio per run:
#   think  1 ms of think time after each read, cap 4000 KB/s
#   rated  fio's rate_iops=100 (400 KB/s), cap 800 KB/s
#   greedy no pause, cap 400 KB/s (100 reads a second): the budget runs
#          out at every read; fio logs each completion
# timeout: 900
. /tests/lib.sh
. /tests/t/bench.inc
. /tests/t/range.inc

WIN=$(bparam window 10)

nb=$(slow_nullb lat0)
sz=$(blockdev --getsz "$nb")
cg_create l >/dev/null
il=$(cg_id l)
T_LIN="0 $sz linear $nb 0"
t_iob() { # cap KB/s (0: none)
	echo "0 $sz ioband $nb lat $IOB_THROTTLE $IOB_LIMIT cgroup range-bw $IOB_TOKEN :0:0 $il:0:$1"
}
dev=$(dm_create lat "$T_LIN")
mm=$(majmin "$dev")
report lat.settings "window=${WIN}s,io_throttle=$IOB_THROTTLE,io_limit=$IOB_LIMIT,token_base=$IOB_TOKEN"

# setup CTL CAP: make the dm device's table and io.max what CTL needs
setup() {
	iomax l "$mm" none
	case $1 in
	linear) dm_swap lat "$T_LIN" ;;
	iomax) dm_swap lat "$T_LIN"; iomax l "$mm" "rbps=$(($2 * 1024))" ;;
	ioband) dm_swap lat "$(t_iob 0)" ;;
	ioband-cap) dm_swap lat "$(t_iob "$2")" ;;
	esac
	case $1 in ioband*) dmsetup message lat 0 reset ;; esac
}

# record KEY: p50, p99, max latency, IOPS, KB/s of the last fio_once
record() {
	local out=
	for x in p50 p99 max iops kbps; do
		case $x in
		p50) f_pct 50 ;;
		p99) f_pct 99 ;;
		max) f_max ;;
		iops) f_iops ;;
		kbps) f_kbps ;;
		esac
		report "$1.$x" "$REPLY"
		out+=" $x $REPLY"
	done
	REPLY=
	case $1 in *ioband*) ioband_held lat "$il"; report "$1.held" "$REPLY" ;; esac
	log "$1:$out${REPLY:+ held $REPLY %}"
}

for w in think rated; do
	case $w in
	think) cap=4000; args=(--thinktime=1000 --thinktime_blocks=1) ;;
	rated) cap=800; args=(--rate_iops=100) ;;
	esac
	report "lat.$w.cap" "$cap"
	for ctl in linear ioband ioband-cap iomax; do
		setup $ctl "$cap"
		fio_once l "$dev" "$WIN" randread "${args[@]}"
		record "lat.$w.$ctl"
	done
done

cap=400
report lat.greedy.cap "$cap"
for ctl in ioband-cap iomax; do
	setup $ctl "$cap"
	rm -f "$TESTDIR"/greedy_*.log
	fio_once l "$dev" "$WIN" randread --write_lat_log="$TESTDIR/greedy" --log_avg_msec=0
	record "lat.greedy.$ctl"
	max_gap "$TESTDIR"/greedy_clat.1.log
	report "lat.greedy.$ctl.gap_ms" "$REPLY"
	log "greedy, $ctl: longest gap between completions $REPLY ms"
done
iomax l "$mm" none
