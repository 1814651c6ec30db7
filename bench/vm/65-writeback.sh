#!/bin/bash
# Buffered writeback, ioband next to iocost and BFQ (grown from the tests
# 40-stack-writeback and 40-stack-fsync; their header comments say what
# makes such measurements go wrong).
#
# 1. The share of the disk's bytes of two cgroups weighted 300 and 100
#    (aim 75 %), on a memory-backed null_blk limited to 8 MiB/s
#    (max_sectors 128: null_blk passes a request only when it fits in one
#    20 ms tick's budget), ext4 on it, for two loads:
#    - fdatasync: 8 writers per cgroup rewrite their own 2 MiB files in
#      place, 64 KiB writes and fdatasync (the writers submit the data);
#    - flusher: one plain writer per cgroup writes new 4 MiB files (the
#      oldest deleted), vm.dirty_bytes 16 MiB, background 4 MiB (the
#      kernel's flusher threads submit the data).
#    Each load runs once with ext4 on the raw null_blk: no controller,
#    BFQ (io.bfq.weight), iocost (io.weight) with the null_blk's real
#    speed as its model and its rate fixed there, and iocost as it comes
#    (io.cost.qos enable=1 alone); and once with the same file system on a dm device over the
#    null_blk: dm-linear alone, ioband (cgroup, weight-iosize, io_limit 2,
#    default token_base), and dm-linear with BFQ or iocost (the model set)
#    on the null_blk below it, and with iocost (the model set) enabled on
#    the dm device itself.  The controllers change under the
#    running load (scheduler switch, io.cost.qos, live table swap).
#    Counted: each cgroup's wbytes in its io.stat line for the null_blk
#    (what reached the disk for it, whoever submitted it) over a window
#    after a warm-up, read with bash builtins (no fork).
# 2. fsync latency under a buffered flood: ext4 on a null_blk limited to
#    16 MiB/s; cgroup flood (weight 1) writes 16 MiB files in a loop while
#    cgroup sync (weight 1000) writes 16 KiB with dd conv=fsync, timed in
#    the guest (the time includes starting dd); median and max.  BFQ and
#    iocost (its model set to twice bench.wb_iocost_mibs) on the raw null_blk, then
#    dm-linear and ioband (default group, where jbd2's journal writes
#    land, at weight 1) on a dm device over it.
#
# Files are created by the cgroup that writes them (a page belongs to the
# cgroup that first brought it into memory), and mkfs initialises inode
# tables and journal up front (lazy initialisation writes for seconds
# after mount from a kernel thread).
#
# Settings: bench.wb_iocost_mibs (iocost's model, 4 MiB/s), bench.window
# (seconds counted per case, 8; the short mode's
# 3), bench.wb_warm and bench.wb_fwarm (warm-up after both cgroups reach
# the disk, fdatasync and flusher loads: 4 and 8 s, 2 in the short mode),
# bench.fs_rounds (fsyncs per case, 24; 8 short).
# timeout: 1200
. /tests/lib.sh
. /tests/t/bench.inc
require mkfs.ext4

WIN=$(bparam window 8)
SHORT=0
[ "$WIN" -lt 8 ] && SHORT=1
WARM=$(bparam wb_warm $((SHORT ? 2 : 4)))
# the flusher load settles slower after a change of controller: the
# kernel's estimate of each cgroup's writeback bandwidth, which sets how
# fast its writer may dirty pages, follows the new split over seconds
FWARM=$(bparam wb_fwarm $((SHORT ? 2 : 8)))
# iocost's model of the 8 MiB/s null_blk (and of the 16 MiB/s one, twice
# this): below what the device delivers under TCG (4-8 MiB/s measured),
# since iocost gives one cgroup's unused budget to the others and so
# binds only once the device is busy by its model.  At 8 MiB/s (vrate
# fixed at 100 %) one full run measured 47-52 % on the raw null_blk.
IOC_MIBS=$(bparam wb_iocost_mibs 4)
ROUNDS=$(bparam fs_rounds $((SHORT ? 8 : 24)))
W_A=300 W_B=100
mnt=/mnt/wb
STOP=$TESTDIR/wb.stop
ERR=$TESTDIR/wb.err

