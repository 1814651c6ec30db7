#!/bin/bash
# Range-bw minimums on an oversubscribed device (issue 4): cgroups a, b, c,
# 4 psync jobs each of 4 KiB random direct reads, on a null_blk of queue
# depth 2 completing after 10 ms (at most 200 IOPS, 800 KB/s: slow enough
# that the disk, not the guest's emulated CPU, limits the readers).  Under one
# load, one dm device takes in turn: dm-linear (no control: the device's
# capacity and the uncontrolled split), ioband range-bw with no range, then
# two sets of minimums in percent of the latter's total: 60 / 25 / 0 and
# 10 / 20 / 60, with io_limit 2 (the device's depth, as the documentation
# advises), and the first set again with the suite's io_limit for contrast.
# The blk-throttle io.max has no minimum; there is no kernel row.
# timeout: 600
. /tests/lib.sh
. /tests/t/bench.inc
. /tests/t/range.inc

WIN=$(bparam window 10)
G=(a b c)
SETS=("60 25 0" "10 20 60")

nb=$(nullb_create mins0 "$BENCH_SIZE_MB" 10000000 2)
sz=$(blockdev --getsz "$nb")
for g in "${G[@]}"; do cg_create "$g" >/dev/null; done
ids=("$(cg_id a)" "$(cg_id b)" "$(cg_id c)")
T_LIN="0 $sz linear $nb 0"
# t_iob IO_LIMIT "MIN_A MIN_B MIN_C" (KB/s): the ioband table
t_iob() {
	local i out="0 $sz ioband $nb mins $IOB_THROTTLE $1 cgroup range-bw $IOB_TOKEN :0:0"
	local -a m=($2)
	for i in 0 1 2; do out+=" ${ids[$i]}:${m[$i]}:0"; done
	echo "$out"
}
dev=$(dm_create mins "$T_LIN")
report mins.settings "window=${WIN}s,io_throttle=$IOB_THROTTLE,token_base=$IOB_TOKEN"

for g in "${G[@]}"; do load_start "$g" "$dev" randread 4k 4; done
# run NAME TABLE [MINS]: one window; reports each group's KB/s
run() {
	local name=$1 i k out=
	dm_swap mins "$2"
	window "$WIN" "$dev" a b c
	for i in 0 1 2; do
		w_kbps "$i"
		k=$REPLY
		KBS[i]=$k
		report "mins.$name.${G[$i]}.kbps" "$k"
		out+=" ${G[$i]} $k"
	done
	[ -n "${3:-}" ] && report "mins.$name.min" "${3// //}"
	log "$name: KB/s$out${3:+ (minimums $3)}"
}
run linear "$T_LIN"
run none "$(t_iob 2 "0 0 0")"
# the minimums in percent of what ioband served just before them: the
# emulated disk's speed follows the host's load from minute to minute
CAP=$((KBS[0] + KBS[1] + KBS[2]))
report mins.capacity "$CAP"
n=1
for set in "${SETS[@]}"; do
	m=
	for p in $set; do m+="${m:+ }$((CAP * p / 100))"; done
	report "mins.set$n.pct" "${set// //}"
	run "set$n" "$(t_iob 2 "$m")" "$m"
	n=$((n + 1))
done
m=
for p in ${SETS[0]}; do m+="${m:+ }$((CAP * p / 100))"; done
run "set1-limit$IOB_LIMIT" "$(t_iob "$IOB_LIMIT" "$m")" "$m"
report mins.contrast_limit "$IOB_LIMIT"
load_stop "${G[@]}"
