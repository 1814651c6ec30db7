#!/bin/bash
# Device time (issue 13): each group's share of the model device's busy
# time (tests/modeldev: the device counts the time it spent on each
# cgroup's requests), under ioband weight (counts I/Os), ioband
# weight-time, dm-linear, and on the raw model device no controller, BFQ
# (io.bfq.weight), iocost with io.cost.model set to the model's true
# parameters and its rate fixed at 100 % (its best case), and iocost as it
# comes (automatic model and QoS), in one boot.  ioband weight-time is
# also given the same true model (its cost_model options) on the cases
# without seeks, as iocost's best case is.
#
# Cases (bench.dt_cases), each on a model device of its own:
#   ssd-wlow    ssd, 4:2:1, reads in a and b, writes in c (the lowest)
#   ssd-whigh   ssd, 4:2:1, writes in a (the highest), reads in b and c
#   disk-seqrand disk, 1:1, one sequential psync reader (a) against one
#               random psync reader (b): the 2009 case
#   ssd-4k256k  ssd, 1:1, 4 KiB readers (a) against 256 KiB readers (b)
#   ssd-change  as ssd-wlow (weight-time, BFQ, iocost with the true model
#               of before): after a window, the writes' cost (base and per
#               KiB) doubles under the running load; each group's share in
#               every second for bench.dt_after seconds (10) after it
#   depth-D     ssd, 4:2:1, 4 KiB random readers, 1, 4 and 16 jobs each (D: 1, 4, 8, 32)
#               keeping D I/Os in flight (1: psync, else libaio): the
#               fewest submitters have the highest weight (dm-linear,
#               weight-time, BFQ, iocost with the true model only)
# Random direct I/O unless said; libaio jobs at iodepth 4, 4 a group, for
# the ssd cases (devsim's scenarios, tests/unit/devsim-scen.c).
#
# The ssd profile's times are multiplied by bench.dt_ssd_scale (20: a 4 KiB
# read takes 2.32 ms, a write 8.96 ms, 4 channels), so that the device and
# not the guest's CPU is what is shared; each window reports the device's
# busy fraction and the guest CPU's.  (At x10 the guest's CPU was 4-7 %
# busy; under -icount the host's time grows with the I/Os a window holds,
# about 11 s a guest second at x10 on the loaded host.)  The disk profile is as in model.h
# (bench.dt_disk_scale 1: seeks of 0.5 to 8 ms).
#
# Under one load on a dm device over the model device, the live table
# takes turns: group a alone under dm-linear and under weight-time (the
# lone group's throughput), then every group under dm-linear, weight and
# weight-time.  Under a second load on the model device itself: BFQ,
# iocost (true model), iocost (automatic); no controller there is
# dm-linear's case without the dm device (the device, not the CPU, is the
# limit), so dm-linear is every row's reference.  Each window
# (bench.window, 4 s, after bench.dt_settle, 2 s) resets the device's
# stats as it starts and reads them as it ends.
#
# Keys: dt.CASE.CTL.{dt,io,ios}.G (device-time share %, I/O share %,
# I/Os), .iops, .mibs, .busy (device busy %: busy time over channels x
# window), .cpu (guest CPU busy %), .late_ms, .secs; CTL-alone for a alone;
# CTL: linear, weight, weight-time, weight-time-model (ioband with the
# true model), bfq, iocost-model, iocost.
# bench-boot: icount
# timeout: 3600
. /tests/lib.sh
. /tests/t/bench.inc

WIN=$(bparam window 4)
SETTLE=$(bparam dt_settle 2)
CASES="ssd-wlow,ssd-whigh,disk-seqrand,ssd-4k256k,ssd-change,depth-1,depth-4,depth-8,depth-32"
# the short mode (bench.window below 4): fewer cases
[ "$WIN" -lt 4 ] && CASES="ssd-wlow,disk-seqrand,ssd-change,depth-1"
CASES=$(bparam dt_cases "$CASES")
SSD_SCALE=$(bparam dt_ssd_scale 20)
DISK_SCALE=$(bparam dt_disk_scale 1)
DT_AFTER=$(bparam dt_after 10)
DT_SIZE_MB=1024

case $(cat /run/iobmodel-module 2>/dev/null) in
loaded) ;;
failed*) fail "iobmodel: $(cat /run/iobmodel-module)" ;;
*) skip "the model device is not built (iobmodel.ko)" ;;
esac
modprobe -q bfq 2>/dev/null
[ -f "$CG_ROOT/io.cost.qos" ] || fail "no io.cost.qos (CONFIG_BLK_CGROUP_IOCOST)"
for g in a b c; do cg_create "$g" >/dev/null; done
declare -A ID=([a]=$(cg_id a) [b]=$(cg_id b) [c]=$(cg_id c))
report dt.settings "window=${WIN}s,settle=$SETTLE,io_throttle=$IOB_THROTTLE,io_limit=$IOB_LIMIT,token_base=$IOB_TOKEN"
report dt.cases "$CASES"
report dt.icount "$(bparam icount 0)"
report dt.after "$DT_AFTER"

