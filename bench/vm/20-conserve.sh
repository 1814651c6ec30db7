#!/bin/bash
# Work conservation (beside the scenarios of issue 6): one busy cgroup of
# weight 1 (two others configured with weights 400 and 200, idle) on the
# slow null_blk, 8 psync jobs of 4 KiB random direct reads: ioband against
# dm-linear, alternated as the live table of one dm device under one
# running load.
# timeout: 600
. /tests/lib.sh
. /tests/t/bench.inc

WIN=$(bparam window 6)
ROUNDS=$(bparam rounds 5)

nb=$(slow_nullb wc0)
sz=$(blockdev --getsz "$nb")
for g in a b c; do cg_create "$g" >/dev/null; done
ia=$(cg_id a) ib=$(cg_id b) ic=$(cg_id c)
T_LIN="0 $sz linear $nb 0"
T_IOB="0 $sz ioband $nb wc $IOB_THROTTLE $IOB_LIMIT cgroup weight $IOB_TOKEN :100 $ia:1 $ib:400 $ic:200"
dev=$(dm_create wc "$T_LIN")
report wc.settings "window=${WIN}s,io_throttle=$IOB_THROTTLE,io_limit=$IOB_LIMIT,token_base=$IOB_TOKEN"

load_start a "$dev" randread 4k 8
for k in $(seq 1 "$ROUNDS"); do
	for ctl in linear ioband; do
		if [ $ctl = linear ]; then
			dm_swap wc "$T_LIN"
		else
			dm_swap wc "$T_IOB"
			dmsetup message wc 0 reset
		fi
		window "$WIN" "$dev" a
		report "wc.$ctl.$k.iops" "$W_IOPS"
		if [ $ctl = ioband ]; then
			ioband_held wc "$ia"
			report "wc.$ctl.$k.held" "$REPLY"
		fi
		log "$ctl #$k: $W_IOPS IOPS"
	done
done
load_stop a
