#!/bin/bash
# Limits of io.max's kinds (issue 17) against io.max itself, on one dm
# device in turns (ioband's table, then dm-linear with blk-throttle's io.max
# for the same cgroups), each under one load per direction:
#
#   caps     cgroups a, b, c, 4 psync jobs each of 4 KiB random direct I/O
#            on a null_blk without completion delay (the limits bind, not
#            the device): a a bytes limit (400 KiB/s), b an IOPS limit
#            (100), c both at once, bytes binding (200 KiB/s, 200 IOPS).
#            Each group's rate over the window (the null_blk's io.stat:
#            what left ioband or blk-throttle) and the fewest and most
#            bios it sent the null_blk in any second (its trace:
#            per_second), against its limit.  Under -icount, so the host's load cannot move them.
#   light    one psync reader with 1 ms think time under rbps=4000 KiB/s
#            (its demand stays below): completion latency p50/p99 against
#            the same reader without a limit (slow null_blk, 100 us).
#   greedy   one psync reader without pause under rbps=400 KiB/s: the
#            longest gap between two of its completions.
# timeout: 900
# bench-boot: icount
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

# Each group's fio works in its own third of the device, so the sector of
# a bio that reaches the null_blk names its group, and the null_blk's
# block_bio_queue event stamps when it left the controller (ioband's
# release or blk-throttle's dispatch), to the microsecond of guest time.
THIRD=$(( sz / 3 ))
read -r nbmaj nbmin < <(majmin "$nb" | tr : ' ')
TRF=$TRACEFS/events/block/block_bio_queue/filter
[ -e $TRACEFS/trace ] || mount -t tracefs nodev $TRACEFS 2>/dev/null
[ -e "$TRF" ] || fail "no trace event block/block_bio_queue"
on_exit "echo $(cat $TRACEFS/buffer_size_kb) > $TRACEFS/buffer_size_kb; echo 0 > $TRF"
echo 4096 >$TRACEFS/buffer_size_kb || fail "trace buffer size"
echo "dev == $(( nbmaj << 20 | nbmin ))" >"$TRF" || fail "filter $TRF"
# enabled before the loads start (see trace_start in tests/vm/lib.sh)
trace_start block/block_bio_queue
trace_stop
# the window's start: the trace from here on
lim_trace_window() {
	echo >$TRACEFS/trace
	echo 1 >$TRACEFS/tracing_on
}

# per_second: FEWEST and MOST, each "a b c": the fewest and the most bios
# of each group that left the controller within a half-open second of the
# trace: for the most, seconds that begin with one of its bios; for the
# fewest, seconds that begin just after one and end by its last.  A limit
# of r a second spaces them 1/r apart, r in a second, one more or one
# fewer when the dispatch of one at the second's edge was a few
# microseconds late against the other's.
per_second() {
	local r
	trace_stop
	awk -F'[ /]+' '/entries-in-buffer/ { exit $4 != $5 }' $TRACEFS/trace ||
		fail "the trace lost events: $(grep -m1 entries-in-buffer $TRACEFS/trace)"
	r=$(awk -v third="$THIRD" '
		{
			for (i = 2; i <= NF; i++)
				if ($i == "block_bio_queue:")
					break
			if (i > NF)
				next
			t = $(i - 1)
			sub(/:$/, "", t)
			g = int($(i + 3) / third)
			if (g > 2)
				g = 2
			ts[g, n[g]++] = t
		}
		END {
			for (g = 0; g < 3; g++) {
				most = 0
				lo = 0
				for (hi = 0; hi < n[g]; hi++) {
					while (ts[g, hi] - ts[g, lo] >= 1)
						lo++
					if (hi - lo + 1 > most)
						most = hi - lo + 1
				}
				fewest = n[g]
				hi = 0
				for (lo = 0; lo < n[g]; lo++) {
					if (ts[g, n[g] - 1] - ts[g, lo] < 1)
						break
					while (hi < n[g] && ts[g, hi] - ts[g, lo] <= 1)
						hi++
					if (hi - lo - 1 < fewest)
						fewest = hi - lo - 1
				}
				f = f (g ? " " : "") fewest
				m = m (g ? " " : "") most
			}
			print f ":" m
		}' $TRACEFS/trace)
	FEWEST=${r%:*} MOST=${r#*:}
}

for rw in randread randwrite; do
	d=${rw#rand}
	p=${d:0:1}
	for i in 0 1 2; do
		load_start "${G[$i]}" "$dev" "$rw" 4k 4 \
			--offset=$(( i * THIRD * 512 )) --size=$(( THIRD * 512 ))
	done
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
		W_AT_START=lim_trace_window window "$WIN" "$nb" a b c
		per_second
		read -r -a fewest <<<"$FEWEST"
		read -r -a most <<<"$MOST"
		out=
		for i in 0 1 2; do
			avg=$(awk -v n="${W_IOS[$i]}" -v s="$W_SECS" 'BEGIN { printf "%.1f", n / s }')
			report "lim.$d.$ctl.${G[$i]}.iops" "$avg"
			report "lim.$d.$ctl.${G[$i]}.min1s" "${fewest[i]}"
			report "lim.$d.$ctl.${G[$i]}.max1s" "${most[i]}"
			out+=" ${G[$i]} $avg (in 1 s ${fewest[i]}-${most[i]})"
		done
		log "$d, $ctl: IOPS$out"
		[ $ctl = iomax ] && for g in "${G[@]}"; do iomax "$g" "$mm" none; done
	done
	load_stop "${G[@]}"
done

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