# case_def NAME: PROF, SCALE, SPECS (one "weight:rw:bs:jobs:iodepth" per
# group, a first), CTLS (the controllers measured with every group) and
# ALONE (those measured with group a alone before)
case_def() {
	CTLS="linear weight weight-time weight-time-model bfq iocost-model iocost"
	ALONE="linear weight-time"
	case $1 in
	ssd-wlow) PROF=ssd SCALE=$SSD_SCALE
		SPECS=(400:randread:4k:4:4 200:randread:4k:4:4 100:randwrite:4k:4:4) ;;
	ssd-whigh) PROF=ssd SCALE=$SSD_SCALE
		SPECS=(400:randwrite:4k:4:4 200:randread:4k:4:4 100:randread:4k:4:4)
		ALONE= ;;
	disk-seqrand) PROF=disk SCALE=$DISK_SCALE
		SPECS=(100:read:4k:1:1 100:randread:4k:1:1)
		CTLS="linear weight weight-time bfq iocost-model iocost" ;;
	ssd-4k256k) PROF=ssd SCALE=$SSD_SCALE
		SPECS=(100:randread:4k:4:4 100:randread:256k:4:4)
		ALONE=linear ;;
	depth-[0-9]*) PROF=ssd SCALE=$SSD_SCALE D=${1#depth-}
		SPECS=(400:randread:4k:1:$D 200:randread:4k:4:$D 100:randread:4k:16:$D)
		CTLS="linear weight-time weight-time-model bfq iocost-model" ALONE=linear ;;
	ssd-change) PROF=ssd SCALE=$SSD_SCALE
		SPECS=(400:randread:4k:4:4 200:randread:4k:4:4 100:randwrite:4k:4:4)
		CTLS="weight-time weight-time-model bfq iocost-model" ALONE= ;;
	*) fail "unknown case '$1' (bench.dt_cases)" ;;
	esac
}

# the model's times multiplied by SCALE, as iobm_create's ATTR=VALUE list
dt_scaled() { # profile scale
	local d=$IOBM_CFS/dtprobe a out=
	mkdir "$d" && echo "$1" >"$d/profile" || fail "dt_scaled: profile $1"
	for a in read_base_ns write_base_ns read_per_kib_ns write_per_kib_ns \
		seek_min_ns seek_max_ns flush_base_ns; do
		out+=" $a=$(($(cat "$d/$a") * $2))"
	done
	rmdir "$d" || fail "dt_scaled: rmdir $d"
	echo "$out"
}

# iocost's linear model of model device $1 (its settings in force): a
# page costs what 4 KiB of transfer occupy of the device (per_kib over
# channels), a 4 KiB request base + transfer + seek; random requests seek
# a third of the device on average (uniform over it), sequential ones not.
dt_iocost_model() { # name
	local d=$IOBM_CFS/$1 ch base pk smin smax cap seek out="ctrl=user model=linear" dir p
	ch=$(cat "$d/channels")
	smin=$(cat "$d/seek_min_ns") smax=$(cat "$d/seek_max_ns")
	cap=$(cat "$d/capacity_sectors")
	seek=0
	[ "$smax" -gt 0 ] && seek=$((smin + (smax - smin) * (DT_SIZE_MB << 11) / cap / 3))
	for dir in read write; do
		p=${dir:0:1}
		base=$(cat "$d/${dir}_base_ns") pk=$(cat "$d/${dir}_per_kib_ns")
		out+=" ${p}bps=$((ch * 1024 * 1000000000 / pk))"
		out+=" ${p}seqiops=$((ch * 1000000000 / (base + 4 * pk)))"
		out+=" ${p}randiops=$((ch * 1000000000 / (base + 4 * pk + seek)))"
	done
	echo "$out"
}

# counting starts (W_AT_START of window): the device's stats afresh, the
# guest CPU's counters, the time
dt_at_start() {
	local -a f
	echo 0 >"$IOBM_CFS/$DT_NAME/stats"
	read -r -a f </proc/stat
	DT_CPU0=$((f[1] + f[2] + f[3] + f[4] + f[5] + f[6] + f[7] + f[8]))
	DT_IDLE0=$((f[4] + f[5]))
	usecs
	DT_T0=$REPLY
}

