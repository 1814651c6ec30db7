#!/bin/bash
# Scenario 1, overhead (seeds 000 and 004), for tests/vm/run --icount
# --smp 1, where guest time follows executed instructions: the figures are
# CPU cost and repeat from run to run.
#
# Part 1: one fio job, 4 KiB random direct reads and writes, psync and
# libaio at queue depth 32, and reads with io_uring at queue depth 32, on
# a null_blk without completion delay, no contention, each target in turn with a fresh fio: the raw null_blk,
# dm-linear, ioband of type none, ioband of type cgroup (weight) with the
# job's cgroup configured, and whatever bench/vm/overhead-*.inc add (the
# range-bw and blk-throttle rows: see oh_add below).
#
# Part 2 (seed 000): two parallel mkfs.ext4 on two partitions of one disk
# (dm-linear slices of the field notes' slow null_blk, memory backed:
# null_blk has no partitions), each behind ioband (one device group) or behind dm-linear,
# alternating, bench.mkfs_runs times each.
#
# Keys: oh.label.CTL, oh.CTL.MODE.K.iops (MODE randread-psync,
# randwrite-psync, randread-libaio, randwrite-libaio, randread-io_uring),
# oh.CTL.MODE.K.held, oh.mkfs.{linear,ioband}.K.secs.
# timeout: 1500
. /tests/lib.sh
. /tests/t/bench.inc

WIN=$(bparam oh_window 1)
# fio ramps up within a few hundred thousand instructions: half a second
# of guest time is plenty
SETTLE=$(bparam oh_settle 0.5)
ROUNDS=$(bparam oh_rounds 2)
MODES=$(bparam oh_modes "randread-psync,randwrite-psync,randread-libaio,randwrite-libaio,randread-io_uring")
MKFS_RUNS=$(bparam mkfs_runs 10)
MKFS_MB=$(bparam mkfs_mb 1024)

nb=$(fast_nullb oh0)
sz=$(blockdev --getsz "$nb")
mm=$(majmin "$nb")
cg_create a >/dev/null
ia=$(cg_id a)
lin=$(dm_create oh_lin "0 $sz linear $nb 0")
iob=$(dm_create oh_iob "0 $sz ioband $nb oh $IOB_THROTTLE $IOB_LIMIT cgroup weight $IOB_TOKEN :100 $ia:100")
ion=$(dm_create oh_ion "0 $sz ioband $nb ohn $IOB_THROTTLE $IOB_LIMIT none weight $IOB_TOKEN :100")
report oh.settings "window=${WIN}s,rounds=$ROUNDS,io_throttle=$IOB_THROTTLE,io_limit=$IOB_LIMIT,token_base=$IOB_TOKEN"
report oh.icount "$(bparam icount 0)"

# The targets in the order of the table.  OH_DEV: device; OH_PRE, OH_POST:
# commands run (eval) before and after each window; OH_DM: the ioband
# device (dmsetup name) whose held bios are reported, and its group id.
declare -A OH_DEV OH_PRE OH_POST OH_DM OH_ID
OH_TARGETS=()
# oh_add NAME LABEL DEV [PRE [POST [DMNAME ID]]]: one more target.  The
# bench/vm/overhead-*.inc files call it; they see $nb (the null_blk), $sz
# (its sectors), $mm (its major:minor), cgroup a (the job's) and $ia (a's
# id), and may create devices with dm_create.
oh_add() {
	OH_TARGETS+=("$1")
	OH_DEV[$1]=$3 OH_PRE[$1]=${4:-} OH_POST[$1]=${5:-} OH_DM[$1]=${6:-} OH_ID[$1]=${7:-}
	report "oh.label.$1" "$(echo "$2" | tr ' ' '_')"
}
oh_add raw "raw null_blk" "$nb"
oh_add linear "dm-linear" "$lin"
oh_add ioband-none "ioband, type none" "$ion" "dmsetup message oh_ion 0 reset" "" oh_ion -1
oh_add ioband "ioband, weight, one cgroup" "$iob" "dmsetup message oh_iob 0 reset" "" oh_iob "$ia"
# The range-bw (caps far above the device) and blk-throttle (io.max far
# above it) rows: bench/vm/overhead-*.inc, owned by the range-bw work.
for f in /tests/t/overhead-*.inc; do
	[ -f "$f" ] && . "$f"
done

