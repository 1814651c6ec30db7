#!/bin/bash
# Limits, io.max's kinds, set by message on a live device (type none: the
# default group), in the scenarios of blktests' throtl tests, rewritten:
#
# - throtl/001, each kind alone: 256 bios of 4 KiB at 1 MiB/s, or at 256
#   IOPS, take 1 s in the direction the limit names; the other direction
#   is not slowed.  (On the debug kernel 32 bios at 128 KiB/s or 32 IOPS.)
# - throtl/003 and 007, limits over split bios: on a disk that takes 4 KiB
#   a request, a 1 MiB bio is 256 requests below, so it takes 1 s under
#   256 IOPS as under 1 MiB/s; a bytes and an IOPS limit at once, each of
#   them binding in turn.
# - throtl/005, a limit changed while bios wait for it: 4 s of writes of
#   4 KiB, the limit halved when a quarter of them are through: the rest
#   take 6 s.
# - a suspend, and the removal of the device, while bios wait: nothing
#   waits for the limits then, and nothing is lost.
#
# A limit set anew has nothing saved, so N bios after it take at least
# (N - 1) / rate from the message, whatever the host does: that bound is
# always checked.  How much longer they take is up to the guest's CPU and
# the host: at most 100 ms more in fio's own time, plus the time the guest
# stood still (stall_start), and judged only where that was less than half
# the limit's time; otherwise the test ends as a skip naming it.
# timeout: 300
. /tests/lib.sh
. /tests/t/stack.inc

# null_blk takes at most 4 KiB a request (throtl/003's setting)
nb=$(stk_nullb lim0 64 max_sectors=8)
sz=$(blockdev --getsz "$nb")
dev=$(dm_create lim "0 $sz ioband $nb limdg 0 0 none weight 0 :100")
msg() { dmsetup message lim 0 -- "$@" || fail "message refused: $*"; }
UNJUDGED=
SLOW=

# fio_run DIR BS COUNT: COUNT direct bios of BS in direction DIR (read or
# write), 16 at a time, so that no bio waits for its submitter; sets FIO_MS
# (fio's own runtime) and MS (the ms since START, taken before the limits
# were set)
fio_run() {
	local out=$TESTDIR/fio-$1.out bytes=${2%[kM]}
	case $2 in
	*k) bytes=$((bytes << 10)) ;;
	*M) bytes=$((bytes << 20)) ;;
	esac
	fio --name=l --filename="$dev" --rw="$1" --bs="$2" \
		--size=$(($3 * bytes)) --direct=1 \
		--ioengine=libaio --iodepth=16 >"$out" 2>&1 ||
		fail "fio $1 $2 x $3: $(tail -n 3 "$out")"
	usecs
	MS=$(((REPLY - START) / 1000))
	FIO_MS=$(sed -n 's/.* run=\([0-9]*\)-.*/\1/p' "$out" | head -n 1)
	[ -n "$FIO_MS" ] || fail "no runtime in fio's output: $(tail -n 3 "$out")"
}

# limited NAME DIR BS COUNT LIMITS MIN_MS MAX_MS: with LIMITS set just
# before them, COUNT bios of BS take at least MIN_MS from the message and
# in fio's own time, and at most MAX_MS (the limit's time for all of them,
# should none find budget saved) and 100 ms more in fio's time
limited() {
	local name=$1 dir=$2 bs=$3 count=$4 limits=$5 min=$6 max=$7
	stall_start
	usecs
	START=$REPLY
	msg limit "/$limits"
	fio_run "$dir" "$bs" "$count"
	stall_stop
	msg limit "/$(echo "$limits" | sed 's/=[0-9]*/=max/g')"
	log "$name: $count x $bs ${dir}s under $limits: $MS ms from the message, fio's runtime $FIO_MS ms (at least $min; the guest stood still $STALL_MS ms)"
	report "${name}_ms" "$FIO_MS"
	[ "$MS" -ge "$min" ] ||
		fail "$name: $count x $bs ${dir}s under $limits took $MS ms from the message, the limit allows no less than $min"
	[ "$FIO_MS" -ge "$min" ] ||
		fail "$name: $count x $bs ${dir}s under $limits took $FIO_MS ms in fio, the limit allows no less than $min"
	# a stall only delays, so it widens the bound (much of it falls in
	# fio's start-up, when QEMU translates fio's code); past half the
	# time the limit takes, the bound would say nothing
	if [ -n "$SLOW" ]; then
		:
	elif [ "$STALL_MS" -gt $((min / 2)) ]; then
		UNJUDGED+="$name: the guest stood still $STALL_MS ms; "
	elif [ "$FIO_MS" -gt $((max + 100 + STALL_MS)) ]; then
		fail "$name: $count x $bs ${dir}s under $limits took $FIO_MS ms in fio, want at most $((max + 100 + STALL_MS))"
	fi
}

# unslowed NAME DIR LIMITS: N bios in the direction LIMITS do not name
# are not slowed by them: they take less than half the second the limits
# would make them take
unslowed() {
	msg limit "/$3"
	stall_start
	usecs
	START=$REPLY
	fio_run "$2" 4k $N
	stall_stop
	msg limit "/$(echo "$3" | sed 's/=[0-9]*/=max/g')"
	log "$1: $N x 4k ${2}s under $3: $FIO_MS ms"
	[ -z "$SLOW" ] || return 0
	[ "$STALL_MS" -le 250 ] || { UNJUDGED+="$1: the guest stood still $STALL_MS ms; "; return; }
	[ "$FIO_MS" -lt $((500 + STALL_MS)) ] ||
		fail "$1: $N x 4k ${2}s took $FIO_MS ms under $3, which do not apply to them (want under $((500 + STALL_MS)))"
}