# dt_measure KEY DEV CG...: one window; reports KEY.*
dt_measure() {
	local key=$1 dev=$2 g i=0 k total=0 late=0 us cpu idle sh= ds=
	local -a f
	local -A busy=()
	shift 2
	W_AT_START=dt_at_start window "$WIN" "$dev" "$@"
	while read -r -a f; do
		case ${f[0]} in
		cgroup) busy[${f[1]}]=$((${busy[${f[1]}]:-0} + f[8])) ;;
		total)
			for ((k = 1; k + 1 < ${#f[@]}; k += 2)); do
				case ${f[k]} in
				busy_ns) total=${f[k + 1]} ;;
				late_ns) late=${f[k + 1]} ;;
				esac
			done ;;
		esac
	done <"$IOBM_CFS/$DT_NAME/stats"
	usecs
	us=$((REPLY - DT_T0))
	read -r -a f </proc/stat
	cpu=$((f[1] + f[2] + f[3] + f[4] + f[5] + f[6] + f[7] + f[8] - DT_CPU0))
	idle=$((f[4] + f[5] - DT_IDLE0))
	for g in "$@"; do
		pct "${busy[${ID[$g]}]:-0}" "$total"
		report "$key.dt.$g" "$REPLY"
		ds+="${ds:+ / }$REPLY"
		pct "${W_IOS[$i]}" "$W_TOTAL"
		report "$key.io.$g" "$REPLY"
		sh+="${sh:+ / }$REPLY"
		report "$key.ios.$g" "${W_IOS[$i]}"
		i=$((i + 1))
	done
	report "$key.iops" "$W_IOPS"
	k=$((W_TOTAL_BYTES * 10000 / 1048576 / 10#${W_SECS/./}))
	report "$key.mibs" "$((k / 10)).$((k % 10))"
	pct $((total / 1000)) $((DT_CH * us))
	report "$key.busy" "$REPLY"
	local b=$REPLY
	pct $((cpu - idle)) "$cpu"
	report "$key.cpu" "$REPLY"
	report "$key.late_ms" $((late / 1000000))
	report "$key.secs" "$W_SECS"
	log "$key: device time $ds %, I/Os $sh %, $W_IOPS IOPS, device busy $b %, CPU $REPLY %"
}

# dt_start CG DEV SPEC: the group's fio load
dt_start() {
	local cg=$1 dev=$2 w rw bs jobs depth
	IFS=: read -r w rw bs jobs depth <<<"$3"
	if [ "$depth" -gt 1 ]; then
		LOAD_ENGINE=libaio load_start "$cg" "$dev" "$rw" "$bs" "$jobs" --iodepth="$depth"
	else
		load_start "$cg" "$dev" "$rw" "$bs" "$jobs"
	fi
}

# each group's busy time on the device so far (DT_B[g]) and the total
# (DT_BT), from the stats
dt_busy() { # cg...
	local g
	iobm_busy "$DT_NAME"
	DT_BT=$IOBM_TOTAL
	for g in "$@"; do DT_B[$g]=${IOBM_BUSY[${ID[$g]}]:-0}; done
}
declare -A DT_B
# dt_change KEY CG...: after a window (KEY), the writes' cost doubles;
# every second for DT_AFTER seconds each group's share of the device
# time in that second (KEY.after.series "s:a,b,c;..."), and over the
# second half (KEY.after.dt.G); the costs go back after
dt_change() {
	local key=$1 d=$IOBM_CFS/$DT_NAME t g v series= half
	local -A prev=() mid=()
	local wb wk pt mt
	shift
	wb=$(cat "$d/write_base_ns") wk=$(cat "$d/write_per_kib_ns")
	dt_busy "$@"
	for g in "$@"; do prev[$g]=${DT_B[$g]}; done
	pt=$DT_BT
	echo $((2 * wb)) >"$d/write_base_ns" && echo $((2 * wk)) >"$d/write_per_kib_ns" ||
		fail "doubling the write cost of $DT_NAME"
	half=$((DT_AFTER / 2))
	for ((t = 1; t <= DT_AFTER; t++)); do
		nap 1
		dt_busy "$@"
		v=
		for g in "$@"; do
			pct $((${DT_B[$g]} - ${prev[$g]})) $((DT_BT - pt))
			v+="${v:+,}$REPLY"
			prev[$g]=${DT_B[$g]}
		done
		pt=$DT_BT
		series+="${series:+;}$t:$v"
		if [ $t = "$half" ]; then
			for g in "$@"; do mid[$g]=${DT_B[$g]}; done
			mt=$DT_BT
		fi
	done
	report "$key.after.series" "$series"
	v=
	for g in "$@"; do
		pct $((${DT_B[$g]} - ${mid[$g]})) $((DT_BT - mt))
		report "$key.after.dt.$g" "$REPLY"
		v+="${v:+ / }$REPLY"
	done
	echo "$wb" >"$d/write_base_ns" && echo "$wk" >"$d/write_per_kib_ns" ||
		fail "restoring the write cost of $DT_NAME"
	log "$key: writes cost twice as much: each second $series; seconds $half-$DT_AFTER: $v %"
}

sched() { echo "$2" >"/sys/block/$1/queue/scheduler" || fail "scheduler $2 on $1"; }
iocost() { # majmin 0|1
	echo "$1 enable=$2" >"$CG_ROOT/io.cost.qos" || fail "io.cost.qos $1 enable=$2"
}
iocost_set() { # majmin model qos
	echo "$1 $2" >"$CG_ROOT/io.cost.model" || fail "io.cost.model $1 $2"
	echo "$1 $3" >"$CG_ROOT/io.cost.qos" || fail "io.cost.qos $1 $3"
}

n=0
for cs in ${CASES//,/ }; do
	case_def "$cs"
	n=$((n + 1))
	DT_NAME=dtm$n
	P=dt.$cs
	dev=$(iobm_create "$DT_NAME" "$DT_SIZE_MB" "$PROF" $(dt_scaled "$PROF" "$SCALE"))
	nbn=$(basename "$dev")
	mm=$(majmin "$dev")
	sz=$(blockdev --getsz "$dev")
	DT_CH=$(cat "$IOBM_CFS/$DT_NAME/channels")
	sched "$nbn" none
	grep -qw bfq "/sys/block/$nbn/queue/scheduler" || fail "bfq not offered for $nbn"
	MODEL=$(dt_iocost_model "$DT_NAME")
	GS=(a b c)
	GS=("${GS[@]:0:${#SPECS[@]}}")
	tw=
	i=0
	for g in "${GS[@]}"; do
		w=${SPECS[$i]%%:*}
		echo "$w" >"$CG_ROOT/$g/io.bfq.weight" || fail "io.bfq.weight $w"
		echo "default $w" >"$CG_ROOT/$g/io.weight" || fail "io.weight $w"
		tw+=" ${ID[$g]}:$w"
		i=$((i + 1))
	done
	T_LIN="0 $sz linear $dev 0"
	t_iob() { echo "0 $sz ioband $dev dt$n $IOB_THROTTLE $IOB_LIMIT cgroup $1 $IOB_TOKEN :100$tw"; }
	# weight-time-model: weight-time with iocost's true model as its options
	t_ctl() {
		case $1 in
		linear) echo "$T_LIN" ;;
		weight-time-model) echo "$(t_iob weight-time) ${MODEL#ctrl=user model=linear }" ;;
		*) t_iob "$1" ;;
		esac
	}
	dm=$(dm_create "dtl$n" "$T_LIN")
	report "$P.profile" "$PROF"
	report "$P.scale" "$SCALE"
	report "$P.channels" "$DT_CH"
	report "$P.groups" "$(IFS=,; echo "${SPECS[*]}")"
	report "$P.model" "${MODEL// /_}"
	log "$cs: $PROF x$SCALE, groups ${SPECS[*]}; iocost: $MODEL"

	# the dm device: a alone, then every group
	dt_start a "$dm" "${SPECS[0]}"
	for c in $ALONE; do
		dm_swap "dtl$n" "$(t_ctl $c)"
		dt_measure "$P.$c-alone" "$dm" a
	done
	i=1
	for g in "${GS[@]:1}"; do dt_start "$g" "$dm" "${SPECS[$i]}"; i=$((i + 1)); done
	for c in linear weight weight-time weight-time-model; do
		[[ " $CTLS " == *" $c "* ]] || continue
		dm_swap "dtl$n" "$(t_ctl $c)"
		dt_measure "$P.$c" "$dm" "${GS[@]}"
		[ "$cs" = ssd-change ] && dt_change "$P.$c" "${GS[@]}"
	done
	[ "$n" = 1 ] && report dt.table "$(t_iob weight-time | cut -d' ' -f5- | tr ' ' '_')"
	load_stop "${GS[@]}"
	dm_swap "dtl$n" "$T_LIN"

	# the model device itself, every group (no controller: as dm-linear)
	i=0
	for g in "${GS[@]}"; do dt_start "$g" "$dev" "${SPECS[$i]}"; i=$((i + 1)); done
	for c in bfq iocost-model iocost; do
		[[ " $CTLS " == *" $c "* ]] || continue
		case $c in
		bfq) sched "$nbn" bfq ;;
		iocost-model)
			iocost_set "$mm" "$MODEL" "ctrl=user rpct=0 wpct=0 min=100.00 max=100.00"
			iocost "$mm" 1 ;;
		iocost) iocost_set "$mm" ctrl=auto ctrl=auto; iocost "$mm" 1 ;;
		esac
		dt_measure "$P.$c" "$dev" "${GS[@]}"
		[ "$cs" = ssd-change ] && dt_change "$P.$c" "${GS[@]}"
		case $c in
		bfq) sched "$nbn" none ;;
		*) iocost "$mm" 0 ;;
		esac
	done
	load_stop "${GS[@]}"
done
