#!/bin/bash
# Limits of io.max's kinds (issue 17) against io.max itself, on one dm
# device in turns (ioband's table, then dm-linear with blk-throttle's io.max
# for the same cgroups), each under one load per direction:
#
#   caps     cgroups a, b, c, 4 psync jobs each of 4 KiB random direct I/O
#            on a null_blk without completion delay (the limits bind, not
#            the device): a a bytes limit (400 KiB/s), b an IOPS limit
#            (100), c both at once, bytes binding (200 KiB/s, 200 IOPS).
#            Each group's rate over the window and its highest over any
#            second (counts every 0.25 s: busiest), against its limit.  Counted in
#            io.stat of the null_blk: what left ioband or blk-throttle.
#   light    one psync reader with 1 ms think time under rbps=4000 KiB/s
#            (its demand stays below): completion latency p50/p99 against
#            the same reader without a limit (slow null_blk, 100 us).
#   greedy   one psync reader without pause under rbps=400 KiB/s: the
#            longest gap between two of its completions.
# timeout: 900
. /tests/lib.sh
. /tests/t/bench.inc
. /tests/t/range.inc

WIN=$(bparam window 10)
G=(a b c)
# per direction: the limits of a, b, c in io.max's words, and what each
# allows in 4 KiB I/Os a second
LIM=("bps=409600" "iops=100" "bps=204800,iops=200")
CAP_IOPS=(100 100 50)

nb=$(fast_nullb lim0)
sz=$(blockdev --getsz "$nb")
for g in "${G[@]}" l; do cg_create "$g" >/dev/null; done
ia=$(cg_id a) ib=$(cg_id b) ic=$(cg_id c) il=$(cg_id l)
T_LIN="0 $sz linear $nb 0"
t_iob() { # direction letter (r or w)
	local p=$1
	echo "0 $sz ioband $nb lim $IOB_THROTTLE $IOB_LIMIT cgroup weight $IOB_TOKEN :100" \
		"$ia:100/$p${LIM[0]}" "$ib:100/$p${LIM[1]}" \
		"$ic:100/$p${LIM[2]//,/,$p}"
}
dev=$(dm_create lim "$T_LIN")
mm=$(majmin "$dev")
report lim.settings "window=${WIN}s,io_throttle=$IOB_THROTTLE,io_limit=$IOB_LIMIT,token_base=$IOB_TOKEN"
report lim.caps "$(echo "${CAP_IOPS[*]}" | tr ' ' /)"
report lim.table "$(t_iob r | cut -d' ' -f5- | tr ' ' _)"

# window()'s sampling loop, replaced: each sample is "pre:post:c1,c2,c3",
# the counts read between the times pre and post (us from the window's
# start), so that a sampler the guest delays cannot make a count look late
_window_sample() { # t0 secs cg...
	local t0=$1 end n cg v pre
	end=$(( t0 + ${2%.*} * 1000000 ))
	shift 2
	while :; do
		nap "$W_SAMPLE"
		usecs
		pre=$REPLY
		[ "$pre" -lt "$end" ] || break
		v=
		n=0
		for cg in "$@"; do
			cg_io "$cg" "${mm[n]}"
			v+="${v:+,}$((CG_IOS - a0[n]))"
			n=$((n + 1))
		done
		usecs
		W_SERIES+="${W_SERIES:+;}$((pre - t0)):$((REPLY - t0)):$v"
	done
	return 0
}

# busiest N: REPLY = the most I/Os a second the N-th group can have done
# over a span of W_SERIES of at least a second: counts apart over the
# longest time the two samples allow (from the first's pre to the second's
# post), so a figure above the limit is above it for certain
busiest() {
	REPLY=$(echo "0:0:0,0,0;$W_SERIES" | tr ';' '\n' | awk -F'[:,]' -v g="$1" '
		{ pre[NR] = $1; post[NR] = $2; c[NR] = $(g + 3) }
		END {
			best = 0
			for (i = 1; i <= NR; i++)
				for (j = i + 1; j <= NR; j++)
					if (pre[j] - post[i] >= 1000000) {
						r = (c[j] - c[i]) * 1000000 / (post[j] - pre[i])
						if (r > best)
							best = r
						break
					}
			printf "%.1f", best
		}')
}

W_SAMPLE=0.25
for rw in randread randwrite; do
	d=${rw#rand}
	p=${d:0:1}
	for g in "${G[@]}"; do load_start "$g" "$dev" "$rw" 4k 4; done
	for ctl in ioband iomax; do
		case $ctl in
		ioband) dm_swap lim "$(t_iob "$p")"; dmsetup message lim 0 reset ;;
		iomax)
			dm_swap lim "$T_LIN"
			for i in 0 1 2; do
				iomax "${G[$i]}" "$mm" "$p${LIM[$i]//,/ $p}"
			done
			;;
		esac
		window "$WIN" "$nb" a b c
		out=
		for i in 0 1 2; do
			avg=$(awk -v n="${W_IOS[$i]}" -v s="$W_SECS" 'BEGIN { printf "%.1f", n / s }')
			busiest "$i"
			report "lim.$d.$ctl.${G[$i]}.iops" "$avg"
			report "lim.$d.$ctl.${G[$i]}.max1s" "$REPLY"
			out+=" ${G[$i]} $avg (most in 1 s $REPLY)"
		done
		log "$d, $ctl: IOPS$out"
		[ $ctl = iomax ] && for g in "${G[@]}"; do iomax "$g" "$mm" none; done
	done
	load_stop "${G[@]}"
done
unset W_SAMPLE

# ---- latency under a limit, on the slow null_blk --------------------------------
nbs=$(slow_nullb lim1)
dm_swap lim "0 $sz linear $nbs 0"
mm=$(majmin "$dev")
t_lat() { # rbps
	echo "0 $sz ioband $nbs lim $IOB_THROTTLE $IOB_LIMIT cgroup weight $IOB_TOKEN :100 $il:100/rbps=$1"
}
setup() { # ctl rbps
	iomax l "$mm" none
	case $1 in
	linear) dm_swap lim "0 $sz linear $nbs 0" ;;
	ioband) dm_swap lim "$(t_lat "$2")"; dmsetup message lim 0 reset ;;
	iomax) dm_swap lim "0 $sz linear $nbs 0"; iomax l "$mm" "rbps=$2" ;;
	esac
}
for ctl in linear ioband iomax; do
	setup $ctl 4096000
	fio_once l "$dev" "$WIN" randread --thinktime=1000 --thinktime_blocks=1
	out=
	for x in p50 p99 iops; do
		case $x in
		p50) f_pct 50 ;;
		p99) f_pct 99 ;;
		iops) f_iops ;;
		esac
		report "lim.light.$ctl.$x" "$REPLY"
		out+=" $x $REPLY"
	done
	log "light, $ctl:$out"
done
for ctl in ioband iomax; do
	setup $ctl 409600
	rm -f "$TESTDIR"/greedy_*.log
	fio_once l "$dev" "$WIN" randread --write_lat_log="$TESTDIR/greedy" --log_avg_msec=0
	f_iops
	report "lim.greedy.$ctl.iops" "$REPLY"
	max_gap "$TESTDIR"/greedy_clat.1.log
	report "lim.greedy.$ctl.gap_ms" "$REPLY"
	log "greedy, $ctl: longest gap between completions $REPLY ms"
done
iomax l "$mm" none