# wb_nullb NAME SIZE_MB ATTR=VALUE...: a memory-backed null_blk with more
# configfs attributes (mbps=, max_sectors=...); prints its /dev path
wb_nullb() {
	local name=$1 size=$2 d=$NULLB_CFS/$1 a dev
	shift 2
	[ -d $NULLB_CFS ] || modprobe -q null_blk nr_devices=0 2>/dev/null
	mkdir "$d" || fail "wb_nullb: mkdir $d"
	on_exit "rmdir $d"
	on_exit "echo 0 > $d/power"
	echo "$size" >"$d/size" && echo 2 >"$d/queue_mode" &&
		echo 1 >"$d/memory_backed" || fail "wb_nullb: $name"
	for a in "$@"; do
		echo "${a#*=}" >"$d/${a%%=*}" || fail "wb_nullb: $name: $a"
	done
	echo 1 >"$d/power" || fail "wb_nullb: power on $name"
	if [ -e "/sys/block/$name" ]; then dev=/dev/$name; else dev=/dev/nullb$(cat "$d/index"); fi
	_lib_wait_path "$dev" || fail "wb_nullb: $dev did not appear"
	echo "$dev"
}
# its memory back before the next one (the guest has 2 GiB)
wb_nullb_free() {
	echo 0 >"$NULLB_CFS/$1/power" && rmdir "$NULLB_CFS/$1" || fail "removing null_blk $1"
}

mkfs_mount() { # dev
	mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 "$1" || fail "mkfs.ext4 $1"
	mount_wb "$1"
}
mount_wb() { # dev
	mkdir -p $mnt
	mount "$1" $mnt || fail "mount $1"
	on_exit "umount $mnt"
}

# the controllers, each of which may be missing on a kernel: NA_x is the
# reason it cannot be measured
sched() { # dev-name scheduler
	echo "$2" >"/sys/block/$1/queue/scheduler" || fail "scheduler $2 on $1"
}
iocost() { # majmin 0|1
	echo "$1 enable=$2" >"$CG_ROOT/io.cost.qos" || fail "io.cost.qos $1 enable=$2"
}
set_weights() { # cg weight
	local w=$2
	# io.bfq.weight takes 1-1000, io.weight 1-10000
	[ -z "$NA_bfq" ] && { echo "$w" >"$CG_ROOT/$1/io.bfq.weight" || fail "io.bfq.weight $w in $1"; }
	[ -z "$NA_iocost" ] && { echo "default $w" >"$CG_ROOT/$1/io.weight" || fail "io.weight $w in $1"; }
	return 0
}

# stop_load CG...: kill the cgroups' writers; fail if one failed before
stop_load() {
	load_stop "$@"
	[ ! -e "$ERR" ] || fail "$(cat "$ERR")"
}

# ---- 1. writeback shares ---------------------------------------------------

# MEASURE KEY: wait until both cgroups reach the null_blk, warm up, count
# wbytes over the window; reports wb.KEY.{a_mib,b_mib,share,mibs}
measure() {
	local key=$1 i=0 a0 b0 a1 b1 t0 t1 da db tot
	cg_io wa "$mm"; a0=$CG_WBYTES
	cg_io wb "$mm"; b0=$CG_WBYTES
	while :; do
		nap 0.5
		cg_io wa "$mm"; a1=$CG_WBYTES
		cg_io wb "$mm"; b1=$CG_WBYTES
		[ "$a1" -gt "$a0" ] && [ "$b1" -gt "$b0" ] && break
		i=$((i + 1))
		[ $i -lt 120 ] || fail "$key: not both cgroups reached the disk in 60 s (a $((a1 - a0)), b $((b1 - b0)) bytes)"
	done
	nap "$LOAD_WARM"
	usecs; t0=$REPLY
	cg_io wa "$mm"; a0=$CG_WBYTES
	cg_io wb "$mm"; b0=$CG_WBYTES
	nap "$WIN"
	usecs; t1=$REPLY
	cg_io wa "$mm"; a1=$CG_WBYTES
	cg_io wb "$mm"; b1=$CG_WBYTES
	da=$((a1 - a0)) db=$((b1 - b0)) tot=$((a1 - a0 + b1 - b0))
	local share ma mb rate
	pct $da $tot; share=$REPLY
	mib1 $da; ma=$REPLY
	mib1 $db; mb=$REPLY
	mib1 $((tot * 1000000 / (t1 - t0))); rate=$REPLY
	report "wb.$key.share" "$share"
	report "wb.$key.a_mib" "$ma"
	report "wb.$key.b_mib" "$mb"
	report "wb.$key.mibs" "$rate"
	log "$key: a $ma MiB, b $mb MiB in $(( (t1 - t0) / 1000 )) ms: a's share $share % (aim 75), $rate MiB/s"
}