for k in $(seq 1 "$ROUNDS"); do
	for mode in ${MODES//,/ }; do
		rw=${mode%-*}
		case ${mode#*-} in
		psync) LOAD_ENGINE=psync; extra=() ;;
		libaio) LOAD_ENGINE=libaio; extra=(--iodepth=32) ;;
		io_uring) LOAD_ENGINE=io_uring; extra=(--iodepth=32) ;;
		*) fail "unknown mode $mode" ;;
		esac
		for ctl in "${OH_TARGETS[@]}"; do
			dev=${OH_DEV[$ctl]}
			[ -n "${OH_PRE[$ctl]}" ] && { eval "${OH_PRE[$ctl]}" || fail "$ctl: ${OH_PRE[$ctl]}"; }
			load_start a "$dev" "$rw" 4k 1 "${extra[@]}"
			window "$WIN" "$dev" a
			load_stop a
			report "oh.$ctl.$mode.$k.iops" "$W_IOPS"
			REPLY=
			[ -n "${OH_DM[$ctl]}" ] && ioband_held "${OH_DM[$ctl]}" "${OH_ID[$ctl]}" &&
				report "oh.$ctl.$mode.$k.held" "$REPLY"
			[ -n "${OH_POST[$ctl]}" ] && { eval "${OH_POST[$ctl]}" || fail "$ctl: ${OH_POST[$ctl]}"; }
			log "$ctl $mode #$k: $W_IOPS IOPS${REPLY:+, held $REPLY %}"
		done
	done
done
unset LOAD_ENGINE

# ---- part 2: two parallel mkfs.ext4 (seed 000) ------------------------------
if [ "$MKFS_RUNS" -gt 0 ]; then
	# memory backed, so e2fsck can read back what mkfs wrote
	disk=$(nullb_create mk0 $((2 * MKFS_MB)) 100000 4 1)
	half=$((MKFS_MB * 2048))
	p1=$(dm_create mkp1 "0 $half linear $disk 0")
	p2=$(dm_create mkp2 "0 $half linear $disk $half")
	l1=$(dm_create mkl1 "0 $half linear $p1 0")
	l2=$(dm_create mkl2 "0 $half linear $p2 0")
	b1=$(dm_create mkb1 "0 $half ioband $p1 mk $IOB_THROTTLE $IOB_LIMIT none weight $IOB_TOKEN :100")
	b2=$(dm_create mkb2 "0 $half ioband $p2 mk $IOB_THROTTLE $IOB_LIMIT none weight $IOB_TOKEN :100")
	report oh.mkfs.settings "partitions=2x${MKFS_MB}MiB,runs=$MKFS_RUNS"
	# Inode tables and journal written in full, so the runs do real I/O
	# (about 50 MiB per 1 GiB partition), not only the superblocks; no
	# discard (null_blk without memory backing has none).
	mkfs_pair() { # dev1 dev2
		local t0 t1 r1=0 r2=0
		usecs
		t0=$REPLY
		mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0,nodiscard "$1" >/dev/null 2>&1 &
		local j1=$!
		mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0,nodiscard "$2" >/dev/null 2>&1 &
		local j2=$!
		wait $j1 || r1=$?
		wait $j2 || r2=$?
		usecs
		t1=$REPLY
		[ $r1 = 0 ] && [ $r2 = 0 ] || fail "mkfs.ext4 on $1 / $2 failed ($r1 / $r2)"
		t1=$((t1 - t0))
		REPLY=$((t1 / 1000000)).$(printf '%06d' $((t1 % 1000000)))
	}
	# one uncounted pair first: the first mkfs on a fresh device took a
	# third longer than the rest in a trial run
	mkfs_pair "$l1" "$l2"
	mkfs_pair "$b1" "$b2"
	for k in $(seq 1 "$MKFS_RUNS"); do
		mkfs_pair "$l1" "$l2"
		report "oh.mkfs.linear.$k.secs" "$REPLY"
		tl=$REPLY
		mkfs_pair "$b1" "$b2"
		report "oh.mkfs.ioband.$k.secs" "$REPLY"
		log "mkfs pair #$k: dm-linear $tl s, ioband $REPLY s"
	done
	# the file systems are real: ext4's own check must find them clean
	for d in "$b1" "$b2"; do
		e2fsck -fn "$d" >/dev/null 2>&1 || fail "e2fsck -fn $d after mkfs through ioband"
	done
fi
exit 0
