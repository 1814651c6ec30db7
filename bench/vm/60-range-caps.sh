#!/bin/bash
# Range-bw caps (issue 4): cgroups a, b, c capped at 200, 400 and 800 KB/s,
# 4 psync jobs each of 4 KiB random direct I/O on a null_blk without
# completion delay (so the caps, not the device, bind), for reads, then
# writes.  Under one load per direction, one dm device takes in turn: no
# limit (dm-linear: the demand), ioband range-bw with the caps, and
# dm-linear with blk-throttle's io.max (rbps/wbps) at the same caps on the
# dm device.  Each group's rate over the window against its cap.
# timeout: 600
. /tests/lib.sh
. /tests/t/bench.inc
. /tests/t/range.inc

WIN=$(bparam window 10)
CAPS=(200 400 800)
G=(a b c)

nb=$(fast_nullb caps0)
sz=$(blockdev --getsz "$nb")
for g in "${G[@]}"; do cg_create "$g" >/dev/null; done
ia=$(cg_id a) ib=$(cg_id b) ic=$(cg_id c)
T_LIN="0 $sz linear $nb 0"
T_IOB="0 $sz ioband $nb caps $IOB_THROTTLE $IOB_LIMIT cgroup range-bw $IOB_TOKEN :0:0 $ia:0:${CAPS[0]} $ib:0:${CAPS[1]} $ic:0:${CAPS[2]}"
dev=$(dm_create caps "$T_LIN")
mm=$(majmin "$dev")
report caps.settings "window=${WIN}s,io_throttle=$IOB_THROTTLE,io_limit=$IOB_LIMIT,token_base=$IOB_TOKEN"
report caps.caps "$(echo "${CAPS[*]}" | tr ' ' /)"
report caps.table "$(echo "$T_IOB" | cut -d' ' -f5- | tr ' ' _)"

for rw in randread randwrite; do
	d=${rw#rand}
	for g in "${G[@]}"; do load_start "$g" "$dev" "$rw" 4k 4; done
	for ctl in linear ioband iomax; do
		case $ctl in
		linear) dm_swap caps "$T_LIN" ;;
		ioband) dm_swap caps "$T_IOB"; dmsetup message caps 0 reset ;;
		iomax)
			dm_swap caps "$T_LIN"
			for i in 0 1 2; do
				iomax "${G[$i]}" "$mm" "${d:0:1}bps=$((CAPS[i] * 1024))"
			done
			;;
		esac
		window "$WIN" "$dev" a b c
		out=
		for i in 0 1 2; do
			w_kbps "$i"
		k=$REPLY
			report "caps.$d.$ctl.${G[$i]}.kbps" "$k"
			out+=" ${G[$i]} $k"
		done
		REPLY=
		[ $ctl = ioband ] && ioband_held caps "$ia" "$ib" "$ic" && report "caps.$d.$ctl.held" "${REPLY// //}"
		log "$d, $ctl: KB/s$out${REPLY:+, held $REPLY %}"
		[ $ctl = iomax ] && for g in "${G[@]}"; do iomax "$g" "$mm" none; done
	done
	load_stop "${G[@]}"
done