# N bios a second: 256 as blktests has it, 32 on the debug kernel, whose
# guest takes about as long for 256 bios as the limit would (1117 ms)
N=256
grep -q debug /etc/ioband-vm-kernel 2>/dev/null && N=32
ONE=$(((N - 1) * 1000 / N))	# N bios at N a second, the first saved

# Unlimited first: what the guest takes for these bios when nothing waits.
for dir in read write; do
	START=0
	fio_run $dir 4k $N
	log "no limit: $N x 4k ${dir}s: $FIO_MS ms"
	[ "$FIO_MS" -lt 500 ] ||
		SLOW="$N ${dir}s of 4 KiB took $FIO_MS ms without a limit"
done
# A guest that slow is no measure of how soon the limits let bios go: the
# lower bounds, which hold whatever the guest does, are still checked.
[ -z "$SLOW" ] || UNJUDGED+="no upper bound: $SLOW; "

# ---- throtl/001 ----------------------------------------------------------------
for k in bps rbps wbps; do
	dir=read
	[ $k = wbps ] && dir=write
	limited "$k" $dir 4k $N "$k=$((N * 4096))" $ONE 1000
done
for k in iops riops wiops; do
	dir=read
	[ $k = wiops ] && dir=write
	limited "$k" $dir 4k $N "$k=$N" $ONE 1000
done
unslowed rbps-writes write rbps=$((N * 4096))
unslowed wiops-reads read wiops=$N

# ---- throtl/003 and 007: split below -----------------------------------------
# a bio of 1 MiB, 256 requests of 4 KiB below: a whole second either way;
# two, since an idle group keeps the budget of its next bio: the first
# may go at once, the second a second later
reads=$(stk_field lim -1 reads)
limited split-bps read 1M 2 bps=1048576 1000 2000
limited split-iops read 1M 2 riops=256 1000 2000
log "ioband saw $(($(stk_field lim -1 reads) - reads)) bios for those four 1 MiB reads"
# both at once: the IOPS limit binds 4 KiB bios (N at N/2 IOPS: 2 s), the
# bytes limit 64 KiB ones (16 requests each: N/16 of them, 1 s)
limited both-iops read 4k $N "rbps=$((N * 4096)),riops=$((N / 2))" $((ONE * 2)) 2000
limited both-bps read 64k $((N / 16)) "rbps=$((N * 4096)),riops=$((N * 256))" \
	$(((N / 16 - 1) * 1000 / (N / 16))) 1000

# ---- throtl/005: a limit halved while bios wait ---------------------------------
# 4N x 4 KiB at N a second; when N have been sent, at N/2: those not sent
# yet take 2/N s each from the change, less the one that was next (judged
# if the change came with at least a quarter of them left)
stall_start
msg limit "/wbps=$((N * 4096))"
base=$(stk_field lim -1 writes)
fio --name=l --filename="$dev" --rw=write --bs=4k --size=$((N * 16))k --direct=1 \
	--ioengine=libaio --iodepth=16 >"$TESTDIR/fio-005.out" 2>&1 &
fiopid=$!
writes=0
while [ "$writes" -lt $N ]; do
	alive $fiopid || fail "the writer ended after $writes writes of $((4 * N))"
	writes=$(($(stk_field lim -1 writes) - base))
	sleep 0.02
done
usecs
changed=$REPLY
msg limit "/wbps=$((N * 2048))"
# Those not even mapped once the message is through all go at the new
# rate (bios are mapped before they are sent, so this undercounts them);
# those not mapped when the writer was last seen bound the time above
# (with the 16 it may have had waiting then).
after=$(($(stk_field lim -1 writes) - base))
wait $fiopid || fail "fio under a changed limit: $(tail -n 3 "$TESTDIR/fio-005.out")"
usecs
stall_stop
left=$((4 * N - writes)) late=$((4 * N - after))
ms=$(((REPLY - changed) / 1000))
min=$(((late - 1) * 2000 / N))
max=$(((left + 16) * 2000 / N + 100))
log "lowered: $left writes not mapped before the change, $late not after it, took $ms ms (at least $min, at most $max; the guest stood still $STALL_MS ms)"
report lowered_ms "$ms"
if [ "$late" -lt $((N / 2)) ]; then
	UNJUDGED+="lowered: only $late writes came after the change (the message took that long); "
elif [ "$ms" -lt "$min" ]; then
	fail "lowered: $late writes mapped after the change took $ms ms at half the rate, the limit allows no less than $min"
fi
if [ "$left" -lt $N ]; then
	UNJUDGED+="lowered: only $left writes were left at the change; "
elif [ -n "$SLOW" ]; then
	:
elif [ "$STALL_MS" -gt $((max / 2)) ]; then
	UNJUDGED+="lowered: the guest stood still $STALL_MS ms; "
elif [ "$ms" -gt $((max + STALL_MS)) ]; then
	fail "lowered: $left writes at half the rate took $ms ms, want at most $((max + STALL_MS))"
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
# remove --force takes the device at once if dd has closed it by then
if dmsetup info lim >/dev/null 2>&1; then
	dmsetup remove lim || fail "the device did not go once dd had ended"
fi
[ -z "$UNJUDGED" ] || skip "not judged: $UNJUDGED"
