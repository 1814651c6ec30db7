#!/bin/bash
# Buffered writes (no O_DIRECT) from two cgroups on ext4 on ioband (type
# cgroup, policy weight-iosize) over a null_blk limited to 8 MiB/s:
#
# 1. Written back by the writers' own fdatasync, 8 writers per cgroup
#    rewriting 2 MiB each: while both cgroups are busy, the sectors they
#    send (each writer waits for its own) divide about 3:1 as the weights
#    300:100 say (on production; see below for the debug kernel), with
#    token_base 4096.  With the default token_base of 256 the split is
#    only reported: it came out at 50 to 61 % here, against 64 to 77 %
#    with 4096.  Why is open: 2 MiB direct writes through two devices of
#    one device group (type none) split 73 % with either token_base, so a
#    bio costing more than the window is not the whole story.
# 2. Written back by the kernel's flusher threads (plain dd, no sync):
#    every cgroup's sectors are charged to its own group, none to the
#    other.  The split is not checked here: ioband counts a bio when it
#    arrives, and the flusher hands ioband whole batches at once (held
#    there), and, watched through memory.stat, it wrote one cgroup's pages
#    back at a time, in turns of tens of MiB, while the other's stayed
#    dirty with none under writeback: over a few seconds the split of what
#    reached ioband swung from 21 % to 99 % between runs.
# timeout: 300
. /tests/lib.sh
. /tests/t/stack.inc
require mkfs.ext4

mnt=/mnt/swb
# null_blk lets a request through only when it fits in one 20 ms tick's
# budget (168 KB at 8 MiB/s; it never lets a larger one pass), so 64 KiB
nb=$(stk_nullb swb0 400 mbps=8 max_sectors=128 hw_queue_depth=8)
sz=$(blockdev --getsz "$nb")
cg_create stk-wa/w >/dev/null
cg_create stk-wb/w >/dev/null
ia=$(stat -c %i $CG_ROOT/stk-wa)
ib=$(stat -c %i $CG_ROOT/stk-wb)
# io_limit 2: writeback bios are up to 2 MiB, so even 2 in flight keep
# the disk busy; more would leave the order to the queue beneath ioband
table() { echo "0 $sz ioband $nb swb 0 2 cgroup weight-iosize $1 :100 $ia:300 $ib:100"; }
io=$(dm_create swb-io "$(table 0)")
mkfs.ext4 -q "$io" || fail "mkfs.ext4"
stk_mount "$io" $mnt
sync

wsect() { stk_field swb-io "$1" wsect; }
# Wait (at most $2 seconds) until the two groups have written $1 sectors.
wait_written() {
	local end=$(($(date +%s) + $2))
	while [ $(($(wsect "$ia") + $(wsect "$ib"))) -lt "$1" ]; do
		[ "$(date +%s)" -le $end ] || fail "only $(wsect "$ia") + $(wsect "$ib") sectors written after $2 s, want $1"
		sleep 0.5
	done
}
# The share of cgroup a while both write: skip the first $1 sectors, then
# measure over the next $2; prints "share a_MiB b_MiB seconds".
measure() {
	local a0 b0 t0
	wait_written "$1" 90
	a0=$(wsect "$ia") b0=$(wsect "$ib") t0=$(date +%s)
	wait_written $((a0 + b0 + $2)) 90
	set -- $(($(wsect "$ia") - a0)) $(($(wsect "$ib") - b0)) $(($(date +%s) - t0))
	echo "$(stk_share "$1" "$2") $(($1 / 2048)) $(($2 / 2048)) $3"
}
# start_writers KIND: in each cgroup, KIND's writers run until $TESTDIR/stop
start_writers() {
	local g i
	rm -f "$TESTDIR/stop"
	for g in wa wb; do
		if [ "$1" = fdatasync ]; then
			# rewrites in place: no block allocation, no ordered data
			for i in 1 2 3 4 5 6 7 8; do
				cg_run stk-$g/w sh -c 'while [ ! -e "$1" ]; do
					dd if=/dev/zero of="$2" bs=64k count=32 conv=notrunc,fdatasync status=none || exit 1
				done' sh "$TESTDIR/stop" $mnt/$g.sync$i &
			done
		else
			# 32 MiB each, written back by the flusher once dd is done or the
			# dirty limits say so
			cg_run stk-$g/w dd if=/dev/zero of=$mnt/$g.flush bs=64k count=512 status=none &
		fi
	done
}
on_exit "touch $TESTDIR/stop; wait"

# ---- 1. writers' own fdatasync ------------------------------------------------------
# fdatasync_share TOKEN_BASE: a's share, after reloading with that token_base
fdatasync_share() {
	dmsetup load swb-io --table "$(table "$1")" || fail "load token_base $1"
	dmsetup suspend swb-io && dmsetup resume swb-io || fail "resume token_base $1"
	dmsetup message swb-io 0 reset || fail reset
	start_writers fdatasync
	set -- $(measure 4096 65536) "$1"
	touch "$TESTDIR/stop"
	wait
	log "fdatasync writeback, token_base $5: in $4 s cgroup a (300) $2 MiB, b (100) $3 MiB: a's share $1 % (aim 75)" >&2
	echo "$1"
}
# (not on the debug kernel, which takes 70 s for it and compresses every
# split anyway: 62-65 % measured there with either token_base)
if ! grep -q debug /etc/ioband-vm-kernel 2>/dev/null; then
	share=$(fdatasync_share 0)
	report writeback_fdatasync_share_300_100_token_256 "$share"
fi
share=$(fdatasync_share 4096)
report writeback_fdatasync_share_300_100_token_4096 "$share"
# Measured 64-77 % on production.  The debug kernel, where the CPU rather
# than the disk is the limit at times, compresses the split (58-66 %, as
# 14-ioband-devgroup sees too): there only "a gets more than b" is checked.
lo=60
grep -q debug /etc/ioband-vm-kernel 2>/dev/null && lo=52
[ "$share" -ge $lo ] && [ "$share" -le 92 ] ||
	fail "cgroup a's fdatasync writeback got $share % of the disk, want $lo to 92 (aim 75; 50 would mean the weights are ignored)"

# ---- 2. the flusher threads ----------------------------------------------------------
sync
dmsetup message swb-io 0 reset || fail reset
start_writers flusher
wait
sync
for g in a b; do
	eval id=\$i$g
	got=$(wsect "$id")
	want=$(($(stat -c %s $mnt/w$g.flush) / 512))
	log "cgroup $g wrote $((want / 2048)) MiB through the page cache; its group counted $((got / 2048)) MiB"
	# all of it, and at most 1 MiB of the other's or of metadata besides
	[ "$got" -ge "$want" ] && [ "$got" -le $((want + 2048)) ] ||
		fail "cgroup $g's flusher writeback: $got sectors charged, it wrote $want"
done
log "default group (metadata, journal): $(wsect -1) sectors"
