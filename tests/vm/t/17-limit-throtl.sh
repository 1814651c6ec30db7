#!/bin/bash
# Limits, io.max's kinds, set by message on a live device (type none: the
# default group), in the scenarios of blktests' throtl tests, rewritten:
#
# - throtl/001, each kind alone: 256 bios of 4 KiB at 1 MiB/s, or at 256
#   IOPS, take 1 s in the direction the limit names; the other direction
#   is not slowed.
# - throtl/003 and 007, limits over split bios: on a disk that takes 4 KiB
#   a request, one 1 MiB bio is 256 requests below, so it takes 1 s under
#   256 IOPS as under 1 MiB/s; a bytes and an IOPS limit at once, each of
#   them binding in turn.
# - throtl/005, a limit changed while bios wait for it: 512 writes of
#   4 KiB at 1 MiB/s, the limit halved when half of them are through: the
#   rest take 2 s.
# - a suspend, and the removal of the device, while bios wait: nothing
#   waits for the limits then, and nothing is lost.
#
# A limit set anew has nothing saved, so N bios after it take at least
# (N - 1) / rate from the message, whatever the host does: that bound is
# always checked.  How much longer they take is up to the guest's CPU and
# the host, and is judged only where the guest did not stand still
# (stall_start); otherwise the test ends as a skip naming it.
# timeout: 300
. /tests/lib.sh
. /tests/t/stack.inc

# null_blk takes at most 4 KiB a request (throtl/003's setting)
nb=$(stk_nullb lim0 64 max_sectors=8)
sz=$(blockdev --getsz "$nb")
dev=$(dm_create lim "0 $sz ioband $nb limdg 0 0 none weight 0 :100")
msg() { dmsetup message lim 0 -- "$@" || fail "message refused: $*"; }
UNJUDGED=

# run DIR BS COUNT: a dd of COUNT direct bios of BS in direction DIR;
# prints the ms since START (usecs taken before the limit was set)
run() {
	local start=$START
	if [ "$1" = read ]; then
		dd if="$dev" of=/dev/null bs="$2" count="$3" iflag=direct status=none ||
			fail "dd read"
	else
		dd if=/dev/zero of="$dev" bs="$2" count="$3" oflag=direct status=none ||
			fail "dd write"
	fi
	usecs
	echo $(((REPLY - start) / 1000))
}

# limited NAME DIR BS COUNT LIMITS MIN_MS: with LIMITS set just before
# them, COUNT bios of BS take at least MIN_MS (no more than 150 ms above
# it where the guest ran throughout)
limited() {
	local name=$1 dir=$2 bs=$3 count=$4 limits=$5 min=$6 ms
	stall_start
	usecs
	START=$REPLY
	msg limit "/$limits"
	ms=$(run "$dir" "$bs" "$count")
	stall_stop
	msg limit "/$(echo "$limits" | sed 's/=[0-9]*/=max/g')"
	log "$name: $count x $bs ${dir}s under $limits: $ms ms (at least $min; the guest stood still $STALL_MS ms)"
	report "${name}_ms" "$ms"
	[ "$ms" -ge "$min" ] ||
		fail "$name: $count x $bs ${dir}s under $limits took $ms ms, the limit allows no less than $min"
	if [ "$STALL_MS" -gt 20 ]; then
		UNJUDGED+="$name: the guest stood still $STALL_MS ms; "
	elif [ "$ms" -gt $((min + 150)) ]; then
		fail "$name: $count x $bs ${dir}s under $limits took $ms ms, want at most $((min + 150))"
	fi
}

# unslowed NAME DIR LIMITS: 256 bios in the direction LIMITS do not name are
# not slowed by them: they take less than the half second the limits
# would make them take
unslowed() {
	local ms
	msg limit "/$3"
	stall_start
	usecs
	START=$REPLY
	ms=$(run "$2" 4k 256)
	stall_stop
	msg limit "/$(echo "$3" | sed 's/=[0-9]*/=max/g')"
	log "$1: 256 x 4k ${2}s under $3: $ms ms"
	[ "$STALL_MS" -le 20 ] || { UNJUDGED+="$1: the guest stood still $STALL_MS ms; "; return; }
	[ "$ms" -lt 500 ] || fail "$1: 256 x 4k ${2}s took $ms ms under $3, which do not apply to them"
}

# Unlimited first: what the guest takes for these bios when nothing waits.
stall_start
usecs
START=$REPLY
ms=$(run read 4k 256)
stall_stop
log "no limit: 256 x 4k reads: $ms ms"
stall_start
usecs
START=$REPLY
ms=$(run write 4k 256)
stall_stop
log "no limit: 256 x 4k writes: $ms ms"
[ "$ms" -lt 400 ] || skip "256 reads of 4 KiB took $ms ms without a limit: too slow a guest for a 1 s limit to mean anything"

