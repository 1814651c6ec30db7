#!/bin/bash
# Scenario 3, overhead: one fio job, 4 KiB random direct reads (psync) on a
# null_blk without completion delay, no contention: the raw device,
# dm-linear, ioband of type cgroup with the job's cgroup configured, and
# ioband of type none, in turns, each with a fresh fio.  Meant for
# tests/vm/run --icount, where guest time follows executed instructions, so
# the figures are CPU cost and repeat.
# timeout: 900
. /tests/lib.sh
. /tests/t/bench.inc

WIN=$(bparam window 3)
ROUNDS=$(bparam rounds 3)

nb=$(fast_nullb oh0)
sz=$(blockdev --getsz "$nb")
cg_create a >/dev/null
ia=$(cg_id a)
lin=$(dm_create oh_lin "0 $sz linear $nb 0")
iob=$(dm_create oh_iob "0 $sz ioband $nb oh $IOB_THROTTLE $IOB_LIMIT cgroup weight $IOB_TOKEN :100 $ia:100")
ion=$(dm_create oh_ion "0 $sz ioband $nb ohn $IOB_THROTTLE $IOB_LIMIT none weight $IOB_TOKEN :100")
report oh.settings "window=${WIN}s,io_throttle=$IOB_THROTTLE,io_limit=$IOB_LIMIT,token_base=$IOB_TOKEN"
report oh.icount "$(bparam icount 0)"

for k in $(seq 1 "$ROUNDS"); do
	for ctl in raw linear ioband ioband-none; do
		case $ctl in
		raw) dev=$nb ;;
		linear) dev=$lin ;;
		ioband) dev=$iob; dmsetup message oh_iob 0 reset ;;
		ioband-none) dev=$ion; dmsetup message oh_ion 0 reset ;;
		esac
		load_start a "$dev" randread 4k 1
		window "$WIN" "$dev" a
		load_stop a
		report "oh.$ctl.$k.iops" "$W_IOPS"
		REPLY=
		case $ctl in
		ioband) ioband_held oh_iob "$ia" ;;
		ioband-none) ioband_held oh_ion -1 ;;
		esac
		[ -n "$REPLY" ] && report "oh.$ctl.$k.held" "$REPLY"
		log "$ctl #$k: $W_IOPS IOPS${REPLY:+, held $REPLY %}"
	done
done