# REPLY: bytes $1 in MiB, one decimal
mib1() {
	local t=$(( ($1 * 10 + (1 << 19)) >> 20 ))
	REPLY=$((t / 10)).$((t % 10))
}

start_fdatasync() {
	local g i
	for g in wa wb; do
		echo 8 >"$TESTDIR/.jobs.$g"
		for i in 1 2 3 4 5 6 7 8; do
			# rewrites in place: no block allocation, no ordered data
			cg_run $g sh -c 'while :; do
				dd if=/dev/zero of="$1" bs=64k count=32 conv=notrunc,fdatasync status=none ||
					{ echo "fdatasync writer $1 failed" >"$0"; exit 1; }
			done' "$ERR" $mnt/$g/s$i &
		done
	done
}
start_flusher() {
	local g
	for g in wa wb; do
		echo 1 >"$TESTDIR/.jobs.$g"
		# new 4 MiB files; the one 8 back deleted, so the disk does not fill
		cg_run $g sh -c 'n=0; while :; do
			n=$((n + 1))
			rm -f "$1/flush/f$((n - 8))"
			dd if=/dev/zero of="$1/flush/f$n" bs=64k count=64 status=none ||
				{ echo "flusher writer $1 failed" >"$0"; exit 1; }
		done' "$ERR" $mnt/$g &
	done
}
# after a load: its dirty pages dropped rather than written back (the
# flusher files are deleted), the rest synced
end_load() {
	stop_load wa wb
	rm -f $mnt/wa/flush/* $mnt/wb/flush/*
	sync
}
dirty_limits() { # bytes background-bytes (0 0: the ratios again)
	if [ "$1" = 0 ]; then
		echo 20 >/proc/sys/vm/dirty_ratio
		echo 10 >/proc/sys/vm/dirty_background_ratio
	else
		echo "$1" >/proc/sys/vm/dirty_bytes
		echo "$2" >/proc/sys/vm/dirty_background_bytes
	fi
}
on_exit "echo $(cat /proc/sys/vm/dirty_ratio) >/proc/sys/vm/dirty_ratio"
on_exit "echo $(cat /proc/sys/vm/dirty_background_ratio) >/proc/sys/vm/dirty_background_ratio"

report wb.settings "io_limit=2,weights=$W_A/$W_B"
report wb.window "$WIN"
report wb.warm "$WARM"
report wb.fwarm "$FWARM"
report wb.fs_rounds "$ROUNDS"
report wb.iocost_mibs "$IOC_MIBS"
nb=$(wb_nullb wbn0 512 mbps=8 max_sectors=128 hw_queue_depth=8)
nbn=${nb#/dev/}
sz=$(blockdev --getsz "$nb")
mm=$(majmin "$nb")
for g in wa wb; do cg_create $g >/dev/null; done
ia=$(cg_id wa) ib=$(cg_id wb)
NA_bfq= NA_iocost=
[ -f "$CG_ROOT/wa/io.bfq.weight" ] || NA_bfq="no io.bfq.weight in the cgroups (BFQ group scheduling missing)"
grep -qw bfq "/sys/block/$nbn/queue/scheduler" || modprobe -q bfq 2>/dev/null
grep -qw bfq "/sys/block/$nbn/queue/scheduler" || NA_bfq="bfq not offered by /sys/block/$nbn/queue/scheduler"
[ -f "$CG_ROOT/io.cost.qos" ] || NA_iocost="no io.cost.qos (CONFIG_BLK_CGROUP_IOCOST missing)"
set_weights wa $W_A
set_weights wb $W_B
[ -n "$NA_bfq" ] && report wb.na.bfq "$(echo "$NA_bfq" | tr ' ' _)"
[ -n "$NA_iocost" ] && report wb.na.iocost "$(echo "$NA_iocost" | tr ' ' _)"

mkfs_mount "$nb"
for g in wa wb; do
	mkdir -p $mnt/$g/flush
	cg_run $g sh -c 'for i in 1 2 3 4 5 6 7 8; do
		dd if=/dev/zero of="$0/s$i" bs=1M count=2 status=none || exit 1
	done' $mnt/$g || fail "creating $g's files"
done
sync

# iocost's cost model for device $1: the device's real speed (MIBS MiB/s,
# 256 * MIBS pages of 4 KiB a second, no cost per I/O beyond its pages)
# with the rate (vrate) fixed at 100 % of it and no latency targets; or
# "auto", both back to the automatic ones.  With its automatic model
# iocost takes the null_blk for a fast SSD; with the model alone set (QoS
# automatic) it measured 44-54 % in one full run, perhaps because the QoS
# raised vrate while latencies stayed low (not verified), so the rate is
# fixed too.
iocost_model() { # majmin user MIBS | majmin auto
	local m="ctrl=auto" q="ctrl=auto" b=$((${3:-0} << 20)) p=$((${3:-0} * 256))
	if [ "$2" = user ]; then
		m="ctrl=user model=linear rbps=$b rseqiops=$p rrandiops=$p wbps=$b wseqiops=$p wrandiops=$p"
		q="ctrl=user rpct=0 wpct=0 min=100.00 max=100.00"
	fi
	echo "$1 $m" >"$CG_ROOT/io.cost.model" && echo "$1 $q" >"$CG_ROOT/io.cost.qos"
}
# BFQ and iocost with the device's model on the null_blk (measured as
# LOAD.bfqSUFFIX and LOAD.iocost-modelSUFFIX), each unless not measurable
null_blk_cases() { # load suffix
	if [ -z "$NA_bfq" ]; then
		sched "$nbn" bfq
		measure "$1.bfq$2"
		sched "$nbn" none
	fi
	[ -z "$NA_iocost" ] || return 0
	if iocost_model "$mm" user "$IOC_MIBS"; then
		iocost "$mm" 1
		measure "$1.iocost-model$2"
		iocost "$mm" 0
		iocost_model "$mm" auto || fail "io.cost.model $mm ctrl=auto"
	else
		report wb.na.iocost_model "io.cost.model_or_io.cost.qos_refused_the_settings_for_$mm"
	fi
}
# both loads, one after the other, each through the cases of function $1
both_loads() {
	LOAD_WARM=$WARM
	start_fdatasync
	$1 fdatasync
	end_load
	dirty_limits $((16 << 20)) $((4 << 20))
	LOAD_WARM=$FWARM
	start_flusher
	$1 flusher
	end_load
	dirty_limits 0 0
}

# raw: ext4 on the null_blk
raw_cases() { # load
	measure "$1.none"
	null_blk_cases "$1" ""
	if [ -z "$NA_iocost" ]; then
		# iocost as it comes: enable=1, automatic model and QoS
		iocost "$mm" 1
		measure "$1.iocost"
		iocost "$mm" 0
	fi
}
both_loads raw_cases
umount $mnt || fail "umount $nb"

# the same file system on a dm device over the null_blk
T_LIN="0 $sz linear $nb 0"
T_IOB="0 $sz ioband $nb wb 0 2 cgroup weight-iosize 0 :100 $ia:$W_A $ib:$W_B"
dev=$(dm_create wbd "$T_LIN")
devn=${dev#/dev/}
devmm=$(majmin "$dev")
# BFQ on the dm device itself: a bio-based device has no I/O scheduler
echo bfq >"/sys/block/$devn/queue/scheduler" 2>/dev/null
read -r s <"/sys/block/$devn/queue/scheduler"
report wb.dm.scheduler "$(echo "$s" | tr ' ' _)"
log "the dm device's scheduler after writing bfq: $s"
mount_wb "$dev"
dm_cases() { # load
	measure "$1.linear"
	dm_swap wbd "$T_IOB"
	measure "$1.ioband"
	dm_swap wbd "$T_LIN"
	null_blk_cases "$1" -below-dm
	[ -n "$NA_iocost" ] && return
	# on the dm device itself, with the null_blk's model; its hooks run
	# only for a request-based queue
	if ! iocost_model "$devmm" user "$IOC_MIBS" 2>/dev/null; then
		report wb.dm.iocost_enable model_refused
	elif ! echo "$devmm enable=1" >"$CG_ROOT/io.cost.qos" 2>/dev/null; then
		report wb.dm.iocost_enable refused
	else
		report wb.dm.iocost_enable accepted
		measure "$1.iocost-on-dm"
		iocost "$devmm" 0
	fi
}
both_loads dm_cases
umount $mnt || fail "umount $dev"
dmsetup remove wbd || fail "dmsetup remove wbd"
wb_nullb_free wbn0

# ---- 2. fsync latency under a flood ----------------------------------------

# sectors written to block device $1 (its stat file, no fork)
dev_wsect() {
	local -a s
	read -r -a s <"/sys/block/$1/stat"
	REPLY=${s[6]}
}
# fsync_case KEY DEVNAME: flood the file system on $mnt from cgroup flood,
# time ROUNDS fsyncs from cgroup sync; reports wb.fs.KEY.{median,max}_ms
fsync_case() {
	local key=$1 i=0 w0 lat med max
	sync
	dev_wsect "$2"; w0=$REPLY
	echo 1 >"$TESTDIR/.jobs.flood"
	# 16 MiB files, rewritten in turn (their deletion is journal work too)
	cg_run flood sh -c 'n=0; while :; do
		n=$((n + 1))
		dd if=/dev/zero of="$1/flood/f$((n % 8))" bs=64k count=256 status=none ||
			{ echo "flood writer failed" >"$0"; exit 1; }
	done' "$ERR" $mnt &
	# the flood has written 16 MiB back
	while dev_wsect "$2"; [ $((REPLY - w0)) -lt 32768 ]; do
		i=$((i + 1))
		[ $i -lt 600 ] || fail "$key: the flood wrote little in 60 s"
		nap 0.1
	done
	lat=$(cg_run sync bash -c '
		for ((i = 1; i <= $1; i++)); do
			t0=${EPOCHREALTIME/./}
			dd if=/dev/urandom of="$0/sync/s$i" bs=4k count=4 conv=fsync status=none || exit 1
			echo $(( (${EPOCHREALTIME/./} - t0) / 1000 ))
		done' $mnt "$ROUNDS" | sort -n) || fail "$key: the fsync writer failed"
	stop_load flood
	read -r -a lat <<<"$(echo $lat)"
	[ ${#lat[@]} = "$ROUNDS" ] || fail "$key: ${#lat[@]} fsyncs timed, want $ROUNDS"
	med=${lat[$((ROUNDS / 2))]}
	max=${lat[$((ROUNDS - 1))]}
	report "wb.fs.$key.median_ms" "$med"
	report "wb.fs.$key.max_ms" "$max"
	dev_wsect "$2"
	log "fsync $key: median $med ms, max $max ms ($ROUNDS rounds; $(( (REPLY - w0) >> 11 )) MiB written)"
	# the flood's dirty pages dropped, not written back
	rm -rf $mnt/flood/* $mnt/sync/*
	sync
}

nb=$(wb_nullb wbf0 400 mbps=16 hw_queue_depth=8)
nbn=${nb#/dev/}
sz=$(blockdev --getsz "$nb")
mm=$(majmin "$nb")
for g in flood sync; do cg_create $g >/dev/null; done
iflood=$(cg_id flood) isync=$(cg_id sync)
set_weights flood 1
set_weights sync 1000
mkfs_mount "$nb"
mkdir $mnt/flood $mnt/sync
if [ -z "$NA_bfq" ]; then
	sched "$nbn" bfq
	fsync_case bfq "$nbn"
	sched "$nbn" none
fi
if [ -z "$NA_iocost" ]; then
	iocost_model "$mm" user $((IOC_MIBS * 2)) || fail "io.cost.model for $mm"
	iocost "$mm" 1
	fsync_case iocost "$nbn"
	iocost "$mm" 0
fi
umount $mnt || fail "umount $nb"
dev=$(dm_create wbf "0 $sz linear $nb 0")
mount_wb "$dev"
fsync_case linear "${dev#/dev/}"
dm_swap wbf "0 $sz ioband $nb wbf 0 8 cgroup weight-iosize 0 :1 $iflood:1 $isync:1000"
fsync_case ioband "${dev#/dev/}"