# ---- throtl/001 ----------------------------------------------------------------
# 255 spans of 1/256 s (the first bio finds its own span saved)
for k in bps rbps wbps; do
	dir=read
	[ $k = wbps ] && dir=write
	limited "$k" $dir 4k 256 "$k=1048576" 996
done
for k in iops riops wiops; do
	dir=read
	[ $k = wiops ] && dir=write
	limited "$k" $dir 4k 256 "$k=256" 996
done
unslowed rbps-writes write rbps=1048576
unslowed wiops-reads read wiops=256

# ---- throtl/003 and 007: split below -----------------------------------------
# one bio of 1 MiB, 256 requests of 4 KiB below: a whole second either way
reads=$(stk_field lim -1 reads)
limited split-bps read 1M 1 bps=1048576 1000
limited split-iops read 1M 1 riops=256 1000
log "ioband saw $(($(stk_field lim -1 reads) - reads)) bios for those two 1 MiB reads"
# both at once: the IOPS limit binds 4 KiB bios (256 at 128 IOPS: 2 s),
# the bytes limit 64 KiB ones (16 requests each: 16 at 1 MiB/s, 1 s)
limited both-iops read 4k 256 "rbps=1048576,riops=128" 1992
limited both-bps read 64k 16 "rbps=1048576,riops=4096" 937

# ---- throtl/005: a limit halved while bios wait ---------------------------------
# 512 x 4 KiB at 1 MiB/s; when 256 have gone, 512 KiB/s: the other 256
# take 2 s from the change, the first of them saved by none
stall_start
msg limit "/wbps=1048576"
dd if=/dev/zero of="$dev" bs=4k count=512 oflag=direct status=none &
ddpid=$!
writes=0
while [ "$writes" -lt 256 ]; do
	alive $ddpid || fail "the writer ended after $writes writes of 512"
	writes=$(stk_field lim -1 writes)
	sleep 0.02
done
usecs
changed=$REPLY
msg limit "/wbps=524288"
wait $ddpid || fail "dd under a changed limit"
usecs
stall_stop
left=$((512 - writes))
ms=$(((REPLY - changed) / 1000))
min=$(((left - 1) * 1000 / 128))
log "lowered: $left writes after the change took $ms ms (at least $min; the guest stood still $STALL_MS ms)"
report lowered_ms "$ms"
[ "$ms" -ge "$min" ] || fail "lowered: $left writes at 512 KiB/s took $ms ms, the limit allows no less than $min"
if [ "$STALL_MS" -gt 20 ]; then
	UNJUDGED+="lowered: the guest stood still $STALL_MS ms; "
elif [ "$ms" -gt $((min + 150 + 1000 / 128)) ]; then
	fail "lowered: $left writes at 512 KiB/s took $ms ms, want at most $((min + 150 + 1000 / 128))"
fi
msg limit "/wbps=max"

# ---- suspend and removal with bios waiting ------------------------------------------
# 32 writes in flight at 4 IOPS (8 s of them): a suspend lets every one
# go at once, and nothing is lost
msg limit "/wiops=4"
delayed=$(stk_field lim -1 dwrites)
fio --name=w --filename="$dev" --rw=randwrite --bs=4k --size=1M --direct=1 \
	--ioengine=libaio --iodepth=32 --number_ios=64 $(fio_verify_args) \
	>"$TESTDIR/fio.out" 2>&1 &
fiopid=$!
held=0
while [ "$held" -lt 16 ]; do
	alive $fiopid || fail "fio ended before bios waited: $(tail -n 3 "$TESTDIR/fio.out")"
	held=$(($(stk_field lim -1 dwrites) - delayed))
	sleep 0.02
done
usecs
t0=$REPLY
dmsetup suspend lim || fail "suspend with $held bios waiting"
usecs
log "suspend with $held bios waiting for 4 IOPS: $(((REPLY - t0) / 1000)) ms"
[ $(((REPLY - t0) / 1000)) -lt 2000 ] || fail "suspend took $(((REPLY - t0) / 1000)) ms: it waited for the limit"
dmsetup resume lim || fail resume
msg limit "/wiops=max"
wait $fiopid || fail "fio through a suspend: $(tail -n 5 "$TESTDIR/fio.out")"

msg limit "/wiops=2"
dd if=/dev/zero of="$dev" bs=4k count=16 oflag=direct status=none &
ddpid=$!
writes=$(stk_field lim -1 writes)
while [ "$(stk_field lim -1 writes)" -lt $((writes + 4)) ]; do
	alive $ddpid || fail "dd ended early"
	sleep 0.02
done
# the table goes (an error target takes its place) while dd holds the
# device open; the bio that waited went down before it
dmsetup remove --force lim 2>/dev/null
wait $ddpid
log "removed with a bio waiting: dd ended ($?)"
dmsetup remove lim || fail "the device did not go once dd had ended"
[ -z "$UNJUDGED" ] || skip "not judged: $UNJUDGED"
